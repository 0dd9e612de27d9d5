//! The scopes on pools of 4 threads of which 1 to 4 take tasks: every job runs, jobs are
//! stolen (also from jobs), nested scopes and calls work, panics propagate, broadcasts reach
//! every thread.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use asat_core::BroadcastContext;

use super::*;
use crate::internal::testing::on_every_team;
use crate::prelude::*;

/// Long enough for any wait here on a loaded machine; reached only by a bug.
const LIMIT: Duration = Duration::from_secs(30);

/// Waits until `done()`, failing the test after [`LIMIT`].
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < LIMIT, "waited {LIMIT:?} for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Spawns a binary tree of jobs `depth` deep below each call, counting the leaves.
fn tree<'s>(s: &Scope<'s>, depth: u32, leaves: &'s AtomicUsize) {
    if depth == 0 {
        leaves.fetch_add(1, Ordering::Relaxed);
        return;
    }
    for _ in 0..2 {
        s.spawn(move |s| tree(s, depth - 1, leaves));
    }
}

#[test]
fn every_job_runs_before_scope_returns() {
    on_every_team(|k| {
        let leaves = AtomicUsize::new(0);
        let mut parts = vec![Vec::new(); 8];
        let r = scope(|s| {
            tree(s, 6, &leaves);
            for (i, part) in parts.iter_mut().enumerate() {
                s.spawn(move |_| part.extend(0..i));
            }
            "op's result"
        });
        assert_eq!(r, "op's result");
        assert_eq!(leaves.load(Ordering::Relaxed), 64, "team {k}");
        assert!(parts
            .iter()
            .enumerate()
            .all(|(i, p)| *p == (0..i).collect::<Vec<_>>()));
    });
}

#[test]
fn nested_scopes_and_calls_inside_jobs() {
    on_every_team(|k| {
        let total = AtomicUsize::new(0);
        scope(|s| {
            for i in 0..4usize {
                let total = &total;
                s.spawn(move |_| {
                    // a nested scope, and a parallel iterator, inside a job
                    scope(|inner| {
                        for j in 0..3 {
                            inner.spawn(move |_| {
                                total.fetch_add(i * 10 + j, Ordering::Relaxed);
                            });
                        }
                    });
                    let sum: usize = (0..100usize).into_par_iter().sum();
                    total.fetch_add(sum, Ordering::Relaxed);
                });
            }
        });
        let want = (0..4).map(|i| 3 * i * 10 + 3).sum::<usize>() + 4 * 4950;
        assert_eq!(total.load(Ordering::Relaxed), want, "team {k}");
        // a scope inside a parallel iterator's closure
        let n: usize = (0..8usize)
            .into_par_iter()
            .map(|i| {
                let c = AtomicUsize::new(0);
                scope(|s| {
                    (0..i).for_each(|_| {
                        s.spawn(|_| {
                            c.fetch_add(1, Ordering::Relaxed);
                        })
                    })
                });
                c.into_inner()
            })
            .sum();
        assert_eq!(n, 28);
    });
}

#[test]
fn panics_propagate_after_every_job_has_run() {
    on_every_team(|k| {
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            scope(|s| {
                for i in 0..20 {
                    let ran = &ran;
                    s.spawn(move |_| {
                        ran.fetch_add(1, Ordering::Relaxed);
                        if i == 5 {
                            panic!("job 5");
                        }
                    });
                }
            })
        }));
        assert_eq!(
            *r.unwrap_err().downcast_ref::<&str>().unwrap(),
            "job 5",
            "team {k}"
        );
        assert_eq!(ran.load(Ordering::Relaxed), 20);
        // a panic in `op` still lets its spawned jobs run
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            scope(|s| {
                s.spawn(|_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
                panic!("op");
            })
        }));
        assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "op");
        assert_eq!(ran.load(Ordering::Relaxed), 1);
        // still usable
        assert_eq!(
            scope(|s| {
                s.spawn(|_| {});
                3
            }),
            3
        );
    });
}

