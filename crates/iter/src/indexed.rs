//! Adapters that need items one for one with indices, or that change how the index space is
//! split: `enumerate`, `zip` (and tuples of sources), `step_by`, `take`, `skip`,
//! `with_min_len`, `with_max_len`, `with_schedule`.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::plumbing::{DoubleEndedProducer, Hints, Producer, Stop};
use crate::{IndexedParallelIterator, IntoParallelIterator};

/// Items with their index (`enumerate`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Enumerate<I> {
    pub(crate) base: I,
}

impl<I: IndexedParallelIterator> Producer for Enumerate<I> {
    type Item = (usize, I::Item);
    type Seq<'a>
        = std::iter::Zip<Range<usize>, I::Seq<'a>>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        range.clone().zip(unsafe { self.base.seq(range) })
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Enumerate<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Enumerate<I> {
    type SeqRev<'a>
        = std::iter::Zip<std::iter::Rev<Range<usize>>, I::SeqRev<'a>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        range.clone().rev().zip(unsafe { self.base.seq_rev(range) })
    }
}

/// Declares `MultiZip` for tuples of indexed parallel iterators and `IntoParallelIterator` for
/// tuples of sources, as rayon's `(a, b, c).into_par_iter()`.
macro_rules! multizip {
    ($(($($T:ident $i:tt),+))*) => {$(
        impl<$($T: IndexedParallelIterator),+> Producer for MultiZip<($($T,)+)> {
            type Item = ($($T::Item,)+);
            type Seq<'a> = MultiZip<($($T::Seq<'a>,)+)> where Self: 'a;
            const EXACT: bool = true;
            const PURE: bool = true $(&& $T::PURE)+;

            fn base_len(&self) -> usize {
                let mut len = usize::MAX;
                $(len = len.min(self.0.$i.base_len());)+
                len
            }

            #[inline]
            unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
                // SAFETY: each base gets the caller's range, within the shortest base.
                MultiZip(($(unsafe { self.0.$i.seq(range.clone()) },)+))
            }

            fn hints(&self) -> Hints {
                let mut h = Hints::default();
                $(h = h.merge(self.0.$i.hints());)+
                h
            }
        }

        impl<$($T: IndexedParallelIterator),+> IndexedParallelIterator for MultiZip<($($T,)+)> {}

        impl<$($T: IndexedParallelIterator),+> DoubleEndedProducer for MultiZip<($($T,)+)> {
            type SeqRev<'a> = MultiZip<($($T::SeqRev<'a>,)+)> where Self: 'a;

            #[inline]
            unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
                // SAFETY: each base gets the caller's range, within the shortest base, so the
                // bases' last items line up.
                MultiZip(($(unsafe { self.0.$i.seq_rev(range.clone()) },)+))
            }
        }

        impl<$($T: Iterator),+> Iterator for MultiZip<($($T,)+)> {
            type Item = ($($T::Item,)+);

            #[inline]
            fn next(&mut self) -> Option<Self::Item> {
                Some(($(self.0.$i.next()?,)+))
            }
        }

        impl<$($T),+> IntoParallelIterator for ($($T,)+)
        where
            $($T: IntoParallelIterator, $T::Iter: IndexedParallelIterator,)+
        {
            type Iter = MultiZip<($($T::Iter,)+)>;
            type Item = ($($T::Item,)+);

            fn into_par_iter(self) -> Self::Iter {
                MultiZip(($(self.$i.into_par_iter(),)+))
            }
        }
    )*};
}

/// Several indexed parallel iterators in lock step, yielding tuples; as long as the shortest.
/// Made by `into_par_iter` on a tuple of sources (1 to 12, as rayon's), e.g. `(&mut a, &b, &c)`.
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct MultiZip<T>(pub(crate) T);

multizip! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

/// rayon's name for what `zip_eq` returns: a [`Zip`] (the lengths are checked when it is
/// made).
pub type ZipEq<A, B> = Zip<A, B>;

/// Two indexed parallel iterators in lock step (`zip`); as long as the shorter.
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Zip<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> Producer for Zip<A, B> {
    type Item = (A::Item, B::Item);
    type Seq<'s>
        = std::iter::Zip<A::Seq<'s>, B::Seq<'s>>
    where
        Self: 's;
    const EXACT: bool = true;
    const PURE: bool = A::PURE && B::PURE;

    fn base_len(&self) -> usize {
        self.a.base_len().min(self.b.base_len())
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: both bases get the caller's range, within the shorter base.
        unsafe { self.a.seq(range.clone()).zip(self.b.seq(range)) }
    }

    fn hints(&self) -> Hints {
        self.a.hints().merge(self.b.hints())
    }
}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> IndexedParallelIterator for Zip<A, B> {}

