//! The comparisons of two indexed iterators (`cmp`, `partial_cmp`, `eq`, `ne`, `lt`, `le`,
//! `gt`, `ge`): lexicographic, as std's `Iterator` methods of the same names.
//!
//! The items are compared pairwise in one region (a `zip`); the first pair in index order that
//! is not equal decides, and if there is none, the shorter iterator is the smaller. `eq` and
//! `ne` compare the lengths first and stop every member once a pair differs (as `all` does);
//! the orderings compare every pair of each member's range up to that range's first
//! difference.

use std::cmp::Ordering;

use crate::{IndexedParallelIterator, ParallelIterator};

/// `a.cmp(b)`.
pub(crate) fn cmp<A, B>(a: A, b: B) -> Ordering
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
    A::Item: Ord,
{
    let lens = a.len().cmp(&b.len());
    a.zip(b)
        .map(|(x, y)| Ord::cmp(&x, &y))
        .find_first(|&o| o != Ordering::Equal)
        .unwrap_or(lens)
}

/// `a.partial_cmp(b)`.
pub(crate) fn partial_cmp<A, B>(a: A, b: B) -> Option<Ordering>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
    A::Item: PartialOrd<B::Item>,
{
    let lens = a.len().cmp(&b.len());
    a.zip(b)
        .map(|(x, y)| PartialOrd::partial_cmp(&x, &y))
        .find_first(|&o| o != Some(Ordering::Equal))
        .unwrap_or(Some(lens))
}

/// `a.eq(b)`.
pub(crate) fn eq<A, B>(a: A, b: B) -> bool
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator,
    A::Item: PartialEq<B::Item>,
{
    a.len() == b.len() && a.zip(b).all(|(x, y)| PartialEq::eq(&x, &y))
}
