//! [`Shared`]: the state a gang scheduler's thread and its gang threads share (the matrix's
//! per-slot and per-cell control words, counters, settings, the signal's identity), and the
//! bookkeeping around it: waking the scheduler, runnable counts, whether the scheduler may be
//! used. The switching protocol that runs on it is in the [`switch`](crate::switch) module.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crossbeam_utils::CachePadded;

use crate::domain::{Domain, SLOTS};
use crate::sys;
use crate::{Error, Matrix};

// A cell's state bits (the protocol is in the `switch` module docs).
pub(crate) const BOUND: u32 = 1;
pub(crate) const SIGNALED: u32 = 2;
pub(crate) const KILLING: u32 = 4;
pub(crate) const PARKED: u32 = 8;
pub(crate) const IDLE: u32 = 16;
pub(crate) const CLAIMING: u32 = 32;
/// With `IDLE`: the cell's gang was dropped while this thread was still bound to it (its
/// `Member` was forgotten). The thread is never stopped again; the cell stays reserved in the
/// matrix until the thread leaves (at its exit at the latest).
pub(crate) const ORPHAN: u32 = 64;

/// No slot is running.
pub(crate) const NO_SLOT: usize = usize::MAX;

/// One cell of the matrix: the thread bound to it and its stop state.
#[derive(Debug, Default)]
pub(crate) struct CellCtl {
    pub(crate) state: AtomicU32,
    /// The bound thread's kernel thread id.
    pub(crate) tid: AtomicI32,
    pub(crate) stopped_ns: AtomicU64,
}

/// One slot (row) of the matrix.
#[derive(Debug)]
pub(crate) struct SlotCtl {
    /// 1 while the slot runs.
    pub(crate) run: CachePadded<AtomicU32>,
    /// Moves when `run` becomes 1 or a cell of the slot is orphaned; the futex its parked
    /// threads sleep on (module docs).
    pub(crate) epoch: AtomicU32,
    /// Gangs placed in this slot (mirrors the matrix for the scheduler, which takes no lock).
    pub(crate) gangs: AtomicU32,
    /// Bound threads that are not idle.
    pub(crate) runnable: AtomicU32,
    pub(crate) cells: Box<[CellCtl]>,
}

impl SlotCtl {
    /// Wakes the slot's parked threads to look at their condition again; the condition was
    /// written (`SeqCst`) before.
    pub(crate) fn wake_parked(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&self.epoch, i32::MAX);
    }
}

/// Moves in a child after each `fork()` (module docs of `switch`, "Fork").
pub(crate) static GENERATION: AtomicU32 = AtomicU32::new(0);

/// The process generation: how many `fork()`s separate this process from the one that
/// loaded the crate. A scheduler built in another generation is a forked child's copy.
pub(crate) fn process_generation() -> u32 {
    // Relaxed: it moves only in a child's single thread, before any other thread of the child
    // exists (threads started later see it through their spawn).
    GENERATION.load(Ordering::Relaxed)
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) switches: AtomicU64,
    pub(crate) early_switches: AtomicU64,
    pub(crate) timed_switches: AtomicU64,
    pub(crate) stop_ns_total: AtomicU64,
    pub(crate) stop_ns_max: AtomicU64,
    pub(crate) signals: AtomicU64,
    pub(crate) signal_stops: AtomicU64,
    pub(crate) cooperative_stops: AtomicU64,
    pub(crate) deferred_stops: AtomicU64,
    pub(crate) late_stops: AtomicU64,
    pub(crate) ignored_signals: AtomicU64,
    pub(crate) handler_replaced: AtomicU64,
    pub(crate) domain_switches: AtomicU64,
    pub(crate) domain_timed_switches: AtomicU64,
    pub(crate) domain_stop_ns_total: AtomicU64,
    pub(crate) domain_stop_ns_max: AtomicU64,
    pub(crate) polled_stops: AtomicU64,
}

/// The settings a scheduler's shared state is made from.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) cpus: Vec<usize>,
    pub(crate) max_slots: usize,
    pub(crate) signal: libc::c_int,
    pub(crate) signal_offset: usize,
    pub(crate) quantum: Duration,
    pub(crate) stop_timeout: Duration,
    pub(crate) idle_grace: Duration,
    /// The shared domain joined, if the scheduler is a shared one.
    pub(crate) domain: Option<Domain>,
}

/// Everything the scheduler thread and the gang threads share.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Column -> CPU.
    pub(crate) cpus: Vec<usize>,
    pub(crate) slots: Box<[SlotCtl]>,
    /// Placement in this process (unused with a shared domain, which places in its file).
    pub(crate) matrix: Mutex<Matrix>,
    /// The shared domain (module docs of [`domain`](crate::domain)), if any.
    pub(crate) domain: Option<Domain>,
    /// With a shared domain: the number of the next gang (in the domain's cells).
    pub(crate) next_gang: AtomicU64,
    /// One more than the highest slot ever used.
    pub(crate) high: AtomicUsize,
    /// The scheduler's futex: bumped to wake it.
    pub(crate) wake: CachePadded<AtomicU32>,
    /// Switches asked for with `switch_now`.
    pub(crate) requests: AtomicU64,
    /// Bumped by every thread that parks or unbinds; the scheduler waits on it.
    pub(crate) ack: CachePadded<AtomicU32>,
    pub(crate) current: AtomicUsize,
    pub(crate) shutdown: AtomicBool,
    pub(crate) stats: Counters,
    pub(crate) signal: libc::c_int,
    /// `signal - SIGRTMIN`, as the builder and the errors name it.
    pub(crate) signal_offset: usize,
    pub(crate) quantum: Duration,
    pub(crate) stop_timeout: Duration,
    pub(crate) idle_grace: Duration,
    /// The process that built the scheduler, and its user: the sender of every stop signal.
    pub(crate) pid: libc::pid_t,
    pub(crate) uid: libc::uid_t,
    /// The value every stop signal carries: drawn at random, never 0 (the value of a signal
    /// that carries none).
    pub(crate) token: usize,
    /// The process generation ([`process_generation`]) the scheduler was built in.
    pub(crate) generation: u32,
    /// Set when a check found another action installed for the stop signal, cleared when one
    /// finds asat-gang's handler again.
    pub(crate) handler_lost: AtomicBool,
}

