//! [`GangScheduler`]: the matrix, the scheduler thread that rotates its slots, and its
//! [`Builder`](GangSchedulerBuilder).
//!
//! # The scheduler thread
//!
//! It runs the slots that hold gangs round-robin, one quantum each. It wakes when the quantum
//! ends, when a gang is created or destroyed, when [`GangScheduler::switch_now`] is called, and
//! when the running slot loses its last runnable thread (then, after `idle_grace`, it switches
//! early, as the paper's bit mask triggers a rescheduling). Slots whose threads are all idle or
//! blocked are skipped while another slot has work. A switch follows the protocol of the
//! [`switch`](crate::switch) module. The loop allocates nothing and takes no lock.
//!
//! Environment variables give defaults for options the program did not set:
//!
//! | variable | meaning | values |
//! |---|---|---|
//! | `ASAT_GANG_QUANTUM_US` | [`GangSchedulerBuilder::quantum`] in microseconds | 100 ..= 10 000 000 |
//! | `ASAT_GANG_SIGNAL` | [`GangSchedulerBuilder::signal_offset`] | 0 ..= SIGRTMAX - SIGRTMIN |

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use asat_core::CpuSet;

use crate::error::{MAX_QUANTUM, MAX_SLOTS_LIMIT, MAX_STOP_TIMEOUT, MIN_QUANTUM};
use crate::switch::{self, Shared, NO_SLOT};
use crate::{sys, Error, Gang, GangPolicy, GangStats};

/// Builds a [`GangScheduler`]. Setters never fail; [`build`](GangSchedulerBuilder::build)
/// checks the values.
#[derive(Clone, Debug, Default)]
pub struct GangSchedulerBuilder {
    quantum: Option<Duration>,
    cpus: Option<CpuSet>,
    signal_offset: Option<usize>,
    max_slots: Option<usize>,
    stop_timeout: Option<Duration>,
    idle_grace: Option<Duration>,
    realtime: Option<bool>,
}

impl GangSchedulerBuilder {
    /// The default quantum.
    pub const DEFAULT_QUANTUM: Duration = Duration::from_millis(20);
    /// The default stop signal: `SIGRTMIN + 6`.
    pub const DEFAULT_SIGNAL_OFFSET: usize = 6;
    /// The default number of slots.
    pub const DEFAULT_MAX_SLOTS: usize = 64;

    /// How long each slot runs before the next one (default 20 ms).
    pub fn quantum(mut self, q: Duration) -> Self {
        self.quantum = Some(q);
        self
    }

    /// The gang domain: the CPUs that are the matrix's columns, in increasing order (default:
    /// the calling thread's affinity mask at build time).
    pub fn cpus(mut self, cpus: CpuSet) -> Self {
        self.cpus = Some(cpus);
        self
    }

    /// The stop signal is `SIGRTMIN + offset` (default 6). Change it if the program already
    /// handles that signal.
    pub fn signal_offset(mut self, offset: usize) -> Self {
        self.signal_offset = Some(offset);
        self
    }

    /// The most slots the matrix may open (default 64): at most this many gangs that cannot
    /// share a slot.
    pub fn max_slots(mut self, n: usize) -> Self {
        self.max_slots = Some(n);
        self
    }

    /// How long a switch waits for the threads of the outgoing slot before it goes on anyway
    /// and counts a late stop (default: 500 ms, at least the quantum; at most an hour).
    pub fn stop_timeout(mut self, d: Duration) -> Self {
        self.stop_timeout = Some(d);
        self
    }

    /// How long the running slot may have no runnable thread before an early switch (default:
    /// the smaller of 1 ms and the quantum / 4; at most the quantum). It keeps the gaps between
    /// a runtime's regions from causing switches.
    pub fn idle_grace(mut self, d: Duration) -> Self {
        self.idle_grace = Some(d);
        self
    }

    /// Whether to try to run the scheduler thread under `SCHED_FIFO` (default: true). Without it,
    /// when every CPU is busy with gang threads, the kernel may let the running thread finish
    /// its slice (about 1-3 ms) before the woken scheduler thread runs, which delays quantum
    /// ends and requested switches by that much. It needs `CAP_SYS_NICE` or an `RLIMIT_RTPRIO`
    /// allowance; without them the scheduler runs as a normal thread
    /// ([`GangScheduler::is_realtime`] says which). The thread never spins, so it cannot starve
    /// a CPU.
    pub fn realtime(mut self, on: bool) -> Self {
        self.realtime = Some(on);
        self
    }

