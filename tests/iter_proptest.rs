//! Property tests of the parallel iterators as runtime calls: results stay right when the team
//! size changes from call to call; owned items are dropped exactly once (also after `take`, a
//! shorter `zip`, a panic); a panic in a closure reaches the terminal call and the runtime stays
//! usable; one runtime serves many calling threads. (The sources, adapters and terminal calls
//! are tested against std in `iter_sources.rs`, `iter_adapters.rs` and `iter_reductions.rs`.)
//!
//! Runtimes are shared by the cases (built once, in `iter_support`: fixed teams of 1 to 4 and one
//! whose team size cycles), so that a case also checks that the calls before it left its runtime
//! clean.

mod iter_support;

use asat::prelude::*;
use asat::Runtime;
use iter_support::*;
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn team_size_changes_between_calls(
        sizes in proptest::collection::vec(1usize..=4, 1..6),
        v in values(-1000..1000),
        s in setup(),
    ) {
        // a runtime of its own, so that its regions can be counted
        let rt = Runtime::builder()
            .max_threads(4)
            .policy(Cycling::new(sizes.clone()))
            .build()
            .unwrap();
        // After each call: at most one region more, and one more region ran with the team
        // size the policy gave it; a call of one block per thread of the pool (4) has a member
        // per block without asking the policy.
        // (the last block takes the rest: as many blocks as whole minimums fit)
        let blocks = (v.len() / s.split.min_len.max(1)).max(1);
        let per_thread = blocks == 4;
        let mut regions = 0;
        let mut planned = 0;
        let mut ran = |what: &str| -> Result<(), TestCaseError> {
            let st = rt.stats();
            prop_assert!(
                st.regions <= regions + 1,
                "{}: {} regions after {}",
                what,
                st.regions,
                regions
            );
            if st.regions > regions {
                regions = st.regions;
                let want = if per_thread {
                    4
                } else {
                    planned += 1;
                    sizes[(planned - 1) % sizes.len()]
                };
                prop_assert_eq!(st.last_team, want, "{}", what);
            }
            Ok(())
        };
        rt.install(|| -> Result<(), TestCaseError> {
            for _ in 0..3 {
                prop_assert_eq!(s.split(v.par_iter()).sum::<i64>(), v.iter().sum::<i64>());
                ran("sum")?;
                prop_assert_eq!(
                    s.split(v.par_iter()).map(|&x| mat_of(x)).reduce(|| IDENTITY, mat_mul),
                    v.iter().map(|&x| mat_of(x)).fold(IDENTITY, mat_mul)
                );
                ran("reduce")?;
                prop_assert_eq!(
                    s.split(v.par_iter()).filter(|x| **x % 3 == 0).collect::<Vec<_>>(),
                    v.iter().filter(|x| **x % 3 == 0).collect::<Vec<_>>()
                );
                ran("filtered collect")?;
                prop_assert_eq!(
                    s.split(v.par_iter()).map(|x| x - 1).collect::<Vec<_>>(),
                    v.iter().map(|x| x - 1).collect::<Vec<_>>()
                );
                ran("collect")?;
                let mut w = v.clone();
                s.split(w.par_iter_mut()).for_each(|x| *x = -*x);
                prop_assert!(w.iter().zip(&v).all(|(a, b)| *a == -b));
                ran("par_iter_mut")?;
            }
            Ok(())
        })?;
        // Calls with more than one block ran as regions.
        prop_assert_eq!(regions, if blocks > 1 { 15 } else { 0 });
    }

    #[test]
    fn owned_items_are_dropped_once(
        n in 0usize..500,
        k in 0usize..600,
        step in 1usize..5,
        panic_at in 0usize..500,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let (v, drops) = tracked(n);
            prop_assert_eq!(
                s.split(v.into_par_iter()).map(|t| t.id).collect::<Vec<_>>(),
                (0..n).collect::<Vec<_>>()
            );
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            let (v, drops) = tracked(n);
            let ids = s.split(v.into_par_iter()).collect::<Vec<_>>();
            prop_assert!(ids.iter().map(|t| t.id).eq(0..n));
            prop_assert!(drops.iter().all(|d| d.load(Ordering::SeqCst) == 0));
            drop(ids);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            let (v, drops) = tracked(n);
            drop(s.split(v.into_par_iter()));
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            let (v, drops) = tracked(n);
            let seen = AtomicUsize::new(0);
            s.split(v.into_par_iter()).take(k).for_each(|t| {
                assert!(t.id < k);
                seen.fetch_add(1, Ordering::Relaxed);
            });
            prop_assert_eq!(seen.load(Ordering::Relaxed), n.min(k));
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            let (v, drops) = tracked(n);
            prop_assert_eq!(
                s.split(v.into_par_iter()).skip(k).step_by(step).map(|t| t.id).collect::<Vec<_>>(),
                (0..n).skip(k).step_by(step).collect::<Vec<_>>()
            );
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            // zipped with a shorter iterator, and two owning sources of different lengths
            let (v, drops) = tracked(n);
            prop_assert_eq!(
                s.split(v.into_par_iter()).zip(0..k).filter(|(t, j)| t.id == *j).count(),
                n.min(k)
            );
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            let (v, drops) = tracked(n);
            let (w, wdrops) = tracked(k);
            prop_assert_eq!(
                (s.split(v.into_par_iter()), w)
                    .into_par_iter()
                    .map(|(a, b)| a.id + b.id)
                    .sum::<usize>(),
                (0..n.min(k)).map(|i| 2 * i).sum::<usize>()
            );
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            prop_assert_eq!(not_dropped_once(&wdrops), vec![]);

            // a panicking closure
            let (v, drops) = tracked(n);
            let r = catch_unwind(AssertUnwindSafe(|| {
                s.split(v.into_par_iter()).for_each(|t| assert!(t.id != panic_at, "boom"));
            }));
            prop_assert_eq!(r.is_err(), panic_at < n);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            let (v, drops) = tracked(n);
            let r = catch_unwind(AssertUnwindSafe(|| {
                s.split(v.into_par_iter())
                    .filter(|t| {
                        assert!(t.id != panic_at, "boom");
                        t.id % 2 == 0
                    })
                    .collect::<Vec<_>>()
            }));
            prop_assert_eq!(r.is_err(), panic_at < n);
            drop(r);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            // A panic while an indexed collect has written some of the items in place: none
            // is dropped twice. (That each is dropped once is `collect_panic_drops_written_items`.)
            let (v, drops) = tracked(n);
            let r = catch_unwind(AssertUnwindSafe(|| {
                s.split(v.into_par_iter())
                    .map(|t| {
                        assert!(t.id != panic_at, "boom");
                        t
                    })
                    .collect::<Vec<_>>()
            }));
            prop_assert_eq!(r.is_err(), panic_at < n);
            drop(r);
            let wrong = not_dropped_once(&drops);
            prop_assert!(wrong.iter().all(|&(_, d)| d == 0), "{:?}", wrong);
            Ok(())
        })?;
    }

    #[test]
    fn panics_reach_the_caller(
        n in 1usize..2000,
        at in any::<prop::sample::Index>(),
        s in setup(),
    ) {
        let at = at.index(n);
        let boom = |i: usize| {
            if i == at {
                panic!("boom at {i}");
            }
        };
        let expect_boom = |r: std::thread::Result<()>| -> Result<(), TestCaseError> {
            let p = r.err().ok_or_else(|| TestCaseError::fail("the panic was lost"))?;
            prop_assert_eq!(message(&*p), format!("boom at {at}"));
            Ok(())
        };
        s.run(|| -> Result<(), TestCaseError> {
            let items = || s.split((0..n).into_par_iter());
            let all: Vec<usize> = (0..n).collect();
            let concat = |mut a: Vec<usize>, b: Vec<usize>| {
                if let Some(&i) = b.first() {
                    boom(i);
                }
                a.extend(b);
                a
            };
            expect_boom(catch_unwind(AssertUnwindSafe(|| items().for_each(boom))))?;
            prop_assert_eq!(items().sum::<usize>(), all.iter().sum::<usize>());
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items()
                    .map(|i| {
                        boom(i);
                        i
                    })
                    .sum::<usize>();
            })))?;
            prop_assert_eq!(&items().collect::<Vec<_>>(), &all);
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items().map(|i| vec![i]).reduce(Vec::new, concat);
            })))?;
            prop_assert_eq!(
                items().map(|i| vec![i]).reduce_with(|mut a, b| {
                    a.extend(b);
                    a
                }),
                Some(all.clone())
            );
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items()
                    .map(|i| {
                        boom(i);
                        i.to_string()
                    })
                    .collect::<Vec<_>>();
            })))?;
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items()
                    .filter(|&i| {
                        boom(i);
                        i % 2 == 0
                    })
                    .collect::<Vec<_>>();
            })))?;
            prop_assert_eq!(
                items().filter(|i| i % 2 == 0).collect::<Vec<_>>(),
                (0..n).filter(|i| i % 2 == 0).collect::<Vec<_>>()
            );
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items().find_first(|&i| {
                    boom(i);
                    false
                });
            })))?;
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items().max_by_key(|&i| {
                    boom(i);
                    i
                });
            })))?;
            prop_assert_eq!(items().max_by_key(|&i| i % 5), (0..n).max_by_key(|&i| i % 5));
            Ok(())
        })?;
    }
}

