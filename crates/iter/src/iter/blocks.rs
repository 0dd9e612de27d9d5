//! `by_uniform_blocks` and `by_exponential_blocks`: a call run as a sequence of rounds.
//!
//! Normally a terminal call is one region over the whole index space. After
//! [`by_uniform_blocks(n)`](crate::IndexedParallelIterator::by_uniform_blocks) or
//! [`by_exponential_blocks()`](crate::IndexedParallelIterator::by_exponential_blocks) it runs
//! as a **sequence of rounds**, as rayon's blocks do: the first round is one region over the
//! first part of the index space, the next one over the part after it, and so on; each round's
//! part is split among the team as a whole call's would be (statically by default; see
//! [`drive`](crate::drive)). Uniform rounds have `n` indices each (the last one may be short);
//! exponential ones start with as many indices as the pool has threads
//! ([`current_num_threads`](crate::current_num_threads)) and double each round.
//!
//! The point is to stop early: after each round, a terminal call that has its answer runs no
//! more rounds. Those calls are `find_first` (and so `position_first`, `find_map_first`, the
//! orderings `cmp`, `partial_cmp`, `lt`, ...), `find_any`, `any`, `all` (and so `eq`, `ne`,
//! `position_any`, `find_map_any`) and the fallible `try_for_each`, `try_reduce`, `try_fold`
//! then `try_reduce` and their relatives, once an item has failed. A `find_first` whose answer
//! is at index `i` then looks at fewer than about `2i` items plus one round past the pool's
//! size (exponential rounds) where a single region would split the whole space among the team
//! and look at up to the whole share of every member before it. Other terminal calls give the
//! same results as without rounds; they just run more, smaller regions. Adapters after the
//! blocks (`take_any`, `while_some`, ...) see every round, and yield nothing in the rounds after
//! they are done.
//!
//! Each round is a region of its own, so the policy decides each round's team, and a round of
//! one block (of `with_min_len` indices) runs on the calling thread alone. Rounds never take the
//! one-member-per-item form that a whole call of exactly `current_num_threads()` items takes
//! (see [`drive`](crate::drive)): a round is a slice of a larger loop, not an SPMD region.
//!
//! ```
//! use asat_iter::prelude::*;
//!
//! // Looks at the first few hundred numbers, not at half a billion.
//! let first = (0..1_000_000_000u64)
//!     .into_par_iter()
//!     .by_exponential_blocks()
//!     .find_first(|&i| i * i > 50_000);
//! assert_eq!(first, Some(224));
//!
//! let v: Vec<u32> = (0..10_000).collect();
//! let sum: u64 = v.par_iter().by_uniform_blocks(1000).map(|&x| u64::from(x)).sum();
//! assert_eq!(sum, 49_995_000);
//! ```

use std::ops::Range;

use crate::internal::plumbing::{Hints, Producer, Rounds};
use crate::iter::indexed::Hinted;

/// The parts of `0..len` that the rounds of `rounds` run, in order, on a pool of `threads`.
pub(crate) fn rounds(
    rounds: Rounds,
    len: usize,
    threads: usize,
) -> impl Iterator<Item = Range<usize>> {
    let (mut size, grows) = match rounds {
        Rounds::Uniform(n) => (n.max(1), false),
        Rounds::Exponential => (threads.max(1), true),
    };
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= len {
            return None;
        }
        let end = start + size.min(len - start);
        let part = start..end;
        start = end;
        if grows {
            size = size.saturating_mul(2);
        }
        Some(part)
    })
}

/// A parallel iterator run in rounds of a fixed number of items (`by_uniform_blocks`); see the
/// [module docs](self). Its items are its base's, and it is indexed when its base is (rayon's
/// is never indexed: a program written for it needs nothing more).
pub type UniformBlocks<I> = Hinted<I>;

/// A parallel iterator run in rounds of doubling size (`by_exponential_blocks`); as
/// [`UniformBlocks`].
pub type ExponentialBlocks<I> = Hinted<I>;

