//! Property tests of the fallible forms (`try_for_each` and its `_with`/`_init` forms,
//! `try_reduce`, `try_reduce_with`, `try_fold`, `try_fold_with`) on `Result` and `Option`
//! items: with no failure they give what std's sequential chains give and run every item once;
//! with failures they return the failure of lowest index among the items that ran (so the one
//! failure, when there is one), run no item twice, and stop a member's range at its failure. A
//! panic in a closure reaches the caller and the runtime stays usable.
//!
//! Runtimes are shared by the cases (built once, in `iter_support`: fixed teams of 1 to 4 and one
//! whose team size cycles).

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Failing indices: none, one, or a few anywhere.
fn failures(n: usize) -> BoxedStrategy<BTreeSet<usize>> {
    if n == 0 {
        return Just(BTreeSet::new()).boxed();
    }
    prop_oneof![
        Just(BTreeSet::new()),
        (0..n).prop_map(|i| BTreeSet::from([i])),
        proptest::collection::btree_set(0..n, 0..6),
    ]
    .boxed()
}

fn case() -> impl Strategy<Value = (Vec<i64>, BTreeSet<usize>)> {
    values(-1000..1000).prop_flat_map(|v| {
        let n = v.len();
        (Just(v), failures(n))
    })
}

/// Counters of how many times each index ran.
fn hits(n: usize) -> Vec<AtomicUsize> {
    (0..n).map(|_| AtomicUsize::new(0)).collect()
}

