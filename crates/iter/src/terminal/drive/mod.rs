//! Terminal calls: one region of the current runtime per call, or tasks of its work-stealing
//! engine.
//!
//! A call splits its producer's index space into *blocks* of at least `with_min_len` indices
//! (1 when unset; as many blocks as whole minimums fit, the remainder spread over them, so
//! that none is shorter, as none of rayon's pieces is) and shares the blocks among the team
//! with the call's schedule:
//! static by default (one contiguous run of blocks per member), dynamic pieces of at most
//! `with_max_len` indices when that is set, or the explicit schedule of `with_schedule`.
//! Dynamic pieces go out in index order, but for `any` and `find_any`, whose answer may lie
//! anywhere, from as many places as the pool has threads (`Order::Spread`). A call
//! with a single block runs on the calling thread alone ([`Runtime::alone`]). An empty call
//! runs nothing. A panic in a dealt piece does not stop the others: they go on being
//! handed out and run, and the first panic is raised again once they have (rayon runs every
//! piece but the panicking one).
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
//! A call nested in another (made by a region's member or a task) or made while other
//! threads' calls occupy the runtime runs on tasks instead, when
//! [`Runtime::loops_on_tasks`] says so: what the plan deals (its blocks, or a search's slots
//! from several places) is folded in pieces of at most the schedule's chunk and split in
//! halves as threads of the pool look for work ([`Runtime::fold_adaptive`]). Results are
//! combined in the order dealt. A search's `done` then stops only the pieces after the one
//! whose result satisfied it (pieces before it, maybe on another thread's half, can still
//! hold the first hit), but every piece for a search that takes any hit. A panic in a piece
//! does not stop the others, as above. The one-block-per-thread call keeps its region (its
//! items may wait for each other).
//!
//! On a runtime whose threads carry a name or a start handler, a call from a thread that is
//! not one of them runs all of the above in [`Runtime::install`], on one of the runtime's
//! spawn threads, so that its closures run on threads the program set up, as rayon's do
//! ([`Runtime::hands_calls_over`]).
//!
//! A call after `by_uniform_blocks` or `by_exponential_blocks` runs as a sequence of rounds,
//! each one region over the next part of the index space split as above (never per thread),
//! and stops after a round once the terminal call has its answer (a `done` test that the
//! searches and the fallible calls give): see [`blocks`].
//!
//! The region's body holds what its members read by value: the split, and for the terminal
//! calls of small loops (`for_each`, `reduce`, `sum`, `product`, `count`) the producer and the
//! user's closure, moved into it. A member then reads them where it reads the body, a line or
//! two that the starting thread wrote just before, instead of following pointers into the
//! starting thread's frames, each a cache line that must cross between CPUs in turn: in a
//! call over a few dozen items those transfers are most of its time. The other terminal calls
//! hold a reference to the producer.
//!
//! Reductions keep the order of the items: under the static schedule each member folds its
//! one run of blocks and the members' results are combined in member order (which is index
//! order); under the others each piece's result is kept with its first index (pieces a member
//! takes one after the other in index order are folded together) and the results are combined
//! in index order. So `reduce` needs an associative operation, not a commutative one, as in
//! rayon, and `collect` keeps the order.

use std::any::Any;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};

use asat_core::{PieceLen, Runtime, Schedule};

use crate::internal::plumbing::{Hints, Producer, Rounds, Stop};
use crate::iter::blocks;

pub(crate) mod reduce;
mod spread;

pub(crate) use spread::Order;
use spread::Spread;

/// How a call's index space is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    len: usize,
    /// Indices per block, at least (`with_min_len`).
    block: usize,
    /// Blocks: as many as whole `block`s fit, the remainder spread over them, so that each has
    /// `block` to `2 * block - 1` indices (fewer only when the whole space is shorter).
    blocks: usize,
    /// How blocks are shared, in blocks.
    schedule: Schedule,
    /// Under a dynamic schedule, the pieces go out from this many places at once (see
    /// [`Order::Spread`]); 0: in index order.
    places: usize,
}

impl Plan {
    /// The split of `len` indices under `hints`.
    #[inline]
    pub(crate) fn new(len: usize, hints: Hints) -> Plan {
        let block = hints.min_len.max(1);
        let blocks = (len / block).max(1);
        let in_blocks = |n: usize| n.div_ceil(block).max(1);
        let schedule = match hints.schedule {
            Some(Schedule::Dynamic { chunk }) => Schedule::dynamic(in_blocks(chunk)),
            Some(Schedule::StaticChunked { chunk }) => Schedule::static_chunked(in_blocks(chunk)),
            Some(Schedule::Guided { min_chunk }) => Schedule::guided(in_blocks(min_chunk)),
            Some(s) => s,
            // Pieces of at most max_len indices (a block has at most `len.div_ceil(blocks)`);
            // a minimum above the maximum wins.
            None if hints.max_len != 0 && hints.max_len < len => {
                Schedule::dynamic((hints.max_len / len.div_ceil(blocks)).max(1))
            }
            None => Schedule::Static,
        };
        Plan {
            len,
            block,
            blocks,
            schedule,
            places: 0,
        }
    }

