//! [`Tasks`]: a runtime's task queues and the counts the sleep protocol of the work-stealing
//! engine reads (the protocols are in `steal`'s module docs).
//!
//! The runtime's state (`runtime::Inner`) holds them, and the engine (`steal`) works on that
//! state: this module sits below both and names neither, only the queues' types (`deque`,
//! `job`). Its fields are the engine's to read and write.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use super::deque::{Injector, Stealer, Worker};
use super::job::TaskRef;
use crate::sync::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// A runtime's queues and the counts its sleep protocol reads.
pub(crate) struct Tasks {
    pub(super) injector: Injector<TaskRef>,
    pub(super) stealers: Box<[Stealer<TaskRef>]>,
    /// Index `i`'s deque and beat interval: locked by worker `i` for its life, and by a thread
    /// calling in from outside for the length of its call (index 0).
    pub(super) locals: Box<[Mutex<Local>]>,
    /// Threads awake and looking for tasks.
    pub(super) searching: CachePadded<AtomicUsize>,
    /// Threads that may take tasks and sleep.
    pub(super) sleeping: CachePadded<AtomicUsize>,
    /// Workers with an index below it may take tasks (the policy's last answer).
    pub(super) active: AtomicUsize,
    /// When the policy was last asked for that number, in nanoseconds after `epoch`.
    asked: AtomicU64,
    #[cfg_attr(loom, allow(dead_code))]
    epoch: Instant,
    /// Where the next scan for a sleeper to wake starts.
    pub(super) next_wake: AtomicUsize,
    /// Calls from outside the pool running on it now (see [`Call`](super::Call)).
    pub(super) calls: CachePadded<AtomicUsize>,
    /// Per index: the joins left until that index's thread reads its clock (see
    /// [`Ctx::offer`](super::Ctx::offer)), flagged while it wants frames (`HELD`); a thread
    /// that starts to look for work sets the others' to zero (the flag goes with it: the
    /// thread's next join takes the long way, which puts the flag back where it is due).
    pub(super) countdowns: Box<[CachePadded<AtomicU32>]>,
    /// Per index: tasks for that index's thread alone (a scope's broadcast), taken before
    /// any other work.
    pub(super) mail: Box<[Injector<TaskRef>]>,
}

/// One index's deque and beat interval (kept from call to call).
pub(crate) struct Local {
    pub(super) deque: Worker<TaskRef>,
    /// Joins between clock reads, as last adapted (see `beat`): kept from call to call.
    pub(super) interval: Cell<u32>,
    /// Whether the last loop piece this index ran was coarse (`beat::coarse`): a loop it
    /// starts splits at once (see `split`).
    pub(super) coarse_items: Cell<bool>,
}

impl Tasks {
    pub(crate) fn new(max_threads: usize) -> Self {
        let locals: Vec<Local> = (0..max_threads)
            .map(|_| Local {
                deque: Worker::new_lifo(),
                interval: Cell::new(1),
                coarse_items: Cell::new(false),
            })
            .collect();
        Tasks {
            injector: Injector::new(),
            stealers: locals.iter().map(|l| l.deque.stealer()).collect(),
            locals: locals.into_iter().map(Mutex::new).collect(),
            searching: CachePadded::new(AtomicUsize::new(0)),
            sleeping: CachePadded::new(AtomicUsize::new(0)),
            active: AtomicUsize::new(max_threads),
            asked: AtomicU64::new(0),
            epoch: Instant::now(),
            next_wake: AtomicUsize::new(0),
            calls: CachePadded::new(AtomicUsize::new(0)),
            countdowns: (0..max_threads)
                .map(|_| CachePadded::new(AtomicU32::new(1)))
                .collect(),
            mail: (0..max_threads).map(|_| Injector::new()).collect(),
        }
    }

    /// Tells every other thread that may share work that `me` looks for some: each reads its
    /// clock at its next join, whatever its interval (see [`Ctx::offer`](super::Ctx::offer)).
    pub(super) fn poke_others(&self, me: usize) {
        for (i, c) in self.countdowns.iter().enumerate() {
            if i != me && c.load(Ordering::Relaxed) > 0 {
                c.store(0, Ordering::Relaxed);
            }
        }
    }

    /// Whether calls from outside the pool run on its tasks now: a loop started meanwhile
    /// runs as tasks beside them rather than as a region that must wait for its team.
    pub(crate) fn busy(&self) -> bool {
        self.calls.load(Ordering::Relaxed) > 0
    }

    /// Whether a queue that thread `index` looks at holds a task (for a thread about to
    /// sleep): its mail, the other threads' deques when it may steal, the injector when it
    /// takes calls.
    pub(super) fn visible(&self, index: usize, steal: bool, calls: bool) -> bool {
        !self.mail[index].is_empty()
            || (calls && !self.injector.is_empty())
            || (steal && self.stealers.iter().any(|s| !s.is_empty()))
    }

    /// Sets how many threads may take tasks; returns the numbers before and after.
    pub(super) fn set_active(&self, n: usize) -> (usize, usize) {
        let n = n.clamp(1, self.locals.len());
        let old = self.active.load(Ordering::Relaxed);
        if old != n {
            // SeqCst: against a kept-out sleeper's check (`steal`'s module docs, "How many
            // threads take tasks").
            self.active.store(n, Ordering::SeqCst);
        }
        (old, n)
    }

    /// Marks the policy as asked for the number at `now`; false when another thread did so
    /// less than `every` before, or took the mark first.
    pub(super) fn claim_ask(&self, now: Instant, every: Duration) -> bool {
        let last = self.asked.load(Ordering::Relaxed);
        // A loom model must not take a branch on the real clock (its executions would differ
        // on a busy machine): there every ask is due, and only the race for the mark is left.
        #[cfg(loom)]
        let at = {
            let _ = now;
            last.saturating_add(every.as_nanos() as u64)
        };
        #[cfg(not(loom))]
        let at = now.saturating_duration_since(self.epoch).as_nanos() as u64;
        at.saturating_sub(last) >= every.as_nanos() as u64
            && self
                .asked
                .compare_exchange(last, at, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    #[inline]
    pub(super) fn active(&self) -> usize {
        self.active.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("searching", &self.searching.load(Ordering::Relaxed))
            .field("sleeping", &self.sleeping.load(Ordering::Relaxed))
            .field("active", &self.active())
            .finish_non_exhaustive()
    }
}
