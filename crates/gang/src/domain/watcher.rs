//! The scheduler thread of a scheduler in a shared domain: in every participant it follows the
//! control words for the process's own threads (the watcher), and in the elected one it also
//! rotates the rows (the leader). See "A switch from row A to row B" and "Election and
//! take-over" in the [module docs](super).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::prewake::{self, Wait};
use super::table::{Domain, SLOTS};
use crate::rotation::next_slot;
use crate::shared::{Shared, NO_SLOT};
use crate::sys;

/// The longest a watcher that is not the leader sleeps: it campaigns for the leadership at
/// least this often (and each quantum, if shorter), and notices its own shutdown.
const FOLLOWER_WAIT: Duration = Duration::from_millis(50);

/// The scheduler thread's loop with a shared domain.
pub(crate) fn run(sh: &Shared, d: &Domain) {
    let mut local: Option<usize> = None;
    let mut lead: Option<Lead> = None;
    loop {
        let (seen_epoch, _) = d.switch_state();
        let seen_wake = d.wake_seen();
        if sh.shutdown.load(Ordering::SeqCst) {
            // Every thread of this process runs (first: a thread stopped while placing a gang
            // holds the locks `leave` takes), then it is no participant any more (nobody waits
            // for its acknowledgements, another takes the leadership).
            sh.release_all();
            if lead.is_some() {
                d.set_slice_end(None);
            }
            d.leave();
            return;
        }
        follow(sh, d, &mut local);
        if lead.is_none() && d.campaign().unwrap_or(false) {
            // Once held, the lock stays this process's until it leaves or dies.
            lead = Some(Lead::new(d));
        }
        match &mut lead {
            Some(l) => {
                let timeout = l.step(sh, d, &mut local);
                d.wait_poke(seen_wake, Some(timeout));
            }
            None => {
                let runs_here = local.is_some_and(|r| d.has_cells_in(r));
                follower_wait(sh, d, seen_epoch, runs_here)
            }
        }
    }
}

/// A watcher that is not the scheduler waits for `epoch` to change from `seen`: asleep, or
/// polling around the end of a slice of a row where it has cells ([`prewake`]).
fn follower_wait(sh: &Shared, d: &Domain, seen: u32, runs_here: bool) {
    let now = prewake::micros_now(sys::now_ns());
    let longest = FOLLOWER_WAIT.min(sh.quantum);
    let end = d.slice_end();
    match prewake::plan(now, end, sh.quantum, runs_here, longest) {
        Wait::Sleep(t) => d.wait_change(seen, t),
        Wait::Poll(t) => {
            let start = Instant::now();
            // `SCHED_FIFO` (when the scheduler thread got it): yielding lets a thread of the
            // same priority queued on this CPU (another process's scheduler) run meanwhile.
            // A new end (the scheduler changed its mind) is planned for again.
            loop {
                let (epoch, _) = d.switch_state();
                if epoch != seen {
                    if epoch % 2 == 1 {
                        sh.stats.polled_stops.fetch_add(1, Ordering::Relaxed);
                    }
                    break;
                }
                if d.slice_end() != end || start.elapsed() >= t {
                    break;
                }
                std::thread::yield_now();
            }
        }
    }
}

/// The watcher's part: applies the control words to this process's threads. On an odd epoch
/// it stops the row it runs (with the in-process protocol: signals to its own threads only)
/// and acknowledges; on an even one it starts the running row. `local` is the row this process
/// runs.
fn follow(sh: &Shared, d: &Domain, local: &mut Option<usize>) {
    let (epoch, running) = d.switch_state();
    if epoch % 2 == 1 {
        if d.acked() != epoch {
            let parked = stop_local(sh, local);
            d.ack(epoch, parked.unwrap_or(0));
        }
    } else if *local != running {
        // (Only after a late stop, or when this process joined, does a row still run here.)
        stop_local(sh, local);
        if let Some(r) = running.filter(|&r| r < sh.slots.len()) {
            sh.start_slot(r);
            *local = Some(r);
        }
    }
}

/// Stops the row this process runs, if any; returns when its last thread parked.
fn stop_local(sh: &Shared, local: &mut Option<usize>) -> Option<u64> {
    let r = local.take()?;
    let parked = sh.stop_slot(r);
    sh.current.store(NO_SLOT, Ordering::SeqCst);
    sh.stats.switches.fetch_add(1, Ordering::Relaxed);
    parked
}

/// The leader's state: the in-process scheduler's rotation, over the domain's rows.
struct Lead {
    slice_start: u64,
    idle_since: Option<u64>,
    served: u32,
    reclaimed: u64,
}