/// One runtime used by many threads at once, each installing it: calls are regions of it,
/// serialized, and each gets its own result.
#[test]
fn one_runtime_many_callers() {
    for i in 0..RUNTIMES {
        let rt = runtime(i);
        let total = AtomicU64::new(0);
        std::thread::scope(|scope| {
            for t in 0..3u64 {
                let total = &total;
                scope.spawn(move || {
                    rt.install(|| {
                        for _ in 0..20 {
                            let s: u64 = (0..1000u64).into_par_iter().map(|x| x * t).sum();
                            assert_eq!(s, 499_500 * t);
                            total.fetch_add(s, Ordering::Relaxed);
                        }
                    });
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 20 * 499_500 * 3);
    }
}

/// A panic in an indexed `collect` into a `Vec`: the items written in place before it are
/// dropped, as rayon's collect drops them (none leaks).
#[test]
fn collect_panic_drops_written_items() {
    for i in 0..RUNTIMES {
        let (v, drops) = tracked(100);
        let r = catch_unwind(AssertUnwindSafe(|| {
            runtime(i).install(|| {
                v.into_par_iter()
                    .map(|t| {
                        assert!(t.id != 99, "boom");
                        t
                    })
                    .collect::<Vec<_>>()
            })
        }));
        assert!(r.is_err());
        assert_eq!(not_dropped_once(&drops), vec![], "runtime {i}");
    }
}

/// A panic in one piece of a call whose pieces are dealt (`with_max_len`) leaves every other
/// piece to run, as rayon's calls do (its `iter_panic_fuse` test), and reaches the caller once
/// they have; after `panic_fuse` (one thread) only those before it run. Also for a call made
/// inside a region (whose one member takes the pieces in order) and for a reduction.
#[test]
fn a_panic_in_one_piece_leaves_the_others_to_run() {
    const N: usize = 4096;
    const AT: usize = 3000;
    let boom = |&i: &usize| assert!(i != AT, "boom at {i}");
    let items = || (0..N).into_par_iter().with_max_len(1).inspect(boom);
    let count = |call: &(dyn Fn(&AtomicUsize) + Sync)| {
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| call(&ran)));
        let p = r.expect_err("the panic was lost");
        assert_eq!(message(&*p), format!("boom at {AT}"));
        ran.into_inner()
    };
    let each = |ran: &AtomicUsize| {
        items().for_each(|_| _ = ran.fetch_add(1, Ordering::Relaxed));
    };
    for (i, rt) in (0..RUNTIMES).map(|i| (i, runtime(i))) {
        rt.install(|| {
            assert_eq!(count(&each), N - 1, "for_each, runtime {i}");
            let sum = |ran: &AtomicUsize| {
                items()
                    .map(|i| ran.fetch_add(1, Ordering::Relaxed) + i)
                    .sum::<usize>();
            };
            assert_eq!(count(&sum), N - 1, "sum, runtime {i}");
            let inside = |ran: &AtomicUsize| {
                (0..2).into_par_iter().for_each(|j| {
                    if j == 0 {
                        each(ran);
                    }
                })
            };
            assert_eq!(count(&inside), N - 1, "inside a region, runtime {i}");
            let fused = |ran: &AtomicUsize| {
                let fused = items().panic_fuse();
                fused.for_each(|_| _ = ran.fetch_add(1, Ordering::Relaxed));
            };
            // with one thread (as rayon's test has it) the pieces after the panicking one see
            // the fuse; with more, the member holding that piece may be preempted while the
            // others take every piece left
            let ran = count(&fused);
            assert!(
                i != 0 || ran == AT,
                "panic_fuse, runtime {i}: {ran} items ran"
            );
        });
        // the runtime is usable afterwards
        let fine = rt.install(|| {
            (0..N)
                .into_par_iter()
                .with_max_len(1)
                .filter(|&i| i < AT)
                .count()
        });
        assert_eq!(fine, AT);
    }
}

/// A call made inside a region keeps to `with_max_len`: its one member takes pieces of at
/// most that many items, as the team would (a `fold` sees them).
#[test]
fn a_call_inside_a_region_keeps_to_max_len() {
    for (i, rt) in (0..RUNTIMES).map(|i| (i, runtime(i))) {
        let pieces: Vec<Vec<usize>> = rt.install(|| {
            (0..2)
                .into_par_iter()
                .map(|_| {
                    let folds = (0..100)
                        .into_par_iter()
                        .with_max_len(10)
                        .fold(|| 0, |n, _| n + 1);
                    folds.collect()
                })
                .collect()
        });
        for p in pieces {
            assert_eq!(p.iter().sum::<usize>(), 100, "runtime {i}: {p:?}");
            assert!(
                p.iter().all(|&n| (1..=10).contains(&n)),
                "runtime {i}: {p:?}"
            );
        }
    }
}