#[test]
fn fifo_scopes_start_jobs_in_spawn_order() {
    // one thread that takes tasks runs the jobs after `op`, in the order they were spawned
    crate::internal::testing::team_of(1).install(|| {
        let order = std::sync::Mutex::new(Vec::new());
        scope_fifo(|s| {
            for i in 0..4 {
                let order = &order;
                s.spawn_fifo(move |s| {
                    order.lock().unwrap().push(i);
                    // spawned from a job: behind every job spawned before it
                    s.spawn_fifo(move |_| order.lock().unwrap().push(10 + i));
                });
            }
        });
        assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3, 10, 11, 12, 13]);
    });
    on_every_team(|k| {
        let hits: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
        let r = in_place_scope_fifo(|s| {
            for h in &hits {
                s.spawn_fifo(move |_| {
                    h.fetch_add(1, Ordering::Relaxed);
                });
            }
            k
        });
        assert_eq!(r, k);
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    });
}

#[test]
fn in_place_scopes_keep_op_on_the_calling_thread() {
    use std::rc::Rc;
    on_every_team(|k| {
        let caller = std::thread::current().id();
        let local = Rc::new(std::cell::Cell::new(0)); // neither Send nor Sync
        let sum = AtomicUsize::new(0);
        let r = in_place_scope(|s| {
            assert_eq!(std::thread::current().id(), caller);
            for i in 0..50 {
                local.set(local.get() + 1);
                let sum = &sum;
                s.spawn(move |_| {
                    sum.fetch_add(i, Ordering::Relaxed);
                });
            }
            Rc::clone(&local)
        });
        assert_eq!((r.get(), sum.into_inner()), (50, 1225), "team {k}");
        // a panic in `op` is re-raised after the jobs ran
        let ran = AtomicUsize::new(0);
        let p = catch_unwind(AssertUnwindSafe(|| {
            in_place_scope(|s| {
                s.spawn(|_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
                let _keep = Rc::new(());
                panic!("in place");
            })
        }));
        assert_eq!(*p.unwrap_err().downcast_ref::<&str>().unwrap(), "in place");
        assert_eq!(ran.load(Ordering::Relaxed), 1);
    });
}

#[test]
fn thread_pool_scopes_run_on_that_pool() {
    // a size no global runtime is likely to have; teams of 2
    let pool = asat_core::Runtime::builder()
        .max_threads(7)
        .policy(asat_core::Fixed::new(2))
        .build()
        .unwrap();
    let sizes: Vec<AtomicUsize> = (0..4).map(|_| AtomicUsize::new(0)).collect();
    pool.scope(|s| {
        s.spawn(|_| sizes[0].store(crate::current_num_threads(), Ordering::Relaxed));
    });
    // through the trait, as code written against it calls them
    crate::ThreadPoolScopes::scope_fifo(&pool, |s| {
        s.spawn_fifo(|_| sizes[1].store(crate::current_num_threads(), Ordering::Relaxed));
    });
    pool.in_place_scope(|s| {
        s.spawn(|_| sizes[2].store(crate::current_num_threads(), Ordering::Relaxed));
    });
    crate::ThreadPoolScopes::in_place_scope_fifo(&pool, |s| {
        s.spawn_fifo(|_| sizes[3].store(crate::current_num_threads(), Ordering::Relaxed));
    });
    let sizes: Vec<usize> = sizes.iter().map(|n| n.load(Ordering::Relaxed)).collect();
    assert_eq!(sizes, [7; 4]);
}

/// Which members ran a broadcast, and the team sizes they were told: one bit per index.
#[derive(Default)]
struct Seen {
    indices: AtomicUsize,
    runs: AtomicUsize,
    sizes: std::sync::Mutex<Vec<usize>>,
}

impl Seen {
    fn record(&self, ctx: &BroadcastContext<'_>) {
        let bit = 1 << ctx.index();
        let before = self.indices.fetch_or(bit, Ordering::Relaxed);
        assert_eq!(
            before & bit,
            0,
            "member {} ran a broadcast twice",
            ctx.index()
        );
        self.runs.fetch_add(1, Ordering::Relaxed);
        self.sizes.lock().unwrap().push(ctx.num_threads());
    }

    /// The team size every member was told, having checked that members `0..size` each ran
    /// once.
    fn team(&self) -> usize {
        let sizes = self.sizes.lock().unwrap();
        let size = sizes[0];
        assert!(sizes.iter().all(|&s| s == size), "sizes {sizes:?}");
        assert_eq!(self.runs.load(Ordering::Relaxed), size);
        assert_eq!(self.indices.load(Ordering::Relaxed), (1 << size) - 1);
        size
    }
}

#[test]
fn broadcasts_run_once_on_every_member() {
    on_every_team(|k| {
        // from `op`, from a job, and from a broadcast job (once per member that spawns)
        let (from_op, from_job) = (Seen::default(), Seen::default());
        let nested = AtomicUsize::new(0);
        let threads = std::sync::Mutex::new(std::collections::HashSet::new());
        scope(|s| {
            s.spawn_broadcast(|s, ctx| {
                from_op.record(&ctx);
                threads.lock().unwrap().insert(std::thread::current().id());
                s.spawn_broadcast(|_, _| {
                    nested.fetch_add(1, Ordering::Relaxed);
                });
            });
            s.spawn(|s| s.spawn_broadcast(|_, ctx| from_job.record(&ctx)));
        });
        let size = from_op.team();
        assert_eq!(
            size, 4,
            "every thread of the pool receives it, {k} taking tasks"
        );
        assert_eq!(from_job.team(), size);
        assert_eq!(nested.into_inner(), size * size);
        assert_eq!(
            threads.into_inner().unwrap().len(),
            size,
            "distinct threads"
        );
        // a FIFO scope's too
        let seen = Seen::default();
        scope_fifo(|s| s.spawn_broadcast(|_, ctx| seen.record(&ctx)));
        assert_eq!(seen.team(), 4);
    });
}

#[test]
fn broadcast_members_can_wait_for_each_other() {
    on_every_team(|k| {
        let barrier = std::sync::OnceLock::new();
        let passed = AtomicUsize::new(0);
        scope(|s| {
            s.spawn_broadcast(|_, ctx| {
                barrier
                    .get_or_init(|| std::sync::Barrier::new(ctx.num_threads()))
                    .wait();
                passed.fetch_add(1, Ordering::Relaxed);
            });
        });
        assert_eq!(passed.into_inner(), 4, "{k} taking tasks");
    });
}

#[test]
fn each_member_runs_its_broadcasts_in_spawn_order() {
    on_every_team(|k| {
        let logs: Vec<Mutex<Vec<usize>>> = (0..4).map(|_| Default::default()).collect();
        scope_fifo(|s| {
            for b in 0..5 {
                let logs = &logs;
                s.spawn_broadcast(move |_, ctx| logs[ctx.index()].lock().unwrap().push(b));
            }
        });
        for log in logs {
            assert_eq!(log.into_inner().unwrap(), [0, 1, 2, 3, 4], "team {k}");
        }
    });
}

#[test]
fn broadcast_panics_propagate_after_every_member_ran() {
    on_every_team(|k| {
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            scope(|s| {
                s.spawn_broadcast(|_, ctx| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    if ctx.index() == ctx.num_threads() - 1 {
                        panic!("last member");
                    }
                });
            })
        }));
        assert_eq!(
            *r.unwrap_err().downcast_ref::<&str>().unwrap(),
            "last member"
        );
        assert_eq!(ran.into_inner(), 4, "{k} taking tasks");
        let seen = Seen::default();
        scope(|s| s.spawn_broadcast(|_, ctx| seen.record(&ctx)));
        assert_eq!(seen.team(), 4, "usable afterwards");
    });
}

