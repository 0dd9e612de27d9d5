//! Work stealing: how `join` shares its second closure with the runtime's threads, loops on
//! tasks their halves, and scopes their spawned jobs.
//!
//! # Threads and queues
//!
//! Every thread that runs tasks of a runtime has a [`Ctx`]: its index, its deque
//! (crossbeam-deque's LIFO `Worker`, whose `Stealer`s every other thread of the runtime can
//! take from), and its stack of pending *frames*, one per `join` it is inside. The workers
//! (indices `1..max_threads`) have theirs for life; a thread that calls into the runtime from
//! outside takes index 0 for the length of its call when nobody else holds it, and otherwise
//! hands the call to the workers through the injector and sleeps until it is done (the *cold*
//! path). A call made while a thread runs tasks of the runtime is a task of that thread.
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
//! whose joins come between long leaves has no other chance to pass work on). Joins that come
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
pub(crate) mod scope;
mod split;
pub(crate) mod tasks;

use std::cell::Cell;
use std::time::{Duration, Instant};

use deque::{Injector, Steal, Worker};
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
use crate::wait::{spin_until, Event, WaitInfo, WaitOutcome, WaitSite, IDLE_SPIN_CAP};
use crate::Runtime;

/// While calls run on a pool's tasks, how often its policy is asked again how many threads
/// take them ([`Policy::task_refresh`](crate::Policy::task_refresh)).
pub const TASK_REFRESH: Duration = Duration::from_millis(10);

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

    /// Called at a join's start, its frame pushed: every `interval` joins, shares work if
    /// someone could take it and the thread's beat is due (see the module docs).
    #[inline]
    fn offer(&self) {
        let c = self.countdown.load(Ordering::Relaxed);
        if c & !HELD > 1 {
            self.countdown.store(c - 1, Ordering::Relaxed);
        } else {
            self.offer_slow();
        }
    }

    #[cold]
    fn offer_slow(&self) {
        let now = Instant::now();
        let since_read = now - self.last_read.get();
        // Coarse joins share at once, for `COARSE_JOINS` joins from the last read that found
        // them so, each reading the clock. Some reads measure no joins' spacing (`unjudged`).
        let judged = !self.unjudged.replace(false);
        // A poke (module docs) zeroed the countdown: fewer joins than the interval came since
        // the last read, so a quick read says nothing of their spacing.
        let poked = self.countdown.load(Ordering::Relaxed) & !HELD == 0;
        let coarse = if judged && beat::coarse(self.interval.get(), since_read) {
            beat::COARSE_JOINS
        } else if judged {
            self.coarse.get().saturating_sub(1)
        } else {
            // A burst's reads do not use up the coarse joins' count.
            self.coarse.get()
        };
        self.coarse.set(coarse);
        let interval = if coarse > 0 {
            1
        } else if judged {
            beat::next_interval(self.interval.get(), since_read, poked)
        } else {
            self.interval.get()
        };
        self.interval.set(interval);
        self.set_countdown(interval);
        self.last_read.set(now);
        self.refresh(now);
        let tasks = self.inner().tasks();
        let searching = tasks.searching.load(Ordering::Relaxed) > 0;
        let idle = searching || tasks.sleeping.load(Ordering::Relaxed) > 0;
        if !idle {
            // Workers may be still to start (a region starts only its team's).
            self.rt.start_task_workers();
        }
        if coarse > 0 {
            self.share_all(idle);
            self.burst.set(0);
            self.last_beat.set(now);
            return;
        }
        if !beat::beat_due(now - self.last_beat.get(), searching) {
            return;
        }
        // With every thread busy the frame is shared all the same, for the first to finish:
        // a thread whose joins come between long leaves has no other chance to pass work on.
        if self.share_oldest() && idle {
            // Frames shared at this beat so far; the beat stays due, one more frame at each
            // join, while idle threads outnumber them (a recursion's descent then feeds every
            // idle thread at once, as the frames go by, instead of one a beat).
            let burst = self.burst.get();
            self.inner().wake_sleeper(burst);
            let idle =
                tasks.searching.load(Ordering::Relaxed) + tasks.sleeping.load(Ordering::Relaxed);
            if burst + 1 < idle {
                self.burst.set(burst + 1);
                // The next join comes back here, keeping a frame to share: one a join, not
                // one an interval of joins (a descent whose joins ran quick in between left
                // threads idle for a leaf's time). That read measures one join's spacing.
                self.unjudged.set(true);
                self.set_countdown(1);
                return;
            }
        }
        self.burst.set(0);
        self.last_beat.set(now);
    }

    /// Asks the policy again how many threads take tasks, when no thread did for
    /// [`TASK_REFRESH`] (module docs, "How many threads take tasks").
    fn refresh(&self, now: Instant) {
        let inner = self.inner();
        if !inner.tasks().claim_ask(now, TASK_REFRESH) {
            return;
        }
        // A panic in the policy's hook keeps the number (the panic hook has reported it).
        if let Some(Some(n)) = catch(|| inner.policy.task_refresh(inner.max_threads)) {
            inner.set_task_workers(n);
        }
    }

    /// Shares every private frame, oldest first, waking a sleeper for each while threads are
    /// `idle` (unless searchers will take it): a coarse join's (`beat::coarse`).
    fn share_all(&self, idle: bool) {
        let mut shared = 0;
        while self.share_oldest() {
            if idle {
                self.inner().wake_sleeper(shared);
            }
            shared += 1;
        }
    }

    /// Shares the oldest private frame now, beat or not, and wakes a sleeper for it unless a
    /// searcher is awake: a loop's split, whose frame is the newest (see `split`).
    fn share_now(&self) {
        if self.share_oldest() {
            self.inner().tasks_notify();
        }
    }

    /// Before a loop's piece, the last read at `last`: whether the loop splits its rest in two
    /// now. After a coarse piece always (`split`'s module docs), the policy asked again as at a
    /// beat ([`Ctx::refresh`]); else as [`Ctx::split_due`] says.
    fn split_now(&self, last: Instant) -> bool {
        if self.coarse_items.get() {
            self.refresh(last);
            return true;
        }
        self.split_due(last)
    }

    /// At the end of a loop's piece, read at `now`: whether the loop should split its rest in
    /// two, sharing one half. The thread's beat decides, as for a join ([`Ctx::offer`]); when
    /// it is due and the thread has an older private frame (an enclosing join's, which holds
    /// more work), that frame is shared instead and the loop goes on whole.
    fn split_due(&self, now: Instant) -> bool {
        self.refresh(now);
        let tasks = self.inner().tasks();
        let searching = tasks.searching.load(Ordering::Relaxed) > 0;
        if !searching && tasks.sleeping.load(Ordering::Relaxed) == 0 {
            self.rt.start_task_workers();
            return false;
        }
        if !beat::beat_due(
            now.saturating_duration_since(self.last_beat.get()),
            searching,
        ) {
            return false;
        }
        self.last_beat.set(now);
        if self.share_oldest() {
            if !searching {
                self.inner().tasks_notify();
            }
            return false;
        }
        true
    }

    /// Pushes the oldest private frame on the deque; false when every frame is shared.
    fn share_oldest(&self) -> bool {
        match self.frames.share_oldest() {
            Some(t) => {
                self.frames_changed();
                self.deque.push(t);
                true
            }
            None => false,
        }
    }

    /// A task to run: one from this thread's mail, else the newest of its own deque, else one
    /// stolen from another thread's (when allowed), else a call from outside (workers only).
    fn find_task(&self) -> Option<TaskRef> {
        let tasks = self.inner().tasks();
        // Two loads while the mail is empty (a steal from it may fence); a task pushed just
        // after is seen by the check before sleeping (`idle`).
        let mail = &tasks.mail[self.index];
        if !mail.is_empty() {
            if let Some(t) = take(mail) {
                return Some(t);
            }
        }
        if let Some(t) = self.deque.pop() {
            return Some(t);
        }
        let n = tasks.stealers.len();
        let (steal, inject) = (self.allowed(), self.takes_calls());
        loop {
            let mut retry = false;
            let start = self.victim.get();
            for k in (0..n).filter(|_| steal) {
                let i = (start + k) % n;
                if i == self.index {
                    continue;
                }
                match tasks.stealers[i].steal() {
                    Steal::Success(t) => {
                        self.victim.set(i);
                        return Some(t);
                    }
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if inject {
                match tasks.injector.steal() {
                    Steal::Success(t) => return Some(t),
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// This thread as a policy's hooks see a thread that runs tasks
    /// ([`MemberInfo::tasks`](crate::MemberInfo::tasks)).
    fn task_member(&self) -> crate::MemberInfo {
        let inner = self.inner();
        crate::MemberInfo {
            member: self.index,
            team_size: inner.tasks().active(),
            region: inner.regions_run(),
            thread: crate::ThreadHandle::current(),
            tasks: true,
        }
    }

    /// Runs a task taken from a queue, as a new start: its first join may share at once.
    /// The policy's safe point comes first (see the module docs).
    fn run_task(&self, t: TaskRef) {
        let inner = self.inner();
        // A panic in the policy's hook must not keep the task from running (its owner waits).
        let _ = catch(|| inner.policy.safe_point(&self.task_member()));
        let now = Instant::now();
        self.last_beat.set(beat::first_beat(now));
        self.last_read.set(now);
        // Its first join reads the clock, which measures no joins' spacing (judged, each
        // stolen task's first read doubled the interval: a thief of many small tasks came to
        // read its clock every few dozen joins, leaves of milliseconds and all).
        self.unjudged.set(true);
        self.set_countdown(1);
        // SAFETY: `t` was taken out of a queue, which holds each job once (job module docs).
        unsafe { t.run() };
        // A task that made no join leaves the next read (an enclosing task's, after it) judged.
        self.unjudged.set(false);
    }

    /// Runs tasks until `done()`; sleeps when there are none.
    fn run_until(&self, done: &dyn Fn() -> bool, site: WaitSite) {
        while !done() {
            match self.find_task() {
                Some(t) => self.run_task(t),
                None => self.idle(done, site),
            }
        }
    }

    /// Waits, without work, until `done()` or a task this thread may take is visible: spins
    /// as a searcher for the wait strategy's limit, then sleeps on its event.
    fn idle(&self, done: &dyn Fn() -> bool, site: WaitSite) {
        let inner = self.inner();
        let tasks = inner.tasks();
        let allowed = self.allowed();
        let calls = self.takes_calls();
        let index = self.index;
        // A worker kept out also wakes when the number lets it in (module docs).
        let ready = || {
            done()
                || tasks.visible(index, allowed, calls)
                || (!allowed && index < tasks.active.load(Ordering::SeqCst))
        };
        let info = WaitInfo {
            site,
            member: self.index,
            team_size: inner.max_threads,
        };
        let wait = &*inner.wait;
        let mut limit = catch(|| wait.spin_limit(&info)).unwrap_or_default();
        if site == WaitSite::Idle {
            limit = limit.min(IDLE_SPIN_CAP);
        }
        let start = Instant::now();
        if allowed {
            tasks.searching.fetch_add(1, Ordering::SeqCst);
            tasks.poke_others(self.index);
        }
        let gave_up = spin_until(start, limit, ready);
        if allowed {
            tasks.searching.fetch_sub(1, Ordering::SeqCst);
        }
        let mut blocked = false;
        if gave_up {
            if allowed {
                tasks.sleeping.fetch_add(1, Ordering::SeqCst);
            }
            blocked = self.event.sleep_until(&|| {
                crate::sync::fence_seq_cst();
                ready()
            });
            if allowed {
                tasks.sleeping.fetch_sub(1, Ordering::SeqCst);
            }
        }
        if catch(|| wait.wants_outcomes()).unwrap_or(false) {
            let outcome = WaitOutcome {
                waited: start.elapsed(),
                blocked,
            };
            let _ = catch(|| wait.waited(&info, &outcome));
        }
    }

    /// Whether this thread takes calls handed in from outside: every worker, whether or not
    /// the policy lets it take others' tasks (a call handed in is as its caller's own thread,
    /// and must be run even if the policy's number falls after it was handed in); not index 0,
    /// whose holder would otherwise stay in another caller's whole call after its own.
    #[inline]
    fn takes_calls(&self) -> bool {
        self.index != 0
    }
}

/// The oldest task of `queue`, if any.
fn take(queue: &Injector<TaskRef>) -> Option<TaskRef> {
    loop {
        match queue.steal() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => {}
        }
    }
}

impl Inner {
    /// Sets how many threads may take tasks, waking the workers a rise lets in (module docs,
    /// "How many threads take tasks").
    pub(crate) fn set_task_workers(&self, n: usize) {
        let (old, new) = self.tasks().set_active(n);
        for i in old..new {
            self.idle_event(i).notify_sleepers();
        }
    }

    /// Puts `t` in thread `index`'s mail, for it alone to run, and wakes it if it sleeps.
    pub(crate) fn mail(&self, index: usize, t: TaskRef) {
        self.tasks().mail[index].push(t);
        self.idle_event(index).notify_sleepers();
    }

    /// Pushes `t` where the threads of the runtime find it: on the calling thread's deque
    /// when it runs tasks of this runtime, else in the injector (any worker takes it); and
    /// wakes a thread for it.
    pub(crate) fn push_task(&self, rt: &Runtime, t: TaskRef) {
        ctx::with(|c| match c {
            Some(c) if c.rt.id() == rt.id() => {
                c.deque.push(t);
                self.tasks_notify();
            }
            _ => {
                self.tasks().injector.push(t);
                self.calls_notify();
            }
        })
    }

    /// Wakes one sleeping worker after a call was handed in through the injector: any worker
    /// takes calls (see [`Ctx::takes_calls`]). A searcher awake is no reason to skip the wake,
    /// as it is for a shared frame: it may be index 0's holder, which takes no calls.
    pub(crate) fn calls_notify(&self) {
        let tasks = self.tasks();
        crate::sync::fence_seq_cst();
        let n = self.max_threads;
        let start = tasks.next_wake.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            let i = (start + k) % n;
            let ev = self.idle_event(i);
            if i != 0 && ev.has_sleepers() {
                ev.notify_sleepers();
                return;
            }
        }
    }

    /// Wakes one sleeping thread that may take tasks, unless a searcher is awake: called after
    /// a task was pushed on a deque.
    pub(crate) fn tasks_notify(&self) {
        self.wake_sleeper(0);
    }

    /// Wakes one sleeping thread that may take tasks, unless more than `shared` searchers are
    /// awake (they take the first `shared` frames pushed): called after a push.
    fn wake_sleeper(&self, shared: usize) {
        let tasks = self.tasks();
        crate::sync::fence_seq_cst();
        if tasks.searching.load(Ordering::SeqCst) > shared
            || tasks.sleeping.load(Ordering::SeqCst) == 0
        {
            return;
        }
        let n = tasks.active();
        let start = tasks.next_wake.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            let ev = self.idle_event((start + k) % n);
            if ev.has_sleepers() {
                ev.notify_sleepers();
                return;
            }
        }
    }

    /// Runs worker `index`'s tasks and calls `serve` between them, until `stop()`: the main
    /// loop of a worker thread. `serve` returns whether it did something (ran a region member);
    /// `stop` and `posted` are checked before each sleep, and whoever makes either true moves
    /// the worker's event.
    pub(crate) fn worker_loop(
        &self,
        rt: &Runtime,
        index: usize,
        stop: &dyn Fn() -> bool,
        posted: &dyn Fn() -> bool,
        serve: &mut dyn FnMut() -> bool,
    ) {
        let tasks = self.tasks();
        let mut local = tasks.locals[index].lock();
        let ctx = Ctx::new(rt, index, &mut local);
        let member = crate::runtime::current::Member::new(index, self.max_threads, self);
        // Whether the policy placed this worker for tasks since it was last idle or served a
        // region (whose placement may differ).
        let mut placed = false;
        ctx::enter(&ctx, || loop {
            if stop() {
                break;
            }
            if serve() {
                placed = false;
                continue;
            }
            if let Some(t) = ctx.find_task() {
                if !placed {
                    placed = true;
                    let _ = catch(|| self.place(&ctx.task_member(), false));
                }
                let _member = crate::runtime::current::enter(member);
                ctx.run_task(t);
                continue;
            }
            placed = false;
            ctx.idle(&|| stop() || posted(), WaitSite::Idle);
        });
    }
}
