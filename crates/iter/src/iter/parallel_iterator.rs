//! [`ParallelIterator`], with rayon's names and semantics: its adapters here, its terminal
//! calls in `terminal/methods.rs` (expanded into the trait by a macro: see there why).

use asat_core::Schedule;

use crate::internal::plumbing::{Hints, Producer};
use crate::iter::adapters::{
    CloneOf, Cloned, Copied, Filter, FilterMap, FlatMapIter, FlattenIter, Fold, FoldWith, InitFn,
    Inspect, Map, MapInit, MapState, MapWith, Update,
};
use crate::iter::chain::Chain;
use crate::iter::flat_map::{FlatMap, Flatten};
use crate::iter::indexed::Hinted;
use crate::iter::intersperse::Intersperse;
use crate::iter::panic_fuse::PanicFuse;
use crate::iter::take_any::{SkipAny, TakeAny, WhileSome};
use crate::iter::take_any_while::{SkipAnyWhile, TakeAnyWhile};
use crate::terminal::try_ops::{Try, TryFold, TryFoldBy, TryFoldWith};
use crate::IntoParallelIterator;

/// A parallel iterator: adapters build a chain, and each terminal call (`for_each`, `sum`,
/// `reduce`, `collect`, ...) runs it as one region of the current runtime, its team chosen by
/// the runtime's policy. See the [crate docs](crate) for how the work is split.
///
/// Implemented for every [`Producer`]; closures must be `Send + Sync`, as in rayon.
pub trait ParallelIterator: Producer + Sized {
    /// Items mapped by `f`.
    fn map<F, R>(self, f: F) -> Map<Self, F>
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Send,
    {
        Map { base: self, f }
    }

    /// Items mapped by `f` with a state made by `init` for each range of items.
    fn map_init<T, INIT, F, R>(self, init: INIT, f: F) -> MapInit<Self, INIT, F>
    where
        INIT: Fn() -> T + Sync + Send,
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        R: Send,
    {
        MapState {
            base: self,
            init: InitFn(init),
            f,
        }
    }

    /// Items mapped by `f` with a clone of `init` for each range of items.
    fn map_with<T, F, R>(self, init: T, f: F) -> MapWith<Self, T, F>
    where
        T: Clone + Send + Sync,
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        R: Send,
    {
        MapState {
            base: self,
            init: CloneOf(init),
            f,
        }
    }

