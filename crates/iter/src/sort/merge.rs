//! The unsafe core of the parallel merge sort: the two arrays (the slice and a buffer of its
//! length) that merge passes copy elements between, where a pass's cuts fall, and the merge.
//! See the [parent module](super) for the protocol that makes the accesses exclusive.

use std::mem::MaybeUninit;
use std::ops::Range;

use crate::raw::RawSlice;

/// The slice being sorted and a buffer of the same length, both viewed as slots: merge pass
/// `k` reads its *source* (the slice for even `k`, the buffer for odd `k`) and writes its
/// *destination* (the other one).
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

    pub(super) fn len(&self) -> usize {
        self.v.len()
    }

    /// The elements of the slice at `r`, for an in-place sort.
    ///
    /// # Safety
    ///
    /// `r` is within `0..len`, the slice holds the live elements there (no pass has run), and
    /// nothing else accesses them meanwhile.
    pub(super) unsafe fn run_mut(&self, r: Range<usize>) -> &'a mut [T] {
        // SAFETY: exclusive (caller), and initialized, so the slots are `T`s.
        unsafe { assume_init_mut(self.v.slice_mut(r)) }
    }

    /// The elements of pass `pass`'s source at `r`.
    ///
    /// # Safety
    ///
    /// `r` is within `0..len`, pass `pass`'s source holds the live elements there, and no
    /// other thread accesses them meanwhile (elements need not be `Sync`).
    pub(super) unsafe fn src(&self, pass: usize, r: Range<usize>) -> &'a [T] {
        let src = if pass % 2 == 0 { &self.v } else { &self.buf };
        // SAFETY: exclusive and initialized (caller).
        unsafe { assume_init_mut(src.slice_mut(r)) }
    }

    /// The slots of pass `pass`'s destination at `r`.
    ///
    /// # Safety
    ///
    /// `r` is within `0..len`, and no other reference covers these slots meanwhile.
    pub(super) unsafe fn dst(&self, pass: usize, r: Range<usize>) -> &'a mut [MaybeUninit<T>] {
        let dst = if pass % 2 == 0 { &self.buf } else { &self.v };
        // SAFETY: exclusive (caller); slots may be written whatever they hold.
        unsafe { dst.slice_mut(r) }
    }

    /// Copies the buffer's slots at `r` back into the slice.
    ///
    /// # Safety
    ///
    /// `r` is within `0..len`, the buffer holds the live elements there (the slice's slots are
    /// stale copies or already moved on), and nothing else accesses either meanwhile.
    pub(super) unsafe fn copy_back(&self, r: Range<usize>) {
        // SAFETY: exclusive (caller); after the copy the slice's slots own the elements and
        // the buffer's are forgotten (it never drops them).
        unsafe {
            let from = self.buf.slice_mut(r.clone());
            let to = self.v.slice_mut(r);
            std::ptr::copy_nonoverlapping(from.as_ptr(), to.as_mut_ptr(), to.len());
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

/// Where a merge's output is cut: the first `a - a_start` elements of its left run and
/// `b - b_start` of its right run come before the cut (absolute indices in the arrays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cut {
    pub(super) a: usize,
    pub(super) b: usize,
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
    let (mut i, mut j, mut o) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let x = if is_less(&b[j], &a[i]) {
            j += 1;
            &b[j - 1]
        } else {
            i += 1;
            &a[i - 1]
        };
        // SAFETY: a bitwise copy of an element, whose ownership the caller accounts for.
        out[o].write(unsafe { std::ptr::read(x) });
        o += 1;
    }
    for x in a[i..].iter().chain(&b[j..]) {
        // SAFETY: as above.
        out[o].write(unsafe { std::ptr::read(x) });
        o += 1;
    }
}
