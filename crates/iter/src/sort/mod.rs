//! `par_sort*`: a parallel merge sort, one region of the current runtime per call.
//!
//! # Protocol
//!
//! A slice of `n` elements shorter than two runs of [`MIN_RUN`], a runtime of one thread, or a
//! call made inside a region is sorted on the calling thread by std's sort of the same kind
//! (`sort_by` for the stable sorts, `sort_unstable_by` for the others). Otherwise the sort
//! allocates a buffer of `n` elements (rayon's stable sort allocates too; its unstable sort does
//! not) and runs one region, whose team of `p` members (the policy's choice) goes through these
//! steps, a team barrier after each:
//!
//! 1. **Runs.** The slice is cut into `r = min(p, n / MIN_RUN)` runs of balanced lengths, and
//!    member `m < r` sorts run `m` in place with std's sort of the call's kind.
//! 2. **Merge passes**, `ceil(log2 r)` of them. Pass `k` merges groups of `2^(k+1)` runs,
//!    each group's left half (already merged) with its right half (a lone half is copied), from
//!    the pass's *source* array to its *destination*: the slice and the buffer take turns (pass
//!    0 reads the slice). The output positions `0..n` are cut into `p` equal pieces, one per
//!    member. Member 0 first finds, for each cut, how many elements of the two halves it
//!    divides come before it (a binary search along the merge path) and publishes the cuts;
//!    after a barrier each member merges its piece; a barrier ends the pass. Equal elements
//!    are taken from the left half first, so the merges are stable and a stable run sort makes
//!    a stable sort.
//! 3. If the last pass wrote the buffer, each member copies its piece back to the slice.
//!
//! Between two barriers each element is accessed by one member only (its run, member 0's
//! search, a member's piece), so `T: Send` is enough, as in rayon; the comparator is shared
//! (`Sync`).
//!
//! # Panics
//!
//! The comparator may panic (and a comparator that is not a total order may give any answers):
//! the slice then holds a **permutation** of its elements, each once, none lost or duplicated
//! (which matters for types with `Drop`), and the panic propagates; that is what std's sorts
//! guarantee, and rayon's. A comparator that is not a total order gives an unspecified order
//! and no panic, as rayon's: std's sorts, which sort the runs, may panic when they find one
//! (their docs say so); that panic, told by its message, is caught, and the run is sorted
//! again by a merge sort of positions that no answer makes panic (`sort_any_order`); the
//! panic's message still reaches the panic hook (stderr by default). Here: a merge *copies*
//! elements (bitwise) into the destination, and the source keeps them all until the pass is
//! over, so the source of the running pass always holds every element once. Member 0 records
//! the pass before the pass's first comparison. If a member panics, the others unwind at the
//! next barrier; once the team has stopped, the calling thread copies the buffer into the
//! slice if the buffer was that source, and re-raises the panic. The buffer never drops what
//! it holds. Cuts are clamped so that pieces never overlap, whatever the comparator answers.

use std::cmp::Ordering;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering as MemOrdering};
use std::sync::Mutex;

use asat_core::{Runtime, Team};

mod merge;

use merge::{co_rank, merge, Arrays, Cut};

/// The shortest run a member sorts on its own: a slice shorter than two of these is sorted on
/// the calling thread.
pub const MIN_RUN: usize = 1024;

/// Which of std's sorts sorts a run.
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

/// [`sort_by`] with runs of at least `min_run` elements (small in unit tests).
pub(crate) fn sort_with<T, F>(v: &mut [T], kind: Kind, cmp: &F, min_run: usize)
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    let n = v.len();
    let min_run = min_run.max(1);
    Runtime::with_current(|rt| {
        if n / min_run < 2
            || std::mem::size_of::<T>() == 0
            || rt.max_threads() == 1
            || asat_core::current_thread_index().is_some()
        {
            return rt.alone(|| sort_run(v, kind, cmp));
        }
        let mut buf = Vec::with_capacity(n);
        let sort = MergeSort {
            arrays: Arrays::new(v, &mut buf),
            kind,
            cmp,
            min_run,
            pass: AtomicUsize::new(0),
            cuts: Mutex::new(Vec::new()),
        };
        let ran = catch_unwind(AssertUnwindSafe(|| rt.region(|team| sort.member(team))));
        if let Err(p) = ran {
            // The team has stopped (the region re-raises only after its join).
            let pass = sort.pass.load(MemOrdering::Relaxed);
            if pass % 2 == 1 {
                // SAFETY: pass `pass` read the buffer, which holds every element once (see
                // the module docs), and no member runs any more.
                unsafe { sort.arrays.copy_back(0..n) };
            }
            resume_unwind(p);
        }
    });
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

/// `k * n / parts`, without overflow.
fn part(n: usize, k: usize, parts: usize) -> usize {
    (n as u128 * k as u128 / parts as u128) as usize
}

/// What the members of a sort's region share.
struct MergeSort<'a, T, F> {
    arrays: Arrays<'a, T>,
    kind: Kind,
    cmp: &'a F,
    min_run: usize,
    /// The merge pass under way (0 before the first): its source holds every element.
    pass: AtomicUsize,
    /// The pass's cuts at output positions `part(n, k, p)`, `k = 1..p`, from member 0.
    cuts: Mutex<Vec<Cut>>,
}

