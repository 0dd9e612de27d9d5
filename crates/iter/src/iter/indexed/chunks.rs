//! `chunks`: the items in `Vec`s of `size`, the last one shorter if `size` does not divide
//! the length; and the check of a chunk size that `chunks`, `fold_chunks` and the slices'
//! `par_chunks` forms share.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::IndexedParallelIterator;

/// The items in `Vec`s of `size` (`chunks`), the last one shorter if `size` does not divide
/// the length.
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Chunks<I> {
    pub(crate) base: I,
    pub(crate) size: usize,
}

/// Refuses a chunk size of 0, with rayon's words ("chunk_size must not be zero", which
/// programs and tests may look for) and what is allowed.
pub(crate) fn check_size(what: &str, size: usize) {
    assert!(
        size != 0,
        "{what}: chunk_size must not be zero (it must be at least 1)"
    );
}

/// The indices, among `n`, of groups `range` of `size` items (the last group may be short).
#[inline]
pub(crate) fn group_items(range: Range<usize>, size: usize, n: usize) -> Range<usize> {
    let at = |c: usize| c.saturating_mul(size).min(n);
    at(range.start)..at(range.end)
}

impl<I: IndexedParallelIterator> Chunks<I> {
    /// The base indices of chunks `range`.
    #[inline]
    fn base_range(&self, range: Range<usize>) -> Range<usize> {
        group_items(range, self.size, self.base.base_len())
    }
}

impl<I: IndexedParallelIterator> Producer for Chunks<I> {
    type Item = Vec<I::Item>;
    type Seq<'a>
        = ChunksSeq<I::Seq<'a>>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.size)
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let r = self.base_range(range);
        ChunksSeq {
            left: r.len(),
            // SAFETY: disjoint ranges of chunks are disjoint ranges of base indices.
            items: unsafe { self.base.seq(r) },
            size: self.size,
            next: self.size,
            back_to_front: false,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Chunks<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Chunks<I> {
    type SeqRev<'a>
        = ChunksSeq<I::SeqRev<'a>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        let r = self.base_range(range);
        // Back to front, the first chunk is the range's last: short if it ends the base.
        let next = match r.len() % self.size {
            0 => self.size,
            short => short,
        };
        ChunksSeq {
            left: r.len(),
            // SAFETY: as in `seq`.
            items: unsafe { self.base.seq_rev(r) },
            size: self.size,
            next,
            back_to_front: true,
        }
    }
}

/// The sequential side of [`Chunks`]: `Vec`s of `size` items, the next one of `next` (read
/// back to front, the short chunk comes first, and each chunk is put back in order).
#[derive(Debug)]
pub struct ChunksSeq<J> {
    items: J,
    /// Items not yet taken.
    left: usize,
    size: usize,
    /// The next chunk's size.
    next: usize,
    back_to_front: bool,
}

impl<J: Iterator> Iterator for ChunksSeq<J> {
    type Item = Vec<J::Item>;

    #[inline]
    fn next(&mut self) -> Option<Vec<J::Item>> {
        if self.left == 0 {
            return None;
        }
        let k = self.next.min(self.left);
        self.next = self.size;
        self.left -= k;
        let mut chunk: Vec<J::Item> = self.items.by_ref().take(k).collect();
        if self.back_to_front {
            chunk.reverse();
        }
        Some(chunk)
    }
}