/// `base` run in `rounds`.
pub(crate) fn in_rounds<I: Producer>(base: I, rounds: Rounds) -> Hinted<I> {
    let hints = Hints {
        rounds: Some(rounds),
        ..base.hints()
    };
    Hinted { base, hints }
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)] // lists of one round
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use super::*;
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    fn parts(r: Rounds, len: usize, threads: usize) -> Vec<Range<usize>> {
        rounds(r, len, threads).collect()
    }

    #[test]
    fn uniform_rounds_cover_the_space_in_order() {
        assert_eq!(parts(Rounds::Uniform(4), 10, 2), [0..4, 4..8, 8..10]);
        assert_eq!(parts(Rounds::Uniform(4), 8, 2), [0..4, 4..8]);
        assert_eq!(parts(Rounds::Uniform(100), 10, 2), [0..10]);
        assert!(parts(Rounds::Uniform(3), 0, 2).is_empty());
    }

    #[test]
    fn exponential_rounds_start_at_the_pool_and_double() {
        assert_eq!(
            parts(Rounds::Exponential, 20, 2),
            [0..2, 2..6, 6..14, 14..20]
        );
        assert_eq!(parts(Rounds::Exponential, 3, 8), [0..3]);
        assert_eq!(parts(Rounds::Exponential, 1, 0), [0..1]);
        // sizes saturate instead of overflowing
        let last = parts(Rounds::Exponential, usize::MAX, 1).pop();
        assert_eq!(last.map(|r| r.end), Some(usize::MAX));
    }

    #[test]
    fn results_are_those_without_blocks() {
        on_every_team(|k| {
            for n in [0usize, 1, 2, 7, 100, 1001] {
                let v: Vec<u64> = (0..n as u64).collect();
                let want: Vec<u64> = v.iter().map(|x| x * 3).collect();
                let got: Vec<u64> = v
                    .par_iter()
                    .by_exponential_blocks()
                    .map(|x| x * 3)
                    .collect();
                assert_eq!(got, want, "team {k}, {n} items");
                for size in [1, 3, 64] {
                    let got: Vec<u64> = v
                        .par_iter()
                        .by_uniform_blocks(size)
                        .map(|x| x * 3)
                        .collect();
                    assert_eq!(got, want, "team {k}, {n} items, blocks of {size}");
                    let odd: Vec<u64> = v
                        .par_iter()
                        .by_uniform_blocks(size)
                        .filter(|&&x| x % 2 == 1)
                        .copied()
                        .collect();
                    assert_eq!(
                        odd,
                        v.iter().copied().filter(|x| x % 2 == 1).collect::<Vec<_>>()
                    );
                }
                let sum: u64 = v.par_iter().by_exponential_blocks().sum();
                assert_eq!(sum, v.iter().sum::<u64>());
                let mut w = vec![0u64; n];
                w.par_iter_mut()
                    .zip(&v)
                    .by_uniform_blocks(5)
                    .for_each(|(w, v)| *w = v + 1);
                assert!(w.iter().zip(&v).all(|(w, v)| *w == v + 1));
            }
        });
    }

    /// Each round is one region: the items of a round run before any of the next round's.
    #[test]
    fn rounds_run_one_after_another() {
        on_every_team(|k| {
            let order = Mutex::new(Vec::new());
            (0..100usize)
                .into_par_iter()
                .by_uniform_blocks(10)
                .for_each(|i| {
                    order.lock().unwrap().push(i);
                });
            let order = order.into_inner().unwrap();
            let rounds: Vec<usize> = order.iter().map(|i| i / 10).collect();
            assert!(
                rounds.windows(2).all(|w| w[0] <= w[1]),
                "team {k}: {order:?}"
            );
            assert_eq!(order.len(), 100);
        });
    }

    /// The searches stop after the round that has their answer: the items looked at are those
    /// of the rounds up to it, never the rest.
    #[test]
    fn searches_stop_after_the_round_with_the_answer() {
        on_every_team(|k| {
            let seen = AtomicUsize::new(0);
            let look = |i: &usize| {
                seen.fetch_add(1, Ordering::Relaxed);
                *i >= 25
            };
            let it = || (0..10_000usize).into_par_iter().by_uniform_blocks(10);
            assert_eq!(it().find_first(|i| look(i)), Some(25), "team {k}");
            assert!(seen.swap(0, Ordering::Relaxed) <= 30, "team {k}");
            let hit = it().find_map_first(|i| look(&i).then_some(i * 2));
            assert_eq!(hit, Some(50));
            assert!(seen.swap(0, Ordering::Relaxed) <= 30);
            assert!(it().find_any(|i| look(i)).is_some_and(|i| i >= 25));
            assert!(seen.swap(0, Ordering::Relaxed) <= 30);
            assert!(it().any(|i| look(&i)));
            assert!(seen.swap(0, Ordering::Relaxed) <= 30);
            assert!(!it().all(|i| !look(&i)));
            assert!(seen.swap(0, Ordering::Relaxed) <= 30);
            let r = it().try_for_each(|i| if look(&i) { Err(i) } else { Ok(()) });
            assert!(r.is_err_and(|i| (25..30).contains(&i)), "team {k}: {r:?}");
            assert!(seen.swap(0, Ordering::Relaxed) <= 30);
            // exponential rounds of a pool of t threads: t, 2t, 4t, ...; the answer at 25 is in
            // a round that ends before 2 * (25 + t)
            let t = crate::current_num_threads();
            let hit = (0..10_000usize)
                .into_par_iter()
                .by_exponential_blocks()
                .find_first(|i| look(i));
            assert_eq!(hit, Some(25));
            assert!(seen.load(Ordering::Relaxed) < 2 * (25 + t), "team {k}");
        });
    }

    #[test]
    fn searches_without_an_answer_look_at_everything() {
        on_every_team(|_| {
            let it = || (0..1000u32).into_par_iter().by_exponential_blocks();
            assert_eq!(it().find_first(|&i| i > 5000), None);
            assert_eq!(it().find_any(|&i| i > 5000), None);
            assert!(it().all(|i| i < 1000));
            assert_eq!(it().count(), 1000);
            assert_eq!(it().max(), Some(999));
        });
    }

    #[test]
    fn a_panic_in_a_round_reaches_the_caller_and_later_rounds_do_not_run() {
        on_every_team(|k| {
            let after = AtomicUsize::new(0);
            let r = std::panic::catch_unwind(|| {
                (0..1000usize)
                    .into_par_iter()
                    .by_uniform_blocks(100)
                    .for_each(|i| {
                        if i == 150 {
                            panic!("item 150");
                        }
                        if i >= 200 {
                            after.fetch_add(1, Ordering::Relaxed);
                        }
                    })
            });
            assert!(r.is_err(), "team {k}");
            assert_eq!(after.load(Ordering::Relaxed), 0, "team {k}");
            // usable afterwards
            assert_eq!(
                (0..10u32).into_par_iter().by_uniform_blocks(3).sum::<u32>(),
                45
            );
        });
    }
}