    /// This plan with its pieces dealt in `order`, from as many places as `threads` under
    /// [`Order::Spread`].
    #[inline]
    fn in_order(mut self, order: Order, threads: usize) -> Plan {
        if order == Order::Spread
            && threads > 1
            && matches!(self.schedule, Schedule::Dynamic { .. })
        {
            self.places = threads;
        }
        self
    }

    /// What the call deals, and how: ranges of blocks, or under [`Order::Spread`] one slot at
    /// a time, each standing for the blocks [`dealt`](Plan::dealt) says.
    #[inline]
    fn dealing(&self) -> (Range<usize>, Schedule) {
        match self.spread() {
            Some(spread) => (0..spread.slots(), Schedule::dynamic(1)),
            None => (0..self.blocks, self.schedule),
        }
    }

    /// The blocks of the dealt range `d` (of [`dealing`](Plan::dealing)'s; empty for a slot
    /// that stands for none).
    #[inline]
    fn dealt(&self, d: Range<usize>) -> Range<usize> {
        match self.spread() {
            Some(spread) => {
                // `dealing` deals one slot at a time.
                debug_assert_eq!(d.len(), 1, "slots {d:?} dealt at once");
                spread.piece(d.start)
            }
            None => d,
        }
    }

    /// How the pieces go out from several places, if they do.
    #[inline]
    fn spread(&self) -> Option<Spread> {
        match self.schedule {
            Schedule::Dynamic { chunk } if self.places > 1 => Some(Spread {
                places: self.places,
                chunk,
                blocks: self.blocks,
            }),
            _ => None,
        }
    }

    /// The indices of blocks `b`: block `i` starts at `i * len / blocks`.
    #[inline]
    fn items(&self, b: Range<usize>) -> Range<usize> {
        if self.block == 1 {
            return b;
        }
        let at = |i: usize| (i as u128 * self.len as u128 / self.blocks as u128) as usize;
        at(b.start)..at(b.end)
    }
}

/// Whether the calling thread runs a member of a region or a task already: a call made there
/// that does not run on tasks runs inline, as a nested region would (and without the nested
/// region's bookkeeping).
#[inline]
fn nested() -> bool {
    asat_core::in_parallel_call()
}

/// A call's index space: its length and how the chain asks for it to be split.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Space {
    len: usize,
    hints: Hints,
    order: Order,
}

impl Space {
    /// The index space of `p`.
    #[inline]
    pub(crate) fn of<P: Producer>(p: &P) -> Space {
        Space {
            len: p.base_len(),
            hints: p.hints(),
            order: Order::Index,
        }
    }

    /// This space with its pieces dealt in `order` (when a schedule deals them).
    #[inline]
    pub(crate) fn in_order(self, order: Order) -> Space {
        Space { order, ..self }
    }

    /// How many indices the space has.
    #[inline]
    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// Part `part` of this space, as a space of its own (one round's: no rounds).
    #[inline]
    fn part(self, part: &Range<usize>) -> Space {
        Space {
            len: part.len(),
            hints: Hints {
                rounds: None,
                ..self.hints
            },
            order: self.order,
        }
    }
}

