//! ASAT, Automatic Self-Allocating Threads (Severance, Enbody, Petersen): a job probes the
//! machine's load with a timed barrier before parallel regions and adjusts its own team size,
//! with no central coordinator.
//!
//! No coordinator and no shared memory: jobs that use ASAT and jobs that do not (CPU hogs,
//! fixed-thread programs) share the machine, and `k` ASAT jobs on `P` CPUs settle near `P`
//! threads in total. [`Asat`] is a [`Policy`] like any other:
//!
//! ```
//! use asat_core::{Asat, Runtime};
//! use std::sync::Arc;
//!
//! let asat = Arc::new(Asat::new()); // or ASAT_POLICY=asat with Runtime::builder()
//! let rt = Runtime::builder().max_threads(2).shared_policy(asat.clone()).build()?;
//! rt.region(|team| team.barrier());
//! for e in asat.history() {
//!     // every evaluation: when, team sizes, timed passages, decision
//!     println!("{:?} {} -> {} {:?}", e.at, e.threads_before, e.threads_after, e.decision);
//! }
//! # Ok::<(), asat_core::Error>(())
//! ```
//!
//! Its settings ([`AsatConfig`]) have defaults that a program which cannot be recompiled can
//! override with `ASAT_EVAL_TIME`, `ASAT_BAD_TIME`, `ASAT_BAD_TRIG`, `ASAT_GOOD_TRIG` and
//! `ASAT_SAMPLES` ([`Asat::from_env`]; a bad value is an error that says what is allowed).
//! `bash scripts/demo --policies fixed,asat --copies 1 --hogs 1 --trace` shows a job beside one
//! CPU hog settling at one thread (`out/compare/asat_trace.{csv,svg}`).
//!
//! # The algorithm (the paper's section 5)
//!
//! At most once per `eval_interval`, at a region start, ASAT evaluates: it judges the passage
//! of timed barriers with the current team size `T` (first thread in to last thread out):
//!
//! - passage above the bad-time threshold: `bad_count += 1`, `good_count = 0`; otherwise
//!   `good_count += 1`, `bad_count = 0`;
//! - `bad_count >= bad_trig` and `T > 1`: drop one thread;
//! - `good_count >= good_trig` and `T < bound`: "dip a toe in the water": one more timed
//!   barrier with `T + 1` threads; keep the extra thread only if that barrier was good (the
//!   paper's pseudo-code compares against `ASAT_EVAL_TIME` there; it means the bad-time
//!   threshold).
//!
//! All other region starts return the current size at the cost of one clock read. A team of
//! one has nothing to time, so its evaluation counts as good without a barrier. The size only
//! changes at region starts.
//!
//! # Samples: one evaluation, several timed barriers
//!
//! The paper times one barrier per evaluation. On its machine, threads spun and held their
//! CPUs for whole time slices, so with more threads than CPUs some team thread was nearly
//! always off a CPU and one barrier saw it. Here a waiting thread yields, and the thread that
//! is off a CPU is as often the other job's: with one CPU hog beside a 2-thread job on 2 CPUs,
//! half of single timed barriers pass in microseconds (measured; see BENCHMARKS.md), so two
//! bad evaluations in a row (the drop trigger) come late and by chance. An evaluation therefore
//! judges the *worst* of up to [`AsatConfig::samples`] timed barriers spread over its interval:
//! one at the evaluation itself when none was taken yet (so the first region start evaluates at
//! once, as in the paper), and one every `eval_interval / samples` in between, until one is
//! bad (the verdict is then known, and further samples would only cost). The toe dip stays one
//! barrier, as in the paper.
//!
//! # Backing off from toe dips that fail
//!
//! On a crowded machine a toe dip can pass by luck (a woken thread briefly gets a CPU ahead of
//! the running ones), and the thread it adds is dropped again two evaluations later, after
//! paying for bad barriers. Two rules bound that cost:
//!
//! - a growth is on probation until an evaluation with the larger team is good: a bad one
//!   undoes it at once, without waiting for `bad_trig` bad evaluations in a row (the toe dip
//!   was one barrier; the evaluation after it is the first verdict on the larger team over a
//!   whole interval, and the team it replaced had a record of good ones);
//! - when a growth is undone within `bad_trig + 1` evaluations, the good evaluations needed
//!   before the next toe dip double (`good_trig << backoff`, at most [`MAX_BACKOFF`]
//!   doublings); a growth that holds resets it.
//!
//! Without them, k jobs on a full machine keep oscillating, each spending a third of its
//! evaluations one thread too large (measured with 3 copies on 2 CPUs before probation: 5-6 of
//! 16 evaluations); with them they settle (item 5 of the design).
//!
//! A timed barrier only needs to tell whether its passage exceeds the threshold, so it is
//! run with [`Plan::probe_within`] the threshold: a member whose worker has not started by
//! then is revoked and the barrier counts as bad at once. A probe therefore never costs more
//! than the threshold, even on a crowded machine where the missing thread would come back
//! only after a time slice.
//!
//! # The bad-time threshold
//!
//! The paper reports three orders of magnitude between the passage of a balanced barrier
//! (every thread running: microseconds) and of an imbalanced one (a thread descheduled: the
//! waiters spin out and block, and the passage lasts until the OS runs it again, tens of
//! microseconds to a time slice). Unless set by hand, the threshold is derived from the
//! passages ASAT itself measures: `max(BAD_FACTOR x baseline, MIN_BAD_TIME)`, where the
//! baseline is the smallest passage of the last [`BASELINE_WINDOW`] timed barriers with two or
//! more threads (the smallest of a window is a balanced passage even on a loaded machine, as
//! long as one barrier in the window ran with all its threads on a CPU). Before any barrier
//! has been timed, [`DEFAULT_BAD_TIME`] is used.
//!
//! The floor, [`MIN_BAD_TIME`] = 250 us, sits between the two scales an operating system
//! puts between a balanced barrier and a late thread. An idle worker parks after its spin
//! (50 us by default), and waking a parked thread costs a futex wake (~30 us across vCPUs on
//! a VM, 5-10 us on bare metal): a barrier that had to wake a worker is not a sign of load.
//! A thread that is off a CPU because another is running there comes back only at the next
//! scheduling decision, a time slice later (Linux CFS/EEVDF: 0.75-4 ms). On this machine
//! balanced passages measure 0.3-40 us and passages with a CPU hog beside the team 1-4 ms.
//! The derived threshold is also capped at [`MAX_BAD_TIME`] = 1 ms: a job started on a crowded
//! machine measures only slow passages, and 20 times the smallest of those would call every
//! passage good.
//!
//! # The bound
//!
//! The team never exceeds what the process may really use: the runtime's `max_threads`, the
//! CPU affinity mask and the cgroup CPU quota (`cpu.max`), re-read at each evaluation (as Go
//! 1.25 does for GOMAXPROCS). A job started under `taskset -c 0` runs one thread.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::{Error, Plan, Policy, ProbeResult, RegionStart, RuntimeInfo};