#[test]
fn a_broadcast_in_an_inline_scope_runs_once() {
    on_every_team(|k| {
        let sizes: Vec<usize> = (0..6usize)
            .into_par_iter()
            .map(|_| {
                let seen = Seen::default();
                scope(|s| s.spawn_broadcast(|_, ctx| seen.record(&ctx)));
                seen.team()
            })
            .collect();
        assert_eq!(sizes, [1; 6], "team {k}");
    });
}

#[test]
fn pending_tasks_are_the_threads_queued_work() {
    assert_eq!(current_thread_has_pending_tasks(), None);
    // one thread of four takes tasks: the others leave the owner's deque alone
    let one = crate::internal::testing::team_of(1);
    let other = crate::internal::testing::team_of(2);
    one.install(|| {
        let in_job = Mutex::new(Vec::new());
        let in_broadcast = Mutex::new(Vec::new());
        scope(|s| {
            assert_eq!(current_thread_has_pending_tasks(), Some(false));
            assert_eq!(one.current_thread_has_pending_tasks(), Some(false));
            assert_eq!(other.current_thread_has_pending_tasks(), None);
            for _ in 0..2 {
                s.spawn(|_| {
                    in_job
                        .lock()
                        .unwrap()
                        .push(current_thread_has_pending_tasks())
                });
            }
            // the owner runs them once `op` has returned
            assert_eq!(current_thread_has_pending_tasks(), Some(true));
            s.spawn_broadcast(|_, ctx| {
                let pending = one.current_thread_has_pending_tasks();
                in_broadcast.lock().unwrap().push((ctx.index(), pending));
            });
        });
        // the owner's part of the broadcast first (its mail), then the jobs, newest first:
        // the first to run sees the other still queued
        assert_eq!(in_job.into_inner().unwrap(), [Some(true), Some(false)]);
        let mut parts = in_broadcast.into_inner().unwrap();
        parts.sort();
        assert_eq!(parts[0], (0, Some(true)), "the owner's part, jobs queued");
        assert!(
            parts[1..].iter().all(|&(_, p)| p == Some(false)),
            "{parts:?}"
        );
    });
}

