//! Parallel loops on the work-stealing engine: a loop nested in a task or in a region, and
//! loops from several threads at once, run on several threads of one pool and give the
//! sequential result.

// asat-core's test helpers, for a policy and threads of the facade's runtime.
#[path = "../crates/asat-core/tests/common/mod.rs"]
mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

use asat::prelude::*;
use asat::ThreadPoolBuilder;
use common::{at_once, watchdog};

/// Long enough for any of these calls on a loaded machine; reached only by a hang.
const LIMIT: Duration = Duration::from_secs(120);

const ITEM: Duration = Duration::from_millis(2);

/// A parallel loop over `0..n` whose items sleep [`ITEM`] and record the thread that ran
/// them; returns the items' sum.
fn sleepy_loop(n: u64, seen: &Mutex<HashSet<ThreadId>>) -> u64 {
    (0..n)
        .into_par_iter()
        .map(|i| {
            thread::sleep(ITEM);
            seen.lock().unwrap().insert(thread::current().id());
            i
        })
        .sum()
}

#[test]
fn a_loop_runs_as_a_region_from_an_idle_pool_and_as_tasks_when_nested() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    assert!(!pool.loops_on_tasks());
    assert!(pool.join(|| pool.loops_on_tasks(), || ()).0);
    pool.region(|_| assert!(pool.loops_on_tasks()));
}

#[test]
fn a_loop_inside_a_join_runs_on_several_threads() {
    let threads = watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let seen = Mutex::new(HashSet::new());
        let (sum, ()) = pool.install_here(|| asat::join(|| sleepy_loop(32, &seen), || ()));
        assert_eq!(sum, 496);
        seen.into_inner().unwrap().len()
    });
    assert!(threads > 1, "threads used: {threads}");
}

/// An outer loop of two items on a pool of four: its inner loops spread over the threads the
/// outer one leaves idle.
#[test]
fn loops_inside_a_loop_run_on_the_threads_it_leaves_idle() {
    let threads = watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let seen = Mutex::new(HashSet::new());
        let sums: Vec<u64> = pool.install_here(|| {
            (0..2u64)
                .into_par_iter()
                .map(|_| sleepy_loop(16, &seen))
                .collect()
        });
        assert_eq!(sums, [120, 120]);
        seen.into_inner().unwrap().len()
    });
    assert!(threads > 2, "threads used: {threads}");
}

/// Four threads each run a loop on one pool of eight at once: every loop completes with its
/// sum, and each is shared with more than its caller's thread.
#[test]
fn loops_from_four_threads_at_once_each_use_several_threads() {
    let per_call = watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(8).build().unwrap();
        at_once(4, || {
            let seen = Mutex::new(HashSet::new());
            assert_eq!(pool.install_here(|| sleepy_loop(32, &seen)), 496);
            seen.into_inner().unwrap().len()
        })
    });
    assert!(
        per_call.iter().all(|&n| n > 1),
        "threads per call: {per_call:?}"
    );
}

/// Nested loops of every shape give the sequential result while other threads' loops and
/// joins keep the pool busy (so that the inner and the concurrent ones run as tasks).
#[test]
fn nested_loops_beside_other_callers_give_the_sequential_result() {
    watchdog(LIMIT, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(4).build().unwrap());
        let callers: Vec<_> = (0..3u64)
            .map(|k| {
                let pool = Arc::clone(&pool);
                thread::spawn(move || {
                    pool.install_here(|| {
                        for n in [0u64, 1, 7, 100, 1000] {
                            let nested: u64 = (0..n)
                                .into_par_iter()
                                .map(|i| (0..i % 50).into_par_iter().map(|j| j * k).sum::<u64>())
                                .sum();
                            let serial: u64 = (0..n)
                                .map(|i| (0..i % 50).map(|j| j * k).sum::<u64>())
                                .sum();
                            assert_eq!(nested, serial, "caller {k}, {n} items");
                            let words: Vec<String> = (0..n)
                                .into_par_iter()
                                .with_max_len(3)
                                .map(|i| i.to_string())
                                .collect();
                            assert_eq!(words, (0..n).map(|i| i.to_string()).collect::<Vec<_>>());
                            let found = (0..n).into_par_iter().find_first(|&i| i * i >= n);
                            assert_eq!(found, (0..n).find(|&i| i * i >= n));
                        }
                    })
                })
            })
            .collect();
        for h in callers {
            h.join().unwrap();
        }
    });
}
