//! The traits user code calls: [`ParallelIterator`], [`IndexedParallelIterator`], and the
//! conversions into them, with rayon's names and semantics.

use std::cmp::Ordering as CmpOrdering;
use std::iter::{Product, Sum};
use std::sync::atomic::{AtomicBool, Ordering};

use asat_core::Schedule;

use crate::adapters::{
    CloneOf, Cloned, Copied, Filter, FilterMap, FlatMapIter, Fold, InitFn, Inspect, Map, MapState,
};
use crate::chain::{Chain, Rev};
use crate::collect::FromParallelIterator;
use crate::drive;
use crate::flat_map::FlatMap;
use crate::indexed::{Enumerate, Hinted, Slice, StepBy, Zip};
use crate::plumbing::{DoubleEndedProducer, Hints, Producer};
use crate::IntoParallelIterator;

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
        let found = AtomicBool::new(false);
        drive::run(&self, |_, mut items| {
            if items.any(|x| found.load(Ordering::Relaxed) || pred(x)) {
                found.store(true, Ordering::Relaxed);
            }
        });
        found.into_inner()
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
        let found = AtomicBool::new(false);
        drive::reduce(
            &self,
            || None,
            |acc, mut items| {
                acc.or_else(|| {
                    let hit = items
                        .by_ref()
                        .take_while(|_| !found.load(Ordering::Relaxed))
                        .find(|x| pred(x));
                    if hit.is_some() {
                        found.store(true, Ordering::Relaxed);
                    }
                    hit
                })
            },
            |a, b| a.or(b),
        )
    }

    /// The first item (in order) for which `pred` is true.
    fn find_first<P>(self, pred: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        drive::reduce(
            &self,
            || None,
            |acc, mut items| acc.or_else(|| items.find(|x| pred(x))),
            |a, b| a.or(b),
        )
    }

    /// The last item (in order) for which `pred` is true.
    fn find_last<P>(self, pred: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        drive::reduce(
            &self,
            || None,
            |acc, items| items.filter(|x| pred(x)).last().or(acc),
            |a, b| b.or(a),
        )
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

/// A parallel iterator whose items stand one for one at indices `0..len()`: it can be zipped,
/// enumerated, stepped and sliced.
///
/// Every indexed parallel iterator can also read its ranges back to front
/// ([`DoubleEndedProducer`]), which [`rev`](IndexedParallelIterator::rev) needs.
pub trait IndexedParallelIterator: ParallelIterator + DoubleEndedProducer {
    /// The number of items.
    fn len(&self) -> usize {
        self.base_len()
    }

    /// Whether there are no items.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items paired with `other`'s, as long as the shorter.
    fn zip<Z>(self, other: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        Zip {
            a: self,
            b: other.into_par_iter(),
        }
    }

    /// Like [`zip`](IndexedParallelIterator::zip), but panics if the lengths differ.
    fn zip_eq<Z>(self, other: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let other = other.into_par_iter();
        let (a, b) = (self.len(), other.len());
        assert_eq!(
            a, b,
            "zip_eq: lengths differ ({a} and {b}): they must be equal"
        );
        Zip { a: self, b: other }
    }

    /// Items with their index.
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate { base: self }
    }

    /// The items in reverse order (rayon's `rev`).
    fn rev(self) -> Rev<Self> {
        Rev { base: self }
    }

    /// Every `step`-th item, starting with the first.
    ///
    /// # Panics
    ///
    /// If `step` is 0 (as std's and rayon's `step_by`).
    fn step_by(self, step: usize) -> StepBy<Self> {
        assert!(step != 0, "step_by: step 0: must be at least 1");
        StepBy { base: self, step }
    }

    /// The first `n` items.
    fn take(self, n: usize) -> Slice<Self> {
        Slice {
            base: self,
            skip: 0,
            take: n,
        }
    }

    /// All but the first `n` items.
    fn skip(self, n: usize) -> Slice<Self> {
        Slice {
            base: self,
            skip: n,
            take: usize::MAX,
        }
    }

    /// Shares the items in blocks of at least `min` (each member's share is a whole number of
    /// blocks; a call with a single block runs on the calling thread alone).
    fn with_min_len(self, min: usize) -> Hinted<Self> {
        let hints = Hints {
            min_len: min,
            ..self.hints()
        };
        Hinted { base: self, hints }
    }

    /// Hands the items out dynamically in pieces of at most `max` (a larger `with_min_len`
    /// wins).
    fn with_max_len(self, max: usize) -> Hinted<Self> {
        let hints = Hints {
            max_len: max,
            ..self.hints()
        };
        Hinted { base: self, hints }
    }

    /// The index of some item for which `pred` is true; stops early.
    fn position_any<P>(self, pred: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.enumerate()
            .map(|(i, x)| (i, pred(x)))
            .find_any(|&(_, hit)| hit)
            .map(|(i, _)| i)
    }

    /// The index of the first item for which `pred` is true.
    fn position_first<P>(self, pred: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.enumerate()
            .map(|(i, x)| (i, pred(x)))
            .find_first(|&(_, hit)| hit)
            .map(|(i, _)| i)
    }

    /// Collects the items into `target`, replacing its contents, in order.
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        crate::collect::into_vec(self, target);
    }
}
