//! `par_sort*`: a parallel merge sort made of joins on the current runtime, so that its halves
//! run on whichever threads of the pool are free, at any depth of nesting (a sort inside a
//! parallel loop, a `join` or a scope's task is parallel too).
//!
//! # Protocol
//!
//! A slice of `n` elements shorter than two runs of [`MIN_RUN`], of zero-sized elements, or on
//! a runtime of one thread is sorted on the calling thread by std's sort of the same kind
//! (`sort_by` for the stable sorts, `sort_unstable_by` for the others). Otherwise the sort
//! allocates a buffer of `n` elements (rayon's stable sort allocates too; its unstable sort does
//! not) and sorts by steps, each step a range of the slice and a *destination* (the slice or
//! the buffer; the slice for the whole range):
//!
//! - The slice is halved `depth` times, the same number on every path, down to *leaves* of
//!   at least `max(MIN_RUN, n / (LEAVES_PER_THREAD * threads))` elements. A leaf is sorted in
//!   place by std's sort of the call's kind, then copied to the buffer if that is its
//!   destination.
//! - A step above the leaves sorts its two halves as a join, each into the *other* side than
//!   its own destination, then merges them from there into its destination.
//! - A merge of `len` outputs is cut at output `len / 2` by a binary search along the merge
//!   path (how many of the left half's elements come first: `co_rank`), and its two parts
//!   merged as a join, down to parts of fewer than two runs of [`MIN_RUN`], which are merged
//!   in order. Equal elements are taken from the left half first, so the merges are stable and
//!   a stable leaf sort makes a stable sort.
//!
//! The joins are `asat_core::join_coarse`: a step's halves take long, so the second is offered
//! to the pool's other threads at once rather than at the calling thread's beat.
//!
//! A join's two sides get disjoint ranges, and the step that made it touches its range again
//! only after both are done, so each element is accessed by one thread at a time and
//! `T: Send` is enough, as in rayon; the comparator is shared (`Sync`).
//!
//! # Panics
//!
//! The comparator may panic (and a comparator that is not a total order may give any answers):
//! the slice then holds a **permutation** of its elements, each once, none lost or duplicated
//! (which matters for types with `Drop`), and the panic propagates; that is what std's sorts
//! guarantee, and rayon's. A comparator that is not a total order gives an unspecified order
//! and no panic, as rayon's: std's sorts, which sort the leaves, may panic when they find one
//! (their docs say so); that panic, told by its message, is caught, and the leaf is sorted
//! again by a merge sort of positions that no answer makes panic (`sort_any_order`); the
//! panic's message still reaches the panic hook (stderr by default).
//!
//! What makes that hold: a step starts with its elements in the slice, and either returns with
//! them sorted in its destination or unwinds with them in the slice. A leaf: std's sort leaves
//! a permutation when it panics. A step above: each half runs under `catch_unwind`, so both
//! finish; if one panicked, the other's elements are copied back from the buffer if they went
//! there, and the panic is raised again. A merge *copies* elements (bitwise) and the side it
//! reads keeps them all until it is over, so when a merge panics its elements are copied back
//! from the buffer if that is what it read. The buffer never drops what it holds. Cuts stay
//! within their halves whatever the comparator answers, so parts never overlap.

use std::cmp::Ordering;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use asat_core::Runtime;

mod merge;

use merge::{co_rank, merge, Arrays, Side};

/// The shortest leaf, and the shortest part of a merge that is cut in two: a slice shorter
/// than two of these is sorted on the calling thread.
pub const MIN_RUN: usize = 1024;

/// How many leaves a sort has per thread of its pool, unless they would be shorter than
/// [`MIN_RUN`]: more than one lets a thread that is quicker (or free sooner) take more of the
/// sort; fewer leave more of the work to std's sort, which is faster than the merges (4 were
/// 5-10% slower than 2 for 4 M integers on 2 threads).
const LEAVES_PER_THREAD: usize = 2;

/// Which of std's sorts sorts a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Stable,
    Unstable,
}