#[test]
fn a_thread_runs_its_own_spawns_newest_first() {
    crate::internal::testing::team_of(1).install(|| {
        let order = Mutex::new(Vec::new());
        scope(|s| {
            for i in 0..5 {
                let order = &order;
                s.spawn(move |_| order.lock().unwrap().push(i));
            }
        });
        assert_eq!(order.into_inner().unwrap(), [4, 3, 2, 1, 0]);
    });
}

/// Two jobs that can only end when both run at once: `spawn_pair` spawns them into `s`.
fn spawn_pair<'s>(s: &Scope<'s>, met: &'s AtomicUsize) {
    for _ in 0..2 {
        s.spawn(move |_| {
            met.fetch_add(1, Ordering::SeqCst);
            wait_for("the other job of a pair", || {
                met.load(Ordering::SeqCst) >= 2
            });
        });
    }
}

#[test]
fn spawned_jobs_are_stolen_by_other_threads() {
    // with one thread taking tasks, the pair would wait for each other: two threads ran them
    for k in 2..=4 {
        crate::internal::testing::team_of(k).install_here(|| {
            let met = AtomicUsize::new(0);
            scope(|s| spawn_pair(s, &met));
            // from a job, at depth
            let met = AtomicUsize::new(0);
            scope(|s| s.spawn(|s| s.spawn(|s| spawn_pair(s, &met))));
            // from inside a join's closure and a parallel iterator's
            let met = AtomicUsize::new(0);
            scope(|s| {
                crate::join(|| spawn_pair(s, &met), || ());
            });
            let met = AtomicUsize::new(0);
            scope(|s| {
                (0..1).into_par_iter().for_each(|_| spawn_pair(s, &met));
            });
        });
    }
}

/// Adds `0..32` to `total`, each from a job spawned by a job.
fn spawn_sums<'s>(s: &Scope<'s>, total: &'s AtomicUsize) {
    for i in 0..32 {
        s.spawn(move |s| {
            s.spawn(move |_| {
                total.fetch_add(i, Ordering::Relaxed);
            });
        });
    }
}

