//! Adapters that change items but not how the index space is split: `map`, `filter`,
//! `filter_map`, `flat_map_iter`, `inspect`, `copied`, `cloned`, `map_init`, `map_with`,
//! `update`, `fold`, `fold_with`, `positions`. Each one's sequential side is the std adapter
//! of the same name over its base's range (or a small iterator of its own), so a chain
//! compiles to the loop a sequential chain would.

use std::fmt::Debug;
use std::ops::Range;

use crate::fmt::debug_fields;
use crate::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::IndexedParallelIterator;

/// Declares an adapter `$name<I, F>` holding a base producer and one closure, with the
/// `Producer` impl forwarding length and hints; `$indexed` says whether items stay one for one.
macro_rules! closure_adapter {
    (
        $(#[$doc:meta])*
        $name:ident, indexed: $indexed:tt,
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
                let $f = &self.f;
                $make
            }

            #[inline]
            fn hints(&self) -> Hints {
                self.base.hints()
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
    (@exact true) => { I::EXACT };
    (@exact false) => { false };
}

closure_adapter! {
    /// Items mapped by a closure (`map`).
    Map, indexed: true,
    impl<R> where [F: Fn(I::Item) -> R, R: Send,]
    item R, seq std::iter::Map<I::Seq<'a>, &'a F>, |base, f| base.map(f)
}

closure_adapter! {
    /// Items a predicate keeps (`filter`).
    Filter, indexed: false,
    impl<> where [F: Fn(&I::Item) -> bool,]
    item I::Item, seq std::iter::Filter<I::Seq<'a>, &'a F>, |base, f| base.filter(f)
}

closure_adapter! {
    /// Items mapped to options, the `Some`s kept (`filter_map`).
    FilterMap, indexed: false,
    impl<R> where [F: Fn(I::Item) -> Option<R>, R: Send,]
    item R, seq std::iter::FilterMap<I::Seq<'a>, &'a F>, |base, f| base.filter_map(f)
}

closure_adapter! {
    /// Each item mapped to a sequential iterator, flattened (`flat_map_iter`).
    FlatMapIter, indexed: false,
    impl<U> where [F: Fn(I::Item) -> U, U: IntoIterator, U::Item: Send,]
    item U::Item, seq std::iter::FlatMap<I::Seq<'a>, U, &'a F>, |base, f| base.flat_map(f)
}

closure_adapter! {
    /// Items passed to a closure on their way (`inspect`).
    Inspect, indexed: true,
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

    fn hints(&self) -> Hints {
        self.base.hints()
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

            fn hints(&self) -> Hints {
                self.base.hints()
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

/// rayon's name for what `map_init` returns: a [`MapState`] whose states `init` makes.
pub type MapInit<I, INIT, F> = MapState<I, InitFn<INIT>, F>;

/// rayon's name for what `map_with` returns: a [`MapState`] whose states are clones of `T`.
pub type MapWith<I, T, F> = MapState<I, CloneOf<T>, F>;

/// rayon's name for what `flatten_iter` returns: a [`FlatMapIter`] with the identity.
pub type FlattenIter<I> = FlatMapIter<I, fn(<I as Producer>::Item) -> <I as Producer>::Item>;

/// Items mapped with a per-range state (`map_init`: made by a closure; `map_with`: cloned from
/// a value). One state serves one range, that is one member's share under the static schedule.
#[derive(Clone)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct MapState<I, S, F> {
    pub(crate) base: I,
    pub(crate) init: S,
    pub(crate) f: F,
}

debug_fields!(impl[I: Debug, S: Debug, F] MapState<I, S, F> { base, init });

/// Makes the state of one range for [`MapState`].
pub trait StateInit: Send + Sync {
    /// The state.
    type State;
    /// A fresh state.
    fn make(&self) -> Self::State;
}

/// `map_init`'s closure as a [`StateInit`].
#[derive(Clone)]
pub struct InitFn<G>(pub(crate) G);

debug_fields!(impl[G] InitFn<G> (..));

impl<G: Fn() -> T + Send + Sync, T> StateInit for InitFn<G> {
    type State = T;
    fn make(&self) -> T {
        (self.0)()
    }
}

/// `map_with`'s value as a [`StateInit`].
#[derive(Clone, Debug)]
pub struct CloneOf<T>(pub(crate) T);

impl<T: Clone + Send + Sync> StateInit for CloneOf<T> {
    type State = T;
    fn make(&self) -> T {
        self.0.clone()
    }
}

/// The sequential side of [`MapState`].
pub struct MapStateSeq<'a, J, T, F> {
    iter: J,
    state: T,
    f: &'a F,
}

debug_fields!(impl['a, J: Debug, T: Debug, F] MapStateSeq<'a, J, T, F> { iter, state });

impl<J: Iterator, T, F: Fn(&mut T, J::Item) -> R, R> Iterator for MapStateSeq<'_, J, T, F> {
    type Item = R;

    #[inline]
    fn next(&mut self) -> Option<R> {
        let x = self.iter.next()?;
        Some((self.f)(&mut self.state, x))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl<I, S, F, R> Producer for MapState<I, S, F>
where
    I: Producer,
    S: StateInit,
    F: Fn(&mut S::State, I::Item) -> R + Send + Sync,
    R: Send,
{
    type Item = R;
    type Seq<'a>
        = MapStateSeq<'a, I::Seq<'a>, S::State, F>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        MapStateSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            iter: unsafe { self.base.seq(range) },
            state: self.init.make(),
            f: &self.f,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I, S, F, R> IndexedParallelIterator for MapState<I, S, F>
where
    I: IndexedParallelIterator,
    S: StateInit,
    F: Fn(&mut S::State, I::Item) -> R + Send + Sync,
    R: Send,
{
}

impl<I, S, F, R> DoubleEndedProducer for MapState<I, S, F>
where
    I: IndexedParallelIterator,
    S: StateInit,
    F: Fn(&mut S::State, I::Item) -> R + Send + Sync,
    R: Send,
{
    type SeqRev<'a>
        = MapStateSeq<'a, I::SeqRev<'a>, S::State, F>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        MapStateSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            iter: unsafe { self.base.seq_rev(range) },
            state: self.init.make(),
            f: &self.f,
        }
    }
}

/// One accumulator per range, folded from its items (`fold`): under the static schedule, one
/// per member. Reduce them with `reduce`, `sum` or `collect`.
#[derive(Clone)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct Fold<I, ID, F> {
    pub(crate) base: I,
    pub(crate) identity: ID,
    pub(crate) f: F,
}

debug_fields!(impl[I: Debug, ID, F] Fold<I, ID, F> { base });

impl<I, ID, F, T> Producer for Fold<I, ID, F>
where
    I: Producer,
    ID: Fn() -> T + Send + Sync,
    F: Fn(T, I::Item) -> T + Send + Sync,
    T: Send,
{
    type Item = T;
    type Seq<'a>
        = FoldSeq<'a, I::Seq<'a>, T, F>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        let items = unsafe { self.base.seq(range) };
        FoldSeq {
            todo: Some((items, (self.identity)())),
            f: &self.f,
        }
    }

    fn hints(&self) -> Hints {
        Hints {
            late: true,
            ..self.base.hints()
        }
    }
}

/// The sequential side of [`Fold`] and [`FoldWith`]: one accumulator, folded from the range's
/// items when it is asked for, so that a search that has its answer by then does not fold
/// the range (see [`Hints::late`]).
pub struct FoldSeq<'a, J, T, F> {
    todo: Option<(J, T)>,
    f: &'a F,
}

debug_fields!(impl['a, J: Debug, T: Debug, F] FoldSeq<'a, J, T, F> { todo });

impl<J: Iterator, T, F: Fn(T, J::Item) -> T> Iterator for FoldSeq<'_, J, T, F> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        let (items, init) = self.todo.take()?;
        Some(items.fold(init, self.f))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::from(self.todo.is_some());
        (n, Some(n))
    }
}

