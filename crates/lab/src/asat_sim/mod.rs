//! A simulator of `k` ASAT jobs (and CPU hogs) on `P` CPUs that drives asat-core's decision
//! logic ([`AsatLogic`](asat_core::adaptive::AsatLogic), with either [`Rule`]) on a model of
//! a time-sharing operating system, to show what cannot be measured on a small machine. It is
//! a client of asat-core like any other: it calls the logic and the arithmetic of the kernel's
//! readings ([`asat_core::adaptive::pressure`]) through their public API and has no copy of
//! either.
//!
//! - The machine (`engine`): time slices, one round-robin run queue per CPU, wake-up latency,
//!   wake-up preemption after a granularity, idle CPUs first for woken threads, new-idle
//!   stealing, and what the logic reads from the kernel: the CPU pressure (PSI `some`), each
//!   job's run-queue wait (`schedstat`), the idle share (`/proc/stat`) and from those the CPUs
//!   the rest of the machine left free, computed by the policy's own function; and every
//!   other process's CPUs since the job's previous reading and threads (`/proc/*/stat`: the
//!   hogs with one thread each, the jobs with the threads they started), from which the
//!   policy's own [`equal_share`](asat_core::adaptive::fair::equal_share) is taken.
//! - The jobs (`world`): bulk-synchronous loops of regions, `region_work` of CPU time per
//!   member at `max_threads` (the work is split over the team, with a ±5% imbalance); members
//!   wait for work and at barriers by spinning for `spin`, then blocking. At each region start
//!   the master calls [`AsatLogic::step`](asat_core::adaptive::AsatLogic::step) exactly as the
//!   policy does (the kernel is read only when the logic asks, so a reading covers the time
//!   since the job's previous one); the timed barriers it asks for run on the simulated
//!   threads, members that have not started within the limit are given up on, and the result
//!   (passage, members on time) goes back to the logic.
//! - Runs are deterministic given the seed.
//!
//! [`Scenario::together`], [`Scenario::staggered`], [`Scenario::departure`],
//! [`Scenario::grain`] and [`Scenario::hogs`] are the scenarios of the `asat_sim` program;
//! [`summarize`] computes its figures (settling, total, fairness, moves, regain) from a
//! trace, and [`makespan`] the time k jobs of a fixed amount of work take, under the rule or
//! with a fixed team of `max_threads` each ([`Config::fixed`]) or of the jobs' equal shares
//! ([`Config::partition`], [`share_teams`]); [`ideal_makespan`] is the shortest such time a
//! runtime could reach without running more threads than CPUs.
//!
//! ```
//! use asat_lab::asat_sim::{run, summarize, Config, Scenario};
//! use asat_core::adaptive::Rule;
//! let cfg = Config::new(8, Rule::Asat, 1);
//! let sc = Scenario::together(8, 2, cfg.asat.eval_interval);
//! let trace = run(&cfg, &sc)?;
//! assert!(trace.iter().all(|p| (1..=8).contains(&p.team)));
//! assert!((0..2).all(|j| trace.iter().filter(|p| p.job == j).count() >= 25));
//! let summary = summarize(&trace, &sc, &cfg); // settle_evals, total_after, ...
//! # let _ = summary;
//! # Ok::<(), asat_lab::Error>(())
//! ```

mod bound;
mod engine;
mod metrics;
mod scenario;
mod world;

pub use bound::{ideal_makespan, share_teams};
pub use metrics::{summarize, Summary};
pub use scenario::{JobSpec, Scenario, SCENARIOS};

use std::time::Duration;

use asat_core::adaptive::{AsatConfig, Rule};

use crate::Error;

/// The most CPUs a simulated machine may have.
pub const MAX_PROCESSORS: usize = 4096;
/// The most jobs and hogs of one scenario.
pub const MAX_JOBS: usize = 1024;
/// The longest simulated run.
pub const MAX_DURATION: Duration = Duration::from_secs(3600);