/// Runs `f` on every range of `p`'s index space and its items, one region of the current
/// runtime.
#[inline]
pub(crate) fn run<'p, P, F>(p: &'p P, f: F)
where
    P: Producer,
    F: Fn(Range<usize>, P::Seq<'p>) + Sync,
{
    let job = move |r: Range<usize>| {
        // SAFETY: `ranges` hands out disjoint ranges of `p`'s index space.
        f(r.clone(), unsafe { p.seq(r) })
    };
    ranges(Space::of(p), job);
}

/// [`run`] for a call that stops once `done()` is true: no more pieces dealt (under a schedule
/// that deals them), no round after one at whose end it is (see [`blocks`]), and for a chain
/// whose items come late ([`Hints::late`]: a `fold`) each range looked through in pieces of
/// `with_min_len` (at least 1), twice as many, ... indices (see [`growing`]), none after
/// `done()`. Each piece's items are read under `stop(piece.start)` (see
/// [`Producer::seq_until`]); dealt pieces go out in `order`.
#[inline]
pub(crate) fn run_until<'p, P, F, D, S>(p: &'p P, f: F, done: D, stop: S, order: Order)
where
    P: Producer,
    F: Fn(Range<usize>, P::Seq<'p>) + Sync,
    D: Fn() -> bool + Sync,
    S: Fn(usize) -> Stop<'p> + Sync,
{
    let space = Space::of(p).in_order(order);
    let hints = space.hints;
    let done = &done;
    let job = move |r: Range<usize>| {
        for piece in pieces(r, hints) {
            // SAFETY: `ranges_until` hands out disjoint ranges of `p`'s index space, and the
            // pieces of a range are disjoint.
            f(piece.clone(), unsafe {
                p.seq_until(piece.clone(), stop(piece.start))
            });
            if done() {
                return;
            }
        }
    };
    ranges_until(space, job, done);
}

/// The ranges a call that may stop early looks through `range` in: all of it at once, or, for
/// a chain whose items come late, pieces from its start as [`growing`] cuts them.
#[inline]
fn pieces(range: Range<usize>, hints: Hints) -> impl Iterator<Item = Range<usize>> {
    let min = if hints.late {
        hints.min_len
    } else {
        usize::MAX
    };
    let mut at = range.start;
    growing(range.len(), min).map(move |n| {
        at += n;
        at - n..at
    })
}

/// The lengths of the pieces `len` indices are looked through in when they may stop between
/// them: `min`, 2 `min`, 4 `min`, ... (`min` at least 1; `usize::MAX`: one piece), the last
/// one taking in a rest shorter than `min`, so that no piece is shorter than `with_min_len`
/// unless all `len` are (a `fold` sees each piece as a range of its own, and none of rayon's
/// is shorter than the minimum).
#[inline]
pub(crate) fn growing(len: usize, min: usize) -> impl Iterator<Item = usize> {
    let (mut left, mut piece) = (len, min.max(1));
    std::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        let mut this = piece.min(left);
        if left - this < min {
            this = left;
        }
        (left, piece) = (left - this, piece.saturating_mul(2));
        Some(this)
    })
}

/// Runs `job` on ranges of `space`, one region of the current runtime: ranges that cover the
/// space and of which no two share an index, so a job may ask a producer of that space for
/// its range's items ([`Producer::seq`]). The region's body holds `job` by value: a member
/// reads the job's captures (a producer moved into it, say) where it reads the body, not
/// behind pointers into the calling thread's frames.
#[inline]
pub(crate) fn ranges<J>(space: Space, job: J)
where
    J: Fn(Range<usize>) + Sync,
{
    ranges_until(space, job, || false);
}

/// [`ranges`], but once `done()` is true no more pieces are handed out under a schedule that
/// deals them (`with_max_len`, `with_schedule`), and for a call run in rounds (see
/// [`blocks`]) no round starts: the ranges then need not cover the space.
#[inline]
pub(crate) fn ranges_until<J, D>(space: Space, job: J, done: D)
where
    J: Fn(Range<usize>) + Sync,
    D: Fn() -> bool + Sync,
{
    match space.hints.rounds {
        None => run_once(space, job, true, &done),
        Some(rounds) => run_rounds(space, rounds, &job, &done),
    }
}

/// One region over the whole of `space`; `per_thread`: a call of one block per thread of the
/// pool runs each on a member of its own (a round does not: see [`blocks`]). Pieces that are
/// dealt stop going out once `done()`.
#[inline]
fn run_once<J, D>(space: Space, job: J, per_thread: bool, done: &D)
where
    J: Fn(Range<usize>) + Sync,
    D: Fn() -> bool + Sync,
{
    let len = space.len;
    if len == 0 {
        return;
    }
    let plan = Plan::new(len, space.hints);
    Runtime::with_current(move |rt| {
        if rt.hands_calls_over() {
            return run_handed_over(rt, space, &job, per_thread, &done);
        }
        let dealt = plan.schedule != Schedule::Static;
        if plan.blocks == 1 {
            return rt.alone(|| job(0..len));
        }
        if per_thread && plan.blocks == rt.max_threads() && !(dealt && nested()) {
            return run_per_thread(rt, plan, &job);
        }
        // A static call leaves the choice between a region and tasks to the runtime's loop
        // (one check); a dealt one on tasks needs this crate's split (see the module docs).
        if dealt && rt.loops_on_tasks() {
            return run_tasks(rt, plan, &job, done);
        }
        if !dealt {
            // The body holds what the members read in one place: the split and the job by
            // value (one range a member: nothing to stop dealing).
            let job = move |b| job(plan.items(b));
            return rt.parallel_for_chunks(0..plan.blocks, Schedule::Static, job);
        }
        run_dealt(rt, plan.in_order(space.order, rt.max_threads()), &job, done);
    });
}