    /// Checks the configuration, installs the signal handler and starts the scheduler thread.
    pub fn build(self) -> Result<GangScheduler, Error> {
        // A value that is not UTF-8 keeps its bad bytes replaced, so it fails to parse.
        self.build_with_env(|k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()))
    }

    pub(crate) fn build_with_env(
        self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<GangScheduler, Error> {
        let env_quantum = match env("ASAT_GANG_QUANTUM_US") {
            Some(v) => Some(parse_quantum(&v)?),
            None => None,
        };
        let env_signal = match env("ASAT_GANG_SIGNAL") {
            Some(v) => Some(parse_signal(&v)?),
            None => None,
        };
        let quantum = self
            .quantum
            .or(env_quantum)
            .unwrap_or(Self::DEFAULT_QUANTUM);
        if !(MIN_QUANTUM..=MAX_QUANTUM).contains(&quantum) {
            return Err(Error::quantum(quantum));
        }
        let stop_timeout = self
            .stop_timeout
            .unwrap_or(Duration::from_millis(500).max(quantum));
        if stop_timeout < Duration::from_millis(1)
            || stop_timeout < quantum
            || stop_timeout > MAX_STOP_TIMEOUT
        {
            return Err(Error::stop_timeout(stop_timeout));
        }
        let idle_grace = self
            .idle_grace
            .unwrap_or(Duration::from_millis(1).min(quantum / 4));
        if idle_grace > quantum {
            // After a quantum the slot is switched anyway; and the bound keeps the
            // scheduler's deadline arithmetic far from overflow.
            return Err(Error::idle_grace(idle_grace));
        }
        let max_slots = self.max_slots.unwrap_or(Self::DEFAULT_MAX_SLOTS);
        if max_slots == 0 || max_slots > MAX_SLOTS_LIMIT {
            return Err(Error::max_slots(max_slots));
        }
        let offset = self
            .signal_offset
            .or(env_signal)
            .unwrap_or(Self::DEFAULT_SIGNAL_OFFSET);
        let signal = sys::rt_signal(offset).ok_or_else(|| {
            Error::signal(
                offset,
                format!(
                    "not a real-time signal: the offset must be between 0 and {}",
                    sys::rt_signal_max_offset()
                ),
            )
        })?;
        let allowed =
            CpuSet::of_current_thread().map_err(|e| Error::os("reading the CPU affinity", e))?;
        let cpus = match self.cpus {
            Some(c) => {
                if c.is_empty() {
                    return Err(Error::cpus(
                        "no CPUs given: the gang domain needs at least one",
                    ));
                }
                if c.intersection(&allowed) != c {
                    return Err(Error::cpus(format!(
                        "CPUs {c} are not all in this thread's affinity mask {allowed}: the domain \
                         must be a subset of it"
                    )));
                }
                c
            }
            None => allowed,
        };
        if cpus.is_empty() {
            return Err(Error::cpus("the affinity mask is empty"));
        }
        sys::install_handler(signal, switch::on_stop_signal).map_err(|e| {
            Error::signal(
                offset,
                format!("{e}: choose another with signal_offset or ASAT_GANG_SIGNAL"),
            )
        })?;
        let shared = Arc::new(Shared::new(
            cpus.iter().collect(),
            max_slots,
            signal,
            quantum,
            stop_timeout,
            idle_grace,
        ));
        let s = Arc::clone(&shared);
        let want_rt = self.realtime.unwrap_or(true);
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("asat-gang-scheduler".into())
            .spawn(move || {
                let _ = tx.send(want_rt && sys::set_realtime().is_ok());
                scheduler_main(&s)
            })
            .map_err(|e| Error::os("starting the scheduler thread", e))?;
        let realtime = rx.recv().unwrap_or(false);
        Ok(GangScheduler {
            shared,
            thread: Some(thread),
            realtime,
        })
    }
}

fn parse_quantum(v: &str) -> Result<Duration, Error> {
    let allowed = format!(
        "must be a whole number of microseconds between {} and {}",
        MIN_QUANTUM.as_micros(),
        MAX_QUANTUM.as_micros()
    );
    match v.trim().parse::<u64>() {
        Ok(us) if (MIN_QUANTUM..=MAX_QUANTUM).contains(&Duration::from_micros(us)) => {
            Ok(Duration::from_micros(us))
        }
        _ => Err(Error::env("ASAT_GANG_QUANTUM_US", v, allowed)),
    }
}