impl Lead {
    fn new(d: &Domain) -> Self {
        let now = sys::now_ns();
        Self {
            slice_start: now,
            idle_since: None,
            served: d.requests(),
            reclaimed: now,
        }
    }

    /// One look at the domain: finishes a stop in flight (a leader that took over), switches
    /// if the quantum is over, the running row went idle, a switch was asked for or the row's
    /// gangs are gone. Returns how long to sleep before the next look (unless poked).
    fn step(&mut self, sh: &Shared, d: &Domain, local: &mut Option<usize>) -> Duration {
        let quantum = sh.quantum.as_nanos() as u64;
        let grace = sh.idle_grace.as_nanos() as u64;
        let now = sys::now_ns();
        if now.saturating_sub(self.reclaimed) >= quantum {
            self.reclaimed = now;
            let _ = d.reclaim_dead();
        }
        let (epoch, cur) = d.switch_state();
        let (used, runnable) = d.rows();
        let is_used = |s: usize| s < SLOTS && used >> s & 1 == 1;
        let is_runnable = |s: usize| s < SLOTS && runnable >> s & 1 == 1;
        let pick = |cur| next_slot(cur, SLOTS, is_used, is_runnable);
        if epoch % 2 == 1 {
            // A stop in flight: the previous leader died in the middle of it.
            self.finish_stop(sh, d, epoch, now, local);
            d.set_slice_end(None);
            d.start(pick(cur));
            follow(sh, d, local);
            self.slice_start = sys::now_ns();
            self.idle_since = None;
            return sh.quantum;
        }
        let requests = d.requests();
        let mut due = requests != self.served;
        self.served = requests;
        let mut early = false;
        match cur {
            None => due = true,
            Some(c) => {
                due |= !is_used(c) || now.saturating_sub(self.slice_start) >= quantum;
                if is_runnable(c) {
                    self.idle_since = None;
                } else if now - *self.idle_since.get_or_insert(now) >= grace {
                    due = true;
                    early = true;
                }
            }
        }
        if due {
            let next = pick(cur);
            // A row whose gangs are gone is stopped with the full protocol all the same: a
            // gang may have been placed there since the masks were read.
            if next != cur || cur.is_some_and(|c| !is_used(c)) {
                if cur.is_some() {
                    let t0 = sys::now_ns();
                    let e = d.begin_stop();
                    follow(sh, d, local);
                    self.finish_stop(sh, d, e, t0, local);
                }
                // Watchers woken by the start must not plan by the old slice's end.
                d.set_slice_end(None);
                d.start(next);
                follow(sh, d, local);
                if cur.is_some() && next.is_some() && early {
                    sh.stats.early_switches.fetch_add(1, Ordering::Relaxed);
                }
                self.idle_since = None;
            }
            self.slice_start = sys::now_ns();
        }
        // Until the quantum ends (or the idle grace) if another row wants the CPUs; otherwise
        // a quantum, for the periodic reclaim (a poke wakes it for anything else).
        let others = (0..SLOTS).any(|s| Some(s) != cur && is_used(s) && is_runnable(s));
        let now = sys::now_ns();
        let mut left = quantum;
        if others {
            left = (self.slice_start + quantum).saturating_sub(now);
            if let Some(since) = self.idle_since {
                left = left.min((since + grace).saturating_sub(now));
            }
        }
        let left = left.max(10_000);
        // The watchers of the running row's processes wake for the switch by themselves.
        d.set_slice_end(others.then_some(now + left));
        Duration::from_nanos(left)
    }

    /// Step 2 of a switch: waits for every live participant's acknowledgement of `epoch`
    /// (stop begun at `t0`), at most the stop timeout, and records the switch.
    fn finish_stop(
        &mut self,
        sh: &Shared,
        d: &Domain,
        epoch: u32,
        t0: u64,
        local: &mut Option<usize>,
    ) {
        follow(sh, d, local);
        let c = &sh.stats;
        if d.wait_acks(epoch, sh.stop_timeout) {
            c.domain_switches.fetch_add(1, Ordering::Relaxed);
            // As in one process: from the broadcast to the last thread parked, here in any
            // process (the clock is the same in all of them).
            if let Some(last) = d.last_parked(epoch).filter(|&t| t >= t0) {
                let ns = last - t0;
                c.domain_timed_switches.fetch_add(1, Ordering::Relaxed);
                c.domain_stop_ns_total.fetch_add(ns, Ordering::Relaxed);
                c.domain_stop_ns_max.fetch_max(ns, Ordering::Relaxed);
            }
        } else {
            c.late_stops.fetch_add(1, Ordering::Relaxed);
        }
    }
}
