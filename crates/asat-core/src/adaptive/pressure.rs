//! What the kernel says about CPU contention, read as deltas between two evaluations (never
//! the kernel's 10 s averages, which lag by seconds):
//!
//! - CPU pressure (Linux PSI): the share of time in which some runnable thread of the machine
//!   waited for a CPU, from the `some ... total=` counter;
//! - the process's own run-queue wait: each thread's `/proc/self/task/*/schedstat` gives its
//!   CPU time and the time it was runnable but waiting for a CPU; their sums over the
//!   process give the share of its runnable time the job was kept waiting ([`wait_fraction`]).
//!   Reading it costs one small file per thread (about 5 us each), once per evaluation;
//! - the machine's idle CPU time, from the first line of `/proc/stat`;
//! - the CPUs the rest of the machine left free: all CPUs less those that were busy with
//!   something other than this process (the busy share of `/proc/stat` less the process's own
//!   CPU time from `schedstat`), [`free_cpus`]. Time a hypervisor stole from the CPUs is not
//!   busy: no thread count inside the machine changes it, and `schedstat` leaves it out of the
//!   process's own time too.
//!
//! The policy reads the files itself at each evaluation. What turns two readings into the
//! figures asat's rule decides on, [`wait_fraction`] and [`free_cpus`], is public: a model of
//! a machine (asat-lab's simulator) hands the rule the figures the policy would compute, with
//! the policy's own arithmetic.
//!
//! The system-wide file `/proc/pressure/cpu` is used, else the process's cgroup
//! `cpu.pressure` (cgroup v2), else none: kernels built without PSI or booted with `psi=0`
//! have neither, and the rule then waits `good_trig` good evaluations before growing.

use std::path::PathBuf;
use std::time::Instant;

/// What asat's rule reads from the kernel, taken together at an evaluation.
#[derive(Debug)]
pub(crate) struct Readings {
    pressure: CpuPressure,
    wait: CpuWait,
    idle: CpuIdle,
    /// The other processes, for the equal share (only where asked for).
    procs: Option<super::procs::Procs>,
    /// The claimants of the share at the previous reading of `procs`.
    claimants: Vec<u64>,
    last: Option<Instant>,
}

/// One [`Readings::sample`]: each `None` where the kernel does not say or on the first call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Reading {
    pub(crate) pressure: Option<f64>,
    pub(crate) wait: Option<f64>,
    pub(crate) idle: Option<f64>,
    pub(crate) free: Option<f64>,
    /// The equal share of the machine ([`claims::share_after`](super::claims::share_after)).
    pub(crate) equal: Option<f64>,
    /// This job's place among the share's claimants, and their number
    /// ([`fair::share_place`](super::fair::share_place)).
    pub(crate) rank: Option<(usize, usize)>,
}

impl Readings {
    pub(crate) fn open() -> Self {
        Self {
            pressure: CpuPressure::open(),
            wait: CpuWait::default(),
            idle: CpuIdle::default(),
            procs: None,
            claimants: Vec::new(),
            last: None,
        }
    }

    /// [`Readings::open`], reading the other processes too (for the equal share).
    pub(crate) fn with_procs() -> Self {
        Self {
            procs: Some(super::procs::Procs::new()),
            ..Self::open()
        }
    }

    /// Everything since the previous call.
    pub(crate) fn sample(&mut self, now: Instant) -> Reading {
        let pressure = self.pressure.sample(now);
        let wait = self.wait.sample();
        let idle = self.idle.sample();
        let wall = self
            .last
            .replace(now)
            .map(|t| now.saturating_duration_since(t).as_nanos() as f64);
        let free = match (wait, idle, wall) {
            (Some((_, run)), Some(i), Some(wall)) => {
                free_cpus(i.cpus, i.idle + i.steal, run as f64, wall)
            }
            _ => None,
        };
        // Only while the rest of the machine keeps half a CPU busy, or this process's threads
        // waited for a CPU (a job squeezed by this one's threads may use less than half a
        // CPU): else no process claims a share, and the reading would cost for nothing. The
        // first reading takes them all the same, so that the first crowded one has an
        // interval to measure.
        let busy = free.zip(idle).is_some_and(|(f, i)| f < i.cpus as f64 - 0.5)
            || wait.is_some_and(|(w, _)| w >= super::rule::WAIT_CROWDED);
        let others = self
            .procs
            .as_mut()
            .filter(|p| busy || !p.has_read())
            .and_then(|p| p.sample(now));
        let before = std::mem::take(&mut self.claimants);
        let (equal, rank) = match (others, idle) {
            (Some(o), Some(i)) => {
                let o: Vec<(u64, super::fair::Process)> =
                    o.into_iter().map(|(pid, p)| (u64::from(pid), p)).collect();
                let equal = super::claims::share_after(i.cpus, &o, &before);
                self.claimants = super::claims::claimants_of(&o, equal);
                let me = u64::from(std::process::id());
                (equal, equal.map(|s| super::fair::share_place(me, &o, s)))
            }
            _ => (None, None),
        };
        Reading {
            pressure,
            wait: wait.map(|w| w.0),
            idle: idle.map(|i| i.idle),
            free,
            equal,
            rank,
        }
    }