fn parse_signal(v: &str) -> Result<usize, Error> {
    let max = sys::rt_signal_max_offset();
    match v.trim().parse::<usize>() {
        Ok(k) if k <= max => Ok(k),
        _ => Err(Error::env(
            "ASAT_GANG_SIGNAL",
            v,
            format!("must be an offset above SIGRTMIN between 0 and {max}"),
        )),
    }
}

/// A gang scheduler: an Ousterhout matrix over the CPUs of its domain and a thread that
/// rotates the matrix's slots every quantum, stopping and resuming whole gangs together.
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
    /// A builder with default settings.
    pub fn builder() -> GangSchedulerBuilder {
        GangSchedulerBuilder::default()
    }

    /// Places a gang of `n` threads in the matrix (first fit).
    ///
    /// Errors: `n` is 0 or exceeds the number of CPUs of the domain; the matrix is full.
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
    /// [`GangSchedulerBuilder::realtime`]).
    pub fn is_realtime(&self) -> bool {
        self.realtime
    }

    /// The quantum.
    pub fn quantum(&self) -> Duration {
        self.shared.quantum
    }

    /// The slot running now, if any.
    pub fn current_slot(&self) -> Option<usize> {
        let c = self.shared.current.load(Ordering::SeqCst);
        (c != NO_SLOT).then_some(c)
    }

    /// The slots that hold a gang now.
    pub fn used_slots(&self) -> Vec<usize> {
        self.shared
            .matrix
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .used_slots()
            .collect()
    }

    /// Asks the scheduler to switch to the next slot now, as if the quantum had ended.
    pub fn switch_now(&self) {
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
        }
    }
}

impl Drop for GangScheduler {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        self.shared.notify();
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

/// The rotation rule, as pure logic: among slots `0..high`, the next used slot after `cur`
/// (round-robin) with a runnable thread; else `cur` itself if it is still used; else the
/// lowest used slot; else none.
fn next_slot(
    cur: Option<usize>,
    high: usize,
    used: impl Fn(usize) -> bool,
    runnable: impl Fn(usize) -> bool,
) -> Option<usize> {
    if high == 0 {
        return None;
    }
    let start = cur.map_or(0, |c| c + 1);
    (0..high)
        .map(|i| (start + i) % high)
        .find(|&s| used(s) && runnable(s))
        .or(cur.filter(|&c| used(c)))
        .or_else(|| (0..high).find(|&s| used(s)))
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

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

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
    fn bad_settings_are_clear_errors() {
        let e = GangScheduler::builder()
            .quantum(Duration::from_micros(10))
            .build()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "quantum 10 us: must be between 100 us and 10 s"
        );
        let e = GangScheduler::builder().max_slots(0).build().unwrap_err();
        assert!(e.to_string().contains("max_slots 0"), "{e}");
        let e = GangScheduler::builder()
            .stop_timeout(Duration::MAX)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("at most 3600 s"), "{e}");
        let e = GangScheduler::builder()
            .quantum(Duration::from_millis(10))
            .idle_grace(Duration::MAX)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("must be at most the quantum"), "{e}");
        let e = GangScheduler::builder()
            .signal_offset(1000)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("not a real-time signal"), "{e}");
        let e = GangScheduler::builder()
            .cpus(CpuSet::new())
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("no CPUs given"), "{e}");
        let e = GangScheduler::builder()
            .cpus([1023].into_iter().collect())
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("affinity mask"), "{e}");
    }

    #[test]
    fn env_gives_defaults_and_rejects_bad_values() {
        let s = GangScheduler::builder()
            .build_with_env(env_of(&[("ASAT_GANG_QUANTUM_US", "5000")]))
            .unwrap();
        assert_eq!(s.quantum(), Duration::from_millis(5));
        let s = GangScheduler::builder()
            .quantum(Duration::from_millis(7))
            .build_with_env(env_of(&[("ASAT_GANG_QUANTUM_US", "5000")]))
            .unwrap();
        assert_eq!(s.quantum(), Duration::from_millis(7), "code wins over env");
        let e = GangScheduler::builder()
            .build_with_env(env_of(&[("ASAT_GANG_QUANTUM_US", "fast")]))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("environment variable ASAT_GANG_QUANTUM_US"),
            "{e}"
        );
        let e = GangScheduler::builder()
            .build_with_env(env_of(&[("ASAT_GANG_SIGNAL", "-1")]))
            .unwrap_err();
        assert!(e.to_string().contains("ASAT_GANG_SIGNAL"), "{e}");
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
