//! The sequential side of the split sources over shared data (`par_split` and friends on
//! slices and strings): which pieces a range of indices yields.
//!
//! # Which range yields a piece
//!
//! A piece starts at index 0 or right after a separator; the range that holds its **start**
//! yields it, reading on to the piece's end wherever that is (data shared read-only, so ranges
//! may read past their end). Indices are elements for a slice, bytes for a string (where a
//! separator is one char, and a range that starts inside a char treats it as starting before
//! the range). Every start is in exactly one range, so each piece comes out once, and in order.
//!
//! The index space has `len + 1` indices for `split` (a separator at the very end starts one
//! more, empty, piece) and `len` for `split_inclusive` and `split_terminator` (which drop that
//! trailing piece). A range looks for its first start only within itself, then follows the
//! pieces; so an element is tested at most twice (by the range that holds it, and by the one
//! whose last piece runs over it).

use std::fmt::Debug;
use std::ops::Range;

use crate::internal::fmt::debug_fields;

/// Data split at separators: a slice with a predicate ([`SliceHay`]), or a string with a char
/// pattern ([`StrHay`](crate::str::StrHay)).
pub trait Haystack: Copy {
    /// A piece.
    type Piece;

    /// The number of indices (elements or bytes).
    fn size(self) -> usize;

    /// The first separator that starts in `from..to` (`from` on a boundary), as its start and
    /// end.
    fn find(self, from: usize, to: usize) -> Option<(usize, usize)>;

    /// The boundary at or before `i` (the start of the char that holds byte `i`).
    fn floor(self, i: usize) -> usize;

    /// The piece at `range` (on boundaries).
    fn piece(self, range: Range<usize>) -> Self::Piece;
}

/// The pieces whose start is in one range: see the [module docs](self).
#[derive(Debug)]
pub struct SplitSeq<H> {
    hay: H,
    /// The next piece's start, if it is in the range.
    start: Option<usize>,
    /// The range's end.
    end: usize,
    /// Whether a piece takes its separator.
    inclusive: bool,
}

impl<H: Haystack> SplitSeq<H> {
    /// The pieces of `hay` that start in `range`.
    pub(crate) fn new(hay: H, range: Range<usize>, inclusive: bool) -> Self {
        let start = if range.is_empty() {
            None
        } else if range.start == 0 {
            Some(0)
        } else {
            // A piece starts where a separator ends: at `range.start` or later for those that
            // start at the boundary before it.
            hay.find(hay.floor(range.start - 1), range.end)
                .map(|(_, end)| end)
                .filter(|&end| end < range.end)
        };
        Self {
            hay,
            start,
            end: range.end,
            inclusive,
        }
    }
}

impl<H: Haystack> Iterator for SplitSeq<H> {
    type Item = H::Piece;

    #[inline]
    fn next(&mut self) -> Option<H::Piece> {
        let start = self.start?;
        let len = self.hay.size();
        let (piece_end, next) = match self.hay.find(start, len) {
            Some((sep, after)) => (if self.inclusive { after } else { sep }, Some(after)),
            None => (len, None),
        };
        self.start = next.filter(|&s| s < self.end);
        Some(self.hay.piece(start..piece_end))
    }
}

/// A slice and a separator predicate.
pub struct SliceHay<'a, 'data, T, P> {
    pub(crate) slice: &'data [T],
    pub(crate) sep: &'a P,
}

debug_fields!(impl['a, 'data, T: Debug, P] SliceHay<'a, 'data, T, P> { slice });

impl<T, P> Clone for SliceHay<'_, '_, T, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, P> Copy for SliceHay<'_, '_, T, P> {}

impl<'data, T, P: Fn(&T) -> bool> Haystack for SliceHay<'_, 'data, T, P> {
    type Piece = &'data [T];

    fn size(self) -> usize {
        self.slice.len()
    }

    #[inline]
    fn find(self, from: usize, to: usize) -> Option<(usize, usize)> {
        let to = to.min(self.slice.len());
        let at = self.slice.get(from..to)?.iter().position(self.sep)? + from;
        Some((at, at + 1))
    }

    fn floor(self, i: usize) -> usize {
        i
    }

    fn piece(self, range: Range<usize>) -> &'data [T] {
        &self.slice[range]
    }
}

/// The first index at or after `i` that is on a char boundary of `s` (or its length).
pub(crate) fn ceil_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The last index at or before `i` that is on a char boundary of `s`.
pub(crate) fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The pieces that ranges `0..a`, `a..b`, `b..n` yield together, for every `a <= b`.
    pub(crate) fn every_three_way_cut<H: Haystack>(
        hay: H,
        n: usize,
        inclusive: bool,
    ) -> Vec<Vec<H::Piece>> {
        let mut all = Vec::new();
        for a in 0..=n {
            for b in a..=n {
                let pieces = [0..a, a..b, b..n]
                    .into_iter()
                    .flat_map(|r| SplitSeq::new(hay, r, inclusive))
                    .collect();
                all.push(pieces);
            }
        }
        all
    }

    #[test]
    fn every_cut_of_a_slice_yields_each_piece_once() {
        let zero = |x: &u8| *x == 0;
        for v in [&[][..], &[0], &[1], &[0, 0], &[1, 0, 2, 2, 0, 0, 3, 0]] {
            let hay = SliceHay {
                slice: v,
                sep: &zero,
            };
            let want: Vec<&[u8]> = v.split(zero).collect();
            for got in every_three_way_cut(hay, v.len() + 1, false) {
                assert_eq!(got, want, "{v:?}");
            }
            let want: Vec<&[u8]> = v.split_inclusive(zero).collect();
            for got in every_three_way_cut(hay, v.len(), true) {
                assert_eq!(got, want, "{v:?}");
            }
        }
    }
}
