//! `flat_map` and `flatten`: each item mapped to a *parallel* iterator, whose items are
//! flattened in order.
//!
//! The inner iterators are not split further: each runs sequentially on the thread that
//! produced its outer item, so the parallelism is the outer iterator's. (A producer hands out
//! sequential iterators over ranges of its own indices, and an inner iterator's items are
//! part of its outer item's: the protocol has no index that names a part of them. A parallel
//! call made *inside* the `flat_map`'s closure, or in a `for_each` after it, is split as any
//! nested call.) The items come out in rayon's order: an outer item's
//! inner items in their own order, outer items in index order, so `collect` gives what the
//! sequential `flat_map` gives.
//!
//! An inner iterator is read through [`IntoSeq`], which asks its producer for successive ranges
//! of [`INNER_BATCH`] indices and hands out their items from a small buffer: the producer's
//! sequential iterator borrows it, so the two cannot be kept side by side in one value.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Range;

use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{seq_under, Hints, Producer, Stop, Stoppable};
use crate::IntoParallelIterator;

/// The indices of an inner iterator read at a time.
pub const INNER_BATCH: usize = 256;

/// rayon's name for what `flatten` returns: a [`FlatMap`] with the identity.
pub type Flatten<I> = FlatMap<I, fn(<I as Producer>::Item) -> <I as Producer>::Item>;

/// Each item mapped to a parallel iterator, flattened (`flat_map`, `flatten`).
#[derive(Clone)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct FlatMap<I, F> {
    pub(crate) base: I,
    pub(crate) f: F,
}

debug_fields!(impl[I: fmt::Debug, F] FlatMap<I, F> { base });

impl<I, F, PI> Producer for FlatMap<I, F>
where
    I: Producer,
    F: Fn(I::Item) -> PI + Send + Sync,
    PI: IntoParallelIterator,
{
    type Item = PI::Item;
    type Seq<'a>
        = FlatMapSeq<'a, I::Seq<'a>, F, PI>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        FlatMapSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            outer: Stoppable::new(unsafe { self.base.seq(range) }, None),
            f: &self.f,
            inner: None,
        }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        FlatMapSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            outer: Stoppable::new(unsafe { self.base.seq_until(range, stop) }, Some(stop)),
            f: &self.f,
            inner: None,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

/// The sequential side of [`FlatMap`].
pub struct FlatMapSeq<'a, J, F, PI: IntoParallelIterator> {
    outer: Stoppable<'a, J>,
    f: &'a F,
    inner: Option<IntoSeq<'a, PI::Iter>>,
}

impl<J, F, PI: IntoParallelIterator> fmt::Debug for FlatMapSeq<'_, J, F, PI> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlatMapSeq")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<J, F, PI> Iterator for FlatMapSeq<'_, J, F, PI>
where
    J: Iterator,
    F: Fn(J::Item) -> PI,
    PI: IntoParallelIterator,
{
    type Item = PI::Item;

    #[inline]
    fn next(&mut self) -> Option<PI::Item> {
        loop {
            if let Some(item) = self.inner.as_mut().and_then(Iterator::next) {
                return Some(item);
            }
            // Dropped before the next one is made: it may own items (a `Vec` moved in).
            self.inner = None;
            let x = self.outer.next()?;
            let inner = (self.f)(x).into_par_iter();
            self.inner = Some(IntoSeq::until(inner, self.outer.stop()));
        }
    }
}

/// A parallel iterator read sequentially, front to back, on the calling thread: its producer
/// is asked for successive ranges of [`INNER_BATCH`] indices (each index once, as the producer
/// protocol wants), whose items wait in a buffer. Under a [`Stop`] (a search), no range is
/// asked for once it says so, and each range is read with
/// [`seq_until`](Producer::seq_until).
///
/// Dropping it part way drops the buffered items, and the producer drops what it never handed
/// out (a `Vec`'s remaining items).
pub struct IntoSeq<'s, P: Producer> {
    producer: P,
    next: usize,
    buffer: VecDeque<P::Item>,
    stop: Option<Stop<'s>>,
}