    /// The machine's online CPUs, known from the first reading on (which has no interval to
    /// measure); `None` before it, or where `/proc/stat` cannot be read.
    pub(crate) fn cpus(&self) -> Option<usize> {
        self.idle.cpus
    }
}

/// The CPUs the rest of the machine left free over an interval of `wall` ns: `cpus` less the
/// CPUs busy with something other than this process, `(1 - not_busy) cpus - run / wall`
/// (`not_busy`: the share of CPU time idle or stolen; the process's threads ran `run` ns in
/// all), within `[0, cpus]`; `None` for an empty interval (or a `NaN` share or time).
///
/// ```
/// use asat_core::adaptive::pressure::free_cpus;
/// // 4 CPUs, 25% idle over 1 s, the process ran 2 CPU-seconds: the others kept 1 CPU busy
/// assert_eq!(free_cpus(4, 0.25, 2e9, 1e9), Some(3.0));
/// assert_eq!(free_cpus(4, 0.25, 2e9, 0.0), None);
/// ```
pub fn free_cpus(cpus: usize, not_busy: f64, run: f64, wall: f64) -> Option<f64> {
    if wall <= 0.0 || not_busy.is_nan() || run.is_nan() {
        return None;
    }
    let cpus = cpus as f64;
    let busy = (1.0 - not_busy.clamp(0.0, 1.0)) * cpus;
    let others = (busy - run.max(0.0) / wall).max(0.0);
    Some((cpus - others).clamp(0.0, cpus))
}

/// The threads of the whole machine runnable right now, the caller included (the first
/// number of the fourth field of `/proc/loadavg`); `None` where the file cannot be read.
pub(crate) fn running_now() -> Option<u64> {
    loadavg_running(&std::fs::read_to_string("/proc/loadavg").ok()?)
}

/// The runnable threads of a `/proc/loadavg` line: `0.37 1.05 1.38 3/76 7141` gives 3.
pub(crate) fn loadavg_running(text: &str) -> Option<u64> {
    text.split_whitespace()
        .nth(3)?
        .split_once('/')?
        .0
        .parse()
        .ok()
}

/// Reads the CPU pressure counter and turns two readings into a stall fraction.
#[derive(Debug)]
pub(crate) struct CpuPressure {
    path: Option<PathBuf>,
    last: Option<(u64, Instant)>,
}

impl CpuPressure {
    /// Finds a readable pressure file (none: every sample is `None`).
    pub(crate) fn open() -> Self {
        let path = candidates().into_iter().find(|p| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|t| some_total_us(&t))
                .is_some()
        });
        Self { path, last: None }
    }

    /// The stall fraction since the previous call (`None` on the first call, without a file,
    /// or when the file cannot be read).
    pub(crate) fn sample(&mut self, now: Instant) -> Option<f64> {
        let text = std::fs::read_to_string(self.path.as_ref()?).ok()?;
        let total = some_total_us(&text)?;
        let prev = self.last.replace((total, now))?;
        Some(stall_fraction(prev, (total, now)))
    }
}

/// The process's threads' run-queue wait.
#[derive(Debug, Default)]
pub(crate) struct CpuWait {
    last: Option<(u64, u64)>,
}

impl CpuWait {
    /// The share of runnable time the process's threads waited for a CPU since the previous
    /// call, and the CPU time in ns they ran in all (`None` on the first call or where
    /// `schedstat` is missing).
    pub(crate) fn sample(&mut self) -> Option<(f64, u64)> {
        let mut total = (0u64, 0u64);
        let mut any = false;
        for e in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
            let text = std::fs::read_to_string(e.path().join("schedstat")).ok();
            if let Some((run, wait)) = text.as_deref().and_then(schedstat) {
                total = (total.0.saturating_add(run), total.1.saturating_add(wait));
                any = true;
            }
        }
        if !any {
            return None;
        }
        let prev = self.last.replace(total)?;
        Some((wait_fraction(prev, total), total.0.saturating_sub(prev.0)))
    }
}

