//! How a parallel iterator is split: the [`Producer`] protocol, which every parallel iterator
//! of this crate implements and every terminal call drives.
//!
//! # Protocol
//!
//! A producer has an *index space* `0..base_len()`. A terminal call splits that space into
//! disjoint ranges (see [`crate`]'s docs for how) and asks the producer for a sequential
//! iterator over each range with [`Producer::seq`], on whichever member of the team runs the
//! range. Items of an [indexed](crate::IndexedParallelIterator) producer stand one for one at
//! its indices; an unindexed one (after `filter`, say) may yield fewer or more items for a
//! range than it has indices, but always in index order. Adapters wrap a producer and map its
//! ranges (`step_by`, `skip`), its items (`map`) or both; [`Hints`] travel up the chain.
//!
//! The one rule a caller of `seq` keeps (it is `unsafe`): every index is asked for at most once
//! over the producer's life, so ranges never overlap. That is what lets `par_iter_mut` hand out
//! `&mut` items and `Vec::into_par_iter` move them out without a lock.
//!
//! An indexed producer can also give a range's items back to front
//! ([`DoubleEndedProducer::seq_rev`], under the same rule: a range asked for with `seq_rev` counts
//! as asked for); `rev` is built on it. It is a trait of its own because the bound it replaces,
//! "every `Seq<'a>` is a `DoubleEndedIterator`", cannot be written for borrowing producers on
//! stable Rust (a higher-ranked bound over a lifetime-generic associated type implies
//! `'static`).
//!
//! # Your own parallel iterator
//!
//! A type of a program's own becomes a parallel iterator by implementing [`Producer`]: every
//! producer is a [`ParallelIterator`](crate::ParallelIterator), with all its adapters and
//! terminal calls. To be indexed (zipped, enumerated, reversed, sliced), it also says
//! `EXACT = true`, implements [`DoubleEndedProducer`], and states
//! `impl IndexedParallelIterator for ... {}` (every method has a default). The producer is
//! shared by reference among the members of the call's team, hence `Sync`; `seq` builds a
//! sequential iterator from `&self`.
//!
//! The rows of a sparse matrix in compressed-row form, one row view per index, and a
//! matrix-vector product over them:
//!
//! ```
//! use std::ops::Range;
//! use asat_iter::plumbing::{DoubleEndedProducer, Producer};
//! use asat_iter::prelude::*;
//!
//! /// A matrix in compressed-row form: row `i`'s entries are at `ptr[i]..ptr[i + 1]`.
//! struct Csr { ptr: Vec<usize>, col: Vec<usize>, val: Vec<f64> }
//!
//! /// `par_rows()`: one `(columns, values)` pair per row.
//! struct Rows<'a>(&'a Csr);
//!
//! /// The rows at a range of indices, in order.
//! struct RowsSeq<'a> { m: &'a Csr, at: Range<usize> }
//!
//! impl<'a> RowsSeq<'a> {
//!     fn row(&self, i: usize) -> (&'a [usize], &'a [f64]) {
//!         let (m, r) = (self.m, self.m.ptr[i]..self.m.ptr[i + 1]);
//!         (&m.col[r.clone()], &m.val[r])
//!     }
//! }
//!
//! impl<'a> Iterator for RowsSeq<'a> {
//!     type Item = (&'a [usize], &'a [f64]);
//!     fn next(&mut self) -> Option<Self::Item> {
//!         self.at.next().map(|i| self.row(i))
//!     }
//! }
//!
//! impl DoubleEndedIterator for RowsSeq<'_> {
//!     fn next_back(&mut self) -> Option<Self::Item> {
//!         self.at.next_back().map(|i| self.row(i))
//!     }
//! }
//!
//! impl<'a> Producer for Rows<'a> {
//!     type Item = (&'a [usize], &'a [f64]);
//!     type Seq<'s> = RowsSeq<'a> where Self: 's;
//!     const EXACT: bool = true;
//!
//!     fn base_len(&self) -> usize {
//!         self.0.ptr.len() - 1
//!     }
//!
//!     // Shared items: nothing here relies on the ranges being disjoint.
//!     unsafe fn seq(&self, range: Range<usize>) -> RowsSeq<'a> {
//!         RowsSeq { m: self.0, at: range }
//!     }
//! }
//!
//! impl<'a> DoubleEndedProducer for Rows<'a> {
//!     type SeqRev<'s> = std::iter::Rev<RowsSeq<'a>> where Self: 's;
//!
//!     unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
//!         RowsSeq { m: self.0, at: range }.rev()
//!     }
//! }
//!
//! impl IndexedParallelIterator for Rows<'_> {}
//!
//! // 0 1 0
//! // 2 0 3
//! // 0 0 4
//! let m = Csr { ptr: vec![0, 1, 3, 4], col: vec![1, 0, 2, 2], val: vec![1.0, 2.0, 3.0, 4.0] };
//! let x = [1.0, 10.0, 100.0];
//! let mut y = vec![0.0; 3];
//! Rows(&m).zip(&mut y).for_each(|((col, val), y)| {
//!     *y = col.iter().zip(val).map(|(&j, a)| a * x[j]).sum();
//! });
//! assert_eq!(y, [10.0, 302.0, 400.0]);
//! // Rows differ in length: pieces of at most 64 rows, handed out as members free up.
//! let nonzeros: usize = Rows(&m).with_max_len(64).map(|(col, _)| col.len()).sum();
//! assert_eq!(nonzeros, 4);
//! assert_eq!(Rows(&m).rev().map(|(col, _)| col[0]).collect::<Vec<_>>(), [2, 0, 1]);
//! ```
//!
//! A producer of `&mut` or owned items holds a raw pointer to its data, as `par_iter_mut` and
//! `Vec::into_par_iter` do; its `seq` builds the items of `range` from it, and its SAFETY
//! argument is the rule above: no index is asked for twice, so no two items alias. It then
//! states `unsafe impl Send` and `Sync` with the same argument, and is neither `Clone` nor
//! `Copy` (a copy would be a second producer of the same items, each asked for the same
//! indices once). `tests/iter_custom_source.rs` has the rows above with mutable values.
//!
//! rayon's plumbing (its `Producer` with `split_at` and `into_iter`, `Consumer`, `bridge`) is
//! not here: a rayon producer that is split at `a` and `b` and turned into an iterator is this
//! protocol's `seq(a..b)`, which is what a port writes, and its `min_len` and `max_len` are
//! [`Producer::hints`]; the `drive_unindexed`, `drive` and `with_producer` methods that
//! rayon's own iterator types implement have no counterpart.