/// The merge groups of one pass: runs `2gw .. 2gw + w` (left) and `2gw + w .. 2gw + 2w`
/// (right) for group `g` and width `w`.
#[derive(Clone, Copy)]
struct Groups {
    n: usize,
    runs: usize,
    width: usize,
}

impl Groups {
    fn count(&self) -> usize {
        self.runs.div_ceil(2 * self.width)
    }

    /// Group `g`'s start, the end of its left half and its end.
    fn bounds(&self, g: usize) -> (usize, usize, usize) {
        let at = |run: usize| part(self.n, run.min(self.runs), self.runs);
        let first = 2 * g * self.width;
        (
            at(first),
            at(first + self.width),
            at(first + 2 * self.width),
        )
    }
}

impl<T, F> MergeSort<'_, T, F>
where
    T: Send,
    F: Fn(&T, &T) -> Ordering + Sync,
{
    fn is_less(&self) -> impl Fn(&T, &T) -> bool + '_ {
        |a, b| (self.cmp)(a, b) == Ordering::Less
    }

    /// One member's part of the protocol (module docs).
    fn member(&self, team: &Team<'_>) {
        let (n, p, m) = (self.arrays.len(), team.size(), team.index());
        let runs = (n / self.min_run).clamp(1, p);
        if m < runs {
            // SAFETY: run `m` is this member's alone until the barrier, and the slice holds
            // the elements (no pass has run).
            let run = unsafe { self.arrays.run_mut(part(n, m, runs)..part(n, m + 1, runs)) };
            sort_run(run, self.kind, self.cmp);
        }
        team.barrier();
        let (lo, hi) = (part(n, m, p), part(n, m + 1, p));
        let mut pass = 0;
        let mut width = 1;
        while width < runs {
            let groups = Groups { n, runs, width };
            if m == 0 {
                self.pass.store(pass, MemOrdering::Relaxed);
                let cuts = self.find_cuts(groups, pass, p);
                *lock(&self.cuts) = cuts;
            }
            team.barrier();
            if lo < hi {
                let cuts = lock(&self.cuts);
                let (first, last) = (m.checked_sub(1).map(|k| cuts[k]), cuts.get(m).copied());
                drop(cuts);
                self.merge_piece(groups, pass, lo..hi, first, last);
            }
            team.barrier();
            pass += 1;
            width *= 2;
        }
        if pass % 2 == 1 && lo < hi {
            // SAFETY: the last pass wrote the buffer, which holds every element; this piece
            // is this member's alone.
            unsafe { self.arrays.copy_back(lo..hi) };
        }
    }

    /// The cuts at output positions `part(n, k, p)` for `k = 1..p`, in order; each cut is
    /// clamped so as not to go back from the previous one in the same group.
    fn find_cuts(&self, groups: Groups, pass: usize, p: usize) -> Vec<Cut> {
        let n = self.arrays.len();
        let is_less = self.is_less();
        let mut cuts = Vec::with_capacity(p - 1);
        let mut g = 0;
        // The previous cut in group `g`: its output position and its left-run count.
        let mut prev = (0, 0);
        for k in 1..p {
            let d = part(n, k, p);
            let (mut s, mut mid, mut e) = groups.bounds(g);
            while d >= e && g + 1 < groups.count() {
                g += 1;
                (s, mid, e) = groups.bounds(g);
                prev = (0, 0);
            }
            let (na, nb) = (mid - s, e - mid);
            let da = d - s;
            let (pd, pa) = prev;
            let lo = pa.max(da.saturating_sub(nb));
            let hi = da.min(na).min(pa + (da - pd));
            // SAFETY: member 0 alone reads the source while the others wait at the barrier;
            // the source holds the elements (the previous pass is over).
            let (a, b) = unsafe { (self.arrays.src(pass, s..mid), self.arrays.src(pass, mid..e)) };
            let ia = co_rank(a, b, da, lo, hi, &is_less);
            prev = (da, ia);
            cuts.push(Cut {
                a: s + ia,
                b: mid + (da - ia),
            });
        }
        cuts
    }

    /// Merges output positions `out` of this pass, whose first and last cuts inside a group are
    /// `first` (at `out.start`) and `last` (at `out.end`).
    fn merge_piece(
        &self,
        groups: Groups,
        pass: usize,
        out: std::ops::Range<usize>,
        first: Option<Cut>,
        last: Option<Cut>,
    ) {
        let is_less = self.is_less();
        for g in 0..groups.count() {
            let (s, mid, e) = groups.bounds(g);
            if e <= out.start || s >= out.end {
                continue;
            }
            let from = match first {
                Some(c) if out.start > s => c,
                _ => Cut { a: s, b: mid },
            };
            let to = match last {
                Some(c) if out.end < e => c,
                _ => Cut { a: mid, b: e },
            };
            let at = from.a + from.b - mid;
            let len = (to.a - from.a) + (to.b - from.b);
            // SAFETY: the cuts of a pass are ordered within a group, so the pieces' source
            // ranges and output ranges are disjoint: this member alone accesses them until
            // the barrier. The source holds the elements; the copies are accounted for by the
            // protocol (module docs).
            unsafe {
                let a = self.arrays.src(pass, from.a..to.a);
                let b = self.arrays.src(pass, from.b..to.b);
                merge(a, b, self.arrays.dst(pass, at..at + len), &is_less);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