/// Multiple of the balanced passage above which a passage is bad.
pub const BAD_FACTOR: u32 = 20;
/// The derived threshold is never below this (see the [module docs](crate::asat)).
pub const MIN_BAD_TIME: Duration = Duration::from_micros(250);
/// The threshold used before any passage was measured.
pub const DEFAULT_BAD_TIME: Duration = MIN_BAD_TIME;
/// How many recent passages the baseline is the minimum of.
pub const BASELINE_WINDOW: usize = 32;
/// The derived threshold is never above this (see the [module docs](crate::asat)).
pub const MAX_BAD_TIME: Duration = Duration::from_millis(1);
/// Toe dips wait at most `good_trig << MAX_BACKOFF` good evaluations.
pub const MAX_BACKOFF: u32 = 3;
/// How many evaluations [`Asat::history`] keeps (the oldest are dropped).
pub const HISTORY_LIMIT: usize = 100_000;

/// ASAT's settings. See the [module docs](crate::asat) for their meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsatConfig {
    /// At most one evaluation per this interval. Default 200 ms: with the default triggers
    /// (two bad evaluations drop a thread) a job sheds a thread within ~0.4 s of the machine
    /// filling up, and its probes (`samples` timed barriers per interval, each a few
    /// microseconds on a quiet machine and cut off at the bad-time threshold on a crowded
    /// one) cost at most `samples x 250 us` per 200 ms, 0.5% of its time.
    pub eval_interval: Duration,
    /// Timed barriers per evaluation, spread over the interval; the worst is judged. Default
    /// 4. 1 is the paper's algorithm.
    pub samples: u32,
    /// The bad-passage threshold; `None` derives it from measured passages.
    pub bad_time: Option<Duration>,
    /// Consecutive bad evaluations that drop a thread. Default 2.
    pub bad_trig: u32,
    /// Consecutive good evaluations before trying one more thread. Default 3.
    pub good_trig: u32,
}

impl Default for AsatConfig {
    fn default() -> Self {
        Self {
            eval_interval: Duration::from_millis(200),
            samples: 4,
            bad_time: None,
            bad_trig: 2,
            good_trig: 3,
        }
    }
}

/// What an evaluation decided.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// The team size stays.
    Keep,
    /// One thread fewer.
    Drop,
    /// The toe-dip barrier with one more thread was good: one thread more.
    Grow,
    /// The toe-dip barrier was bad: the team size stays.
    RejectGrow,
    /// The bound (affinity mask, CPU quota) fell below the team size: clamped to it.
    Clamp,
}

impl Decision {
    /// A short lower-case name (`keep`, `drop`, `grow`, `reject-grow`, `clamp`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Keep => "keep",
            Decision::Drop => "drop",
            Decision::Grow => "grow",
            Decision::RejectGrow => "reject-grow",
            Decision::Clamp => "clamp",
        }
    }
}

/// One evaluation, as [`Asat::history`] records it.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// When, since the first region start the policy saw.
    pub at: Duration,
    /// Team size before the evaluation.
    pub threads_before: usize,
    /// Team size after it.
    pub threads_after: usize,
    /// Passage of the timed barrier with the current size (`None` for a team of one).
    pub passage: Option<Duration>,
    /// Passage of the toe-dip barrier, if one was run.
    pub toe_passage: Option<Duration>,
    /// The bad-time threshold in force.
    pub bad_time: Duration,
    /// The bound in force.
    pub bound: usize,
    /// What was decided.
    pub decision: Decision,
}

