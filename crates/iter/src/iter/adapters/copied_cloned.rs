//! `copied` and `cloned`: `&T` items turned into `T` by std's adapters of the same names.

use std::ops::Range;

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer, Stop};
use crate::IndexedParallelIterator;

/// Declares an adapter that turns `&T` items into `T` with std's adapter of the same name
/// (`copied`, `cloned`).
macro_rules! deref_adapter {
    ($(#[$doc:meta])* $name:ident, $bound:ident, $method:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        #[must_use = "parallel iterator adapters do nothing until a terminal call"]
        pub struct $name<I> {
            pub(crate) base: I,
        }

        impl<'d, T, I> Producer for $name<I>
        where
            T: 'd + $bound + Send + Sync,
            I: Producer<Item = &'d T>,
        {
            type Item = T;
            type Seq<'a> = std::iter::$name<I::Seq<'a>> where Self: 'a;
            const EXACT: bool = I::EXACT;

            fn base_len(&self) -> usize {
                self.base.base_len()
            }

            #[inline]
            unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
                // SAFETY: the caller's range goes to the base unchanged.
                unsafe { self.base.seq(range) }.$method()
            }

            #[inline]
            unsafe fn seq_until<'a>(
                &'a self,
                range: Range<usize>,
                stop: Stop<'a>,
            ) -> Self::Seq<'a> {
                // SAFETY: the caller's range goes to the base unchanged.
                unsafe { self.base.seq_until(range, stop) }.$method()
            }

            fn hints(&self) -> Hints {
                self.base.hints()
            }

            fn known_len(&self) -> Option<usize> {
                self.base.known_len()
            }
        }

        impl<'d, T, I> IndexedParallelIterator for $name<I>
        where
            T: 'd + $bound + Send + Sync,
            I: IndexedParallelIterator<Item = &'d T>,
        {
        }

        impl<'d, T, I> DoubleEndedProducer for $name<I>
        where
            T: 'd + $bound + Send + Sync,
            I: IndexedParallelIterator<Item = &'d T>,
        {
            type SeqRev<'a> = std::iter::$name<I::SeqRev<'a>> where Self: 'a;

            #[inline]
            unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
                // SAFETY: the caller's range goes to the base unchanged.
                unsafe { self.base.seq_rev(range) }.$method()
            }
        }
    };
}

deref_adapter! {
    /// Items copied out of references (`copied`).
    Copied, Copy, copied
}

deref_adapter! {
    /// Items cloned out of references (`cloned`).
    Cloned, Clone, cloned
}
