//! `with_min_len`, `with_max_len` and `with_schedule` (and the blocks' rounds): a
//! [`Hinted`] iterator, whose hints say how a call splits its index space.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer, Stop};
use crate::IndexedParallelIterator;

/// rayon's name for what `with_min_len` returns: a [`Hinted`] iterator.
pub type MinLen<I> = Hinted<I>;

/// rayon's name for what `with_max_len` returns: a [`Hinted`] iterator.
pub type MaxLen<I> = Hinted<I>;

/// A parallel iterator with splitting hints set (`with_min_len`, `with_max_len`,
/// `with_schedule`, `by_uniform_blocks`, `by_exponential_blocks`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Hinted<I> {
    pub(crate) base: I,
    pub(crate) hints: Hints,
}

impl<I: Producer> Producer for Hinted<I> {
    type Item = I::Item;
    type Seq<'a>
        = I::Seq<'a>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        unsafe { self.base.seq(range) }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        // SAFETY: the caller's range goes to the base unchanged.
        unsafe { self.base.seq_until(range, stop) }
    }

    fn hints(&self) -> Hints {
        self.hints
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Hinted<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Hinted<I> {
    type SeqRev<'a>
        = I::SeqRev<'a>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        unsafe { self.base.seq_rev(range) }
    }
}
