//! The reductions: each range folded into an accumulator, the accumulators combined in index
//! order (see the [module docs](super)).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use asat_core::{PieceLen, Runtime, Schedule};

use super::{blocks, nested, pieces, shift, Order, Panics, Plan, Space};
use crate::internal::plumbing::{Producer, Rounds, Stop};

/// Folds the items of `p` range by range into accumulators started by `identity` and combines
/// them in index order: one region of the current runtime.
#[inline]
pub(crate) fn reduce<'p, P, A, ID, F, C>(p: &'p P, identity: ID, fold: F, combine: C) -> A
where
    P: Producer,
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    let job = move |acc, r: Range<usize>| {
        // SAFETY: `fold_ranges` hands out disjoint ranges of `p`'s index space.
        fold(acc, unsafe { p.seq(r) })
    };
    fold_ranges(Space::of(p), identity, job, combine)
}

/// [`reduce`] with each range's indices given to `fold` too, and once a range's result
/// satisfies `done`, no more pieces handed out (under a schedule that deals them) nor rounds
/// run (see [`blocks`]); for a chain whose items come late ([`Hints::late`]), each range is
/// folded in pieces of `with_min_len` (at least 1), twice as many, ... indices (see
/// [`growing`]), none after its result satisfies `done`. Each piece's items are read under
/// `stop(piece.start)` (see [`Producer::seq_until`]); dealt pieces go out in `order`.
#[inline]
pub(crate) fn reduce_until<'p, P, A, ID, F, C, D, S>(
    p: &'p P,
    identity: ID,
    fold: F,
    combine: C,
    done: D,
    stop: S,
    order: Order,
) -> A
where
    P: Producer,
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    D: Fn(&A) -> bool + Sync,
    S: Fn(usize) -> Stop<'p> + Sync,
{
    let space = Space::of(p).in_order(order);
    let hints = space.hints;
    let done = &done;
    let job = move |mut acc, r: Range<usize>| {
        for piece in pieces(r, hints) {
            // SAFETY: `fold_ranges_until` hands out disjoint ranges of `p`'s index space, and
            // the pieces of a range are disjoint.
            let items = unsafe { p.seq_until(piece.clone(), stop(piece.start)) };
            acc = fold(acc, piece, items);
            if done(&acc) {
                break;
            }
        }
        acc
    };
    fold_ranges_until(space, identity, job, combine, done)
}

/// Folds ranges of `space` (as [`ranges`] hands them out) with `fold` into accumulators
/// started by `identity` and combines them in index order: one region of the current runtime,
/// whose body holds `fold` by value.
#[inline]
pub(crate) fn fold_ranges<A, ID, F, C>(space: Space, identity: ID, fold: F, combine: C) -> A
where
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    fold_ranges_until(space, identity, fold, combine, |_| false)
}

/// [`fold_ranges`], and once a range's result satisfies `done`, no more pieces handed out
/// (under a schedule that deals them) nor rounds run after one at whose end the result so far
/// satisfies it (see [`blocks`]).
#[inline]
pub(crate) fn fold_ranges_until<A, ID, F, C, D>(
    space: Space,
    identity: ID,
    fold: F,
    combine: C,
    done: D,
) -> A
where
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    D: Fn(&A) -> bool + Sync,
{
    match space.hints.rounds {
        None => reduce_once(space, identity, fold, combine, true, &done),
        Some(rounds) => reduce_rounds(space, rounds, &identity, &fold, &combine, &done),
    }
}

