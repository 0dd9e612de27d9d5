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
//! A call after `by_uniform_blocks` or `by_exponential_blocks` runs as a sequence of rounds,
//! each one region over the next part of the index space split as above (never per thread),
//! and stops after a round once the terminal call has its answer (a `done` test that the
//! searches and the fallible calls give): see [`blocks`].
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

use crate::blocks;
use crate::plumbing::{Hints, Producer, Rounds};

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
#[inline]
pub(crate) fn run<'p, P, F>(p: &'p P, f: F)
where
    P: Producer,
    F: Fn(Range<usize>, P::Seq<'p>) + Sync,
{
    run_until(p, f, || false);
}

/// [`run`], and for a call run in rounds (see [`blocks`]), no round after one at whose end
/// `done()` is true.
#[inline]
pub(crate) fn run_until<'p, P, F, D>(p: &'p P, f: F, done: D)
where
    P: Producer,
    F: Fn(Range<usize>, P::Seq<'p>) + Sync,
    D: Fn() -> bool,
{
    match p.hints().rounds {
        None => run_once(p, f, true),
        Some(rounds) => run_rounds(p, rounds, &f, &done),
    }
}

/// One region over the whole index space of `p`; `per_thread`: a call of one block per thread
/// of the pool runs each on a member of its own (a round does not: see [`blocks`]).
#[inline]
fn run_once<'p, P, F>(p: &'p P, f: F, per_thread: bool)
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
        if per_thread && plan.blocks == rt.max_threads() {
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

/// `run` in rounds, each one region over a [`Part`] of the index space: out of line, so that
/// the other calls' path stays as short as it was.
#[inline(never)]
fn run_rounds<'p, P, F, D>(p: &'p P, rounds: Rounds, f: &F, done: &D)
where
    P: Producer,
    F: Fn(Range<usize>, P::Seq<'p>) + Sync,
    D: Fn() -> bool,
{
    let threads = Runtime::with_current(Runtime::max_threads);
    for part in blocks::rounds(rounds, p.base_len(), threads) {
        let at = part.start;
        run_once(
            &Part::new(p, part),
            |r, items| f(shift(r, at), items),
            false,
        );
        if done() {
            return;
        }
    }
}

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
    let fold = move |acc, _: Range<usize>, items| fold(acc, items);
    reduce_until(p, identity, fold, combine, |_| false)
}

/// [`reduce`] with each range's indices given to `fold` too, and for a call run in rounds
/// (see [`blocks`]), no round after one at whose end the result so far satisfies `done`.
#[inline]
pub(crate) fn reduce_until<'p, P, A, ID, F, C, D>(
    p: &'p P,
    identity: ID,
    fold: F,
    combine: C,
    done: D,
) -> A
where
    P: Producer,
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    D: Fn(&A) -> bool,
{
    match p.hints().rounds {
        None => reduce_once(p, identity, fold, combine, true),
        Some(rounds) => reduce_rounds(p, rounds, &identity, &fold, &combine, &done),
    }
}

/// One region folding the whole index space of `p`; `per_thread` as for [`run_once`].
#[inline]
fn reduce_once<'p, P, A, ID, F, C>(
    p: &'p P,
    identity: ID,
    fold: F,
    combine: C,
    per_thread: bool,
) -> A
where
    P: Producer,
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>, P::Seq<'p>) -> A + Sync,
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
            return rt.alone(|| fold(identity(), 0..len, unsafe { p.seq(0..len) }));
        }
        if per_thread && plan.blocks == rt.max_threads() {
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
                move |acc, b| {
                    let r = plan.items(b);
                    // SAFETY: a schedule hands out every block of the loop exactly once, and
                    // blocks map to disjoint index ranges, so no index is asked for twice.
                    fold(acc, r.clone(), unsafe { p.seq(r) })
                },
                &combine,
            );
        }
        reduce_pieces(rt, p, plan, identity, fold, combine)
    })
}

/// `reduce` in rounds, each one region over a [`Part`] of the index space (out of line, as
/// [`run_rounds`]): each round's result is combined into the rounds' before it, in order.
#[inline(never)]
fn reduce_rounds<'p, P, A, ID, F, C, D>(
    p: &'p P,
    rounds: Rounds,
    identity: &ID,
    fold: &F,
    combine: &C,
    done: &D,
) -> A
where
    P: Producer,
    A: Send,
    ID: Fn() -> A + Sync,
    F: Fn(A, Range<usize>, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
    D: Fn(&A) -> bool,
{
    let threads = Runtime::with_current(Runtime::max_threads);
    let mut so_far = None;
    for part in blocks::rounds(rounds, p.base_len(), threads) {
        let at = part.start;
        let shifted = |acc, r, items| fold(acc, shift(r, at), items);
        let this = reduce_once(&Part::new(p, part), identity, shifted, combine, false);
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

/// `r` moved `by` indices up: a [`Part`]'s range as indices of the whole space.
#[inline]
fn shift(r: Range<usize>, by: usize) -> Range<usize> {
    r.start + by..r.end + by
}

/// One round's part of a producer's index space, as a producer of its own whose index 0 is
/// the part's first index; the part's hints are the producer's, without the rounds.
struct Part<'p, P> {
    p: &'p P,
    start: usize,
    len: usize,
}

impl<'p, P> Part<'p, P> {
    fn new(p: &'p P, part: Range<usize>) -> Self {
        Part {
            p,
            start: part.start,
            len: part.len(),
        }
    }
}

impl<'p, P: Producer> Producer for Part<'p, P> {
    type Item = P::Item;
    type Seq<'a>
        = P::Seq<'p>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.len
    }

    unsafe fn seq(&self, range: Range<usize>) -> P::Seq<'p> {
        // SAFETY: parts of distinct rounds are disjoint, so disjoint ranges of one part are
        // disjoint ranges of the whole space.
        unsafe { self.p.seq(shift(range, self.start)) }
    }

    fn hints(&self) -> Hints {
        Hints {
            rounds: None,
            ..self.p.hints()
        }
    }
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
    F: Fn(A, Range<usize>, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    let slots: Vec<Mutex<Option<A>>> = (0..plan.blocks).map(|_| Mutex::new(None)).collect();
    rt.for_each_member(plan.blocks, |b| {
        let r = plan.items(b..b + 1);
        // SAFETY: `for_each_member` runs every block once; blocks are disjoint ranges.
        let acc = fold(identity(), r.clone(), unsafe { p.seq(r) });
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
    F: Fn(A, Range<usize>, P::Seq<'p>) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    // Called once per block handed out: every block is handed out once and blocks are
    // disjoint ranges of indices.
    let fold_blocks = |acc: A, b: Range<usize>| {
        let r = plan.items(b);
        // SAFETY: see above.
        fold(acc, r.clone(), unsafe { p.seq(r) })
    };
    let mut pieces = rt.parallel_reduce(
        0..plan.blocks,
        plan.schedule,
        Vec::new,
        |mut pieces: Vec<(usize, usize, A)>, b| {
            match pieces.pop() {
                Some((start, end, acc)) if end == b.start => {
                    pieces.push((start, b.end, fold_blocks(acc, b)));
                }
                last => {
                    pieces.extend(last);
                    pieces.push((b.start, b.end, fold_blocks(identity(), b)));
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
            rounds: None,
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