impl<A: IndexedParallelIterator, B: IndexedParallelIterator> DoubleEndedProducer for Zip<A, B> {
    type SeqRev<'s>
        = std::iter::Zip<A::SeqRev<'s>, B::SeqRev<'s>>
    where
        Self: 's;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: both bases get the caller's range, within the shorter base, so their last
        // items line up.
        unsafe { self.a.seq_rev(range.clone()).zip(self.b.seq_rev(range)) }
    }
}

/// Every `step`-th item, from the first (`step_by`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct StepBy<I> {
    pub(crate) base: I,
    pub(crate) step: usize,
}

impl<I: IndexedParallelIterator> Producer for StepBy<I> {
    type Item = I::Item;
    type Seq<'a>
        = std::iter::StepBy<I::Seq<'a>>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.step)
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: disjoint ranges of steps map to disjoint ranges of base indices (see
        // `base_range`).
        unsafe { self.base.seq(self.base_range(range)) }.step_by(self.step)
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for StepBy<I> {}

impl<I: IndexedParallelIterator> StepBy<I> {
    /// The base indices that steps `range` need: from the first step's to the last step's
    /// (step k covers base indices `k*step .. k*step + 1`; the gaps are never asked for), so
    /// disjoint ranges of steps map to disjoint ranges of base indices.
    #[inline]
    fn base_range(&self, range: Range<usize>) -> Range<usize> {
        let n = self.base.base_len();
        let lo = (range.start * self.step).min(n);
        let hi = if range.is_empty() {
            lo
        } else {
            ((range.end - 1) * self.step + 1).min(n)
        };
        lo..hi
    }
}

impl<I: IndexedParallelIterator> DoubleEndedProducer for StepBy<I> {
    type SeqRev<'a>
        = std::iter::StepBy<I::SeqRev<'a>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`. The base range ends just after the last step's index, so read
        // backwards it starts there and steps down to the first step's.
        unsafe { self.base.seq_rev(self.base_range(range)) }.step_by(self.step)
    }
}

/// rayon's name for what `take` returns: a [`Slice`] of the first items.
pub type Take<I> = Slice<I>;

/// rayon's name for what `skip` returns: a [`Slice`] past the first items.
pub type Skip<I> = Slice<I>;

/// The items from index `skip` on, at most `take` of them (`skip`, `take`).
///
/// The skipped items are made and dropped, as rayon's and std's `skip` make them, so that the
/// closures of a `map` (or `inspect`) before it run for them too (unless making them runs
/// none of the program's code: [`Producer::PURE`], as for a slice's or a range's items). They
/// go out with the items that stay: each range of this slice asked for first takes its share
/// of them (in proportion to its length) from a shared counter and drops it, so they are made
/// in parallel; the range at index 0 then goes on taking shares until none is left, so they
/// have all been made once the first item after them has been asked for (by `take` after
/// `skip`, by any call that reads from the start). A call that never asks for index 0 (a search from the end that
/// stops early, `rev().take(n)`) may leave some unmade, and a `skip` past the end makes none
/// (no range is asked for), where rayon makes every skipped item before the others.
#[derive(Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Slice<I> {
    pub(crate) base: I,
    pub(crate) skip: usize,
    pub(crate) take: usize,
    /// How many skipped items have been taken to be made (see above).
    pub(crate) skipped: AtomicUsize,
}

impl<I> Slice<I> {
    pub(crate) fn new(base: I, skip: usize, take: usize) -> Slice<I> {
        Slice {
            base,
            skip,
            take,
            skipped: AtomicUsize::new(0),
        }
    }
}

/// A clone starts afresh: none of its skipped items made yet.
impl<I: Clone> Clone for Slice<I> {
    fn clone(&self) -> Self {
        Slice::new(self.base.clone(), self.skip, self.take)
    }
}

impl<I: IndexedParallelIterator> Slice<I> {
    /// Makes and drops this range's share of the skipped items, and for the range at index 0
    /// every share left (see [`Slice`]).
    ///
    /// # Safety
    ///
    /// As for [`Producer::seq`]: `range` is disjoint from every range asked for before.
    #[cold]
    #[inline(never)]
    unsafe fn make_skipped(&self, range: &Range<usize>) {
        let (len, skipped) = (self.base_len(), self.skip.min(self.base.base_len()));
        if len == 0 || range.is_empty() {
            return;
        }
        let share = (range.len() as u128 * skipped as u128).div_ceil(len as u128) as usize;
        let share = share.max(1);
        while let Ok(at) = self
            .skipped
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |at| {
                (at < skipped).then(|| at + share.min(skipped - at))
            })
        {
            let part = at..at + share.min(skipped - at);
            // SAFETY: the counter hands out each index below `skipped` once, and the ranges
            // the caller asks for are shifted past `skip`, so none overlaps another.
            unsafe { self.base.seq(part) }.for_each(drop);
            if range.start != 0 {
                break;
            }
        }
    }
}