/// One region folding the whole of `space`; `per_thread` as for [`run_once`]; dealt pieces
/// stop going out once one's result satisfies `done`.
#[inline]
fn reduce_once<A, ID, F, C, D>(
    space: Space,
    identity: ID,
    fold: F,
    combine: C,
    per_thread: bool,
    done: &D,
) -> A
where
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    D: Fn(&A) -> bool + Sync,
{
    let len = space.len;
    if len == 0 {
        return identity();
    }
    let plan = Plan::new(len, space.hints);
    let dealt = plan.schedule != Schedule::Static;
    Runtime::with_current(move |rt| {
        if rt.hands_calls_over() {
            return reduce_handed_over(rt, space, &identity, &fold, &combine, per_thread, &done);
        }
        if plan.blocks == 1 {
            return rt.alone(|| fold(identity(), 0..len));
        }
        if per_thread && plan.blocks == rt.max_threads() && !(dealt && nested()) {
            return reduce_per_thread(rt, plan, identity, fold, combine);
        }
        // A static call leaves the choice between a region and tasks to the runtime's loop
        // (one check); a dealt one on tasks needs this crate's split (see the module docs).
        if dealt && rt.loops_on_tasks() {
            return reduce_tasks(rt, plan, identity, fold, combine, done);
        }
        if !dealt {
            // One run of blocks per member; members are combined in member order. The body
            // holds what the members read in one place: the split and `fold` by value.
            return rt.parallel_reduce(
                0..plan.blocks,
                Schedule::Static,
                &identity,
                move |acc, b| fold(acc, plan.items(b)),
                &combine,
            );
        }
        let plan = plan.in_order(space.order, rt.max_threads());
        reduce_pieces(rt, plan, identity, fold, combine, done)
    })
}

/// [`reduce_once`] in [`install`](Runtime::install), as [`run_handed_over`](super) is
/// [`run_once`](super): one instance for every type of accumulator.
#[cold]
#[inline(never)]
fn reduce_handed_over<A: Send>(
    rt: &Runtime,
    space: Space,
    identity: &(dyn Fn() -> A + Sync),
    fold: &(dyn Fn(A, Range<usize>) -> A + Sync),
    combine: &(dyn Fn(A, A) -> A + Sync),
    per_thread: bool,
    done: &(dyn Fn(&A) -> bool + Sync),
) -> A {
    rt.install(|| reduce_once(space, identity, fold, combine, per_thread, &done))
}

/// `fold_ranges` on the work-stealing engine ([`Runtime::fold_adaptive`]): what the plan deals
/// splits as threads of the pool look for work, the halves' results combined in the order
/// dealt (index order, but for a search from several places, whose answer may be any hit);
/// once a piece's result satisfies `done`, no piece after it starts (none at all for a search
/// from several places). Out of line, as
/// [`run_rounds`](super::run_rounds).
#[inline(never)]
fn reduce_tasks<A, ID, F, C, D>(
    rt: &Runtime,
    plan: Plan,
    identity: ID,
    fold: F,
    combine: C,
    done: &D,
) -> A
where
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    D: Fn(&A) -> bool + Sync,
{
    // No piece from this dealt index on starts. A result that satisfies `done` covers its
    // half from the half's start to the piece's end: pieces after it are moot, those before
    // it (other halves, maybe on other threads) are not, unless the search takes any hit
    // (dealt from several places).
    let stop_at = AtomicUsize::new(usize::MAX);
    let any_hit = plan.spread().is_some();
    let fold_dealt = |acc: A, d: Range<usize>| {
        let b = plan.dealt(d.clone());
        if b.is_empty() {
            return acc;
        }
        let acc = fold(acc, plan.items(b));
        if done(&acc) {
            stop_at.fetch_min(if any_hit { 0 } else { d.end }, Ordering::Relaxed);
        }
        acc
    };
    let stopped = |at| at >= stop_at.load(Ordering::Relaxed);
    let (deal, schedule) = plan.dealing();
    rt.fold_adaptive(
        deal,
        PieceLen::of(schedule),
        identity,
        fold_dealt,
        combine,
        stopped,
    )
}

/// `fold_ranges` in rounds, each one region over a part of the space (out of line, as
/// [`run_rounds`]): each round's result is combined into the rounds' before it, in order.
#[inline(never)]
fn reduce_rounds<A, ID, F, C, D>(
    space: Space,
    rounds: Rounds,
    identity: &ID,
    fold: &F,
    combine: &C,
    done: &D,
) -> A
where
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    D: Fn(&A) -> bool + Sync,
{
    let threads = Runtime::with_current(Runtime::max_threads);
    let mut so_far = None;
    for part in blocks::rounds(rounds, space.len, threads) {
        let at = part.start;
        let shifted = |acc, r| fold(acc, shift(r, at));
        let this = reduce_once(space.part(&part), identity, shifted, combine, false, done);
        let acc = match so_far {
            None => this,
            Some(before) => combine(before, this),
        };
        if done(&acc) {
            return acc;
        }
        so_far = Some(acc);
    }
    so_far.unwrap_or_else(identity)
}

