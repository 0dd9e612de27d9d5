//! Property tests of the parallel iterators' adapters and `for_each` forms: every supported
//! chain gives what the same chain gives on std's sequential iterators (`fold_chunks` what
//! folding std's `chunks` gives), for random lengths, splitting hints and team sizes.
//!
//! Runtimes are shared by the cases (built once, in `iter_support`: fixed teams of 1 to 4 and one
//! whose team size cycles), so that a case also checks that the calls before it left its runtime
//! clean.

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn adapters(
        v in values(-1000..1000),
        skip in 0usize..300,
        step in 1usize..9,
        take in 0usize..2000,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(v.par_iter()).map(|x| x * 3).filter(|x| x % 2 == 0).collect::<Vec<_>>(),
                v.iter().map(|x| x * 3).filter(|x| x % 2 == 0).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .filter_map(|x| (x % 3 == 0).then_some(x / 3))
                    .collect::<Vec<_>>(),
                v.iter().filter_map(|x| (x % 3 == 0).then_some(x / 3)).collect::<Vec<_>>()
            );
            let expand = |x: &i64| {
                let x = *x;
                (0..x.rem_euclid(4)).map(move |j| x * 10 + j)
            };
            prop_assert_eq!(
                s.split(v.par_iter()).flat_map_iter(expand).collect::<Vec<_>>(),
                v.iter().flat_map(expand).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().map(|(i, x)| i as i64 * x).collect::<Vec<_>>(),
                v.iter().enumerate().map(|(i, x)| i as i64 * x).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .skip(skip)
                    .step_by(step)
                    .take(take)
                    .enumerate()
                    .collect::<Vec<_>>(),
                v.iter().skip(skip).step_by(step).take(take).enumerate().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate().take(take).skip(skip))
                    .map(|(i, x)| (i, *x))
                    .collect::<Vec<_>>(),
                v.iter().copied().enumerate().take(take).skip(skip).collect::<Vec<_>>()
            );
            let seen = AtomicUsize::new(0);
            prop_assert_eq!(
                &s.split(v.par_iter())
                    .inspect(|_| {
                        seen.fetch_add(1, Ordering::Relaxed);
                    })
                    .copied()
                    .collect::<Vec<_>>(),
                &v
            );
            prop_assert_eq!(seen.load(Ordering::Relaxed), v.len());
            // a state serves a run of items in order
            let inits = AtomicUsize::new(0);
            let in_order = s.split(v.par_iter().enumerate())
                .map_init(
                    || {
                        inits.fetch_add(1, Ordering::Relaxed);
                        None
                    },
                    |last: &mut Option<usize>, (i, _)| {
                        let ok = last.is_none_or(|l| l < i);
                        *last = Some(i);
                        ok
                    },
                )
                .collect::<Vec<_>>();
            prop_assert!(in_order.iter().all(|&ok| ok));
            prop_assert!(inits.load(Ordering::Relaxed) <= v.len());
            prop_assert_eq!(
                s.split(v.par_iter()).map_with(7i64, |o, x| x + *o).collect::<Vec<_>>(),
                v.iter().map(|x| x + 7).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .map_init(Vec::new, |buf: &mut Vec<i64>, x| {
                        buf.clear();
                        buf.extend([*x, 1]);
                        buf.iter().sum::<i64>()
                    })
                    .collect::<Vec<_>>(),
                v.iter().map(|x| x + 1).collect::<Vec<_>>()
            );
            // hints after a non-indexed adapter: only the schedule can be set there
            if let Some(sch) = s.split.schedule {
                prop_assert_eq!(
                    v.par_iter()
                        .filter(|x| **x > 0)
                        .with_schedule(sch)
                        .copied()
                        .collect::<Vec<_>>(),
                    v.iter().filter(|x| **x > 0).copied().collect::<Vec<_>>()
                );
            }
            Ok(())
        })?;
    }

    /// As std's and rayon's, `skip` makes the skipped items (a `map` before it runs for them),
    /// in every call that reads from the start, each once; a clone makes them again.
    #[test]
    fn skip_makes_the_skipped_items(
        v in values(-1000..1000),
        skip in 0usize..300,
        take in 1usize..300,
        s in setup(),
    ) {
        let made: Vec<AtomicUsize> = v.iter().map(|_| AtomicUsize::new(0)).collect();
        let make = |(i, x): (usize, &i64)| {
            made[i].fetch_add(1, Ordering::Relaxed);
            *x
        };
        // how many times each item was made since the last look
        let times = || made.iter().map(|m| m.swap(0, Ordering::Relaxed)).collect::<Vec<_>>();
        let kept = v.len().saturating_sub(skip);
        // a skip past the end asks for no range, so makes nothing
        let all = vec![usize::from(kept > 0); v.len()];
        let it = || s.split(v.par_iter().enumerate()).map(make).skip(skip);
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(it().count(), kept);
            prop_assert_eq!(times(), all.clone(), "count");
            prop_assert_eq!(it().collect::<Vec<_>>(), v.iter().copied().skip(skip).collect::<Vec<_>>());
            prop_assert_eq!(times(), all.clone(), "collect");
            let twice = it();
            prop_assert_eq!(twice.clone().rev().sum::<i64>(), twice.sum::<i64>());
            prop_assert_eq!(times(), all.iter().map(|m| 2 * m).collect::<Vec<_>>(), "a clone");
            let first: Vec<i64> = it().take(take).collect();
            prop_assert_eq!(&first, &v.iter().copied().skip(skip).take(take).collect::<Vec<_>>());
            let want: Vec<usize> =
                (0..v.len()).map(|i| usize::from(kept > 0 && i < skip + take)).collect();
            prop_assert_eq!(times(), want, "take after skip");
            Ok(())
        })?;
    }

    #[test]
    fn for_each_variants(n in len(), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            s.split((0..n).into_par_iter()).for_each(|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            s.split((0..n).into_par_iter()).for_each_init(
                || 10usize,
                |k, i| {
                    hits[i].fetch_add(*k, Ordering::Relaxed);
                },
            );
            s.split((0..n).into_par_iter()).for_each_with(100usize, |k, i| {
                hits[i].fetch_add(*k, Ordering::Relaxed);
            });
            let counts: Vec<usize> = hits.iter().map(|h| h.load(Ordering::Relaxed)).collect();
            prop_assert!(counts.iter().all(|&c| c == 111), "{:?}", counts);
            let (tx, rx) = mpsc::channel();
            s.split((0..n).into_par_iter()).for_each_with(tx, |tx, i| tx.send(i).unwrap());
            let mut got: Vec<usize> = rx.iter().collect();
            got.sort_unstable();
            prop_assert_eq!(got, (0..n).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn fold_chunks_folds_each_group_in_order(v in values(-1000..1000), size in 1usize..40, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let want: Vec<i64> = v.chunks(size).map(|c| c.iter().sum()).collect();
            prop_assert_eq!(
                s.split(v.par_iter().fold_chunks(size, || 0, |a, x| a + x)).collect::<Vec<_>>(),
                want.clone()
            );
            // a non-commutative fold: each group front to back; rev gives the groups back to front
            let want: Vec<Vec<i64>> = v.chunks(size).map(|c| c.to_vec()).collect();
            let got: Vec<Vec<i64>> = s
                .split(v.par_iter().fold_chunks_with(size, Vec::new(), |mut acc, &x| {
                    acc.push(x);
                    acc
                }))
                .rev()
                .collect();
            prop_assert_eq!(got, want.into_iter().rev().collect::<Vec<_>>());
            Ok(())
        })?;
    }
}
