//! Terminal calls: one region of the current runtime per call.
//!
//! A call splits its producer's index space into *blocks* of `with_min_len` indices (1 when
//! unset) and shares the blocks among the team with the call's schedule:
//! static by default (one contiguous run of blocks per member), dynamic pieces of at most
//! `with_max_len` indices when that is set, or the explicit schedule of `with_schedule`. A call
//! with a single block runs on the calling thread alone ([`Runtime::alone`]), and so does a call
//! made by a member of a running region (inline, as a nested region); an empty one runs
//! nothing.
//!
//! A call of exactly as many blocks as the pool has threads (`max_threads`, rayon's
//! `current_num_threads()`) runs each block on a member of its own, all at once, whatever the
//! policy's team ([`Runtime::for_each_member`]): rayon's one-item-per-thread idiom,
//! `(0..current_num_threads()).into_par_iter()`, stands for an SPMD region whose items may wait
//! for each other (NPB's LU meets at a `std::sync::Barrier` of the pool's size), and rayon,
//! whose idle threads take the items as they block, runs them at once; a smaller team would run
//! them one after another and wait forever. Calls of other lengths keep the policy's team (a
//! call of fewer items than the pool whose items wait for each other still needs a team that
//! large). Such a call's items are not measured by the policy.
//!
//! Reductions keep the order of the items: under the static schedule each member folds its
//! one run of blocks and the members' results are combined in member order (which is index
//! order); under the others each piece's result is kept with its first index (pieces a member
//! takes one after the other in index order are folded together) and the results are combined
//! in index order. So `reduce` needs an associative operation, not a commutative one, as in
//! rayon, and `collect` keeps the order.

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use asat_core::{Runtime, Schedule};

use crate::plumbing::{Hints, Producer};

/// How a call's index space is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    len: usize,
    /// Indices per block.
    block: usize,
    /// Blocks (the last may be short).
    blocks: usize,
    /// How blocks are shared, in blocks.
    schedule: Schedule,
}

impl Plan {
    /// The split of `len` indices under `hints`.
    #[inline]
    pub(crate) fn new(len: usize, hints: Hints) -> Plan {
        let block = hints.min_len.max(1);
        let blocks = len.div_ceil(block);
        let in_blocks = |n: usize| n.div_ceil(block).max(1);
        let schedule = match hints.schedule {
            Some(Schedule::Dynamic { chunk }) => Schedule::dynamic(in_blocks(chunk)),
            Some(Schedule::StaticChunked { chunk }) => Schedule::static_chunked(in_blocks(chunk)),
            Some(Schedule::Guided { min_chunk }) => Schedule::guided(in_blocks(min_chunk)),
            Some(s) => s,
            // Pieces of at most max_len indices; a minimum above the maximum wins.
            None if hints.max_len != 0 && hints.max_len < len => {
                Schedule::dynamic((hints.max_len / block).max(1))
            }
            None => Schedule::Static,
        };
        Plan {
            len,
            block,
            blocks,
            schedule,
        }
    }

    /// The indices of blocks `b`.
    #[inline]
    fn items(&self, b: Range<usize>) -> Range<usize> {
        b.start * self.block..(b.end * self.block).min(self.len)
    }
}

/// Whether the calling thread runs a member of a region already: a call made there runs inline,
/// as a nested region would (and without the nested region's bookkeeping).
#[inline]
fn nested() -> bool {
    asat_core::current_thread_index().is_some()
}

