//! The searches: `any` (and `all`), `find_any`, `find_first`, `find_last`.
//!
//! `any` and `find_any` share a flag per call: once a member has found a hit, every member stops
//! before its next item. `find_first` shares the first index of the earliest range in which a
//! hit was found: a range stops at its own first hit, and before each item once an earlier
//! range has one (its hits can no longer be the first). The hit of lowest index is kept. A
//! call run in rounds (see [`blocks`](crate::blocks)) runs no round after the one that found a
//! hit.
//!
//! `find_last` is `find_first` over the index space turned around: the ranges are handed out
//! from the end (under the static schedule member 0 takes the last run of blocks; under the
//! others the first pieces are the last; rounds go back from the end), and each range is
//! looked through from its end, as `rfind` would, in pieces of 1, 2, 4, ... indices going back
//! (of `with_min_len`, twice as many, ... after a `fold`; each piece's items in index order,
//! from [`Producer::seq`]), stopping after the first piece with a hit, whose last hit is the
//! range's last. So a hit near the end of
//! `(0..10u64.pow(12)).into_par_iter()` is found after a few items, as rayon's splits find it,
//! instead of after half the range; where a range has no hit it costs log2 of its length more
//! `seq` calls (and as many of a `map_init`'s `init` calls, which are per range).
//!
//! Under a schedule that deals pieces (`with_max_len`, `with_schedule`), no piece goes out
//! once a search has its answer (for `find_first`, every piece not yet dealt lies after the
//! pieces dealt: the dealing goes in index order), through asat-core's
//! [`parallel_reduce_until`](asat_core::Runtime::parallel_reduce_until): before, a member
//! that found the answer in the first pieces of `with_max_len(1)` over 10^7 items still took
//! every piece left, a second for a hit at index 10 (`examples/iter_search.rs --max-len`).
//! `any` and `find_any` deal dynamic pieces from as many places as the pool has threads,
//! each going forward (`drive::Order::Spread`), as rayon's halving splits
//! send a second thread to the far half at once: with hits only in the second half of
//! `with_max_len(1000)` pieces, they look at a few pieces' items before a hit where in index
//! order they looked through the first half; a hit near the start is found as soon.
//!
//! Each range's items are read with [`Producer::seq_until`] under the call's [`Stop`], so the
//! adapters that drop items (`filter`, `filter_map`, `flat_map`, `flat_map_iter`,
//! `positions`, `skip_any`, `skip_any_while`) ask it before each item of their bases too, as
//! rayon's consumers do: before,
//! `(0..n).into_par_iter().filter(|x| *x > n / 2).find_any(..)` on two members went on through
//! the first member's half after the second had its answer (see [`Stop`]). They ask it inside
//! their bases' own loops (a `filter`'s `next` is its base's `find`), which keeps the cost to
//! the relaxed load below: asked by way of the base's `next`, a search through a `filter` whose
//! predicate costs a few cycles took 1.4-1.7x as long.
//!
//! The looks at the shared index cost one relaxed load per item, about a cycle: nothing beside
//! a predicate that does some work, but `position_first` of `black_box(i) == at` over a range,
//! whose items cost about a cycle each, takes 1.4-1.6x the time it took without them when a
//! member must look through its whole range (looking every 64 items instead was measured as
//! no cheaper: counting costs as much as the load). Without them a member went on to the end
//! of its range after an earlier one had found the answer: with the hit at index 10^6 of 10^8
//! on two members, 19-20 ms against 0.5-0.6 ms with them (`examples/iter_search.rs`,
//! BENCHMARKS.md).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::internal::plumbing::{Producer, Stop};
use crate::terminal::drive::{self, Order};

