//! Parallel iterators over a string's chars, bytes and pieces ([`ParallelString`], rayon's
//! `rayon::str`).
//!
//! Their index space is the string's bytes. A range yields the chars that **start** in it (a
//! range that starts inside a char leaves that char to the range before), and the split forms
//! yield the pieces that start in it, as [`splitter`](crate::splitter) says; so every char and
//! every piece comes out once, and `collect` keeps their order. Only `par_bytes` is indexed (a
//! byte per index); the others are not (a range may hold fewer chars than bytes), as in rayon.
//!
//! Separators and patterns are chars, as in rayon: a [`Pattern`] is a `char`, a slice or array
//! of chars (any of them), or a closure `Fn(char) -> bool`.

use std::fmt;
use std::ops::Range;

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::Producer;
use crate::internal::splitter::{ceil_boundary, floor_boundary, Haystack, SplitSeq};
use crate::iter::adapters::{Copied, Filter, Map};
use crate::{IntoParallelRefIterator, ParallelIterator};

mod sealed {
    pub trait Sealed {
        /// Writes the pattern for `Debug`: its chars, or `..` for a closure.
        fn fmt_pattern(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("..")
        }
    }
}

/// The chars a split or a search looks for (rayon's `Pattern`): a `char`, `&[char]`,
/// `[char; N]`, `&[char; N]` (any of the chars), or a closure `Fn(char) -> bool`. Sealed.
pub trait Pattern: sealed::Sealed + Sync + Send {
    /// Whether `c` matches.
    fn matches(&self, c: char) -> bool;
}

