//! `positions`: the indices of the items a predicate holds for, in order.

use std::fmt::Debug;
use std::ops::Range;

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{Hints, Producer, Stop, Stoppable};
use crate::IndexedParallelIterator;

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