/// The model's parameters.
#[derive(Clone, Debug)]
pub struct Config {
    /// CPUs.
    pub processors: usize,
    /// Time slice of a thread while others wait for its CPU: Linux's EEVDF base slice,
    /// 0.75 ms x (1 + log2(min(P, 8))), so 1.5 ms at 2 CPUs and 3 ms from 8 CPUs on.
    pub slice: Duration,
    /// A thread woken onto a busy CPU runs once the current thread has run this long since it
    /// got the CPU (default: the slice, as EEVDF's run-to-parity protects the current thread
    /// for its slice).
    pub wakeup_granularity: Duration,
    /// From a wake-up call to the woken thread being runnable (20 us; each wake-up draws
    /// 0.5x to 1.5x of it).
    pub wake_latency: Duration,
    /// How long a waiting member spins before it blocks (50 us, the runtime's default).
    pub spin: Duration,
    /// CPU time of a region per member at `max_threads` (500 us).
    pub region_work: Duration,
    /// Whether the kernel offers CPU pressure (PSI).
    pub pressure: bool,
    /// Whether the kernel offers per-thread run-queue delays (`schedstat`).
    pub schedstat: bool,
    /// Whether a job reads every process's CPU time and threads (`/proc/*/stat`), from which
    /// it takes its equal share ([`asat_core::adaptive::fair`]). Default on.
    pub procs: bool,
    /// The logic's settings (the rule among them).
    pub asat: AsatConfig,
    /// Every job runs `max_threads` threads in every region and never evaluates: a fixed
    /// team (the `fixed` policy), the baseline of [`makespan`]. Default off.
    pub fixed: bool,
    /// With `fixed`, each job's team is its equal share of the CPUs the hogs leave
    /// ([`share_teams`]) instead of `max_threads`: a static partition of the machine, running
    /// the same regions (each job's work per region unchanged, split over fewer members).
    /// Default off.
    pub partition: bool,
    /// The seed of the machine's random choices.
    pub seed: u64,
}

impl Config {
    /// The defaults for `processors` CPUs, with `rule` and `seed`.
    pub fn new(processors: usize, rule: Rule, seed: u64) -> Self {
        let slice = Duration::from_micros(750) * (1 + processors.clamp(1, 8).ilog2());
        Config {
            processors,
            slice,
            wakeup_granularity: slice,
            wake_latency: Duration::from_micros(20),
            spin: Duration::from_micros(50),
            region_work: Duration::from_micros(500),
            pressure: true,
            schedstat: true,
            procs: true,
            asat: AsatConfig {
                rule,
                ..AsatConfig::default()
            },
            fixed: false,
            partition: false,
            seed,
        }
    }
}

/// One evaluation of one job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TracePoint {
    /// The job (its index in the scenario).
    pub job: usize,
    /// The job's evaluation count (1 = its first).
    pub evaluation: usize,
    /// Simulated time.
    pub t: Duration,
    /// Team size before and after.
    pub before: usize,
    /// Team size after.
    pub team: usize,
    /// Work regions the job completed so far (each is `region_work` of CPU time per member
    /// at `max_threads`, so `max_threads x region_work` in all).
    pub regions: u64,
}

/// Runs `scenario` on the machine of `cfg`: every evaluation of every job, in time order.
pub fn run(cfg: &Config, scenario: &Scenario) -> Result<Vec<TracePoint>, Error> {
    check(cfg, scenario)?;
    let mut w = world::World::new(cfg, scenario);
    w.run(scenario.end);
    Ok(w.trace)
}

