//! Parallel iterators over slices, `Vec`s and arrays: `par_iter`, `par_iter_mut`,
//! `par_chunks`, `par_rchunks`, their `_mut` and `_exact` forms, `par_windows`,
//! `par_array_windows`, `par_split`,
//! `par_split_inclusive`, `par_chunk_by` and their `_mut` forms (see [`split`](mod@split) for
//! how those are split).

use std::cmp::Ordering;
use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Producer};
use crate::internal::raw::{RawSlice, Unshared};
use crate::sort::{self, Kind};

mod chunks;
mod exact_mut;
mod rchunks;
pub mod split;

use crate::{
    IndexedParallelIterator, IntoParallelIterator, IntoParallelRefMutIterator, ParallelIterator,
};
pub use chunks::{ArrayWindows, ArrayWindowsSeq, Chunks, ChunksExact, ChunksMut, Windows};
pub use exact_mut::{ChunksExactMut, RChunksExactMut};
pub use rchunks::{RChunks, RChunksExact, RChunksMut};
#[doc(no_inline)]
pub use split::{ChunkBy, ChunkByMut, Split, SplitInclusive, SplitInclusiveMut, SplitMut};

/// `par_iter()` over a slice: `&T` items.
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Iter<'data, T> {
    slice: &'data [T],
}

impl<'data, T: Sync> Producer for Iter<'data, T> {
    type Item = &'data T;
    type Seq<'a>
        = std::slice::Iter<'data, T>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        self.slice.len()
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        self.slice[r].iter()
    }
}

impl<T: Sync> IndexedParallelIterator for Iter<'_, T> {}

impl<'data, T: Sync> DoubleEndedProducer for Iter<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::Iter<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        self.slice[r].iter().rev()
    }
}

/// `par_iter_mut()` over a slice: `&mut T` items.
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct IterMut<'data, T> {
    raw: RawSlice<'data, T>,
}

impl<'data, T: Send + 'data> Producer for IterMut<'data, T> {
    type Item = &'data mut T;
    type Seq<'a>
        = std::slice::IterMut<'data, T>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = true;

    fn base_len(&self) -> usize {
        self.raw.len()
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the Producer rule (no index twice) makes the sub-slice exclusive; `r` is
        // within `0..base_len()`.
        unsafe { self.raw.slice_mut(r) }.iter_mut()
    }
}

impl<T: Send> IndexedParallelIterator for IterMut<'_, T> {}

impl<'data, T: Send + 'data> DoubleEndedProducer for IterMut<'data, T> {
    type SeqRev<'a>
        = std::iter::Rev<std::slice::IterMut<'data, T>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`.
        unsafe { self.seq(r) }.rev()
    }
}

/// Parallel iterators over a shared slice's chunks and windows (`[T]` and, through deref,
/// `Vec<T>`).
pub trait ParallelSlice<T: Sync> {
    /// The slice.
    fn as_parallel_slice(&self) -> &[T];

    /// Chunks of `size` elements, the last one shorter if `size` does not divide the length.
    ///
    /// # Panics
    ///
    /// If `size` is 0 (as std's `chunks`).
    fn par_chunks(&self, size: usize) -> Chunks<'_, T> {
        crate::iter::indexed::check_size("par_chunks", size);
        Chunks {
            slice: self.as_parallel_slice(),
            size,
        }
    }

    /// The full chunks of `size` elements; the tail is `remainder()`.
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn par_chunks_exact(&self, size: usize) -> ChunksExact<'_, T> {
        crate::iter::indexed::check_size("par_chunks_exact", size);
        let slice = self.as_parallel_slice();
        let (whole, rem) = slice.split_at(slice.len() / size * size);
        ChunksExact {
            chunks: Chunks { slice: whole, size },
            rem,
        }
    }

    /// Every window of `size` consecutive elements.
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn par_windows(&self, size: usize) -> Windows<'_, T> {
        assert!(size != 0, "par_windows: window size 0: must be at least 1");
        Windows {
            slice: self.as_parallel_slice(),
            size,
        }
    }

    /// Every window of `N` consecutive elements, as an array reference (rayon's
    /// `par_array_windows`, std's `array_windows`).
    ///
    /// ```
    /// use asat_iter::prelude::*;
    ///
    /// let v = [1, 2, 3, 5, 8];
    /// let steps: Vec<i32> = v.par_array_windows().map(|[a, b]| b - a).collect();
    /// assert_eq!(steps, [1, 1, 2, 3]);
    /// ```
    ///
    /// # Panics
    ///
    /// If `N` is 0.
    fn par_array_windows<const N: usize>(&self) -> ArrayWindows<'_, T, N> {
        assert!(
            N != 0,
            "par_array_windows: window size 0: must be at least 1"
        );
        ArrayWindows {
            slice: self.as_parallel_slice(),
        }
    }

    /// Chunks of `size` elements counted from the end, the last one (at the front) shorter if
    /// `size` does not divide the length (std's `rchunks`).
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn par_rchunks(&self, size: usize) -> RChunks<'_, T> {
        crate::iter::indexed::check_size("par_rchunks", size);
        RChunks {
            slice: self.as_parallel_slice(),
            size,
        }
    }

    /// The full chunks of `size` elements counted from the end; the front elements left over
    /// are `remainder()` (std's `rchunks_exact`).
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn par_rchunks_exact(&self, size: usize) -> RChunksExact<'_, T> {
        crate::iter::indexed::check_size("par_rchunks_exact", size);
        let slice = self.as_parallel_slice();
        let (rem, whole) = slice.split_at(slice.len() % size);
        RChunksExact {
            chunks: RChunks { slice: whole, size },
            rem,
        }
    }

    /// The subslices between the elements `separator` holds for (std's `split`).
    fn par_split<P>(&self, separator: P) -> Split<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        split::SplitBy {
            slice: self.as_parallel_slice(),
            sep: separator,
        }
    }

    /// The subslices each ending with an element `separator` holds for, the last one perhaps
    /// without (std's `split_inclusive`).
    fn par_split_inclusive<P>(&self, separator: P) -> SplitInclusive<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        split::SplitBy {
            slice: self.as_parallel_slice(),
            sep: separator,
        }
    }

    /// The runs of elements in which `pred` holds for each pair of neighbours (std's
    /// `chunk_by`).
    fn par_chunk_by<F>(&self, pred: F) -> ChunkBy<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        ChunkBy {
            slice: self.as_parallel_slice(),
            pred,
        }
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    fn as_parallel_slice(&self) -> &[T] {
        self
    }
}