/// Sorts `v` by `cmp`: see the [module docs](self).
pub(crate) fn sort_by<T, F>(v: &mut [T], kind: Kind, cmp: &F)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    sort_with(v, kind, cmp, MIN_RUN);
}

/// [`sort_by`] with leaves and merge parts of at least `min_run` elements (small in unit
/// tests).
pub(crate) fn sort_with<T, F>(v: &mut [T], kind: Kind, cmp: &F, min_run: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let n = v.len();
    let min_run = min_run.max(1);
    Runtime::with_current(|rt| {
        if n / min_run < 2 || std::mem::size_of::<T>() == 0 || rt.max_threads() == 1 {
            return rt.alone(|| sort_run(v, kind, cmp));
        }
        let depth = depth(n, min_run, rt.max_threads());
        let mut buf = Vec::with_capacity(n);
        let sort = MergeSort {
            arrays: Arrays::new(v, &mut buf),
            kind,
            cmp,
            min_run,
        };
        sort.step(0..n, depth, Side::Slice);
    });
}

/// How many times a sort of `n` elements (at least `2 * min_run`) on a pool of `threads`
/// halves the slice: leaves of at least `min_run` elements and of about
/// `n / (LEAVES_PER_THREAD * threads)`, at least one halving.
fn depth(n: usize, min_run: usize, threads: usize) -> u32 {
    let leaf = min_run.max(n / LEAVES_PER_THREAD.saturating_mul(threads).max(1));
    (n / leaf).max(2).ilog2()
}

/// Sorts a run with std's sort of `kind`. std's sorts may panic when they find that `cmp` is
/// not a total order (rayon's never do); such a panic, told by its message, is caught and the
/// run, which std leaves a permutation of its elements, is sorted again by [`sort_any_order`].
/// Any other panic (`cmp`'s own) propagates. The comparator goes to std's sort as it is: a
/// guard around each call to tell `cmp`'s panics apart cost 1.6-2x the time of a sort of
/// integers (it kept std's comparisons from being inlined).
fn sort_run<T, F: Fn(&T, &T) -> Ordering>(v: &mut [T], kind: Kind, cmp: &F) {
    let sorted = catch_unwind(AssertUnwindSafe(|| match kind {
        Kind::Stable => v.sort_by(cmp),
        Kind::Unstable => v.sort_unstable_by(cmp),
    }));
    match sorted {
        Ok(()) => {}
        Err(p) if is_total_order_panic(&*p) => sort_any_order(v, cmp),
        Err(p) => resume_unwind(p),
    }
}

/// Whether a panic's payload is std's sorts' report of a comparator that is not a total order
/// ("user-provided comparison function does not correctly implement a total order").
fn is_total_order_panic(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    text.is_some_and(|t| t.contains("does not correctly implement a total order"))
}

/// A stable sort that no answer of `cmp` makes panic: a merge sort of the positions, then the
/// elements moved along the permutation's cycles (no `cmp` call while elements move, so a
/// panic of `cmp` leaves `v` as it was). Slower than std's; for comparators that are not a
/// total order, whose result is any order.
fn sort_any_order<T, F: Fn(&T, &T) -> Ordering>(v: &mut [T], cmp: &F) {
    let n = v.len();
    let mut at: Vec<usize> = (0..n).collect();
    let mut next = vec![0; n];
    let mut width = 1;
    while width < n {
        for lo in (0..n).step_by(2 * width) {
            let (mid, hi) = ((lo + width).min(n), (lo + 2 * width).min(n));
            let (mut i, mut j) = (lo, mid);
            for slot in &mut next[lo..hi] {
                let left = j == hi || i < mid && cmp(&v[at[j]], &v[at[i]]) != Ordering::Less;
                if left {
                    *slot = at[i];
                    i += 1;
                } else {
                    *slot = at[j];
                    j += 1;
                }
            }
        }
        std::mem::swap(&mut at, &mut next);
        width *= 2;
    }
    // `at[k]`: where the element that goes to `k` is now.
    for start in 0..n {
        let mut k = start;
        while at[k] != start {
            let from = at[k];
            v.swap(k, from);
            at[k] = k;
            k = from;
        }
        at[k] = k;
    }
}

