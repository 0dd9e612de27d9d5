//! The unsafe core of the parallel merge sort: the two arrays (the slice and a buffer of its
//! length) that merges copy elements between, where a merge is cut, and the merge.
//! See the [parent module](super) for the protocol that makes the accesses exclusive.

use std::mem::MaybeUninit;
use std::ops::Range;

use crate::internal::raw::RawSlice;

/// The slice being sorted and a buffer of the same length, both viewed as slots: a merge reads
/// its halves from one side and writes the other.
#[derive(Debug)]
pub(super) struct Arrays<'a, T> {
    v: RawSlice<'a, MaybeUninit<T>>,
    buf: RawSlice<'a, MaybeUninit<T>>,
}

impl<'a, T> Arrays<'a, T> {
    /// `v` and the spare capacity of `buf`, which must hold at least `v.len()` elements.
    ///
    /// The buffer's slots are never dropped (the vector keeps length 0); the slice's must hold
    /// every element once when the sort returns or unwinds, which the protocol ensures.
    pub(super) fn new(v: &'a mut [T], buf: &'a mut Vec<T>) -> Self {
        let n = v.len();
        assert!(buf.capacity() - buf.len() >= n, "sort buffer too small");
        // SAFETY: `MaybeUninit<T>` has `T`'s layout, and every slot is initialized now. Slots
        // are only ever written with bitwise copies of elements, and the protocol leaves each
        // element in exactly one slot of `v` at the end, so `v` is initialized again when the
        // borrow ends.
        let slots = unsafe { &mut *(v as *mut [T] as *mut [MaybeUninit<T>]) };
        Self {
            v: RawSlice::new(slots),
            buf: RawSlice::new(&mut buf.spare_capacity_mut()[..n]),
        }
    }

    /// The elements of the slice at `r`, for an in-place sort.
    ///
    /// # Safety
    ///
    /// `r` is within `0..len`, the slice holds the live elements there, and
    /// nothing else accesses them meanwhile.
    pub(super) unsafe fn run_mut(&self, r: Range<usize>) -> &'a mut [T] {
        // SAFETY: exclusive (caller), and initialized, so the slots are `T`s.
        unsafe { assume_init_mut(self.v.slice_mut(r)) }
    }

    /// The elements that `side` holds at `r`.
    ///
    /// # Safety
    ///
    /// `r` is within `0..len`, `side` holds the live elements there, and no other thread
    /// accesses them meanwhile (elements need not be `Sync`).
    pub(super) unsafe fn elements(&self, side: Side, r: Range<usize>) -> &'a [T] {
        // SAFETY: exclusive and initialized (caller).
        unsafe { assume_init_mut(self.side(side).slice_mut(r)) }
    }

    /// The slots of `side` at `r`, to be written.
    ///
    /// # Safety
    ///
    /// `r` is within `0..len`, and no other reference covers these slots meanwhile.
    pub(super) unsafe fn slots(&self, side: Side, r: Range<usize>) -> &'a mut [MaybeUninit<T>] {
        // SAFETY: exclusive (caller); slots may be written whatever they hold.
        unsafe { self.side(side).slice_mut(r) }
    }

    /// Copies the slots of `from` at `r` to the other side, which owns the elements
    /// afterwards.
    ///
    /// # Safety
    ///
    /// `r` is within `0..len`, `from` holds the live elements there (the other side's slots
    /// are stale copies or empty), and nothing else accesses either meanwhile.
    pub(super) unsafe fn copy(&self, from: Side, r: Range<usize>) {
        // SAFETY: exclusive (caller); after the copy the other side's slots own the elements
        // and `from`'s are forgotten (the buffer never drops what it holds; the slice's are
        // overwritten before the sort ends, see the protocol).
        unsafe {
            let src = self.side(from).slice_mut(r.clone());
            let dst = self.side(from.other()).slice_mut(r);
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst.as_mut_ptr(), dst.len());
        }
    }

    fn side(&self, side: Side) -> &RawSlice<'a, MaybeUninit<T>> {
        match side {
            Side::Slice => &self.v,
            Side::Buffer => &self.buf,
        }
    }
}

