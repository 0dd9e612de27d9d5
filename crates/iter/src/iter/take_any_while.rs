//! `take_any_while` and `skip_any_while` (rayon's): like [`take_any`](crate::take_any)'s
//! adapters, they stop or skip by what the whole call has seen, through a flag shared by the
//! members, kept in the adapter (which one terminal call drives). Items keep their relative
//! order in `collect` and `reduce`, as in rayon: each range yields its items in order and
//! ranges are combined in order.
//!
//! - `take_any_while(pred)` shares a flag, set until a member meets an item `pred` rejects.
//!   Each member reads the flag before it makes each item, and ends its range once the flag
//!   is clear; it yields each item it makes that `pred` accepts, and at the first one `pred`
//!   rejects it clears the flag and ends its range. So every item yielded is one `pred`
//!   accepted, each range yields a run of its first items, and a member makes no item after
//!   it has seen the flag clear. Which items come out depends on timing, as in rayon: items
//!   other members were making when the flag was cleared can still be taken (a `true` from
//!   `pred` takes its item, a `false` stops the items not yet made), and the accepted items
//!   before the first rejected one in order need not all come out (another member may meet a
//!   rejected item of its own first). On a team of one (also a call with a single block, or
//!   one made inside another call) it is std's `take_while`.
//! - `skip_any_while(pred)` shares a flag too, set until a member meets an item `pred`
//!   rejects. While its member sees the flag set, each item goes to `pred`: dropped if
//!   accepted; if rejected, yielded, and the flag is cleared. Once a member has met a rejected
//!   item or seen the flag clear, it yields the rest of its range without calling `pred`. So
//!   every item `pred` rejects is yielded, and every item dropped is one `pred` accepted
//!   (which of those are dropped depends on timing, as in rayon). On a team of one it is
//!   std's `skip_while`.

use std::fmt::Debug;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{seq_under, Hints, Producer, Stop};

/// Items from anywhere in the iterator until `pred` rejects one (`take_any_while`); see the
/// [module docs](self).
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct TakeAnyWhile<I, P> {
    base: I,
    pred: P,
    taking: AtomicBool,
}

/// The items less those from anywhere in the iterator that `pred` accepts until it rejects
/// one (`skip_any_while`); see the [module docs](self).
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct SkipAnyWhile<I, P> {
    base: I,
    pred: P,
    skipping: AtomicBool,
}

debug_fields!(impl[I: Debug, P] TakeAnyWhile<I, P> { base });
debug_fields!(impl[I: Debug, P] SkipAnyWhile<I, P> { base });

// A clone starts with a fresh flag: a terminal call takes the adapter by value, so until one
// runs the flag is as `new` set it.
impl<I: Clone, P: Clone> Clone for TakeAnyWhile<I, P> {
    fn clone(&self) -> Self {
        Self::new(self.base.clone(), self.pred.clone())
    }
}

impl<I: Clone, P: Clone> Clone for SkipAnyWhile<I, P> {
    fn clone(&self) -> Self {
        Self::new(self.base.clone(), self.pred.clone())
    }
}

impl<I, P> TakeAnyWhile<I, P> {
    pub(crate) fn new(base: I, pred: P) -> Self {
        Self {
            base,
            pred,
            taking: AtomicBool::new(true),
        }
    }
}

impl<I, P> SkipAnyWhile<I, P> {
    pub(crate) fn new(base: I, pred: P) -> Self {
        Self {
            base,
            pred,
            skipping: AtomicBool::new(true),
        }
    }
}

impl<I, P> Producer for TakeAnyWhile<I, P>
where
    I: Producer,
    P: Fn(&I::Item) -> bool + Send + Sync,
{
    type Item = I::Item;
    type Seq<'a>
        = TakeAnyWhileSeq<'a, I::Seq<'a>, P>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        TakeAnyWhileSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { self.base.seq(range) },
            pred: &self.pred,
            taking: &self.taking,
        }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        TakeAnyWhileSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { self.base.seq_until(range, stop) },
            pred: &self.pred,
            taking: &self.taking,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

/// The sequential side of [`TakeAnyWhile`].
pub struct TakeAnyWhileSeq<'a, J, P> {
    items: J,
    pred: &'a P,
    taking: &'a AtomicBool,
}

debug_fields!(impl['a, J: Debug, P] TakeAnyWhileSeq<'a, J, P> { items, taking });

impl<J: Iterator, P: Fn(&J::Item) -> bool> Iterator for TakeAnyWhileSeq<'_, J, P> {
    type Item = J::Item;

    #[inline]
    fn next(&mut self) -> Option<J::Item> {
        // Read before the item is made: once the flag is clear, no member makes another.
        if !self.taking.load(Ordering::Relaxed) {
            return None;
        }
        let item = self.items.next()?;
        if (self.pred)(&item) {
            return Some(item);
        }
        self.taking.store(false, Ordering::Relaxed);
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.items.size_hint().1)
    }
}

