//! `chain`: the items of one parallel iterator, then those of another; and `rev`: an indexed
//! iterator's items last first.
//!
//! A chain's index space is its first part's followed by its second's: a range that straddles
//! the boundary reads the end of the first part and then the start of the second, so ranges
//! still yield their items in order and `collect` keeps rayon's order (all of the first part's
//! items, then the second's). It is indexed when both parts are, and either part may be
//! unindexed (after `filter`, say), as rayon allows.
//!
//! `rev` maps range `r` of its `n` indices to the base's `n - r.end .. n - r.start`, read back to
//! front ([`DoubleEndedProducer::seq_rev`]): disjoint ranges stay disjoint, and item `i` is the
//! base's item `n - 1 - i`.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer, Stop};
use crate::IndexedParallelIterator;

/// The items of `a`, then those of `b` (`chain`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Chain<A, B> {
    pub(crate) a: A,
    pub(crate) b: B,
}

impl<A: Producer, B: Producer> Chain<A, B> {
    /// The parts of `range` that fall in `a` and in `b` (in `b`'s own indices); `None` for a
    /// part the range does not reach.
    #[inline]
    fn split(&self, range: Range<usize>) -> (Option<Range<usize>>, Option<Range<usize>>) {
        let na = self.a.base_len();
        let a = (range.start < na).then(|| range.start..range.end.min(na));
        let b = (range.end > na).then(|| range.start.max(na) - na..range.end - na);
        (a, b)
    }
}

impl<A, B> Producer for Chain<A, B>
where
    A: Producer,
    B: Producer<Item = A::Item>,
{
    type Item = A::Item;
    type Seq<'s>
        = ChainSeq<A::Seq<'s>, B::Seq<'s>>
    where
        Self: 's;
    const EXACT: bool = A::EXACT && B::EXACT;
    const PURE: bool = A::PURE && B::PURE;

    /// # Panics
    ///
    /// If the two lengths together overflow a `usize` (as rayon's `chain` does).
    fn base_len(&self) -> usize {
        let (a, b) = (self.a.base_len(), self.b.base_len());
        a.checked_add(b).unwrap_or_else(|| {
            panic!("chain: lengths {a} and {b} overflow usize: their sum must fit a usize")
        })
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let (a, b) = self.split(range);
        // SAFETY: disjoint ranges of the chain split into disjoint ranges of each part.
        unsafe {
            ChainSeq {
                first: a.map(|r| self.a.seq(r)),
                second: b.map(|r| self.b.seq(r)),
            }
        }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        let (a, b) = self.split(range);
        // SAFETY: as for `seq`.
        unsafe {
            ChainSeq {
                first: a.map(|r| self.a.seq_until(r, stop)),
                second: b.map(|r| self.b.seq_until(r, stop)),
            }
        }
    }

    fn hints(&self) -> Hints {
        self.a.hints().merge(self.b.hints())
    }

    fn known_len(&self) -> Option<usize> {
        self.a.known_len()?.checked_add(self.b.known_len()?)
    }
}

impl<A, B> DoubleEndedProducer for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
    type SeqRev<'s>
        = ChainSeq<B::SeqRev<'s>, A::SeqRev<'s>>
    where
        Self: 's;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        let (a, b) = self.split(range);
        // SAFETY: as in `seq`; back to front, `b`'s part comes first.
        unsafe {
            ChainSeq {
                first: b.map(|r| self.b.seq_rev(r)),
                second: a.map(|r| self.a.seq_rev(r)),
            }
        }
    }
}

impl<A, B> IndexedParallelIterator for Chain<A, B>
where
    A: IndexedParallelIterator,
    B: IndexedParallelIterator<Item = A::Item>,
{
}

/// The sequential side of [`Chain`]: the items of the first part's range, then the second's.
#[derive(Debug)]
pub struct ChainSeq<X, Y> {
    first: Option<X>,
    second: Option<Y>,
}

impl<X: Iterator, Y: Iterator<Item = X::Item>> Iterator for ChainSeq<X, Y> {
    type Item = X::Item;

    #[inline]
    fn next(&mut self) -> Option<X::Item> {
        if let Some(x) = &mut self.first {
            match x.next() {
                Some(item) => return Some(item),
                // Dropped now: a part's drain gives back what it holds as soon as it is done.
                None => self.first = None,
            }
        }
        self.second.as_mut()?.next()
    }

    fn fold<Acc, G: FnMut(Acc, X::Item) -> Acc>(self, init: Acc, mut g: G) -> Acc {
        let acc = match self.first {
            Some(x) => x.fold(init, &mut g),
            None => init,
        };
        match self.second {
            Some(y) => y.fold(acc, g),
            None => acc,
        }
    }
}

/// An indexed parallel iterator's items, last first (`rev`).
#[derive(Clone, Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Rev<I> {
    pub(crate) base: I,
}

impl<I: IndexedParallelIterator> Rev<I> {
    /// The base's indices for `range`: mirrored.
    #[inline]
    fn mirror(&self, range: Range<usize>) -> Range<usize> {
        let n = self.base.base_len();
        n - range.end..n - range.start
    }
}

