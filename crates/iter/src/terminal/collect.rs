//! `collect` and `collect_into_vec`: items gathered in order.
//!
//! An indexed iterator is collected into a `Vec` in place: the vector is allocated once, and
//! each range's items are written at their own indices by whichever member runs the range.
//! Other iterators (after `filter`, say) collect each range into a vector of its own, and the
//! vectors are appended in index order. Other collections are built from that vector.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hash};
use std::mem::MaybeUninit;
use std::ops::Range;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use either::Either;

use crate::internal::raw::{drop_filled, Filling, RawSlice};
use crate::terminal::drive;
use crate::{IntoParallelIterator, ParallelIterator};

/// A collection `collect` can build from a parallel iterator.
pub trait FromParallelIterator<T: Send> {
    /// Builds the collection from the items of `iter`, taken in order.
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>;
}

impl<T: Send> FromParallelIterator<T> for Vec<T> {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        let mut v = Vec::new();
        extend_vec(iter.into_par_iter(), &mut v);
        v
    }
}

/// Replaces `target`'s contents with the items of the indexed `iter`.
pub(crate) fn into_vec<I: ParallelIterator>(iter: I, target: &mut Vec<I::Item>) {
    target.clear();
    extend_vec(iter, target);
}

/// Appends the items of `iter` to `target`, in order.
pub(crate) fn extend_vec<I: ParallelIterator>(iter: I, target: &mut Vec<I::Item>) {
    if !I::EXACT {
        let mut items = drive::reduce::reduce(
            &iter,
            Vec::new,
            |mut v, items| {
                v.extend(items);
                v
            },
            |mut a, mut b| {
                a.append(&mut b);
                a
            },
        );
        target.append(&mut items);
        return;
    }
    let len = iter.base_len();
    if let Err(e) = target.try_reserve(len) {
        panic!(
            "collect: {len} items do not fit a Vec ({e}); an endless `repeat` must be bounded \
             with `take` or `zip` first"
        );
    }
    let old = target.len();
    let written = AtomicUsize::new(0);
    {
        let spare = RawSlice::new(&mut target.spare_capacity_mut()[..len]);
        let done = Done {
            spare: &spare,
            ranges: Mutex::new(Vec::new()),
        };
        drive::run(&iter, |range, items| {
            // A producer's length is fixed, but safe code can break that: ranges split from a
            // length that grew since `len` was read would reach past the reserved slots.
            assert!(
                range.end <= len,
                "asat-iter: a producer's length changed during a call ({len}, then at least {}): \
                 `base_len` must return the same value over the producer's life",
                range.end
            );
            // SAFETY: within the `len` reserved slots (checked above), and the Producer rule:
            // every index is handed to one range only, so this range's part of the spare
            // capacity is written by this member alone.
            let mut out = Filling::new(unsafe { spare.slice_mut(range.clone()) });
            for item in items {
                if !out.push(item) {
                    break;
                }
            }
            let filled = out.finish();
            written.fetch_add(filled, Ordering::Relaxed);
            // Only the slots written: a range that ends short (stopped because another member
            // panicked, or from a producer breaking its promise) leaves the rest unwritten.
            lock(&done.ranges).push(range.start..range.start + filled);
        });
        // Every range is written: the items are the vector's from here on.
        lock(&done.ranges).clear();
    }
    // Items stand one for one at the indices of an exact iterator, so every slot was
    // written; a count that falls short (a producer breaking that promise) leaks what was
    // written instead of exposing uninitialized slots.
    let written = written.into_inner();
    assert_eq!(
        written, len,
        "asat-iter: an indexed producer yielded {written} items for {len} indices: a producer \
         with `EXACT = true` yields exactly one item per index of every range"
    );
    // SAFETY: the `len` slots after `old` were initialized above (checked by the count).
    unsafe { target.set_len(old + len) };
}

/// The runs of slots an in-place collect has written (the front of each range a member
/// finished): dropped (with their items) if the call unwinds, so that a panic in one member
/// leaks nothing the others wrote.
struct Done<'s, 'v, T> {
    spare: &'s RawSlice<'v, MaybeUninit<T>>,
    ranges: Mutex<Vec<Range<usize>>>,
}