impl<I, P> Producer for SkipAnyWhile<I, P>
where
    I: Producer,
    P: Fn(&I::Item) -> bool + Send + Sync,
{
    type Item = I::Item;
    type Seq<'a>
        = SkipAnyWhileSeq<'a, I::Seq<'a>, P>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller keeps `seq`'s rule.
        unsafe { self.read(range, None) }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        // SAFETY: the caller keeps `seq`'s rule.
        unsafe { self.read(range, Some(stop)) }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: Producer, P> SkipAnyWhile<I, P> {
    /// The items of `range`, under `stop` when a call may end early (passed to the base, and
    /// asked before each item skipped).
    ///
    /// # Safety
    ///
    /// As for [`Producer::seq`].
    #[inline]
    unsafe fn read<'a>(
        &'a self,
        range: Range<usize>,
        stop: Option<Stop<'a>>,
    ) -> SkipAnyWhileSeq<'a, I::Seq<'a>, P> {
        SkipAnyWhileSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { seq_under(&self.base, range, stop) },
            pred: &self.pred,
            skipping: &self.skipping,
            passing: false,
            stop,
        }
    }
}

/// The sequential side of [`SkipAnyWhile`].
pub struct SkipAnyWhileSeq<'a, J, P> {
    items: J,
    pred: &'a P,
    skipping: &'a AtomicBool,
    /// This range met a rejected item or saw the flag clear: the rest passes.
    passing: bool,
    /// The call's stop, asked before each item skipped.
    stop: Option<Stop<'a>>,
}