impl<I: IndexedParallelIterator> Producer for Rev<I> {
    type Item = I::Item;
    type Seq<'a>
        = I::SeqRev<'a>
    where
        Self: 'a;
    const EXACT: bool = true;
    const PURE: bool = I::PURE;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: mirroring keeps disjoint ranges disjoint and within the base.
        unsafe { self.base.seq_rev(self.mirror(range)) }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: IndexedParallelIterator> DoubleEndedProducer for Rev<I> {
    type SeqRev<'a>
        = I::Seq<'a>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: as in `seq`.
        unsafe { self.base.seq(self.mirror(range)) }
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for Rev<I> {}

#[cfg(test)]
mod tests {
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    #[test]
    fn chains_keep_the_order_across_the_boundary() {
        on_every_team(|k| {
            for (na, nb) in [(0, 0), (0, 5), (5, 0), (3, 1000), (999, 2), (500, 500)] {
                let want: Vec<usize> = (0..na).chain(100_000..100_000 + nb).collect();
                let got: Vec<usize> = (0..na)
                    .into_par_iter()
                    .chain(100_000..100_000 + nb)
                    .collect();
                assert_eq!(got, want, "team {k}, {na} + {nb}");
                // indexed: zip, enumerate and rev see one index space
                assert_eq!(
                    (0..na).into_par_iter().chain(100_000..100_000 + nb).len(),
                    na + nb
                );
                let got: Vec<(usize, usize)> = (0..na)
                    .into_par_iter()
                    .chain(100_000..100_000 + nb)
                    .enumerate()
                    .rev()
                    .with_max_len(7)
                    .collect();
                let want_rev: Vec<(usize, usize)> =
                    want.iter().copied().enumerate().rev().collect();
                assert_eq!(got, want_rev, "team {k}");
                // unindexed parts
                let got: Vec<usize> = (0..na)
                    .into_par_iter()
                    .filter(|i| i % 3 == 0)
                    .chain((0..nb).into_par_iter().map(|i| i + 100_000))
                    .collect();
                let want: Vec<usize> = (0..na)
                    .filter(|i| i % 3 == 0)
                    .chain((0..nb).map(|i| i + 100_000))
                    .collect();
                assert_eq!(got, want, "team {k}");
            }
        });
    }

    #[test]
    fn rev_reverses_every_indexed_source() {
        on_every_team(|k| {
            let v: Vec<u32> = (0..1001).collect();
            let want: Vec<u32> = v.iter().rev().copied().collect();
            assert_eq!(v.par_iter().rev().copied().collect::<Vec<_>>(), want);
            assert_eq!(v.par_iter().rev().rev().copied().collect::<Vec<_>>(), v);
            assert_eq!((0..1001u32).into_par_iter().rev().collect::<Vec<_>>(), want);
            assert_eq!(
                (0..=1000u32).into_par_iter().rev().collect::<Vec<_>>(),
                want
            );
            assert_eq!(
                v.clone().into_par_iter().rev().collect::<Vec<_>>(),
                want,
                "team {k}"
            );
            let got: Vec<u32> = v.par_iter().step_by(7).rev().copied().collect();
            let want7: Vec<u32> = v.iter().step_by(7).rev().copied().collect();
            assert_eq!(got, want7);
            let got: Vec<u32> = v.par_iter().rev().step_by(7).copied().collect();
            let want7: Vec<u32> = v.iter().rev().step_by(7).copied().collect();
            assert_eq!(got, want7);
            let got: Vec<Vec<u32>> = v.par_chunks(10).rev().map(<[u32]>::to_vec).collect();
            let want10: Vec<Vec<u32>> = v.chunks(10).rev().map(<[u32]>::to_vec).collect();
            assert_eq!(got, want10);
            let got: Vec<u32> = v.par_windows(3).rev().map(|w| w[0]).collect();
            assert_eq!(got, v.windows(3).rev().map(|w| w[0]).collect::<Vec<_>>());
            let got: Vec<(u32, u32)> = v
                .par_iter()
                .zip(v.par_iter().skip(1).take(500))
                .rev()
                .map_init(|| 1, |one, (a, b)| (a + *one, *b))
                .collect();
            let want2: Vec<(u32, u32)> = v
                .iter()
                .zip(v.iter().skip(1).take(500))
                .rev()
                .map(|(a, b)| (a + 1, *b))
                .collect();
            assert_eq!(got, want2);
            let mut w = v.clone();
            w.par_iter_mut()
                .rev()
                .enumerate()
                .for_each(|(i, x)| *x = i as u32);
            assert_eq!(w, want);
            let got: Vec<(u32, &u32)> = (0..1001u32, &v).into_par_iter().rev().collect();
            assert!(got
                .iter()
                .enumerate()
                .all(|(i, &(a, &b))| a == 1000 - i as u32 && a == b));
        });
    }

    #[test]
    fn a_reversed_vec_drops_each_item_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let drops = AtomicUsize::new(0);
        struct D<'a>(&'a AtomicUsize, usize);
        impl Drop for D<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        on_every_team(|_| {
            drops.store(0, Ordering::Relaxed);
            let v: Vec<D<'_>> = (0..100).map(|i| D(&drops, i)).collect();
            let ids: Vec<usize> = v.into_par_iter().rev().take(10).map(|d| d.1).collect();
            assert_eq!(ids, (90..100).rev().collect::<Vec<_>>());
            assert_eq!(drops.load(Ordering::Relaxed), 100);
        });
    }
}
