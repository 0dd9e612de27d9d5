//! `par_drain`: rayon's `ParallelDrainRange` (a range of a `Vec`, `VecDeque` or `String`) and
//! `ParallelDrainFull` (all of a `HashMap`, `HashSet` or `BinaryHeap`), both in the prelude.
//!
//! - `Vec`: in place ([`vec::Drain`]): the range's items are moved out by
//!   the members, and when the iterator is dropped the vector keeps the elements before and
//!   after the range, as after std's `Vec::drain`. Items a terminal call did not take (a
//!   `take`, an early stop, a panic) are dropped then; an iterator dropped without a terminal
//!   call drops the whole range.
//! - `VecDeque`, `String` and the full drains: the calling thread first drains the items
//!   (the characters of a `String`) with std's sequential `drain` into a `Vec`, which the call
//!   then splits as any `Vec`: the collection is left as std's `drain` leaves it at once, and
//!   the items cost an O(n) sequential move before the parallel part (rayon, too, gathers the
//!   full drains' items first). A full drain keeps the collection's capacity.
//!
//! A range is any `RangeBounds<usize>` (`..`, `a..b`, `a..=b`, `a..`, `..b`), in elements (in
//! bytes for a `String`). One that is not within the collection panics, as std's `drain` and
//! rayon's do, with a message saying what the range and the length are.

use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};
use std::ops::{Bound, Range, RangeBounds};

use crate::source::vec;
use crate::{IntoParallelIterator, ParallelIterator};

/// Draining a range of a collection in parallel (rayon's `ParallelDrainRange`).
pub trait ParallelDrainRange<Idx = usize> {
    /// The parallel iterator of the drained items.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The drained items.
    type Item: Send;

    /// Removes the items of `range` from the collection, yielding them by value; the
    /// collection keeps the others, in order. Panics when the range is not within the
    /// collection.
    fn par_drain<R: RangeBounds<Idx>>(self, range: R) -> Self::Iter;
}

/// Draining all of a collection in parallel (rayon's `ParallelDrainFull`).
pub trait ParallelDrainFull {
    /// The parallel iterator of the drained items.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The drained items.
    type Item: Send;

    /// Removes every item of the collection, yielding them by value (in the collection's
    /// iteration order); the collection keeps its capacity.
    fn par_drain(self) -> Self::Iter;
}

/// `range` as a `Range` within `0..len`, or a panic that says why not.
fn within(range: impl RangeBounds<usize>, len: usize, what: &str) -> Range<usize> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s
            .checked_add(1)
            .unwrap_or_else(|| panic!("par_drain: the range's start overflows usize")),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e
            .checked_add(1)
            .unwrap_or_else(|| panic!("par_drain: the range's end overflows usize")),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end,
        "par_drain: the range starts at {start}, after its end {end}"
    );
    assert!(
        end <= len,
        "par_drain: the range ends at {end}, past the {what}'s length {len}"
    );
    start..end
}

impl<'a, T: Send> ParallelDrainRange<usize> for &'a mut Vec<T> {
    type Iter = vec::Drain<'a, T>;
    type Item = T;

    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> vec::Drain<'a, T> {
        let r = within(range, self.len(), "vector");
        vec::Drain::new(self, r)
    }
}

impl<T: Send> ParallelDrainRange<usize> for &mut VecDeque<T> {
    type Iter = vec::IntoIter<T>;
    type Item = T;

    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> vec::IntoIter<T> {
        let r = within(range, self.len(), "deque");
        self.drain(r).collect::<Vec<_>>().into_par_iter()
    }
}

/// The characters of the range (in bytes, on character boundaries, as `String::drain`).
impl ParallelDrainRange<usize> for &mut String {
    type Iter = vec::IntoIter<char>;
    type Item = char;

    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> vec::IntoIter<char> {
        let r = within(range, self.len(), "string");
        assert!(
            self.is_char_boundary(r.start) && self.is_char_boundary(r.end),
            "par_drain: the range {r:?} does not start and end on character boundaries"
        );
        self.drain(r).collect::<Vec<_>>().into_par_iter()
    }
}

/// Declares `ParallelDrainFull` for `$coll` through a `Vec` of its drained items.
macro_rules! drain_full {
    ($(impl<$($g:ident),*> for $coll:ty => $item:ty where [$($bound:tt)*];)*) => {$(
        impl<$($g),*> ParallelDrainFull for &mut $coll
        where
            $($bound)*
        {
            type Iter = vec::IntoIter<$item>;
            type Item = $item;

            fn par_drain(self) -> vec::IntoIter<$item> {
                self.drain().collect::<Vec<_>>().into_par_iter()
            }
        }
    )*};
}

