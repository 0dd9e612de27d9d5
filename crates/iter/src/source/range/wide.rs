//! The ranges of `u128` and `i128`: not indexed, as rayon's are not, and of any length.
//!
//! A range of `n` items lays them on `min(n, usize::MAX)` indices, which the call splits as
//! any other index space. While `n` fits a `usize`, index `i` holds item `i`. A longer range
//! ([`Laid`]) keeps one item an index in its first and last quarter of the indices, puts item
//! `n / 2` at index `usize::MAX / 2` (where a team of two splits, as rayon's first split does)
//! and spreads the rest evenly over the middle half (about 10^8 items an index for
//! `0..10^27`). So a search finds a hit near either end after a few items, as rayon's splits
//! find it (`find_first`, and `find_last`, which looks back from the end index by index), and
//! the second of two members starts at the middle item. `with_min_len` and `with_max_len`
//! count indices.

use std::ops::{Range, RangeInclusive};

use super::{empty_inclusive, RangeItem};

/// How a range's items lie on its indices: [`Laid::offset`]`(i)` is the offset of the first
/// item at index `i`. Four segments of indices, `marks[k]..marks[k + 1]` (`marks[4]` is the
/// number of indices), each holding `items[k]` items, spread evenly, after those of the
/// segments before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Laid {
    /// The offset of the last item (`n - 1`).
    last: u128,
    marks: [usize; 5],
    items: [u128; 4],
}

impl Laid {
    /// The layout of `last + 1` items: one an index while they fit a `usize`.
    fn new(last: u128) -> Laid {
        if last >= usize::MAX as u128 {
            return Laid::spread(last);
        }
        let len = last as usize + 1;
        Laid {
            last,
            marks: [0, len, len, len, len],
            items: [len as u128, 0, 0, 0],
        }
    }

    /// The layout of more items than `usize::MAX`, on `usize::MAX` indices: one item an index
    /// in the first and last quarter of the indices; the index half-way holds the item
    /// half-way (where rayon's first split falls), and the items between are spread evenly.
    fn spread(last: u128) -> Laid {
        let (len, ends) = (usize::MAX, usize::MAX / 4);
        // `n / 2` for `n = last + 1` items, without forming `n` (it may be 2^128).
        let half = last / 2 + (last & 1);
        let e = ends as u128;
        Laid {
            last,
            marks: [0, ends, len / 2, len - ends, len],
            items: [e, half - e, last - e + 1 - half, e],
        }
    }

    /// How many indices.
    fn len(&self) -> usize {
        self.marks[4]
    }

    /// The offset of the first item at index `i`, for `i < len` (0 at 0, increasing).
    fn offset(&self, i: usize) -> u128 {
        let k = (0..4)
            .find(|&k| i < self.marks[k + 1])
            .expect("an index below len");
        let (step, span) = (
            (i - self.marks[k]) as u128,
            (self.marks[k + 1] - self.marks[k]) as u128,
        );
        let (per, rest) = (self.items[k] / span, self.items[k] % span);
        // rest < span and step < span, both below 2^64: the product fits; per * step is at
        // most the segment's items.
        let before: u128 = self.items[..k].iter().sum();
        before + per * step + rest * step / span
    }

    /// The offsets of the items at indices `r` (within `0..len`), `None` when `r` is empty.
    fn items(&self, r: Range<usize>) -> Option<RangeInclusive<u128>> {
        if r.is_empty() {
            return None;
        }
        let to = if r.end == self.len() {
            self.last
        } else {
            self.offset(r.end) - 1
        };
        Some(self.offset(r.start)..=to)
    }
}

/// The 128-bit item types.
trait Wide: Copy + PartialOrd {
    /// The item `k` places after `start`, in the type's wrapping arithmetic (modulo 2^128,
    /// exact).
    fn plus(start: Self, k: u128) -> Self;
    /// How many items lie in `start..end`, for `start <= end` (modulo 2^128, exact).
    fn distance(start: Self, end: Self) -> u128;
}