use std::ops::Range;

use asat_core::Schedule;

pub use crate::internal::stop::{Stop, Stoppable};

/// A splittable source of items: see the [module docs](self).
pub trait Producer: Send + Sync {
    /// What the iterator yields.
    type Item: Send;
    /// The sequential iterator over one range of indices.
    type Seq<'a>: Iterator<Item = Self::Item>
    where
        Self: 'a;

    /// Whether items stand one for one at the indices (every range yields exactly as many
    /// items as it has indices). Indexed producers say `true`; the default is `false`.
    const EXACT: bool = false;

    /// Whether making items runs none of the program's code (no closure, no `Drop` of an
    /// owned item), so that an item nobody reads need not be made: `skip` then does not make
    /// the items it skips (see [`Slice`](crate::indexed::Slice)). Sources that lend their data
    /// (slices, ranges) say `true` and adapters that only rearrange items say what their bases
    /// say; the default, `false`, is right for every producer.
    const PURE: bool = false;

    /// The length of the index space: the same over the producer's life. Terminal calls and
    /// adapters read it more than once, and map the ranges they pass on by it, so a length
    /// that changes voids the disjoint-ranges rule its own `seq` may rely on (and makes
    /// `collect` panic).
    fn base_len(&self) -> usize;

    /// The items at indices `range` (within `0..base_len()`), in order.
    ///
    /// # Safety
    ///
    /// Over the producer's life, no index may be asked for twice: the ranges of all calls are
    /// pairwise disjoint. (Producers of `&mut` or owned items rely on it.)
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_>;

