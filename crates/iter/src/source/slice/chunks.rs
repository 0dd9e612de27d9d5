//! `par_chunks`, `par_chunks_exact`, their `_mut` forms, `par_windows` and
//! `par_array_windows`: chunks and windows of a slice, counted from its front, as std's
//! iterators of the same names.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Producer};
use crate::internal::raw::RawSlice;
use crate::IndexedParallelIterator;

/// `par_chunks(n)`: `&[T]` items of `n` elements, the last one shorter if `n` does not divide
/// the length.
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Chunks<'data, T> {
    pub(crate) slice: &'data [T],
    pub(crate) size: usize,
}

impl<'data, T: Sync> Producer for Chunks<'data, T> {
    type Item = &'data [T];
    type Seq<'a>
        = std::slice::Chunks<'data, T>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        self.slice.len().div_ceil(self.size)
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        let end = (r.end * self.size).min(self.slice.len());
        self.slice[r.start * self.size..end].chunks(self.size)
    }
}

impl<T: Sync> IndexedParallelIterator for Chunks<'_, T> {}

impl<'data, T: Sync> DoubleEndedProducer for Chunks<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::Chunks<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range (shared items: nothing to keep apart).
        unsafe { self.seq(r) }.rev()
    }
}

/// `par_chunks_exact(n)`: the full `&[T]` chunks of `n` elements; the tail is
/// [`remainder`](ChunksExact::remainder).
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct ChunksExact<'data, T> {
    pub(crate) chunks: Chunks<'data, T>,
    pub(crate) rem: &'data [T],
}

impl<'data, T> ChunksExact<'data, T> {
    /// The elements after the last full chunk (fewer than `n`).
    pub fn remainder(&self) -> &'data [T] {
        self.rem
    }
}

impl<'data, T: Sync> Producer for ChunksExact<'data, T> {
    type Item = &'data [T];
    type Seq<'a>
        = std::slice::Chunks<'data, T>
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

impl<T: Sync> IndexedParallelIterator for ChunksExact<'_, T> {}

impl<'data, T: Sync> DoubleEndedProducer for ChunksExact<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::Chunks<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range, on a slice of whole chunks.
        unsafe { self.chunks.seq_rev(r) }
    }
}

/// `par_chunks_mut(n)` and `par_chunks_exact_mut(n)`: `&mut [T]` items of `n` elements (the
/// last one shorter for `par_chunks_mut` if `n` does not divide the length).
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct ChunksMut<'data, T> {
    pub(crate) raw: RawSlice<'data, T>,
    pub(crate) size: usize,
}

impl<'data, T: Send + 'data> Producer for ChunksMut<'data, T> {
    type Item = &'data mut [T];
    type Seq<'a>
        = std::slice::ChunksMut<'data, T>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        self.raw.len().div_ceil(self.size)
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        let end = (r.end * self.size).min(self.raw.len());
        // SAFETY: disjoint ranges of chunks are disjoint ranges of elements (Producer rule),
        // within the slice.
        unsafe { self.raw.slice_mut(r.start * self.size..end) }.chunks_mut(self.size)
    }
}

impl<T: Send> IndexedParallelIterator for ChunksMut<'_, T> {}

impl<'data, T: Send + 'data> DoubleEndedProducer for ChunksMut<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::ChunksMut<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`.
        unsafe { self.seq(r) }.rev()
    }
}

/// `par_windows(n)`: every `&[T]` window of `n` consecutive elements.
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Windows<'data, T> {
    pub(crate) slice: &'data [T],
    pub(crate) size: usize,
}

impl<'data, T: Sync> Producer for Windows<'data, T> {
    type Item = &'data [T];
    type Seq<'a>
        = std::slice::Windows<'data, T>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        (self.slice.len() + 1).saturating_sub(self.size)
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        let end = if r.is_empty() {
            r.start
        } else {
            r.end + self.size - 1
        };
        self.slice[r.start..end].windows(self.size)
    }
}

impl<T: Sync> IndexedParallelIterator for Windows<'_, T> {}

impl<'data, T: Sync> DoubleEndedProducer for Windows<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::Windows<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range (shared items: nothing to keep apart).
        unsafe { self.seq(r) }.rev()
    }
}

/// `par_array_windows::<N>()`: every `&[T; N]` window of `N` consecutive elements.
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct ArrayWindows<'data, T, const N: usize> {
    pub(crate) slice: &'data [T],
}

/// A window of `N` elements as an array reference.
#[inline]
fn as_array<T, const N: usize>(window: &[T]) -> &[T; N] {
    window
        .try_into()
        .expect("slice::Windows yields windows of exactly N elements")
}

/// The sequential side of [`ArrayWindows`]: std's windows as arrays.
pub type ArrayWindowsSeq<'data, T, const N: usize> =
    std::iter::Map<std::slice::Windows<'data, T>, fn(&'data [T]) -> &'data [T; N]>;

impl<'data, T: Sync, const N: usize> Producer for ArrayWindows<'data, T, N> {
    type Item = &'data [T; N];
    type Seq<'a>
        = ArrayWindowsSeq<'data, T, N>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        Windows {
            slice: self.slice,
            size: N,
        }
        .base_len()
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        let windows = Windows {
            slice: self.slice,
            size: N,
        };
        // SAFETY: the caller's range (shared items: nothing to keep apart).
        unsafe { windows.seq(r) }.map(as_array::<T, N> as fn(&'data [T]) -> &'data [T; N])
    }
}

impl<T: Sync, const N: usize> IndexedParallelIterator for ArrayWindows<'_, T, N> {}

impl<'data, T: Sync, const N: usize> DoubleEndedProducer for ArrayWindows<'data, T, N> {
    type SeqRev<'a>
        = std::iter::Rev<ArrayWindowsSeq<'data, T, N>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range (shared items: nothing to keep apart).
        unsafe { self.seq(r) }.rev()
    }
}
