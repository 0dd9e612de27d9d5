//! Sources that are not collections, as `rayon::iter`'s: [`repeat`], [`repeat_n`] (and its
//! older name [`repeatn`]), [`once`] and [`empty`].
//!
//! - `repeat_n(x, n)`, `once(x)` and `empty()` are indexed: they zip, enumerate, reverse and
//!   split like a range of `n`, 1 and 0 indices. `repeat_n` gives `x` itself as one of its
//!   items, as rayon's does: the range asked for last (once every index has been asked for)
//!   moves `x` into its last item, and the others clone it, so `n` items cost `n - 1` clones
//!   when all are made; `repeat_n(x, 0)` drops `x` at once. `once` moves its item out.
//! - `repeat(x)` is endless, as in rayon, and not indexed. Its own [`take`](Repeat::take) and
//!   [`zip`](Repeat::zip) bound it (to a `repeat_n`); as a parallel iterator it has
//!   `usize::MAX` indices, so that the adapters and terminals that stop early (`find_any`,
//!   `take_any`, `while_some`, `any`) work on it, and one that does not (`for_each`, `sum`)
//!   runs until the process is stopped, as rayon's does. `collect` on it panics at once (the
//!   `Vec` cannot hold that many items), and so does a `chain` with it on either side (the
//!   two index spaces do not fit one `usize`), where rayon's chain would run on.
//!
//! The element is kept behind a lock, taken once per range to clone it (or, for `once` and the
//! last range of `repeat_n`, to take it): so these sources need `T: Send`, as rayon's, not
//! `T: Sync`.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use crate::internal::plumbing::{DoubleEndedProducer, Producer};
use crate::iter::indexed::Zip;
use crate::{IndexedParallelIterator, IntoParallelIterator};

/// A parallel iterator that repeats `element` without end (by cloning it): bound it with
/// [`take`](Repeat::take) or [`zip`](Repeat::zip), or use [`repeat_n`].
///
/// ```
/// use asat_iter::prelude::*;
/// let x: Vec<(i32, i32)> = asat_iter::repeat(22).zip(0..3).collect();
/// assert_eq!(x, [(22, 0), (22, 1), (22, 2)]);
/// ```
pub fn repeat<T: Clone + Send>(element: T) -> Repeat<T> {
    Repeat {
        element: Mutex::new(element),
    }
}

/// `n` clones of `element`, an indexed parallel iterator.
///
/// ```
/// use asat_iter::prelude::*;
/// let v: Vec<String> = asat_iter::repeat_n("ab".to_string(), 3).collect();
/// assert_eq!(v, ["ab", "ab", "ab"]);
/// ```
pub fn repeat_n<T: Clone + Send>(element: T, n: usize) -> RepeatN<T> {
    RepeatN {
        held: Mutex::new(Held {
            element: (n != 0).then_some(element),
            unasked: n,
        }),
        n,
    }
}

/// [`repeat_n`] under the name rayon gave it before 1.11.
#[deprecated(note = "use `repeat_n`")]
pub fn repeatn<T: Clone + Send>(element: T, n: usize) -> RepeatN<T> {
    repeat_n(element, n)
}

/// A parallel iterator of one item.
///
/// ```
/// use asat_iter::prelude::*;
/// let v: Vec<i32> = (0..3).into_par_iter().chain(asat_iter::once(10)).collect();
/// assert_eq!(v, [0, 1, 2, 10]);
/// ```
pub fn once<T: Send>(item: T) -> Once<T> {
    Once {
        item: Mutex::new(Some(item)),
    }
}

/// A parallel iterator of no items.
///
/// ```
/// use asat_iter::prelude::*;
/// assert_eq!(asat_iter::empty::<i32>().sum::<i32>(), 0);
/// ```
pub fn empty<T: Send>() -> Empty<T> {
    Empty(PhantomData)
}

/// See [`repeat`].
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Repeat<T> {
    element: Mutex<T>,
}

/// See [`repeat_n`].
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct RepeatN<T> {
    held: Mutex<Held<T>>,
    n: usize,
}

/// `repeat_n`'s element, until the range asked for last takes it, and how many of its indices
/// no range has asked for yet.
#[derive(Debug)]
struct Held<T> {
    element: Option<T>,
    unasked: usize,
}

/// See [`once`].
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Once<T> {
    item: Mutex<Option<T>>,
}

/// See [`empty`].
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Empty<T>(PhantomData<fn() -> T>);

