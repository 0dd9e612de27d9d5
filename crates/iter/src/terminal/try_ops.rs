//! The fallible forms: `try_for_each` (and `_with`, `_init`), `try_reduce`, `try_reduce_with`,
//! `try_fold` and `try_fold_with`, on items that are a [`Result`], an [`Option`] or a
//! [`ControlFlow`] (the [`Try`] trait, as rayon's).
//!
//! # Early exit
//!
//! `try_reduce`, `try_reduce_with` and the `try_for_each` forms (which are `map` then
//! `try_reduce`) share one flag per call: the member that meets a failure (an item that is a
//! failure, or `op` returning one) raises it, and every member checks it **after each item**
//! and before each range it is handed, so a failure stops the whole call: its own range at
//! once, the other members after the item they are making, and ranges handed out later
//! (dynamic schedules) before their first item; a call run in rounds
//! ([`blocks`](crate::blocks)) runs no round after the one in which an item failed.
//!
//! # Which failure
//!
//! The ranges' results are combined in index order, as for `reduce`, and the first failure in
//! that order wins, and a failing item is never dropped for the flag (the flag is read after
//! the item is looked at). So the call returns **the failure of lowest index among the items
//! that ran**: when exactly one item would fail, that one; when several would, the first in
//! order among those the members reached before they saw the flag (rayon promises only that
//! it returns one of the failures). Every item runs, once, when none fails. No item before the
//! failure is promised to have run (its member may have stopped first); within one range, no
//! item after its failure runs.
//!
//! # `try_fold`
//!
//! [`try_fold`](crate::ParallelIterator::try_fold) folds each range (one per member under the
//! static schedule) until its first failure, and, as in rayon, one range's failure does not
//! stop the others' folds: it yields one value per range, the fold's result or its failure. A
//! `try_reduce` after it stops taking ranges once one of them has failed; ranges already being
//! folded run to their end or their own failure (in rayon they may stop earlier).

use std::fmt::Debug;
use std::marker::PhantomData;
use std::ops::{ControlFlow, Range};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{Hints, Producer, Stop};
use crate::iter::adapters::{CloneOf, InitFn, StateInit};
use crate::terminal::drive;

mod sealed {
    pub trait Sealed {}
}

/// A value that is either a success holding an `Output` or a failure holding a `Residual`:
/// [`Result<T, E>`], [`Option<T>`] and [`ControlFlow<B, C>`] (a stand-in for std's unstable
/// `Try`, as in rayon). Sealed: it cannot be implemented outside this crate.
pub trait Try: sealed::Sealed {
    /// What a success holds.
    type Output;
    /// What a failure holds.
    type Residual;

    /// A success.
    fn from_output(output: Self::Output) -> Self;
    /// A failure.
    fn from_residual(residual: Self::Residual) -> Self;
    /// Which of the two `self` is.
    fn branch(self) -> ControlFlow<Self::Residual, Self::Output>;
}

impl<T, E> sealed::Sealed for Result<T, E> {}

impl<T, E> Try for Result<T, E> {
    type Output = T;
    type Residual = E;

    fn from_output(output: T) -> Self {
        Ok(output)
    }

    fn from_residual(residual: E) -> Self {
        Err(residual)
    }

    fn branch(self) -> ControlFlow<E, T> {
        match self {
            Ok(t) => ControlFlow::Continue(t),
            Err(e) => ControlFlow::Break(e),
        }
    }
}

impl<T> sealed::Sealed for Option<T> {}

impl<T> Try for Option<T> {
    type Output = T;
    type Residual = ();

    fn from_output(output: T) -> Self {
        Some(output)
    }

    fn from_residual((): ()) -> Self {
        None
    }

    fn branch(self) -> ControlFlow<(), T> {
        match self {
            Some(t) => ControlFlow::Continue(t),
            None => ControlFlow::Break(()),
        }
    }
}

impl<B, C> sealed::Sealed for ControlFlow<B, C> {}

impl<B, C> Try for ControlFlow<B, C> {
    type Output = C;
    type Residual = B;

    fn from_output(output: C) -> Self {
        ControlFlow::Continue(output)
    }

