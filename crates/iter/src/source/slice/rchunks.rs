//! `par_rchunks`, `par_rchunks_exact` and their `_mut` forms: chunks counted from the end of
//! the slice, as std's `rchunks`: chunk `j` is the `j`-th block of `size` elements from the
//! end, and the short one (if any) comes last, at the slice's front.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Producer};
use crate::internal::raw::RawSlice;
use crate::IndexedParallelIterator;

/// The elements of chunks `r` of a slice of `len` split from the end into chunks of `size`.
#[inline]
fn elements(len: usize, size: usize, r: Range<usize>) -> Range<usize> {
    let from_end = |c: usize| len.saturating_sub(c.saturating_mul(size));
    from_end(r.end)..from_end(r.start)
}

/// `par_rchunks(n)`: `&[T]` items of `n` elements from the end, the last one shorter if `n`
/// does not divide the length.
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct RChunks<'data, T> {
    pub(crate) slice: &'data [T],
    pub(crate) size: usize,
}

impl<'data, T: Sync> Producer for RChunks<'data, T> {
    type Item = &'data [T];
    type Seq<'a>
        = std::slice::RChunks<'data, T>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        self.slice[elements(self.slice.len(), self.size, r)].rchunks(self.size)
    }
}

impl<T: Sync> IndexedParallelIterator for RChunks<'_, T> {}

impl<'data, T: Sync> DoubleEndedProducer for RChunks<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::RChunks<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range (shared items: nothing to keep apart).
        unsafe { self.seq(r) }.rev()
    }
}

/// `par_rchunks_exact(n)`: the full `&[T]` chunks of `n` elements from the end; the front
/// elements left over are [`remainder`](RChunksExact::remainder).
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct RChunksExact<'data, T> {
    pub(crate) chunks: RChunks<'data, T>,
    pub(crate) rem: &'data [T],
}

impl<'data, T> RChunksExact<'data, T> {
    /// The elements before the last full chunk (fewer than `n`).
    pub fn remainder(&self) -> &'data [T] {
        self.rem
    }
}

impl<'data, T: Sync> Producer for RChunksExact<'data, T> {
    type Item = &'data [T];
    type Seq<'a>
        = std::slice::RChunks<'data, T>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        self.chunks.base_len()
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's range, on a slice of whole chunks.
        unsafe { self.chunks.seq(r) }
    }
}

impl<T: Sync> IndexedParallelIterator for RChunksExact<'_, T> {}

impl<'data, T: Sync> DoubleEndedProducer for RChunksExact<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::RChunks<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range, on a slice of whole chunks.
        unsafe { self.chunks.seq_rev(r) }
    }
}

/// `par_rchunks_mut(n)` and `par_rchunks_exact_mut(n)`: `&mut [T]` items of `n` elements from
/// the end (the last one shorter for `par_rchunks_mut` if `n` does not divide the length).
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct RChunksMut<'data, T> {
    pub(crate) raw: RawSlice<'data, T>,
    pub(crate) size: usize,
}

impl<'data, T: Send + 'data> Producer for RChunksMut<'data, T> {
    type Item = &'data mut [T];
    type Seq<'a>
        = std::slice::RChunksMut<'data, T>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        self.raw.len().div_ceil(self.size)
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        let elements = elements(self.raw.len(), self.size, r);
        // SAFETY: disjoint ranges of chunks are disjoint ranges of elements (Producer rule),
        // within the slice.
        unsafe { self.raw.slice_mut(elements) }.rchunks_mut(self.size)
    }
}

impl<T: Send> IndexedParallelIterator for RChunksMut<'_, T> {}

impl<'data, T: Send + 'data> DoubleEndedProducer for RChunksMut<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::RChunksMut<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`.
        unsafe { self.seq(r) }.rev()
    }
}