/// [`run_once`] in [`install`](Runtime::install): for a call from a thread that is not one of
/// `rt`'s own where the closures must run on those ([`Runtime::hands_calls_over`]: they carry
/// a name or a start handler), as rayon runs every call from outside its pool. Out of line,
/// one instance for every call (the closures behind references to `dyn`).
#[cold]
#[inline(never)]
fn run_handed_over(
    rt: &Runtime,
    space: Space,
    job: &(dyn Fn(Range<usize>) + Sync),
    per_thread: bool,
    done: &(dyn Fn() -> bool + Sync),
) {
    rt.install(|| run_once(space, job, per_thread, &done));
}

/// `ranges` on the work-stealing engine ([`Runtime::fold_adaptive`]): what the plan deals
/// (its blocks, or a search's slots from several places) splits as threads of the pool look
/// for work; once `done()`, no further piece starts. Out of line,
/// as [`run_per_thread`].
#[inline(never)]
fn run_tasks<J, D>(rt: &Runtime, plan: Plan, job: &J, done: &D)
where
    J: Fn(Range<usize>) + Sync,
    D: Fn() -> bool + Sync,
{
    let (deal, schedule) = plan.dealing();
    let fold = |(), d| {
        let b = plan.dealt(d);
        if !b.is_empty() {
            job(plan.items(b));
        }
    };
    rt.fold_adaptive(
        deal,
        PieceLen::of(schedule),
        || (),
        fold,
        |(), ()| (),
        |_| done(),
    );
}

/// `ranges` under a schedule that deals pieces (also inside a region, where the one member
/// of the inline region takes them in order, so that a `fold` sees the same pieces): a panic
/// in one piece does not stop the others from going out and running, as rayon runs every
/// other piece of a call whose piece panicked (its joins finish both halves); the first panic
/// is raised again once they have run (see [`Panics`]).
fn run_dealt<J, D>(rt: &Runtime, plan: Plan, job: &J, done: &D)
where
    J: Fn(Range<usize>) + Sync,
    D: Fn() -> bool + Sync,
{
    let panics = Panics::default();
    let piece = |d| {
        let b = plan.dealt(d);
        if !b.is_empty() {
            _ = panics.catch(|| job(plan.items(b)));
        }
    };
    let (deal, schedule) = plan.dealing();
    rt.parallel_for_chunks_until(deal, schedule, piece, done);
    panics.resume();
}

/// The first panic of a call's dealt pieces, kept while its other pieces run.
#[derive(Default)]
struct Panics(Mutex<Option<Box<dyn Any + Send>>>);

impl Panics {
    /// `f()`, or `None` when it panicked: the panic is kept if it is the call's first.
    fn catch<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        catch_unwind(AssertUnwindSafe(f))
            .map_err(|p| {
                _ = self
                    .0
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert(p)
            })
            .ok()
    }

    /// Raises the kept panic again, if there is one.
    fn resume(self) {
        if let Some(p) = self.0.into_inner().unwrap_or_else(PoisonError::into_inner) {
            resume_unwind(p);
        }
    }
}

/// `ranges` in rounds, each one region over a part of the space: out of line, so that the
/// other calls' path stays as short as it was.
#[inline(never)]
fn run_rounds<J, D>(space: Space, rounds: Rounds, job: &J, done: &D)
where
    J: Fn(Range<usize>) + Sync,
    D: Fn() -> bool + Sync,
{
    let threads = Runtime::with_current(Runtime::max_threads);
    for part in blocks::rounds(rounds, space.len, threads) {
        let at = part.start;
        run_once(space.part(&part), |r| job(shift(r, at)), false, done);
        if done() {
            return;
        }
    }
}

/// `r` moved `by` indices up: a part's range as indices of the whole space.
#[inline]
fn shift(r: Range<usize>, by: usize) -> Range<usize> {
    r.start + by..r.end + by
}

/// `ranges` for a call of one block per thread of the pool: block `b` on member `b` of a team
/// of `blocks` ([`Runtime::for_each_member`]; see the module docs). Out of line: the other
/// calls' path, which tiny loops take, stays as short as it was.
#[inline(never)]
fn run_per_thread<J>(rt: &Runtime, plan: Plan, job: &J)
where
    J: Fn(Range<usize>) + Sync,
{
    // `for_each_member` runs every block once.
    rt.for_each_member(plan.blocks, |b| job(plan.items(b..b + 1)));
}

#[cfg(test)]
mod tests;