impl sealed::Sealed for char {
    fn fmt_pattern(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl Pattern for char {
    #[inline]
    fn matches(&self, c: char) -> bool {
        *self == c
    }
}

impl sealed::Sealed for &[char] {
    fn fmt_pattern(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl Pattern for &[char] {
    #[inline]
    fn matches(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> sealed::Sealed for [char; N] {
    fn fmt_pattern(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl<const N: usize> Pattern for [char; N] {
    #[inline]
    fn matches(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> sealed::Sealed for &[char; N] {
    fn fmt_pattern(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl<const N: usize> Pattern for &[char; N] {
    #[inline]
    fn matches(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<F: Fn(char) -> bool + Sync + Send> sealed::Sealed for F {}
impl<F: Fn(char) -> bool + Sync + Send> Pattern for F {
    #[inline]
    fn matches(&self, c: char) -> bool {
        self(c)
    }
}

/// `Debug` for a string and its pattern: `Name { s: "a,b", pat: ',' }` (`pat: ..` for a
/// closure).
fn fmt_with_pattern<P: Pattern>(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    s: &str,
    pat: &P,
) -> fmt::Result {
    struct PatternDebug<'p, P>(&'p P);
    impl<P: Pattern> fmt::Debug for PatternDebug<'_, P> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.fmt_pattern(f)
        }
    }
    f.debug_struct(name)
        .field("s", &s)
        .field("pat", &PatternDebug(pat))
        .finish()
}

/// A string and a pattern, split at the chars that match.
pub struct StrHay<'a, 'ch, P> {
    s: &'ch str,
    pat: &'a P,
}

impl<P: Pattern> fmt::Debug for StrHay<'_, '_, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_with_pattern(f, "StrHay", self.s, self.pat)
    }
}

impl<P> Clone for StrHay<'_, '_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for StrHay<'_, '_, P> {}

impl<'ch, P: Pattern> Haystack for StrHay<'_, 'ch, P> {
    type Piece = &'ch str;

    fn size(self) -> usize {
        self.s.len()
    }

    #[inline]
    fn find(self, from: usize, to: usize) -> Option<(usize, usize)> {
        let part = self.s.get(from..ceil_boundary(self.s, to))?;
        let (i, c) = part.char_indices().find(|&(_, c)| self.pat.matches(c))?;
        Some((from + i, from + i + c.len_utf8()))
    }

    fn floor(self, i: usize) -> usize {
        floor_boundary(self.s, i)
    }

    fn piece(self, range: Range<usize>) -> &'ch str {
        &self.s[range]
    }
}

/// The chars of `s` that start in `r`.
#[inline]
fn chars_in(s: &str, r: Range<usize>) -> (usize, &str) {
    let start = ceil_boundary(s, r.start);
    (start, &s[start..ceil_boundary(s, r.end)])
}

/// Declares a string source: a producer over the string's bytes whose range `r` yields
/// `$make(s, r)`.
macro_rules! str_source {
    (
        $(#[$doc:meta])*
        $name:ident $(<$P:ident>)?, item $item:ty, seq $seq:ty,
        |$this:ident, $r:ident| $make:expr
    ) => {
        $(#[$doc])*
        #[derive(Clone)]
        #[must_use = "parallel iterators do nothing until a terminal call"]
        pub struct $name<'ch $(, $P)?> {
            s: &'ch str,
            $(pat: $P,)?
        }

        str_source!(@debug $name $(<$P>)?);

        impl<'ch $(, $P: Pattern)?> Producer for $name<'ch $(, $P)?> {
            type Item = $item;
            type Seq<'a> = $seq where Self: 'a;

            fn base_len(&self) -> usize {
                self.s.len()
            }

            #[inline]
            unsafe fn seq(&self, $r: Range<usize>) -> Self::Seq<'_> {
                let $this = self;
                $make
            }
        }
    };
    (@debug $name:ident) => {
        impl fmt::Debug for $name<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("s", &self.s).finish()
            }
        }
    };
    (@debug $name:ident<$P:ident>) => {
        impl<$P: Pattern> fmt::Debug for $name<'_, $P> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt_with_pattern(f, stringify!($name), self.s, &self.pat)
            }
        }
    };
}

str_source! {
    /// `par_chars()`: the chars, in order.
    Chars, item char, seq std::str::Chars<'ch>, |this, r| chars_in(this.s, r).1.chars()
}

str_source! {
    /// `par_char_indices()`: the chars with their byte offsets, in order.
    CharIndices, item (usize, char), seq CharIndicesAt<'ch>, |this, r| {
        let (at, part) = chars_in(this.s, r);
        CharIndicesAt { at, chars: part.char_indices() }
    }
}

str_source! {
    /// `par_encode_utf16()`: the string as UTF-16 code units, in order.
    EncodeUtf16, item u16, seq std::str::EncodeUtf16<'ch>,
    |this, r| chars_in(this.s, r).1.encode_utf16()
}

str_source! {
    /// `par_matches(pat)`: each char that matches, as a `&str`, in order.
    Matches<P>, item &'ch str,
    seq std::iter::Map<MatchIndicesAt<'a, 'ch, P>, fn((usize, &'ch str)) -> &'ch str>,
    |this, r| this.indices(r).map(|(_, m)| m)
}

str_source! {
    /// `par_match_indices(pat)`: each char that matches, as a `&str` with its byte offset, in
    /// order.
    MatchIndices<P>, item (usize, &'ch str), seq MatchIndicesAt<'a, 'ch, P>,
    |this, r| {
        let (at, part) = chars_in(this.s, r);
        MatchIndicesAt { at, chars: part.char_indices(), s: this.s, pat: &this.pat }
    }
}

impl<'ch, P: Pattern> Matches<'ch, P> {
    fn indices(&self, r: Range<usize>) -> MatchIndicesAt<'_, 'ch, P> {
        let (at, part) = chars_in(self.s, r);
        MatchIndicesAt {
            at,
            chars: part.char_indices(),
            s: self.s,
            pat: &self.pat,
        }
    }
}

/// The sequential side of [`CharIndices`]: offsets from the string's start.
#[derive(Debug)]
pub struct CharIndicesAt<'ch> {
    at: usize,
    chars: std::str::CharIndices<'ch>,
}

impl Iterator for CharIndicesAt<'_> {
    type Item = (usize, char);

    #[inline]
    fn next(&mut self) -> Option<(usize, char)> {
        self.chars.next().map(|(i, c)| (self.at + i, c))
    }
}

/// The sequential side of [`MatchIndices`] and [`Matches`].
pub struct MatchIndicesAt<'a, 'ch, P> {
    at: usize,
    chars: std::str::CharIndices<'ch>,
    s: &'ch str,
    pat: &'a P,
}

debug_fields!(impl['a, 'ch, P] MatchIndicesAt<'a, 'ch, P> { at, chars });

impl<'ch, P: Pattern> Iterator for MatchIndicesAt<'_, 'ch, P> {
    type Item = (usize, &'ch str);

    #[inline]
    fn next(&mut self) -> Option<(usize, &'ch str)> {
        let (i, c) = self.chars.find(|&(_, c)| self.pat.matches(c))?;
        let start = self.at + i;
        Some((start, &self.s[start..start + c.len_utf8()]))
    }
}

/// `par_split(pat)` (`KIND` 0), `par_split_terminator(pat)` (1), `par_split_inclusive(pat)`
/// (2): the pieces between the chars that match, as std's methods of the same names.
#[derive(Clone)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct SplitBy<'ch, P, const KIND: u8> {
    s: &'ch str,
    pat: P,
}

impl<P: Pattern, const KIND: u8> fmt::Debug for SplitBy<'_, P, KIND> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_with_pattern(f, "SplitBy", self.s, &self.pat)
    }
}