impl<I: IndexedParallelIterator> Producer for Slice<I> {
    type Item = I::Item;
    type Seq<'a>
        = I::Seq<'a>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base
            .base_len()
            .saturating_sub(self.skip)
            .min(self.take)
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: a shift of the caller's disjoint ranges stays disjoint, and within the base;
        // the skipped items are below the shift.
        unsafe {
            if !I::PURE && self.skip != 0 {
                self.make_skipped(&range);
            }
            self.base
                .seq(range.start + self.skip..range.end + self.skip)
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Slice<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Slice<I> {
    type SeqRev<'a>
        = I::SeqRev<'a>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`.
        unsafe {
            if !I::PURE && self.skip != 0 {
                self.make_skipped(&range);
            }
            self.base
                .seq_rev(range.start + self.skip..range.end + self.skip)
        }
    }
}

/// rayon's name for what `with_min_len` returns: a [`Hinted`] iterator.
pub type MinLen<I> = Hinted<I>;

/// rayon's name for what `with_max_len` returns: a [`Hinted`] iterator.
pub type MaxLen<I> = Hinted<I>;

/// A parallel iterator with splitting hints set (`with_min_len`, `with_max_len`,
/// `with_schedule`, `by_uniform_blocks`, `by_exponential_blocks`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Hinted<I> {
    pub(crate) base: I,
    pub(crate) hints: Hints,
}

impl<I: Producer> Producer for Hinted<I> {
    type Item = I::Item;
    type Seq<'a>
        = I::Seq<'a>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        unsafe { self.base.seq(range) }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        // SAFETY: the caller's range goes to the base unchanged.
        unsafe { self.base.seq_until(range, stop) }
    }

    fn hints(&self) -> Hints {
        self.hints
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Hinted<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Hinted<I> {
    type SeqRev<'a>
        = I::SeqRev<'a>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        unsafe { self.base.seq_rev(range) }
    }
}

/// The items in `Vec`s of `size` (`chunks`), the last one shorter if `size` does not divide
/// the length.
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Chunks<I> {
    pub(crate) base: I,
    pub(crate) size: usize,
}

/// The indices, among `n`, of groups `range` of `size` items (the last group may be short).
#[inline]
pub(crate) fn group_items(range: Range<usize>, size: usize, n: usize) -> Range<usize> {
    let at = |c: usize| c.saturating_mul(size).min(n);
    at(range.start)..at(range.end)
}

impl<I: IndexedParallelIterator> Chunks<I> {
    /// The base indices of chunks `range`.
    #[inline]
    fn base_range(&self, range: Range<usize>) -> Range<usize> {
        group_items(range, self.size, self.base.base_len())
    }
}

impl<I: IndexedParallelIterator> Producer for Chunks<I> {
    type Item = Vec<I::Item>;
    type Seq<'a>
        = ChunksSeq<I::Seq<'a>>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len().div_ceil(self.size)
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let r = self.base_range(range);
        ChunksSeq {
            left: r.len(),
            // SAFETY: disjoint ranges of chunks are disjoint ranges of base indices.
            items: unsafe { self.base.seq(r) },
            size: self.size,
            next: self.size,
            back_to_front: false,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Chunks<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Chunks<I> {
    type SeqRev<'a>
        = ChunksSeq<I::SeqRev<'a>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        let r = self.base_range(range);
        // Back to front, the first chunk is the range's last: short if it ends the base.
        let next = match r.len() % self.size {
            0 => self.size,
            short => short,
        };
        ChunksSeq {
            left: r.len(),
            // SAFETY: as in `seq`.
            items: unsafe { self.base.seq_rev(r) },
            size: self.size,
            next,
            back_to_front: true,
        }
    }
}

/// The sequential side of [`Chunks`]: `Vec`s of `size` items, the next one of `next` (read
/// back to front, the short chunk comes first, and each chunk is put back in order).
#[derive(Debug)]
pub struct ChunksSeq<J> {
    items: J,
    /// Items not yet taken.
    left: usize,
    size: usize,
    /// The next chunk's size.
    next: usize,
    back_to_front: bool,
}

impl<J: Iterator> Iterator for ChunksSeq<J> {
    type Item = Vec<J::Item>;

    #[inline]
    fn next(&mut self) -> Option<Vec<J::Item>> {
        if self.left == 0 {
            return None;
        }
        let k = self.next.min(self.left);
        self.next = self.size;
        self.left -= k;
        let mut chunk: Vec<J::Item> = self.items.by_ref().take(k).collect();
        if self.back_to_front {
            chunk.reverse();
        }
        Some(chunk)
    }
}
