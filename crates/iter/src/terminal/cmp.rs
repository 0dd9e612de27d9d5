//! The comparisons of two indexed iterators (`cmp`, `partial_cmp`, `eq`, `ne`, `lt`, `le`,
//! `gt`, `ge`): lexicographic, as std's `Iterator` methods of the same names.
//!
//! The items are compared pairwise in one region (a `zip`); the first pair in index order that
//! is not equal decides, and if there is none, the shorter iterator is the smaller. `eq` and
//! `ne` compare the lengths first and stop every member once a pair differs (as `all` does);
//! the orderings compare every pair of each member's range up to that range's first
//! difference.

use std::cmp::Ordering;

use crate::ParallelIterator;

/// `a.cmp(b)`, from `a.len().cmp(&b.len())` and `a.zip(b)`.
pub(crate) fn cmp<P, T>(lens: Ordering, pairs: P) -> Ordering
where
    P: ParallelIterator<Item = (T, T)>,
    T: Ord,
{
    pairs
        .map(|(x, y)| Ord::cmp(&x, &y))
        .find_first(|&o| o != Ordering::Equal)
        .unwrap_or(lens)
}

/// `a.partial_cmp(b)`, from `a.len().cmp(&b.len())` and `a.zip(b)`.
pub(crate) fn partial_cmp<P, T, U>(lens: Ordering, pairs: P) -> Option<Ordering>
where
    P: ParallelIterator<Item = (T, U)>,
    T: PartialOrd<U>,
{
    pairs
        .map(|(x, y)| PartialOrd::partial_cmp(&x, &y))
        .find_first(|&o| o != Some(Ordering::Equal))
        .unwrap_or(Some(lens))
}

/// `a.eq(b)`, from whether `a` and `b` have the same length and `a.zip(b)`.
pub(crate) fn eq<P, T, U>(same_len: bool, pairs: P) -> bool
where
    P: ParallelIterator<Item = (T, U)>,
    T: PartialEq<U>,
{
    same_len && pairs.all(|(x, y)| PartialEq::eq(&x, &y))
}
