//! Adapters that change items but not how the index space is split: `map`, `filter`,
//! `filter_map`, `flat_map_iter`, `inspect`, `copied`, `cloned`, `map_init`, `map_with`,
//! `update`, `fold`, `fold_with`, `positions`. Each one's sequential side is the std adapter
//! of the same name over its base's range (or a small iterator of its own), so a chain
//! compiles to the loop a sequential chain would.

use std::fmt::Debug;
use std::ops::Range;

use crate::fmt::debug_fields;
use crate::plumbing::{DoubleEndedProducer, Hints, Producer, Stop, Stoppable};
use crate::IndexedParallelIterator;

mod fold;
mod map_state;

pub use fold::{Fold, FoldSeq, FoldWith};
pub use map_state::{CloneOf, InitFn, MapInit, MapState, MapStateSeq, MapWith, StateInit};

/// Declares an adapter `$name<I, F>` holding a base producer and one closure, with the
/// `Producer` impl forwarding length and hints; `$indexed` says whether items stay one for one.
macro_rules! closure_adapter {
    (
        $(#[$doc:meta])*
        $name:ident, indexed: $indexed:tt, drops: $drops:tt,
        impl<$($g:ident),*> where [$($bounds:tt)*]
        item $item:ty, seq $seq:ty, |$base:ident, $f:ident| $make:expr
    ) => {
        $(#[$doc])*
        #[derive(Clone)]
        #[must_use = "parallel iterator adapters do nothing until a terminal call"]
        pub struct $name<I, F> {
            pub(crate) base: I,
            pub(crate) f: F,
        }

        debug_fields!(impl[I: Debug, F] $name<I, F> { base });

        impl<I: Producer, F, $($g),*> Producer for $name<I, F>
        where
            F: Send + Sync,
            $($bounds)*
        {
            type Item = $item;
            type Seq<'a> = $seq where Self: 'a;
            const EXACT: bool = closure_adapter!(@exact $indexed);

            #[inline]
            fn base_len(&self) -> usize {
                self.base.base_len()
            }

            #[inline]
            unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
                // SAFETY: the caller's range goes to the base unchanged.
                let $base = unsafe { self.base.seq(range) };
                let $base = closure_adapter!(@read $drops $base, None);
                let $f = &self.f;
                $make
            }

            #[inline]
            unsafe fn seq_until<'a>(
                &'a self,
                range: Range<usize>,
                stop: Stop<'a>,
            ) -> Self::Seq<'a> {
                // SAFETY: the caller's range goes to the base unchanged.
                let $base = unsafe { self.base.seq_until(range, stop) };
                let $base = closure_adapter!(@read $drops $base, Some(stop));
                let $f = &self.f;
                $make
            }

            #[inline]
            fn hints(&self) -> Hints {
                self.base.hints()
            }

            fn known_len(&self) -> Option<usize> {
                closure_adapter!(@known $indexed self)
            }
        }

        closure_adapter!(@indexed $indexed $name [$($g),*] [$($bounds)*]);
    };
    (@indexed true $name:ident [$($g:ident),*] [$($bounds:tt)*]) => {
        impl<I: IndexedParallelIterator, F, $($g),*> IndexedParallelIterator for $name<I, F>
        where
            F: Send + Sync,
            $($bounds)*
        {
        }
    };
    (@indexed false $($rest:tt)*) => {};
    (@read true $base:ident, $stop:expr) => { Stoppable::new($base, $stop) };
    (@read false $base:ident, $stop:expr) => { $base };
    (@exact true) => { I::EXACT };
    (@exact false) => { false };
    // One item for each of the base's: its count is the base's.
    (@known true $self:ident) => { $self.base.known_len() };
    (@known false $self:ident) => { None };
}

closure_adapter! {
    /// Items mapped by a closure (`map`).
    Map, indexed: true, drops: false,
    impl<R> where [F: Fn(I::Item) -> R, R: Send,]
    item R, seq std::iter::Map<I::Seq<'a>, &'a F>, |base, f| base.map(f)
}

closure_adapter! {
    /// Items a predicate keeps (`filter`).
    Filter, indexed: false, drops: true,
    impl<> where [F: Fn(&I::Item) -> bool,]
    item I::Item, seq std::iter::Filter<Stoppable<'a, I::Seq<'a>>, &'a F>, |base, f| base.filter(f)
}

closure_adapter! {
    /// Items mapped to options, the `Some`s kept (`filter_map`).
    FilterMap, indexed: false, drops: true,
    impl<R> where [F: Fn(I::Item) -> Option<R>, R: Send,]
    item R, seq std::iter::FilterMap<Stoppable<'a, I::Seq<'a>>, &'a F>, |base, f| base.filter_map(f)
}

