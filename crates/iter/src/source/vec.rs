//! `Vec::into_par_iter()`: owned items moved out of the vector's buffer; and
//! `Vec::par_drain(range)`: the items of a range moved out, the vector keeping the others.
//!
//! The vector gives up its elements when the iterator is made (its length is set to 0, or to
//! the range's start for a drain, so it only frees the buffer, or keeps the elements before the
//! range). Each range's sequential iterator moves its elements out one by one
//! and drops those it did not yield when it is dropped; the ranges handed out are recorded, so
//! that dropping the parallel iterator drops the elements no range covered (those a `zip` with
//! a shorter iterator, `take`, or a panic that stopped the call never reached). A drain then
//! moves the elements after its range down and gives the vector its length back, as std's
//! `Vec::drain` does when dropped: in place, one `memmove` of the tail.
//!
//! `IntoIter` is `Clone` when its items are, as rayon's: a clone is a new vector of clones of
//! the elements no range was handed out over (all of them until a terminal call, which takes the
//! iterator by value), read under the lock that records the ranges. A drain is not `Clone`.

use std::ops::Range;
use std::sync::Mutex;

use crate::internal::plumbing::{DoubleEndedProducer, Producer};
use crate::internal::raw::{Buffer, RawParts, VecRange};
use crate::{IndexedParallelIterator, IntoParallelIterator};

/// Elements owned by a parallel iterator, moved out range by range, and which ranges were
/// handed out.
#[derive(Debug)]
struct Owned<T> {
    elements: RawParts<T>,
    handed_out: Mutex<Vec<Range<usize>>>,
}

impl<T> Owned<T> {
    fn new(elements: RawParts<T>) -> Self {
        Owned {
            elements,
            handed_out: Mutex::new(Vec::new()),
        }
    }

    /// The sequential iterator of `r`, recorded as handed out.
    ///
    /// # Safety
    ///
    /// No index of `r` was handed out before (the [`Producer`] rule).
    unsafe fn seq(&self, r: Range<usize>) -> SliceDrain<'_, T> {
        self.handed_out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(r.clone());
        SliceDrain {
            elements: &self.elements,
            next: r.start,
            end: r.end,
        }
    }

    /// Drops the elements no range was handed out over (those handed out are dropped by their
    /// sequential iterators); afterwards every element is gone.
    fn drop_rest(&mut self) {
        let len = self.elements.len();
        let handed = self.handed_out.get_mut().unwrap_or_else(|e| e.into_inner());
        for gap in gaps(handed, len) {
            // SAFETY: no range was handed out over `gap`: those elements are live and nothing
            // else will touch them.
            unsafe { self.elements.drop_range(gap) };
        }
        // Everything is gone now: a second call drops nothing.
        handed.clear();
        handed.push(0..len);
    }

    /// Clones of the elements no range was handed out over, in order: all of them before a
    /// call (the ranges handed out may have been moved out, partly or wholly).
    fn clone_rest(&self) -> Vec<T>
    where
        T: Clone,
    {
        // Held throughout, so that no range is handed out while its elements are read.
        let mut handed = self.handed_out.lock().unwrap_or_else(|e| e.into_inner());
        let len = self.elements.len();
        let mut rest = Vec::with_capacity(len);
        for gap in gaps(&mut handed, len) {
            // SAFETY: no range was handed out over `gap`, and none can be while the lock is
            // held: those elements are live, and no one else reads or moves them meanwhile.
            rest.extend_from_slice(unsafe { self.elements.slice(gap) });
        }
        rest
    }
}

/// The parts of `0..len` that none of `handed` (disjoint ranges, sorted here) covers, in order.
fn gaps(handed: &mut [Range<usize>], len: usize) -> impl Iterator<Item = Range<usize>> + '_ {
    handed.sort_unstable_by_key(|r| r.start);
    let mut at = 0;
    handed
        .iter()
        .cloned()
        .chain(std::iter::once(len..len))
        .filter_map(move |r| {
            let gap = at..r.start;
            at = at.max(r.end);
            (!gap.is_empty()).then_some(gap)
        })
}

/// A parallel iterator that moves the items out of a `Vec`.
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct IntoIter<T> {
    owned: Owned<T>,
    _buffer: Buffer<T>,
}

impl<T> IntoIter<T> {
    fn new(vec: Vec<T>) -> Self {
        let (buffer, elements) = Buffer::split(vec);
        IntoIter {
            owned: Owned::new(elements),
            _buffer: buffer,
        }
    }
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Iter = IntoIter<T>;
    type Item = T;

    fn into_par_iter(self) -> IntoIter<T> {
        IntoIter::new(self)
    }
}

/// Clones of the items not handed out yet (all of them until a call), in a new vector: see the
/// [module docs](self).
impl<T: Clone> Clone for IntoIter<T> {
    fn clone(&self) -> Self {
        IntoIter::new(self.owned.clone_rest())
    }
}

