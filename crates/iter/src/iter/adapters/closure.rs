//! The adapters that hold one closure and whose sequential side is the std adapter of the
//! same name: `map`, `filter`, `filter_map`, `flat_map_iter` (and `flatten_iter`), `inspect`.

use std::fmt::Debug;
use std::ops::Range;

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer, Stop, Stoppable};
use crate::IndexedParallelIterator;

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

/// rayon's name for what `flatten_iter` returns: a [`FlatMapIter`] with the identity.
pub type FlattenIter<I> = FlatMapIter<I, fn(<I as Producer>::Item) -> <I as Producer>::Item>;
