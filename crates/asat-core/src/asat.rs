//! ASAT, Automatic Self-Allocating Threads (Severance, Enbody, Petersen): a job probes the
//! machine's load with a timed barrier before parallel regions and adjusts its own team size,
//! with no central coordinator.
//!
//! # The algorithm (the paper's section 5)
//!
//! At most once per `eval_interval`, at a region start, ASAT runs a timed barrier with the
//! current team size `T` and measures its passage (first thread in to last thread out):
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
//! # The bound
//!
//! The team never exceeds what the process may really use: the runtime's `max_threads`, the
//! CPU affinity mask and the cgroup CPU quota, re-read at each evaluation (as Go 1.25 does for
//! GOMAXPROCS). A job started under `taskset -c 0` runs one thread.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::{Error, Plan, Policy, ProbeResult, RegionStart, RuntimeInfo};

/// Multiple of the balanced passage above which a passage is bad.
pub const BAD_FACTOR: u32 = 20;
/// The derived threshold is never below this.
pub const MIN_BAD_TIME: Duration = Duration::from_micros(20);
/// The threshold used before any passage was measured.
pub const DEFAULT_BAD_TIME: Duration = Duration::from_micros(100);
/// How many recent passages the baseline is the minimum of.
pub const BASELINE_WINDOW: usize = 32;
/// How many evaluations [`Asat::history`] keeps (the oldest are dropped).
pub const HISTORY_LIMIT: usize = 100_000;

