//! [`GangScheduler`]: the matrix and the scheduler thread that rotates its slots.
//!
//! # The scheduler thread
//!
//! It runs the slots that hold gangs round-robin, one quantum each. It wakes when the quantum
//! ends, when a gang is created or destroyed, when [`GangScheduler::switch_now`] is called, and
//! when the running slot loses its last runnable thread (then, after `idle_grace`, it switches
//! early, as the paper's bit mask triggers a rescheduling). Slots whose threads are all idle or
//! blocked are skipped while another slot has work. A switch follows the protocol of the
//! [`switch`](crate::switch) module. The loop allocates nothing and takes no lock.

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::rotation::next_slot;
use crate::shared::{Shared, NO_SLOT};
use crate::{sys, Error, Gang, GangPolicy, GangStats};

/// A gang scheduler: an Ousterhout matrix over the CPUs of its domain and a thread that
/// rotates the matrix's slots every quantum, stopping and resuming whole gangs together.
///
/// With [`shared`](crate::GangSchedulerBuilder::shared) (or `ASAT_GANG=shared`) the matrix is the
/// user's shared domain for these CPUs, which the shared schedulers of all of the user's
/// processes join: see the [`domain`](crate::domain) module.
///
/// Create gangs with [`gang`](GangScheduler::gang), or give each asat-core runtime a
/// [`policy`](GangScheduler::policy) so that its team is one gang. Dropping the scheduler
/// stops the rotation and lets every gang thread run (uncoordinated) from then on.
///
/// ```no_run
/// use asat_core::Runtime;
/// use asat_gang::GangScheduler;
/// use std::time::Duration;
///
/// let sched = GangScheduler::builder().quantum(Duration::from_millis(10)).build()?;
/// let a = Runtime::builder().policy(sched.policy()).build()?;
/// let b = Runtime::builder().policy(sched.policy()).build()?;
/// std::thread::scope(|s| {
///     s.spawn(|| a.region(|team| for _ in 0..1000 { team.barrier() }));
///     s.spawn(|| b.region(|team| for _ in 0..1000 { team.barrier() }));
/// });
/// println!("{:?}", sched.stats());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GangScheduler {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    realtime: bool,
}

impl fmt::Debug for GangScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GangScheduler")
            .field("cpus", &self.shared.cpus)
            .field("quantum", &self.shared.quantum)
            .field("signal", &self.shared.signal)
            .field("realtime", &self.realtime)
            .finish_non_exhaustive()
    }
}

impl GangScheduler {
    /// Starts the scheduler thread for `shared` (under `SCHED_FIFO` if `want_rt` and allowed).
    pub(crate) fn start(shared: Shared, want_rt: bool) -> Result<GangScheduler, Error> {
        let shared = Arc::new(shared);
        let s = Arc::clone(&shared);
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("asat-gang-scheduler".into())
            .spawn(move || {
                let _ = tx.send(want_rt && sys::set_realtime().is_ok());
                match &s.domain {
                    Some(d) => crate::domain::run(&s, d),
                    None => scheduler_main(&s),
                }
            })
            .map_err(|e| Error::os("starting the scheduler thread", e))?;
        let realtime = rx.recv().unwrap_or(false);
        Ok(GangScheduler {
            shared,
            thread: Some(thread),
            realtime,
        })
    }

    /// Places a gang of `n` threads in the matrix (first fit).
    ///
    /// Errors: `n` is 0 or exceeds the number of CPUs of the domain; the matrix is full;
    /// another handler was installed for the stop signal since the scheduler was built; the
    /// scheduler is a forked child's copy of its parent's (see the [`switch`](crate::switch)
    /// module docs, "Signals" and "Fork").
    pub fn gang(&self, n: usize) -> Result<Gang, Error> {
        Gang::create(&self.shared, n)
    }

    /// A policy for one asat-core runtime: the runtime's team becomes one gang of this
    /// scheduler (of `max_threads` members) when the runtime is built.
    pub fn policy(&self) -> GangPolicy {
        GangPolicy::new(Arc::clone(&self.shared))
    }

    /// The CPUs of the gang domain; column `i` is `cpus()[i]`.
    pub fn cpus(&self) -> &[usize] {
        &self.shared.cpus
    }

    /// Whether the scheduler thread runs under `SCHED_FIFO` (see
    /// [`GangSchedulerBuilder::realtime`](crate::GangSchedulerBuilder::realtime)).
    pub fn is_realtime(&self) -> bool {
        self.realtime
    }

