//! `fold_chunks` and `fold_chunks_with` (rayon's): the items in groups of `size`, each group
//! folded into one value, in order; the last group is shorter when `size` does not divide the
//! length. Indexed: a group of the result stands at each index `c`, made of the base's items
//! `c * size ..`; no group is ever split between members, so each is folded by one member,
//! front to back (also under `rev`, which gives the groups' values back to front).
//!
//! `fold_chunks_with` starts every group from a clone of one value: each range a member runs
//! clones it once under a lock (so `U: Send` suffices, as in rayon), then once per group.

use std::fmt::Debug;
use std::ops::Range;
use std::sync::Mutex;

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::source::sources::clone_of;
use crate::IndexedParallelIterator;

/// How a group's fold starts: a closure (`fold_chunks`) or clones of a value
/// (`fold_chunks_with`).
pub trait Start: Send + Sync {
    /// What a group folds into.
    type Value: Send;
    /// The starter of one range's groups.
    type Local<'a>: Starter<Value = Self::Value>
    where
        Self: 'a;
    /// A starter for the groups of one range.
    fn local(&self) -> Self::Local<'_>;
}

/// Starts one range's groups.
pub trait Starter {
    /// What a group folds into.
    type Value;
    /// The value a group's fold starts from.
    fn start(&mut self) -> Self::Value;
}

impl<U, ID: Fn() -> U> Starter for &ID {
    type Value = U;

    fn start(&mut self) -> U {
        (self)()
    }
}

/// A range's copy of `fold_chunks_with`'s value, cloned for each group.
#[derive(Debug)]
pub struct Cloned<U>(U);

impl<U: Clone> Starter for Cloned<U> {
    type Value = U;

    fn start(&mut self) -> U {
        self.0.clone()
    }
}

/// The value `fold_chunks_with` starts every group from.
#[derive(Debug)]
pub struct CloneOf<U>(Mutex<U>);

impl<U: Clone> Clone for CloneOf<U> {
    /// A clone of the value, taken under the lock as each range's is.
    fn clone(&self) -> Self {
        CloneOf(Mutex::new(clone_of(&self.0)))
    }
}

impl<U: Send + Clone> Start for CloneOf<U> {
    type Value = U;
    type Local<'a>
        = Cloned<U>
    where
        Self: 'a;

    fn local(&self) -> Cloned<U> {
        Cloned(clone_of(&self.0))
    }
}

/// `fold_chunks`'s identity, shared.
#[derive(Clone, Copy)]
pub struct Identity<ID>(ID);

debug_fields!(impl[ID] Identity<ID> (..));

impl<U: Send, ID: Fn() -> U + Send + Sync> Start for Identity<ID> {
    type Value = U;
    type Local<'a>
        = &'a ID
    where
        Self: 'a;

    fn local(&self) -> &ID {
        &self.0
    }
}

/// Groups of `size` items, each folded into one value ([`fold_chunks`] and
/// [`fold_chunks_with`]).
///
/// [`fold_chunks`]: IndexedParallelIterator::fold_chunks
/// [`fold_chunks_with`]: IndexedParallelIterator::fold_chunks_with
#[derive(Clone)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct FoldChunksBy<I, S, F> {
    base: I,
    size: usize,
    start: S,
    fold: F,
}

debug_fields!(impl[I: Debug, S: Debug, F] FoldChunksBy<I, S, F> { base, size, start });

/// rayon's name for `fold_chunks`'s adapter.
pub type FoldChunks<I, ID, F> = FoldChunksBy<I, Identity<ID>, F>;
/// rayon's name for `fold_chunks_with`'s adapter.
pub type FoldChunksWith<I, U, F> = FoldChunksBy<I, CloneOf<U>, F>;

impl<I, S, F> FoldChunksBy<I, S, F> {
    fn new(base: I, size: usize, start: S, fold: F, what: &str) -> Self {
        crate::iter::indexed::check_size(what, size);
        FoldChunksBy {
            base,
            size,
            start,
            fold,
        }
    }
}

impl<I: IndexedParallelIterator, ID, F> FoldChunks<I, ID, F> {
    pub(crate) fn with_identity(base: I, size: usize, identity: ID, fold: F) -> Self {
        Self::new(base, size, Identity(identity), fold, "fold_chunks")
    }
}

impl<I: IndexedParallelIterator, U, F> FoldChunksWith<I, U, F> {
    pub(crate) fn with_value(base: I, size: usize, init: U, fold: F) -> Self {
        Self::new(
            base,
            size,
            CloneOf(Mutex::new(init)),
            fold,
            "fold_chunks_with",
        )
    }
}

impl<I: IndexedParallelIterator, S, F> FoldChunksBy<I, S, F> {
    /// The base indices of groups `range`.
    fn base_range(&self, range: Range<usize>) -> Range<usize> {
        crate::iter::indexed::group_items(range, self.size, self.base.base_len())
    }
}

