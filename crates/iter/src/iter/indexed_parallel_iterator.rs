//! [`IndexedParallelIterator`]: the methods of parallel iterators whose items stand one for one
//! at their indices.

use std::cmp::Ordering;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Rounds};
use crate::iter::adapters::Positions;
use crate::iter::blocks::{self, ExponentialBlocks, UniformBlocks};
use crate::iter::chain::Rev;
use crate::iter::fold_chunks::{FoldChunks, FoldChunksWith};
use crate::iter::indexed::{
    Chunks, Enumerate, Hinted, MaxLen, MinLen, Skip, Slice, StepBy, Take, Zip, ZipEq,
};
use crate::iter::interleave::{Interleave, InterleaveShortest};
use crate::terminal::cmp;
use crate::{IntoParallelIterator, ParallelIterator};

/// A parallel iterator whose items stand one for one at indices `0..len()`: it can be zipped,
/// enumerated, stepped and sliced.
///
/// Every indexed parallel iterator can also read its ranges back to front
/// ([`DoubleEndedProducer`]), which [`rev`](IndexedParallelIterator::rev) needs.
pub trait IndexedParallelIterator: ParallelIterator + DoubleEndedProducer {
    /// The number of items.
    fn len(&self) -> usize {
        self.base_len()
    }

    /// Whether there are no items.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items paired with `other`'s, as long as the shorter.
    fn zip<Z>(self, other: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        Zip {
            a: self,
            b: other.into_par_iter(),
        }
    }

