//! Work stealing: how `join` shares its second closure with the runtime's threads, loops on
//! tasks their halves, and scopes their spawned jobs.
//!
//! # Threads and queues
//!
//! Every thread that runs tasks of a runtime has a [`Ctx`]: its index, its deque
//! (crossbeam-deque's LIFO `Worker`, whose `Stealer`s every other thread of the runtime can
//! take from), and its stack of pending *frames*, one per `join` it is inside. The workers
//! (indices `1..max_threads`) have theirs for life; a thread that calls into the runtime from
//! outside takes index 0 for the length of its call when nobody else holds it (where the pool
//! was built with `use_current_thread`, only that thread takes it: `runtime::resident`), and
//! otherwise hands the call to the workers through the injector and sleeps until it is done
//! (the *cold* path). Where the pool's threads carry a name or a start handler and the calling
//! thread is not one of them, the call first moves to one of the pool's spawn threads, as
//! `install` moves its `op` ([`Runtime::hands_calls_over`]), which then calls in as above. A
//! call made while a thread runs tasks of the runtime is a task of that thread. Index 0's
//! holder may steal, while it waits, a job of another call's scope, whose spawns land on its
//! deque; what its call leaves there goes into the injector as the call ends, for the workers
//! (who all take from it, whatever the policy's number), so that index 0's next holder starts
//! with an empty deque and no job waits for a holder that may never come.
//!
//! # A join
//!
//! `join(a, b)` puts `b` in a frame on the calling thread's stack, runs `a`, then runs `b`
//! itself unless another thread took it. A frame is private at first: nobody can see it, and
//! a join whose frame stays private costs a few instructions more than calling `a` and `b`.
//! A thread keeps only its oldest private frame (`frame::KEPT`): a join made while it has it
//! runs `a` and `b` with no frame, for two loads and a store: the thread's counter
//! (below) is found through a thread-local pointer, and while the thread wants frames the
//! counter carries a flag ([`HELD`]) that sends every join the long way, so that the quickest
//! join reads nothing else (from the `Ctx` it would read three words more).
//! A frame is *shared* (its [`TaskRef`] pushed on the thread's deque, where thieves take from
//! the oldest end) at the thread's *beat*: the thread counts its joins and reads the clock
//! every few of them (see `beat`), and at its next join whenever another thread has started
//! to look for work since (a thread that starts to search *pokes* the others: it sets their
//! counters to zero, so that a thread whose joins come between long leaves, with a long
//! interval left from a fast descent, does not wait that interval's leaves to see it; the
//! counter is an atomic its owner loads and stores, so a poke that lands between the two is
//! lost, and the thread reads its clock at most its interval's joins later). Its beat
//! is due [`beat::AWAKE_BEAT`] after the last one while a thread of the runtime is awake and
//! looking for work (`searching > 0`), and [`beat::HEARTBEAT`] after it otherwise. At a due
//! beat the thread shares its oldest private frame, the work nearest the root of its
//! recursion: with threads idle it wakes a sleeper for it (unless searchers will take it),
//! and the beat stays due, one more frame at each join, while idle threads outnumber the
//! frames shared at this beat (a descent feeds every idle thread as its frames go by); with
//! every thread busy the frame is shared all the same, for whichever finishes first (a thread
//! whose joins come between long leaves has no other chance to pass work on); with no other
//! thread allowed to take tasks (a pool of one, or the policy's number at one) it stays
//! private. Joins that come
//! a quarter heartbeat or more apart on average (`beat::coarse`) share every private frame at
//! once, as rayon's do, and so do the next few joins, each reading the clock (the descent to
//! the next leaf): the push costs nothing beside their grain, and no work waits behind a long
//! leaf for the thread's next join.
//!
//! A stolen task's first join may share at once, and so may a call's from outside unless its
//! thread's last joins came fast (`beat::call_beat`): the thief of a large part passes half
//! of it on, and a short call of fine joins keeps its work.
//!
//! Shared frames are the oldest ones, so they form the bottom of the frame stack, and the deque
//! holds them in the same order. When `a` returns, a shared frame's `TaskRef` is either still
//! on top of the deque (the thread pops it and runs `b` itself) or was stolen: the thread then
//! waits for the frame's latch, running other tasks meanwhile (its own deque first, then
//! steals) and sleeping when there are none. A short call therefore wakes nobody, and a long
//! one spreads from the root: this is heartbeat scheduling (Spice, chili) with rayon's deques
//! and latches.
//!
//! # Sleep
//!
//! A thread without work spins for its wait strategy's limit as a *searcher*, then sleeps on
//! its event (the worker's mailbox event, which region posts also move): `sleeping` counts the
//! sleepers that may take tasks. Whoever shares work then (after a `SeqCst` fence) wakes one
//! sleeper unless a searcher is awake; a sleeper announces itself through the event's sleeper
//! count and re-checks every queue after a `SeqCst` fence before it sleeps, so a push either
//! is seen by the sleeper or sees the sleeper (no lost wake-up). A latch wakes its owner the
//! same way. An idle pool therefore uses no CPU once its spin is over.
//!
//! # How many threads take tasks
//!
//! [`Policy::task_workers`](crate::Policy::task_workers), asked at each call from outside the
//! pool, and [`Policy::task_refresh`](crate::Policy::task_refresh), asked while calls run by
//! a thread at its heartbeat, at most once per [`TASK_REFRESH`] (a compare-and-swap on the
//! time of the last ask elects one asker): workers whose index is at or above the number
//! neither steal nor are woken for shared frames (they stay parked at task boundaries, and
//! keep serving regions). Index 0 always runs its tasks, and every worker takes calls handed
//! in through the injector (each is as its caller's own thread, and must run even when the
//! number falls after it was handed in).
//!
//! A worker kept out sleeps uncounted in `sleeping` (no share wakes it), so a rise of the
//! number wakes the workers it lets in: the number is stored (`SeqCst`) before their events
//! are checked for sleepers, and a sleeper's condition includes "my index is now below the
//! number", read after it announced itself, so one of the two sees the other. Woken, such a
//! worker looks for tasks and sleeps again, counted.
//!
//! Where they run is the policy's too, as for a region's members: the calling thread asks
//! [`Policy::placement`](crate::Policy::placement) as its call's tasks start (and gets its
//! own mask back when the call ends), a worker as it takes a task after being idle or serving
//! a region; every thread calls [`Policy::safe_point`](crate::Policy::safe_point) before each
//! task it takes from a queue (gang scheduling stops a thread there), and the policy hears of
//! each call's end ([`Policy::task_call_end`](crate::Policy::task_call_end)).
//!
//! # Loops
//!
//! A parallel loop runs on tasks where a region would run inline or wait (see
//! [`Runtime::loops_on_tasks`]): it is folded in pieces, and at a due beat splits its rest
//! in halves, the second shared at once (`split`'s module docs). Its joins are those above.
//!
//! # Scopes
//!
//! A scope's spawned closures are heap tasks on the same queues: pushed on the spawning
//! thread's deque (from a thread without a `Ctx` of the runtime, into the injector), counted
//! by a latch the scope's owner waits on while it runs tasks; a broadcast's parts go to each
//! thread's *mail*, which it reads before any other work (see `scope`).
//!
//! # Regions
//!
//! A thread running tasks runs the regions it starts inline (as a region's members do): a
//! region needs its team's workers at once, and they may be busy with tasks that wait for
//! this one. A worker serving a region member shares the frames of its joins
//! with the workers outside the team, and takes region posts only between tasks. A region's
//! member that is no worker runs its joins as index 0 when that is free, and else inline: it
//! must not hand them to workers that may all be members of its region, waiting for it.
//!
//! # Layering
//!
//! The engine sits above the runtime: it works on the runtime's state (`runtime::Inner`, to
//! which it adds the methods here) and on the calling thread's member (`runtime::current`),
//! and installing a runtime ([`install`]) is its own, since that hides its context. The
//! runtime's state holds only the queues ([`Tasks`](tasks::Tasks)), in `tasks`, which sits
//! below both and names neither; `runtime` and `runtime::current` name nothing else of it.

