//! Property tests of `by_uniform_blocks` and `by_exponential_blocks`: a call run in rounds
//! gives what std's sequential iterators give, for every kind of terminal call (those that
//! stop after the round with their answer and those that run every round), for random lengths,
//! block sizes, splitting hints and team sizes (including a team that changes from region to
//! region, so from round to round).

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;

/// Which rounds a case runs: uniform of the size, or exponential (`None`).
fn rounds() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![
        Just(None),
        (1usize..40).prop_map(Some),
        (1usize..3000).prop_map(Some)
    ]
}

/// Runs `$body` with `$it` bound to a closure that makes `$base` run in the case's rounds.
macro_rules! in_rounds {
    ($rounds:expr, |$it:ident| $base:expr => $body:expr) => {
        match $rounds {
            Some(n) => {
                let $it = || $base.by_uniform_blocks(n);
                $body
            }
            None => {
                let $it = || $base.by_exponential_blocks();
                $body
            }
        }
    };
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn searches(v in values(-50..50), target in -60i64..60, r in rounds(), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let is = |x: &i64| *x == target;
            in_rounds!(r, |it| s.split(v.par_iter().enumerate()) => {
                prop_assert_eq!(
                    it().find_first(|(_, x)| is(x)),
                    v.iter().enumerate().find(|(_, x)| is(x))
                );
                prop_assert_eq!(
                    it().find_last(|(_, x)| is(x)),
                    v.iter().enumerate().rfind(|(_, x)| is(x))
                );
                let any = it().find_any(|(_, x)| is(x));
                prop_assert_eq!(any.is_some(), v.contains(&target));
                prop_assert!(any.is_none_or(|(i, x)| v[i] == *x && is(x)));
                prop_assert_eq!(it().any(|(_, x)| is(x)), v.contains(&target));
                prop_assert_eq!(it().all(|(_, x)| !is(x)), !v.contains(&target));
                prop_assert_eq!(
                    it().find_map_first(|(i, x)| is(x).then_some(i)),
                    v.iter().position(is)
                );
                Ok(())
            })
        })?;
    }

    #[test]
    fn fallible_calls_return_the_first_failure_that_ran(
        v in values(-50..50),
        limit in -60i64..60,
        r in rounds(),
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let first_bad = v.iter().position(|x| *x > limit);
            in_rounds!(r, |it| s.split(v.par_iter().enumerate()) => {
                let got = it().try_for_each(|(i, x)| if *x > limit { Err(i) } else { Ok(()) });
                match first_bad {
                    None => prop_assert_eq!(got, Ok(())),
                    Some(first) => prop_assert!(
                        got.is_err_and(|i| i >= first && v[i] > limit),
                        "{:?} for a first failure at {}", got, first
                    ),
                }
                let sum = it()
                    .map(|(i, x)| if *x > limit { Err(i) } else { Ok(*x) })
                    .try_reduce(|| 0, |a, b| Ok(a + b));
                match first_bad {
                    None => prop_assert_eq!(sum, Ok(v.iter().sum::<i64>())),
                    Some(first) => prop_assert!(sum.is_err_and(|i| i >= first && v[i] > limit)),
                }
                Ok(())
            })
        })?;
    }

    #[test]
    fn calls_that_run_every_round(v in values(-1000..1000), r in rounds(), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            in_rounds!(r, |it| s.split(v.par_iter()) => {
                prop_assert_eq!(it().sum::<i64>(), v.iter().sum::<i64>());
                prop_assert_eq!(it().count(), v.len());
                prop_assert_eq!(it().max(), v.iter().max());
                prop_assert_eq!(it().min_by_key(|x| x.abs()), v.iter().min_by_key(|x| x.abs()));
                // an ordered, not commutative, reduction
                let joined = it()
                    .map(|x| vec![*x])
                    .reduce(Vec::new, |mut a, mut b| {
                        a.append(&mut b);
                        a
                    });
                prop_assert_eq!(&joined, &v);
                prop_assert_eq!(&it().copied().collect::<Vec<_>>(), &v);
                prop_assert_eq!(
                    it().filter(|x| *x % 3 == 0).copied().collect::<Vec<_>>(),
                    v.iter().filter(|x| *x % 3 == 0).copied().collect::<Vec<_>>()
                );
                Ok::<(), TestCaseError>(())
            })?;
            let mut w = vec![0i64; v.len()];
            let double = |(w, x): (&mut i64, &i64)| *w = 2 * x;
            match r {
                Some(n) => s.split(w.par_iter_mut().zip(&v)).by_uniform_blocks(n).for_each(double),
                None => s.split(w.par_iter_mut().zip(&v)).by_exponential_blocks().for_each(double),
            }
            prop_assert_eq!(w, v.iter().map(|x| 2 * x).collect::<Vec<_>>());
            Ok(())
        })?;
    }
}
