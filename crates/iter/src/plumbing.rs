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

use std::ops::Range;

use asat_core::Schedule;

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

    /// The length of the index space.
    fn base_len(&self) -> usize;

    /// The items at indices `range` (within `0..base_len()`), in order.
    ///
    /// # Safety
    ///
    /// Over the producer's life, no index may be asked for twice: the ranges of all calls are
    /// pairwise disjoint. (Producers of `&mut` or owned items rely on it.)
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_>;

    /// How the terminal call should split the index space.
    fn hints(&self) -> Hints {
        Hints::default()
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
    /// maximum, the first explicit schedule, the first sequence of rounds.
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
        }
    }
}
