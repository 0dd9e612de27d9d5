//! The cross-process switch on the control words, both sides (see "A switch from row A to row
//! B" in the [module docs](super)): the scheduler's `begin_stop`, `wait_acks` and `start`, and
//! a participant's `wait_change` and `ack`.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::sys::{shared_futex_wait, shared_futex_wake_all};
use super::table::{Domain, C_EPOCH, C_RUNNING, C_WAKE, NO_ROW, PARTICIPANTS, R_ACK, SLOTS};

/// The longest single wait of the scheduler for acknowledgements (a safety net: every ack
/// wakes it).
const ACK_POLL: Duration = Duration::from_millis(1);

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

    /// Whether every listed participant with a cell in `row` has acknowledged the stop of
    /// `epoch`. Unlisted (dead, reclaimed) participants are not waited for.
    pub(crate) fn stop_acked(&self, epoch: u32, row: usize) -> bool {
        let mut pending = [false; PARTICIPANTS];
        for c in 0..self.columns() {
            if let Some((p, _)) = self.cell(row, c) {
                if p < PARTICIPANTS {
                    pending[p] = true;
                }
            }
        }
        (0..PARTICIPANTS).all(|p| {
            !pending[p]
                || !self.is_listed(p)
                || self.record(p)[R_ACK].load(Ordering::SeqCst) == u64::from(epoch)
        })
    }

    /// Scheduler, step 2: waits until [`stop_acked`](Self::stop_acked), at most `timeout`.
    /// False if it gave up (a late stop).
    pub(crate) fn wait_acks(&self, epoch: u32, row: usize, timeout: Duration) -> bool {
        let wake = &self.control()[C_WAKE];
        let start = Instant::now();
        loop {
            let seen = wake.load(Ordering::SeqCst);
            if self.stop_acked(epoch, row) {
                return true;
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return false;
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

    /// Watcher: this participant's threads of the stopping row are stopped: acknowledges
    /// `epoch` and wakes the scheduler.
    pub(crate) fn ack(&self, epoch: u32) {
        self.record(self.participant())[R_ACK].store(u64::from(epoch), Ordering::SeqCst);
        let wake = &self.control()[C_WAKE];
        wake.fetch_add(1, Ordering::SeqCst);
        shared_futex_wake_all(wake);
    }
}