    /// The items for which `pred` is true.
    fn filter<P>(self, pred: P) -> Filter<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Filter {
            base: self,
            f: pred,
        }
    }

    /// The values of the items `f` maps to `Some`.
    fn filter_map<F, R>(self, f: F) -> FilterMap<Self, F>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        FilterMap { base: self, f }
    }

    /// Each item mapped to a sequential iterator, flattened.
    fn flat_map_iter<F, U>(self, f: F) -> FlatMapIter<Self, F>
    where
        F: Fn(Self::Item) -> U + Sync + Send,
        U: IntoIterator,
        U::Item: Send,
    {
        FlatMapIter { base: self, f }
    }

    /// Each item mapped to a parallel iterator, whose items are flattened in order (rayon's
    /// `flat_map`). The inner iterators run sequentially, each on the thread that made its outer
    /// item; see [`flat_map`](crate::flat_map).
    fn flat_map<F, PI>(self, f: F) -> FlatMap<Self, F>
    where
        F: Fn(Self::Item) -> PI + Sync + Send,
        PI: IntoParallelIterator,
    {
        FlatMap { base: self, f }
    }

    /// Items that are themselves parallel iterators (or convert into them), flattened in order,
    /// as [`flat_map`](ParallelIterator::flat_map) with the identity.
    fn flatten(self) -> Flatten<Self>
    where
        Self::Item: IntoParallelIterator,
    {
        self.flat_map(std::convert::identity)
    }

    /// Items that are sequential iterators (or convert into them), flattened in order, as
    /// [`flat_map_iter`](ParallelIterator::flat_map_iter) with the identity.
    fn flatten_iter(self) -> FlattenIter<Self>
    where
        Self::Item: IntoIterator,
        <Self::Item as IntoIterator>::Item: Send,
    {
        self.flat_map_iter(std::convert::identity)
    }

    /// The items of `self`, then those of `chain` (rayon's `chain`): indexed when both are, and
    /// `collect` keeps that order.
    ///
    /// # Panics
    ///
    /// At the terminal call, if the two lengths together overflow a `usize`.
    fn chain<C>(self, chain: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain {
            a: self,
            b: chain.into_par_iter(),
        }
    }

    /// Calls `f` on a reference to each item as it passes.
    fn inspect<F>(self, f: F) -> Inspect<Self, F>
    where
        F: Fn(&Self::Item) + Sync + Send,
    {
        Inspect { base: self, f }
    }

    /// Items copied out of references.
    fn copied<'a, T>(self) -> Copied<Self>
    where
        T: 'a + Copy + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Copied { base: self }
    }

    /// Items cloned out of references.
    fn cloned<'a, T>(self) -> Cloned<Self>
    where
        T: 'a + Clone + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Cloned { base: self }
    }

    /// Sets the schedule that shares the items among the team (asat's own; `Static` is the
    /// default, see the [crate docs](crate)). Chunk sizes count items.
    fn with_schedule(self, schedule: Schedule) -> Hinted<Self> {
        let hints = Hints {
            schedule: Some(schedule),
            ..self.hints()
        };
        Hinted { base: self, hints }
    }

    /// One accumulator per range of items (one per member under the static schedule), started
    /// by `identity` and folded with `f`; reduce them with `reduce`, `sum` or `collect`.
    fn fold<T, ID, F>(self, identity: ID, f: F) -> Fold<Self, ID, F>
    where
        ID: Fn() -> T + Sync + Send,
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send,
    {
        Fold {
            base: self,
            identity,
            f,
        }
    }

    /// [`fold`](ParallelIterator::fold) with the fallible `f`: each range's fold stops at its
    /// first failure, which it yields instead of a value (see [`try_ops`](crate::try_ops)).
    fn try_fold<T, R, ID, F>(self, identity: ID, f: F) -> TryFold<Self, R, ID, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        R: Try<Output = T> + Send,
    {
        TryFoldBy::new(self, InitFn(identity), f)
    }

    /// [`try_fold`](ParallelIterator::try_fold) with each range's fold started from a clone of
    /// `init`.
    fn try_fold_with<F, T, R>(self, init: T, f: F) -> TryFoldWith<Self, R, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: Try<Output = T> + Send,
        T: Clone + Send + Sync,
    {
        TryFoldBy::new(self, CloneOf(init), f)
    }

    /// [`fold`](ParallelIterator::fold) with each range's accumulator started from a clone of
    /// `init`.
    fn fold_with<F, T>(self, init: T, f: F) -> FoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Clone + Send + Sync,
    {
        FoldWith {
            base: self,
            init,
            f,
        }
    }

    /// The values of the `Some` items until a `None` is met; then every member stops (which
    /// values come before it depends on timing: see [`take_any`](crate::take_any)).
    fn while_some<T>(self) -> WhileSome<Self>
    where
        Self: ParallelIterator<Item = Option<T>>,
        T: Send,
    {
        WhileSome::new(self)
    }

    /// `min(n, len)` of the items, from anywhere, in their relative order (the first `n`
    /// when items stand one for one at indices; see [`take_any`](crate::take_any)).
    fn take_any(self, n: usize) -> TakeAny<Self> {
        TakeAny::new(self, n)
    }

    /// The items less `min(n, len)` of them from anywhere, in their relative order (less the
    /// first `n` when items stand one for one at indices; see [`take_any`](crate::take_any)).
    fn skip_any(self, n: usize) -> SkipAny<Self> {
        SkipAny::new(self, n)
    }

    /// Items from anywhere in the iterator, in their relative order, until `pred` rejects one
    /// (rayon's `take_any_while`): every item yielded is one `pred` accepted, and once a member
    /// has met one it rejects, the items not yet made are not taken. Which accepted items come
    /// out depends on timing (see [`take_any_while`](mod@crate::take_any_while) for exactly
    /// which may); on a team of one it is std's `take_while`.
    ///
    /// ```
    /// use asat_iter::prelude::*;
    ///
    /// let v: Vec<u32> = (0..1000u32).into_par_iter().take_any_while(|&x| x < 500).collect();
    /// assert!(v.iter().all(|&x| x < 500));
    /// assert!(v.windows(2).all(|w| w[0] < w[1]));
    /// ```
    fn take_any_while<P>(self, pred: P) -> TakeAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        TakeAnyWhile::new(self, pred)
    }

    /// The items, in their relative order, less some from anywhere that `pred` accepts, until
    /// it rejects one (rayon's `skip_any_while`): every item `pred` rejects is yielded, and
    /// once a member has met one, each member yields the rest of its items without `pred` as
    /// soon as it sees that. Which accepted items are dropped depends on timing (see
    /// [`take_any_while`](mod@crate::take_any_while)); on a team of one it is std's
    /// `skip_while`.
    ///
    /// ```
    /// use asat_iter::prelude::*;
    ///
    /// let v: Vec<u32> = (0..1000u32).into_par_iter().skip_any_while(|&x| x < 500).collect();
    /// assert!(v.len() >= 500 && v.ends_with(&[998, 999]));
    /// assert!(v.windows(2).all(|w| w[0] < w[1]));
    /// ```
    fn skip_any_while<P>(self, pred: P) -> SkipAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        SkipAnyWhile::new(self, pred)
    }

    /// The items with a clone of `separator` between each two, as std's `intersperse`
    /// (rayon's `intersperse`): `2n - 1` items from `n`, indexed when `self` is. An unindexed
    /// iterator's items are gathered into a `Vec` first, at the terminal call (see
    /// [`intersperse`](mod@crate::intersperse) for why).
    ///
    /// ```
    /// use asat_iter::prelude::*;
    ///
    /// let v: Vec<i32> = vec![1, 2, 3].into_par_iter().intersperse(0).collect();
    /// assert_eq!(v, [1, 0, 2, 0, 3]);
    /// ```
    ///
    /// # Panics
    ///
    /// At the terminal call (or `len`), if `2n - 1` does not fit a `usize`.
    fn intersperse(self, separator: Self::Item) -> Intersperse<Self>
    where
        Self::Item: Clone,
    {
        Intersperse::new(self, separator)
    }

    /// The same items, but once a panic has unwound through one member's items, the other
    /// members stop taking items soon (rayon's `panic_fuse`); the panic still reaches the
    /// caller. Indexed when `self` is. See [`panic_fuse`](mod@crate::panic_fuse).
    fn panic_fuse(self) -> PanicFuse<Self> {
        PanicFuse::new(self)
    }

    /// The items, each changed in place by `f` on its way.
    fn update<F>(self, f: F) -> Update<Self, F>
    where
        F: Fn(&mut Self::Item) + Sync + Send,
    {
        Update { base: self, f }
    }

    /// The number of items if it is known before the call runs: `Some` for indexed iterators,
    /// whose items stand one for one at their indices, and for `u128` and `i128` ranges of
    /// fewer than `usize::MAX` items and the adapters over them that make one item of each
    /// (`map`, `inspect`, `update`, `copied`, `cloned`, `map_init`, `map_with`, `panic_fuse`;
    /// a `chain` whose two lengths are known and fit a `usize`), `None` for others (rayon's
    /// `opt_len`; see
    /// [`Producer::known_len`](crate::plumbing::Producer::known_len)).
    fn opt_len(&self) -> Option<usize> {
        self.known_len()
    }

    crate::terminal::methods::terminal_methods!();
}

impl<P: Producer> ParallelIterator for P {}
