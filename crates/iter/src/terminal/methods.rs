//! The terminal calls of [`ParallelIterator`](crate::ParallelIterator): the methods that run a
//! chain (`for_each`, the reductions, the searches, `collect` and its relatives), each one
//! region of the current runtime through [`drive`](crate::drive).
//!
//! A trait's methods are declared in its one block, so this file holds them as the body of the
//! macro `terminal_methods!`, which `iter/parallel_iterator.rs` expands inside the trait after
//! the adapters: the adapters and the terminal calls each have a file, and the trait stays one
//! trait (a call needs only `ParallelIterator` in scope, as in rayon). Paths in the macro are
//! absolute (`$crate::...`, `::std::...`), so it does not depend on `parallel_iterator.rs`'s
//! imports.

/// The terminal methods of `ParallelIterator`, expanded inside the trait: see the
/// [module docs](self).
macro_rules! terminal_methods {
    () => {
        /// Calls `op` on every item.
        #[inline]
        fn for_each<F>(self, op: F)
        where
            F: Fn(Self::Item) + Sync + Send,
        {
            let space = $crate::terminal::drive::Space::of(&self);
            // The producer and `op` move into the region's body (see `drive::ranges`).
            $crate::terminal::drive::ranges(space, move |r| {
                // SAFETY: `ranges` hands out disjoint ranges of the producer's space.
                unsafe { self.seq(r) }.for_each(&op)
            });
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

        /// Combines the items with `op`, starting each range from `identity()`. `op` must be
        /// associative and `identity()` its identity; it need not be commutative (items are
        /// combined in order).
        #[inline]
        fn reduce<ID, OP>(self, identity: ID, op: OP) -> Self::Item
        where
            ID: Fn() -> Self::Item + Sync + Send,
            OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
        {
            let (space, op) = ($crate::terminal::drive::Space::of(&self), &op);
            let fold = move |acc, r| {
                // SAFETY: `fold_ranges` hands out disjoint ranges of the producer's space.
                unsafe { self.seq(r) }.fold(acc, op)
            };
            $crate::terminal::drive::reduce::fold_ranges(space, &identity, fold, op)
        }

        /// Combines the items with the associative `op`, in order; `None` if there are none.
        #[inline]
        fn reduce_with<OP>(self, op: OP) -> Option<Self::Item>
        where
            OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
        {
            let join = |a: Option<Self::Item>, b: Option<Self::Item>| match (a, b) {
                (Some(a), Some(b)) => Some(op(a, b)),
                (a, b) => a.or(b),
            };
            let (space, op, join) = ($crate::terminal::drive::Space::of(&self), &op, &join);
            let fold = move |acc, r| {
                // SAFETY: `fold_ranges` hands out disjoint ranges of the producer's space.
                join(acc, unsafe { self.seq(r) }.reduce(op))
            };
            $crate::terminal::drive::reduce::fold_ranges(space, || None, fold, join)
        }

        /// The sum of the items (floating-point sums are added range by range, so they may differ
        /// from a sequential sum within rounding).
        #[inline]
        fn sum<S>(self) -> S
        where
            S: Send + ::std::iter::Sum<Self::Item> + ::std::iter::Sum<S>,
        {
            let add = |a: S, b: S| [a, b].into_iter().sum();
            let space = $crate::terminal::drive::Space::of(&self);
            let fold = move |acc, r| {
                // SAFETY: `fold_ranges` hands out disjoint ranges of the producer's space.
                add(acc, unsafe { self.seq(r) }.sum())
            };
            $crate::terminal::drive::reduce::fold_ranges(
                space,
                || std::iter::empty::<S>().sum(),
                fold,
                add,
            )
        }

        /// The product of the items.
        #[inline]
        fn product<P>(self) -> P
        where
            P: Send + ::std::iter::Product<Self::Item> + ::std::iter::Product<P>,
        {
            let mul = |a: P, b: P| [a, b].into_iter().product();
            let space = $crate::terminal::drive::Space::of(&self);
            let fold = move |acc, r| {
                // SAFETY: `fold_ranges` hands out disjoint ranges of the producer's space.
                mul(acc, unsafe { self.seq(r) }.product())
            };
            $crate::terminal::drive::reduce::fold_ranges(
                space,
                || std::iter::empty::<P>().product(),
                fold,
                mul,
            )
        }

        /// The number of items.
        #[inline]
        fn count(self) -> usize {
            let space = $crate::terminal::drive::Space::of(&self);
            let fold = move |n, r| {
                // SAFETY: `fold_ranges` hands out disjoint ranges of the producer's space.
                n + unsafe { self.seq(r) }.count()
            };
            $crate::terminal::drive::reduce::fold_ranges(space, || 0, fold, |a, b| a + b)
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
            F: Fn(&Self::Item, &Self::Item) -> ::std::cmp::Ordering + Sync + Send,
        {
            self.reduce_with(|a, b| match cmp(&a, &b) {
                ::std::cmp::Ordering::Greater => b,
                _ => a,
            })
        }

        /// The largest item by `cmp` (the last of equal ones).
        fn max_by<F>(self, cmp: F) -> Option<Self::Item>
        where
            F: Fn(&Self::Item, &Self::Item) -> ::std::cmp::Ordering + Sync + Send,
        {
            self.reduce_with(|a, b| match cmp(&a, &b) {
                ::std::cmp::Ordering::Greater => a,
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
            $crate::terminal::find::any(&self, pred)
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
            $crate::terminal::find::find_any(&self, pred)
        }

        /// The first item (in order) for which `pred` is true.
        fn find_first<P>(self, pred: P) -> Option<Self::Item>
        where
            P: Fn(&Self::Item) -> bool + Sync + Send,
        {
            $crate::terminal::find::find_first(&self, pred)
        }

        /// The last item (in order) for which `pred` is true.
        fn find_last<P>(self, pred: P) -> Option<Self::Item>
        where
            P: Fn(&Self::Item) -> bool + Sync + Send,
        {
            $crate::terminal::find::find_last(&self, pred)
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
            R: $crate::terminal::try_ops::Try<Output = ()> + Send,
        {
            self.map(op)
                .try_reduce(<()>::default, $crate::terminal::try_ops::both_done)
        }

        /// [`try_for_each`](ParallelIterator::try_for_each) with a clone of `init` for each range
        /// of items.
        fn try_for_each_with<OP, T, R>(self, init: T, op: OP) -> R
        where
            OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
            T: Clone + Send + Sync,
            R: $crate::terminal::try_ops::Try<Output = ()> + Send,
        {
            self.map_with(init, op)
                .try_reduce(<()>::default, $crate::terminal::try_ops::both_done)
        }

        /// [`try_for_each`](ParallelIterator::try_for_each) with a state made by `init` for each
        /// range of items.
        fn try_for_each_init<OP, INIT, T, R>(self, init: INIT, op: OP) -> R
        where
            OP: Fn(&mut T, Self::Item) -> R + Sync + Send,
            INIT: Fn() -> T + Sync + Send,
            R: $crate::terminal::try_ops::Try<Output = ()> + Send,
        {
            self.map_init(init, op)
                .try_reduce(<()>::default, $crate::terminal::try_ops::both_done)
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
            Self::Item: $crate::terminal::try_ops::Try<Output = T>,
        {
            $crate::terminal::try_ops::try_reduce(self, identity, op)
        }

        /// [`try_reduce`](ParallelIterator::try_reduce) without an identity: `None` if there are no
        /// items, else `Some` of the result or of the failure.
        fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
        where
            OP: Fn(T, T) -> Self::Item + Sync + Send,
            Self::Item: $crate::terminal::try_ops::Try<Output = T>,
        {
            $crate::terminal::try_ops::try_reduce_with(self, op)
        }

        /// Splits pairs into two collections, each in order (see [`unzip`](crate::unzip)).
        fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
        where
            Self: ParallelIterator<Item = (A, B)>,
            FromA: Default + Send + $crate::ParallelExtend<A>,
            FromB: Default + Send + $crate::ParallelExtend<B>,
            A: Send,
            B: Send,
        {
            $crate::terminal::unzip::unzip(self)
        }

        /// The items `pred` holds for, and the others, in two collections, each in order.
        fn partition<A, B, P>(self, pred: P) -> (A, B)
        where
            A: Default + Send + $crate::ParallelExtend<Self::Item>,
            B: Default + Send + $crate::ParallelExtend<Self::Item>,
            P: Fn(&Self::Item) -> bool + Sync + Send,
        {
            $crate::terminal::unzip::partition(self, pred)
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
            A: Default + Send + $crate::ParallelExtend<L>,
            B: Default + Send + $crate::ParallelExtend<R>,
            P: Fn(Self::Item) -> $crate::Either<L, R> + Sync + Send,
            L: Send,
            R: Send,
        {
            $crate::terminal::unzip::partition_map(self, f)
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

        /// The items in a list of vectors, one per range that has items, in order (rayon's
        /// `collect_vec_list`: no copy into one vector).
        fn collect_vec_list(self) -> ::std::collections::LinkedList<Vec<Self::Item>> {
            $crate::terminal::unzip::vec_list(self)
        }

        /// Collects the items into `C` (a `Vec` keeps their order).
        fn collect<C>(self) -> C
        where
            C: $crate::FromParallelIterator<Self::Item>,
        {
            C::from_par_iter(self)
        }
    };
}

pub(crate) use terminal_methods;