/// Checks a call's outcome: `Ok` only without failures (every index ran once); a failure is
/// the lowest failing index that ran; no index ran twice.
fn check(
    got: Result<(), usize>,
    bad: &BTreeSet<usize>,
    hits: &[AtomicUsize],
) -> Result<(), TestCaseError> {
    let ran: Vec<usize> = hits.iter().map(|h| h.load(Ordering::Relaxed)).collect();
    prop_assert!(ran.iter().all(|&r| r <= 1), "an index ran twice: {:?}", ran);
    match got {
        Ok(()) => {
            prop_assert!(bad.is_empty(), "Ok with failures {:?}", bad);
            prop_assert!(ran.iter().all(|&r| r == 1), "Ok, but not every index ran");
        }
        Err(i) => {
            let first_met = bad.iter().copied().find(|&b| ran[b] == 1);
            prop_assert_eq!(Some(i), first_met, "failures {:?}", bad);
            if bad.len() == 1 {
                prop_assert_eq!(Some(&i), bad.first());
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn try_for_each_returns_the_first_failure_met((v, bad) in case(), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let n = v.len();
            let h = hits(n);
            let got = s.split(v.par_iter().enumerate()).try_for_each(|(i, _)| {
                h[i].fetch_add(1, Ordering::Relaxed);
                if bad.contains(&i) { Err(i) } else { Ok(()) }
            });
            check(got, &bad, &h)?;
            // Option items, through `_with` and `_init` states
            let h = hits(n);
            let got: Option<()> = s.split(v.par_iter().enumerate()).try_for_each_with(7usize, |seven, (i, _)| {
                assert_eq!(*seven, 7);
                h[i].fetch_add(1, Ordering::Relaxed);
                (!bad.contains(&i)).then_some(())
            });
            // `None` does not say which item failed: the lowest failing one that ran must exist
            let got = got.ok_or_else(|| first_ran(&bad, &h));
            check(got, &bad, &h)?;
            let h = hits(n);
            let got = s.split(v.par_iter().enumerate()).try_for_each_init(Vec::<usize>::new, |seen, (i, _)| {
                seen.push(i);
                h[i].fetch_add(1, Ordering::Relaxed);
                if bad.contains(&i) { Err(i) } else { Ok(()) }
            });
            check(got, &bad, &h)?;
            // unindexed: the failures of the items a filter keeps
            let h = hits(n);
            let got = s.split(v.par_iter().enumerate())
                .filter(|(i, _)| i % 3 != 1)
                .try_for_each(|(i, _)| {
                    h[i].fetch_add(1, Ordering::Relaxed);
                    if bad.contains(&i) { Err(i) } else { Ok(()) }
                });
            let kept: BTreeSet<usize> = bad.iter().copied().filter(|i| i % 3 != 1).collect();
            for (i, h) in h.iter().enumerate() {
                if i % 3 == 1 {
                    h.fetch_add(1, Ordering::Relaxed); // never asked for: counted as run
                }
            }
            check(got, &kept, &h)?;
            Ok(())
        })?;
    }

    #[test]
    fn try_reduce_equals_std_without_failures((v, bad) in case(), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            // an associative, non-commutative operation
            let got = s.split(v.par_iter()).map(|&x| Ok::<_, ()>(mat_of(x)))
                .try_reduce(|| IDENTITY, |a, b| Ok(mat_mul(a, b)));
            prop_assert_eq!(got, Ok(v.iter().map(|&x| mat_of(x)).fold(IDENTITY, mat_mul)));
            let got = s.split(v.par_iter()).map(|&x| Some(mat_of(x)))
                .try_reduce_with(|a, b| Some(mat_mul(a, b)));
            prop_assert_eq!(got, v.iter().map(|&x| mat_of(x)).reduce(mat_mul).map(Some));
            // overflow of non-negative values: a failure however the sum is grouped
            let small: Vec<u16> = v.iter().map(|x| x.unsigned_abs() as u16 * 40).collect();
            let want = small.iter().try_fold(0u16, |a, &b| a.checked_add(b));
            let got = s.split(small.par_iter()).map(|&x| Some(x)).try_reduce(|| 0, u16::checked_add);
            prop_assert_eq!(got, want);
            // failing items
            let h = hits(v.len());
            let got = s.split(v.par_iter().enumerate())
                .map(|(i, &x)| {
                    h[i].fetch_add(1, Ordering::Relaxed);
                    if bad.contains(&i) { Err(i) } else { Ok(x) }
                })
                .try_reduce(|| 0, |a, b| Ok(a + b));
            check(got.map(|sum| {
                assert_eq!(sum, v.iter().sum::<i64>());
            }), &bad, &h)?;
            let h = hits(v.len());
            let got = s.split(v.par_iter().enumerate())
                .map(|(i, &x)| {
                    h[i].fetch_add(1, Ordering::Relaxed);
                    if bad.contains(&i) { Err(i) } else { Ok(x) }
                })
                .try_reduce_with(|a, b| Ok(a.max(b)));
            match got {
                None => prop_assert!(v.is_empty()),
                Some(r) => check(r.map(|m| assert_eq!(Some(m), v.iter().copied().max())), &bad, &h)?,
            }
            Ok(())
        })?;
    }

    #[test]
    fn try_fold_folds_each_range_until_its_failure((v, bad) in case(), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let step = |i: usize, acc: i64, x: i64| if bad.contains(&i) { Err(i) } else { Ok(acc + x) };
            let h = hits(v.len());
            let got = s.split(v.par_iter().enumerate())
                .try_fold(|| 0i64, |acc, (i, &x)| {
                    h[i].fetch_add(1, Ordering::Relaxed);
                    step(i, acc, x)
                })
                .try_reduce(|| 0, |a, b| Ok(a + b));
            check(got.map(|sum| assert_eq!(sum, v.iter().sum::<i64>())), &bad, &h)?;
            // without a reduction: one result per range, the failures among them those met
            let parts: Vec<Result<i64, usize>> = s.split(v.par_iter().enumerate())
                .try_fold_with(0i64, |acc, (i, &x)| step(i, acc, x))
                .collect();
            let errs: Vec<usize> = parts.iter().filter_map(|p| p.err()).collect();
            prop_assert!(errs.windows(2).all(|w| w[0] < w[1]), "failures out of order: {:?}", errs);
            prop_assert!(errs.iter().all(|e| bad.contains(e)));
            if bad.is_empty() {
                prop_assert_eq!(parts.iter().map(|p| p.unwrap()).sum::<i64>(), v.iter().sum::<i64>());
            } else {
                // the range holding the first failure fails with it
                prop_assert_eq!(errs.first(), bad.first());
            }
            // Option, on a filtered iterator
            let got = s.split(v.par_iter())
                .filter(|x| **x >= 0)
                .try_fold(|| 0u64, |acc, &x| acc.checked_add(x as u64))
                .try_reduce(|| 0, u64::checked_add);
            prop_assert_eq!(got, Some(v.iter().filter(|x| **x >= 0).map(|&x| x as u64).sum()));
            Ok(())
        })?;
    }
}

