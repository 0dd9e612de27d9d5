//! `intersperse` (rayon's): a clone of a separator between each two items, as std's (unstable)
//! `Iterator::intersperse`, none before the first or after the last.
//!
//! On an indexed iterator it is indexed too: `n` items become `2n - 1` (0 stays 0), the base's
//! item `i` standing at index `2i` and a separator at each odd index. A range `a..b` of the
//! result then reads the base's items `(a + 1) / 2 .. (b + 1) / 2`, starting with a separator
//! when `a` is odd, so disjoint ranges read disjoint items, and the result zips, enumerates,
//! reverses and splits like any indexed iterator.
//!
//! On an unindexed iterator (after `filter`, say) a range cannot know whether the ranges before
//! it yield any item, so whether its first item needs a separator before it. Here the base's
//! items are **gathered first**, at the terminal call: one parallel call collects them in
//! order into a `Vec` (as `collect` would), and the result is that `Vec`'s items interspersed
//! as above. So it costs the items' memory and one more parallel call, and the base's closures
//! have all run before the first closure after `intersperse` runs; in exchange no separator ever
//! leads or trails. (rayon's streams, and its result starts with a separator when the first
//! part of the split yields no item: a right half always leads with one.)
//!
//! The separator is kept behind a lock, taken once per range to clone it, so `intersperse`
//! needs `Item: Clone + Send`, as rayon's, not `Sync`.

use std::fmt;
use std::iter::Rev;
use std::ops::Range;
use std::sync::Mutex;

use either::Either;

use crate::internal::deferred::Deferred;
use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::source::sources::clone_of;
use crate::source::vec::{IntoIter, SliceDrain};
use crate::terminal::collect::extend_vec;
use crate::IndexedParallelIterator;

/// The items with a clone of a separator between each two (`intersperse`); see the
/// [module docs](self).
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Intersperse<I: Producer> {
    base: Base<I>,
    separator: Mutex<I::Item>,
}

/// Where an [`Intersperse`] reads the base's items.
enum Base<I: Producer> {
    /// An indexed base, read in place.
    Indexed(I),
    /// An unindexed one, its items gathered into a `Vec` at the first call; its hints.
    Gathered(Deferred<I, I::Item>, Hints),
}

impl<I: Producer> Intersperse<I> {
    pub(crate) fn new(base: I, separator: I::Item) -> Self {
        let base = if I::EXACT {
            Base::Indexed(base)
        } else {
            let hints = base.hints();
            Base::Gathered(Deferred::new(base), hints)
        };
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

impl<I: Producer> Base<I> {
    /// The gathered items of an unindexed base (made at the first call).
    fn gathered(items: &Deferred<I, I::Item>) -> &IntoIter<I::Item> {
        items.items(|base| {
            let mut v = Vec::new();
            extend_vec(base, &mut v);
            v
        })
    }

    /// How many items the base has.
    fn len(&self) -> usize {
        match self {
            Base::Indexed(base) => base.base_len(),
            Base::Gathered(items, _) => Self::gathered(items).base_len(),
        }
    }
}

// The clones take the separator under its lock, as each range does; a gathered base's clone
// is its input's, or its items' once they are made (see `Deferred`).
impl<I: Producer + Clone> Clone for Intersperse<I>
where
    I::Item: Clone,
{
    fn clone(&self) -> Self {
        Self {
            base: self.base.clone(),
            separator: Mutex::new(clone_of(&self.separator)),
        }
    }
}

impl<I: Producer + Clone> Clone for Base<I>
where
    I::Item: Clone,
{
    fn clone(&self) -> Self {
        match self {
            Base::Indexed(base) => Base::Indexed(base.clone()),
            Base::Gathered(items, hints) => Base::Gathered(items.clone(), *hints),
        }
    }
}

impl<I: Producer + fmt::Debug> fmt::Debug for Intersperse<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Intersperse");
        match &self.base {
            Base::Indexed(base) => d.field("base", base),
            Base::Gathered(items, _) => d.field("gathered", &items.made()),
        };
        d.finish_non_exhaustive()
    }
}

/// The base's indices under a range of the result's: those `i` with `2i` in `range`.
#[inline]
fn base_range(range: &Range<usize>) -> Range<usize> {
    range.start.div_ceil(2)..range.end.div_ceil(2)
}

