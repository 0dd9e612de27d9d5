//! [`GangSchedulerBuilder`]: a gang scheduler's settings, checked when it is built.
//!
//! Environment variables give defaults for options the program did not set:
//!
//! | variable | meaning | values |
//! |---|---|---|
//! | `ASAT_GANG_QUANTUM_US` | [`GangSchedulerBuilder::quantum`] in microseconds | 100 ..= 10 000 000 |
//! | `ASAT_GANG_SIGNAL` | [`GangSchedulerBuilder::signal_offset`] | 0 ..= SIGRTMAX - SIGRTMIN |
//! | `ASAT_GANG` | [`GangSchedulerBuilder::shared`]: `shared` joins the user's shared domain, `process` keeps the matrix in the process | `shared`, `process` |

use std::path::PathBuf;
use std::time::Duration;

use asat_core::CpuSet;

use crate::domain::Domain;
use crate::error::{MAX_QUANTUM, MAX_SLOTS_LIMIT, MAX_STOP_TIMEOUT, MIN_QUANTUM};
use crate::switch::{Config, Shared};
use crate::{sys, thread, Error, GangScheduler};

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
    shared: Option<bool>,
    shared_dir: Option<PathBuf>,
}

impl GangScheduler {
    /// A builder with default settings.
    pub fn builder() -> GangSchedulerBuilder {
        GangSchedulerBuilder::default()
    }
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
    /// handles that signal: `build` fails if another handler is installed for it, and one
    /// installed later is found at the next switch and makes creating and joining gangs fail
    /// (see the [`switch`](crate::switch) module docs, "Signals").
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

    /// Whether the matrix is the user's shared domain for the scheduler's CPUs (default: false,
    /// or `ASAT_GANG=shared`): the shared schedulers of all of this user's processes on the
    /// same CPUs then gang-schedule their gangs against each other, each process stopping and
    /// resuming only its own threads. See the [`domain`](crate::domain) module for the
    /// protocol, the file and its checks. The domain has 64 rows, whatever
    /// [`max_slots`](Self::max_slots) says.
    pub fn shared(mut self, on: bool) -> Self {
        self.shared = Some(on);
        self
    }

    /// The folder of the shared domain's file (default: the user's own folder,
    /// `$XDG_RUNTIME_DIR` or `/dev/shm/asat-u{uid}`). It must be an absolute path to a folder
    /// that only the user can use; it is created (mode 0700) when missing. Implies
    /// [`shared(true)`](Self::shared) unless that was set to false.
    pub fn shared_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.shared_dir = Some(dir.into());
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
        let env_shared = match env("ASAT_GANG") {
            Some(v) => Some(parse_mode(&v)?),
            None => None,
        };
        let shared = self
            .shared
            .or(self.shared_dir.as_ref().map(|_| true))
            .or(env_shared)
            .unwrap_or(false);
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
        sys::install_handler(signal, crate::switch::on_stop_signal).map_err(|e| {
            Error::signal(
                offset,
                format!("{e}: choose another with signal_offset or ASAT_GANG_SIGNAL"),
            )
        })?;
        // Before the shared state, which records the process generation it belongs to.
        thread::watch_forks();
        let cpus: Vec<usize> = cpus.iter().collect();
        let domain = if shared {
            Some(Domain::open(self.shared_dir.as_deref(), &cpus)?)
        } else {
            None
        };
        let shared = Shared::new(Config {
            cpus,
            max_slots,
            signal,
            signal_offset: offset,
            quantum,
            stop_timeout,
            idle_grace,
            domain,
        });
        GangScheduler::start(shared, self.realtime.unwrap_or(true))
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

fn parse_mode(v: &str) -> Result<bool, Error> {
    match v.trim() {
        "shared" => Ok(true),
        "process" => Ok(false),
        _ => Err(Error::env(
            "ASAT_GANG",
            v,
            "must be `shared` (join the user's shared gang domain) or `process` (a matrix of \
             this process only)",
        )),
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
        let e = GangScheduler::builder()
            .build_with_env(env_of(&[("ASAT_GANG", "yes")]))
            .unwrap_err();
        assert!(
            e.to_string().contains("ASAT_GANG") && e.to_string().contains("`shared`"),
            "{e}"
        );
        let e = GangScheduler::builder()
            .shared_dir("relative/folder")
            .build()
            .unwrap_err();
        assert!(e.to_string().starts_with("shared gang domain"), "{e}");
    }
}
