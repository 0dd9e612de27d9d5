//! Parallel iterators over ranges: `(a..b).into_par_iter()` and `(a..=b).into_par_iter()` for
//! every primitive integer type and for `char`.
//!
//! Ranges of `u128` and `i128` are not indexed, as rayon's are not, and may hold any number of
//! items: a range of more than `usize::MAX` lays them on `usize::MAX` indices, one item an
//! index in the first and the last quarter and the rest spread evenly over the middle half, so
//! that a search finds a hit near either end after a few items and the members' ranges start
//! near the items rayon's halves would (`with_min_len` and `with_max_len` count indices).
//! Every other range is indexed (rayon's
//! `u64`, `i64` and wider inclusive ranges are not: here they can be zipped and enumerated
//! too), so its items must number at most `usize::MAX` (its length is an index): the full
//! `0..=u64::MAX` panics at the terminal call, saying so, where rayon runs it. A `char` range
//! skips the surrogates (`'\u{D800}'..='\u{DFFF}'`, which are not `char`s), as std's does.

use std::ops::{Range, RangeInclusive};

use crate::internal::plumbing::{DoubleEndedProducer, Producer};
use crate::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

mod wide;

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
    Iter<T>: ParallelIterator<Item = T>,
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
    IterInclusive<T>: ParallelIterator<Item = T>,
    T: Send,
{
    type Iter = IterInclusive<T>;
    type Item = T;

    fn into_par_iter(self) -> IterInclusive<T> {
        IterInclusive { range: self }
    }
}

// One generic producer per range type, as rayon has one generic `ParallelIterator` impl: its
// `Item = T` then holds before `T` is known, so a literal range's type is inferred from the
// items' use. How the items lie on indices is the item type's (see `RangeItem`).
impl<T: RangeItem> Producer for Iter<T> {
    type Item = T;
    type Seq<'a> = T::Seq;
    const EXACT: bool = T::INDEXED;
    const PURE: bool = true;

    #[inline]
    fn base_len(&self) -> usize {
        T::len(&self.range)
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> T::Seq {
        T::seq(&self.range, r)
    }

    #[inline]
    fn known_len(&self) -> Option<usize> {
        T::known_len(self.base_len())
    }
}

impl<T> IndexedParallelIterator for Iter<T>
where
    T: Indexed,
    Range<T>: DoubleEndedIterator<Item = T>,
{
}

impl<T: Indexed> DoubleEndedProducer for Iter<T>
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

impl<T: RangeItem> Producer for IterInclusive<T> {
    type Item = T;
    type Seq<'a> = T::SeqInclusive;
    const EXACT: bool = T::INDEXED;
    const PURE: bool = true;

    #[inline]
    fn base_len(&self) -> usize {
        T::len_inclusive(&self.range)
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> T::SeqInclusive {
        T::seq_inclusive(&self.range, r)
    }

    #[inline]
    fn known_len(&self) -> Option<usize> {
        T::known_len(self.base_len())
    }
}

impl<T: Indexed> IndexedParallelIterator for IterInclusive<T> where
    RangeInclusive<T>: DoubleEndedIterator<Item = T>
{
}

impl<T: Indexed> DoubleEndedProducer for IterInclusive<T>
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

/// `range`'s length, for the indexed types.
#[inline]
fn indexed_len<T: Stepped>(range: &Range<T>) -> usize {
    let Range { start, end } = *range;
    if start < end {
        len_of::<T>(Some(T::count(start, end)))
    } else {
        0
    }
}

/// `range`'s length, for the indexed types.
#[inline]
fn indexed_len_inclusive<T: Stepped>(range: &RangeInclusive<T>) -> usize {
    if range.is_empty() {
        0
    } else {
        let last = T::count(*range.start(), *range.end());
        len_of::<T>(last.checked_add(1))
    }
}

/// The items at indices `r` of `range`, for the indexed types.
#[inline]
fn indexed_seq<T: Stepped>(range: &Range<T>, r: Range<usize>) -> Range<T> {
    let at = |i: usize| T::offset(range.start, i);
    at(r.start)..at(r.end)
}

/// An empty `a..=b` (`at..=at` run through).
#[inline]
fn empty_inclusive<T: Copy>(at: T) -> RangeInclusive<T>
where
    RangeInclusive<T>: Iterator,
{
    let mut none = at..=at;
    none.next();
    none
}

/// The items at indices `r` of `range`, for the indexed types.
#[inline]
fn indexed_seq_inclusive<T: Stepped>(
    range: &RangeInclusive<T>,
    r: Range<usize>,
) -> RangeInclusive<T>
where
    RangeInclusive<T>: Iterator,
{
    let at = |i: usize| T::offset(*range.start(), i);
    if r.is_empty() {
        empty_inclusive(at(0))
    } else {
        at(r.start)..=at(r.end - 1)
    }
}

/// A range's length as a `usize` (`None`: 2^128).
///
/// # Panics
///
/// If the length does not fit a `usize` (`u64`/`i64` ranges on 32-bit targets, the full
/// `0..=u64::MAX`): such a loop could not be indexed.
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
    use std::ops::{Range, RangeInclusive};