/// A clone of the element behind `m` (a panic while the lock was held cannot leave a
/// half-written element: the lock is only held to clone it).
pub(crate) fn clone_of<T: Clone>(m: &Mutex<T>) -> T {
    m.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

// The clones take the element (the item, for `once`) under its lock, as each range does.
impl<T: Clone> Clone for Repeat<T> {
    fn clone(&self) -> Self {
        Repeat {
            element: Mutex::new(clone_of(&self.element)),
        }
    }
}

impl<T: Clone> Clone for RepeatN<T> {
    fn clone(&self) -> Self {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        RepeatN {
            held: Mutex::new(Held {
                element: held.element.clone(),
                unasked: held.unasked,
            }),
            n: self.n,
        }
    }
}

impl<T: Clone> Clone for Once<T> {
    fn clone(&self) -> Self {
        Once {
            item: Mutex::new(clone_of(&self.item)),
        }
    }
}

/// `Clone` whatever `T` is, as rayon's `Empty`.
impl<T> Clone for Empty<T> {
    fn clone(&self) -> Self {
        Empty(PhantomData)
    }
}

impl<T: Clone + Send> Repeat<T> {
    /// The first `n` repeats: [`repeat_n`]`(element, n)`.
    pub fn take(self, n: usize) -> RepeatN<T> {
        repeat_n(
            self.element
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner),
            n,
        )
    }

    /// Each item of `zip_op` paired with a clone of the element, as many as `zip_op` has.
    pub fn zip<Z>(self, zip_op: Z) -> Zip<RepeatN<T>, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        let b = zip_op.into_par_iter();
        let n = b.len();
        Zip { a: self.take(n), b }
    }
}

impl<T: Clone + Send> Producer for Repeat<T> {
    type Item = T;
    type Seq<'a>
        = std::iter::RepeatN<T>
    where
        T: 'a;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        usize::MAX
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        std::iter::repeat_n(clone_of(&self.element), range.len())
    }
}

impl<T: Clone + Send> Producer for RepeatN<T> {
    type Item = T;
    type Seq<'a>
        = Copies<T>
    where
        T: 'a;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        self.n
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        if range.is_empty() {
            return Copies {
                element: None,
                left: 0,
            };
        }
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        // The Producer rule: no index is asked for twice, so once every index has been asked
        // for, no range will want a clone any more.
        held.unasked -= range.len();
        let element = if held.unasked == 0 {
            held.element.take()
        } else {
            held.element.clone()
        };
        drop(held);
        Copies {
            element,
            left: range.len(),
        }
    }
}

/// A range's items of [`repeat_n`]: clones of its copy of the element, the copy itself last.
#[derive(Debug)]
pub struct Copies<T> {
    element: Option<T>,
    left: usize,
}

impl<T: Clone> Iterator for Copies<T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match self.left {
            0 => None,
            1 => {
                self.left = 0;
                self.element.take()
            }
            _ => {
                self.left -= 1;
                self.element.clone()
            }
        }
    }

    /// Skips `n` items without cloning the element for them.
    #[inline]
    fn nth(&mut self, n: usize) -> Option<T> {
        if n >= self.left {
            self.left = 0;
            self.element = None;
            return None;
        }
        self.left -= n;
        self.next()
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T: Clone> DoubleEndedIterator for Copies<T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        self.next()
    }
}

impl<T: Clone> ExactSizeIterator for Copies<T> {}

impl<T: Clone + Send> DoubleEndedProducer for RepeatN<T> {
    type SeqRev<'a>
        = Copies<T>
    where
        T: 'a;

    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: clones of one element: nothing to keep apart, and back to front is the same.
        unsafe { self.seq(range) }
    }
}

impl<T: Clone + Send> IndexedParallelIterator for RepeatN<T> {}

impl<T: Send> Producer for Once<T> {
    type Item = T;
    type Seq<'a>
        = std::option::IntoIter<T>
    where
        T: 'a;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        1
    }

    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // The Producer rule: index 0 is asked for once, so the item is there when it is.
        let item = if range.is_empty() {
            None
        } else {
            self.item
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
        };
        item.into_iter()
    }
}

impl<T: Send> DoubleEndedProducer for Once<T> {
    type SeqRev<'a>
        = std::option::IntoIter<T>
    where
        T: 'a;

    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller keeps the Producer rule, which `seq` needs.
        unsafe { self.seq(range) }
    }
}

impl<T: Send> IndexedParallelIterator for Once<T> {}

impl<T: Send> Producer for Empty<T> {
    type Item = T;
    type Seq<'a>
        = std::iter::Empty<T>
    where
        T: 'a;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        0
    }

    unsafe fn seq(&self, _: Range<usize>) -> Self::Seq<'_> {
        std::iter::empty()
    }
}

impl<T: Send> DoubleEndedProducer for Empty<T> {
    type SeqRev<'a>
        = std::iter::Empty<T>
    where
        T: 'a;

    unsafe fn seq_rev(&self, _: Range<usize>) -> Self::SeqRev<'_> {
        std::iter::empty()
    }
}