impl Shared {
    pub(crate) fn new(c: Config) -> Self {
        let p = c.cpus.len();
        // A shared domain's rows are all addressable here: a row number is the same in every
        // process.
        let rows = if c.domain.is_some() {
            c.max_slots.max(SLOTS)
        } else {
            c.max_slots
        };
        let slots = (0..rows)
            .map(|_| SlotCtl {
                run: CachePadded::new(AtomicU32::new(0)),
                epoch: AtomicU32::new(0),
                gangs: AtomicU32::new(0),
                runnable: AtomicU32::new(0),
                cells: (0..p).map(|_| CellCtl::default()).collect(),
            })
            .collect();
        // std's RandomState is seeded from the OS's randomness; the clock makes two states
        // of one thread differ too.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(sys::now_ns());
        Self {
            matrix: Mutex::new(Matrix::new(p, c.max_slots)),
            domain: c.domain,
            next_gang: AtomicU64::new(0),
            cpus: c.cpus,
            slots,
            high: AtomicUsize::new(0),
            wake: CachePadded::new(AtomicU32::new(0)),
            requests: AtomicU64::new(0),
            ack: CachePadded::new(AtomicU32::new(0)),
            current: AtomicUsize::new(NO_SLOT),
            shutdown: AtomicBool::new(false),
            stats: Counters::default(),
            signal: c.signal,
            signal_offset: c.signal_offset,
            quantum: c.quantum,
            stop_timeout: c.stop_timeout,
            idle_grace: c.idle_grace,
            pid: sys::getpid(),
            uid: sys::getuid(),
            token: h.finish() as usize | 1,
            generation: process_generation(),
            handler_lost: AtomicBool::new(false),
        }
    }

    /// Wakes the scheduler thread; with a shared domain, the domain's scheduler, in whatever
    /// process it is.
    pub(crate) fn notify(&self) {
        if let Some(d) = &self.domain {
            d.poke();
            return;
        }
        self.wake.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&self.wake, 1);
    }

    /// Whether this is a forked child's copy of a scheduler of its parent (module docs,
    /// "Fork").
    pub(crate) fn forked(&self) -> bool {
        process_generation() != self.generation
    }

    /// Whether the stop signal's handler is asat-gang's (one `sigaction` query); remembered
    /// for [`usable`](Shared::usable).
    pub(crate) fn check_handler(&self) -> bool {
        let ours = sys::handler_installed(self.signal);
        self.handler_lost.store(!ours, Ordering::Relaxed);
        ours
    }

    /// Whether gangs of this scheduler may be created and joined now: not in a forked child,
    /// and not while the stop signal's handler is someone else's. With `query`, or once a check
    /// found the handler replaced, the signal's action is queried now (module docs,
    /// "Signals"); otherwise this costs two loads.
    pub(crate) fn usable(&self, query: bool) -> Result<(), Error> {
        if self.forked() {
            return Err(Error::forked());
        }
        if (query || self.handler_lost.load(Ordering::Relaxed)) && !self.check_handler() {
            return Err(Error::handler_replaced(self.signal_offset, self.signal));
        }
        Ok(())
    }

    /// Whether a stop signal with this sender was sent by this scheduler (module docs,
    /// "Signals").
    pub(crate) fn sent_by_us(&self, from: sys::Sender) -> bool {
        from.code == libc::SI_QUEUE && from.pid == self.pid && from.value == self.token
    }

    /// A slot that gets its first runnable thread tells the scheduler (which sleeps without a
    /// timeout while no other slot needs the CPUs).
    pub(crate) fn runnable_inc(&self, slot: usize) {
        if self.slots[slot].runnable.fetch_add(1, Ordering::SeqCst) == 0 {
            self.publish_runnable(slot);
            if self.current.load(Ordering::SeqCst) != slot {
                self.notify();
            }
        }
    }

    pub(crate) fn runnable_dec(&self, slot: usize) {
        if self.slots[slot].runnable.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.publish_runnable(slot);
            if self.current.load(Ordering::SeqCst) == slot
                && (self.domain.is_some() || self.high.load(Ordering::Relaxed) > 1)
            {
                self.notify();
            }
        }
    }

    /// With a shared domain, writes this process's runnable bit of `slot` from its count.
    /// Written, then the count read again: of threads changing the count at once, the last to
    /// change it writes last, so the bit ends as the count says. Async-signal-safe.
    fn publish_runnable(&self, slot: usize) {
        let Some(d) = &self.domain else {
            return;
        };
        let count = &self.slots[slot].runnable;
        loop {
            let on = count.load(Ordering::SeqCst) > 0;
            d.set_runnable(slot, on);
            if (count.load(Ordering::SeqCst) > 0) == on {
                break;
            }
        }
    }
}