    /// The quantum.
    pub fn quantum(&self) -> Duration {
        self.shared.quantum
    }

    /// The slot running now, if any (with a shared domain: the domain's running row, none
    /// while a switch is under way).
    pub fn current_slot(&self) -> Option<usize> {
        if let Some(d) = &self.shared.domain {
            let (epoch, row) = d.switch_state();
            return row.filter(|_| epoch % 2 == 0);
        }
        let c = self.shared.current.load(Ordering::SeqCst);
        (c != NO_SLOT).then_some(c)
    }

    /// The slots that hold a gang now (none in a forked child's copy; with a shared domain,
    /// the rows that hold a gang of any live participant).
    pub fn used_slots(&self) -> Vec<usize> {
        if self.shared.forked() {
            return Vec::new();
        }
        if let Some(d) = &self.shared.domain {
            let used = d.rows().0;
            return (0..crate::domain::SLOTS)
                .filter(|s| used >> s & 1 == 1)
                .collect();
        }
        self.shared
            .matrix
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .used_slots()
            .collect()
    }

    /// Asks the scheduler to switch to the next slot now, as if the quantum had ended (with a
    /// shared domain: the domain's scheduler, in whatever process it is).
    pub fn switch_now(&self) {
        if let Some(d) = &self.shared.domain {
            d.request_switch();
            return;
        }
        self.shared.requests.fetch_add(1, Ordering::SeqCst);
        self.shared.notify();
    }

    /// Counters since the scheduler was built.
    pub fn stats(&self) -> GangStats {
        let c = &self.shared.stats;
        let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        GangStats {
            switches: l(&c.switches),
            early_switches: l(&c.early_switches),
            timed_switches: l(&c.timed_switches),
            stop_time_total: Duration::from_nanos(l(&c.stop_ns_total)),
            stop_time_max: Duration::from_nanos(l(&c.stop_ns_max)),
            signals: l(&c.signals),
            signal_stops: l(&c.signal_stops),
            cooperative_stops: l(&c.cooperative_stops),
            deferred_stops: l(&c.deferred_stops),
            late_stops: l(&c.late_stops),
            ignored_signals: l(&c.ignored_signals),
            handler_replaced: l(&c.handler_replaced),
            domain_switches: l(&c.domain_switches),
            domain_timed_switches: l(&c.domain_timed_switches),
            domain_stop_time_total: Duration::from_nanos(l(&c.domain_stop_ns_total)),
            domain_stop_time_max: Duration::from_nanos(l(&c.domain_stop_ns_max)),
            polled_stops: l(&c.polled_stops),
        }
    }
}

