//! `Vec::into_par_iter()`: owned items moved out of the vector's buffer.
//!
//! The vector gives up its elements when the iterator is made (its length is set to 0, so it
//! only frees the buffer). Each range's sequential iterator moves its elements out one by one
//! and drops those it did not yield when it is dropped; the ranges handed out are recorded, so
//! that dropping the parallel iterator drops the elements no range covered (those a `zip` with
//! a shorter iterator, `take`, or a panic that stopped the call never reached).

use std::ops::Range;
use std::sync::Mutex;

use crate::plumbing::{DoubleEndedProducer, Producer};
use crate::raw::{Buffer, RawParts};
use crate::{IndexedParallelIterator, IntoParallelIterator};

/// A parallel iterator that moves the items out of a `Vec`.
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct IntoIter<T> {
    elements: RawParts<T>,
    _buffer: Buffer<T>,
    handed_out: Mutex<Vec<Range<usize>>>,
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Iter = IntoIter<T>;
    type Item = T;

    fn into_par_iter(self) -> IntoIter<T> {
        let (buffer, elements) = Buffer::split(self);
        IntoIter {
            elements,
            _buffer: buffer,
            handed_out: Mutex::new(Vec::new()),
        }
    }
}

/// Arrays by value move their items out, as `Vec`s do.
impl<T: Send, const N: usize> IntoParallelIterator for [T; N] {
    type Iter = IntoIter<T>;
    type Item = T;

    fn into_par_iter(self) -> IntoIter<T> {
        Vec::from(self).into_par_iter()
    }
}

/// The elements of one range, moved out as they are yielded.
#[derive(Debug)]
pub struct Drain<'a, T> {
    elements: &'a RawParts<T>,
    next: usize,
    end: usize,
}

impl<T> Iterator for Drain<'_, T> {
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

impl<T> DoubleEndedIterator for Drain<'_, T> {
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

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        let rest = self.next..self.end;
        self.next = self.end;
        // SAFETY: the elements not yielded are still live and only this drain covers them.
        unsafe { self.elements.drop_range(rest) };
    }
}

impl<T: Send> Producer for IntoIter<T> {
    type Item = T;
    type Seq<'a>
        = Drain<'a, T>
    where
        Self: 'a;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        self.elements.len()
    }

    unsafe fn seq(&self, r: Range<usize>) -> Drain<'_, T> {
        self.handed_out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(r.clone());
        Drain {
            elements: &self.elements,
            next: r.start,
            end: r.end,
        }
    }
}

impl<T: Send> IndexedParallelIterator for IntoIter<T> {}

impl<T: Send> DoubleEndedProducer for IntoIter<T> {
    type SeqRev<'a>
        = std::iter::Rev<Drain<'a, T>>
    where
        Self: 'a;

    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        // SAFETY: the caller's range, recorded as handed out by `seq`.
        unsafe { self.seq(r) }.rev()
    }
}

impl<T> Drop for IntoIter<T> {
    fn drop(&mut self) {
        let handed = self.handed_out.get_mut().unwrap_or_else(|e| e.into_inner());
        handed.sort_unstable_by_key(|r| r.start);
        let mut at = 0;
        for r in handed.iter() {
            if at < r.start {
                // SAFETY: no range was handed out over `at..r.start`: those elements are live
                // and nothing else will touch them.
                unsafe { self.elements.drop_range(at..r.start) };
            }
            at = at.max(r.end);
        }
        let len = self.elements.len();
        if at < len {
            // SAFETY: as above, for the tail no range reached. (`_buffer` then frees the
            // allocation.)
            unsafe { self.elements.drop_range(at..len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn arrays_by_value_move_their_items_out() {
        let v: Vec<String> = ["a".to_owned(), "b".to_owned(), "c".to_owned()]
            .into_par_iter()
            .collect();
        assert_eq!(v, ["a", "b", "c"]);
    }
}
