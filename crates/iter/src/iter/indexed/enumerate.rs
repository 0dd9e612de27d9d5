//! `enumerate`: each item with its index.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::IndexedParallelIterator;

/// Items with their index (`enumerate`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Enumerate<I> {
    pub(crate) base: I,
}

impl<I: IndexedParallelIterator> Producer for Enumerate<I> {
    type Item = (usize, I::Item);
    type Seq<'a>
        = std::iter::Zip<Range<usize>, I::Seq<'a>>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        range.clone().zip(unsafe { self.base.seq(range) })
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Enumerate<I> {
    type SeqRev<'a>
        = std::iter::Zip<std::iter::Rev<Range<usize>>, I::SeqRev<'a>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        range.clone().rev().zip(unsafe { self.base.seq_rev(range) })
    }
}
