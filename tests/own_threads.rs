//! A pool whose threads carry what the program gave them (a name, a start handler) runs the
//! closures of calls made from other threads on its own threads, as rayon does: the global
//! pool (iterators, `join`, `scope`, `broadcast`) and a pool's own calls. Pools without
//! either keep the caller in its call.
//!
//! The global runtime is process-wide state: its checks run in order in one test (a file of
//! its own is a process of its own).

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread;

use asat::prelude::*;
use asat::{Runtime, ThreadPoolBuilder};

thread_local! {
    /// Set by the pools' start handlers.
    static SET_UP: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is one of the global pool's: set up by its start handler and
/// named by its name function.
fn on_pool_thread() -> bool {
    SET_UP.with(Cell::get)
        && thread::current()
            .name()
            .is_some_and(|n| n.starts_with("own-"))
}

#[test]
fn calls_from_outside_run_on_the_pools_threads() {
    ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("own-{i}"))
        .start_handler(|_| SET_UP.with(|s| s.set(true)))
        .build_global()
        .unwrap();
    assert!(!on_pool_thread());
    assert!(Runtime::with_current(Runtime::hands_calls_over));

    // Terminal calls of every shape: many items, one item, one item per thread, pieces
    // dealt, reductions, collect, searches.
    assert!((0..10_000).into_par_iter().all(|_| on_pool_thread()));
    assert_eq!(
        (0..10_000)
            .into_par_iter()
            .filter(|_| on_pool_thread())
            .count(),
        10_000
    );
    assert!([1].par_iter().all(|_| on_pool_thread()));
    let per_thread = asat::current_num_threads();
    assert!((0..per_thread).into_par_iter().all(|_| on_pool_thread()));
    assert!((0..1000)
        .into_par_iter()
        .with_max_len(7)
        .all(|_| on_pool_thread()));
    let v: Vec<bool> = (0..500).into_par_iter().map(|_| on_pool_thread()).collect();
    assert!(v.iter().all(|&x| x));
    assert_eq!(
        (0..500).into_par_iter().find_first(|_| !on_pool_thread()),
        None
    );

    // join, scope, scope_fifo, broadcast: every closure on the pool's threads.
    assert_eq!(asat::join(on_pool_thread, on_pool_thread), (true, true));
    asat::scope(|s| {
        assert!(on_pool_thread());
        s.spawn(|_| assert!(on_pool_thread()));
    });
    asat::scope_fifo(|s| {
        assert!(on_pool_thread());
        s.spawn_fifo(|_| assert!(on_pool_thread()));
    });
    let all = asat::broadcast(|_| on_pool_thread());
    assert_eq!(all, vec![true; 3]);

    // in_place_scope runs its op on the caller, as rayon's does; its jobs on the pool's
    // threads.
    asat::in_place_scope(|s| {
        assert!(!on_pool_thread());
        s.spawn(|_| assert!(on_pool_thread()));
    });

    // On the pool's threads, calls stay where they are.
    asat::join(
        || assert!(!Runtime::with_current(Runtime::hands_calls_over)),
        || (),
    );

    // A panic reaches the caller, and the pool goes on.
    let r = catch_unwind(AssertUnwindSafe(|| {
        (0..100)
            .into_par_iter()
            .for_each(|i| assert_ne!(i, 57, "boom"));
    }));
    assert!(r.is_err());
    assert!((0..100).into_par_iter().all(|_| on_pool_thread()));

    // Several threads calling in at once.
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                assert!((0..2000).into_par_iter().all(|_| on_pool_thread()));
                assert_eq!(asat::join(on_pool_thread, on_pool_thread), (true, true));
            });
        }
    });
}

#[test]
fn a_pools_own_calls_run_on_its_threads_where_they_are_named() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("named-{i}"))
        .build()
        .unwrap();
    let named = || {
        thread::current()
            .name()
            .is_some_and(|n| n.starts_with("named-"))
    };
    assert!(pool.hands_calls_over());
    assert_eq!(pool.join(named, named), (true, true));
    pool.scope(|s| {
        assert!(named());
        s.spawn(|_| assert!(named()));
    });
    assert!(pool.broadcast(|_| named()).into_iter().all(|x| x));
    pool.install(|| assert!(named() && !pool.hands_calls_over()));

    // A start handler alone marks the threads too.
    let set_up = ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(|_| SET_UP.with(|s| s.set(true)))
        .build()
        .unwrap();
    let is_set_up = || SET_UP.with(Cell::get);
    assert!(set_up.hands_calls_over() && !is_set_up());
    assert_eq!(set_up.join(is_set_up, is_set_up), (true, true));
    assert!(set_up.broadcast(|_| is_set_up()).into_iter().all(|x| x));

    // Without a name or a start handler, the caller takes part in its calls.
    let plain = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    assert!(!plain.hands_calls_over());
    let me = thread::current().id();
    assert_eq!(plain.join(|| thread::current().id(), || ()).0, me);
    assert_eq!(plain.broadcast(|_| thread::current().id())[0], me);
}
