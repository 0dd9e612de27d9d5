//! The scopes on teams of 1 to 4: every job runs, nested scopes run inline, panics propagate.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::prelude::*;
use crate::testing::on_every_team;

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
fn nested_scopes_and_calls_run_inline() {
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
    // a team of one runs the jobs after `op`, in the order they started
    crate::testing::team_of(1).install(|| {
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
    use crate::ThreadPoolScopes;
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
    pool.scope_fifo(|s| {
        s.spawn_fifo(|_| sizes[1].store(crate::current_num_threads(), Ordering::Relaxed));
    });
    pool.in_place_scope(|s| {
        s.spawn(|_| sizes[2].store(crate::current_num_threads(), Ordering::Relaxed));
    });
    pool.in_place_scope_fifo(|s| {
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
        assert_eq!(size, k, "a team of {k} receives the broadcast");
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
        assert_eq!(seen.team(), k);
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
        assert_eq!(passed.into_inner(), k);
    });
}

#[test]
fn each_member_runs_its_broadcasts_in_spawn_order() {
    on_every_team(|k| {
        let logs: Vec<std::sync::Mutex<Vec<usize>>> = (0..k).map(|_| Default::default()).collect();
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
        assert_eq!(ran.into_inner(), k);
        let seen = Seen::default();
        scope(|s| s.spawn_broadcast(|_, ctx| seen.record(&ctx)));
        assert_eq!(seen.team(), k, "usable afterwards");
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
fn pending_tasks_are_the_scopes_queued_jobs() {
    use crate::ThreadPoolScopes;
    assert_eq!(current_thread_has_pending_tasks(), None);
    let one = crate::testing::team_of(1);
    let other = crate::testing::team_of(2);
    one.install(|| {
        let in_job = std::sync::Mutex::new(Vec::new());
        scope(|s| {
            assert_eq!(current_thread_has_pending_tasks(), Some(false));
            assert_eq!(one.current_thread_has_pending_tasks(), Some(false));
            assert_eq!(other.current_thread_has_pending_tasks(), None);
            s.spawn(|_| {
                in_job
                    .lock()
                    .unwrap()
                    .push(current_thread_has_pending_tasks())
            });
            s.spawn(|_| {
                in_job
                    .lock()
                    .unwrap()
                    .push(current_thread_has_pending_tasks())
            });
            // a team of one runs them after `op`
            assert_eq!(current_thread_has_pending_tasks(), Some(true));
            s.spawn_broadcast(|_, _| {
                in_job
                    .lock()
                    .unwrap()
                    .push(one.current_thread_has_pending_tasks());
            });
        });
        // the broadcast first (the member's own list), then the two jobs in order
        assert_eq!(
            in_job.into_inner().unwrap(),
            [Some(true), Some(true), Some(false)]
        );
        // a member outside every scope
        let outside: Vec<Option<bool>> = (0..3)
            .into_par_iter()
            .map(|_| current_thread_has_pending_tasks())
            .collect();
        assert_eq!(outside, [Some(false); 3]);
    });
}