/// Whether `pred` is true for some item of `p`.
pub(crate) fn any<P, F>(p: &P, pred: F) -> bool
where
    P: Producer,
    F: Fn(P::Item) -> bool + Sync,
{
    let found = AtomicBool::new(false);
    let stop = Stop::flag(&found);
    drive::run_until(
        p,
        |_, items| {
            if until(items, stop).any(&pred) {
                found.store(true, Ordering::Relaxed);
            }
        },
        || stop.now(),
        |_| stop,
        Order::Spread,
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
    let stop = Stop::flag(&found);
    drive::reduce::reduce_until(
        p,
        || None,
        |acc, _, items| {
            acc.or_else(|| {
                let hit = until(items, stop).find(|x| pred(x));
                if hit.is_some() {
                    found.store(true, Ordering::Relaxed);
                }
                hit
            })
        },
        |a, b| a.or(b),
        Option::is_some,
        |_| stop,
        Order::Spread,
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
    // A range starting at `start` stops once a range starting at or before it has a hit
    // (`start + 1` cannot overflow: `start` is an index, below the length).
    let earlier = |start: usize| Stop::below(&earliest, start + 1);
    drive::reduce::reduce_until(
        p,
        || None,
        |acc, range, items| {
            // A hit in this accumulator's earlier ranges comes first.
            acc.or_else(|| {
                let hit = until(items, earlier(range.start)).find(|x| pred(x));
                if hit.is_some() {
                    earliest.fetch_min(range.start, Ordering::Relaxed);
                }
                hit
            })
        },
        |a, b| a.or(b),
        Option::is_some,
        earlier,
        Order::Index,
    )
}

/// The last item of `p` for which `pred` is true: [`find_first`] over the index space turned
/// around, each range looked through from its end.
pub(crate) fn find_last<P, F>(p: &P, pred: F) -> Option<P::Item>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync,
{
    let space = drive::Space::of(p);
    let len = space.len();
    // Index `m` of the turned space is index `len - 1 - m` of `p`'s: the first turned index of
    // the earliest turned range with a hit (`usize::MAX`: none yet).
    let earliest = AtomicUsize::new(usize::MAX);
    drive::reduce::fold_ranges_until(
        space,
        || None,
        |acc, turned: Range<usize>| {
            // A hit in this accumulator's earlier turned ranges comes later in `p`.
            acc.or_else(|| {
                let range = len - turned.end..len - turned.start;
                // A hit in an earlier turned range comes later in `p`.
                let later = Stop::below(&earliest, turned.start);
                let hit = last_in_range(p, range, &pred, later);
                if hit.is_some() {
                    earliest.fetch_min(turned.start, Ordering::Relaxed);
                }
                hit
            })
        },
        |a, b| a.or(b),
        Option::is_some,
    )
}

/// The last item of `range` for which `pred` is true, looked for from the range's end in
/// pieces of 1, 2, 4, ... indices (of `with_min_len`, twice as many, ... for a chain whose
/// items come late: see [`drive::growing`]), each looked through forward; `None` also once
/// `later` says so.
fn last_in_range<'p, P, F>(
    p: &'p P,
    range: Range<usize>,
    pred: &F,
    later: Stop<'p>,
) -> Option<P::Item>
where
    P: Producer,
    F: Fn(&P::Item) -> bool,
{
    let hints = p.hints();
    let min = if hints.late { hints.min_len } else { 1 };
    let mut end = range.end;
    for piece in drive::growing(range.len(), min) {
        if later.now() {
            return None;
        }
        let from = end - piece;
        let mut hit = None;
        // SAFETY: the pieces of a range are disjoint, as are the ranges that
        // `fold_ranges_until` hands out.
        for x in until(unsafe { p.seq_until(from..end, later) }, later) {
            if pred(&x) {
                hit = Some(x);
            }
        }
        if later.now() {
            return None;
        }
        if hit.is_some() {
            return hit;
        }
        end = from;
    }
    None
}

/// `items` until `stop` says so, which is asked before each item is made: a `fold`'s item is
/// the fold of a whole range (see [`Hints::late`](crate::plumbing::Hints::late)), not made once
/// the search has its answer. (The adapters that drop items ask it before each item of their
/// bases: see [`Producer::seq_until`].)
#[inline]
fn until<'s, I: Iterator + 's>(mut items: I, stop: Stop<'s>) -> impl Iterator<Item = I::Item> + 's {
    std::iter::from_fn(move || if stop.now() { None } else { items.next() })
}