/// ASAT's settings. See the [module docs](crate::asat) for their meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsatConfig {
    /// At most one evaluation per this interval. Default 100 ms: with the default triggers a
    /// job sheds a thread within ~0.2 s of the machine filling up, while a probe (a few to a
    /// few hundred microseconds) ten times a second stays far below 1% of its time.
    pub eval_interval: Duration,
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
            eval_interval: Duration::from_millis(100),
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
    /// When, since the policy's first evaluation.
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
    first_eval: Option<Instant>,
    recent: VecDeque<Duration>,
    /// The evaluation under way (between a probe request and its result).
    pending: Option<Evaluation>,
    bound: usize,
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
            first_eval: None,
            recent: VecDeque::with_capacity(BASELINE_WINDOW),
            pending: None,
            bound: initial.max(1),
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
            Some(&base) => (base * BAD_FACTOR).max(MIN_BAD_TIME),
            None => DEFAULT_BAD_TIME,
        }
    }

    /// Whether an evaluation is due at `now` (the eval-interval gate).
    pub fn due(&self, now: Instant) -> bool {
        self.last_eval
            .is_none_or(|t| now.saturating_duration_since(t) >= self.config.eval_interval)
    }

    fn record_passage(&mut self, probe: &ProbeResult) {
        if probe.threads >= 2 {
            if self.recent.len() == BASELINE_WINDOW {
                self.recent.pop_front();
            }
            self.recent.push_back(probe.passage);
        }
    }

    /// One step at a region start.
    ///
    /// - `now`: the clock; `bound()` the most threads the job may use (called only when an
    ///   evaluation starts);
    /// - `probe`: the result of the probe the previous step asked for, or `None` at a fresh
    ///   region start.
    pub fn step(
        &mut self,
        now: Instant,
        probe: Option<ProbeResult>,
        bound: impl FnOnce() -> usize,
    ) -> Step {
        let run = |n: usize| Step {
            plan: Plan::run(n),
            evaluation: None,
        };
        let Some(probe) = probe else {
            // A fresh region start.
            if !self.due(now) {
                return run(self.threads);
            }
            self.last_eval = Some(now);
            let first = *self.first_eval.get_or_insert(now);
            self.bound = bound().max(1);
            let mut eval = Evaluation {
                at: now.saturating_duration_since(first),
                threads_before: self.threads,
                threads_after: self.threads,
                passage: None,
                toe_passage: None,
                bad_time: self.bad_time(),
                bound: self.bound,
                decision: Decision::Keep,
            };
            if self.threads > self.bound {
                self.threads = self.bound;
                eval.threads_after = self.threads;
                eval.decision = Decision::Clamp;
                return Step {
                    plan: Plan::run(self.threads),
                    evaluation: Some(eval),
                };
            }
            if self.threads >= 2 {
                self.pending = Some(eval);
                return Step {
                    plan: Plan::probe(self.threads),
                    evaluation: None,
                };
            }
            // A team of one: nothing to time, the evaluation is good.
            return self.judge(eval, None);
        };
        let Some(mut eval) = self.pending.take() else {
            // A probe we did not ask for: ignore it.
            return run(self.threads);
        };
        self.record_passage(&probe);
        if probe.threads > self.threads {
            // The toe dip.
            eval.toe_passage = Some(probe.passage);
            if probe.passage <= self.bad_time() {
                self.threads = (self.threads + 1).min(self.bound);
                eval.decision = Decision::Grow;
            } else {
                eval.decision = Decision::RejectGrow;
            }
            eval.threads_after = self.threads;
            return Step {
                plan: Plan::run(self.threads),
                evaluation: Some(eval),
            };
        }
        self.judge(eval, Some(probe.passage))
    }

    /// The paper's counting and triggers, after the barrier with the current size.
    fn judge(&mut self, mut eval: Evaluation, passage: Option<Duration>) -> Step {
        eval.passage = passage;
        let bad = passage.is_some_and(|p| p > eval.bad_time);
        if bad {
            self.bad_count += 1;
            self.good_count = 0;
        } else {
            self.good_count += 1;
            self.bad_count = 0;
        }
        if self.bad_count >= self.config.bad_trig && self.threads > 1 {
            self.threads -= 1;
            eval.decision = Decision::Drop;
        }
        if self.good_count >= self.config.good_trig && self.threads < self.bound {
            self.pending = Some(eval);
            return Step {
                plan: Plan::probe(self.threads + 1),
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
/// rt.parallel_for(0..1000, Schedule::Static, |_| {});
/// assert!((1..=2).contains(&asat.threads()));
/// assert_eq!(asat.history().len(), 1); // the first region start evaluated
/// # Ok::<(), asat_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Asat {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    logic: Option<AsatLogic>,
    config: AsatConfig,
    history: VecDeque<Evaluation>,
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
                history: VecDeque::new(),
            }),
        }
    }

    /// ASAT with the defaults overridden by `ASAT_EVAL_TIME`, `ASAT_BAD_TIME`, `ASAT_BAD_TRIG`
    /// and `ASAT_GOOD_TRIG` (times in seconds, or with a `ms`/`us` suffix; `ASAT_BAD_TIME=auto`
    /// derives it).
    pub fn from_env() -> Result<Self, Error> {
        Self::from_env_with(&|k| std::env::var(k).ok())
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
                Some(parse_duration(&v).filter(|d| !d.is_zero()).ok_or_else(|| {
                    Error::env(
                        "ASAT_BAD_TIME",
                        &v,
                        "must be auto or a positive time such as 0.0001, 100us or 0.1ms",
                    )
                })?)
            };
        }
        for (key, slot) in [
            ("ASAT_BAD_TRIG", &mut c.bad_trig),
            ("ASAT_GOOD_TRIG", &mut c.good_trig),
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
        self.state.lock().history.iter().copied().collect()
    }
}

const DURATION_ALLOWED: &str =
    "must be a positive time in seconds (0.1) or with a unit (100ms, 500us)";

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
    (secs.is_finite() && secs > 0.0 && secs < 1e6).then(|| Duration::from_secs_f64(secs))
}

impl Policy for Asat {
    fn name(&self) -> &str {
        "asat"
    }