/// Parallel iterators over a mutable slice's chunks, and parallel sorts (`[T]` and, through
/// deref, `Vec<T>`).
///
/// The sorts give what std's sort of the same name gives (`par_sort_by` what `sort_by` gives,
/// equal elements in their order; the unstable ones a sorted permutation), as rayon's do. Each
/// is a merge sort made of joins on the current runtime (see [`crate::sort`]), parallel also
/// inside another parallel call; a slice shorter than `2 *`
/// [`MIN_RUN`](crate::sort::MIN_RUN) is sorted on the calling thread.
///
/// If the comparator (or `Ord`, or the key function) panics, the panic propagates once every
/// part of the sort has stopped, and the slice holds a permutation of its elements: none is
/// lost or duplicated, in an unspecified order, as with std's and rayon's sorts. A comparator that is
/// not a total order leaves the slice in an unspecified order (still a permutation).
///
/// ```
/// use asat_iter::prelude::*;
///
/// let mut v: Vec<(u32, usize)> = (0..10_000).map(|i| ((i * 7919 % 100) as u32, i)).collect();
/// v.par_sort_by_key(|&(k, _)| k);
/// // stable: equal keys keep their order
/// assert!(v.windows(2).all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)));
/// ```
pub trait ParallelSliceMut<T: Send> {
    /// The slice.
    fn as_parallel_slice_mut(&mut self) -> &mut [T];