/// Runs `f` on every range of `p`'s index space and its items, one region of the current
/// runtime.
pub(crate) fn run<'p, P, F>(p: &'p P, f: F)
where
    P: Producer,
    F: Fn(Range<usize>, P::Seq<'p>) + Sync,
{
    let len = p.base_len();
    if len == 0 {
        return;
    }
    let plan = Plan::new(len, p.hints());
    Runtime::with_current(|rt| {
        if plan.blocks == 1 || nested() {
            // SAFETY: the only call on `p` in this terminal call.
            return rt.alone(|| f(0..len, unsafe { p.seq(0..len) }));
        }
        if plan.blocks == rt.max_threads() {
            return run_per_thread(rt, p, plan, &f);
        }
        // The body holds what the members read in one place (the split by value).
        let f = &f;
        rt.parallel_for_chunks(0..plan.blocks, plan.schedule, move |b| {
            let r = plan.items(b);
            // SAFETY: a schedule hands out every block of the loop exactly once, and blocks
            // map to disjoint index ranges, so no index is asked for twice.
            f(r.clone(), unsafe { p.seq(r) })
        });
    });
}

/// Folds the items of `p` range by range into accumulators started by `identity` and combines
/// them in index order: one region of the current runtime.
pub(crate) fn reduce<'p, P, A, ID, F, C>(p: &'p P, identity: ID, fold: F, combine: C) -> A
where
    P: Producer,
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    let len = p.base_len();
    if len == 0 {
        return identity();
    }
    let plan = Plan::new(len, p.hints());
    let alone = plan.blocks == 1 || nested();
    // The split is `Copy`: the closures below take it by value.
    Runtime::with_current(move |rt| {
        if alone {
            // SAFETY: the only call on `p` in this terminal call.
            return rt.alone(|| fold(identity(), unsafe { p.seq(0..len) }));
        }
        if plan.blocks == rt.max_threads() {
            return reduce_per_thread(rt, p, plan, identity, fold, combine);
        }
        if plan.schedule == Schedule::Static {
            // One run of blocks per member; members are combined in member order. The body
            // holds what the members read in one place (the split by value), not behind the
            // caller's other closures.
            let fold = &fold;
            return rt.parallel_reduce(
                0..plan.blocks,
                Schedule::Static,
                &identity,
                // SAFETY: a schedule hands out every block of the loop exactly once, and blocks
                // map to disjoint index ranges, so no index is asked for twice.
                move |acc, b| fold(acc, unsafe { p.seq(plan.items(b)) }),
                &combine,
            );
        }
        reduce_pieces(rt, p, plan, identity, fold, combine)
    })
}

/// `run` for a call of one block per thread of the pool: block `b` on member `b` of a team of
/// `blocks` ([`Runtime::for_each_member`]; see the module docs). Out of line: the other calls'
/// path, which tiny loops take, stays as short as it was.
#[inline(never)]
fn run_per_thread<'p, P, F>(rt: &Runtime, p: &'p P, plan: Plan, f: &F)
where
    P: Producer,
    F: Fn(Range<usize>, P::Seq<'p>) + Sync,
{
    rt.for_each_member(plan.blocks, |b| {
        let r = plan.items(b..b + 1);
        // SAFETY: `for_each_member` runs every block once; blocks are disjoint ranges.
        f(r.clone(), unsafe { p.seq(r) })
    });
}

/// `reduce` for a call of one block per thread of the pool (out of line, as
/// `run_per_thread`): each block's result is kept in a slot of its own and the slots are
/// combined in index order.
#[inline(never)]
fn reduce_per_thread<'p, P, A, ID, F, C>(
    rt: &Runtime,
    p: &'p P,
    plan: Plan,
    identity: ID,
    fold: F,
    combine: C,
) -> A
where
    P: Producer,
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    let slots: Vec<Mutex<Option<A>>> = (0..plan.blocks).map(|_| Mutex::new(None)).collect();
    rt.for_each_member(plan.blocks, |b| {
        // SAFETY: `for_each_member` runs every block once; blocks are disjoint ranges.
        let acc = fold(identity(), unsafe { p.seq(plan.items(b..b + 1)) });
        *slots[b].lock().unwrap_or_else(PoisonError::into_inner) = Some(acc);
    });
    slots
        .into_iter()
        .filter_map(|s| s.into_inner().unwrap_or_else(PoisonError::into_inner))
        .reduce(&combine)
        .unwrap_or_else(&identity)
}