    /// [`seq`](Producer::seq) for a call that may end early (a search, a `try_` call): once
    /// `stop.now()`, the items need not go on (see [`Stop`]). An adapter that drops items
    /// reads its base through [`Stoppable`]; one that keeps them passes `stop` to its base. The
    /// default yields every item, and the call stops before the next item yielded.
    ///
    /// # Safety
    ///
    /// As for [`seq`](Producer::seq).
    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        let _ = stop;
        // SAFETY: the caller keeps `seq`'s rule.
        unsafe { self.seq(range) }
    }

    /// How the terminal call should split the index space.
    fn hints(&self) -> Hints {
        Hints::default()
    }

    /// How many items the producer yields, when that is known before a call runs (what
    /// [`opt_len`](crate::ParallelIterator::opt_len) says): by default the length of an exact
    /// producer and `None` for others; an inexact one that knows (a `u128` range of fewer
    /// than `usize::MAX` items, an adapter that makes one item of each of its base's over
    /// one) says so.
    fn known_len(&self) -> Option<usize> {
        Self::EXACT.then(|| self.base_len())
    }
}

/// A producer whose ranges can also be read back to front: every indexed producer (it is a
/// supertrait of [`IndexedParallelIterator`](crate::IndexedParallelIterator)).
pub trait DoubleEndedProducer: Producer {
    /// The sequential iterator over one range of indices, last index first.
    type SeqRev<'a>: Iterator<Item = Self::Item>
    where
        Self: 'a;

    /// The items at indices `range`, in reverse order: those [`seq`](Producer::seq) would
    /// yield, last first.
    ///
    /// # Safety
    ///
    /// As for [`Producer::seq`]: over the producer's life, the ranges of all `seq` and `seq_rev`
    /// calls are pairwise disjoint.
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_>;
}

/// Splitting hints a chain of adapters carries to its terminal call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// Each member's share is a whole number of blocks of at least this many indices (0 or 1:
    /// no minimum). From `with_min_len`.
    pub min_len: usize,
    /// Pieces of at most this many indices, handed out dynamically (0: no maximum). From
    /// `with_max_len`.
    pub max_len: usize,
    /// An explicit schedule, in indices. From `with_schedule`.
    pub schedule: Option<Schedule>,
    /// Run the call as a sequence of rounds, each over the next part of the index space
    /// (`None`: all of it at once). From `by_uniform_blocks` and `by_exponential_blocks`.
    pub rounds: Option<Rounds>,
    /// The chain yields a range's items only once it has gone through the whole range (a
    /// `fold`, `fold_with`, `try_fold`): a terminal call that stops early (a search, a `try_`
    /// call) then looks through each range in pieces of `min_len` (at least 1), twice as
    /// many, ... indices (the last one taking in a rest shorter than `min_len`), so that it can
    /// stop between them, as rayon's fold stops once the search after it is full.
    pub late: bool,
}

/// How a call runs as a sequence of rounds, each one region over the next part of the index
/// space, stopping early once the terminal call has its answer (see [`blocks`](crate::blocks)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounds {
    /// Rounds of this many indices (at least 1), the last one shorter (`by_uniform_blocks`).
    Uniform(usize),
    /// The first round as many indices as the pool has threads, each next one twice as many
    /// (`by_exponential_blocks`).
    Exponential,
}

impl Hints {
    /// The hints of two producers driven together (a zip): the larger minimum, the smaller
    /// maximum, the first explicit schedule, the first sequence of rounds, late if either is.
    #[inline]
    pub fn merge(self, other: Hints) -> Hints {
        let max_len = match (self.max_len, other.max_len) {
            (0, m) | (m, 0) => m,
            (a, b) => a.min(b),
        };
        Hints {
            min_len: self.min_len.max(other.min_len),
            max_len,
            schedule: self.schedule.or(other.schedule),
            rounds: self.rounds.or(other.rounds),
            late: self.late || other.late,
        }
    }
}

/// `p`'s items of `range`: under `stop` when there is one
/// ([`Producer::seq_until`]), else all of them ([`Producer::seq`]).
///
/// # Safety
///
/// As for [`Producer::seq`].
#[inline]
pub(crate) unsafe fn seq_under<'a, P: Producer>(
    p: &'a P,
    range: Range<usize>,
    stop: Option<Stop<'a>>,
) -> P::Seq<'a> {
    // SAFETY: the caller keeps `seq`'s rule.
    unsafe {
        match stop {
            Some(stop) => p.seq_until(range, stop),
            None => p.seq(range),
        }
    }
}
