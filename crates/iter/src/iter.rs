//! The traits user code calls: [`ParallelIterator`], [`IndexedParallelIterator`], and the
//! conversions into them, with rayon's names and semantics.

use std::cmp::Ordering as CmpOrdering;
use std::collections::LinkedList;
use std::iter::{Product, Sum};

use asat_core::Schedule;

use crate::adapters::{
    CloneOf, Cloned, Copied, Filter, FilterMap, FlatMapIter, Fold, FoldWith, InitFn, Inspect, Map,
    MapState, Update,
};
use crate::chain::Chain;
use crate::collect::FromParallelIterator;
use crate::drive;
use crate::find;
use crate::flat_map::FlatMap;
use crate::indexed::Hinted;
use crate::plumbing::{Hints, Producer};
use crate::take_any::{SkipAny, TakeAny, WhileSome};
use crate::try_ops::{self, Try, TryFold, TryFoldBy, TryFoldWith};
use crate::unzip::{self, Either};
use crate::{IntoParallelIterator, ParallelExtend};

/// A parallel iterator: adapters build a chain, and each terminal call (`for_each`, `sum`,
/// `reduce`, `collect`, ...) runs it as one region of the current runtime, its team chosen by
/// the runtime's policy. See the [crate docs](crate) for how the work is split.
///
/// Implemented for every [`Producer`]; closures must be `Send + Sync`, as in rayon.
pub trait ParallelIterator: Producer + Sized {
    /// Calls `op` on every item.
    fn for_each<F>(self, op: F)
    where
        F: Fn(Self::Item) + Sync + Send,
    {
        drive::run(&self, |_, items| items.for_each(&op));
    }