impl<I> Producer for Intersperse<I>
where
    I: Producer,
    I::Item: Clone,
{
    type Item = I::Item;
    type Seq<'a>
        = IntersperseSeq<Either<I::Seq<'a>, SliceDrain<'a, I::Item>>, I::Item>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;

    /// # Panics
    ///
    /// If `2n - 1` does not fit a `usize` (for `n` base items).
    fn base_len(&self) -> usize {
        match self.base.len() {
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
        // base ranges; within `0..2n - 1`, they lie within `0..n` (of the base, or of the
        // gathered items, which stand one for one at their indices).
        let items = unsafe {
            match &self.base {
                Base::Indexed(base) => Either::Left(base.seq(base_range(&range))),
                Base::Gathered(items, _) => {
                    Either::Right(Base::gathered(items).seq(base_range(&range)))
                }
            }
        };
        self.seq_over(range.len(), range.start, items)
    }

    fn hints(&self) -> Hints {
        match &self.base {
            Base::Indexed(base) => base.hints(),
            Base::Gathered(_, hints) => *hints,
        }
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
        = IntersperseSeq<Either<I::SeqRev<'a>, Rev<SliceDrain<'a, I::Item>>>, I::Item>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`.
        let items = unsafe {
            match &self.base {
                Base::Indexed(base) => Either::Left(base.seq_rev(base_range(&range))),
                Base::Gathered(items, _) => {
                    Either::Right(Base::gathered(items).seq_rev(base_range(&range)))
                }
            }
        };
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
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

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
    fn after_filter_no_separator_leads_or_trails() {
        on_every_team(|k| {
            for n in [0usize, 1, 2, 7, 1000] {
                // kept: none; only the last (the first ranges yield nothing); only the first;
                // every third
                let keeps: [&(dyn Fn(usize) -> bool + Sync); 4] =
                    [&|_| false, &|i| i + 1 == n, &|i| i == 0, &|i| i % 3 == 1];
                for (which, keep) in keeps.iter().enumerate() {
                    let kept: Vec<i64> = (0..n).filter(|&i| keep(i)).map(|i| i as i64).collect();
                    let want = interspersed(&kept, -1);
                    for max_len in [0, 1, 3] {
                        let it = || {
                            (0..n)
                                .into_par_iter()
                                .with_max_len(max_len)
                                .filter(|&i| keep(i))
                                .map(|i| i as i64)
                                .intersperse(-1)
                        };
                        let got: Vec<i64> = it().collect();
                        assert_eq!(got, want, "team of {k}, {n} items, keep {which}, {max_len}");
                        let separators = AtomicUsize::new(0);
                        it().for_each(|x| {
                            if x == -1 {
                                separators.fetch_add(1, Ordering::Relaxed);
                            }
                        });
                        let want_separators = kept.len().saturating_sub(1);
                        assert_eq!(separators.into_inner(), want_separators, "team of {k}");
                        assert_eq!(it().count(), want.len(), "team of {k}");
                    }
                }
            }
        });
    }

    #[test]
    fn an_unindexed_base_is_gathered_once_and_its_items_are_moved() {
        on_every_team(|k| {
            let made = AtomicUsize::new(0);
            let words: Vec<String> = (0..300i32)
                .into_par_iter()
                .filter(|i| i % 2 == 0)
                .map(|i| {
                    made.fetch_add(1, Ordering::Relaxed);
                    i.to_string()
                })
                .intersperse(String::from(","))
                .collect();
            assert_eq!(made.into_inner(), 150, "team of {k}");
            let want: Vec<String> = (0..300).step_by(2).map(|i: i32| i.to_string()).collect();
            assert_eq!(words.concat(), want.join(","), "team of {k}");
            // into a String through its pieces, as a rayon program would
            let line: String = "a  b c   d"
                .par_split_whitespace()
                .intersperse(" ")
                .collect();
            assert_eq!(line, "a b c d", "team of {k}");
        });
    }

    #[test]
    fn a_panic_while_gathering_reaches_the_caller_and_drops_what_was_made() {
        let live = AtomicUsize::new(0);
        struct Counted<'a>(&'a AtomicUsize);
        impl Clone for Counted<'_> {
            fn clone(&self) -> Self {
                self.0.fetch_add(1, Ordering::Relaxed);
                Counted(self.0)
            }
        }
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        on_every_team(|k| {
            let r = catch_unwind(AssertUnwindSafe(|| {
                live.fetch_add(1, Ordering::Relaxed);
                (0..100)
                    .into_par_iter()
                    .filter(|i| i % 2 == 0)
                    .map(|i| {
                        assert!(i != 64, "item 64");
                        live.fetch_add(1, Ordering::Relaxed);
                        Counted(&live)
                    })
                    .intersperse(Counted(&live))
                    .for_each(drop);
            }));
            let msg = r.expect_err("the panic reaches the caller");
            assert_eq!(msg.downcast_ref::<&str>(), Some(&"item 64"), "team of {k}");
            assert_eq!(live.load(Ordering::Relaxed), 0, "team of {k}: all dropped");
            // and the runtime is usable afterwards
            let n = (0..10)
                .into_par_iter()
                .filter(|i| i % 2 == 0)
                .intersperse(0)
                .count();
            assert_eq!(n, 9, "team of {k}");
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