/// `par_split(pat)`: the pieces between separators.
pub type Split<'ch, P> = SplitBy<'ch, P, 0>;

/// `par_split_terminator(pat)`: the pieces between separators, without the empty one after
/// a separator at the end.
pub type SplitTerminator<'ch, P> = SplitBy<'ch, P, 1>;

/// `par_split_inclusive(pat)`: the pieces ending with a separator (the last one may end
/// without).
pub type SplitInclusive<'ch, P> = SplitBy<'ch, P, 2>;

impl<'ch, P: Pattern, const KIND: u8> Producer for SplitBy<'ch, P, KIND> {
    type Item = &'ch str;
    type Seq<'a>
        = SplitSeq<StrHay<'a, 'ch, P>>
    where
        Self: 'a;

    /// One index per byte, and one more for `split` (the empty piece after a separator at the
    /// end, or the one piece of an empty string).
    fn base_len(&self) -> usize {
        self.s.len() + usize::from(KIND == 0)
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let hay = StrHay {
            s: self.s,
            pat: &self.pat,
        };
        SplitSeq::new(hay, range, KIND == 2)
    }
}

/// `par_lines()`: the lines, without their `\n` or `\r\n`, as std's `lines`.
pub type Lines<'ch> = Map<SplitInclusive<'ch, char>, fn(&'ch str) -> &'ch str>;

/// `par_split_whitespace()`: the non-empty pieces between whitespace, as std's
/// `split_whitespace`.
pub type SplitWhitespace<'ch> = Filter<Split<'ch, fn(char) -> bool>, fn(&&'ch str) -> bool>;

/// `par_split_ascii_whitespace()`: the non-empty pieces between ASCII whitespace, as std's
/// `split_ascii_whitespace`.
pub type SplitAsciiWhitespace<'ch> = SplitWhitespace<'ch>;

/// `par_bytes()`: the bytes, in order (indexed).
pub type Bytes<'ch> = Copied<crate::source::slice::Iter<'ch, u8>>;

/// A line without its line ending.
fn line(s: &str) -> &str {
    let Some(s) = s.strip_suffix('\n') else {
        return s;
    };
    s.strip_suffix('\r').unwrap_or(s)
}

fn non_empty(s: &&str) -> bool {
    !s.is_empty()
}

/// Parallel iterators over a string's chars, bytes and pieces, as rayon's `ParallelString`
/// (`str` and, through deref, `String`). See the [module docs](self) for how they split.
///
/// ```
/// use asat_iter::prelude::*;
///
/// let text = "one two\nthree  four\r\nfive";
/// assert_eq!(text.par_lines().collect::<Vec<_>>(), ["one two", "three  four", "five"]);
/// assert_eq!(text.par_split_whitespace().count(), 5);
/// assert_eq!(text.par_chars().filter(|c| c.is_alphabetic()).count(), 19);
/// assert_eq!(text.par_split('o').collect::<Vec<_>>(), text.split('o').collect::<Vec<_>>());
/// ```
pub trait ParallelString {
    /// The string.
    fn as_parallel_string(&self) -> &str;

    /// The chars.
    fn par_chars(&self) -> Chars<'_> {
        Chars {
            s: self.as_parallel_string(),
        }
    }

    /// The chars with their byte offsets.
    fn par_char_indices(&self) -> CharIndices<'_> {
        CharIndices {
            s: self.as_parallel_string(),
        }
    }

    /// The bytes.
    fn par_bytes(&self) -> Bytes<'_> {
        self.as_parallel_string().as_bytes().par_iter().copied()
    }

    /// The UTF-16 code units.
    fn par_encode_utf16(&self) -> EncodeUtf16<'_> {
        EncodeUtf16 {
            s: self.as_parallel_string(),
        }
    }

    /// The pieces between the chars that match `separator` (std's `split`).
    fn par_split<P: Pattern>(&self, separator: P) -> Split<'_, P> {
        SplitBy {
            s: self.as_parallel_string(),
            pat: separator,
        }
    }

    /// The pieces each ending with a char that matches `separator` (std's
    /// `split_inclusive`).
    fn par_split_inclusive<P: Pattern>(&self, separator: P) -> SplitInclusive<'_, P> {
        SplitBy {
            s: self.as_parallel_string(),
            pat: separator,
        }
    }

    /// The pieces between the chars that match `terminator`, less an empty last one (std's
    /// `split_terminator`).
    fn par_split_terminator<P: Pattern>(&self, terminator: P) -> SplitTerminator<'_, P> {
        SplitBy {
            s: self.as_parallel_string(),
            pat: terminator,
        }
    }

    /// The lines (std's `lines`).
    fn par_lines(&self) -> Lines<'_> {
        self.par_split_inclusive('\n').map(line as fn(&str) -> &str)
    }

    /// The non-empty pieces between whitespace (std's `split_whitespace`).
    fn par_split_whitespace(&self) -> SplitWhitespace<'_> {
        self.par_split(char::is_whitespace as fn(char) -> bool)
            .filter(non_empty as fn(&&str) -> bool)
    }

    /// The non-empty pieces between ASCII whitespace (std's `split_ascii_whitespace`).
    fn par_split_ascii_whitespace(&self) -> SplitAsciiWhitespace<'_> {
        let ascii: fn(char) -> bool = |c| c.is_ascii_whitespace();
        self.par_split(ascii).filter(non_empty as fn(&&str) -> bool)
    }

    /// Each char that matches `pattern`, as a `&str`.
    fn par_matches<P: Pattern>(&self, pattern: P) -> Matches<'_, P> {
        Matches {
            s: self.as_parallel_string(),
            pat: pattern,
        }
    }

    /// Each char that matches `pattern`, as a `&str`, with its byte offset.
    fn par_match_indices<P: Pattern>(&self, pattern: P) -> MatchIndices<'_, P> {
        MatchIndices {
            s: self.as_parallel_string(),
            pat: pattern,
        }
    }
}

impl ParallelString for str {
    fn as_parallel_string(&self) -> &str {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internal::splitter::tests::every_three_way_cut;

    #[test]
    fn every_cut_of_a_string_yields_each_piece_once() {
        let pat = |c: char| c == '€' || c == ',';
        for s in ["", ",", "€", "a€b", "€,€", "é,😀€x,", "ab,,cd€€"] {
            let hay = StrHay { s, pat: &pat };
            let want: Vec<&str> = s.split(pat).collect();
            for got in every_three_way_cut(hay, s.len() + 1, false) {
                assert_eq!(got, want, "{s:?}");
            }
            let want: Vec<&str> = s.split_inclusive(pat).collect();
            for got in every_three_way_cut(hay, s.len(), true) {
                assert_eq!(got, want, "{s:?}");
            }
            let want: Vec<&str> = s.split_terminator(pat).collect();
            for got in every_three_way_cut(hay, s.len(), false) {
                assert_eq!(got, want, "{s:?}");
            }
        }
    }
}