/// The items at indices `r` of a range from `start` laid out as `laid` (`None`: empty).
#[inline]
fn seq<T: Wide>(start: T, laid: Option<Laid>, r: Range<usize>) -> RangeInclusive<T>
where
    RangeInclusive<T>: Iterator,
{
    match laid.and_then(|l| l.items(r)) {
        Some(o) => T::plus(start, *o.start())..=T::plus(start, *o.end()),
        None => empty_inclusive(start),
    }
}

/// The layout of `a..b`'s items, `None` for an empty range.
#[inline]
fn laid<T: Wide>(range: &Range<T>) -> Option<Laid> {
    (range.start < range.end).then(|| Laid::new(T::distance(range.start, range.end) - 1))
}

/// The layout of `a..=b`'s items, `None` for an empty range.
#[inline]
fn laid_inclusive<T: Wide>(range: &RangeInclusive<T>) -> Option<Laid> {
    // `is_empty`, not `start <= end`: an exhausted `a..=a` is empty.
    let (start, end) = (*range.start(), *range.end());
    (!range.is_empty()).then(|| Laid::new(T::distance(start, end)))
}

macro_rules! wide {
    ($($t:ty),*) => {$(
        impl Wide for $t {
            #[inline]
            fn plus(start: Self, k: u128) -> Self {
                start.wrapping_add(k as $t)
            }

            #[inline]
            fn distance(start: Self, end: Self) -> u128 {
                (end as u128).wrapping_sub(start as u128)
            }
        }

        impl RangeItem for $t {
            const INDEXED: bool = false;
            type Seq = RangeInclusive<$t>;
            type SeqInclusive = RangeInclusive<$t>;

            #[inline]
            fn len(range: &Range<Self>) -> usize {
                laid(range).map_or(0, |l| l.len())
            }

            #[inline]
            fn len_inclusive(range: &RangeInclusive<Self>) -> usize {
                laid_inclusive(range).map_or(0, |l| l.len())
            }

            #[inline]
            fn seq(range: &Range<Self>, r: Range<usize>) -> RangeInclusive<Self> {
                seq(range.start, laid(range), r)
            }

            #[inline]
            fn seq_inclusive(
                range: &RangeInclusive<Self>,
                r: Range<usize>,
            ) -> RangeInclusive<Self> {
                seq(*range.start(), laid_inclusive(range), r)
            }
        }
    )*};
}

wide! { u128, i128 }

#[cfg(test)]
mod tests {
    use super::Laid;
    use proptest::prelude::*;

    const MAX: u128 = usize::MAX as u128;

    /// Every item lies on exactly one index, in order.
    fn check(l: &Laid, at: usize) -> Result<(), TestCaseError> {
        prop_assert_eq!(l.offset(0), 0);
        let last = l.items(l.len() - 1..l.len()).unwrap();
        prop_assert_eq!(*last.end(), l.last);
        if at + 1 < l.len() {
            let (a, b) = (
                l.items(at..at + 1).unwrap(),
                l.items(at + 1..at + 2).unwrap(),
            );
            prop_assert!(a.start() <= a.end(), "index {} holds no item", at);
            prop_assert_eq!(*a.end() + 1, *b.start());
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn a_range_that_fits_lies_one_item_an_index(last in 0..MAX, at in any::<usize>()) {
            let l = Laid::new(last);
            prop_assert_eq!(l.len() as u128, last + 1);
            let at = (at as u128 % (last + 1)) as usize;
            prop_assert_eq!(l.offset(at), at as u128);
            check(&l, at)?;
        }

        #[test]
        fn a_longer_range_covers_its_items_on_every_index(
            last in prop_oneof![Just(MAX), MAX..=u128::MAX, Just(u128::MAX)],
            at in any::<usize>(),
        ) {
            let l = Laid::new(last);
            prop_assert_eq!(l.len(), usize::MAX);
            check(&l, at % usize::MAX)?;
            // one item an index at both ends
            for i in [1, 2, usize::MAX - 2, usize::MAX - 1] {
                let one = l.items(i..i + 1).unwrap();
                prop_assert_eq!(one.start(), one.end());
            }
            // the middle index holds the middle item: `(last + 1) / 2`
            prop_assert_eq!(l.offset(usize::MAX / 2), last / 2 + last % 2);
        }
    }
}