mod beat;
mod ctx;
mod deque;
mod frame;
mod job;
mod join;
mod latch;
mod run;
pub(crate) mod scope;
mod share;
mod split;
pub(crate) mod tasks;
mod wake;

use std::cell::Cell;
use std::time::{Duration, Instant};

use deque::Worker;
pub(crate) use join::{join, join_current, Share};
pub use split::PieceLen;

/// Calls `f` with the current runtime: the one whose tasks the calling thread runs, else the
/// installed or global one.
pub(crate) fn on_current<R>(f: impl FnOnce(&Runtime) -> R) -> R {
    ctx::with(|c| match c {
        Some(c) => f(c.rt),
        None => Runtime::with_current(f),
    })
}

/// Runs `f` as a thread that runs no task: for [`Runtime::install_here`], whose runtime is the
/// current one inside `f` even on a thread that runs another runtime's tasks (or this one's),
/// so that a `Ctx` present always belongs to the current runtime.
fn without_ctx<R>(f: impl FnOnce() -> R) -> R {
    ctx::hide(f)
}

/// Runs `f` with `rt` installed on the calling thread.
///
/// While `f` runs, the thread runs no task of any runtime as far as the work-stealing engine
/// is concerned: a call in `f` goes to `rt` from outside its pool (see [`without_ctx`]).
pub(crate) fn install<R>(rt: &Runtime, f: impl FnOnce() -> R) -> R {
    without_ctx(|| crate::sys::scoped::set(rt, f))
}

use job::TaskRef;
use tasks::Local;

