//! `interleave` and `interleave_shortest`: two indexed iterators' items taken in turn.
//!
//! With `a` of `na` items, `b` of `nb` and `m = min(na, nb)`, `interleave` has `na + nb`
//! indices: index `i < 2m` is `a`'s item `i / 2` when `i` is even, `b`'s item `i / 2` when it is
//! odd; from `2m` on come the rest of the longer one's items, in order. A range of indices
//! therefore needs one contiguous range of each side (the items `a` gives below `2m` and those
//! it gives after run on without a gap), so disjoint ranges ask each side for disjoint ranges.
//!
//! `interleave_shortest` stops when the side whose turn it is has no item left: it is
//! `interleave` of the first `min(na, nb + 1)` items of `a` and the first `min(nb, na)` of `b`.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::iter::indexed::Slice;
use crate::IndexedParallelIterator;

/// Two indexed iterators' items in turn, then the rest of the longer one (`interleave`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Interleave<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

/// Two indexed iterators' items in turn, until the one whose turn it is runs out
/// (`interleave_shortest`).
pub type InterleaveShortest<A, B> = Interleave<Slice<A>, Slice<B>>;

/// The shape of an interleaving.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Indices below this alternate.
    pairs_end: usize,
    /// Whether `a` gives the items from `pairs_end` on.
    a_longer: bool,
}

impl Shape {
    /// The side giving index `i`: `true` for `a`.
    #[inline]
    fn a_gives(self, i: usize) -> bool {
        if i < self.pairs_end {
            i % 2 == 0
        } else {
            self.a_longer
        }
    }
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> Interleave<A, B> {
    fn shape(&self) -> Shape {
        let (na, nb) = (self.a.base_len(), self.b.base_len());
        Shape {
            pairs_end: 2 * na.min(nb),
            a_longer: na > nb,
        }
    }

    /// The indices of `a` and of `b` that the interleaving's indices `r` need.
    fn split(&self, r: Range<usize>) -> (Shape, Range<usize>, Range<usize>) {
        let shape = self.shape();
        // Items of `a` among indices below `i`, and of `b`.
        let before = |i: usize| {
            let paired = i.min(shape.pairs_end);
            let rest = i - paired;
            let (a, b) = (paired.div_ceil(2), paired / 2);
            if shape.a_longer {
                (a + rest, b)
            } else {
                (a, b + rest)
            }
        };
        let (a0, b0) = before(r.start);
        let (a1, b1) = before(r.end);
        (shape, a0..a1, b0..b1)
    }
}

impl<A, B> Producer for Interleave<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    type Item = A::Item;
    type Seq<'s>
        = InterleaveSeq<A::Seq<'s>, B::Seq<'s>>
    where
        Self: 's;
    const EXACT: bool = true;

    /// # Panics
    ///
    /// If the two lengths together overflow a `usize`.
    fn base_len(&self) -> usize {
        let (a, b) = (self.a.base_len(), self.b.base_len());
        a.checked_add(b).unwrap_or_else(|| {
            panic!("interleave: lengths {a} and {b} overflow usize: their sum must fit a usize")
        })
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let (shape, ra, rb) = self.split(range.clone());
        // SAFETY: disjoint ranges of the interleaving need disjoint ranges of each side (see
        // the module docs), within each side's length.
        let (a, b) = unsafe { (self.a.seq(ra), self.b.seq(rb)) };
        InterleaveSeq {
            a,
            b,
            shape,
            range,
            back_to_front: false,
        }
    }

    fn hints(&self) -> Hints {
        self.a.hints().merge(self.b.hints())
    }
}

impl<A, B> IndexedParallelIterator for Interleave<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
}

impl<A, B> DoubleEndedProducer for Interleave<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    type SeqRev<'s>
        = InterleaveSeq<A::SeqRev<'s>, B::SeqRev<'s>>
    where
        Self: 's;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        let (shape, ra, rb) = self.split(range.clone());
        // SAFETY: as in `seq`.
        let (a, b) = unsafe { (self.a.seq_rev(ra), self.b.seq_rev(rb)) };
        InterleaveSeq {
            a,
            b,
            shape,
            range,
            back_to_front: true,
        }
    }
}

/// The sequential side of [`Interleave`]: the items of indices `range`, each from the side
/// that gives it.
#[derive(Debug)]
pub struct InterleaveSeq<X, Y> {
    a: X,
    b: Y,
    shape: Shape,
    /// The indices not yet yielded.
    range: Range<usize>,
    back_to_front: bool,
}

impl<X: Iterator, Y: Iterator<Item = X::Item>> Iterator for InterleaveSeq<X, Y> {
    type Item = X::Item;

    #[inline]
    fn next(&mut self) -> Option<X::Item> {
        let i = if self.back_to_front {
            self.range.next_back()?
        } else {
            self.range.next()?
        };
        if self.shape.a_gives(i) {
            self.a.next()
        } else {
            self.b.next()
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}
