//! `update`: items changed in place by a closure on their way.

use std::fmt::Debug;
use std::ops::Range;

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer, Stop};
use crate::IndexedParallelIterator;

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

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        UpdateSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { self.base.seq_until(range, stop) },
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
