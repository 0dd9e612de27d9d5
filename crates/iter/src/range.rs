//! Parallel iterators over integer ranges: `(a..b).into_par_iter()` and
//! `(a..=b).into_par_iter()` for every primitive integer type up to 64 bits.

use std::ops::{Range, RangeInclusive};

use crate::plumbing::{DoubleEndedProducer, Producer};
use crate::{IndexedParallelIterator, IntoParallelIterator};

/// A parallel iterator over a range `a..b`.
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Iter<T> {
    range: Range<T>,
}

/// A parallel iterator over a range `a..=b` (kept inclusive so that a range ending at the
/// type's maximum works).
#[derive(Clone, Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct IterInclusive<T> {
    range: RangeInclusive<T>,
}

// One generic impl per range type, as rayon has: a literal range's integer type is then
// inferred from how the items are used (or falls back to i32), instead of being ambiguous.
impl<T> IntoParallelIterator for Range<T>
where
    Iter<T>: IndexedParallelIterator<Item = T>,
    T: Send,
{
    type Iter = Iter<T>;
    type Item = T;

    fn into_par_iter(self) -> Iter<T> {
        Iter { range: self }
    }
}

impl<T> IntoParallelIterator for RangeInclusive<T>
where
    IterInclusive<T>: IndexedParallelIterator<Item = T>,
    T: Send,
{
    type Iter = IterInclusive<T>;
    type Item = T;

    fn into_par_iter(self) -> IterInclusive<T> {
        IterInclusive { range: self }
    }
}

macro_rules! ranges {
    ($($t:ty),*) => {$(
        impl Producer for Iter<$t> {
            type Item = $t;
            type Seq<'a> = Range<$t>;
            const EXACT: bool = true;

            #[inline]
            fn base_len(&self) -> usize {
                let Range { start, end } = self.range;
                if start < end {
                    len_of(end as i128 - start as i128, stringify!($t))
                } else {
                    0
                }
            }

            #[inline]
            unsafe fn seq(&self, r: Range<usize>) -> Range<$t> {
                // Offsets within the range's length fit the type (the range is made of it).
                let at = |i: usize| (self.range.start as i128 + i as i128) as $t;
                at(r.start)..at(r.end)
            }
        }

        impl IndexedParallelIterator for Iter<$t> {}

        impl DoubleEndedProducer for Iter<$t> {
            type SeqRev<'a> = std::iter::Rev<Range<$t>>;

            #[inline]
            unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
                // SAFETY: integers: nothing to keep apart.
                unsafe { self.seq(r) }.rev()
            }
        }

        impl Producer for IterInclusive<$t> {
            type Item = $t;
            type Seq<'a> = RangeInclusive<$t>;
            const EXACT: bool = true;

            #[inline]
            fn base_len(&self) -> usize {
                let (start, end) = (*self.range.start(), *self.range.end());
                if self.range.is_empty() {
                    0
                } else {
                    len_of(end as i128 - start as i128 + 1, stringify!($t))
                }
            }

            #[inline]
            unsafe fn seq(&self, r: Range<usize>) -> RangeInclusive<$t> {
                let at = |i: usize| (*self.range.start() as i128 + i as i128) as $t;
                if r.is_empty() {
                    let mut none = at(0)..=at(0);
                    none.next();
                    none
                } else {
                    at(r.start)..=at(r.end - 1)
                }
            }
        }

        impl IndexedParallelIterator for IterInclusive<$t> {}

        impl DoubleEndedProducer for IterInclusive<$t> {
            type SeqRev<'a> = std::iter::Rev<RangeInclusive<$t>>;

            #[inline]
            unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
                // SAFETY: integers: nothing to keep apart.
                unsafe { self.seq(r) }.rev()
            }
        }
    )*};
}

/// A range's length as a `usize`.
///
/// # Panics
///
/// If the length does not fit a `usize` (only `u64`/`i64` ranges on 32-bit targets, and the
/// full `0..=u64::MAX`): such a loop could not be indexed.
fn len_of(n: i128, ty: &str) -> usize {
    usize::try_from(n).unwrap_or_else(|_| {
        panic!("into_par_iter: a {ty} range of {n} items: must have at most usize::MAX items")
    })
}

ranges! { u8, u16, u32, u64, usize, i8, i16, i32, i64, isize }
