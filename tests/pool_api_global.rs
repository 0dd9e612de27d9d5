//! rayon's thread-pool calls beyond `join` and `scope`, through the facade and on the global
//! runtime, as a program moved from rayon uses them: `broadcast`, `spawn`, `spawn_fifo`,
//! `spawn_broadcast`, `yield_now`, `join_context`, `max_num_threads`, and the builder's
//! `panic_handler`, `thread_name` and `use_current_thread`.
//!
//! The global runtime is process-wide state: everything is checked in order in the one test
//! of this file (a file of its own is a process of its own). The process ends with the
//! global runtime's spawn threads idle, or already gone: nothing waits for them at exit.

use asat::prelude::*;
use asat::{
    current_num_threads, current_thread_index, Runtime, ThreadPoolBuilder, Yield, MAX_THREADS_LIMIT,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Long enough for any wait here on a loaded machine; reached only by a bug.
const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn rayons_pool_calls_on_the_global_runtime() {
    let handled = Arc::new(Mutex::new(Vec::<String>::new()));
    let h = Arc::clone(&handled);
    ThreadPoolBuilder::new()
        .num_threads(3)
        .use_current_thread()
        .thread_name(|i| format!("global-{i}"))
        .panic_handler(move |p| {
            let msg = p.downcast_ref::<&str>().copied().unwrap_or("?");
            h.lock().unwrap().push(msg.to_owned());
        })
        .policy(asat::Fixed::all())
        .build_global()
        .unwrap();
    // This thread is the global runtime's index 0 now, also outside its calls; its parallel
    // calls are not nested ones for that, and run on several threads.
    assert_eq!(current_thread_index(), Some(0));
    assert!(!asat::in_parallel_call());
    assert_eq!(current_num_threads(), 3);
    let threads = Mutex::new(std::collections::HashSet::new());
    (0..64).into_par_iter().for_each(|_| {
        std::thread::sleep(Duration::from_millis(1));
        threads.lock().unwrap().insert(std::thread::current().id());
    });
    assert!(
        threads.into_inner().unwrap().len() > 1,
        "the loop ran on one thread"
    );
    assert_eq!(asat::max_num_threads(), MAX_THREADS_LIMIT);

    // broadcast: every thread of the pool, member 0 the caller.
    let got = asat::broadcast(|ctx| (ctx.index(), ctx.num_threads(), current_thread_index()));
    assert_eq!(got, [(0, 3, Some(0)), (1, 3, Some(1)), (2, 3, Some(2))]);
    let global = Runtime::global();
    assert_eq!(global.broadcast(|ctx| ctx.index()), [0, 1, 2]);
    global.region(|team| {
        assert_eq!(global.current_thread_index(), Some(team.index()));
        assert_eq!(asat::broadcast(|ctx| ctx.num_threads()), [1]);
    });

    // spawn: every job once, named by the builder, outside any team, on the global runtime,
    // jobs spawning jobs, iterator calls in jobs.
    let (tx, rx) = mpsc::channel();
    let counted = Arc::new(AtomicUsize::new(0));
    for i in 0..50u64 {
        let (tx, counted) = (tx.clone(), Arc::clone(&counted));
        asat::spawn(move || {
            let name = std::thread::current().name().map(str::to_owned);
            let outside = (
                current_thread_index(),
                Runtime::global().current_thread_index(),
            );
            let (tx2, counted2) = (tx.clone(), Arc::clone(&counted));
            asat::spawn_fifo(move || {
                counted2.fetch_add(1, Ordering::SeqCst);
                let v: Vec<u64> = (0..1000).collect();
                tx2.send((i, None, (None, None), v.par_iter().sum::<u64>()))
                    .unwrap();
            });
            counted.fetch_add(1, Ordering::SeqCst);
            tx.send((i, name, outside, 0)).unwrap();
        });
    }
    drop(tx);
    let mut names = 0;
    let mut sums = 0;
    for _ in 0..100 {
        let (_, name, outside, sum) = rx.recv_timeout(LIMIT).expect("a job did not run");
        assert_eq!(outside, (None, None));
        if let Some(name) = name {
            assert!(
                ["global-0", "global-1", "global-2"].contains(&name.as_str()),
                "{name}"
            );
            names += 1;
        }
        if sum != 0 {
            assert_eq!(sum, 499_500);
            sums += 1;
        }
    }
    assert_eq!((names, sums), (50, 50));
    assert!(rx.recv_timeout(Duration::from_millis(20)).is_err());
    assert_eq!(counted.load(Ordering::SeqCst), 100);

    // A job's panic goes to the handler; the pool goes on.
    asat::spawn(|| panic!("a job panics (expected by the test)"));
    let (tx, rx) = mpsc::channel();
    let start = std::time::Instant::now();
    while handled.lock().unwrap().is_empty() {
        assert!(start.elapsed() < LIMIT, "the panic handler was not called");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        *handled.lock().unwrap(),
        ["a job panics (expected by the test)"]
    );
    asat::spawn(move || tx.send(asat::yield_now()).unwrap());
    // Nothing else is queued: the job's yield finds nothing to run.
    assert_eq!(rx.recv_timeout(LIMIT).unwrap(), Some(Yield::Idle));
    assert_eq!(asat::yield_now(), None);
    assert_eq!(global.stats().spawn_panics, 1);

    // spawn_broadcast: one job, a broadcast on the team.
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    asat::spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    let mut got: Vec<usize> = (0..3).map(|_| rx.recv_timeout(LIMIT).unwrap()).collect();
    got.sort();
    assert_eq!(got, [0, 1, 2]);

    // join_context: a closure is migrated exactly when it runs off the caller's thread.
    let caller = std::thread::current().id();
    for _ in 0..20 {
        let (a, b) = asat::join_context(
            |ctx| (ctx.migrated(), std::thread::current().id()),
            |ctx| (ctx.migrated(), std::thread::current().id()),
        );
        assert_eq!(a.0, a.1 != caller);
        assert_eq!(b.0, b.1 != caller);
    }
}