    /// What a range's items are (every primitive integer type, and `char`), and how they lie
    /// on the range's indices.
    pub trait RangeItem: Copy + PartialOrd + Send + Sync + 'static {
        /// One item stands at each index (all types but `u128` and `i128`).
        const INDEXED: bool;
        /// The items at some indices of `a..b`, and of `a..=b`.
        type Seq: Iterator<Item = Self>;
        type SeqInclusive: Iterator<Item = Self>;
        /// How many indices `range` has.
        fn len(range: &Range<Self>) -> usize;
        fn len_inclusive(range: &RangeInclusive<Self>) -> usize;
        /// The items at indices `r` of `range`.
        fn seq(range: &Range<Self>, r: Range<usize>) -> Self::Seq;
        fn seq_inclusive(range: &RangeInclusive<Self>, r: Range<usize>) -> Self::SeqInclusive;
        /// The number of items of a range of `len` indices, when that tells it: always for
        /// the indexed types; for the others below `usize::MAX` indices (one item each).
        fn known_len(len: usize) -> Option<usize> {
            (Self::INDEXED || len < usize::MAX).then_some(len)
        }
    }

    /// The items of indexed ranges: one at each index, their sequences std's ranges.
    #[diagnostic::on_unimplemented(
        message = "ranges of `{Self}` are not indexed (as rayon's are not): no `len`, `zip`, \
                   `enumerate`, `rev` or `with_min_len`",
        label = "an unindexed range",
        note = "every other integer type's ranges are indexed; `count()` gives the length"
    )]
    pub trait Indexed:
        RangeItem<Seq = Range<Self>, SeqInclusive = RangeInclusive<Self>> + Stepped
    {
    }

    /// Items that step one index at a time: how many lie between two, and the one some
    /// places after another.
    pub trait Stepped: Copy + PartialOrd + 'static {
        /// How many items lie in `start..end`, for `start < end`.
        fn count(start: Self, end: Self) -> u128;
        /// The item `i` places after `start`, for an `i` that stays within the range or
        /// reaches its end.
        fn offset(start: Self, i: usize) -> Self;
    }
}
use sealed::{Indexed, RangeItem, Stepped};

/// `RangeItem` and `Indexed` for types that are `Stepped`.
macro_rules! indexed {
    ($($t:ty),*) => {$(
        impl RangeItem for $t {
            const INDEXED: bool = true;
            type Seq = Range<$t>;
            type SeqInclusive = RangeInclusive<$t>;

            #[inline]
            fn len(range: &Range<Self>) -> usize {
                indexed_len(range)
            }

            #[inline]
            fn len_inclusive(range: &RangeInclusive<Self>) -> usize {
                indexed_len_inclusive(range)
            }

            #[inline]
            fn seq(range: &Range<Self>, r: Range<usize>) -> Range<Self> {
                indexed_seq(range, r)
            }

            #[inline]
            fn seq_inclusive(
                range: &RangeInclusive<Self>,
                r: Range<usize>,
            ) -> RangeInclusive<Self> {
                indexed_seq_inclusive(range, r)
            }
        }

        impl Indexed for $t {}
    )*};
}

