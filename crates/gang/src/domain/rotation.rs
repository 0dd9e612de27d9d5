//! The cross-process switch on the control words, both sides (see "A switch from row A to row
//! B" in the [module docs](super)): the scheduler's `begin_stop`, `wait_acks` and `start`, and
//! a participant's `wait_change` and `ack`; the rows' used and runnable masks the scheduler
//! rotates by, and the `wake` word that tells it something changed.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::prewake;
use super::sys::{shared_futex_wait, shared_futex_wake_all};
use super::table::{
    Domain, C_EPOCH, C_REQUESTS, C_RUNNING, C_SLICE_END, C_WAKE, NO_ROW, PARTICIPANTS, R_ACK,
    R_PARKED, R_RUNNABLE, R_USED, SLOTS,
};

/// The longest single wait of the scheduler for acknowledgements (a safety net: every ack
/// wakes it).
const ACK_POLL: Duration = Duration::from_millis(1);
/// While it waits for acknowledgements the scheduler looks for dead participants this often
/// (a participant killed after the stop began never acknowledges it).
const ACK_RECLAIM: Duration = Duration::from_millis(10);

impl Domain {
    /// The control words: `epoch` (odd while `running` is being stopped) and the running row.
    pub(crate) fn switch_state(&self) -> (u32, Option<usize>) {
        let c = self.control();
        let epoch = c[C_EPOCH].load(Ordering::SeqCst);
        let row = c[C_RUNNING].load(Ordering::SeqCst) as usize;
        (epoch, (row < SLOTS).then_some(row))
    }

    /// Scheduler, step 1: marks the running row as stopping (odd epoch) and wakes every
    /// watcher. Returns the stop's epoch (the current one if a stop is already in flight, as
    /// a scheduler that took over finds it).
    pub(crate) fn begin_stop(&self) -> u32 {
        let epoch = &self.control()[C_EPOCH];
        let e = epoch.load(Ordering::SeqCst);
        if e % 2 == 1 {
            return e;
        }
        let next = e.wrapping_add(1);
        epoch.store(next, Ordering::SeqCst);
        shared_futex_wake_all(epoch);
        next
    }

    /// Whether every listed participant has acknowledged the stop of `epoch`. Unlisted
    /// (dead, reclaimed, gone) participants are not waited for. Every participant, not only
    /// those with a cell in the stopping row: one that places a gang in that row while the
    /// stop is under way would otherwise start it beside the next row.
    pub(crate) fn stop_acked(&self, epoch: u32) -> bool {
        (0..PARTICIPANTS).all(|p| {
            !self.is_listed(p) || self.record(p)[R_ACK].load(Ordering::SeqCst) == u64::from(epoch)
        })
    }

    /// Scheduler, step 2: waits until [`stop_acked`](Self::stop_acked), at most `timeout`,
    /// reclaiming dead participants meanwhile. False if it gave up (a late stop).
    pub(crate) fn wait_acks(&self, epoch: u32, timeout: Duration) -> bool {
        let wake = &self.control()[C_WAKE];
        let start = Instant::now();
        let mut reclaimed_at = Duration::ZERO;
        loop {
            let seen = wake.load(Ordering::SeqCst);
            if self.stop_acked(epoch) {
                return true;
            }
            let waited = start.elapsed();
            let left = timeout.saturating_sub(waited);
            if left.is_zero() {
                return false;
            }
            if waited >= reclaimed_at + ACK_RECLAIM {
                reclaimed_at = waited;
                let _ = self.reclaim_dead();
                continue;
            }
            shared_futex_wait(wake, seen, Some(left.min(ACK_POLL)));
        }
    }

    /// Scheduler, step 3: makes `row` (or none) the running row with the next even epoch,
    /// and wakes every watcher.
    pub(crate) fn start(&self, row: Option<usize>) {
        let c = self.control();
        let e = c[C_EPOCH].load(Ordering::SeqCst);
        c[C_RUNNING].store(row.map_or(NO_ROW, |r| r as u32), Ordering::SeqCst);
        c[C_EPOCH].store(e.wrapping_add(1 + (e % 2 == 0) as u32), Ordering::SeqCst);
        shared_futex_wake_all(&c[C_EPOCH]);
    }

    /// Watcher: sleeps while `epoch` is still `seen`, at most `timeout` (a shared futex:
    /// woken by the scheduler of any process).
    pub(crate) fn wait_change(&self, seen: u32, timeout: Duration) {
        shared_futex_wait(&self.control()[C_EPOCH], seen, Some(timeout));
    }