impl<P: Producer> IntoSeq<'static, P> {
    /// Reads `producer` from its first index.
    pub fn new(producer: P) -> Self {
        IntoSeq::until(producer, None)
    }
}

impl<'s, P: Producer> IntoSeq<'s, P> {
    /// Reads `producer` from its first index until `stop` says so (all of it for `None`).
    pub fn until(producer: P, stop: Option<Stop<'s>>) -> Self {
        Self {
            producer,
            next: 0,
            buffer: VecDeque::new(),
            stop,
        }
    }
}

impl<P: Producer> fmt::Debug for IntoSeq<'_, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoSeq")
            .field("next", &self.next)
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

impl<P: Producer> Iterator for IntoSeq<'_, P> {
    type Item = P::Item;

    #[inline]
    fn next(&mut self) -> Option<P::Item> {
        loop {
            if let Some(item) = self.buffer.pop_front() {
                return Some(item);
            }
            let len = self.producer.base_len();
            if self.next >= len || self.stop.is_some_and(Stop::now) {
                return None;
            }
            let end = len.min(self.next.saturating_add(INNER_BATCH));
            let range = self.next..end;
            // Moved on before the producer runs: if it panics, the range counts as asked for.
            self.next = end;
            // SAFETY: `next` only grows, so the ranges asked for are disjoint.
            let items = unsafe { seq_under(&self.producer, range, self.stop) };
            self.buffer.extend(items);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    #[test]
    fn inner_parallel_iterators_are_flattened_in_order() {
        on_every_team(|k| {
            for n in [0usize, 1, 7, 300] {
                let want: Vec<usize> = (0..n)
                    .flat_map(|i| (0..i % 600).map(move |j| i * j))
                    .collect();
                let got: Vec<usize> = (0..n)
                    .into_par_iter()
                    .flat_map(|i| (0..i % 600).into_par_iter().map(move |j| i * j))
                    .collect();
                assert_eq!(got, want, "team {k}, {n}");
                // inner iterators longer than a batch, owned items, filters inside
                let got: Vec<String> = (0..n)
                    .into_par_iter()
                    .with_max_len(3)
                    .flat_map(|i| {
                        let v: Vec<String> = (0..i).map(|j| format!("{i}.{j}")).collect();
                        v.into_par_iter().filter(|s| !s.ends_with('7'))
                    })
                    .collect();
                let want: Vec<String> = (0..n)
                    .flat_map(|i| (0..i).map(move |j| format!("{i}.{j}")))
                    .filter(|s| !s.ends_with('7'))
                    .collect();
                assert_eq!(got, want, "team {k}, {n}");
                let nested: Vec<Vec<usize>> = (0..n).map(|i| (0..i % 5).collect()).collect();
                let got: Vec<usize> = nested.par_iter().flatten().copied().collect();
                assert_eq!(got, nested.iter().flatten().copied().collect::<Vec<_>>());
                let got: Vec<usize> = nested.clone().into_par_iter().flatten_iter().collect();
                assert_eq!(got, nested.iter().flatten().copied().collect::<Vec<_>>());
                let sum: usize = nested.par_iter().flat_map(|v| v.par_iter()).sum();
                assert_eq!(sum, nested.iter().flatten().sum::<usize>());
            }
        });
    }

    #[test]
    fn an_inner_iterator_stopped_early_drops_its_items_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let made = AtomicUsize::new(0);
        let dropped = AtomicUsize::new(0);
        struct D<'a>(&'a AtomicUsize, usize);
        impl Drop for D<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        on_every_team(|_| {
            let found = (0..40usize)
                .into_par_iter()
                .flat_map(|i| {
                    made.fetch_add(1000, Ordering::Relaxed);
                    (0..1000)
                        .map(|j| D(&dropped, i * 1000 + j))
                        .collect::<Vec<_>>()
                })
                .find_first(|d| d.1 == 20_500)
                .map(|d| d.1);
            assert_eq!(found, Some(20_500));
            assert_eq!(
                made.load(Ordering::Relaxed),
                dropped.load(Ordering::Relaxed)
            );
        });
    }
}
