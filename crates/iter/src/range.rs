//! Parallel iterators over ranges: `(a..b).into_par_iter()` and `(a..=b).into_par_iter()` for
//! every primitive integer type and for `char`, all indexed, as rayon's.
//!
//! A range's items must number at most `usize::MAX` (its length is an index); a longer one
//! (`0..=u64::MAX`, a wide `u128` range) panics at the terminal call, saying so, where rayon
//! runs it unindexed. A `char` range skips the surrogates (`'\u{D800}'..='\u{DFFF}'`, which
//! are not `char`s), as std's does.

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

// The producers of `a..b` and `a..=b` over any integer type and `char` (see `RangeItem`).
impl<T: RangeItem> Producer for Iter<T>
where
    Range<T>: DoubleEndedIterator<Item = T>,
{
    type Item = T;
    type Seq<'a> = Range<T>;
    const EXACT: bool = true;
    const PURE: bool = true;

    #[inline]
    fn base_len(&self) -> usize {
        let Range { start, end } = self.range;
        if start < end {
            len_of::<T>(Some(T::count(start, end)))
        } else {
            0
        }
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Range<T> {
        let at = |i: usize| T::offset(self.range.start, i);
        at(r.start)..at(r.end)
    }
}

impl<T> IndexedParallelIterator for Iter<T>
where
    T: RangeItem,
    Range<T>: DoubleEndedIterator<Item = T>,
{
}

impl<T: RangeItem> DoubleEndedProducer for Iter<T>
where
    Range<T>: DoubleEndedIterator<Item = T>,
{
    type SeqRev<'a> = std::iter::Rev<Range<T>>;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: plain values: nothing to keep apart.
        unsafe { self.seq(r) }.rev()
    }
}

impl<T: RangeItem> Producer for IterInclusive<T>
where
    RangeInclusive<T>: DoubleEndedIterator<Item = T>,
{
    type Item = T;
    type Seq<'a> = RangeInclusive<T>;
    const EXACT: bool = true;
    const PURE: bool = true;

    #[inline]
    fn base_len(&self) -> usize {
        if self.range.is_empty() {
            0
        } else {
            let last = T::count(*self.range.start(), *self.range.end());
            len_of::<T>(last.checked_add(1))
        }
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> RangeInclusive<T> {
        let at = |i: usize| T::offset(*self.range.start(), i);
        if r.is_empty() {
            let mut none = at(0)..=at(0);
            none.next();
            none
        } else {
            at(r.start)..=at(r.end - 1)
        }
    }
}

impl<T: RangeItem> IndexedParallelIterator for IterInclusive<T> where
    RangeInclusive<T>: DoubleEndedIterator<Item = T>
{
}

impl<T: RangeItem> DoubleEndedProducer for IterInclusive<T>
where
    RangeInclusive<T>: DoubleEndedIterator<Item = T>,
{
    type SeqRev<'a> = std::iter::Rev<RangeInclusive<T>>;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: plain values: nothing to keep apart.
        unsafe { self.seq(r) }.rev()
    }
}

/// A range's length as a `usize` (`None`: 2^128).
///
/// # Panics
///
/// If the length does not fit a `usize` (`u64`/`i64` ranges on 32-bit targets, the full
/// `0..=u64::MAX`, wide 128-bit ranges): such a loop could not be indexed.
#[inline]
fn len_of<T>(n: Option<u128>) -> usize {
    match n.map(usize::try_from) {
        Some(Ok(n)) => n,
        _ => too_long(n, std::any::type_name::<T>()),
    }
}

#[cold]
#[inline(never)]
fn too_long(n: Option<u128>, ty: &str) -> ! {
    let n = n.map_or_else(|| "2^128".to_owned(), |n| n.to_string());
    panic!("into_par_iter: a range of {n} {ty} items: must have at most usize::MAX items")
}

mod sealed {
    /// What a range's items are (every primitive integer type, and `char`): how many lie
    /// between two, and the one some places after another.
    pub trait RangeItem: Copy + PartialOrd + Send + Sync + 'static {
        /// How many items lie in `start..end`, for `start < end`.
        fn count(start: Self, end: Self) -> u128;
        /// The item `i` places after `start`, for an `i` that stays within the range or
        /// reaches its end.
        fn offset(start: Self, i: usize) -> Self;
    }
}
use sealed::RangeItem;

/// Up to 64 bits: in `i128`, which holds every difference.
macro_rules! narrow {
    ($($t:ty),*) => {$(
        impl RangeItem for $t {
            #[inline]
            fn count(start: Self, end: Self) -> u128 {
                (end as i128 - start as i128) as u128
            }

            #[inline]
            fn offset(start: Self, i: usize) -> Self {
                // Offsets within the range's length fit the type (the range is made of it).
                (start as i128 + i as i128) as $t
            }
        }
    )*};
}

/// 128 bits: in the type's own wrapping arithmetic (a difference of two `i128`s need not fit
/// an `i128`; modulo 2^128 it is exact).
macro_rules! wide {
    ($($t:ty),*) => {$(
        impl RangeItem for $t {
            #[inline]
            fn count(start: Self, end: Self) -> u128 {
                (end as u128).wrapping_sub(start as u128)
            }

            #[inline]
            fn offset(start: Self, i: usize) -> Self {
                start.wrapping_add(i as $t)
            }
        }
    )*};
}

narrow! { u8, u16, u32, u64, usize, i8, i16, i32, i64, isize }
wide! { u128, i128 }

/// The first surrogate and the number of them: code points that are not `char`s.
const SURROGATES: (u32, u32) = (0xD800, 0x800);

impl RangeItem for char {
    #[inline]
    fn count(start: char, end: char) -> u128 {
        let (s, e) = (start as u32, end as u32);
        let gap = if s < SURROGATES.0 && e > SURROGATES.0 {
            SURROGATES.1
        } else {
            0
        };
        u128::from(e - s - gap)
    }

    #[inline]
    fn offset(start: char, i: usize) -> char {
        let s = start as u32;
        // `i` is below 0x110000 (the distance between two chars), so this neither overflows
        // nor truncates.
        let v = s + i as u32;
        let v = if s < SURROGATES.0 && v >= SURROGATES.0 {
            v + SURROGATES.1
        } else {
            v
        };
        char::from_u32(v).expect("a char range's offsets stay on chars")
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    #[should_panic(expected = "into_par_iter: a range of 2^128 u128 items: must have at most")]
    fn the_whole_u128_range_says_it_is_too_long() {
        let _ = (0..=u128::MAX).into_par_iter().len();
    }

    #[test]
    #[should_panic(
        expected = "into_par_iter: a range of 340282366920938463463374607431768211455 \
                               i128 items: must have at most usize::MAX items"
    )]
    fn a_wide_i128_range_says_it_is_too_long() {
        let _ = (i128::MIN..i128::MAX).into_par_iter().count();
    }

    #[test]
    fn the_longest_ranges_that_fit() {
        let n = usize::MAX as u128;
        assert_eq!((0..n).into_par_iter().len(), usize::MAX);
        assert_eq!((1..=n).into_par_iter().len(), usize::MAX);
        assert_eq!(('\0'..=char::MAX).into_par_iter().len(), 0x110000 - 0x800);
        assert_eq!(('\0'..char::MAX).into_par_iter().count(), 0x110000 - 0x801);
    }
}