/// `fold_ranges` for a call of one block per thread of the pool (out of line, as
/// `run_per_thread`): each block's result is kept in a slot of its own and the slots are
/// combined in index order.
#[inline(never)]
fn reduce_per_thread<A, ID, F, C>(rt: &Runtime, plan: Plan, identity: ID, fold: F, combine: C) -> A
where
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    let slots: Vec<Mutex<Option<A>>> = (0..plan.blocks).map(|_| Mutex::new(None)).collect();
    // `for_each_member` runs every block once.
    rt.for_each_member(plan.blocks, |b| {
        let acc = fold(identity(), plan.items(b..b + 1));
        *slots[b].lock().unwrap_or_else(PoisonError::into_inner) = Some(acc);
    });
    slots
        .into_iter()
        .filter_map(|s| s.into_inner().unwrap_or_else(PoisonError::into_inner))
        .reduce(&combine)
        .unwrap_or_else(&identity)
}

/// `fold_ranges` under a schedule that hands a member several pieces: each piece's result is
/// kept with its first index (pieces a member takes one after the other in index order are
/// folded together) and the results are combined in index order. Once a result satisfies
/// `done`, no more pieces go out (so a search over a long space of small pieces is not handed
/// every piece left after its answer). A panic in a piece does not stop the others, as in
/// [`run_dealt`](super::run_dealt).
fn reduce_pieces<A, ID, F, C, D>(
    rt: &Runtime,
    plan: Plan,
    identity: ID,
    fold: F,
    combine: C,
    done: &D,
) -> A
where
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    D: Fn(&A) -> bool + Sync,
{
    let stop = AtomicBool::new(false);
    let panics = Panics::default();
    // Every block is handed out once, until `stop`.
    let fold_blocks = |acc: A, b: Range<usize>| {
        let acc = fold(acc, plan.items(b));
        if done(&acc) {
            stop.store(true, Ordering::Relaxed);
        }
        acc
    };
    let (deal, schedule) = plan.dealing();
    let mut pieces = rt.parallel_reduce_until(
        deal,
        schedule,
        Vec::new,
        |mut pieces: Vec<(usize, usize, A)>, d| {
            let b = plan.dealt(d);
            if b.is_empty() {
                return pieces;
            }
            let (start, end) = (b.start, b.end);
            let (start, acc) = match pieces.pop() {
                Some((first, last, acc)) if last == start => (first, Some(acc)),
                last => {
                    pieces.extend(last);
                    (start, None)
                }
            };
            // A piece that panicked leaves no result: the call raises its panic at the end.
            if let Some(acc) = panics.catch(|| fold_blocks(acc.unwrap_or_else(&identity), b)) {
                pieces.push((start, end, acc));
            }
            pieces
        },
        |mut a, b| {
            a.extend(b);
            a
        },
        || stop.load(Ordering::Relaxed),
    );
    panics.resume();
    pieces.sort_unstable_by_key(|&(start, _, _)| start);
    pieces
        .into_iter()
        .map(|(_, _, acc)| acc)
        .reduce(&combine)
        .unwrap_or_else(&identity)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_tiles, every_split};
    use super::*;

    #[test]
    fn folded_ranges_come_back_in_index_order() {
        crate::internal::testing::on_every_team(|k| {
            for hints in every_split() {
                for len in [0, 1, 3, 4, 17, 100] {
                    // Not commutative: the ranges come back in the order they are combined.
                    let got = fold_ranges(
                        Space {
                            len,
                            hints,
                            order: Order::Index,
                        },
                        Vec::new,
                        |mut v, r| {
                            v.push(r);
                            v
                        },
                        |mut a, mut b| {
                            a.append(&mut b);
                            a
                        },
                    );
                    let what = format!("team {k}, {len} indices, {hints:?}");
                    assert!(got.is_sorted_by_key(|r| r.start), "{what}: {got:?}");
                    assert_tiles(got, len, &what);
                }
            }
        });
    }
}
