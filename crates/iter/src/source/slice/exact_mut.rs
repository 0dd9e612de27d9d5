//! `par_chunks_exact_mut` and `par_rchunks_exact_mut`: the full mutable chunks of a slice,
//! with the elements left over kept apart for the caller, as rayon's `ChunksExactMut` and
//! `RChunksExactMut` (`into_remainder`, `remainder`, `take_remainder`).
//!
//! The slice is split once, with `split_at_mut`, into the whole chunks (the iterator's items)
//! and the remainder, so the two never alias: the remainder may be used while the iterator
//! lives, and after it.

use std::ops::Range;

use super::{ChunksMut, RChunksMut};
use crate::internal::plumbing::{DoubleEndedProducer, Producer};
use crate::internal::raw::Unshared;
use crate::IndexedParallelIterator;

macro_rules! exact_mut {
    ($(#[$doc:meta])* $name:ident, $inner:ident, $seq:ident, $where_rem:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        #[must_use = "parallel iterators do nothing until a terminal call"]
        pub struct $name<'data, T> {
            pub(crate) chunks: $inner<'data, T>,
            pub(crate) rem: Unshared<'data, T>,
        }

        impl<'data, T> $name<'data, T> {
            #[doc = concat!("The elements ", $where_rem, " (fewer than `n`), for as long as the iterator lives.")]
            pub fn remainder(&mut self) -> &mut [T] {
                self.rem.get_mut()
            }

            #[doc = concat!("The elements ", $where_rem, ", for as long as the slice is borrowed; the iterator keeps an empty remainder.")]
            pub fn take_remainder(&mut self) -> &'data mut [T] {
                self.rem.take()
            }

            #[doc = concat!("The elements ", $where_rem, ", for as long as the slice is borrowed (the iterator is dropped).")]
            pub fn into_remainder(self) -> &'data mut [T] {
                self.rem.into_inner()
            }
        }

        impl<'data, T: Send + 'data> Producer for $name<'data, T> {
            type Item = &'data mut [T];
            type Seq<'a>
                = std::slice::$seq<'data, T>
            where
                Self: 'a;
            const EXACT: bool = true;
            const PURE: bool = true;

            fn base_len(&self) -> usize {
                self.chunks.base_len()
            }

            #[inline]
            unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
                // SAFETY: the caller's range, on the slice of whole chunks.
                unsafe { self.chunks.seq(r) }
            }
        }

        impl<T: Send> IndexedParallelIterator for $name<'_, T> {}

        impl<'data, T: Send + 'data> DoubleEndedProducer for $name<'data, T> {
            type SeqRev<'a>
                = std::iter::Rev<std::slice::$seq<'data, T>>
            where
                Self: 'a;

            #[inline]
            unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
                // SAFETY: the caller's range, on the slice of whole chunks.
                unsafe { self.chunks.seq_rev(r) }
            }
        }
    };
}

exact_mut!(
    /// `par_chunks_exact_mut(n)`: the full `&mut [T]` chunks of `n` elements, from the front;
    /// the elements after the last full chunk are the remainder.
    ChunksExactMut,
    ChunksMut,
    ChunksMut,
    "after the last full chunk"
);

exact_mut!(
    /// `par_rchunks_exact_mut(n)`: the full `&mut [T]` chunks of `n` elements, from the end;
    /// the elements before the last full chunk (at the front) are the remainder.
    RChunksExactMut,
    RChunksMut,
    RChunksMut,
    "before the last full chunk (at the front)"
);

#[cfg(test)]
mod tests {
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    #[test]
    fn exact_mut_chunks_leave_the_remainder_to_the_caller() {
        on_every_team(|k| {
            let mut v: Vec<u32> = (0..23).collect();
            let mut it = v.par_chunks_exact_mut(5);
            assert_eq!(it.remainder(), [20, 21, 22], "team of {k}");
            let rem = it.take_remainder();
            assert!(it.remainder().is_empty());
            // the remainder is usable while the chunks are written
            rem.iter_mut().for_each(|x| *x += 1000);
            it.for_each(|c| c.iter_mut().for_each(|x| *x *= 2));
            let want: Vec<u32> = (0..20).map(|x| x * 2).chain([1020, 1021, 1022]).collect();
            assert_eq!(v, want, "team of {k}");

            let mut v: Vec<u32> = (0..23).collect();
            let it = v.par_rchunks_exact_mut(5);
            assert_eq!(it.len(), 4);
            let firsts: Vec<u32> = it.map(|c| c[0]).collect();
            assert_eq!(firsts, [18, 13, 8, 3], "team of {k}");
            let rem = v.par_rchunks_exact_mut(5).into_remainder();
            assert_eq!(rem, [0, 1, 2]);
            let rem = v.par_chunks_exact_mut(23).into_remainder();
            assert!(rem.is_empty());
            let mut it = v.par_chunks_exact_mut(24);
            assert_eq!((it.len(), it.remainder().len()), (0, 23));
        });
    }
}