impl<T: Send> IndexedParallelIterator for Empty<T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internal::testing::on_every_team;
    use crate::ParallelIterator;

    /// Counts its clones and drops.
    struct Counted(std::sync::Arc<[std::sync::atomic::AtomicUsize; 2]>);

    impl Clone for Counted {
        fn clone(&self) -> Self {
            self.0[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Counted(self.0.clone())
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0[1].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// A fresh element, and a reading of its (clones, drops) that resets them.
    fn counted() -> (Counted, impl Fn() -> (usize, usize)) {
        let c = std::sync::Arc::new([0, 0].map(std::sync::atomic::AtomicUsize::new));
        let seen = c.clone();
        let read = move || {
            seen.each_ref()
                .map(|a| a.swap(0, std::sync::atomic::Ordering::Relaxed))
        };
        (Counted(c), move || read().into())
    }

    #[test]
    fn repeat_n_moves_its_element_into_an_item_once_every_index_is_asked_for() {
        on_every_team(|k| {
            for n in [1, 2, 7, 1000] {
                let (x, seen) = counted();
                assert_eq!(repeat_n(x, n).with_max_len(3).count(), n);
                assert_eq!(seen(), (n - 1, n), "team {k}, n {n}: all items");
                let (x, seen) = counted();
                assert_eq!(repeat_n(x, n).rev().map(std::mem::forget).count(), n);
                assert_eq!(seen(), (n - 1, 0), "team {k}, n {n}: items kept");
                let (x, seen) = counted();
                assert_eq!(repeat_n(x, n).take(n - 1).count(), n - 1);
                assert_eq!(
                    seen(),
                    (n - 1, n),
                    "team {k}, n {n}: one index never asked for"
                );
                let (x, seen) = counted();
                assert_eq!(repeat_n(x, n).step_by(n.max(2) - 1).count(), n.min(2));
                let (clones, drops) = seen();
                assert_eq!(drops, clones + 1, "team {k}, n {n}: step_by");
                assert!(
                    clones < n.min(2) + k,
                    "team {k}, n {n}: step_by, {clones} clones"
                );
            }
            let (x, seen) = counted();
            let none = repeat_n(x, 0);
            assert_eq!(seen(), (0, 1), "dropped at once");
            assert_eq!((none.clone().count(), none.count()), (0, 0));
            assert_eq!(seen(), (0, 0));
        });
    }

    #[test]
    fn repeat_n_is_n_clones_split_and_reversed_as_a_range() {
        on_every_team(|k| {
            for n in [0, 1, 5, 1000] {
                let v: Vec<usize> = repeat_n(7, n).enumerate().map(|(i, x)| i * x).collect();
                assert_eq!(
                    v,
                    (0..n).map(|i| i * 7).collect::<Vec<_>>(),
                    "team {k}, n {n}"
                );
                let rev: Vec<(usize, char)> =
                    (0..n).into_par_iter().zip(repeat_n('a', n)).rev().collect();
                let want: Vec<_> = (0..n).rev().zip(std::iter::repeat_n('a', n)).collect();
                assert_eq!(rev, want);
                assert_eq!(
                    repeat_n(String::from("x"), n)
                        .with_max_len(3)
                        .map(|s| s.len())
                        .sum::<usize>(),
                    n
                );
            }
        });
    }

    #[test]
    fn repeat_is_bounded_by_take_and_zip_and_stops_early_terminals() {
        on_every_team(|k| {
            let v: Vec<(i32, usize)> = repeat(22).zip(0..3usize).collect();
            assert_eq!(v, [(22, 0), (22, 1), (22, 2)], "team {k}");
            assert_eq!(repeat(vec![1u8; 2]).take(4).flatten_iter().count(), 8);
            assert_eq!(repeat(3u64).take_any(10).sum::<u64>(), 30);
            assert_eq!(repeat(5).find_any(|x| *x == 5), Some(5));
            assert!(repeat(1).any(|x| x == 1));
        });
    }

    #[test]
    fn once_moves_its_item_and_empty_has_none() {
        on_every_team(|k| {
            let s = String::from("only");
            let v: Vec<String> = empty().chain(once(s)).chain(empty()).collect();
            assert_eq!(v, ["only"], "team {k}");
            assert_eq!(once(4).rev().map(|x| x * 2).collect::<Vec<_>>(), [8]);
            assert_eq!(empty::<u8>().count(), 0);
            assert_eq!(empty::<u8>().len(), 0);
            assert_eq!(once(()).len(), 1);
            let z: Vec<(i32, i32)> = once(1).zip(repeat_n(2, 10)).collect();
            assert_eq!(z, [(1, 2)]);
        });
    }

    #[test]
    fn collecting_an_endless_repeat_panics_instead_of_running_forever() {
        let r = std::panic::catch_unwind(|| repeat(0u8).collect::<Vec<_>>());
        assert!(r.is_err());
    }

    #[test]
    fn chaining_an_endless_repeat_panics_with_a_message() {
        let r = std::panic::catch_unwind(|| once(1).chain(repeat(2)).take_any(3).count());
        let e = r.expect_err("a chain of once and repeat has no index space");
        let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("overflow usize"), "{msg}");
    }

    #[test]
    #[allow(deprecated)]
    fn repeatn_is_repeat_n() {
        assert_eq!(repeatn(1, 4).sum::<i32>(), 4);
    }
}
