//! The work-stealing `join` on real threads: every thread of a pool takes part in a recursion,
//! `join_coarse` offers its second half at once and so do joins that come far apart, calls
//! from many threads share the workers, indices stay unique, panics reach the right caller,
//! and joins mix with other runtimes, regions and `fork`.

mod common;

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::{self, ThreadId};
use std::time::Duration;

use asat_core::{Runtime, ThreadPoolBuilder};
use common::{at_once, watchdog};

/// Long enough for any of these calls on a loaded machine; reached only by a hang.
const LIMIT: Duration = Duration::from_secs(120);

/// A recursion of `depth` levels of `join` whose leaves sleep `leaf` and record the thread
/// that ran them; returns the number of leaves.
fn sleepy(depth: u32, leaf: Duration, seen: &Mutex<HashSet<ThreadId>>) -> usize {
    if depth == 0 {
        thread::sleep(leaf);
        seen.lock().unwrap().insert(thread::current().id());
        return 1;
    }
    let (a, b) = asat_core::join(
        || sleepy(depth - 1, leaf, seen),
        || sleepy(depth - 1, leaf, seen),
    );
    a + b
}

#[test]
fn a_recursive_join_runs_on_every_thread_of_the_pool() {
    for n in [2, 4, 8] {
        let threads = watchdog(LIMIT, move || {
            let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
            let seen = Mutex::new(HashSet::new());
            let leaves = pool.install_here(|| sleepy(6, Duration::from_millis(3), &seen));
            assert_eq!(leaves, 64);
            seen.into_inner().unwrap().len()
        });
        assert_eq!(threads, n, "a pool of {n}");
    }
}

/// Eight callers on a pool of sixteen: each call's work is shared with the threads no other
/// call keeps busy. (On a pool of eight, eight calls of equal work rightly keep to one thread
/// each: nobody is idle to take any.)
#[test]
fn calls_from_eight_threads_complete_and_each_uses_several_threads() {
    let per_call = watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(16).build().unwrap();
        at_once(8, || {
            let seen = Mutex::new(HashSet::new());
            let leaves = pool.install_here(|| sleepy(5, Duration::from_millis(3), &seen));
            assert_eq!(leaves, 32);
            seen.into_inner().unwrap().len()
        })
    });
    assert!(
        per_call.iter().all(|&n| n > 1),
        "threads per call: {per_call:?}"
    );
}

/// `join_coarse` offers `b` at once: a thread that waits inside `a` without joining again
/// (which a plain `join` would give no beat to share from) sees `b` run on another thread.
#[test]
fn a_coarse_join_offers_its_second_half_at_once() {
    for n in [2, 4] {
        let (elsewhere, results) = watchdog(LIMIT, move || {
            let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
            let taken = AtomicBool::new(false);
            // Workers started, then asleep again.
            pool.install_here(|| asat_core::join(|| (), || ()));
            thread::sleep(Duration::from_millis(50));
            let (ab, ()) = pool.install_here(|| {
                // The call's first join, which may share at once whatever kind it is, and
                // starts the thread's beat: the joins inside it come before the next.
                asat_core::join(
                    || {
                        let me = thread::current().id();
                        let start = std::time::Instant::now();
                        asat_core::join_coarse(
                            || {
                                while !taken.load(Ordering::SeqCst) && start.elapsed() < LIMIT / 4 {
                                    thread::sleep(Duration::from_millis(1));
                                }
                                1
                            },
                            || {
                                taken.store(thread::current().id() != me, Ordering::SeqCst);
                                2
                            },
                        )
                    },
                    || (),
                )
            });
            assert_eq!(ab, (1, 2));
            let results = pool.install_here(|| asat_core::join_coarse(|| 3, || 4));
            (taken.into_inner(), results)
        });
        assert!(elsewhere, "a pool of {n}: b stayed on the caller");
        assert_eq!(results, (3, 4));
    }
}

/// A chain of `depth` joins whose innermost first half waits for its second half to run on
/// another thread (up to `LIMIT / 4`); the second halves above it do nothing. Returns
/// whether another thread ran it.
fn chain(depth: u32, me: ThreadId, taken: &AtomicBool) -> bool {
    if depth == 0 {
        let start = std::time::Instant::now();
        while !taken.load(Ordering::SeqCst) && start.elapsed() < LIMIT / 4 {
            thread::sleep(Duration::from_millis(1));
        }
        return taken.load(Ordering::SeqCst);
    }
    let (got, ()) = asat_core::join(
        || chain(depth - 1, me, taken),
        || {
            if depth == 1 {
                taken.store(thread::current().id() != me, Ordering::SeqCst);
            }
        },
    );
    got
}

