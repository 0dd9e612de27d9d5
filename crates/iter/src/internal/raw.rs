//! The unsafe core of the mutable and owning sources: a slice's base pointer shared among the
//! members of a call, from which each member makes the sub-slice of the indices it was handed.
//! Sound because a terminal call never hands out an index twice (the [`Producer`] rule).
//!
//! [`Producer`]: crate::plumbing::Producer

use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ops::Range;

/// The base and length of a run of elements that the holder may access exclusively, index
/// range by index range.
#[derive(Debug)]
pub(crate) struct RawParts<T> {
    ptr: *mut T,
    len: usize,
    _elements: PhantomData<T>,
}

// SAFETY: a `RawParts` only gives out disjoint sub-slices and elements (see its methods'
// contracts), each to one thread, as a `&mut [T]` split and sent would: sound when the elements
// may move between threads.
unsafe impl<T: Send> Send for RawParts<T> {}
// SAFETY: as above; sharing the base pointer gives no access by itself.
unsafe impl<T: Send> Sync for RawParts<T> {}

impl<T> RawParts<T> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The elements at `range`, shared.
    ///
    /// # Safety
    ///
    /// `range` lies within `0..len`, the elements are initialized, and no one moves, drops or
    /// mutably borrows any of them while the slice lives.
    pub(crate) unsafe fn slice(&self, range: Range<usize>) -> &[T] {
        debug_assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: in bounds, initialized and not mutated meanwhile (caller).
        unsafe { std::slice::from_raw_parts(self.ptr.add(range.start), range.len()) }
    }

    /// The elements at `range`, mutably, for a lifetime the caller picks.
    ///
    /// # Safety
    ///
    /// `range` lies within `0..len`, the elements stay valid for `'a`, and no other live
    /// reference covers any of them meanwhile.
    pub(crate) unsafe fn slice_mut<'a>(&self, range: Range<usize>) -> &'a mut [T] {
        debug_assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: in bounds, valid and exclusive (caller).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) }
    }

    /// Moves the element at `i` out.
    ///
    /// # Safety
    ///
    /// `i < len`, the element is initialized, and it is never read, dropped or moved again.
    pub(crate) unsafe fn take(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        // SAFETY: in bounds and read once (caller).
        unsafe { self.ptr.add(i).read() }
    }

    /// Drops the elements at `range` in place.
    ///
    /// # Safety
    ///
    /// As [`take`](RawParts::take), for every index of `range`.
    pub(crate) unsafe fn drop_range(&self, range: Range<usize>) {
        // SAFETY: the caller's promise makes this an exclusive slice of live elements.
        unsafe { std::ptr::drop_in_place(self.slice_mut(range)) }
    }
}

/// A mutably borrowed slice, shared among the members of a call as [`RawParts`].
#[derive(Debug)]
pub(crate) struct RawSlice<'a, T> {
    parts: RawParts<T>,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: as for `RawParts`, which holds the only access; the borrow marker adds none.
unsafe impl<T: Send> Send for RawSlice<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for RawSlice<'_, T> {}

impl<'a, T> RawSlice<'a, T> {
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        Self {
            parts: RawParts {
                ptr: slice.as_mut_ptr(),
                len: slice.len(),
                _elements: PhantomData,
            },
            _borrow: PhantomData,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.parts.len
    }

    /// The elements at `range`, mutably.
    ///
    /// # Safety
    ///
    /// `range` lies within `0..len`, and no other live reference covers any of its elements.
    pub(crate) unsafe fn slice_mut(&self, range: Range<usize>) -> &'a mut [T] {
        // SAFETY: the slice is borrowed for `'a`; bounds and exclusivity are the caller's.
        unsafe { self.parts.slice_mut(range) }
    }
}

/// A mutable borrow that the members of a call share without touching it: a parallel
/// iterator's part the caller keeps (the remainder of `par_chunks_exact_mut`). Only `&mut self`
/// and `self` reach the slice.
#[derive(Debug)]
pub(crate) struct Unshared<'a, T>(&'a mut [T]);

// SAFETY: a shared `&Unshared` gives no access to the slice (every method takes `&mut self`
// or `self`), so sharing it among threads shares nothing; `Send` is the slice's own
// (`&mut [T]` is `Send` when `T` is).
unsafe impl<T: Send> Sync for Unshared<'_, T> {}

impl<'a, T> Unshared<'a, T> {
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        Self(slice)
    }

    pub(crate) fn get_mut(&mut self) -> &mut [T] {
        self.0
    }

    /// The slice, for all of `'a`; an empty one stays.
    pub(crate) fn take(&mut self) -> &'a mut [T] {
        std::mem::take(&mut self.0)
    }

    pub(crate) fn into_inner(self) -> &'a mut [T] {
        self.0
    }
}

/// A vector's allocation, its elements given up to a [`RawParts`]: frees the buffer when
/// dropped, without touching the elements.
#[derive(Debug)]
pub(crate) struct Buffer<T> {
    vec: ManuallyDrop<Vec<T>>,
}

// SAFETY: a shared `Buffer` gives no access to anything (it has no methods taking `&self`).
unsafe impl<T: Send> Sync for Buffer<T> {}

