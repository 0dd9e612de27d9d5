//! The searches: `any` (and `all`), `find_any`, `find_first`, `find_last`.
//!
//! `any` and `find_any` share a flag per call: once a member has found a hit, every member stops
//! before its next item. `find_first` shares the first index of the earliest range in which a
//! hit was found: a range stops at its own first hit, and before each item once an earlier
//! range has one (its hits can no longer be the first). `find_last` likewise shares the first
//! index of the latest range with a hit: a range stops before each item once a later range has
//! one. The hit of lowest, or highest, index is kept. A call run in rounds (see
//! [`blocks`](crate::blocks)) runs no round after the one that found a hit, except for
//! `find_last`, whose rounds go forward.
//!
//! The looks at the shared index cost one relaxed load per item, about a cycle: nothing beside
//! a predicate that does some work, but `position_first` of `black_box(i) == at` over a range,
//! whose items cost about a cycle each, takes 1.4-1.6x the time it took without them when a
//! member must look through its whole range (looking every 64 items instead was measured as
//! no cheaper: counting costs as much as the load). Without them a member went on to the end
//! of its range after an earlier one had found the answer: with the hit at index 10^6 of 10^8
//! on two members, 19-20 ms against 0.5-0.6 ms with them (`examples/iter_search.rs`,
//! BENCHMARKS.md).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::drive;
use crate::plumbing::Producer;

/// Whether `pred` is true for some item of `p`.
pub(crate) fn any<P, F>(p: &P, pred: F) -> bool
where
    P: Producer,
    F: Fn(P::Item) -> bool + Sync,
{
    let found = AtomicBool::new(false);
    drive::run_until(
        p,
        |_, mut items| {
            if items.any(|x| found.load(Ordering::Relaxed) || pred(x)) {
                found.store(true, Ordering::Relaxed);
            }
        },
        || found.load(Ordering::Relaxed),
    );
    found.into_inner()
}

/// Some item of `p` for which `pred` is true.
pub(crate) fn find_any<P, F>(p: &P, pred: F) -> Option<P::Item>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync,
{
    let found = AtomicBool::new(false);
    drive::reduce_until(
        p,
        || None,
        |acc, _, mut items| {
            acc.or_else(|| {
                let hit = items
                    .by_ref()
                    .take_while(|_| !found.load(Ordering::Relaxed))
                    .find(|x| pred(x));
                if hit.is_some() {
                    found.store(true, Ordering::Relaxed);
                }
                hit
            })
        },
        |a, b| a.or(b),
        Option::is_some,
    )
}

/// The first item of `p` for which `pred` is true.
pub(crate) fn find_first<P, F>(p: &P, pred: F) -> Option<P::Item>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync,
{
    // The first index of the earliest range with a hit (`usize::MAX`: none yet).
    let earliest = AtomicUsize::new(usize::MAX);
    drive::reduce_until(
        p,
        || None,
        |acc, range, items| {
            // A hit in this accumulator's earlier ranges comes first.
            acc.or_else(|| {
                let start = range.start;
                let hit = { items }
                    .take_while(|_| earliest.load(Ordering::Relaxed) > start)
                    .find(|x| pred(x));
                if hit.is_some() {
                    earliest.fetch_min(start, Ordering::Relaxed);
                }
                hit
            })
        },
        |a, b| a.or(b),
        Option::is_some,
    )
}

/// The last item of `p` for which `pred` is true.
pub(crate) fn find_last<P, F>(p: &P, pred: F) -> Option<P::Item>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync,
{
    // One past the first index of the latest range with a hit (0: none yet).
    let latest = AtomicUsize::new(0);
    drive::reduce_until(
        p,
        || None,
        |acc, range, items| {
            let start = range.start;
            let mut hit = None;
            for x in items {
                if latest.load(Ordering::Relaxed) > start + 1 {
                    break;
                }
                if pred(&x) {
                    if hit.is_none() {
                        latest.fetch_max(start + 1, Ordering::Relaxed);
                    }
                    hit = Some(x);
                }
            }
            // This range comes after the accumulator's earlier ones.
            hit.or(acc)
        },
        |a, b| b.or(a),
        |_| false,
    )
}
