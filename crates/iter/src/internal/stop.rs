//! The stop of a call that may end early, and the iterator through which the adapters that
//! drop items read their bases under it: see [`Stop`].

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// When a call that may end early (a search, a `try_` call) has its answer: a flag that
/// another member sets, or a shared index that has fallen below a bound (`find_first`: an
/// earlier range has a hit). Reading it is one relaxed load.
///
/// A search asks whether it has its answer before each item the chain yields. An adapter that
/// drops items (`filter`, `filter_map`, `positions`, a `flat_map` whose inner iterators are
/// empty) may go through many of its base's items between two it yields: without more, the
/// member whose range holds no match would look through all of it after another member had
/// found the answer (`(0..n).filter(|x| *x > n / 2).find_any(..)` on two members: the first
/// member's half). rayon's consumers ask "full?" before each item of the base.
///
/// So a call that may end early asks its producer for each range's items with
/// [`Producer::seq_until`](crate::plumbing::Producer::seq_until) and a `Stop`: the adapters
/// that drop items read their base's items through [`Stoppable`], which ends once the stop
/// says so, and the adapters that keep items (`map`, `inspect`, `chain`, ...) pass the stop on
/// to their bases, as do those that stop or skip by what the call has seen (`take_any`,
/// `while_some`, `take_any_while`; `skip_any` and `skip_any_while` also ask it before each
/// item they drop). A producer that does neither (the default) yields every item of the range,
/// and the call still stops before the next item it yields. A `fold` does not pass it on: its
/// item is the fold of a whole range, which a stop must not cut short (the search would see a
/// fold of part of the range as an item).
#[derive(Clone, Copy, Debug)]
pub struct Stop<'a>(Kind<'a>);

#[derive(Clone, Copy, Debug)]
enum Kind<'a> {
    Flag(&'a AtomicBool),
    Below(&'a AtomicUsize, usize),
}

impl<'a> Stop<'a> {
    /// Ends once `flag` is set.
    pub fn flag(flag: &'a AtomicBool) -> Self {
        Stop(Kind::Flag(flag))
    }

    /// Ends once `at` holds a value below `bound`.
    pub fn below(at: &'a AtomicUsize, bound: usize) -> Self {
        Stop(Kind::Below(at, bound))
    }

    /// Whether the call has its answer.
    #[inline]
    pub fn now(self) -> bool {
        match self.0 {
            Kind::Flag(flag) => flag.load(Ordering::Relaxed),
            Kind::Below(at, bound) => at.load(Ordering::Relaxed) < bound,
        }
    }
}

/// The items of an iterator until a [`Stop`] says so (asked before each item), or all of them
/// when there is none: what an adapter that drops items reads its base through.
#[derive(Clone, Debug)]
pub struct Stoppable<'a, I> {
    items: I,
    stop: Option<Stop<'a>>,
}

impl<'a, I: Iterator> Stoppable<'a, I> {
    /// `items` until `stop` says so; all of them for `None`.
    #[inline]
    pub fn new(items: I, stop: Option<Stop<'a>>) -> Self {
        Stoppable { items, stop }
    }

    /// The stop it reads under, if any.
    #[inline]
    pub fn stop(&self) -> Option<Stop<'a>> {
        self.stop
    }
}

impl<I: Iterator> Iterator for Stoppable<'_, I> {
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        match self.stop {
            Some(stop) if stop.now() => None,
            _ => self.items.next(),
        }
    }

    // `filter`'s and `filter_map`'s `next`: the base's own loop, the stop asked before each
    // item (by way of `next`, a search of a `filter` whose predicate costs a few cycles took
    // 1.4-1.7x as long).
    #[inline]
    fn find<P: FnMut(&I::Item) -> bool>(&mut self, mut pred: P) -> Option<I::Item> {
        let Some(stop) = self.stop else {
            return self.items.find(pred);
        };
        let mut stopped = false;
        let x = self.items.find(|x| {
            stopped = stop.now();
            stopped || pred(x)
        })?;
        (!stopped).then_some(x)
    }

    #[inline]
    fn find_map<B, F: FnMut(I::Item) -> Option<B>>(&mut self, mut f: F) -> Option<B> {
        let Some(stop) = self.stop else {
            return self.items.find_map(f);
        };
        // `Some(None)`: stopped.
        let found = self.items.find_map(|x| match stop.now() {
            true => Some(None),
            false => f(x).map(Some),
        });
        found.flatten()
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.stop {
            Some(_) => (0, self.items.size_hint().1),
            None => self.items.size_hint(),
        }
    }

    #[inline]
    fn fold<B, F: FnMut(B, I::Item) -> B>(mut self, init: B, mut f: F) -> B {
        match self.stop {
            // The base's own loop, which may be faster than one `next` at a time.
            None => self.items.fold(init, f),
            Some(stop) => {
                let mut acc = init;
                while !stop.now() {
                    match self.items.next() {
                        Some(x) => acc = f(acc, x),
                        None => break,
                    }
                }
                acc
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_end_once_the_stop_says_so() {
        let flag = AtomicBool::new(false);
        let seen: Vec<u32> = Stoppable::new(0..10, Some(Stop::flag(&flag)))
            .inspect(|&x| flag.store(x == 3, Ordering::Relaxed))
            .collect();
        assert_eq!(seen, [0, 1, 2, 3]);
        let at = AtomicUsize::new(usize::MAX);
        let stop = Stop::below(&at, 5);
        let sum = Stoppable::new(0..10usize, Some(stop)).fold(0, |acc, x| {
            at.store(if x == 6 { 4 } else { 5 }, Ordering::Relaxed);
            acc + x
        });
        assert_eq!(sum, 21);
        assert_eq!(Stoppable::new(0..10, None).sum::<i32>(), 45);
        // `find` and `find_map` (a `filter`'s and a `filter_map`'s `next`) stop inside their
        // loops, and find what there is before the stop.
        flag.store(false, Ordering::Relaxed);
        let mut items = Stoppable::new(0..100, Some(Stop::flag(&flag)));
        assert_eq!(items.find(|&x| x == 5), Some(5));
        assert_eq!(items.find(|&x| x % 7 == 6), Some(6));
        let stop_at = |x: i32| {
            flag.store(x == 20, Ordering::Relaxed);
            false
        };
        assert_eq!(items.find(|&x| stop_at(x)), None);
        assert_eq!(items.next(), None);
        // It stopped at the first item after the stop (21, not looked at).
        flag.store(false, Ordering::Relaxed);
        assert_eq!(items.next(), Some(22));
        flag.store(false, Ordering::Relaxed);
        let mut items = Stoppable::new(0..100, Some(Stop::flag(&flag)));
        assert_eq!(items.find_map(|x| (x > 2).then_some(x * 2)), Some(6));
        assert_eq!(items.find_map(|x| stop_at(x).then_some(x * 2)), None);
        assert_eq!(items.next(), None);
        flag.store(false, Ordering::Relaxed);
        assert_eq!(items.next(), Some(22));
        assert_eq!(Stoppable::new(0..10, None).find(|&x| x > 3), Some(4));
        assert_eq!(Stoppable::new(0..10, None).size_hint(), (10, Some(10)));
        assert_eq!(Stoppable::new(0..10, Some(stop)).size_hint(), (0, Some(10)));
    }
}
