//! [`Either`] of two parallel iterators with the same items is a parallel iterator (indexed
//! when both are), as in rayon: code that picks one of two iterators at run time
//! (`if sorted { Either::Left(a.par_iter()) } else { Either::Right(b.par_iter().rev()) }`)
//! makes one terminal call on whichever it holds.

use std::ops::Range;

use either::Either;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer, Stop};
use crate::IndexedParallelIterator;

impl<L, R> Producer for Either<L, R>
where
    L: Producer,
    R: Producer<Item = L::Item>,
{
    type Item = L::Item;
    type Seq<'a>
        = Either<L::Seq<'a>, R::Seq<'a>>
    where
        Self: 'a;
    // Only when whichever side it holds gives its items one for one at its indices.
    const EXACT: bool = L::EXACT && R::EXACT;

    fn base_len(&self) -> usize {
        match self {
            Either::Left(l) => l.base_len(),
            Either::Right(r) => r.base_len(),
        }
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        match self {
            // SAFETY: the caller's range goes unchanged to the one side there is.
            Either::Left(l) => Either::Left(unsafe { l.seq(range) }),
            // SAFETY: as above.
            Either::Right(r) => Either::Right(unsafe { r.seq(range) }),
        }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        match self {
            // SAFETY: the caller's range goes unchanged to the one side there is.
            Either::Left(l) => Either::Left(unsafe { l.seq_until(range, stop) }),
            // SAFETY: as above.
            Either::Right(r) => Either::Right(unsafe { r.seq_until(range, stop) }),
        }
    }

    fn hints(&self) -> Hints {
        match self {
            Either::Left(l) => l.hints(),
            Either::Right(r) => r.hints(),
        }
    }

    fn known_len(&self) -> Option<usize> {
        match self {
            Either::Left(l) => l.known_len(),
            Either::Right(r) => r.known_len(),
        }
    }
}

impl<L, R> IndexedParallelIterator for Either<L, R>
where
    L: IndexedParallelIterator,
    R: IndexedParallelIterator<Item = L::Item>,
{
}

impl<L, R> DoubleEndedProducer for Either<L, R>
where
    L: DoubleEndedProducer,
    R: DoubleEndedProducer<Item = L::Item>,
{
    type SeqRev<'a>
        = Either<L::SeqRev<'a>, R::SeqRev<'a>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        match self {
            // SAFETY: the caller's range goes unchanged to the one side there is.
            Either::Left(l) => Either::Left(unsafe { l.seq_rev(range) }),
            // SAFETY: as above.
            Either::Right(r) => Either::Right(unsafe { r.seq_rev(range) }),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;
    use either::Either;

    fn pick(v: &[u64], backwards: bool) -> impl IndexedParallelIterator<Item = u64> + '_ {
        if backwards {
            Either::Right(v.par_iter().rev().copied())
        } else {
            Either::Left(v.par_iter().copied())
        }
    }

    #[test]
    fn either_side_runs_as_the_iterator_it_holds() {
        on_every_team(|k| {
            let v: Vec<u64> = (0..1000).collect();
            for backwards in [false, true] {
                let got: Vec<u64> = pick(&v, backwards).collect();
                let mut want = v.clone();
                if backwards {
                    want.reverse();
                }
                assert_eq!(got, want, "team of {k}, backwards {backwards}");
                let got: Vec<(usize, u64)> =
                    pick(&v, backwards).enumerate().rev().take(3).collect();
                let want: Vec<(usize, u64)> =
                    want.iter().copied().enumerate().rev().take(3).collect();
                assert_eq!(got, want, "team of {k}");
            }
            // unindexed sides
            let odd = |x: &u64| x % 2 == 1;
            let it: Either<_, _> = if k % 2 == 0 {
                Either::Left(v.par_iter().copied().filter(odd))
            } else {
                Either::Right((0..1000u64).into_par_iter().filter(odd))
            };
            assert_eq!(it.sum::<u64>(), 250_000, "team of {k}");
        });
    }
}
