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