use crate::payload::catch;
use crate::runtime::Inner;
use crate::sync::{AtomicU32, Ordering};
use crate::wait::Event;
use crate::Runtime;

/// While calls run on a pool's tasks, how often its policy is asked again how many threads
/// take them ([`Policy::task_refresh`](crate::Policy::task_refresh)): as often as ASAT looks
/// at the machine between its readings.
pub const TASK_REFRESH: Duration = Duration::from_millis(5);

/// The flag of a thread's countdown word while the thread keeps fewer frames than it wants
/// (`frame::Frames::wanted`): no join is quick then, and the quickest join reads one word
/// (see [`ctx::quick`]).
const HELD: u32 = 1 << 31;

/// A call from outside counted in [`Tasks::calls`](tasks::Tasks::calls), whose end the policy
/// is told of ([`Policy::task_call_end`](crate::Policy::task_call_end)).
struct Call<'a>(&'a Inner);

impl Drop for Call<'_> {
    fn drop(&mut self) {
        self.0.tasks().calls.fetch_sub(1, Ordering::Relaxed);
        // A policy's panic must not unwind out of a drop that may run during an unwinding.
        let _ = catch(|| self.0.policy.task_call_end());
    }
}

/// A thread's place in its runtime's work stealing (see the module docs).
pub(crate) struct Ctx<'a> {
    /// The runtime (a worker's own handle, or the caller's).
    rt: &'a Runtime,
    index: usize,
    /// The event this thread sleeps on (its latches' too).
    event: &'a Event,
    deque: &'a Worker<TaskRef>,
    /// Joins left until the next clock read, with the [`HELD`] flag while the thread keeps
    /// fewer frames than it wants (this index's of
    /// [`Tasks::countdowns`](tasks::Tasks::countdowns)).
    countdown: &'a AtomicU32,
    /// The frames of the joins this thread is inside (see `frame`).
    frames: frame::Frames,
    /// The interval the countdown was last set to.
    interval: &'a Cell<u32>,
    /// Whether the thread's last loop piece was coarse (`split`).
    coarse_items: &'a Cell<bool>,
    last_read: Cell<Instant>,
    last_beat: Cell<Instant>,
    /// Where the next steal starts.
    victim: Cell<usize>,
    /// Frames shared since the last beat was taken (see [`Ctx::offer_slow`]).
    burst: Cell<usize>,
    /// Joins left that share their frames at once (`beat::coarse`).
    coarse: Cell<u32>,
    /// Whether the next clock read measures no interval of joins: the first of a start (a
    /// call's or a stolen task's), or one a burst of shares asked for at the next join (see
    /// [`Ctx::offer_slow`]). It is not judged for coarse joins and leaves the interval as it
    /// is.
    unjudged: Cell<bool>,
}

impl<'a> Ctx<'a> {
    fn new(rt: &'a Runtime, index: usize, local: &'a mut Local) -> Self {
        let inner = rt.inner();
        let now = Instant::now();
        let Local {
            deque,
            interval,
            coarse_items,
        } = local;
        debug_assert!(deque.is_empty());
        interval.set(beat::call_interval(interval.get()));
        let countdown = &inner.tasks().countdowns[index];
        // A new start reads its clock at its first join, and keeps frames (it has none).
        countdown.store(1 | HELD, Ordering::Relaxed);
        Ctx {
            rt,
            index,
            event: inner.idle_event(index),
            deque,
            countdown,
            frames: frame::Frames::new(),
            interval,
            coarse_items,
            last_read: Cell::new(now),
            last_beat: Cell::new(beat::call_beat(now, interval.get())),
            victim: Cell::new(index + 1),
            burst: Cell::new(0),
            coarse: Cell::new(0),
            unjudged: Cell::new(true),
        }
    }

    /// The runtime's shared state.
    #[inline]
    fn inner(&self) -> &'a Inner {
        self.rt.inner()
    }

    /// Whether this thread may take tasks from others.
    #[inline]
    fn allowed(&self) -> bool {
        self.index < self.inner().tasks().active()
    }

    /// Sets the countdown to `n` joins, flagged [`HELD`] while the thread wants frames.
    #[inline]
    fn set_countdown(&self, n: u32) {
        let held = if self.frames.wanted() { HELD } else { 0 };
        self.countdown.store(n | held, Ordering::Relaxed);
    }

    /// Flags the countdown [`HELD`] or clears the flag, as the thread's frames now say: after
    /// a frame was linked, unlinked or shared. A poke that lands between the load and the
    /// store is lost (see the module docs).
    #[inline]
    fn frames_changed(&self) {
        let c = self.countdown.load(Ordering::Relaxed);
        let set = if self.frames.wanted() {
            c | HELD
        } else {
            c & !HELD
        };
        if set != c {
            self.countdown.store(set, Ordering::Relaxed);
        }
    }
}