/// What the steps of one sort share.
struct MergeSort<'a, T, F> {
    arrays: Arrays<'a, T>,
    kind: Kind,
    cmp: &'a F,
    min_run: usize,
}

impl<T, F> MergeSort<'_, T, F>
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    fn is_less(&self) -> impl Fn(&T, &T) -> bool + '_ {
        |a, b| (self.cmp)(a, b) == Ordering::Less
    }

    /// Sorts the elements at `r`, which the slice holds, into `to`, halving `depth` more
    /// times; unwinds with them in the slice (module docs).
    fn step(&self, r: Range<usize>, depth: u32, to: Side) {
        if depth == 0 {
            // SAFETY: the slice holds the elements at `r`, this step's alone.
            let leaf = unsafe { self.arrays.run_mut(r.clone()) };
            sort_run(leaf, self.kind, self.cmp);
            if to == Side::Buffer {
                // SAFETY: as above; the buffer's slots at `r` hold nothing.
                unsafe { self.arrays.copy(Side::Slice, r) };
            }
            return;
        }
        let from = to.other();
        let mid = r.start + r.len() / 2;
        let (left, right) = (r.start..mid, mid..r.end);
        let half =
            |h: Range<usize>| catch_unwind(AssertUnwindSafe(|| self.step(h, depth - 1, from)));
        let (a, b) = asat_core::join_coarse(|| half(left.clone()), || half(right.clone()));
        let panic = match (a, b) {
            (Ok(()), Ok(())) => None,
            (Err(p), Ok(())) => Some((p, Some(right.clone()))),
            (Ok(()), Err(p)) => Some((p, Some(left.clone()))),
            (Err(p), Err(_)) => Some((p, None)),
        };
        if let Some((p, done)) = panic {
            if let (Some(h), Side::Buffer) = (done, from) {
                // SAFETY: that half returned, so the buffer holds its elements; both halves
                // are over.
                unsafe { self.arrays.copy(Side::Buffer, h) };
            }
            resume_unwind(p);
        }
        let merged = catch_unwind(AssertUnwindSafe(|| self.merge(from, left, right, r.start)));
        if let Err(p) = merged {
            if from == Side::Buffer {
                // SAFETY: a merge only copies, so the buffer still holds the elements at `r`;
                // every part of the merge is over.
                unsafe { self.arrays.copy(Side::Buffer, r) };
            }
            resume_unwind(p);
        }
    }

    /// Merges the sorted halves at `a` and `b` of side `from` into the other side at
    /// `at..at + a.len() + b.len()`, in parts cut along the merge path (module docs).
    fn merge(&self, from: Side, a: Range<usize>, b: Range<usize>, at: usize) {
        let len = a.len() + b.len();
        let is_less = self.is_less();
        // SAFETY: this merge's elements are in `from` and its alone, and so are its output
        // slots (the parts of a cut merge get disjoint ranges of both).
        let (sa, sb) = unsafe {
            (
                self.arrays.elements(from, a.clone()),
                self.arrays.elements(from, b.clone()),
            )
        };
        if len < 2 * self.min_run {
            // SAFETY: as above; the copies are accounted for by the protocol (module docs).
            unsafe {
                merge(
                    sa,
                    sb,
                    self.arrays.slots(from.other(), at..at + len),
                    &is_less,
                )
            };
            return;
        }
        let d = len / 2;
        let i = co_rank(
            sa,
            sb,
            d,
            d.saturating_sub(sb.len()),
            d.min(sa.len()),
            &is_less,
        );
        let (a0, b0) = (a.start + i, b.start + (d - i));
        asat_core::join_coarse(
            || self.merge(from, a.start..a0, b.start..b0, at),
            || self.merge(from, a0..a.end, b0..b.end, at + d),
        );
    }
}

#[cfg(test)]
mod tests;