/// One accumulator per range, started from a clone of a value and folded from the range's
/// items (`fold_with`): under the static schedule, one per member.
#[derive(Clone)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct FoldWith<I, T, F> {
    pub(crate) base: I,
    pub(crate) init: T,
    pub(crate) f: F,
}

debug_fields!(impl[I: Debug, T: Debug, F] FoldWith<I, T, F> { base, init });

impl<I, T, F> Producer for FoldWith<I, T, F>
where
    I: Producer,
    T: Clone + Send + Sync,
    F: Fn(T, I::Item) -> T + Send + Sync,
{
    type Item = T;
    type Seq<'a>
        = FoldSeq<'a, I::Seq<'a>, T, F>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller's range goes to the base unchanged.
        let items = unsafe { self.base.seq(range) };
        FoldSeq {
            todo: Some((items, self.init.clone())),
            f: &self.f,
        }
    }

    fn hints(&self) -> Hints {
        Hints {
            late: true,
            ..self.base.hints()
        }
    }
}

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
        PositionsSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: range.clone().zip(unsafe { self.base.seq(range) }),
            pred: &self.pred,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

/// The sequential side of [`Positions`].
pub struct PositionsSeq<'a, J, P> {
    items: std::iter::Zip<Range<usize>, J>,
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
