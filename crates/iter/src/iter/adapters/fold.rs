//! `fold` and `fold_with`: one accumulator per range, whose items come late (see
//! [`Hints::late`]).

use std::fmt::Debug;
use std::ops::Range;

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{Hints, Producer};

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
