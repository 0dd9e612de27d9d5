//! A pool built with `use_current_thread`: the building thread is its index 0 for the pool's
//! life (its calls run as index 0, other threads' on the workers), the pool is that thread's
//! current runtime, a thread is index 0 of one live pool at most, and all of it ends when the
//! pool is dropped.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use asat_core::ThreadPoolBuilder;
use common::watchdog;

/// Long enough for these calls on a loaded machine; reached only by a hang.
const LIMIT: Duration = Duration::from_secs(120);

/// The indices a recursion of `depth` joins' leaves ran on.
fn indices(depth: u32, seen: &[AtomicUsize]) {
    if depth == 0 {
        thread::sleep(Duration::from_millis(1));
        let i = asat_core::current_thread_index().expect("a leaf runs in a call");
        seen[i].fetch_add(1, Ordering::Relaxed);
        return;
    }
    asat_core::join(|| indices(depth - 1, seen), || indices(depth - 1, seen));
}

#[test]
fn the_building_thread_is_index_0_for_the_pools_life() {
    watchdog(LIMIT, || {
        assert_eq!(asat_core::current_thread_index(), None);
        let pool = ThreadPoolBuilder::new()
            .num_threads(3)
            .use_current_thread()
            .build()
            .unwrap();
        assert_eq!(asat_core::current_thread_index(), Some(0));
        assert_eq!(pool.current_thread_index(), Some(0));
        assert_eq!(asat_core::current_thread_has_pending_tasks(), Some(false));
        assert_eq!(pool.current_thread_has_pending_tasks(), Some(false));
        // The pool is this thread's current runtime: free functions go to it.
        assert_eq!(asat_core::current_num_threads(), 3);
        let seen: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        indices(6, &seen);
        assert!(
            seen[0].load(Ordering::Relaxed) > 0,
            "this thread ran leaves as index 0"
        );
        // `install` runs here, as on a thread of the pool.
        let me = thread::current().id();
        assert_eq!(pool.install(|| thread::current().id()), me);
        // Another thread's calls run on the workers, never as index 0.
        thread::scope(|s| {
            s.spawn(|| {
                let seen: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
                pool.install_here(|| indices(6, &seen));
                assert_eq!(
                    seen[0].load(Ordering::Relaxed),
                    0,
                    "index 0 is the resident's"
                );
                assert_eq!(
                    seen.iter()
                        .map(|n| n.load(Ordering::Relaxed))
                        .sum::<usize>(),
                    64
                );
                assert_eq!(pool.current_thread_index(), None);
            });
        });
        drop(pool);
        assert_eq!(asat_core::current_thread_index(), None);
        assert_eq!(asat_core::current_thread_has_pending_tasks(), None);
        assert_eq!(
            asat_core::current_num_threads(),
            asat_core::Runtime::global().max_threads()
        );
    });
}

#[test]
fn a_thread_is_index_0_of_one_live_pool_at_most() {
    watchdog(LIMIT, || {
        let first = ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        let err = ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("index 0 of another pool"), "{err}");
        // Without the option, another pool builds; this thread's index stays the first's.
        let other = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        assert_eq!(other.current_thread_index(), None);
        assert_eq!(other.current_thread_has_pending_tasks(), None);
        assert_eq!(first.current_thread_index(), Some(0));
        drop(first);
        let again = ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        assert_eq!(again.current_thread_index(), Some(0));
    });
}

#[test]
fn another_threads_call_on_a_one_thread_resident_pool_runs_alone() {
    watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build()
            .unwrap();
        let other = thread::scope(|s| s.spawn(|| pool.join(|| 20, || 22)).join().unwrap());
        assert_eq!(other, (20, 22));
        assert_eq!(
            pool.join(|| pool.current_thread_index(), || 1),
            (Some(0), 1)
        );
    });
}

#[test]
fn a_spawned_job_runs_while_the_resident_thread_waits_outside_any_call() {
    watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        pool.spawn(move || tx.send(asat_core::current_thread_index()).unwrap());
        assert_ne!(rx.recv_timeout(LIMIT).unwrap(), Some(0));
    });
}