impl Drop for GangScheduler {
    fn drop(&mut self) {
        if self.shared.forked() {
            // A forked child's copy: the scheduler thread is the parent's, and the child has
            // none to stop or join.
            std::mem::forget(self.thread.take());
            return;
        }
        self.shared.shutdown.store(true, Ordering::SeqCst);
        self.shared.notify();
        if let Some(d) = &self.shared.domain {
            // (Its thread may be sleeping on the epoch, not on the word `notify` moves.)
            d.wake_watchers();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The next slot to run after `cur`, from the scheduler's atomic mirror of the matrix.
fn pick_next(sh: &Shared, cur: Option<usize>) -> Option<usize> {
    next_slot(
        cur,
        sh.high.load(Ordering::SeqCst),
        |s| sh.slots[s].gangs.load(Ordering::SeqCst) > 0,
        |s| sh.slots[s].runnable.load(Ordering::SeqCst) > 0,
    )
}

/// Whether a used slot other than `cur` has a runnable thread.
fn others_runnable(sh: &Shared, cur: usize) -> bool {
    (0..sh.high.load(Ordering::SeqCst)).any(|s| {
        s != cur
            && sh.slots[s].gangs.load(Ordering::SeqCst) > 0
            && sh.slots[s].runnable.load(Ordering::SeqCst) > 0
    })
}

/// The scheduler thread's loop. Allocation-free and lock-free (see the `switch` module docs).
fn scheduler_main(sh: &Shared) {
    let quantum = sh.quantum.as_nanos() as u64;
    let grace = sh.idle_grace.as_nanos() as u64;
    let mut cur: Option<usize> = None;
    let mut slice_start = sys::now_ns();
    let mut idle_since: Option<u64> = None;
    let mut served = sh.requests.load(Ordering::SeqCst);
    loop {
        let seen = sh.wake.load(Ordering::SeqCst);
        if sh.shutdown.load(Ordering::SeqCst) {
            sh.release_all();
            return;
        }
        let now = sys::now_ns();
        if let Some(c) = cur {
            if sh.slots[c].gangs.load(Ordering::SeqCst) == 0 {
                // Its gangs are gone. Stop it with the full protocol all the same: a new gang
                // may have been placed in the freed slot since the check, and its threads,
                // which saw the slot running, must not go on running beside the next slot.
                // With no thread bound no signal is sent and nothing is waited for.
                #[cfg(asat_inject)]
                crate::inject::pause(crate::inject::Point::GangsGone);
                sh.stop_slot(c);
                sh.current.store(NO_SLOT, Ordering::SeqCst);
                cur = None;
            }
        }
        let requests = sh.requests.load(Ordering::SeqCst);
        let mut due = false;
        let mut early = false;
        match cur {
            None => due = true,
            Some(c) => {
                if requests != served {
                    due = true;
                }
                if now.saturating_sub(slice_start) >= quantum {
                    due = true;
                }
                if sh.slots[c].runnable.load(Ordering::SeqCst) == 0 {
                    let since = *idle_since.get_or_insert(now);
                    if now - since >= grace {
                        due = true;
                        early = true;
                    }
                } else {
                    idle_since = None;
                }
            }
        }
        served = requests;
        if due {
            let switched = match pick_next(sh, cur) {
                Some(next) if Some(next) != cur => {
                    if let Some(c) = cur {
                        sh.stop_slot(c);
                    }
                    sh.start_slot(next);
                    if cur.is_some() {
                        // Counted once complete: readers of the stats see the new slot current.
                        sh.stats.switches.fetch_add(1, Ordering::SeqCst);
                        if early {
                            sh.stats.early_switches.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    cur = Some(next);
                    true
                }
                _ => false,
            };
            slice_start = sys::now_ns();
            if switched {
                idle_since = None;
            }
            // Otherwise an idle slot stays marked idle since it became so: when another slot
            // gets work, the switch is immediate.
        }
        // Sleep until the quantum ends (or the idle grace) only if another slot wants the
        // CPUs; otherwise until something changes (a slot's first runnable thread, a gang
        // created or gone, a request), so an idle or lone gang costs no wake-ups.
        let timeout = match cur {
            Some(c) if others_runnable(sh, c) => {
                let now = sys::now_ns();
                let mut left = (slice_start + quantum).saturating_sub(now);
                if let Some(since) = idle_since {
                    left = left.min((since + grace).saturating_sub(now));
                }
                Some(Duration::from_nanos(left.max(10_000)))
            }
            _ => None,
        };
        sys::futex_wait(&sh.wake, seen, timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(cur: Option<usize>, slots: &[(bool, bool)]) -> Option<usize> {
        next_slot(cur, slots.len(), |s| slots[s].0, |s| slots[s].1)
    }

    #[test]
    fn rotation_is_round_robin_over_used_runnable_slots() {
        // (used, runnable)
        let all = [(true, true); 3];
        assert_eq!(next(None, &all), Some(0));
        assert_eq!(next(Some(0), &all), Some(1));
        assert_eq!(next(Some(2), &all), Some(0), "wraps around");
        // Unused and idle slots are skipped.
        let mixed = [(true, true), (false, false), (true, false), (true, true)];
        assert_eq!(next(Some(0), &mixed), Some(3));
        assert_eq!(next(Some(3), &mixed), Some(0));
        // Nothing else runnable: keep the current slot, even if it is idle.
        let lone = [(true, false), (true, false)];
        assert_eq!(next(Some(1), &lone), Some(1));
        // The current slot is gone and nothing is runnable: any used slot, or none.
        assert_eq!(next(Some(1), &[(true, false), (false, false)]), Some(0));
        assert_eq!(next(Some(0), &[(false, false)]), None);
        assert_eq!(next(None, &[]), None);
    }

    #[test]
    fn gangs_wider_than_the_domain_are_refused() {
        let s = GangScheduler::builder().build().unwrap();
        let p = s.cpus().len();
        let e = s.gang(p + 1).unwrap_err().to_string();
        assert!(e.contains(&format!("does not fit {p} processors")), "{e}");
        let g = s.gang(p).unwrap();
        assert_eq!(g.size(), p);
        assert_eq!(s.used_slots(), vec![g.slot()]);
        drop(g);
        assert!(s.used_slots().is_empty());
        let e = s.gang(1).unwrap().join(5).unwrap_err().to_string();
        assert!(e.contains("member 5 of a gang of 1"), "{e}");
    }
}
