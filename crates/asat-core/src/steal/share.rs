//! When a thread shares its frames: the countdown's slow path at a join (the thread's beat,
//! coarse joins, bursts that feed idle threads), the policy asked again while calls run, and a
//! loop's split (see the module docs of `steal`, "A join" and "Loops").

use std::time::Instant;

use super::{beat, Ctx, HELD, TASK_REFRESH};
use crate::payload::catch;
use crate::sync::Ordering;

impl Ctx<'_> {
    /// Called at a join's start, its frame pushed: every `interval` joins, shares work if
    /// someone could take it and the thread's beat is due (see the module docs).
    #[inline]
    pub(super) fn offer(&self) {
        let c = self.countdown.load(Ordering::Relaxed);
        if c & !HELD > 1 {
            self.countdown.store(c - 1, Ordering::Relaxed);
        } else {
            self.offer_slow();
        }
    }

    #[cold]
    pub(super) fn offer_slow(&self) {
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
            if !self.alone() {
                self.share_all(idle);
            }
            self.burst.set(0);
            self.last_beat.set(now);
            return;
        }
        if !beat::beat_due(now - self.last_beat.get(), searching) || self.alone() {
            return;
        }
        // With every thread busy the frame is shared all the same, for the first to finish:
        // a thread whose joins come between long leaves has no other chance to pass work on.
        // With no other thread that may take it, it stays private: shared, it would be taken
        // back from the deque, and the next joins would link frames again (`frame`'s docs):
        // a few percent of a one-thread sum over a tree of 16.7 M nodes.
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

    /// Whether no other thread could take a frame this thread shares: it is index 0 and the
    /// policy lets no worker take tasks.
    fn alone(&self) -> bool {
        self.index == 0 && self.inner().tasks().active() <= 1
    }

    /// Asks the policy again how many threads take tasks, when no thread did for
    /// [`TASK_REFRESH`] (module docs, "How many threads take tasks").
    pub(super) fn refresh(&self, now: Instant) {
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
    pub(super) fn share_all(&self, idle: bool) {
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
    pub(super) fn share_now(&self) {
        if self.share_oldest() {
            self.inner().tasks_notify();
        }
    }

    /// Before a loop's piece, the last read at `last`: whether the loop splits its rest in two
    /// now. After a coarse piece always (`split`'s module docs), the policy asked again as at a
    /// beat ([`Ctx::refresh`]); else as [`Ctx::split_due`] says.
    pub(super) fn split_now(&self, last: Instant) -> bool {
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
    pub(super) fn split_due(&self, now: Instant) -> bool {
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
    pub(super) fn share_oldest(&self) -> bool {
        match self.frames.share_oldest() {
            Some(t) => {
                self.frames_changed();
                self.deque.push(t);
                true
            }
            None => false,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::job::StackJob;
    use super::super::latch::Latch;
    use super::*;
    use crate::{Fixed, Runtime};

    /// Whether a due beat of index 0 of a pool of two, with `active` threads allowed to take
    /// tasks, shares the frame it keeps (pushes it on its deque). A searcher is counted, as
    /// if awake, so that the beat starts no worker: none may steal the frame before it is
    /// checked here.
    fn beat_shares(active: usize) -> bool {
        let rt = Runtime::builder().policy(Fixed::new(2)).build().unwrap();
        let tasks = rt.inner().tasks();
        tasks.set_active(active);
        tasks.searching.store(1, Ordering::SeqCst);
        let mut local = tasks.locals[0].lock();
        let c = Ctx::new(&rt, 0, &mut local);
        let job = StackJob::new(|| 1, Latch::on(c.event));
        let frame = c.frames.frame(job.as_task());
        // SAFETY: `frame` is unlinked below, before it goes; nothing is linked above it.
        unsafe { c.frames.push(&frame) };
        c.frames_changed();
        c.last_beat.set(beat::first_beat(Instant::now()));
        c.offer_slow();
        let shared = c.frames.pop(&frame);
        match c.deque.pop() {
            Some(t) => assert!(shared && t.is(frame.task()), "the frame's task was pushed"),
            None => assert!(!shared, "a shared frame's task is on the deque"),
        }
        tasks.searching.store(0, Ordering::SeqCst);
        assert_eq!(rt.workers_started(), 0, "no worker started");
        shared
    }

    #[test]
    fn a_due_beat_shares_a_frame_only_where_another_thread_may_take_it() {
        // Nobody else may take tasks: sharing would only make the next joins keep frames.
        assert!(!beat_shares(1));
        assert!(beat_shares(2));
    }
}
