//! `zip` and `zip_eq`: two indexed iterators in lock step; and [`MultiZip`], a tuple of
//! indexed iterators in lock step, made by `into_par_iter` on a tuple of sources.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::{IndexedParallelIterator, IntoParallelIterator};

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