/// The decision logic as a pure state machine: no clock, no system calls. [`Asat`] drives it;
/// tests drive it with a scripted clock and scripted passages.
#[derive(Clone, Debug)]
pub struct AsatLogic {
    config: AsatConfig,
    threads: usize,
    bad_count: u32,
    good_count: u32,
    last_eval: Option<Instant>,
    last_sample: Option<Instant>,
    first_eval: Option<Instant>,
    recent: VecDeque<Duration>,
    /// The worst passage of the samples taken for the next evaluation, and how many.
    worst: Option<Duration>,
    taken: u32,
    /// What the probe under way is for.
    pending: Option<Pending>,
    bound: usize,
    /// Evaluations so far, and the one at which the team last grew (while it may still be
    /// undone soon).
    evaluations: u64,
    grew_at: Option<u64>,
    /// The team grew and no evaluation since was good: a bad one undoes the growth at once.
    probation: bool,
    /// Toe dips wait for `good_trig << backoff` good evaluations.
    backoff: u32,
}

#[derive(Clone, Copy, Debug)]
enum Pending {
    /// A sample for the next evaluation.
    Sample,
    /// The toe dip of this evaluation.
    Toe(Evaluation),
}

/// What [`AsatLogic::step`] returns: the plan, and the evaluation it completed, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The plan for the runtime.
    pub plan: Plan,
    /// The evaluation completed by this step.
    pub evaluation: Option<Evaluation>,
}

impl AsatLogic {
    /// Starts with `initial` threads (clamped to at least 1).
    pub fn new(config: AsatConfig, initial: usize) -> Self {
        Self {
            config,
            threads: initial.max(1),
            bad_count: 0,
            good_count: 0,
            last_eval: None,
            last_sample: None,
            first_eval: None,
            recent: VecDeque::with_capacity(BASELINE_WINDOW),
            worst: None,
            taken: 0,
            pending: None,
            bound: initial.max(1),
            evaluations: 0,
            grew_at: None,
            probation: false,
            backoff: 0,
        }
    }

    /// The current team size.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The bad-time threshold now in force.
    pub fn bad_time(&self) -> Duration {
        if let Some(t) = self.config.bad_time {
            return t;
        }
        match self.recent.iter().min() {
            Some(&base) => base
                .saturating_mul(BAD_FACTOR)
                .clamp(MIN_BAD_TIME, MAX_BAD_TIME),
            None => DEFAULT_BAD_TIME,
        }
    }

    /// Whether an evaluation of a team of one is due at `now` (the eval-interval gate).
    pub fn due(&self, now: Instant) -> bool {
        self.last_eval
            .is_none_or(|t| now.saturating_duration_since(t) >= self.config.eval_interval)
    }

    /// Whether a timed-barrier sample is due at `now` (every `eval_interval / samples`).
    fn sample_due(&self, now: Instant) -> bool {
        let every = self.config.eval_interval / self.config.samples.max(1);
        self.last_sample
            .is_none_or(|t| now.saturating_duration_since(t) >= every)
    }

    fn record_passage(&mut self, probe: &ProbeResult) {
        if probe.threads >= 2 && probe.given_up == 0 {
            if self.recent.len() == BASELINE_WINDOW {
                self.recent.pop_front();
            }
            self.recent.push_back(probe.passage);
        }
    }

    /// Starts a new sample window (after the team size changed).
    fn restart_samples(&mut self) {
        self.worst = None;
        self.taken = 0;
        self.last_sample = self.last_eval;
    }

    /// One step at a region start.
    ///
    /// - `now`: the clock; `bound()` the most threads the job may use (called only at the
    ///   first region start and when an evaluation is judged, after its timed barriers, so
    ///   reading it never delays one);
    /// - `probe`: the result of the probe the previous step asked for, or `None` at a fresh
    ///   region start.
    pub fn step(
        &mut self,
        now: Instant,
        probe: Option<ProbeResult>,
        bound: impl FnOnce() -> usize,
    ) -> Step {
        let mut bound = Some(bound);
        let run = |n: usize| Step {
            plan: Plan::run(n),
            evaluation: None,
        };
        let Some(probe) = probe else {
            // A fresh region start.
            if self.first_eval.is_none() {
                // The first region start: never exceed the bound, even before the first
                // evaluation (a job under `taskset -c 0` starts with one thread).
                self.first_eval = Some(now);
                self.bound = bound.take().map_or(self.bound, |f| f()).max(1);
                if self.threads > self.bound {
                    let before = self.threads;
                    self.threads = self.bound;
                    self.last_eval = Some(now);
                    self.restart_samples();
                    return Step {
                        plan: Plan::run(self.threads),
                        evaluation: Some(Evaluation {
                            at: Duration::ZERO,
                            threads_before: before,
                            threads_after: self.threads,
                            passage: None,
                            toe_passage: None,
                            bad_time: self.bad_time(),
                            bound: self.bound,
                            decision: Decision::Clamp,
                        }),
                    };
                }
            }
            let due = self.due(now);
            // Cheap gates first: this runs at every region start.
            let wants_sample = self.threads >= 2
                && if due {
                    self.taken == 0
                } else {
                    self.taken < self.config.samples.max(1)
                        && self.sample_due(now)
                        // the window's verdict is known once a sample was bad
                        && self.worst.is_none_or(|w| w <= self.bad_time())
                };
            if wants_sample {
                self.last_sample = Some(now);
                self.pending = Some(Pending::Sample);
                return Step {
                    plan: Plan::probe_within(self.threads, self.bad_time()),
                    evaluation: None,
                };
            }
            if !due {
                return run(self.threads);
            }
            let known = self.bound;
            return self.evaluate(now, bound.take().map_or(known, |f| f()));
        };
        match self.pending.take() {
            // A probe we did not ask for: ignore it.
            None => run(self.threads),
            Some(Pending::Sample) => {
                self.record_passage(&probe);
                self.worst = Some(self.worst.map_or(probe.passage, |w| w.max(probe.passage)));
                self.taken += 1;
                if !self.due(now) {
                    return run(self.threads);
                }
                let known = self.bound;
                self.evaluate(now, bound.take().map_or(known, |f| f()))
            }
            Some(Pending::Toe(mut eval)) => {
                self.record_passage(&probe);
                eval.toe_passage = Some(probe.passage);
                if probe.passage <= self.bad_time() {
                    self.threads = (self.threads + 1).min(self.bound);
                    eval.decision = Decision::Grow;
                    self.grew_at = Some(self.evaluations);
                    self.probation = true;
                    self.restart_samples();
                } else {
                    eval.decision = Decision::RejectGrow;
                }
                eval.threads_after = self.threads;
                Step {
                    plan: Plan::run(self.threads),
                    evaluation: Some(eval),
                }
            }
        }
    }