impl<T> Drop for IntoIter<T> {
    fn drop(&mut self) {
        // (then `_buffer` frees the allocation)
        self.owned.drop_rest();
    }
}

/// A parallel iterator that moves the items of a range out of a `Vec`
/// ([`par_drain`](crate::ParallelDrainRange::par_drain)); when it is dropped, the vector keeps
/// the elements before and after the range, in order, as after std's `Vec::drain`.
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Drain<'a, T> {
    owned: Owned<T>,
    _range: VecRange<'a, T>,
}

impl<'a, T: Send> Drain<'a, T> {
    /// The elements of `range` (within the vector's length) of `vec`.
    pub(crate) fn new(vec: &'a mut Vec<T>, range: Range<usize>) -> Self {
        let (range, elements) = VecRange::split(vec, range);
        Drain {
            owned: Owned::new(elements),
            _range: range,
        }
    }
}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        // (then `_range` moves the tail down over the range)
        self.owned.drop_rest();
    }
}

/// The elements of one range, moved out as they are yielded.
#[derive(Debug)]
pub struct SliceDrain<'a, T> {
    elements: &'a RawParts<T>,
    next: usize,
    end: usize,
}

impl<T> Iterator for SliceDrain<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.next == self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        // SAFETY: `i` is in this drain's range, which no other drain covers (Producer rule), and
        // moves past it before the element is moved out, so it is read once.
        Some(unsafe { self.elements.take(i) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl<T> DoubleEndedIterator for SliceDrain<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        if self.next == self.end {
            return None;
        }
        self.end -= 1;
        // SAFETY: as in `next`: `end` is in this drain's range and leaves it before the element
        // is moved out.
        Some(unsafe { self.elements.take(self.end) })
    }
}

impl<T> Drop for SliceDrain<'_, T> {
    fn drop(&mut self) {
        let rest = self.next..self.end;
        self.next = self.end;
        // SAFETY: the elements not yielded are still live and only this drain covers them.
        unsafe { self.elements.drop_range(rest) };
    }
}

/// `Producer`, `IndexedParallelIterator` and `DoubleEndedProducer` for an iterator over
/// `Owned` elements in its `owned` field.
macro_rules! owned_producer {
    ($($ty:ty, $($lt:lifetime)?;)*) => {$(
        impl<$($lt,)? T: Send> Producer for $ty {
            type Item = T;
            type Seq<'s>
                = SliceDrain<'s, T>
            where
                Self: 's;
            const EXACT: bool = true;

            fn base_len(&self) -> usize {
                self.owned.elements.len()
            }

            unsafe fn seq(&self, r: Range<usize>) -> SliceDrain<'_, T> {
                // SAFETY: the caller's promise (the Producer rule).
                unsafe { self.owned.seq(r) }
            }
        }

        impl<$($lt,)? T: Send> IndexedParallelIterator for $ty {}

        impl<$($lt,)? T: Send> DoubleEndedProducer for $ty {
            type SeqRev<'s>
                = std::iter::Rev<SliceDrain<'s, T>>
            where
                Self: 's;

            unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
                // SAFETY: the caller's range, recorded as handed out by `seq`.
                unsafe { self.owned.seq(r) }.rev()
            }
        }
    )*};
}

owned_producer! {
    IntoIter<T>, ;
    Drain<'a, T>, 'a;
}

#[cfg(test)]
mod tests {
    use super::gaps;
    use crate::internal::plumbing::Producer;
    use crate::prelude::*;

    #[test]
    fn gaps_are_the_parts_no_range_covers() {
        let g: Vec<_> = gaps(&mut [5..6, 1..3, 3..4], 8).collect();
        assert_eq!(g, [0..1, 4..5, 6..8]);
        assert_eq!(gaps(&mut [4..8, 0..4], 8).count(), 0);
        assert!(gaps(&mut [], 3).eq(std::iter::once(0..3)));
    }

    #[test]
    fn a_clone_has_the_items_of_the_ranges_not_asked_for() {
        let it = (0..6)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .into_par_iter();
        // SAFETY: the only range asked of `it`.
        let mut seq = unsafe { it.seq(1..3) };
        assert_eq!(seq.next().as_deref(), Some("1"));
        let copy = it.clone();
        assert_eq!(seq.next().as_deref(), Some("2"));
        drop(seq);
        drop(it);
        assert_eq!(copy.collect::<Vec<_>>(), ["0", "3", "4", "5"]);
    }

    #[test]
    fn arrays_by_value_move_their_items_out() {
        let v: Vec<String> = ["a".to_owned(), "b".to_owned(), "c".to_owned()]
            .into_par_iter()
            .collect();
        assert_eq!(v, ["a", "b", "c"]);
    }
}