closure_adapter! {
    /// Each item mapped to a sequential iterator, flattened (`flat_map_iter`).
    FlatMapIter, indexed: false, drops: true,
    impl<U> where [F: Fn(I::Item) -> U, U: IntoIterator, U::Item: Send,]
    item U::Item, seq std::iter::FlatMap<Stoppable<'a, I::Seq<'a>>, U, &'a F>,
    |base, f| base.flat_map(f)
}

closure_adapter! {
    /// Items passed to a closure on their way (`inspect`).
    Inspect, indexed: true, drops: false,
    impl<> where [F: Fn(&I::Item),]
    item I::Item, seq std::iter::Inspect<I::Seq<'a>, &'a F>, |base, f| base.inspect(f)
}

/// Items changed in place by a closure on their way (`update`).
#[derive(Clone)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Update<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

debug_fields!(impl[I: Debug, F] Update<I, F> { base });

impl<I: Producer, F: Fn(&mut I::Item) + Send + Sync> Producer for Update<I, F> {
    type Item = I::Item;
    type Seq<'a>
        = UpdateSeq<'a, I::Seq<'a>, F>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        UpdateSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { self.base.seq(range) },
            f: &self.f,
        }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        UpdateSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { self.base.seq_until(range, stop) },
            f: &self.f,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
    fn known_len(&self) -> Option<usize> {
        self.base.known_len()
    }
}

impl<I, F> IndexedParallelIterator for Update<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(&mut I::Item) + Send + Sync,
{
}

impl<I, F> DoubleEndedProducer for Update<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(&mut I::Item) + Send + Sync,
{
    type SeqRev<'a>
        = UpdateSeq<'a, I::SeqRev<'a>, F>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        UpdateSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { self.base.seq_rev(range) },
            f: &self.f,
        }
    }
}

/// The sequential side of [`Update`].
pub struct UpdateSeq<'a, J, F> {
    items: J,
    f: &'a F,
}

debug_fields!(impl['a, J: Debug, F] UpdateSeq<'a, J, F> { items });

impl<J: Iterator, F: Fn(&mut J::Item)> Iterator for UpdateSeq<'_, J, F> {
    type Item = J::Item;

    #[inline]
    fn next(&mut self) -> Option<J::Item> {
        let mut x = self.items.next()?;
        (self.f)(&mut x);
        Some(x)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

/// Declares `DoubleEndedProducer` for an indexed closure adapter: the std adapter over the base's
/// reversed range.
macro_rules! closure_adapter_rev {
    ($name:ident, impl<$($g:ident),*> where [$($bounds:tt)*], $adapter:ident, $method:ident) => {
        impl<I: IndexedParallelIterator, F, $($g),*> DoubleEndedProducer for $name<I, F>
        where
            F: Send + Sync,
            $($bounds)*
        {
            type SeqRev<'a> = std::iter::$adapter<I::SeqRev<'a>, &'a F> where Self: 'a;

            #[inline]
            unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
                // SAFETY: the caller's range goes to the base unchanged.
                unsafe { self.base.seq_rev(range) }.$method(&self.f)
            }
        }
    };
}

closure_adapter_rev!(Map, impl<R> where [F: Fn(I::Item) -> R, R: Send,], Map, map);
closure_adapter_rev!(Inspect, impl<> where [F: Fn(&I::Item),], Inspect, inspect);

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

/// rayon's name for what `flatten_iter` returns: a [`FlatMapIter`] with the identity.
pub type FlattenIter<I> = FlatMapIter<I, fn(<I as Producer>::Item) -> <I as Producer>::Item>;

/// The indices of the items a predicate holds for (`positions`), in order.
#[derive(Clone)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Positions<I, P> {
    pub(crate) base: I,
    pub(crate) pred: P,
}

debug_fields!(impl[I: Debug, P] Positions<I, P> { base });

impl<I, P> Producer for Positions<I, P>
where
    I: IndexedParallelIterator,
    P: Fn(I::Item) -> bool + Send + Sync,
{
    type Item = usize;
    type Seq<'a>
        = PositionsSeq<'a, I::Seq<'a>, P>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        let items = range.clone().zip(unsafe { self.base.seq(range) });
        PositionsSeq {
            items: Stoppable::new(items, None),
            pred: &self.pred,
        }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        // SAFETY: the caller's range goes to the base unchanged.
        let items = range
            .clone()
            .zip(unsafe { self.base.seq_until(range, stop) });
        PositionsSeq {
            items: Stoppable::new(items, Some(stop)),
            pred: &self.pred,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

/// The sequential side of [`Positions`].
pub struct PositionsSeq<'a, J, P> {
    items: Stoppable<'a, std::iter::Zip<Range<usize>, J>>,
    pred: &'a P,
}

debug_fields!(impl['a, J: Debug, P] PositionsSeq<'a, J, P> { items });

impl<J: Iterator, P: Fn(J::Item) -> bool> Iterator for PositionsSeq<'_, J, P> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        let pred = self.pred;
        self.items.find_map(|(i, x)| pred(x).then_some(i))
    }
}