/// The lowest failing index that ran, for `check` (`usize::MAX` when none did).
fn first_ran(bad: &BTreeSet<usize>, hits: &[AtomicUsize]) -> usize {
    bad.iter()
        .copied()
        .find(|&b| hits[b].load(Ordering::Relaxed) == 1)
        .unwrap_or(usize::MAX)
}

/// A failure at index 0 stops member 0's range there: under the static split, member 0 holds at
/// least the first `n / 4` indices on teams of up to 4, and none of them after 0 runs.
#[test]
fn a_failure_stops_its_members_range() {
    let n = 4000;
    for rt in 0..RUNTIMES {
        runtime(rt).install(|| {
            let h = hits(n);
            let got = (0..n).into_par_iter().try_for_each(|i| {
                h[i].fetch_add(1, Ordering::Relaxed);
                if i == 0 {
                    Err("index 0")
                } else {
                    Ok(())
                }
            });
            assert_eq!(got, Err("index 0"));
            let ran: Vec<usize> = (1..n / 4)
                .filter(|&i| h[i].load(Ordering::Relaxed) != 0)
                .collect();
            assert_eq!(ran, Vec::<usize>::new(), "runtime {rt}");
            // the same through try_reduce on Option items
            let h = hits(n);
            let got = (0..n)
                .into_par_iter()
                .map(|i| {
                    h[i].fetch_add(1, Ordering::Relaxed);
                    (i != 0).then_some(i)
                })
                .try_reduce(|| 0, |a, b| Some(a + b));
            assert_eq!(got, None);
            assert!((1..n / 4).all(|i| h[i].load(Ordering::Relaxed) == 0));
            // a team of one stops at once
            let h = hits(n);
            let got = (0..n).into_par_iter().with_min_len(n).try_for_each(|i| {
                h[i].fetch_add(1, Ordering::Relaxed);
                if i == 10 {
                    Err(i)
                } else {
                    Ok(())
                }
            });
            assert_eq!(got, Err(10));
            assert_eq!(
                h.iter().map(|h| h.load(Ordering::Relaxed)).sum::<usize>(),
                11
            );
        });
    }
}

/// A panic in a fallible call's closure reaches the caller; the runtime stays usable.
#[test]
fn panics_in_try_closures_propagate() {
    for rt in 0..RUNTIMES {
        runtime(rt).install(|| {
            let r = catch_unwind(AssertUnwindSafe(|| {
                (0..1000u32).into_par_iter().try_for_each(|i| {
                    if i == 777 {
                        panic!("item 777");
                    }
                    Ok::<(), ()>(())
                })
            }));
            assert_eq!(message(&*r.unwrap_err()), "item 777");
            let r = catch_unwind(AssertUnwindSafe(|| {
                (0..1000u32).into_par_iter().map(Some).try_reduce(
                    || 0,
                    |a, b| {
                        if b == 999 {
                            panic!("op 999")
                        } else {
                            Some(a + b)
                        }
                    },
                )
            }));
            assert_eq!(message(&*r.unwrap_err()), "op 999");
            let r = catch_unwind(AssertUnwindSafe(|| {
                (0..1000u32)
                    .into_par_iter()
                    .try_fold(
                        || 0,
                        |a, b| {
                            if b == 3 {
                                panic!("fold 3")
                            } else {
                                Some(a + b)
                            }
                        },
                    )
                    .try_reduce(|| 0, |a, b| Some(a + b))
            }));
            assert_eq!(message(&*r.unwrap_err()), "fold 3");
            // still usable
            let sum = (0..1000u32)
                .into_par_iter()
                .map(Ok::<u32, ()>)
                .try_reduce(|| 0, |a, b| Ok(a + b));
            assert_eq!(sum, Ok(499_500), "runtime {rt}");
        });
    }
}