impl<T> Drop for Done<'_, '_, T> {
    fn drop(&mut self) {
        let ranges = self.ranges.get_mut().unwrap_or_else(|e| e.into_inner());
        for r in ranges.drain(..) {
            // SAFETY: each recorded run is the front of one member's range that its `Filling`
            // wrote and finished (`filled` slots from the range's start), no run is recorded
            // twice, and nothing else owns these items: the vector's length does not cover them.
            unsafe { drop_filled(self.spare.slice_mut(r)) };
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Collections built from the in-order `Vec` of the items (without a copy where std's
/// `collect` of a `Vec`'s items reuses its buffer: boxed slices, heaps, which then order it
/// sequentially, as rayon's do).
macro_rules! via_vec {
    ($(impl<$($l:lifetime,)* $($g:ident),*> for $c:ty where [$($b:tt)*] item $t:ty;)*) => {$(
        impl<$($l,)* $($g),*> FromParallelIterator<$t> for $c
        where
            $($b)*
        {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: IntoParallelIterator<Item = $t>,
            {
                Vec::from_par_iter(iter).into_iter().collect()
            }
        }
    )*};
}

via_vec! {
    impl<T> for VecDeque<T> where [T: Send] item T;
    impl<T> for LinkedList<T> where [T: Send] item T;
    impl<T> for BTreeSet<T> where [T: Send + Ord] item T;
    impl<K, V> for BTreeMap<K, V> where [K: Send + Ord, V: Send] item (K, V);
    impl<T, S> for HashSet<T, S> where [T: Send + Eq + Hash, S: BuildHasher + Default] item T;
    impl<K, V, S> for HashMap<K, V, S>
        where [K: Send + Eq + Hash, V: Send, S: BuildHasher + Default] item (K, V);
    impl<> for String where [] item char;
    impl<> for String where [] item String;
    impl<T> for Box<[T]> where [T: Send] item T;
    impl<T> for Rc<[T]> where [T: Send] item T;
    impl<T> for Arc<[T]> where [T: Send] item T;
    impl<T> for BinaryHeap<T> where [T: Send + Ord] item T;
    impl<'a,> for String where [] item &'a char;
    impl<> for String where [] item Box<str>;
    impl<'a,> for String where [] item Cow<'a, str>;
    impl<'a,> for OsString where [] item &'a OsStr;
    impl<> for OsString where [] item OsString;
    impl<'a,> for OsString where [] item Cow<'a, OsStr>;
}

impl<'a> FromParallelIterator<&'a str> for String {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = &'a str>,
    {
        Vec::from_par_iter(iter).concat()
    }
}

impl FromParallelIterator<()> for () {
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = ()>,
    {
        iter.into_par_iter().for_each(drop);
    }
}

/// Collects `Ok` values into `C`, or returns the first `Err` (in order). All items are
/// computed (no early exit).
impl<C, T, E> FromParallelIterator<Result<T, E>> for Result<C, E>
where
    C: FromIterator<T>,
    T: Send,
    E: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Result<T, E>>,
    {
        Vec::from_par_iter(iter).into_iter().collect()
    }
}

/// Collects the values into `C` if every item is `Some`, else `None`.
impl<C, T> FromParallelIterator<Option<T>> for Option<C>
where
    C: FromIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Option<T>>,
    {
        Vec::from_par_iter(iter).into_iter().collect()
    }
}

/// Collects into the owned form of `C` (rayon's `Cow` collect): always `Cow::Owned`.
impl<'a, C, T> FromParallelIterator<T> for Cow<'a, C>
where
    C: ToOwned + ?Sized,
    C::Owned: FromParallelIterator<T>,
    T: Send,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>,
    {
        Cow::Owned(C::Owned::from_par_iter(iter))
    }
}

/// Collects pairs into two collections, the first values into `A` and the second into `B`,
/// each in order (rayon's tuple collect; [`unzip`](ParallelIterator::unzip) with
/// `FromParallelIterator` collections): the values are first split into two `Vec`s, which are
/// then collected.
impl<L, R, A, B> FromParallelIterator<(L, R)> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + FromParallelIterator<L>,
    B: Send + FromParallelIterator<R>,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = (L, R)>,
    {
        let (l, r): (Vec<L>, Vec<R>) = iter.into_par_iter().unzip();
        (A::from_par_iter(l), B::from_par_iter(r))
    }
}

/// Collects `Left` values into `A` and `Right` values into `B`, each in order (rayon's
/// collect of `Either`s, [`partition_map`](ParallelIterator::partition_map) with the
/// identity).
impl<L, R, A, B> FromParallelIterator<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + FromParallelIterator<L>,
    B: Send + FromParallelIterator<R>,
{
    fn from_par_iter<I>(iter: I) -> Self
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        let (l, r): (Vec<L>, Vec<R>) = iter.into_par_iter().partition_map(|x| x);
        (A::from_par_iter(l), B::from_par_iter(r))
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Range;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::internal::plumbing::Producer;
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    /// Drops of [`Counted`] (only the test below makes them).
    static DROPS: AtomicUsize = AtomicUsize::new(0);

    /// A zero-sized item that counts its drops: dropping a slot that was never written still
    /// counts, so a drop of unwritten slots shows.
    struct Counted;

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Says its items stand one for one at its indices, but the range at 0 panics before its
    /// first item and every other range ends at once, short.
    struct ShortRanges(usize);

    fn boom() -> Option<Counted> {
        panic!("boom at 0")
    }

    fn none() -> Option<Counted> {
        None
    }

    impl Producer for ShortRanges {
        type Item = Counted;
        type Seq<'a> = std::iter::FromFn<fn() -> Option<Counted>>;
        const EXACT: bool = true;

        fn base_len(&self) -> usize {
            self.0
        }

        unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
            std::iter::from_fn(if range.start == 0 { boom } else { none })
        }
    }

    #[test]
    fn an_unwinding_collect_drops_only_the_slots_written() {
        on_every_team(|k| {
            let r = catch_unwind(AssertUnwindSafe(|| {
                ShortRanges(64).collect::<Vec<Counted>>().len()
            }));
            assert!(r.is_err(), "team of {k}");
            // No item was made, so none may be dropped (the short ranges' slots are not
            // items).
            assert_eq!(DROPS.load(Ordering::SeqCst), 0, "team of {k}");
            let v: Vec<usize> = (0..64usize).into_par_iter().collect();
            assert_eq!(v, (0..64).collect::<Vec<_>>());
        });
    }
}
