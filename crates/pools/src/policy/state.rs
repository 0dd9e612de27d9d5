//! The job's placement state and its counts in the load table, shared with the thread that
//! ends expired holds.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::RegionPlacement;
use crate::LoadTable;

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) held: Vec<(usize, usize)>,
    pub(super) master_in_home: bool,
    pub(super) placed_at: Option<Instant>,
    pub(super) last: Option<RegionPlacement>,
    pub(super) regions: u64,
    /// How many of the job's regions (between `plan` and `region_end`) and calls running
    /// tasks (between `task_workers` and `task_call_end`) use the placement now.
    pub(super) running: u32,
    /// The policy is being dropped: the releaser thread ends.
    pub(super) stop: bool,
    /// The releaser is in its untimed wait: no deadline is being timed, so a region that ends
    /// within its hold must wake it (once: it then sleeps until the hold's deadline, which
    /// later regions of the same placement do not move).
    pub(super) releaser_idle: bool,
    /// How many times the releaser came back from a wait.
    #[cfg(test)]
    pub(super) releaser_wakes: u64,
}

/// The job's placement state, shared with the thread that ends an expired hold.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    /// Wakes the releaser: a region ended within its hold while the releaser was idle, or the
    /// policy is dropped.
    pub(super) wake: Condvar,
    pub(super) table: Arc<dyn LoadTable>,
    pub(super) home: usize,
    pub(super) hold: Duration,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the held threads off the table.
    pub(super) fn release(&self, st: &mut State) {
        for (pool, n) in st.held.drain(..) {
            self.table.sub(pool, n as u32);
        }
    }

    /// Before a new placement, or at the end: the held threads leave the table, and so does the
    /// master's count in its home pool.
    pub(super) fn release_all(&self, st: &mut State) {
        self.release(st);
        if st.master_in_home {
            self.table.sub(self.home, 1);
            st.master_in_home = false;
        }
    }

    /// Between regions: the held threads leave the table and the master counts in its home
    /// pool again.
    pub(super) fn release_to_home(&self, st: &mut State) {
        self.release(st);
        if !st.master_in_home {
            self.table.add(self.home, 1);
            st.master_in_home = true;
        }
    }

    /// When the hold of the held placement ends, whether or not a region runs on it now
    /// (`None`: nothing held, or a hold too long to end).
    pub(super) fn hold_deadline(&self, st: &State) -> Option<Instant> {
        if st.held.is_empty() {
            return None;
        }
        st.placed_at?.checked_add(self.hold)
    }

    /// Whether threads are held and their hold is not over at `now` (a hold too long to end
    /// never is).
    pub(super) fn held_at(&self, st: &State, now: Instant) -> bool {
        !st.held.is_empty()
            && st
                .placed_at
                .is_some_and(|at| now.saturating_duration_since(at) < self.hold)
    }
}

/// The releaser thread of a job with a hold: a job that stops starting regions (a serial
/// phase, or the end of its parallel work) would otherwise stay counted with its held threads
/// until its next region or its drop. It ends the hold when it expires.
///
/// It sleeps until the deadline of the placement it saw held between regions; the job's later
/// regions within that hold do not wake it (a fine-grain job ends thousands of regions a
/// second, and a wake per region costs the job a context switch each time). At the deadline,
/// if a region is running, [`region_end`](asat_core::Policy::region_end) will find the hold
/// over and end it, and the releaser waits, idle, for a region that ends within a newer hold.
pub(super) fn end_expired_holds(shared: &Shared) {
    let mut st = shared.lock();
    while !st.stop {
        // The deadline of the held placement, whether or not a region runs on it now: the
        // job's regions come and go within the hold and need not wake this thread.
        let now = Instant::now();
        st = match shared.hold_deadline(&st) {
            Some(deadline) if now < deadline => {
                shared
                    .wake
                    .wait_timeout(st, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            Some(_) if st.running == 0 => {
                shared.release_to_home(&mut st);
                continue;
            }
            // Nothing held, a hold too long to end, or a hold that expired during a region or
            // a call (whose end releases it): idle until one ends within a newer hold.
            _ => {
                st.releaser_idle = true;
                let mut st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
                st.releaser_idle = false;
                st
            }
        };
        #[cfg(test)]
        {
            st.releaser_wakes += 1;
        }
    }
}