/// `reduce` under a schedule that hands a member several pieces: each piece's result is kept
/// with its first index (pieces a member takes one after the other in index order are folded
/// together) and the results are combined in index order.
fn reduce_pieces<'p, P, A, ID, F, C>(
    rt: &Runtime,
    p: &'p P,
    plan: Plan,
    identity: ID,
    fold: F,
    combine: C,
) -> A
where
    P: Producer,
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    // Called once per block handed out: every block is handed out once and blocks are
    // disjoint ranges of indices.
    let seq = |b: Range<usize>| {
        // SAFETY: see above.
        unsafe { p.seq(plan.items(b)) }
    };
    let mut pieces = rt.parallel_reduce(
        0..plan.blocks,
        plan.schedule,
        Vec::new,
        |mut pieces: Vec<(usize, usize, A)>, b| {
            match pieces.pop() {
                Some((start, end, acc)) if end == b.start => {
                    pieces.push((start, b.end, fold(acc, seq(b))));
                }
                last => {
                    pieces.extend(last);
                    pieces.push((b.start, b.end, fold(identity(), seq(b))));
                }
            }
            pieces
        },
        |mut a, b| {
            a.extend(b);
            a
        },
    );
    pieces.sort_unstable_by_key(|&(start, _, _)| start);
    pieces
        .into_iter()
        .map(|(_, _, acc)| acc)
        .reduce(&combine)
        .unwrap_or_else(&identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(min_len: usize, max_len: usize, schedule: Option<Schedule>) -> Hints {
        Hints {
            min_len,
            max_len,
            schedule,
        }
    }

    #[test]
    fn default_is_static_over_single_indices() {
        let p = Plan::new(10, Hints::default());
        assert_eq!((p.block, p.blocks, p.schedule), (1, 10, Schedule::Static));
        assert_eq!(p.items(3..5), 3..5);
    }

    #[test]
    fn min_len_makes_blocks_and_the_last_is_short() {
        let p = Plan::new(10, hints(4, 0, None));
        assert_eq!((p.block, p.blocks), (4, 3));
        assert_eq!(p.items(2..3), 8..10);
        assert_eq!(Plan::new(10, hints(10, 0, None)).blocks, 1);
        assert_eq!(Plan::new(10, hints(100, 0, None)).blocks, 1);
    }

    #[test]
    fn max_len_hands_out_pieces_dynamically() {
        assert_eq!(
            Plan::new(100, hints(0, 8, None)).schedule,
            Schedule::dynamic(8)
        );
        // in blocks of min_len, and the minimum wins over a smaller maximum
        assert_eq!(
            Plan::new(100, hints(4, 8, None)).schedule,
            Schedule::dynamic(2)
        );
        assert_eq!(
            Plan::new(100, hints(16, 8, None)).schedule,
            Schedule::dynamic(1)
        );
        // a maximum the whole loop fits in changes nothing
        assert_eq!(Plan::new(8, hints(0, 8, None)).schedule, Schedule::Static);
    }

    #[test]
    fn explicit_schedules_count_indices_and_win() {
        let p = Plan::new(100, hints(4, 8, Some(Schedule::dynamic(10))));
        assert_eq!(p.schedule, Schedule::dynamic(3));
        let p = Plan::new(100, hints(0, 0, Some(Schedule::guided(0))));
        assert_eq!(p.schedule, Schedule::guided(1));
        let p = Plan::new(100, hints(0, 8, Some(Schedule::Static)));
        assert_eq!(p.schedule, Schedule::Static);
    }

    #[test]
    fn merged_hints_take_the_tighter_bounds() {
        let a = hints(4, 0, None);
        let b = hints(2, 16, Some(Schedule::dynamic(3)));
        assert_eq!(a.merge(b), hints(4, 16, Some(Schedule::dynamic(3))));
        assert_eq!(
            hints(0, 8, None).merge(hints(0, 4, None)),
            hints(0, 4, None)
        );
    }
}