    fn attach(&self, rt: &RuntimeInfo) -> Result<(), Error> {
        let mut st = self.state.lock();
        let c = st.config;
        if c.bad_trig == 0 || c.good_trig == 0 {
            return Err(Error::policy(
                "asat",
                format!(
                    "bad_trig {} and good_trig {}: both must be at least 1",
                    c.bad_trig, c.good_trig
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
        let State { logic, history, .. } = &mut *st;
        let Some(logic) = logic.as_mut() else {
            return Plan::run(start.max_threads);
        };
        let max = start.max_threads;
        let step = logic.step(start.now, start.probe, || start.cpu_budget().min(max));
        if let Some(e) = step.evaluation {
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

    fn cfg() -> AsatConfig {
        AsatConfig {
            eval_interval: Duration::from_millis(100),
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
                Plan::Probe { threads } => {
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
            let (n, probes, e) = region(&mut l, t0 + Duration::from_millis(ms), 4, &|_| 5 * US);
            assert_eq!((n, probes.len(), e), (4, 0, None));
        }
        let (_, probes, _) = region(&mut l, t0 + Duration::from_millis(100), 4, &|_| 5 * US);
        assert_eq!(probes, vec![4]);
    }

    #[test]
    fn drops_after_bad_trig_bad_evaluations_and_never_below_one() {
        let mut l = AsatLogic::new(cfg(), 3);
        let t0 = Instant::now();
        let bad = |_| 5000 * US;
        let sizes: Vec<usize> = (0..6)
            .map(|k| region(&mut l, t0 + Duration::from_millis(100 * k), 3, &bad).0)
            .collect();
        // first bad: keep; second bad: drop to 2; bad_count stays >= trig: drop to 1; then 1.
        assert_eq!(sizes, vec![3, 2, 1, 1, 1, 1]);
    }

    #[test]
    fn toe_dip_adopted_when_good_rejected_when_bad() {
        let t0 = Instant::now();
        let at = |k: u64| t0 + Duration::from_millis(100 * k);
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
            let (n, probes, _) = region(&mut l, t0 + Duration::from_millis(100 * k), 2, &|_| US);
            assert_eq!(n, 2);
            assert!(probes.iter().all(|&p| p <= 2), "{probes:?}");
        }
        // the affinity mask shrinks to one CPU
        let (n, probes, e) = region(&mut l, t0 + Duration::from_secs(5), 1, &|_| US);
        assert_eq!((n, probes.len()), (1, 0));
        assert_eq!(e.unwrap().decision, Decision::Clamp);
    }

    #[test]
    fn derived_threshold_follows_the_smallest_recent_passage() {
        let mut c = cfg();
        c.bad_time = None;
        let mut l = AsatLogic::new(c, 2);
        assert_eq!(l.bad_time(), DEFAULT_BAD_TIME);
        let t0 = Instant::now();
        region(&mut l, t0, 2, &|_| 3 * US);
        assert_eq!(l.bad_time(), (3 * US * BAD_FACTOR).max(MIN_BAD_TIME));
        region(&mut l, t0 + Duration::from_millis(100), 2, &|_| 10 * US);
        assert_eq!(
            l.bad_time(),
            60 * US,
            "the minimum of the window is the baseline"
        );
        // a 1 us baseline is floored
        region(&mut l, t0 + Duration::from_millis(200), 2, &|_| US);
        assert_eq!(l.bad_time(), MIN_BAD_TIME);
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
        ]))
        .unwrap();
        assert_eq!(
            a.config(),
            AsatConfig {
                eval_interval: Duration::from_millis(250),
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
        let e = Asat::from_env_with(&env(&[("ASAT_BAD_TRIG", "0")])).unwrap_err();
        assert!(e.to_string().contains("between 1 and 1000"), "{e}");
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
            steps in proptest::collection::vec((0u64..300, 0u64..10_000, 1usize..16), 1..200),
        ) {
            let mut c = cfg();
            c.bad_time = None;
            let mut l = AsatLogic::new(c, initial);
            let t0 = Instant::now();
            let mut t = 0;
            let mut last_bound = initial;
            for (dt, passage_us, bound) in steps {
                t += dt;
                let now = t0 + Duration::from_millis(t);
                let due = l.due(now);
                let (n, probes, _) = region(&mut l, now, bound, &|_| US * passage_us as u32);
                if due {
                    last_bound = bound;
                }
                proptest::prop_assert!(n >= 1 && n <= last_bound, "n {} bound {}", n, last_bound);
                proptest::prop_assert!(probes.len() <= 2);
                proptest::prop_assert!(probes.iter().all(|&p| p >= 2 && p <= last_bound));
            }
        }
    }
}
