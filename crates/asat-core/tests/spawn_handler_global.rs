//! `ThreadPoolBuilder::build_global` with a spawn handler (a test binary of its own: it builds
//! the process's global runtime).

use std::sync::Mutex;
use std::thread::{self, ThreadId};

use asat_core::ThreadPoolBuilder;

#[test]
fn build_global_runs_the_global_runtime_on_the_handler_threads() {
    let ids: Mutex<Vec<(usize, ThreadId)>> = Mutex::new(Vec::new());
    ThreadPoolBuilder::new()
        .num_threads(3)
        .spawn_handler(|thread| {
            let index = thread.index();
            // Detached: the global runtime's workers live as long as the process.
            let handle = thread::spawn(move || thread.run());
            ids.lock().unwrap().push((index, handle.thread().id()));
            Ok(())
        })
        .build_global()
        .unwrap();
    let ids = ids.into_inner().unwrap();
    assert_eq!(ids.iter().map(|&(i, _)| i).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(asat_core::current_num_threads(), 3);
    let on = asat_core::broadcast(|_| thread::current().id());
    assert_eq!(on.len(), 3);
    assert_eq!(on[0], thread::current().id());
    assert_eq!(on[1..], ids.iter().map(|&(_, id)| id).collect::<Vec<_>>());
    // A second global build is refused before any handler call.
    let err = ThreadPoolBuilder::new()
        .num_threads(2)
        .spawn_handler(|_| panic!("not called"))
        .build_global()
        .unwrap_err();
    assert!(err
        .to_string()
        .starts_with("the global runtime exists already"));
}