drain_full! {
    impl<K, V, S> for HashMap<K, V, S> => (K, V) where [K: Hash + Eq + Send, V: Send, S: BuildHasher];
    impl<T, S> for HashSet<T, S> => T where [T: Hash + Eq + Send, S: BuildHasher];
    impl<T> for BinaryHeap<T> => T where [T: Ord + Send];
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    #[test]
    fn a_vec_keeps_what_is_outside_the_range() {
        on_every_team(|k| {
            let mut v: Vec<String> = (0..20).map(|i| i.to_string()).collect();
            let got: Vec<String> = v.par_drain(5..12).collect();
            let want: Vec<String> = (5..12).map(|i| i.to_string()).collect();
            assert_eq!(got, want, "team of {k}");
            let kept: Vec<String> = (0..5).chain(12..20).map(|i| i.to_string()).collect();
            assert_eq!(v, kept, "team of {k}");
            // every form of range
            let mut v: Vec<u32> = (0..10).collect();
            assert_eq!(v.par_drain(..=2).sum::<u32>(), 3);
            assert_eq!(v.par_drain(5..).collect::<Vec<_>>(), [8, 9]);
            assert_eq!(v.par_drain(..).rev().collect::<Vec<_>>(), [7, 6, 5, 4, 3]);
            assert!(v.is_empty());
            let mut v = vec![1, 2, 3];
            assert_eq!(v.par_drain(1..1).count(), 0);
            assert_eq!(v, [1, 2, 3]);
        });
    }

    /// Counts the drops of its values.
    struct Counted<'a>(&'a AtomicUsize, u32);

    impl Drop for Counted<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn items_not_taken_are_dropped_once_and_the_tail_moves_down() {
        on_every_team(|k| {
            let drops = AtomicUsize::new(0);
            let mut v: Vec<Counted> = (0..40).map(|i| Counted(&drops, i)).collect();
            // take: 5 of the 20 items reach the closure, the other 15 are dropped unread
            let sum: u32 = v.par_drain(10..30).take(5).map(|c| c.1).sum();
            assert_eq!(sum, 10 + 11 + 12 + 13 + 14, "team of {k}");
            assert_eq!(drops.load(Ordering::Relaxed), 20, "team of {k}");
            let kept: Vec<u32> = v.iter().map(|c| c.1).collect();
            assert_eq!(kept, (0..10).chain(30..40).collect::<Vec<_>>());
            // dropped without a terminal call: the whole range goes
            drop(v.par_drain(2..5));
            assert_eq!(drops.load(Ordering::Relaxed), 23);
            assert_eq!(v.len(), 17);
            drop(v);
            assert_eq!(drops.load(Ordering::Relaxed), 40);
        });
    }

    #[test]
    fn a_panic_leaves_the_vec_whole_and_every_item_dropped_once() {
        on_every_team(|k| {
            let drops = AtomicUsize::new(0);
            let mut v: Vec<Counted> = (0..64).map(|i| Counted(&drops, i)).collect();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                v.par_drain(8..56).for_each(|c| assert_ne!(c.1, 30, "boom"));
            }));
            assert!(r.is_err(), "team of {k}");
            assert_eq!(drops.load(Ordering::Relaxed), 48, "team of {k}");
            let kept: Vec<u32> = v.iter().map(|c| c.1).collect();
            assert_eq!(kept, (0..8).chain(56..64).collect::<Vec<_>>());
            // and the runtime still works
            assert_eq!(v.par_drain(..).count(), 16);
        });
    }

    #[test]
    fn zero_sized_items() {
        on_every_team(|k| {
            let mut v = vec![(); 100];
            assert_eq!(v.par_drain(10..90).count(), 80, "team of {k}");
            assert_eq!(v.len(), 20);
        });
    }

    #[test]
    fn a_leaked_drain_leaks_the_range_and_the_tail_only() {
        let mut v: Vec<String> = (0..6).map(|i| i.to_string()).collect();
        std::mem::forget(v.par_drain(2..4));
        assert_eq!(v, ["0", "1"]);
    }

    #[test]
    fn ranges_outside_the_collection_say_so() {
        let msg = |f: Box<dyn FnOnce() + std::panic::UnwindSafe>| {
            let e = std::panic::catch_unwind(f).unwrap_err();
            match e.downcast::<String>() {
                Ok(s) => *s,
                Err(e) => e
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .unwrap_or_default(),
            }
        };
        assert_eq!(
            msg(Box::new(|| drop(vec![1, 2, 3].par_drain(1..5)))),
            "par_drain: the range ends at 5, past the vector's length 3"
        );
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 2..1;
        assert_eq!(
            msg(Box::new(move || drop(vec![1, 2, 3].par_drain(reversed)))),
            "par_drain: the range starts at 2, after its end 1"
        );
        assert_eq!(
            msg(Box::new(|| drop(vec![1].par_drain(..=usize::MAX)))),
            "par_drain: the range's end overflows usize"
        );
        assert_eq!(
            msg(Box::new(|| drop(String::from("é").par_drain(1..)))),
            "par_drain: the range 1..2 does not start and end on character boundaries"
        );
        assert_eq!(
            msg(Box::new(|| drop(VecDeque::from([1]).par_drain(..2)))),
            "par_drain: the range ends at 2, past the deque's length 1"
        );
    }

    #[test]
    fn deques_strings_and_full_drains() {
        on_every_team(|k| {
            let mut d: VecDeque<u32> = (0..10).collect();
            d.rotate_left(3); // wrapped
            let got: Vec<u32> = d.par_drain(2..6).collect();
            assert_eq!(got, [5, 6, 7, 8], "team of {k}");
            assert_eq!(d, [3, 4, 9, 0, 1, 2]);
            let mut s = String::from("añb€c");
            assert_eq!(s.par_drain(1..7).collect::<String>(), "ñb€");
            assert_eq!(s, "ac");
            let mut m: HashMap<u32, u32> = (0..100).map(|i| (i, 2 * i)).collect();
            let cap = m.capacity();
            let mut got: Vec<(u32, u32)> = m.par_drain().collect();
            got.sort_unstable();
            assert_eq!(got, (0..100).map(|i| (i, 2 * i)).collect::<Vec<_>>());
            assert!(m.is_empty() && m.capacity() == cap);
            let mut h: HashSet<u32> = (0..50).collect();
            assert_eq!(h.par_drain().sum::<u32>(), (0..50).sum());
            assert!(h.is_empty());
            let mut b: BinaryHeap<u32> = (0..50).collect();
            assert_eq!(b.par_drain().max(), Some(49));
            assert!(b.is_empty());
        });
    }
}