#[test]
fn joins_that_come_far_apart_offer_every_pending_half_at_once() {
    // A millisecond after the call's first join, a chain of joins: the clock read among them
    // finds them coarse, and every frame of the chain is shared, so the other thread takes
    // the innermost second half while the caller waits in the innermost first half. Shared
    // one a beat, the innermost stayed private and waited for the caller's next join.
    let elsewhere = watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let taken = AtomicBool::new(false);
        let (got, ()) = pool.install_here(|| {
            asat_core::join(
                || {
                    thread::sleep(Duration::from_millis(2));
                    chain(4, thread::current().id(), &taken)
                },
                || (),
            )
        });
        got
    });
    assert!(elsewhere, "the innermost second half stayed on the caller");
}

#[test]
fn a_loop_after_coarse_items_splits_before_its_first_piece() {
    // The thread's last loop had items of a millisecond: the next loop splits at once, so
    // its second item waits on the deque for the worker, busy elsewhere, while the caller
    // runs the first item, which waits for it. Split at the beat only, the loop would find
    // no idle thread and run both items itself, the first waiting for good.
    let elsewhere = watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let (busy, taken) = (AtomicBool::new(false), AtomicBool::new(false));
        let me = thread::current().id();
        pool.install_here(|| {
            pool.fold_adaptive(
                0..2,
                asat_core::PieceLen::ANY,
                || (),
                |(), _| thread::sleep(Duration::from_millis(1)),
                |(), ()| (),
                |_| false,
            );
            asat_core::join_coarse(
                || {
                    while !busy.load(Ordering::SeqCst) {
                        thread::sleep(Duration::from_millis(1));
                    }
                    pool.fold_adaptive(
                        0..2,
                        asat_core::PieceLen::ANY,
                        || (),
                        |(), r| {
                            if r.contains(&1) {
                                taken.store(thread::current().id() != me, Ordering::SeqCst);
                            }
                            let start = std::time::Instant::now();
                            while r.contains(&0)
                                && !taken.load(Ordering::SeqCst)
                                && start.elapsed() < LIMIT / 4
                            {
                                thread::sleep(Duration::from_millis(1));
                            }
                        },
                        |(), ()| (),
                        |_| false,
                    );
                },
                || {
                    busy.store(true, Ordering::SeqCst);
                    thread::sleep(Duration::from_millis(20));
                },
            );
        });
        taken.into_inner()
    });
    assert!(elsewhere, "the loop's second item stayed on the caller");
}

#[test]
fn indices_are_unique_among_tasks_running_at_once() {
    fn walk(depth: u32, running: &[AtomicBool], n: usize) {
        if depth == 0 {
            let i = asat_core::current_thread_index().expect("a task has an index");
            assert!(i < n, "index {i} in a pool of {n}");
            assert!(
                !running[i].swap(true, Ordering::SeqCst),
                "index {i} twice at once"
            );
            thread::sleep(Duration::from_micros(200));
            running[i].store(false, Ordering::SeqCst);
            return;
        }
        asat_core::join(
            || walk(depth - 1, running, n),
            || walk(depth - 1, running, n),
        );
    }
    watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let running: Vec<AtomicBool> = (0..4).map(|_| AtomicBool::new(false)).collect();
        thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| pool.install_here(|| walk(7, &running, 4)));
            }
        });
    });
}

#[test]
fn a_panic_in_a_nested_task_reaches_its_caller_and_the_pool_goes_on() {
    watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        for round in 0..20 {
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.install_here(|| {
                    asat_core::join(
                        || thread::sleep(Duration::from_millis(1)),
                        || {
                            asat_core::join(
                                || thread::sleep(Duration::from_micros(300)),
                                || panic!("leaf {round}"),
                            )
                        },
                    )
                })
            }));
            let p = r.expect_err("the panic comes back");
            assert_eq!(
                p.downcast_ref::<String>().unwrap(),
                &format!("leaf {round}")
            );
        }
        let seen = Mutex::new(HashSet::new());
        assert_eq!(
            pool.install_here(|| sleepy(4, Duration::from_millis(1), &seen)),
            16
        );
    });
}

#[test]
fn a_panic_reaches_the_thread_that_called_not_another() {
    watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        thread::scope(|s| {
            let bad = s.spawn(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    pool.install_here(|| {
                        asat_core::join(
                            || thread::sleep(Duration::from_millis(2)),
                            || panic!("the bad caller's"),
                        )
                    })
                }))
                .is_err()
            });
            let good = s.spawn(|| {
                let seen = Mutex::new(HashSet::new());
                pool.install_here(|| sleepy(5, Duration::from_micros(500), &seen))
            });
            assert!(bad.join().unwrap());
            assert_eq!(good.join().unwrap(), 32);
        });
    });
}

