//! Finding, running and waiting for tasks: a thread's search of its mail, its deque, the
//! others' deques and the injector; a task run as a new start; the wait of a thread without
//! work (spin as a searcher, then sleep); and a worker thread's main loop (see the module docs
//! of `steal`, "Sleep" and "How many threads take tasks").

use std::time::Instant;

use super::deque::{Injector, Steal};
use super::job::TaskRef;
use super::{beat, ctx, Ctx};
use crate::payload::catch;
use crate::runtime::Inner;
use crate::sync::Ordering;
use crate::wait::{spin_until, WaitInfo, WaitOutcome, WaitSite, IDLE_SPIN_CAP};
use crate::Runtime;

impl Ctx<'_> {
    /// A task to run: one from this thread's mail, else the newest of its own deque, else one
    /// stolen from another thread's (when allowed), else a call from outside (workers only).
    pub(super) fn find_task(&self) -> Option<TaskRef> {
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
    pub(super) fn task_member(&self) -> crate::MemberInfo {
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
    pub(super) fn run_task(&self, t: TaskRef) {
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
    pub(super) fn run_until(&self, done: &dyn Fn() -> bool, site: WaitSite) {
        while !done() {
            match self.find_task() {
                Some(t) => self.run_task(t),
                None => self.idle(done, site),
            }
        }
    }

    /// Waits, without work, until `done()` or a task this thread may take is visible: spins
    /// as a searcher for the wait strategy's limit, then sleeps on its event.
    pub(super) fn idle(&self, done: &dyn Fn() -> bool, site: WaitSite) {
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
    pub(super) fn takes_calls(&self) -> bool {
        self.index != 0
    }
}

/// The oldest task of `queue`, if any.
pub(super) fn take(queue: &Injector<TaskRef>) -> Option<TaskRef> {
    loop {
        match queue.steal() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => {}
        }
    }
}

impl Inner {
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
