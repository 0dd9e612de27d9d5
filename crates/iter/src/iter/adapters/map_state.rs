//! `map_init` and `map_with`: items mapped with a state made once per range.

use std::fmt::Debug;
use std::ops::Range;

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer, Stop};
use crate::IndexedParallelIterator;

/// rayon's name for what `map_init` returns: a [`MapState`] whose states `init` makes.
pub type MapInit<I, INIT, F> = MapState<I, InitFn<INIT>, F>;

/// rayon's name for what `map_with` returns: a [`MapState`] whose states are clones of `T`.
pub type MapWith<I, T, F> = MapState<I, CloneOf<T>, F>;

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

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        MapStateSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            iter: unsafe { self.base.seq_until(range, stop) },
            state: self.init.make(),
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