/// Runs `scenario` on the machine of `cfg` until every job has left (give its jobs work with
/// [`Scenario::with_work`]): the time the last job left, its makespan; `None` if a job was
/// still there at the scenario's end.
///
/// ```
/// use asat_lab::asat_sim::{makespan, Config, Scenario};
/// use asat_core::adaptive::Rule;
/// use std::time::Duration;
/// let mut cfg = Config::new(4, Rule::Asat, 1);
/// let eval = cfg.asat.eval_interval;
/// // two jobs of 0.4 CPU-seconds each on 4 CPUs
/// let sc = Scenario::together(4, 2, eval).with_work(eval * 2, eval * 100);
/// let asat = makespan(&cfg, &sc)?.unwrap();
/// cfg.fixed = true;
/// let fixed = makespan(&cfg, &sc)?.unwrap();
/// assert!(asat >= Duration::from_millis(200) && fixed >= Duration::from_millis(200));
/// # Ok::<(), asat_lab::Error>(())
/// ```
pub fn makespan(cfg: &Config, scenario: &Scenario) -> Result<Option<Duration>, Error> {
    Ok(makespan_run(cfg, scenario)?.map(|m| m.time))
}

/// A [`makespan_run`]'s outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Makespan {
    /// When the last job left.
    pub time: Duration,
    /// The CPU the scenario's hogs got until then, as a share of what each would have had
    /// alone on a CPU (1: a whole CPU each); `None` without hogs.
    pub hog_share: Option<f64>,
}

/// [`makespan`], with what the jobs left the hogs meanwhile.
///
/// ```
/// use asat_lab::asat_sim::{makespan_run, Config, Scenario};
/// use asat_core::adaptive::Rule;
/// let cfg = Config::new(4, Rule::Asat, 1);
/// let eval = cfg.asat.eval_interval;
/// let sc = Scenario::hogs(4, 1, eval).with_work(eval * 2, eval * 100);
/// let m = makespan_run(&cfg, &sc)?.unwrap();
/// let share = m.hog_share.unwrap();
/// assert!(share > 0.0 && share <= 1.0);
/// # Ok::<(), asat_lab::Error>(())
/// ```
pub fn makespan_run(cfg: &Config, scenario: &Scenario) -> Result<Option<Makespan>, Error> {
    check(cfg, scenario)?;
    let mut w = world::World::new(cfg, scenario);
    w.run(scenario.end);
    Ok(w.makespan().map(|time| Makespan {
        time,
        hog_share: w.hog_share(),
    }))
}

fn check(cfg: &Config, sc: &Scenario) -> Result<(), Error> {
    let bad = |what: String| Err(Error::config("asat", what));
    if !(1..=MAX_PROCESSORS).contains(&cfg.processors) {
        return bad(format!(
            "processors {}: must be between 1 and {MAX_PROCESSORS}",
            cfg.processors
        ));
    }
    if sc.jobs.len() + sc.hogs > MAX_JOBS || sc.jobs.is_empty() {
        return bad(format!(
            "{} jobs and {} hogs: need 1 to {MAX_JOBS} jobs, at most {MAX_JOBS} in all",
            sc.jobs.len(),
            sc.hogs
        ));
    }
    if sc.end > MAX_DURATION {
        return bad(format!("a run of {:?}: at most {MAX_DURATION:?}", sc.end));
    }
    if let Some(j) = sc
        .jobs
        .iter()
        .find(|j| !(1..=MAX_PROCESSORS).contains(&j.max_threads))
    {
        return bad(format!(
            "max_threads {}: must be between 1 and {MAX_PROCESSORS}",
            j.max_threads
        ));
    }
    if let Some(g) = sc
        .jobs
        .iter()
        .filter_map(|j| j.grain)
        .find(|g| g.is_zero() || *g > Duration::from_secs(10))
    {
        return bad(format!("grain {g:?}: must be above 0 and at most 10 s"));
    }
    for (name, d) in [
        ("slice", cfg.slice),
        ("spin", cfg.spin),
        ("region_work", cfg.region_work),
        ("eval_interval", cfg.asat.eval_interval),
    ] {
        if d.is_zero() || d > Duration::from_secs(10) {
            return bad(format!("{name} {d:?}: must be above 0 and at most 10 s"));
        }
    }
    let c = cfg.asat;
    if c.samples == 0 || c.bad_trig == 0 || c.good_trig == 0 {
        return bad("samples, bad_trig and good_trig must each be at least 1".into());
    }
    Ok(())
}