#[test]
fn a_task_calls_into_another_runtime() {
    fn fib(n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = asat_core::join(|| fib(n - 1), || fib(n - 2));
        a + b
    }
    watchdog(LIMIT, || {
        let a = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let b = ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let (x, y) = a.install_here(|| {
            asat_core::join(
                || b.install_here(|| fib(20)),
                || asat_core::join(|| fib(18), || b.install_here(|| fib(19))),
            )
        });
        assert_eq!((x, y.0, y.1), (6765, 2584, 4181));
    });
}

#[test]
fn regions_and_recursive_joins_run_at_once_on_one_pool() {
    watchdog(LIMIT, || {
        let rt = Runtime::builder().max_threads(3).build().unwrap();
        let met = AtomicUsize::new(0);
        thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..200 {
                    rt.region(|team| {
                        team.barrier();
                        met.fetch_add(1, Ordering::Relaxed);
                        team.barrier();
                    });
                }
            });
            s.spawn(|| {
                for _ in 0..20 {
                    let seen = Mutex::new(HashSet::new());
                    let n = rt.install_here(|| sleepy(5, Duration::from_micros(200), &seen));
                    assert_eq!(n, 32);
                }
            });
        });
        assert!(met.load(Ordering::Relaxed) >= 200);
    });
}

#[test]
fn joins_inside_a_region_share_with_workers_outside_its_team() {
    watchdog(LIMIT, || {
        let rt = Runtime::builder().max_threads(4).build().unwrap();
        let seen = Mutex::new(HashSet::new());
        let leaves = AtomicUsize::new(0);
        rt.region_of(2, |team| {
            if team.index() == 1 {
                leaves.fetch_add(
                    sleepy(5, Duration::from_millis(2), &seen),
                    Ordering::Relaxed,
                );
            }
            team.barrier();
        });
        assert_eq!(leaves.into_inner(), 32);
        assert!(seen.into_inner().unwrap().len() > 1);
    });
}

#[test]
fn fork_from_a_task_leaves_a_child_that_joins_alone() {
    watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let status = pool.install_here(|| {
            asat_core::join(
                || {
                    // SAFETY: the child only joins (inline in a forked child: no threads) and
                    // leaves with `_exit`, touching no lock another thread may hold.
                    let pid = unsafe { libc::fork() };
                    if pid == 0 {
                        let (a, b) = asat_core::join(|| 40, || 2);
                        // SAFETY: `_exit` ends the child without running the parent's handlers.
                        unsafe { libc::_exit(a + b) };
                    }
                    let mut status = 0;
                    // SAFETY: waits for the child just forked.
                    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
                    status
                },
                || thread::sleep(Duration::from_millis(1)),
            )
            .0
        });
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), 42);
    });
}

#[test]
fn dropping_a_pool_while_its_workers_search_and_sleep() {
    watchdog(LIMIT, || {
        for _ in 0..50 {
            let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
            let seen = Mutex::new(HashSet::new());
            assert_eq!(pool.install_here(|| sleepy(3, Duration::ZERO, &seen)), 8);
            drop(pool);
        }
    });
}

#[test]
fn a_one_thread_pool_seats_a_joins_caller_and_a_second_caller_runs_alone() {
    fn depth_indices(n: u32) -> Vec<Option<usize>> {
        if n == 0 {
            return vec![asat_core::current_thread_index()];
        }
        let (mut a, b) = asat_core::join(|| depth_indices(n - 1), || depth_indices(n - 1));
        a.extend(b);
        a
    }
    watchdog(LIMIT, || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        // A join from outside seats its thread as the pool's index 0 (the worker has none to
        // run), so the joins it makes are the pool's tasks.
        let seen = pool.install_here(|| depth_indices(6));
        assert_eq!(seen, vec![Some(0); 64]);
        // While one caller holds index 0, another runs its joins on its own thread.
        let inside = AtomicBool::new(false);
        let leave = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                pool.install_here(|| {
                    asat_core::join(
                        || {
                            inside.store(true, Ordering::SeqCst);
                            while !leave.load(Ordering::SeqCst) {
                                thread::sleep(Duration::from_millis(1));
                            }
                        },
                        || (),
                    )
                })
            });
            while !inside.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(1));
            }
            let (a, b) = pool.install_here(|| asat_core::join(|| 20, || 22));
            leave.store(true, Ordering::SeqCst);
            assert_eq!(a + b, 42);
        });
    });
}
