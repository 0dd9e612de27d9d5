//! `step_by`: every `step`-th item, from the first.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::IndexedParallelIterator;

/// Every `step`-th item, from the first (`step_by`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct StepBy<I> {
    pub(crate) base: I,
    pub(crate) step: usize,
}

impl<I: IndexedParallelIterator> Producer for StepBy<I> {
    type Item = I::Item;
    type Seq<'a>
        = std::iter::StepBy<I::Seq<'a>>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.step)
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: disjoint ranges of steps map to disjoint ranges of base indices (see
        // `base_range`).
        unsafe { self.base.seq(self.base_range(range)) }.step_by(self.step)
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for StepBy<I> {}

impl<I: IndexedParallelIterator> StepBy<I> {
    /// The base indices that steps `range` need: from the first step's to the last step's
    /// (step k covers base indices `k*step .. k*step + 1`; the gaps are never asked for), so
    /// disjoint ranges of steps map to disjoint ranges of base indices.
    #[inline]
    fn base_range(&self, range: Range<usize>) -> Range<usize> {
        let n = self.base.base_len();
        let lo = (range.start * self.step).min(n);
        let hi = if range.is_empty() {
            lo
        } else {
            ((range.end - 1) * self.step + 1).min(n)
        };
        lo..hi
    }
}

impl<I: IndexedParallelIterator> DoubleEndedProducer for StepBy<I> {
    type SeqRev<'a>
        = std::iter::StepBy<I::SeqRev<'a>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`. The base range ends just after the last step's index, so read
        // backwards it starts there and steps down to the first step's.
        unsafe { self.base.seq_rev(self.base_range(range)) }.step_by(self.step)
    }
}