/// Up to 64 bits: in `i128`, which holds every difference.
macro_rules! narrow {
    ($($t:ty),*) => {$(
        impl Stepped for $t {
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

narrow! { u8, u16, u32, u64, usize, i8, i16, i32, i64, isize }
indexed! { u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, char }

/// The first surrogate and the number of them: code points that are not `char`s.
const SURROGATES: (u32, u32) = (0xD800, 0x800);

impl Stepped for char {
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
    #[should_panic(
        expected = "into_par_iter: a range of 18446744073709551616 u64 items: must \
                               have at most usize::MAX items"
    )]
    fn the_whole_u64_range_says_it_is_too_long() {
        let _ = (0..=u64::MAX).into_par_iter().len();
    }

    #[test]
    fn the_longest_ranges_that_fit() {
        let n = usize::MAX as u64;
        assert_eq!((0..n).into_par_iter().len(), usize::MAX);
        assert_eq!((1..=n).into_par_iter().len(), usize::MAX);
        assert_eq!(('\0'..=char::MAX).into_par_iter().len(), 0x110000 - 0x800);
        assert_eq!(('\0'..char::MAX).into_par_iter().count(), 0x110000 - 0x801);
    }

    /// Ranges of `u128` and `i128` of any length: searches near either end and past the
    /// middle end after a few items (rayon's `octillion` tests ask this of `0..10^27`).
    #[test]
    fn wide_ranges_find_hits_near_their_ends_and_past_their_middle() {
        let rt = asat_core::Runtime::builder()
            .max_threads(2)
            .build()
            .unwrap();
        rt.install(|| {
            let n = 1u128 << 100;
            assert_eq!((0..n).into_par_iter().find_first(|_| true), Some(0));
            assert_eq!((0..n).into_par_iter().find_last(|_| true), Some(n - 1));
            assert_eq!(
                (0..=u128::MAX).into_par_iter().find_last(|_| true),
                Some(u128::MAX)
            );
            assert_eq!(
                (0..=u128::MAX).into_par_iter().find_first(|_| true),
                Some(0)
            );
            let all = i128::MIN..=i128::MAX;
            assert_eq!(
                all.clone().into_par_iter().find_last(|_| true),
                Some(i128::MAX)
            );
            assert_eq!(all.into_par_iter().find_first(|_| true), Some(i128::MIN));
            let past = (0..1u128 << 70).into_par_iter().find_any(|&x| x > 1 << 69);
            assert!(past.is_some_and(|x| x > 1 << 69));
            let near = |y: &i128| *y > i128::MIN + 5;
            let first = (i128::MIN..i128::MAX)
                .into_par_iter()
                .filter(near)
                .find_first(|_| true);
            assert_eq!(first, Some(i128::MIN + 6));
        });
    }

    /// A `u128` range that fits a `usize` gives every item once, in order, as std's.
    #[test]
    fn narrow_wide_ranges_give_their_items_in_order() {
        let top = u128::MAX - 999;
        let v: Vec<u128> = (top..=u128::MAX).into_par_iter().collect();
        assert!(v.iter().copied().eq(top..=u128::MAX));
        assert_eq!((5u128..5).into_par_iter().count(), 0);
        // rayon's `opt_len`: known while one item stands at each index
        assert_eq!((0u128..1 << 20).into_par_iter().opt_len(), Some(1 << 20));
        assert_eq!((-5i128..=5).into_par_iter().opt_len(), Some(11));
        assert_eq!((0..usize::MAX as u128).into_par_iter().opt_len(), None);
        assert_eq!((0..=u128::MAX).into_par_iter().opt_len(), None);
        let mut done = 5u128..=5;
        done.next();
        assert_eq!(done.into_par_iter().count(), 0);
        let sum: i128 = (-1000i128..1000).into_par_iter().sum();
        assert_eq!(sum, -1000);
    }
}