    /// Calls `op` on every item with a state made by `init` for each range of items (one per
    /// member under the static schedule), such as a scratch buffer.
    fn for_each_init<T, INIT, F>(self, init: INIT, op: F)
    where
        INIT: Fn() -> T + Sync + Send,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        self.map_init(init, op).for_each(drop);
    }

    /// Calls `op` on every item with a clone of `init` for each range of items.
    fn for_each_with<T, F>(self, init: T, op: F)
    where
        T: Clone + Send + Sync,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        self.map_with(init, op).for_each(drop);
    }

    /// Items mapped by `f`.
    fn map<F, R>(self, f: F) -> Map<Self, F>
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Send,
    {
        Map { base: self, f }
    }

    /// Items mapped by `f` with a state made by `init` for each range of items.
    fn map_init<T, INIT, F, R>(self, init: INIT, f: F) -> MapState<Self, InitFn<INIT>, F>
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
    fn map_with<T, F, R>(self, init: T, f: F) -> MapState<Self, CloneOf<T>, F>
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
    /// `flat_map`). The inner iterators run sequentially, each on the member that made its outer
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
    #[allow(clippy::type_complexity)]
    fn flatten(self) -> FlatMap<Self, fn(Self::Item) -> Self::Item>
    where
        Self::Item: IntoParallelIterator,
    {
        self.flat_map(std::convert::identity)
    }

    /// Items that are sequential iterators (or convert into them), flattened in order, as
    /// [`flat_map_iter`](ParallelIterator::flat_map_iter) with the identity.
    #[allow(clippy::type_complexity)]
    fn flatten_iter(self) -> FlatMapIter<Self, fn(Self::Item) -> Self::Item>
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

    /// Combines the items with `op`, starting each range from `identity()`. `op` must be
    /// associative and `identity()` its identity; it need not be commutative (items are
    /// combined in order).
    fn reduce<ID, OP>(self, identity: ID, op: OP) -> Self::Item
    where
        ID: Fn() -> Self::Item + Sync + Send,
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        drive::reduce(&self, &identity, |acc, items| items.fold(acc, &op), &op)
    }

    /// Combines the items with the associative `op`, in order; `None` if there are none.
    fn reduce_with<OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        let join = |a: Option<Self::Item>, b: Option<Self::Item>| match (a, b) {
            (Some(a), Some(b)) => Some(op(a, b)),
            (a, b) => a.or(b),
        };
        drive::reduce(
            &self,
            || None,
            |acc, items| join(acc, items.reduce(&op)),
            join,
        )
    }

    /// The sum of the items (floating-point sums are added range by range, so they may differ
    /// from a sequential sum within rounding).
    fn sum<S>(self) -> S
    where
        S: Send + Sum<Self::Item> + Sum<S>,
    {
        let add = |a: S, b: S| [a, b].into_iter().sum();
        drive::reduce(
            &self,
            || std::iter::empty::<S>().sum(),
            |acc, items| add(acc, items.sum()),
            add,
        )
    }

    /// The product of the items.
    fn product<P>(self) -> P
    where
        P: Send + Product<Self::Item> + Product<P>,
    {
        let mul = |a: P, b: P| [a, b].into_iter().product();
        drive::reduce(
            &self,
            || std::iter::empty::<P>().product(),
            |acc, items| mul(acc, items.product()),
            mul,
        )
    }

    /// The number of items.
    fn count(self) -> usize {
        drive::reduce(&self, || 0, |n, items| n + items.count(), |a, b| a + b)
    }

    /// The smallest item (the first of equal ones), `None` if there are none.
    fn min(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.min_by(Ord::cmp)
    }

    /// The largest item (the last of equal ones), `None` if there are none.
    fn max(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.max_by(Ord::cmp)
    }

    /// The smallest item by `cmp` (the first of equal ones).
    fn min_by<F>(self, cmp: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> CmpOrdering + Sync + Send,
    {
        self.reduce_with(|a, b| match cmp(&a, &b) {
            CmpOrdering::Greater => b,
            _ => a,
        })
    }

    /// The largest item by `cmp` (the last of equal ones).
    fn max_by<F>(self, cmp: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> CmpOrdering + Sync + Send,
    {
        self.reduce_with(|a, b| match cmp(&a, &b) {
            CmpOrdering::Greater => a,
            _ => b,
        })
    }

    /// The item with the smallest key (the first of equal ones).
    fn min_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        self.map(|x| (f(&x), x))
            .min_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, x)| x)
    }

    /// The item with the largest key (the last of equal ones).
    fn max_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        self.map(|x| (f(&x), x))
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, x)| x)
    }

    /// Whether `pred` is true for some item; stops early once one is found.
    fn any<P>(self, pred: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        find::any(&self, pred)
    }

    /// Whether `pred` is true for every item; stops early once one fails.
    fn all<P>(self, pred: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        !self.any(|x| !pred(x))
    }

    /// Some item for which `pred` is true, not necessarily the first; stops early.
    fn find_any<P>(self, pred: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find_any(&self, pred)
    }

    /// The first item (in order) for which `pred` is true.
    fn find_first<P>(self, pred: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find_first(&self, pred)
    }

    /// The last item (in order) for which `pred` is true.
    fn find_last<P>(self, pred: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find_last(&self, pred)
    }

    /// Calls the fallible `op` on every item; stops at a failure (an `Err` or `None`) and
    /// returns it, else `Ok(())` or `Some(())`. See [`try_ops`](crate::try_ops) for how the
    /// call stops and which failure it returns when several items fail.
    ///
    /// ```
    /// use asat_iter::prelude::*;
    ///
    /// let r = (0..1000u32)
    ///     .into_par_iter()
    ///     .try_for_each(|i| if i == 700 { Err(i) } else { Ok(()) });
    /// assert_eq!(r, Err(700));
    /// ```
    fn try_for_each<OP, R>(self, op: OP) -> R
    where
        OP: Fn(Self::Item) -> R + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map(op).try_reduce(<()>::default, try_ops::both_done)
    }

    /// [`try_for_each`](ParallelIterator::try_for_each) with a clone of `init` for each range
    /// of items.
    fn try_for_each_with<OP, T, R>(self, init: T, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Clone + Send + Sync,
        R: Try<Output = ()> + Send,
    {
        self.map_with(init, op)
            .try_reduce(<()>::default, try_ops::both_done)
    }

    /// [`try_for_each`](ParallelIterator::try_for_each) with a state made by `init` for each
    /// range of items.
    fn try_for_each_init<OP, INIT, T, R>(self, init: INIT, op: OP) -> R
    where
        OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map_init(init, op)
            .try_reduce(<()>::default, try_ops::both_done)
    }

    /// Combines items that may be failures with the fallible, associative `op`, starting each
    /// range from `identity()`; stops at a failure and returns the first one in order among
    /// the items that ran (see [`try_ops`](crate::try_ops)).
    ///
    /// ```
    /// use asat_iter::prelude::*;
    ///
    /// let sum = (0..100u8).into_par_iter().map(Some).try_reduce(|| 0, u8::checked_add);
    /// assert_eq!(sum, None); // overflows
    /// ```
    fn try_reduce<T, OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        try_ops::try_reduce(self, identity, op)
    }

    /// [`try_reduce`](ParallelIterator::try_reduce) without an identity: `None` if there are no
    /// items, else `Some` of the result or of the failure.
    fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        try_ops::try_reduce_with(self, op)
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

    /// Splits pairs into two collections, each in order (see [`unzip`](crate::unzip)).
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        FromA: Default + Send + ParallelExtend<A>,
        FromB: Default + Send + ParallelExtend<B>,
        A: Send,
        B: Send,
    {
        unzip::unzip(self)
    }

    /// The items `pred` holds for, and the others, in two collections, each in order.
    fn partition<A, B, P>(self, pred: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<Self::Item>,
        B: Default + Send + ParallelExtend<Self::Item>,
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        unzip::partition(self, pred)
    }

    /// The `Left` and the `Right` values `f` maps the items to, in two collections, each in
    /// order ([`Either`](crate::Either) is the `either` crate's, as in rayon).
    ///
    /// ```
    /// use asat_iter::prelude::*;
    /// use asat_iter::Either;
    ///
    /// let (evens, odds): (Vec<u32>, Vec<String>) = (0..10u32)
    ///     .into_par_iter()
    ///     .partition_map(|i| match i % 2 {
    ///         0 => Either::Left(i),
    ///         _ => Either::Right(i.to_string()),
    ///     });
    /// assert_eq!(evens, [0, 2, 4, 6, 8]);
    /// assert_eq!(odds, ["1", "3", "5", "7", "9"]);
    /// ```
    fn partition_map<A, B, P, L, R>(self, f: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<L>,
        B: Default + Send + ParallelExtend<R>,
        P: Fn(Self::Item) -> Either<L, R> + Sync + Send,
        L: Send,
        R: Send,
    {
        unzip::partition_map(self, f)
    }

    /// What `f` maps some item to, if it maps any to `Some`; stops early (as
    /// [`find_any`](ParallelIterator::find_any)).
    fn find_map_any<F, R>(self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(f).find_any(|_| true)
    }

    /// What `f` maps the first item it maps to `Some` to.
    fn find_map_first<F, R>(self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(f).find_first(|_| true)
    }

    /// What `f` maps the last item it maps to `Some` to.
    fn find_map_last<F, R>(self, f: F) -> Option<R>
    where
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
        R: Send,
    {
        self.filter_map(f).find_last(|_| true)
    }

    /// The items, each changed in place by `f` on its way.
    fn update<F>(self, f: F) -> Update<Self, F>
    where
        F: Fn(&mut Self::Item) + Sync + Send,
    {
        Update { base: self, f }
    }

    /// The items in a list of vectors, one per range that has items, in order (rayon's
    /// `collect_vec_list`: no copy into one vector).
    fn collect_vec_list(self) -> LinkedList<Vec<Self::Item>> {
        unzip::vec_list(self)
    }

    /// Collects the items into `C` (a `Vec` keeps their order).
    fn collect<C>(self) -> C
    where
        C: FromParallelIterator<Self::Item>,
    {
        C::from_par_iter(self)
    }
}

impl<P: Producer> ParallelIterator for P {}