debug_fields!(impl['a, J: Debug, P] SkipAnyWhileSeq<'a, J, P> { items, skipping, passing });

impl<J: Iterator, P: Fn(&J::Item) -> bool> Iterator for SkipAnyWhileSeq<'_, J, P> {
    type Item = J::Item;

    #[inline]
    fn next(&mut self) -> Option<J::Item> {
        loop {
            let item = self.items.next()?;
            if !self.passing {
                if self.skipping.load(Ordering::Relaxed) {
                    if (self.pred)(&item) {
                        if self.stop.is_some_and(Stop::now) {
                            return None;
                        }
                        continue;
                    }
                    self.skipping.store(false, Ordering::Relaxed);
                }
                self.passing = true;
            }
            return Some(item);
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (lo, hi) = self.items.size_hint();
        (if self.passing { lo } else { 0 }, hi)
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use crate::internal::testing::{on_every_team, team_of};
    use crate::prelude::*;

    /// Whether each run is consecutive integers.
    fn runs(parts: &[Vec<u32>]) -> bool {
        parts.iter().all(|p| p.windows(2).all(|w| w[1] == w[0] + 1))
    }

    #[test]
    fn on_a_team_of_one_they_are_std_take_while_and_skip_while() {
        team_of(1).install(|| {
            let preds: [fn(&u32) -> bool; 4] =
                [|&x| x < 300, |&x| x % 97 != 96, |_| true, |_| false];
            for pred in preds {
                let want: Vec<u32> = (0..1000).take_while(pred).collect();
                let got: Vec<u32> = (0..1000u32).into_par_iter().take_any_while(pred).collect();
                assert_eq!(got, want);
                let want: Vec<u32> = (0..1000).skip_while(pred).collect();
                let got: Vec<u32> = (0..1000u32).into_par_iter().skip_any_while(pred).collect();
                assert_eq!(got, want);
                // unindexed, in dynamic pieces
                let odd = |x: &u32| x % 2 == 1;
                let want: Vec<u32> = (0..1000).filter(odd).take_while(pred).collect();
                let got: Vec<u32> = (0..1000u32)
                    .into_par_iter()
                    .with_max_len(7)
                    .filter(odd)
                    .take_any_while(pred)
                    .collect();
                assert_eq!(got, want);
                let want: Vec<u32> = (0..1000).filter(odd).skip_while(pred).collect();
                let got: Vec<u32> = (0..1000u32)
                    .into_par_iter()
                    .with_max_len(7)
                    .filter(odd)
                    .skip_any_while(pred)
                    .collect();
                assert_eq!(got, want);
            }
        });
    }

    #[test]
    fn each_range_takes_a_run_of_accepted_items_and_skips_a_run_of_them() {
        on_every_team(|k| {
            for max_len in [0, 1, 13] {
                let it = || (0..2000u32).into_par_iter().with_max_len(max_len);
                let pred = |x: &u32| x % 250 != 249;
                let each = |v: Vec<u32>, x| [v, vec![x]].concat();
                let took: Vec<Vec<u32>> = it().take_any_while(pred).fold(Vec::new, each).collect();
                assert!(runs(&took), "team of {k}: {took:?}");
                let took: Vec<u32> = took.concat();
                assert!(took.iter().all(pred), "team of {k}");
                assert!(took.windows(2).all(|w| w[0] < w[1]), "team of {k}");
                // each range's dropped items come first: what it yields is a run to its end
                let kept: Vec<Vec<u32>> = it().skip_any_while(pred).fold(Vec::new, each).collect();
                assert!(runs(&kept), "team of {k}: {kept:?}");
                let kept: Vec<u32> = kept.concat();
                assert!(kept.windows(2).all(|w| w[0] < w[1]), "team of {k}");
                let rejected: Vec<u32> = (0..2000).filter(|x| !pred(x)).collect();
                assert!(rejected.iter().all(|x| kept.contains(x)), "team of {k}");
                // with nothing rejected, everything is taken and everything skipped
                assert_eq!(it().take_any_while(|_| true).count(), 2000, "team of {k}");
                assert_eq!(it().skip_any_while(|_| true).count(), 0, "team of {k}");
                assert_eq!(it().take_any_while(|_| false).count(), 0, "team of {k}");
                assert_eq!(it().skip_any_while(|_| false).count(), 2000, "team of {k}");
            }
        });
    }

    /// Runs `(0..100).into_par_iter()` through `take_any_while` (`take`) or `skip_any_while`
    /// (statically split, one range per member) with a predicate that rejects every item of
    /// member 0 and, on the other members, accepts an item once member 0 has ended its range
    /// (so after its store to the shared flag). Returns each member's items. Only members 1..
    /// wait, on member 0, which every call has: no member waits on one that may not exist.
    fn after_member_0_rejects(take: bool) -> Vec<Vec<u32>> {
        let member_0_done = AtomicBool::new(false);
        let pred = |_: &u32| {
            if crate::current_thread_index() == Some(0) {
                return false;
            }
            while !member_0_done.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            true
        };
        let push = |v: Vec<u32>, x| [v, vec![x]].concat();
        let signal = |v| {
            // Member 0's range (and its store to the shared flag) is over by now.
            if crate::current_thread_index() == Some(0) {
                member_0_done.store(true, Ordering::Release);
            }
            v
        };
        let it = (0..100u32).into_par_iter();
        if take {
            let it = it.take_any_while(&pred);
            it.fold(Vec::new, &push).map(&signal).collect()
        } else {
            let it = it.skip_any_while(&pred);
            it.fold(Vec::new, &push).map(&signal).collect()
        }
    }

    #[test]
    fn a_rejected_item_stops_the_other_members_items() {
        on_every_team(|k| {
            let parts = after_member_0_rejects(true);
            // Member 0 takes nothing. Each other member takes at most the item it was deciding
            // when member 0 rejected (none if it saw the flag clear first), and then makes no
            // more: without the shared flag it would take its whole range.
            assert_eq!(parts[0], Vec::<u32>::new(), "team of {k}");
            assert!(parts.len() <= k, "team of {k}");
            assert!(
                parts[1..].iter().all(|p| p.len() <= 1),
                "team of {k}: {parts:?}"
            );
        });
    }

    #[test]
    fn a_rejected_item_lets_the_other_members_items_pass() {
        on_every_team(|k| {
            let parts = after_member_0_rejects(false);
            // Member 0 keeps its whole range. Each other member drops at most the item it was
            // deciding when member 0 rejected, and yields the rest without asking: without the
            // shared flag it would drop its whole range.
            assert!(parts.len() <= k, "team of {k}");
            assert_eq!(parts[0].first(), Some(&0), "team of {k}");
            assert!(runs(&parts), "team of {k}");
            let kept = parts.concat();
            assert!(kept.len() >= 100 - (k - 1), "team of {k}: {parts:?}");
            assert!(kept.windows(2).all(|w| w[0] < w[1]), "team of {k}");
            assert_eq!(kept.last(), Some(&99), "team of {k}");
        });
    }

    #[test]
    fn a_panicking_predicate_reaches_the_caller() {
        on_every_team(|k| {
            let calls = AtomicUsize::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                (0..100u32)
                    .into_par_iter()
                    .take_any_while(|&x| {
                        calls.fetch_add(1, Ordering::Relaxed);
                        assert!(x != 60, "rejects 60 loudly");
                        true
                    })
                    .count()
            }));
            let e = r.expect_err("the panic reaches the caller");
            assert_eq!(
                e.downcast_ref::<&str>(),
                Some(&"rejects 60 loudly"),
                "team of {k}"
            );
            assert!(calls.load(Ordering::Relaxed) >= 1);
            let r = catch_unwind(AssertUnwindSafe(|| {
                (0..100u32)
                    .into_par_iter()
                    .skip_any_while(|&x| x < 60 || panic!("skip {x}"))
                    .count()
            }));
            assert!(r.is_err(), "team of {k}");
            // the runtime is usable afterwards
            let v: Vec<u32> = (0..100u32)
                .into_par_iter()
                .skip_any_while(|&x| x < 60)
                .collect();
            assert!(v.len() >= 40 && v.ends_with(&[98, 99]), "team of {k}");
        });
    }
}