    /// Like [`zip`](IndexedParallelIterator::zip), but panics if the lengths differ.
    fn zip_eq<Z>(self, other: Z) -> ZipEq<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let other = other.into_par_iter();
        let (a, b) = (self.len(), other.len());
        assert_eq!(
            a, b,
            "zip_eq: lengths differ ({a} and {b}): they must be equal"
        );
        Zip { a: self, b: other }
    }

    /// Items with their index.
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate { base: self }
    }

    /// The items in reverse order (rayon's `rev`).
    fn rev(self) -> Rev<Self> {
        Rev { base: self }
    }

    /// Every `step`-th item, starting with the first.
    ///
    /// # Panics
    ///
    /// If `step` is 0 (as std's and rayon's `step_by`).
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step != 0, "step_by: step 0: must be at least 1");
        StepBy { base: self, step }
    }

    /// The first `n` items.
    fn take(self, n: usize) -> Take<Self> {
        Slice::new(self, 0, n)
    }

    /// All but the first `n` items. The first `n` are made and dropped, as std's and rayon's
    /// `skip` make them (a `map` before it runs for them): see [`Slice`] for when.
    fn skip(self, n: usize) -> Skip<Self> {
        Slice::new(self, n, usize::MAX)
    }

    /// Shares the items in blocks of `min` to `2 * min - 1` (each member's share is a whole
    /// number of blocks; no block is shorter than `min` unless the whole call is, as no piece
    /// of rayon's is; a call with a single block runs on the calling thread alone).
    fn with_min_len(self, min: usize) -> MinLen<Self> {
        let hints = Hints {
            min_len: min,
            ..self.hints()
        };
        Hinted { base: self, hints }
    }

    /// Hands the items out dynamically in pieces of at most `max` (a larger `with_min_len`
    /// wins: pieces of one block; `with_max_len(0)` is `with_max_len(1)`, as in rayon), in
    /// index order, or for `any` and `find_any` (and their forms) from as many places along
    /// the items as the pool has threads, each going forward.
    fn with_max_len(self, max: usize) -> MaxLen<Self> {
        let hints = Hints {
            max_len: max.max(1),
            ..self.hints()
        };
        Hinted { base: self, hints }
    }

    /// Runs the terminal call as a sequence of rounds of `size` items, each one region, and
    /// stops after the round in which a search finds its answer (see [`blocks`](crate::blocks)).
    ///
    /// # Panics
    ///
    /// If `size` is 0 (as rayon's).
    fn by_uniform_blocks(self, size: usize) -> UniformBlocks<Self> {
        assert!(
            size != 0,
            "by_uniform_blocks: block_size must not be zero (it must be at least 1)"
        );
        blocks::in_rounds(self, Rounds::Uniform(size))
    }

    /// Runs the terminal call as a sequence of rounds, the first of
    /// [`current_num_threads`](crate::current_num_threads) items and each next one twice as
    /// large, each one region, and stops after the round in which a search finds its answer
    /// (see [`blocks`](crate::blocks)): a `find_first` then looks at about twice as many items
    /// as precede its answer, not at the whole space.
    fn by_exponential_blocks(self) -> ExponentialBlocks<Self> {
        blocks::in_rounds(self, Rounds::Exponential)
    }

    /// The index of some item for which `pred` is true; stops early.
    fn position_any<P>(self, pred: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.enumerate()
            .map(|(i, x)| (i, pred(x)))
            .find_any(|&(_, hit)| hit)
            .map(|(i, _)| i)
    }

    /// The index of the first item for which `pred` is true.
    fn position_first<P>(self, pred: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.enumerate()
            .map(|(i, x)| (i, pred(x)))
            .find_first(|&(_, hit)| hit)
            .map(|(i, _)| i)
    }

    /// The index of the last item for which `pred` is true.
    fn position_last<P>(self, pred: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.enumerate()
            .map(|(i, x)| (i, pred(x)))
            .find_last(|&(_, hit)| hit)
            .map(|(i, _)| i)
    }

    /// The indices of the items for which `pred` is true, in order.
    fn positions<P>(self, pred: P) -> Positions<Self, P>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        Positions { base: self, pred }
    }

    /// The items in `Vec`s of `size`, in order, the last one shorter if `size` does not
    /// divide the length.
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn chunks(self, size: usize) -> Chunks<Self> {
        crate::iter::indexed::check_size("chunks", size);
        Chunks { base: self, size }
    }

    /// The items in groups of `size`, in order, each folded into one value from `identity()`
    /// with `fold`; the last group is shorter if `size` does not divide the length (see
    /// [`fold_chunks`](crate::fold_chunks)).
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn fold_chunks<T, ID, F>(self, size: usize, identity: ID, fold: F) -> FoldChunks<Self, ID, F>
    where
        ID: Fn() -> T + Send + Sync,
        F: Fn(T, Self::Item) -> T + Send + Sync,
        T: Send,
    {
        FoldChunks::with_identity(self, size, identity, fold)
    }

    /// As [`fold_chunks`](IndexedParallelIterator::fold_chunks), each group's fold starting
    /// from a clone of `init`.
    ///
    /// # Panics
    ///
    /// If `size` is 0.
    fn fold_chunks_with<T, F>(self, size: usize, init: T, fold: F) -> FoldChunksWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(T, Self::Item) -> T + Send + Sync,
    {
        FoldChunksWith::with_value(self, size, init, fold)
    }

    /// The items of `self` and `other` in turn (`self` first), then the rest of the longer
    /// one.
    fn interleave<I>(self, other: I) -> Interleave<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator<Item = Self::Item>,
    {
        Interleave {
            a: self,
            b: other.into_par_iter(),
        }
    }

    /// The items of `self` and `other` in turn (`self` first), until the one whose turn it is
    /// has none left.
    fn interleave_shortest<I>(self, other: I) -> InterleaveShortest<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator<Item = Self::Item>,
    {
        let other = other.into_par_iter();
        let (na, nb) = (self.len(), other.len());
        Interleave {
            a: self.take(na.min(nb.saturating_add(1))),
            b: other.take(nb.min(na)),
        }
    }

    /// Compares the items with `other`'s lexicographically, as std's `Iterator::cmp` (see
    /// [`cmp`](mod@crate::cmp)).
    fn cmp<I>(self, other: I) -> Ordering
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
        Self::Item: Ord,
    {
        let other = other.into_par_iter();
        cmp::cmp(self.len().cmp(&other.len()), self.zip(other))
    }

    /// Compares the items with `other`'s lexicographically, as std's `Iterator::partial_cmp`.
    fn partial_cmp<I>(self, other: I) -> Option<Ordering>
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        let other = other.into_par_iter();
        cmp::partial_cmp(self.len().cmp(&other.len()), self.zip(other))
    }

    /// Whether the items equal `other`'s, as std's `Iterator::eq`.
    fn eq<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        let other = other.into_par_iter();
        cmp::eq(self.len() == other.len(), self.zip(other))
    }

    /// Whether the items differ from `other`'s, as std's `Iterator::ne`.
    fn ne<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        !IndexedParallelIterator::eq(self, other)
    }

    /// Whether the items are lexicographically less than `other`'s, as std's `Iterator::lt`.
    fn lt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        IndexedParallelIterator::partial_cmp(self, other) == Some(Ordering::Less)
    }

    /// Whether the items are lexicographically less than or equal to `other`'s, as std's
    /// `Iterator::le`.
    fn le<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            IndexedParallelIterator::partial_cmp(self, other),
            Some(Ordering::Less | Ordering::Equal)
        )
    }

    /// Whether the items are lexicographically greater than `other`'s, as std's
    /// `Iterator::gt`.
    fn gt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        IndexedParallelIterator::partial_cmp(self, other) == Some(Ordering::Greater)
    }

    /// Whether the items are lexicographically greater than or equal to `other`'s, as std's
    /// `Iterator::ge`.
    fn ge<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            IndexedParallelIterator::partial_cmp(self, other),
            Some(Ordering::Greater | Ordering::Equal)
        )
    }

    /// Splits pairs into `left` and `right`, replacing their contents, in order.
    fn unzip_into_vecs<A, B>(self, left: &mut Vec<A>, right: &mut Vec<B>)
    where
        Self: IndexedParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
    {
        left.clear();
        right.clear();
        let (mut a, mut b): (Vec<A>, Vec<B>) = self.unzip();
        left.append(&mut a);
        right.append(&mut b);
    }

    /// Collects the items into `target`, replacing its contents, in order.
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        crate::terminal::collect::into_vec(self, target);
    }
}