    /// The good evaluations in a row needed before a toe dip: `good_trig`, doubled for each
    /// recent growth that was dropped again soon after (see the module docs).
    pub fn good_needed(&self) -> u32 {
        self.config.good_trig.saturating_mul(1 << self.backoff)
    }

    /// An evaluation: the bound, then the paper's counting and triggers on the worst sample
    /// of the window (none for a team of one).
    fn evaluate(&mut self, now: Instant, bound: usize) -> Step {
        let passage = self.worst.take();
        self.taken = 0;
        self.last_eval = Some(now);
        self.last_sample = Some(now);
        self.evaluations += 1;
        let first = *self.first_eval.get_or_insert(now);
        self.bound = bound.max(1);
        let mut eval = Evaluation {
            at: now.saturating_duration_since(first),
            threads_before: self.threads,
            threads_after: self.threads,
            passage,
            toe_passage: None,
            bad_time: self.bad_time(),
            bound: self.bound,
            decision: Decision::Keep,
        };
        if self.threads > self.bound {
            self.threads = self.bound;
            // A clamp ends any probation and the counts: the team is no longer the one that
            // grew, nor the one the evaluations so far were about.
            self.probation = false;
            self.bad_count = 0;
            self.good_count = 0;
            self.grew_at = None;
            eval.threads_after = self.threads;
            eval.decision = Decision::Clamp;
            self.restart_samples();
            return Step {
                plan: Plan::run(self.threads),
                evaluation: Some(eval),
            };
        }
        let bad = passage.is_some_and(|p| p > eval.bad_time);
        let undo_growth = bad && self.probation;
        self.probation = false;
        if bad {
            self.bad_count = self.bad_count.saturating_add(1);
            self.good_count = 0;
        } else {
            self.good_count = self.good_count.saturating_add(1);
            self.bad_count = 0;
        }
        if (self.bad_count >= self.config.bad_trig || undo_growth) && self.threads > 1 {
            self.threads -= 1;
            eval.decision = Decision::Drop;
            self.restart_samples();
            // A growth undone this soon was a toe dip that happened to find a free moment.
            if let Some(g) = self.grew_at.take() {
                if self.evaluations - g <= u64::from(self.config.bad_trig) + 1 {
                    self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
                }
            }
        }
        if let Some(g) = self.grew_at {
            if self.evaluations - g > u64::from(self.config.bad_trig) + 1 {
                // The growth held.
                self.grew_at = None;
                self.backoff = 0;
            }
        }
        if self.good_count >= self.good_needed() && self.threads < self.bound {
            // Dip a toe in the water: one timed barrier with one more thread.
            self.pending = Some(Pending::Toe(eval));
            return Step {
                plan: Plan::probe_within(self.threads + 1, self.bad_time()),
                evaluation: None,
            };
        }
        eval.threads_after = self.threads;
        Step {
            plan: Plan::run(self.threads),
            evaluation: Some(eval),
        }
    }
}

/// The ASAT policy. Keep an `Arc<Asat>` to read [`history`](Asat::history) and
/// [`threads`](Asat::threads) while the runtime runs.
///
/// ```
/// use asat_core::{Asat, Runtime, Schedule};
/// use std::sync::Arc;
///
/// let asat = Arc::new(Asat::new());
/// let rt = Runtime::builder().max_threads(2).shared_policy(asat.clone()).build()?;
/// let start = std::time::Instant::now();
/// while start.elapsed() < std::time::Duration::from_millis(300) {
///     rt.parallel_for(0..1000, Schedule::Static, |_| {});
/// }
/// assert!((1..=2).contains(&asat.threads()));
/// // One evaluation per 200 ms, each judging the worst of 4 timed barriers.
/// let history = asat.history();
/// assert!((1..=2).contains(&history.len()), "{history:?}");
/// # Ok::<(), asat_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Asat {
    state: Mutex<State>,
    /// Apart from `state`, which every region start takes: copying a long history for a
    /// reader then holds up only the next evaluation, not every region start.
    history: Mutex<VecDeque<Evaluation>>,
}

#[derive(Debug)]
struct State {
    logic: Option<AsatLogic>,
    config: AsatConfig,
}

impl Default for Asat {
    fn default() -> Self {
        Self::new()
    }
}

impl Asat {
    /// ASAT with the default settings.
    pub fn new() -> Self {
        Self::with_config(AsatConfig::default())
    }

    /// ASAT with `config` (checked when the runtime is built).
    pub fn with_config(config: AsatConfig) -> Self {
        Self {
            state: Mutex::new(State {
                logic: None,
                config,
            }),
            history: Mutex::new(VecDeque::new()),
        }
    }