impl<T> Buffer<T> {
    /// Splits `vec` into its allocation and its elements.
    pub(crate) fn split(vec: Vec<T>) -> (Buffer<T>, RawParts<T>) {
        let mut vec = ManuallyDrop::new(vec);
        let parts = RawParts {
            ptr: vec.as_mut_ptr(),
            len: vec.len(),
            _elements: PhantomData,
        };
        // SAFETY: 0 <= capacity; the elements stay initialized in the buffer, owned by `parts`
        // from here on (a vector of length 0 neither reads nor drops them).
        unsafe { vec.set_len(0) };
        (Buffer { vec }, parts)
    }
}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        // SAFETY: dropped once, here; the vector has length 0, so only the buffer is freed.
        unsafe { ManuallyDrop::drop(&mut self.vec) }
    }
}

/// A range of a borrowed vector's elements given up to a [`RawParts`], the vector keeping the
/// elements before and after it (`par_drain`): when dropped, moves the elements after the range
/// down over it and gives the vector its new length, without touching the range's elements.
///
/// The vector's length is cut to the range's start at once, so a `VecRange` that is leaked
/// (`mem::forget`) leaks the range and the elements after it instead of exposing elements
/// moved out, as std's `Vec::drain` does.
#[derive(Debug)]
pub(crate) struct VecRange<'a, T> {
    vec: &'a mut Vec<T>,
    start: usize,
    end: usize,
    /// The vector's length before.
    len: usize,
}

// SAFETY: a shared `VecRange` gives no access to anything (it has no methods taking `&self`).
unsafe impl<T: Send> Sync for VecRange<'_, T> {}

impl<'a, T> VecRange<'a, T> {
    /// Splits the elements at `range` (within the vector's length) from `vec`.
    pub(crate) fn split(
        vec: &'a mut Vec<T>,
        range: Range<usize>,
    ) -> (VecRange<'a, T>, RawParts<T>) {
        let len = vec.len();
        assert!(
            range.start <= range.end && range.end <= len,
            "a range within the vector"
        );
        // SAFETY: `range.start <= len`: the elements before stay initialized and the vector
        // owns them; from `range.start` on it neither reads nor drops anything until `drop`
        // gives it a length again.
        unsafe { vec.set_len(range.start) };
        let parts = RawParts {
            // SAFETY: `range.start <= capacity`, so the offset stays within (or one past) the
            // allocation.
            ptr: unsafe { vec.as_mut_ptr().add(range.start) },
            len: range.len(),
            _elements: PhantomData,
        };
        let r = VecRange {
            vec,
            start: range.start,
            end: range.end,
            len,
        };
        (r, parts)
    }
}

impl<T> Drop for VecRange<'_, T> {
    fn drop(&mut self) {
        let tail = self.len - self.end;
        let base = self.vec.as_mut_ptr();
        // SAFETY: whoever held the `RawParts` moved out or dropped every element of the range
        // before this runs (the owners of both drop the elements first), so the range's slots
        // are free; the `tail` elements after it are initialized and owned by no one else, and
        // both runs lie within the allocation (`ptr::copy` allows them to overlap). The vector's
        // new length counts exactly the elements before the range and the moved tail.
        unsafe {
            std::ptr::copy(base.add(self.end), base.add(self.start), tail);
            self.vec.set_len(self.start + tail);
        }
    }
}

/// Slots filled front to back by one member: drops what it filled if it is dropped before
/// [`finish`](Filling::finish) (a panic while the items were being made).
#[derive(Debug)]
pub(crate) struct Filling<'a, T> {
    slots: &'a mut [MaybeUninit<T>],
    filled: usize,
}

impl<'a, T> Filling<'a, T> {
    pub(crate) fn new(slots: &'a mut [MaybeUninit<T>]) -> Self {
        Self { slots, filled: 0 }
    }

    /// Fills the next slot; `false` (and `value` dropped) when every slot is full.
    #[inline]
    pub(crate) fn push(&mut self, value: T) -> bool {
        match self.slots.get_mut(self.filled) {
            Some(slot) => {
                slot.write(value);
                self.filled += 1;
                true
            }
            None => false,
        }
    }

    /// The number of slots filled; from here on their items belong to whoever reads them.
    pub(crate) fn finish(mut self) -> usize {
        std::mem::replace(&mut self.filled, 0)
    }
}

impl<T> Drop for Filling<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the first `filled` slots were written by `push` and nothing else owns them
        // (`finish` hands them over and sets `filled` to 0).
        unsafe { drop_filled(&mut self.slots[..self.filled]) }
    }
}

/// Drops the items in `slots`.
///
/// # Safety
///
/// Every slot holds an initialized item that nothing else will read or drop.
pub(crate) unsafe fn drop_filled<T>(slots: &mut [MaybeUninit<T>]) {
    // SAFETY: initialized and exclusively owned (caller); `MaybeUninit<T>` has `T`'s layout.
    unsafe { std::ptr::drop_in_place(slots as *mut [MaybeUninit<T>] as *mut [T]) }
}