/// `run_ns wait_ns timeslices` of a `schedstat` file.
pub(crate) fn schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace();
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// Run-queue wait over runnable time between two `(run, wait)` totals in ns (the first two
/// fields of `schedstat`, summed over the process's threads), in `[0, 1]` (0 when nothing ran;
/// totals that fell, as when a thread exited, count as no change).
///
/// ```
/// use asat_core::adaptive::pressure::wait_fraction;
/// // 300 ns run and 100 ns waited since the previous totals: a quarter of the runnable time
/// assert_eq!(wait_fraction((1000, 500), (1300, 600)), 0.25);
/// assert_eq!(wait_fraction((1000, 500), (1000, 500)), 0.0);
/// ```
pub fn wait_fraction(prev: (u64, u64), now: (u64, u64)) -> f64 {
    let run = now.0.saturating_sub(prev.0) as f64;
    let wait = now.1.saturating_sub(prev.1) as f64;
    if run + wait <= 0.0 {
        0.0
    } else {
        wait / (run + wait)
    }
}

/// The machine's idle share of CPU time.
#[derive(Debug, Default)]
pub(crate) struct CpuIdle {
    last: Option<(u64, u64, u64)>,
    /// The CPUs the last call found, the first one's included.
    cpus: Option<usize>,
}

impl CpuIdle {
    /// The idle and stolen shares of all CPUs' time since the previous call, and the number
    /// of CPUs (`None` on the first call).
    pub(crate) fn sample(&mut self) -> Option<IdleSample> {
        let text = std::fs::read_to_string("/proc/stat").ok()?;
        let now = stat_idle_total(&text)?;
        let cpus = stat_cpus(&text);
        self.cpus = Some(cpus.max(1));
        let prev = self.last.replace(now)?;
        let total = now.2.saturating_sub(prev.2);
        let share = |a: u64, b: u64| {
            if total == 0 {
                0.0
            } else {
                (a.saturating_sub(b) as f64 / total as f64).min(1.0)
            }
        };
        Some(IdleSample {
            idle: share(now.0, prev.0),
            steal: share(now.1, prev.1),
            cpus: cpus.max(1),
        })
    }
}

/// One [`CpuIdle::sample`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct IdleSample {
    pub(crate) idle: f64,
    pub(crate) steal: f64,
    pub(crate) cpus: usize,
}

/// `(idle + iowait, steal, user + nice + system + idle + iowait + irq + softirq + steal)` of
/// the aggregate `cpu` line of `/proc/stat`, in clock ticks.
pub(crate) fn stat_idle_total(text: &str) -> Option<(u64, u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    (f.len() == 8).then(|| (f[3] + f[4], f[7], f.iter().sum()))
}

/// The number of per-CPU lines (`cpu0`, `cpu1`, ...) of `/proc/stat`: the online CPUs.
pub(crate) fn stat_cpus(text: &str) -> usize {
    text.lines()
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count()
}

fn candidates() -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from("/proc/pressure/cpu")];
    if let Ok(cg) = std::fs::read_to_string("/proc/self/cgroup") {
        if let Some(rel) = cg.lines().find_map(|l| l.strip_prefix("0::")) {
            v.push(PathBuf::from(format!(
                "/sys/fs/cgroup{}/cpu.pressure",
                rel.trim()
            )));
        }
    }
    v
}