    /// ASAT with the defaults overridden by `ASAT_EVAL_TIME`, `ASAT_BAD_TIME`, `ASAT_BAD_TRIG`,
    /// `ASAT_GOOD_TRIG` and `ASAT_SAMPLES` (times in seconds, or with a `ms`/`us` suffix; `ASAT_BAD_TIME=auto`
    /// derives it).
    pub fn from_env() -> Result<Self, Error> {
        Self::from_env_with(&crate::builder::env_var)
    }

    pub(crate) fn from_env_with(env: &dyn Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let mut c = AsatConfig::default();
        if let Some(v) = env("ASAT_EVAL_TIME") {
            c.eval_interval = parse_duration(&v)
                .ok_or_else(|| Error::env("ASAT_EVAL_TIME", &v, DURATION_ALLOWED))?;
        }
        if let Some(v) = env("ASAT_BAD_TIME") {
            c.bad_time = if v.trim().eq_ignore_ascii_case("auto") {
                None
            } else {
                Some(parse_duration(&v).ok_or_else(|| {
                    Error::env(
                        "ASAT_BAD_TIME",
                        &v,
                        "must be auto or a positive time from 1ns to 1000000s, such as 0.0001, \
                         100us or 0.1ms",
                    )
                })?)
            };
        }
        for (key, slot) in [
            ("ASAT_BAD_TRIG", &mut c.bad_trig),
            ("ASAT_GOOD_TRIG", &mut c.good_trig),
            ("ASAT_SAMPLES", &mut c.samples),
        ] {
            if let Some(v) = env(key) {
                *slot = v
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&n| (1..=1000).contains(&n))
                    .ok_or_else(|| {
                        Error::env(key, &v, "must be a whole number between 1 and 1000")
                    })?;
            }
        }
        Ok(Self::with_config(c))
    }

    /// The settings.
    pub fn config(&self) -> AsatConfig {
        self.state.lock().config
    }

    /// The current team size (the runtime's `max_threads` before the first region).
    pub fn threads(&self) -> usize {
        self.state
            .lock()
            .logic
            .as_ref()
            .map_or(0, AsatLogic::threads)
    }

    /// Every evaluation so far (the last [`HISTORY_LIMIT`]), oldest first.
    pub fn history(&self) -> Vec<Evaluation> {
        self.history.lock().iter().copied().collect()
    }
}

const DURATION_ALLOWED: &str = "must be a positive time from 1ns to 1000000s, in seconds (0.1) \
     or with a unit (100ms, 500us)";

/// Parses `0.1`, `0.1s`, `100ms`, `500us`.
fn parse_duration(v: &str) -> Option<Duration> {
    let t = v.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let x: f64 = num.trim().parse().ok()?;
    let secs = x * scale;
    // At least a nanosecond: a value that rounds to zero is as wrong as 0.
    (1e-9..1e6)
        .contains(&secs)
        .then(|| Duration::from_secs_f64(secs))
}

impl Policy for Asat {
    fn name(&self) -> &str {
        "asat"
    }

    fn attach(&self, rt: &RuntimeInfo) -> Result<(), Error> {
        let mut st = self.state.lock();
        let c = st.config;
        if c.bad_trig == 0 || c.good_trig == 0 || c.samples == 0 {
            return Err(Error::policy(
                "asat",
                format!(
                    "bad_trig {}, good_trig {}, samples {}: each must be at least 1",
                    c.bad_trig, c.good_trig, c.samples
                ),
            ));
        }
        if c.eval_interval.is_zero() {
            return Err(Error::policy("asat", "eval_interval 0: must be positive"));
        }
        if st.logic.is_some() {
            return Err(Error::policy(
                "asat",
                "this Asat is already attached to a runtime: each runtime needs its own",
            ));
        }
        st.logic = Some(AsatLogic::new(c, rt.max_threads));
        Ok(())
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        let mut st = self.state.lock();
        let Some(logic) = st.logic.as_mut() else {
            return Plan::run(start.max_threads);
        };
        let max = start.max_threads;
        let step = logic.step(start.now, start.probe, || start.cpu_budget().min(max));
        drop(st);
        if let Some(e) = step.evaluation {
            let mut history = self.history.lock();
            if history.len() == HISTORY_LIMIT {
                history.pop_front();
            }
            history.push_back(e);
        }
        step.plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);
    const MS: Duration = Duration::from_millis(1);

    /// The paper's algorithm: one timed barrier per evaluation.
    fn cfg() -> AsatConfig {
        AsatConfig {
            eval_interval: 100 * MS,
            samples: 1,
            bad_time: Some(100 * US),
            bad_trig: 2,
            good_trig: 3,
        }
    }

    /// Drives one region start: the passage for each probe comes from `passage(threads)`.
    fn region(
        l: &mut AsatLogic,
        now: Instant,
        bound: usize,
        passage: &dyn Fn(usize) -> Duration,
    ) -> (usize, Vec<usize>, Option<Evaluation>) {
        let mut probes = Vec::new();
        let mut probe = None;
        let mut eval = None;
        loop {
            let s = l.step(now, probe, || bound);
            if s.evaluation.is_some() {
                eval = s.evaluation;
            }
            match s.plan {
                Plan::Run { threads } => return (threads, probes, eval),
                Plan::Probe {
                    threads,
                    give_up_after,
                    ..
                } => {
                    assert_eq!(
                        give_up_after,
                        Some(l.bad_time()),
                        "probes give up at the threshold"
                    );
                    probes.push(threads);
                    probe = Some(ProbeResult::new(threads, passage(threads), 0));
                }
            }
        }
    }