/// One of a sort's two arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    /// The slice being sorted.
    Slice,
    /// The buffer of its length.
    Buffer,
}

impl Side {
    pub(super) fn other(self) -> Self {
        match self {
            Side::Slice => Side::Buffer,
            Side::Buffer => Side::Slice,
        }
    }
}

/// Views initialized slots as elements.
///
/// # Safety
///
/// Every slot holds an initialized `T`.
unsafe fn assume_init_mut<T>(slots: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: same layout; initialized (caller).
    unsafe { &mut *(slots as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// How many of `a`'s elements are among the first `d` outputs of the stable merge of `a` and
/// `b` (the merge path's "co-rank"), searched within `lo..=hi`: a binary search for the
/// smallest `i` such that `a[i]` does not belong before `b[d - i - 1]`.
///
/// With a comparator that is a total order the answer lies in `lo..=hi` whenever that interval
/// holds the true one. Whatever the comparator does (inconsistent answers included), the result
/// is in `lo..=hi`, which is all the sort's memory safety relies on.
///
/// The caller keeps `lo <= hi`, `hi <= a.len()`, `hi <= d` and `d - lo <= b.len()`, so every
/// index read is in bounds.
pub(super) fn co_rank<T>(
    a: &[T],
    b: &[T],
    d: usize,
    mut lo: usize,
    mut hi: usize,
    is_less: &impl Fn(&T, &T) -> bool,
) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // mid < hi <= a.len(), and d - mid > d - hi >= 0, d - mid <= d - lo <= b.len().
        if is_less(&b[d - mid - 1], &a[mid]) {
            // b[d - mid - 1] precedes a[mid]: a[mid] is not among the first d.
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Merges the sorted runs `a` and `b` into `out` (`a.len() + b.len()` slots), taking from `b`
/// only when its element is less than `a`'s, so that equal elements keep their order.
///
/// # Safety
///
/// `out` gets bitwise copies of the elements: the caller treats those copies as the elements
/// from now on and `a`'s and `b`'s as moved out (never dropped or used again), or else discards
/// the copies in `out` (never drops them), as when `is_less` panics part way.
pub(super) unsafe fn merge<T>(
    a: &[T],
    b: &[T],
    out: &mut [MaybeUninit<T>],
    is_less: &impl Fn(&T, &T) -> bool,
) {
    assert_eq!(
        out.len(),
        a.len() + b.len(),
        "merge: output of the wrong length"
    );
    let (na, nb) = (a.len(), b.len());
    let (pa, pb, po) = (a.as_ptr(), b.as_ptr(), out.as_mut_ptr().cast::<T>());
    let (mut i, mut j) = (0, 0);
    // Without branches on the comparison's answer (random data would mispredict half of
    // them): both indices move by the answer.
    while i < na && j < nb {
        // SAFETY: `i < na` and `j < nb`, so both reads are in bounds, and `i + j < out.len()`;
        // the write is a bitwise copy of an element, whose ownership the caller accounts for.
        unsafe {
            let take_b = is_less(&*pb.add(j), &*pa.add(i));
            let x = if take_b { pb.add(j) } else { pa.add(i) };
            std::ptr::copy_nonoverlapping(x, po.add(i + j), 1);
            i += usize::from(!take_b);
            j += usize::from(take_b);
        }
    }
    // SAFETY: the rest of one side goes to the end of `out` (in bounds by the lengths), as
    // bitwise copies, as above.
    unsafe {
        std::ptr::copy_nonoverlapping(pa.add(i), po.add(i + j), na - i);
        std::ptr::copy_nonoverlapping(pb.add(j), po.add(na + j), nb - j);
    }
}