    fn from_residual(residual: B) -> Self {
        ControlFlow::Break(residual)
    }

    fn branch(self) -> Self {
        self
    }
}

/// A range's result in a fallible reduction, kept as items (which are `Send`).
enum Partial<I> {
    /// Its items combined so far, a success (`None`: it had none).
    Ok(Option<I>),
    /// Its first failure.
    Failed(I),
    /// Stopped by another member's failure: its value does not matter.
    Halted,
}

/// The value of `item`, known to be a success.
fn output<I: Try>(item: I) -> I::Output {
    match item.branch() {
        ControlFlow::Continue(t) => t,
        ControlFlow::Break(_) => unreachable!("try_reduce: a failure kept as a success"),
    }
}

/// Combines the items of `p` with the fallible `op`, ranges started from `start()`; stops at
/// the first failure (see the [module docs](self)). `None` when there were no items and
/// `start` gave none.
fn try_combine<P, T, S, OP>(p: &P, start: S, op: OP) -> Option<P::Item>
where
    P: Producer,
    P::Item: Try<Output = T>,
    S: Fn() -> Option<T> + Sync,
    OP: Fn(T, T) -> P::Item + Sync,
{
    let failed = AtomicBool::new(false);
    let fail = |r| {
        failed.store(true, Ordering::Relaxed);
        P::Item::from_residual(r)
    };
    // `a` then `b`, in order; `None` is "no value yet". A failure comes back as an item.
    let join = |a: Option<T>, b: T| match a {
        None => ControlFlow::Continue(b),
        Some(a) => match op(a, b).branch() {
            ControlFlow::Continue(c) => ControlFlow::Continue(c),
            ControlFlow::Break(r) => ControlFlow::Break(fail(r)),
        },
    };
    let result = drive::reduce::reduce_until(
        p,
        || Partial::Ok(start().map(P::Item::from_output)),
        |acc, _, mut items| {
            let Partial::Ok(acc) = acc else { return acc };
            if failed.load(Ordering::Relaxed) {
                return Partial::Halted;
            }
            // The flag is checked after each item, not before: an item that was made (a
            // `map` closure ran) and failed is always kept, so the failure returned is the
            // first among those that ran.
            let folded = items.try_fold(acc.map(output), |acc, item| match item.branch() {
                ControlFlow::Continue(t) => match join(acc, t) {
                    ControlFlow::Continue(_) if failed.load(Ordering::Relaxed) => {
                        ControlFlow::Break(Partial::Halted)
                    }
                    ControlFlow::Continue(c) => ControlFlow::Continue(Some(c)),
                    ControlFlow::Break(f) => ControlFlow::Break(Partial::Failed(f)),
                },
                ControlFlow::Break(r) => ControlFlow::Break(Partial::Failed(fail(r))),
            });
            match folded {
                ControlFlow::Continue(acc) => Partial::Ok(acc.map(P::Item::from_output)),
                ControlFlow::Break(stop) => stop,
            }
        },
        |a, b| match (a, b) {
            (Partial::Failed(r), _) | (_, Partial::Failed(r)) => Partial::Failed(r),
            (Partial::Halted, _) | (_, Partial::Halted) => Partial::Halted,
            // A failure elsewhere makes these values moot: skip `op`.
            _ if failed.load(Ordering::Relaxed) => Partial::Halted,
            (Partial::Ok(a), Partial::Ok(None)) => Partial::Ok(a),
            (Partial::Ok(a), Partial::Ok(Some(b))) => match join(a.map(output), output(b)) {
                ControlFlow::Continue(c) => Partial::Ok(Some(P::Item::from_output(c))),
                ControlFlow::Break(f) => Partial::Failed(f),
            },
        },
        // A call in rounds runs none after a failure.
        |_| failed.load(Ordering::Relaxed),
        // Nor does a `filter` look at more items.
        |_| Stop::flag(&failed),
        drive::Order::Index,
    );
    match result {
        Partial::Ok(t) => t,
        Partial::Failed(f) => Some(f),
        Partial::Halted => {
            unreachable!("try_reduce: a range halted by a failure, but no failure was kept")
        }
    }
}