    #[test]
    fn regions_between_evaluations_do_not_probe() {
        let mut l = AsatLogic::new(cfg(), 4);
        let t0 = Instant::now();
        let (n, probes, e) = region(&mut l, t0, 4, &|_| 5 * US);
        assert_eq!((n, probes.len()), (4, 1));
        assert!(e.is_some());
        for ms in [1, 50, 99] {
            let (n, probes, e) = region(&mut l, t0 + ms * MS, 4, &|_| 5 * US);
            assert_eq!((n, probes.len(), e), (4, 0, None));
        }
        let (_, probes, _) = region(&mut l, t0 + 100 * MS, 4, &|_| 5 * US);
        assert_eq!(probes, vec![4]);
    }

    #[test]
    fn samples_spread_over_the_interval_and_the_worst_is_judged() {
        let mut c = cfg();
        c.samples = 4;
        let mut l = AsatLogic::new(c, 2);
        let t0 = Instant::now();
        // The first region start evaluates at once, on one barrier.
        let (n, probes, e) = region(&mut l, t0, 2, &|_| 5 * US);
        assert_eq!((n, probes), (2, vec![2]));
        assert_eq!(e.unwrap().at, Duration::ZERO);
        // Then a sample every 25 ms; the second is bad, so the window's verdict is known and
        // the third is skipped; the evaluation comes at 100 ms and judges the worst.
        let mut evals = Vec::new();
        let mut sampled = Vec::new();
        for ms in (5..=100).step_by(5) {
            let p = if ms == 50 { 900 * US } else { 6 * US };
            let (n, probes, e) = region(&mut l, t0 + ms * MS, 2, &|_| p);
            assert_eq!(n, 2);
            if !probes.is_empty() {
                sampled.push(ms);
            }
            evals.extend(e);
        }
        assert_eq!(
            sampled,
            vec![25, 50],
            "samples at 25 and 50 ms, none after a bad one"
        );
        assert_eq!(evals.len(), 1, "one evaluation per interval: {evals:?}");
        assert_eq!(evals[0].at, 100 * MS);
        assert_eq!(
            evals[0].passage,
            Some(900 * US),
            "the worst sample is judged"
        );
        // A good window: three samples, judged at 200 ms.
        let mut sampled = Vec::new();
        for ms in (105..=200).step_by(5) {
            let (_, probes, e) = region(&mut l, t0 + ms * MS, 2, &|_| 5 * US);
            if !probes.is_empty() {
                sampled.push(ms);
            }
            evals.extend(e);
        }
        assert_eq!(sampled, vec![125, 150, 175]);
        assert_eq!(evals.len(), 2, "{evals:?}");
        assert_eq!((evals[1].at, evals[1].passage), (200 * MS, Some(5 * US)));
    }