/// The `total=` of the `some` line, in microseconds.
pub(crate) fn some_total_us(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

/// Stall time between two readings over the wall time between them, in `[0, 1]`.
pub(crate) fn stall_fraction(prev: (u64, Instant), now: (u64, Instant)) -> f64 {
    let wall = now.1.saturating_duration_since(prev.1).as_micros() as f64;
    if wall <= 0.0 {
        return 0.0;
    }
    (now.0.saturating_sub(prev.0) as f64 / wall).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_runnable_threads_are_the_fourth_field_of_loadavg() {
        assert_eq!(loadavg_running("0.37 1.05 1.38 3/76 7141\n"), Some(3));
        assert_eq!(loadavg_running("12.00 8.50 4.10 130/2048 99"), Some(130));
        assert_eq!(loadavg_running("0.37 1.05 1.38"), None);
        assert_eq!(loadavg_running("0.37 1.05 1.38 x/76 7141"), None);
        assert!(running_now().is_some_and(|n| n >= 1), "this thread runs");
    }

    #[test]
    fn parses_the_some_total() {
        let t = "some avg10=0.00 avg60=0.55 avg300=5.60 total=1276105792\n\
                 full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(some_total_us(t), Some(1_276_105_792));
        assert_eq!(some_total_us("full avg10=0 total=5\n"), None);
        assert_eq!(some_total_us("some avg10=0.00 total=x\n"), None);
        assert_eq!(some_total_us(""), None);
    }

    #[test]
    fn the_fraction_is_the_delta_over_the_interval() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_millis(200);
        assert_eq!(stall_fraction((1000, t0), (1000 + 50_000, t1)), 0.25);
        assert_eq!(
            stall_fraction((1000, t0), (900, t1)),
            0.0,
            "a counter reset"
        );
        assert_eq!(stall_fraction((0, t0), (10_000_000, t1)), 1.0);
        assert_eq!(stall_fraction((0, t1), (5, t0)), 0.0);
    }

    #[test]
    fn the_wait_share_of_runnable_time() {
        assert_eq!(schedstat("1000 3000 7\n"), Some((1000, 3000)));
        assert_eq!(schedstat("x 1 2"), None);
        assert_eq!(wait_fraction((0, 0), (3000, 1000)), 0.25);
        assert_eq!(wait_fraction((5, 5), (5, 5)), 0.0);
        assert_eq!(wait_fraction((9000, 9000), (1000, 1000)), 0.0);
        let mut w = CpuWait::default();
        assert_eq!(w.sample(), None);
        if let Some((f, _)) = w.sample() {
            assert!((0.0..=1.0).contains(&f));
        }
    }

    #[test]
    fn the_idle_share_of_the_machine() {
        let t = "cpu  100 0 50 750 50 0 0 50 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(stat_idle_total(t), Some((800, 50, 1000)));
        assert_eq!(stat_cpus(t), 1);
        assert_eq!(
            stat_cpus("cpu  1\ncpu0 1\ncpu1 2\ncpu12 3\ncpufreq 4\nintr 5\n"),
            3
        );
        assert_eq!(stat_idle_total("cpu  1 2 3\n"), None);
        assert_eq!(stat_idle_total("intr 5\n"), None);
        let mut c = CpuIdle::default();
        assert_eq!(c.sample(), None);
        if let Some(s) = c.sample() {
            assert!((0.0..=1.0).contains(&(s.idle + s.steal)) && s.cpus >= 1);
        }
    }

    #[test]
    fn the_free_cpus_are_all_less_what_others_kept_busy() {
        const MS: f64 = 1e6;
        // 64 CPUs, 34% idle, this process ran 26.24 CPUs' worth: 16 CPUs busy with others
        let f = free_cpus(64, 0.34, 26.24 * 200.0 * MS, 200.0 * MS).unwrap();
        assert!((f - 48.0).abs() < 1e-9, "{f}");
        // alone: every busy CPU is ours
        assert_eq!(free_cpus(2, 0.1, 1.8 * MS, MS), Some(2.0));
        // more run time than busy CPUs (rounding between the counters): nobody else
        assert_eq!(free_cpus(2, 0.5, 1.9 * MS, MS), Some(2.0));
        // a hog beside an idle process
        assert_eq!(free_cpus(2, 0.5, 0.0, MS), Some(1.0));
        // alone on a VM whose hypervisor stole 30% of both CPUs: nobody else here
        assert_eq!(free_cpus(2, 0.3, 1.4 * MS, MS), Some(2.0));
        assert_eq!(free_cpus(2, 0.5, 0.0, 0.0), None);
        assert_eq!(free_cpus(2, f64::NAN, 0.0, MS), None);
        let mut r = Readings::open();
        let t0 = Instant::now();
        assert_eq!(r.sample(t0).free, None, "nothing to compare yet");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = r.sample(Instant::now());
        if let Some(f) = second.free {
            assert!(
                (0.0..=stat_cpus(&std::fs::read_to_string("/proc/stat").unwrap()) as f64)
                    .contains(&f)
            );
        }
    }

    #[test]
    fn the_first_sample_has_nothing_to_compare() {
        let mut p = CpuPressure::open();
        let t0 = Instant::now();
        assert_eq!(p.sample(t0), None);
        // On a kernel with PSI, the second sample is a fraction; without, still None.
        if let Some(f) = p.sample(t0 + Duration::from_millis(1)) {
            assert!((0.0..=1.0).contains(&f));
        }
    }

    #[test]
    fn the_first_reading_takes_the_other_processes_for_the_next_to_compare_with() {
        // Idle machine or not: the first crowded reading must have an interval to measure.
        let mut r = Readings::with_procs();
        r.sample(Instant::now());
        assert!(r
            .procs
            .as_ref()
            .is_some_and(super::super::procs::Procs::has_read));
    }
}
