//! `take` and `skip`: a [`Slice`] of the items, whose skipped items are made and dropped as
//! rayon's and std's are.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::IndexedParallelIterator;

/// rayon's name for what `take` returns: a [`Slice`] of the first items.
pub type Take<I> = Slice<I>;

/// rayon's name for what `skip` returns: a [`Slice`] past the first items.
pub type Skip<I> = Slice<I>;

/// The items from index `skip` on, at most `take` of them (`skip`, `take`).
///
/// The skipped items are made and dropped, as rayon's and std's `skip` make them, so that the
/// closures of a `map` (or `inspect`) before it run for them too (unless making them runs
/// none of the program's code: [`Producer::PURE`], as for a slice's or a range's items). They
/// go out with the items that stay: each range of this slice asked for first takes its share
/// of them (in proportion to its length) from a shared counter and drops it, so they are made
/// in parallel; the range at index 0 then goes on taking shares until none is left, so they
/// have all been made once the first item after them has been asked for (by `take` after
/// `skip`, by any call that reads from the start). A call that never asks for index 0 (a search from the end that
/// stops early, `rev().take(n)`) may leave some unmade, and a `skip` past the end makes none
/// (no range is asked for), where rayon makes every skipped item before the others.
#[derive(Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Slice<I> {
    pub(crate) base: I,
    pub(crate) skip: usize,
    pub(crate) take: usize,
    /// How many skipped items have been taken to be made (see above).
    pub(crate) skipped: AtomicUsize,
}

impl<I> Slice<I> {
    pub(crate) fn new(base: I, skip: usize, take: usize) -> Slice<I> {
        Slice {
            base,
            skip,
            take,
            skipped: AtomicUsize::new(0),
        }
    }
}

/// A clone starts afresh: none of its skipped items made yet.
impl<I: Clone> Clone for Slice<I> {
    fn clone(&self) -> Self {
        Slice::new(self.base.clone(), self.skip, self.take)
    }
}

impl<I: IndexedParallelIterator> Slice<I> {
    /// Makes and drops this range's share of the skipped items, and for the range at index 0
    /// every share left (see [`Slice`]).
    ///
    /// # Safety
    ///
    /// As for [`Producer::seq`]: `range` is disjoint from every range asked for before.
    #[cold]
    #[inline(never)]
    unsafe fn make_skipped(&self, range: &Range<usize>) {
        let (len, skipped) = (self.base_len(), self.skip.min(self.base.base_len()));
        if len == 0 || range.is_empty() {
            return;
        }
        let share = (range.len() as u128 * skipped as u128).div_ceil(len as u128) as usize;
        let share = share.max(1);
        while let Ok(at) = self
            .skipped
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |at| {
                (at < skipped).then(|| at + share.min(skipped - at))
            })
        {
            let part = at..at + share.min(skipped - at);
            // SAFETY: the counter hands out each index below `skipped` once, and the ranges
            // the caller asks for are shifted past `skip`, so none overlaps another.
            unsafe { self.base.seq(part) }.for_each(drop);
            if range.start != 0 {
                break;
            }
        }
    }
}

impl<I: IndexedParallelIterator> Producer for Slice<I> {
    type Item = I::Item;
    type Seq<'a>
        = I::Seq<'a>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base
            .base_len()
            .saturating_sub(self.skip)
            .min(self.take)
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: a shift of the caller's disjoint ranges stays disjoint, and within the base;
        // the skipped items are below the shift.
        unsafe {
            if !I::PURE && self.skip != 0 {
                self.make_skipped(&range);
            }
            self.base
                .seq(range.start + self.skip..range.end + self.skip)
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Slice<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Slice<I> {
    type SeqRev<'a>
        = I::SeqRev<'a>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`.
        unsafe {
            if !I::PURE && self.skip != 0 {
                self.make_skipped(&range);
            }
            self.base
                .seq_rev(range.start + self.skip..range.end + self.skip)
        }
    }
}