    /// Watcher: this participant's threads of the stopping row are stopped, the last of them
    /// at `parked` (`CLOCK_MONOTONIC` ns, 0 if none had to stop): acknowledges `epoch` and
    /// wakes the scheduler.
    pub(crate) fn ack(&self, epoch: u32, parked: u64) {
        let rec = self.record(self.participant());
        rec[R_PARKED].store(parked, Ordering::SeqCst);
        rec[R_ACK].store(u64::from(epoch), Ordering::SeqCst);
        self.poke();
    }

    /// Scheduler, after step 2: when the last thread of any live participant parked for the
    /// stop of `epoch`, if one did.
    pub(crate) fn last_parked(&self, epoch: u32) -> Option<u64> {
        (0..PARTICIPANTS)
            .filter(|&p| self.is_listed(p))
            .map(|p| self.record(p))
            .filter(|r| r[R_ACK].load(Ordering::SeqCst) == u64::from(epoch))
            .map(|r| r[R_PARKED].load(Ordering::SeqCst))
            .filter(|&t| t > 0)
            .max()
    }

    /// This participant's last acknowledged epoch.
    pub(crate) fn acked(&self) -> u32 {
        self.record(self.participant())[R_ACK].load(Ordering::SeqCst) as u32
    }

    /// Tells the scheduler, whichever process it is in, that something changed (an
    /// acknowledgement, a gang placed or freed, a row's runnable bit): bumps `wake` and wakes
    /// its waiters.
    pub(crate) fn poke(&self) {
        let wake = &self.control()[C_WAKE];
        wake.fetch_add(1, Ordering::SeqCst);
        shared_futex_wake_all(wake);
    }

    /// The `wake` word, for a scheduler about to sleep on it.
    pub(crate) fn wake_seen(&self) -> u32 {
        self.control()[C_WAKE].load(Ordering::SeqCst)
    }

    /// Scheduler: sleeps while `wake` is still `seen`, at most `timeout`.
    pub(crate) fn wait_poke(&self, seen: u32, timeout: Option<Duration>) {
        shared_futex_wait(&self.control()[C_WAKE], seen, timeout);
    }

    /// Wakes every watcher sleeping on `epoch` without changing it (they look again; used when
    /// this process's watcher must notice it is shutting down).
    pub(crate) fn wake_watchers(&self) {
        shared_futex_wake_all(&self.control()[C_EPOCH]);
    }

    /// Asks the scheduler for a switch now (`switch_now` of any participant).
    pub(crate) fn request_switch(&self) {
        self.control()[C_REQUESTS].fetch_add(1, Ordering::SeqCst);
        self.poke();
    }

    /// Scheduler: publishes when it will next switch unless something comes first
    /// (`CLOCK_MONOTONIC` ns), or that it expects no switch (`None`), for the watchers'
    /// [`super::prewake`].
    pub(crate) fn set_slice_end(&self, end_ns: Option<u64>) {
        self.control()[C_SLICE_END].store(prewake::encode(end_ns), Ordering::SeqCst);
    }

    /// Watcher: the published end of the slice (microseconds, low 32 bits), if any.
    pub(crate) fn slice_end(&self) -> Option<u32> {
        prewake::decode(self.control()[C_SLICE_END].load(Ordering::SeqCst))
    }

    /// The count of switch requests.
    pub(crate) fn requests(&self) -> u32 {
        self.control()[C_REQUESTS].load(Ordering::SeqCst)
    }

    /// Sets or clears this participant's runnable bit of `row`.
    pub(crate) fn set_runnable(&self, row: usize, on: bool) {
        if row >= SLOTS {
            return;
        }
        let w = &self.record(self.participant())[R_RUNNABLE];
        if on {
            w.fetch_or(1 << row, Ordering::SeqCst);
        } else {
            w.fetch_and(!(1 << row), Ordering::SeqCst);
        }
    }

    /// Whether this participant has a cell in `row`.
    pub(crate) fn has_cells_in(&self, row: usize) -> bool {
        row < SLOTS
            && self.record(self.participant())[R_USED].load(Ordering::SeqCst) >> row & 1 == 1
    }

    /// The rows that hold a cell of a listed participant, and those where one has a runnable
    /// thread (bit `s` for row `s`).
    pub(crate) fn rows(&self) -> (u64, u64) {
        let (mut used, mut runnable) = (0, 0);
        for p in (0..PARTICIPANTS).filter(|&p| self.is_listed(p)) {
            let r = self.record(p);
            let u = r[R_USED].load(Ordering::SeqCst);
            used |= u;
            runnable |= u & r[R_RUNNABLE].load(Ordering::SeqCst);
        }
        (used, runnable)
    }
}