/// `try_reduce`: see [`ParallelIterator::try_reduce`](crate::ParallelIterator::try_reduce).
pub(crate) fn try_reduce<P, T, ID, OP>(p: P, identity: ID, op: OP) -> P::Item
where
    P: Producer,
    P::Item: Try<Output = T>,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> P::Item + Sync,
{
    match try_combine(&p, || Some(identity()), op) {
        Some(r) => r,
        None => P::Item::from_output(identity()),
    }
}

/// `try_reduce_with`: see
/// [`ParallelIterator::try_reduce_with`](crate::ParallelIterator::try_reduce_with).
pub(crate) fn try_reduce_with<P, T, OP>(p: P, op: OP) -> Option<P::Item>
where
    P: Producer,
    P::Item: Try<Output = T>,
    OP: Fn(T, T) -> P::Item + Sync,
{
    try_combine(&p, || None, op)
}

/// The `op` of the `try_for_each` forms' `try_reduce`: two successes make one.
pub(crate) fn both_done<R: Try<Output = ()>>((): (), (): ()) -> R {
    R::from_output(())
}

/// One fallible fold per range (`try_fold`, `try_fold_with`): yields each range's result, or
/// its first failure (see the [module docs](self)).
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct TryFoldBy<I, R, S, F> {
    base: I,
    init: S,
    f: F,
    _result: PhantomData<fn() -> R>,
}

impl<I, R, S, F> TryFoldBy<I, R, S, F> {
    pub(crate) fn new(base: I, init: S, f: F) -> Self {
        Self {
            base,
            init,
            f,
            _result: PhantomData,
        }
    }
}

/// `try_fold`'s adapter: each range's fold starts from a value made by a closure.
pub type TryFold<I, R, ID, F> = TryFoldBy<I, R, InitFn<ID>, F>;

/// `try_fold_with`'s adapter: each range's fold starts from a clone of a value.
pub type TryFoldWith<I, R, F> = TryFoldBy<I, R, CloneOf<<R as Try>::Output>, F>;

impl<I: Clone, R, S: Clone, F: Clone> Clone for TryFoldBy<I, R, S, F> {
    fn clone(&self) -> Self {
        Self {
            base: self.base.clone(),
            init: self.init.clone(),
            f: self.f.clone(),
            _result: PhantomData,
        }
    }
}

debug_fields!(impl[I: Debug, R, S: Debug, F] TryFoldBy<I, R, S, F> { base, init });

impl<I, R, S, F> Producer for TryFoldBy<I, R, S, F>
where
    I: Producer,
    R: Try + Send,
    S: StateInit<State = R::Output>,
    F: Fn(R::Output, I::Item) -> R + Send + Sync,
{
    type Item = R;
    type Seq<'a>
        = TryFoldSeq<'a, I::Seq<'a>, S, F, R>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        TryFoldSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: Some(unsafe { self.base.seq(range) }),
            init: &self.init,
            f: &self.f,
            _result: PhantomData,
        }
    }

    fn hints(&self) -> Hints {
        Hints {
            late: true,
            ..self.base.hints()
        }
    }
}

/// The sequential side of [`TryFoldBy`]: one value, folded when it is asked for (so that a
/// `try_reduce` that has seen a failure does not fold ranges it is handed afterwards).
pub struct TryFoldSeq<'a, J, S, F, R> {
    items: Option<J>,
    init: &'a S,
    f: &'a F,
    _result: PhantomData<fn() -> R>,
}

debug_fields!(impl['a, J: Debug, S: Debug, F, R] TryFoldSeq<'a, J, S, F, R> { items, init });

impl<J, S, F, R> Iterator for TryFoldSeq<'_, J, S, F, R>
where
    J: Iterator,
    R: Try,
    S: StateInit<State = R::Output>,
    F: Fn(R::Output, J::Item) -> R,
{
    type Item = R;

    fn next(&mut self) -> Option<R> {
        let mut items = self.items.take()?;
        let f = self.f;
        Some(
            match items.try_fold(self.init.make(), |acc, x| f(acc, x).branch()) {
                ControlFlow::Continue(acc) => R::from_output(acc),
                ControlFlow::Break(r) => R::from_residual(r),
            },
        )
    }
}