impl<I, S, F> Producer for FoldChunksBy<I, S, F>
where
    I: IndexedParallelIterator,
    S: Start,
    F: Fn(S::Value, I::Item) -> S::Value + Send + Sync,
{
    type Item = S::Value;
    type Seq<'a>
        = FoldChunksSeq<'a, I::Seq<'a>, S::Local<'a>, F>
    where
        Self: 'a;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.size)
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let r = self.base_range(range);
        FoldChunksSeq {
            left: r.len(),
            // SAFETY: disjoint ranges of groups are disjoint ranges of base indices.
            items: unsafe { self.base.seq(r) },
            size: self.size,
            start: self.start.local(),
            fold: &self.fold,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I, S, F> IndexedParallelIterator for FoldChunksBy<I, S, F>
where
    I: IndexedParallelIterator,
    S: Start,
    F: Fn(S::Value, I::Item) -> S::Value + Send + Sync,
{
}

impl<I, S, F> DoubleEndedProducer for FoldChunksBy<I, S, F>
where
    I: IndexedParallelIterator,
    S: Start,
    F: Fn(S::Value, I::Item) -> S::Value + Send + Sync,
{
    type SeqRev<'a>
        = std::iter::Rev<std::vec::IntoIter<S::Value>>
    where
        Self: 'a;

    /// The range's groups folded front to back, then given back to front (the values are
    /// kept until then: one per group of the range).
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range, asked for once.
        let values: Vec<S::Value> = unsafe { self.seq(range) }.collect();
        values.into_iter().rev()
    }
}

/// The sequential side of [`FoldChunksBy`]: the next group's items folded from a fresh start.
pub struct FoldChunksSeq<'a, J, L, F> {
    items: J,
    /// Base items not yet taken.
    left: usize,
    size: usize,
    start: L,
    fold: &'a F,
}

impl<J, L, F> std::fmt::Debug for FoldChunksSeq<'_, J, L, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldChunksSeq")
            .field("left", &self.left)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl<J, L, F> Iterator for FoldChunksSeq<'_, J, L, F>
where
    J: Iterator,
    L: Starter,
    F: Fn(L::Value, J::Item) -> L::Value,
{
    type Item = L::Value;

    #[inline]
    fn next(&mut self) -> Option<L::Value> {
        if self.left == 0 {
            return None;
        }
        let k = self.size.min(self.left);
        self.left -= k;
        let init = self.start.start();
        Some(self.items.by_ref().take(k).fold(init, self.fold))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.left.div_ceil(self.size);
        (n, Some(n))
    }
}

#[cfg(test)]
mod tests {
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    #[test]
    fn groups_fold_in_order_and_the_last_is_short() {
        on_every_team(|k| {
            let got: Vec<u64> = (1..=10u64)
                .into_par_iter()
                .fold_chunks(3, || 0, |a, x| a + x)
                .collect();
            assert_eq!(got, [6, 15, 24, 10], "team of {k}");
            let got: Vec<String> = (0..7i32)
                .into_par_iter()
                .fold_chunks_with(2, String::from(">"), |mut s, x| {
                    s.push_str(&x.to_string());
                    s
                })
                .collect();
            assert_eq!(got, [">01", ">23", ">45", ">6"], "team of {k}");
            // indexed: rev, zip, len
            let it = (0..10)
                .into_par_iter()
                .fold_chunks(4, Vec::new, |mut v, x| {
                    v.push(x);
                    v
                });
            assert_eq!(it.len(), 3);
            let back: Vec<Vec<i32>> = it.rev().collect();
            assert_eq!(back, [vec![8, 9], vec![4, 5, 6, 7], vec![0, 1, 2, 3]]);
            let z: Vec<(u32, char)> = (0..6u32)
                .into_par_iter()
                .fold_chunks(2, || 0, |a, x| a + x)
                .zip(vec!['a', 'b', 'c'])
                .collect();
            assert_eq!(z, [(1, 'a'), (5, 'b'), (9, 'c')]);
            assert_eq!(
                Vec::<u8>::new()
                    .into_par_iter()
                    .fold_chunks(3, || 0u8, |a, x| a + x)
                    .count(),
                0
            );
        });
    }

    #[test]
    #[should_panic(expected = "fold_chunks: chunk_size must not be zero")]
    fn a_chunk_size_of_zero_says_so() {
        let _ = (0..4).into_par_iter().fold_chunks(0, || 0, |a, x| a + x);
    }

    #[test]
    #[should_panic(expected = "fold_chunks_with: chunk_size must not be zero")]
    fn a_chunk_size_of_zero_says_so_with_a_value() {
        let _ = (0..4).into_par_iter().fold_chunks_with(0, 0, |a, x| a + x);
    }
}