#[test]
fn scopes_from_several_threads_share_the_pool() {
    let pool = crate::internal::testing::team_of(4);
    let total = AtomicUsize::new(0);
    let start = Barrier::new(4);
    std::thread::scope(|ts| {
        for t in 0..4usize {
            let (total, start) = (&total, &start);
            ts.spawn(move || {
                start.wait();
                let caller = std::thread::current().id();
                if t % 2 == 0 {
                    pool.scope(|s| spawn_sums(s, total));
                } else {
                    // `op` stays on this thread, which may not hold the pool's caller slot
                    pool.in_place_scope(|s| {
                        assert_eq!(std::thread::current().id(), caller);
                        spawn_sums(s, total)
                    });
                }
            });
        }
    });
    assert_eq!(total.into_inner(), 4 * (0..32).sum::<usize>());
}

#[test]
fn a_scope_handle_lent_to_another_thread_spawns_into_the_pool() {
    on_every_team(|k| {
        let ran = AtomicUsize::new(0);
        scope(|s| {
            std::thread::scope(|ts| {
                ts.spawn(|| {
                    for _ in 0..8 {
                        s.spawn(|_| {
                            ran.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
            });
        });
        assert_eq!(ran.into_inner(), 8, "{k} taking tasks");
    });
}

#[test]
fn a_scope_whose_pool_has_no_free_thread_runs_its_jobs_on_the_caller() {
    // a one-thread pool whose caller slot another thread holds: nobody else may run the jobs
    let pool = asat_core::Runtime::builder()
        .max_threads(1)
        .build()
        .unwrap();
    let (held, release) = (AtomicBool::new(false), AtomicBool::new(false));
    std::thread::scope(|ts| {
        ts.spawn(|| {
            pool.join(
                || {
                    held.store(true, Ordering::SeqCst);
                    wait_for("the scope to end", || release.load(Ordering::SeqCst));
                },
                || (),
            )
        });
        wait_for("the slot to be taken", || held.load(Ordering::SeqCst));
        let order = Mutex::new(Vec::new());
        let caller = std::thread::current().id();
        pool.scope(|s| {
            for i in 0..3 {
                let order = &order;
                s.spawn(move |s| {
                    assert_eq!(std::thread::current().id(), caller);
                    order.lock().unwrap().push(i);
                    s.spawn_broadcast(move |_, ctx| {
                        assert_eq!((ctx.index(), ctx.num_threads()), (0, 1));
                        order.lock().unwrap().push(10 + i);
                    });
                });
            }
        });
        release.store(true, Ordering::SeqCst);
        assert_eq!(order.into_inner().unwrap(), [2, 12, 1, 11, 0, 10]);
    });
}

#[test]
fn a_small_scope_on_two_threads() {
    // The scope engine's every path in a few jobs (for Miri, which runs slowly): spawns on the
    // owner's deque, one stolen from it (the pair waits for each other), spawns from a job, a
    // FIFO scope's tokens, a broadcast's parts in each thread's mail.
    crate::internal::testing::team_of(2).install_here(|| {
        let met = AtomicUsize::new(0);
        let parts = AtomicUsize::new(0);
        scope(|s| {
            spawn_pair(s, &met);
            s.spawn(|s| {
                s.spawn(|_| {
                    met.fetch_add(10, Ordering::SeqCst);
                })
            });
            s.spawn_broadcast(|_, ctx| {
                parts.fetch_or(1 << ctx.index(), Ordering::SeqCst);
            });
        });
        assert_eq!((met.into_inner(), parts.into_inner()), (12, 0b1111));
        let order = Mutex::new(Vec::new());
        scope_fifo(|s| {
            for i in 0..3 {
                let order = &order;
                s.spawn_fifo(move |_| order.lock().unwrap().push(i));
            }
        });
        let mut order = order.into_inner().unwrap();
        order.sort();
        assert_eq!(order, [0, 1, 2]);
    });
}