    #[test]
    fn a_growth_undone_at_once_doubles_the_wait_for_the_next_toe_dip() {
        // 1 thread good; 2 threads: the toe dip passes but every later barrier is bad.
        let mut l = AsatLogic::new(cfg(), 1);
        let t0 = Instant::now();
        let mut sizes = Vec::new();
        let mut decisions = Vec::new();
        for k in 0..40 {
            // At one thread, the only probe is a toe dip.
            let at_one = l.threads() == 1;
            let passage = move |_| if at_one { 5 * US } else { 5000 * US };
            let (n, _, e) = region(&mut l, t0 + 100 * k * MS, 2, &passage);
            sizes.push(n);
            decisions.push(e.map(|e| e.decision));
        }
        let grows: Vec<usize> = decisions
            .iter()
            .enumerate()
            .filter(|(_, d)| **d == Some(Decision::Grow))
            .map(|(k, _)| k)
            .collect();
        // Toe dips after 3, then 6, then 12 good evaluations; each growth is on probation and
        // undone by the first (bad) evaluation after it.
        assert_eq!(grows, vec![2, 9, 22], "{decisions:?}");
        assert!(sizes.iter().all(|&n| n <= 2));
        for &g in &grows {
            assert_eq!(decisions[g + 1], Some(Decision::Drop), "{decisions:?}");
        }
        let gaps: Vec<usize> = grows.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps[0], 1 + 6, "{decisions:?}");
        assert_eq!(gaps[1], 1 + 12, "{decisions:?}");
        assert_eq!(l.good_needed(), 3 << 3);
    }

    #[test]
    fn a_growth_is_on_probation_until_a_good_evaluation() {
        let t0 = Instant::now();
        let at = |k: u32| t0 + 100 * k * MS;
        let good = |_| 5 * US;
        let bad = |_| 5000 * US;
        // Grow from 1 to 2 at the third evaluation, then one good evaluation confirms it: a
        // single bad evaluation afterwards keeps 2 threads (bad_trig = 2), a second drops.
        let mut l = AsatLogic::new(cfg(), 1);
        for k in 0..3 {
            region(&mut l, at(k), 2, &good);
        }
        assert_eq!(l.threads(), 2);
        let (n, _, e) = region(&mut l, at(3), 2, &good);
        assert_eq!((n, e.unwrap().decision), (2, Decision::Keep));
        let (n, _, e) = region(&mut l, at(4), 2, &bad);
        assert_eq!((n, e.unwrap().decision), (2, Decision::Keep));
        let (n, _, e) = region(&mut l, at(5), 2, &bad);
        assert_eq!((n, e.unwrap().decision), (1, Decision::Drop));
        // Unconfirmed: the first evaluation after the growth is bad and undoes it.
        let mut l = AsatLogic::new(cfg(), 1);
        for k in 0..3 {
            region(&mut l, at(k), 2, &good);
        }
        let (n, _, e) = region(&mut l, at(3), 2, &bad);
        assert_eq!((n, e.unwrap().decision), (1, Decision::Drop));
        // The initial size is not on probation: a job starts with the bound, as fixed does.
        let mut l = AsatLogic::new(cfg(), 2);
        let (n, _, _) = region(&mut l, at(0), 2, &bad);
        assert_eq!(n, 2);
    }

    #[test]
    fn drops_after_bad_trig_bad_evaluations_and_never_below_one() {
        let mut l = AsatLogic::new(cfg(), 3);
        let t0 = Instant::now();
        let bad = |_| 5000 * US;
        let sizes: Vec<usize> = (0..6)
            .map(|k| region(&mut l, t0 + 100 * k * MS, 3, &bad).0)
            .collect();
        // first bad: keep; second bad: drop to 2; bad_count stays >= trig: drop to 1; then 1.
        assert_eq!(sizes, vec![3, 2, 1, 1, 1, 1]);
    }

    #[test]
    fn with_samples_a_load_seen_half_the_time_drops_within_two_evaluations() {
        // One CPU hog beside a 2-thread job on 2 CPUs: every other timed barrier is bad.
        let mut c = cfg();
        c.samples = 4;
        let mut l = AsatLogic::new(c, 2);
        let t0 = Instant::now();
        let mut k = 0u32;
        let mut evals = Vec::new();
        let mut n = 2;
        for ms in (0..200).step_by(25) {
            let p = if k % 2 == 0 { 3000 * US } else { 8 * US };
            let (m, probes, e) = region(&mut l, t0 + ms * MS, 2, &|_| p);
            k += probes.len() as u32;
            evals.extend(e);
            n = m;
        }
        assert_eq!(n, 1, "{evals:?}");
        assert_eq!(evals.len(), 2);
        assert_eq!(evals[1].decision, Decision::Drop);
    }

    #[test]
    fn toe_dip_adopted_when_good_rejected_when_bad() {
        let t0 = Instant::now();
        let at = |k: u32| t0 + 100 * k * MS;
        // good everywhere: after good_trig evaluations, one more thread
        let mut l = AsatLogic::new(cfg(), 1);
        let good = |_| 5 * US;
        let (n, probes, _) = region(&mut l, at(0), 4, &good);
        assert_eq!((n, probes.len()), (1, 0), "a team of one is not timed");
        region(&mut l, at(1), 4, &good);
        let (n, probes, e) = region(&mut l, at(2), 4, &good);
        assert_eq!(probes, vec![2], "toe dip with one more thread");
        assert_eq!(n, 2);
        assert_eq!(e.unwrap().decision, Decision::Grow);
        // with 2 threads good, 3 threads bad: the dip is rejected
        let mut l = AsatLogic::new(cfg(), 2);
        let two_ok = |n: usize| if n <= 2 { 5 * US } else { 5000 * US };
        let mut decisions = Vec::new();
        for k in 0..6 {
            let (n, _, e) = region(&mut l, at(k), 4, &two_ok);
            assert_eq!(n, 2);
            decisions.push(e.unwrap().decision);
        }
        assert!(decisions.contains(&Decision::RejectGrow), "{decisions:?}");
    }

    #[test]
    fn never_grows_past_the_bound_and_clamps_to_it() {
        let t0 = Instant::now();
        let mut l = AsatLogic::new(cfg(), 2);
        for k in 0..20 {
            let (n, probes, _) = region(&mut l, t0 + 100 * k * MS, 2, &|_| US);
            assert_eq!(n, 2);
            assert!(probes.iter().all(|&p| p <= 2), "{probes:?}");
        }
        // the affinity mask shrinks to one CPU: seen at the next evaluation
        let (n, probes, e) = region(&mut l, t0 + Duration::from_secs(5), 1, &|_| US);
        assert_eq!((n, probes.len()), (1, 1));
        assert_eq!(e.unwrap().decision, Decision::Clamp);
    }

    #[test]
    fn a_clamp_forgets_what_the_larger_team_counted() {
        // One bad evaluation of 4 threads, then the bound drops to 2: the clamped team starts
        // counting afresh, so one bad evaluation of it does not drop it below the new bound.
        let t0 = Instant::now();
        let mut l = AsatLogic::new(cfg(), 4);
        let bad = |_: usize| 900 * US;
        let (n, _, e) = region(&mut l, t0, 4, &bad);
        assert_eq!((n, e.unwrap().decision), (4, Decision::Keep));
        let (n, _, e) = region(&mut l, t0 + 100 * MS, 2, &bad);
        assert_eq!((n, e.unwrap().decision), (2, Decision::Clamp));
        let (n, _, e) = region(&mut l, t0 + 200 * MS, 2, &bad);
        assert_eq!((n, e.unwrap().decision), (2, Decision::Keep));
        let (n, _, e) = region(&mut l, t0 + 300 * MS, 2, &bad);
        assert_eq!((n, e.unwrap().decision), (1, Decision::Drop));
    }

    #[test]
    fn an_absurd_passage_does_not_overflow_the_threshold() {
        let mut c = cfg();
        c.bad_time = None;
        let mut l = AsatLogic::new(c, 2);
        region(&mut l, Instant::now(), 2, &|_| Duration::MAX);
        assert_eq!(l.bad_time(), MAX_BAD_TIME);
    }

    #[test]
    fn derived_threshold_follows_the_smallest_recent_passage() {
        let mut c = cfg();
        c.bad_time = None;
        let mut l = AsatLogic::new(c, 2);
        assert_eq!(l.bad_time(), DEFAULT_BAD_TIME);
        let t0 = Instant::now();
        region(&mut l, t0, 2, &|_| 30 * US);
        assert_eq!(l.bad_time(), 30 * US * BAD_FACTOR);
        region(&mut l, t0 + 100 * MS, 2, &|_| 50 * US);
        assert_eq!(
            l.bad_time(),
            30 * US * BAD_FACTOR,
            "the minimum of the window is the baseline"
        );
        // a 1 us baseline is floored
        region(&mut l, t0 + 200 * MS, 2, &|_| US);
        assert_eq!(l.bad_time(), MIN_BAD_TIME);
        // a window of only slow passages (a crowded machine from the start) is capped
        let mut l = AsatLogic::new(c, 2);
        region(&mut l, t0, 2, &|_| 20 * MS);
        assert_eq!(l.bad_time(), MAX_BAD_TIME);
    }

    #[test]
    fn probes_given_up_on_do_not_enter_the_baseline() {
        let mut c = cfg();
        c.bad_time = None;
        let mut l = AsatLogic::new(c, 2);
        let t0 = Instant::now();
        let s = l.step(t0, None, || 2);
        assert_eq!(s.plan, Plan::probe_within(2, DEFAULT_BAD_TIME));
        let mut r = ProbeResult::new(2, DEFAULT_BAD_TIME + US, 0);
        r.given_up = 1;
        let s = l.step(t0, Some(r), || 2);
        assert_eq!(s.evaluation.unwrap().passage, Some(DEFAULT_BAD_TIME + US));
        assert_eq!(
            l.bad_time(),
            DEFAULT_BAD_TIME,
            "no baseline from a cut-off probe"
        );
    }

    #[test]
    fn env_settings_and_errors() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let a = Asat::from_env_with(&env(&[
            ("ASAT_EVAL_TIME", "250ms"),
            ("ASAT_BAD_TIME", "50us"),
            ("ASAT_BAD_TRIG", "3"),
            ("ASAT_GOOD_TRIG", "4"),
            ("ASAT_SAMPLES", "2"),
        ]))
        .unwrap();
        assert_eq!(
            a.config(),
            AsatConfig {
                eval_interval: 250 * MS,
                samples: 2,
                bad_time: Some(50 * US),
                bad_trig: 3,
                good_trig: 4
            }
        );
        let e = Asat::from_env_with(&env(&[("ASAT_EVAL_TIME", "soon")])).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "environment variable ASAT_EVAL_TIME=\"soon\" is invalid: must be a positive time"
            ),
            "{e}"
        );
        // A time that rounds to zero is an error naming the variable, not an attach error.
        let e = Asat::from_env_with(&env(&[("ASAT_EVAL_TIME", "1e-10")])).unwrap_err();
        assert!(e.to_string().contains("ASAT_EVAL_TIME"), "{e}");
        let e = Asat::from_env_with(&env(&[("ASAT_BAD_TRIG", "0")])).unwrap_err();
        assert!(e.to_string().contains("between 1 and 1000"), "{e}");
        let e = Asat::from_env_with(&env(&[("ASAT_SAMPLES", "x")])).unwrap_err();
        assert!(e.to_string().contains("ASAT_SAMPLES"), "{e}");
        assert!(Asat::from_env_with(&env(&[("ASAT_BAD_TIME", "auto")]))
            .unwrap()
            .config()
            .bad_time
            .is_none());
    }

    proptest::proptest! {
        #[test]
        fn team_size_never_leaves_one_to_bound(
            initial in 1usize..16,
            samples in 1u32..5,
            steps in proptest::collection::vec((0u64..300, 0u64..10_000, 1usize..16), 1..200),
        ) {
            let mut c = cfg();
            c.bad_time = None;
            c.samples = samples;
            let mut l = AsatLogic::new(c, initial);
            let t0 = Instant::now();
            let mut t = 0;
            let mut last_bound = initial;
            let mut last_eval: Option<u64> = None;
            let mut prev_n = initial;
            for (dt, passage_us, bound) in steps {
                t += dt;
                let now = t0 + Duration::from_millis(t);
                let (n, probes, e) = region(&mut l, now, bound, &|_| US * passage_us as u32);
                if let Some(e) = e {
                    last_bound = e.bound;
                    proptest::prop_assert_eq!(e.bound, bound);
                    if let Some(prev) = last_eval {
                        proptest::prop_assert!(t - prev >= 100, "evaluations {} ms apart", t - prev);
                    }
                    last_eval = Some(t);
                }
                proptest::prop_assert!(n >= 1 && n <= last_bound, "n {} bound {}", n, last_bound);
                proptest::prop_assert!(probes.len() <= 2);
                // Samples run with the current size, a toe dip with one more, within the bound.
                proptest::prop_assert!(probes.iter().all(|&p| p >= 2 && p <= prev_n + 1));
                proptest::prop_assert!(probes.len() < 2 || probes[1] <= last_bound);
                prev_n = n;
            }
        }
    }
}