    /// Mutable chunks of `size` elements, the last one shorter if `size` does not divide the
    /// length.
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMut<'_, T> {
        crate::iter::indexed::check_size("par_chunks_mut", size);
        ChunksMut {
            raw: RawSlice::new(self.as_parallel_slice_mut()),
            size,
        }
    }

    /// The full mutable chunks of `size` elements; the tail, shorter than `size`, is the
    /// iterator's [`remainder`](ChunksExactMut::remainder) (also
    /// [`into_remainder`](ChunksExactMut::into_remainder) and
    /// [`take_remainder`](ChunksExactMut::take_remainder), as in rayon).
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn par_chunks_exact_mut(&mut self, size: usize) -> ChunksExactMut<'_, T> {
        crate::iter::indexed::check_size("par_chunks_exact_mut", size);
        let slice = self.as_parallel_slice_mut();
        let whole = slice.len() / size * size;
        let (chunks, rem) = slice.split_at_mut(whole);
        ChunksExactMut {
            chunks: ChunksMut {
                raw: RawSlice::new(chunks),
                size,
            },
            rem: Unshared::new(rem),
        }
    }

    /// Mutable chunks of `size` elements counted from the end, the last one (at the front)
    /// shorter if `size` does not divide the length (std's `rchunks_mut`).
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn par_rchunks_mut(&mut self, size: usize) -> RChunksMut<'_, T> {
        crate::iter::indexed::check_size("par_rchunks_mut", size);
        RChunksMut {
            raw: RawSlice::new(self.as_parallel_slice_mut()),
            size,
        }
    }

    /// The full mutable chunks of `size` elements counted from the end; the front elements
    /// left over, fewer than `size`, are the iterator's
    /// [`remainder`](RChunksExactMut::remainder) (as in rayon).
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn par_rchunks_exact_mut(&mut self, size: usize) -> RChunksExactMut<'_, T> {
        crate::iter::indexed::check_size("par_rchunks_exact_mut", size);
        let slice = self.as_parallel_slice_mut();
        let (rem, chunks) = slice.split_at_mut(slice.len() % size);
        RChunksExactMut {
            chunks: RChunksMut {
                raw: RawSlice::new(chunks),
                size,
            },
            rem: Unshared::new(rem),
        }
    }

    /// The mutable subslices between the elements `separator` holds for (std's
    /// `split_mut`); an indexed iterator, whose pieces are found on first use (see
    /// [`split`](mod@split)).
    fn par_split_mut<P>(&mut self, separator: P) -> SplitMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        split::PiecesMut::new(self.as_parallel_slice_mut(), split::Separators(separator))
    }

    /// The mutable subslices each ending with an element `separator` holds for, the last one
    /// perhaps without (std's `split_inclusive_mut`; see [`split`](mod@split)).
    fn par_split_inclusive_mut<P>(&mut self, separator: P) -> SplitInclusiveMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        split::PiecesMut::new(self.as_parallel_slice_mut(), split::Separators(separator))
    }

    /// The mutable runs of elements in which `pred` holds for each pair of neighbours (std's
    /// `chunk_by_mut`; see [`split`](mod@split)).
    fn par_chunk_by_mut<F>(&mut self, pred: F) -> ChunkByMut<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        split::PiecesMut::new(self.as_parallel_slice_mut(), split::Runs(pred))
    }

    /// Sorts the slice, stably (rayon's `par_sort`; std's `sort`).
    fn par_sort(&mut self)
    where
        T: Ord,
    {
        sort::sort_by(self.as_parallel_slice_mut(), Kind::Stable, &T::cmp);
    }

    /// Sorts the slice by `compare`, stably (std's `sort_by`).
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        sort::sort_by(self.as_parallel_slice_mut(), Kind::Stable, &compare);
    }

    /// Sorts the slice by the key `f` gives, stably (std's `sort_by_key`); `f` runs at each
    /// comparison.
    fn par_sort_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        let cmp = |a: &T, b: &T| f(a).cmp(&f(b));
        sort::sort_by(self.as_parallel_slice_mut(), Kind::Stable, &cmp);
    }

    /// Sorts the slice by the key `f` gives, stably, calling `f` once per element (std's
    /// `sort_by_cached_key`): the keys are computed in parallel and sorted with their
    /// positions, then the elements are moved into place on the calling thread.
    fn par_sort_by_cached_key<K, F>(&mut self, f: F)
    where
        F: Fn(&T) -> K + Sync,
        K: Ord + Send,
    {
        let v = self.as_parallel_slice_mut();
        if v.len() < 2 {
            return;
        }
        let mut keys: Vec<(K, usize)> = v
            .par_iter_mut()
            .enumerate()
            .map(|(i, x)| (f(x), i))
            .collect();
        // Positions make the keys distinct, so an unstable sort keeps equal keys in order.
        keys.par_sort_unstable();
        apply_permutation(v, &mut keys);
    }

    /// Sorts the slice, not necessarily keeping equal elements in order (std's
    /// `sort_unstable`).
    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        sort::sort_by(self.as_parallel_slice_mut(), Kind::Unstable, &T::cmp);
    }

    /// Sorts the slice by `compare`, not necessarily keeping equal elements in order (std's
    /// `sort_unstable_by`).
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        sort::sort_by(self.as_parallel_slice_mut(), Kind::Unstable, &compare);
    }

    /// Sorts the slice by the key `f` gives, not necessarily keeping equal elements in order
    /// (std's `sort_unstable_by_key`).
    fn par_sort_unstable_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        let cmp = |a: &T, b: &T| f(a).cmp(&f(b));
        sort::sort_by(self.as_parallel_slice_mut(), Kind::Unstable, &cmp);
    }
}

/// Moves `v`'s elements so that position `i` gets the element that was at `sorted[i].1`.
///
/// Swaps in place: when position `i` is filled, the element it needs may already have been
/// swapped away from its first position `j < i`, to the position `sorted[j].1` that was filled
/// then, and so on: following that chain while it points below `i` finds where it is now. The
/// chain's end is written back into `sorted[i]`, so later searches take the shortcut.
fn apply_permutation<T, K>(v: &mut [T], sorted: &mut [(K, usize)]) {
    for i in 0..v.len() {
        let mut at = sorted[i].1;
        while at < i {
            at = sorted[at].1;
        }
        sorted[i].1 = at;
        v.swap(i, at);
    }
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    fn as_parallel_slice_mut(&mut self) -> &mut [T] {
        self
    }
}

macro_rules! into_slice_iters {
    ($([$($n:ident)?] $ty:ty;)*) => {$(
        impl<'data, T: Sync + 'data $(, const $n: usize)?> IntoParallelIterator for &'data $ty {
            type Iter = Iter<'data, T>;
            type Item = &'data T;

            fn into_par_iter(self) -> Iter<'data, T> {
                Iter { slice: &self[..] }
            }
        }

        impl<'data, T: Send + 'data $(, const $n: usize)?> IntoParallelIterator
            for &'data mut $ty
        {
            type Iter = IterMut<'data, T>;
            type Item = &'data mut T;

            fn into_par_iter(self) -> IterMut<'data, T> {
                IterMut { raw: RawSlice::new(&mut self[..]) }
            }
        }
    )*};
}

into_slice_iters! {
    [] [T];
    [] Vec<T>;
    [N] [T; N];
}
