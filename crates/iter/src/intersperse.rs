//! `intersperse` (rayon's): a clone of a separator between each two items, as std's (unstable)
//! `Iterator::intersperse`, none before the first or after the last.
//!
//! Here on indexed iterators only, where it is indexed too: `n` items become `2n - 1` (0 stays
//! 0), the base's item `i` standing at index `2i` and a separator at each odd index. A range
//! `a..b` of the result then reads the base's items `(a + 1) / 2 .. (b + 1) / 2`, starting
//! with a separator when `a` is odd, so disjoint ranges read disjoint items, and the result
//! zips, enumerates, reverses and splits like any indexed iterator. (rayon also has it on
//! unindexed iterators, after `filter` say; there a range cannot know whether the ranges before
//! it yield any item, so whether its first item needs a separator before it, and rayon's can
//! start with one when they yield none. It is left out here rather than given that result.)
//!
//! The separator is kept behind a lock, taken once per range to clone it, so `intersperse`
//! needs `Item: Clone + Send`, as rayon's, not `Sync`.

use std::fmt;
use std::ops::Range;
use std::sync::Mutex;

use crate::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::sources::clone_of;
use crate::IndexedParallelIterator;

/// The items with a clone of a separator between each two (`intersperse`); see the
/// [module docs](self).
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Intersperse<I: Producer> {
    base: I,
    separator: Mutex<I::Item>,
}

impl<I: Producer> Intersperse<I> {
    pub(crate) fn new(base: I, separator: I::Item) -> Self {
        Self {
            base,
            separator: Mutex::new(separator),
        }
    }

    /// The sequential side over `len` indices of the result whose base items are `items`,
    /// the first index it yields being `first` (a range's first, or its last when read
    /// backwards).
    #[inline]
    fn seq_over<J>(&self, len: usize, first: usize, items: J) -> IntersperseSeq<J, I::Item>
    where
        I::Item: Clone,
    {
        IntersperseSeq {
            items,
            separator: clone_of(&self.separator),
            separator_next: first % 2 == 1,
            left: len,
        }
    }
}

impl<I: Producer + fmt::Debug> fmt::Debug for Intersperse<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Intersperse")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// The base's indices under a range of the result's: those `i` with `2i` in `range`.
#[inline]
fn base_range(range: &Range<usize>) -> Range<usize> {
    range.start.div_ceil(2)..range.end.div_ceil(2)
}

impl<I> Producer for Intersperse<I>
where
    I: IndexedParallelIterator,
    I::Item: Clone,
{
    type Item = I::Item;
    type Seq<'a>
        = IntersperseSeq<I::Seq<'a>, I::Item>
    where
        Self: 'a;
    const EXACT: bool = true;

    /// # Panics
    ///
    /// If `2n - 1` does not fit a `usize` (for `n` base items).
    fn base_len(&self) -> usize {
        match self.base.base_len() {
            0 => 0,
            n => (n - 1)
                .checked_mul(2)
                .and_then(|m| m.checked_add(1))
                .unwrap_or_else(|| {
                    panic!("intersperse: {n} items and their separators overflow usize")
                }),
        }
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: `i -> 2i` is one to one, so disjoint ranges of the result have disjoint
        // base ranges; within `0..2n - 1`, they lie within `0..n`.
        let items = unsafe { self.base.seq(base_range(&range)) };
        self.seq_over(range.len(), range.start, items)
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I> IndexedParallelIterator for Intersperse<I>
where
    I: IndexedParallelIterator,
    I::Item: Clone,
{
}

impl<I> DoubleEndedProducer for Intersperse<I>
where
    I: IndexedParallelIterator,
    I::Item: Clone,
{
    type SeqRev<'a>
        = IntersperseSeq<I::SeqRev<'a>, I::Item>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`.
        let items = unsafe { self.base.seq_rev(base_range(&range)) };
        self.seq_over(range.len(), range.end.saturating_sub(1), items)
    }
}

/// The sequential side of [`Intersperse`]: `left` more items, alternating between the base's
/// and the separator.
#[derive(Debug)]
pub struct IntersperseSeq<J, T> {
    items: J,
    separator: T,
    separator_next: bool,
    left: usize,
}

impl<J: Iterator<Item = T>, T: Clone> Iterator for IntersperseSeq<J, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        if self.separator_next {
            self.separator_next = false;
            Some(self.separator.clone())
        } else {
            self.separator_next = true;
            self.items.next()
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use crate::prelude::*;
    use crate::testing::on_every_team;

    /// std's (unstable) `intersperse` of `v` with `sep`.
    fn interspersed(v: &[i64], sep: i64) -> Vec<i64> {
        v.iter().flat_map(|&x| [sep, x]).skip(1).collect()
    }

    #[test]
    fn separators_stand_between_the_items_at_the_odd_indices() {
        on_every_team(|k| {
            for n in [0, 1, 2, 3, 10, 1001] {
                let v: Vec<i64> = (1..=n).collect();
                let want = interspersed(&v, -1);
                for max_len in [0, 1, 4] {
                    let it = || v.par_iter().copied().with_max_len(max_len).intersperse(-1);
                    assert_eq!(it().len(), want.len(), "team of {k}, {n}");
                    assert_eq!(
                        it().collect::<Vec<_>>(),
                        want,
                        "team of {k}, {n}, {max_len}"
                    );
                    let back: Vec<i64> = it().rev().collect();
                    assert!(
                        back.iter().eq(want.iter().rev()),
                        "team of {k}, {n}, {max_len}"
                    );
                    // ranges that start (and end) at a separator
                    let inner = want.len().saturating_sub(2);
                    let mid: Vec<i64> = it().skip(1).take(inner).collect();
                    assert!(
                        mid.iter().eq(want.iter().skip(1).take(inner)),
                        "team of {k}, {n}"
                    );
                    let at: Vec<(usize, i64)> =
                        it().enumerate().filter(|&(_, x)| x == -1).collect();
                    assert!(at.iter().all(|&(i, _)| i % 2 == 1), "team of {k}, {n}");
                    let sum: i64 = it().zip(0..3).map(|(x, _)| x).sum();
                    assert_eq!(sum, want.iter().take(3).sum::<i64>(), "team of {k}, {n}");
                }
            }
        });
    }

    #[test]
    fn the_separator_need_not_be_sync() {
        on_every_team(|k| {
            let v: Vec<Cell<u32>> = (0..100).map(Cell::new).collect();
            let got: Vec<u32> = v
                .into_par_iter()
                .intersperse(Cell::new(7))
                .map(Cell::into_inner)
                .collect();
            assert_eq!(got.len(), 199, "team of {k}");
            assert!(
                got.iter().skip(1).step_by(2).all(|&x| x == 7),
                "team of {k}"
            );
            assert!(got.iter().step_by(2).copied().eq(0..100), "team of {k}");
        });
    }

    #[test]
    fn the_longest_length_that_fits_is_usize_max() {
        let n = usize::MAX / 2 + 1;
        assert_eq!(crate::repeat_n(0u8, n).intersperse(1).len(), usize::MAX);
    }

    #[test]
    #[should_panic(
        expected = "intersperse: 18446744073709551615 items and their separators overflow usize"
    )]
    #[cfg(target_pointer_width = "64")]
    fn a_length_that_overflows_says_so() {
        let _ = crate::repeat_n(0u8, usize::MAX).intersperse(1).len();
    }
}
