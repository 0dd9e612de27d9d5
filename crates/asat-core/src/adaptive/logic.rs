//! The decision logic: a pure state machine (no clock reads, no system calls) that
//! [`Asat`](super::Asat) drives at region starts, asat-lab's simulator (`asat_lab::asat_sim`)
//! drives on a simulated machine, and tests drive with a scripted clock.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use super::*;
use super::{fair, rule};
use crate::{Plan, ProbeResult};

/// What the logic reads from the machine when it judges an evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    /// The most threads the job may use (`max_threads`, affinity mask, CPU quota).
    pub bound: usize,
    /// CPU pressure since the previous reading (the share of the interval in which some
    /// runnable thread of the machine waited for a CPU), `None` where the kernel has none.
    pub pressure: Option<f64>,
    /// The share of its runnable time the job's threads spent waiting for a CPU since the
    /// previous reading (the kernel's per-thread run-queue delay), `None` where unknown.
    pub wait: Option<f64>,
    /// The share of the machine's CPU time that was idle since the previous reading, `None`
    /// where unknown.
    pub idle: Option<f64>,
    /// The CPUs the rest of the machine left free since the previous reading (all CPUs less
    /// those busy with something other than this job), `None` where unknown.
    pub free: Option<f64>,
    /// This job's equal share of the machine among the parallel jobs on it
    /// ([`claims::share_after`](super::claims::share_after)), `None` where no other claims one
    /// (and none that did left) or the kernel does not say.
    pub equal: Option<f64>,
    /// This job's place among the claimants of the equal share and itself, and their
    /// number ([`fair::share_place`](super::fair::share_place)), by which it rounds the
    /// share; `None` rounds it by the job's draw.
    pub rank: Option<(usize, usize)>,
}

impl From<usize> for Machine {
    /// A bound, pressure unknown.
    fn from(bound: usize) -> Self {
        Machine {
            bound,
            pressure: None,
            wait: None,
            idle: None,
            free: None,
            equal: None,
            rank: None,
        }
    }
}

/// Timed barriers, back to back, of asat's rule's first evaluation (at most `samples`; the
/// runtime runs at most [`MAX_PROBES_PER_REGION`](crate::MAX_PROBES_PER_REGION) per region
/// start, and one is left for a growth probe).
pub const FIRST_SAMPLES: u32 = 3;

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
    /// The sum over those samples of the fraction of members that entered on time.
    prompt_sum: f64,
    /// What the probe under way is for.
    pending: Option<Pending>,
    bound: usize,
    pressure: Option<f64>,
    wait: Option<f64>,
    free: Option<f64>,
    /// The equal share at the previous evaluation.
    last_equal: Option<f64>,
    /// Evaluations so far, and the one at which the team last grew (while it may still be
    /// undone soon).
    evaluations: u64,
    grew_at: Option<u64>,
    /// The team grew and no evaluation since was good: a bad one undoes the growth at once.
    probation: bool,
    /// The team size before the growth on probation.
    before_growth: usize,
    /// Toe dips wait for `good_trig << backoff` good evaluations.
    backoff: u32,
    /// The seed of the random rounding of growths into idle CPUs ([`rule::idle_target`]),
    /// and the draws so far.
    seed: u64,
    draws: u64,
}

#[derive(Clone, Copy, Debug)]
enum Pending {
    /// A sample for the next evaluation.
    Sample,
    /// The toe dip (growth probe) of this evaluation.
    Toe(Evaluation),
}

/// What [`AsatLogic::step`] returns: the plan, and the evaluation it completed, if any.
#[derive(Clone, Copy, Debug, PartialEq)]
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
            prompt_sum: 0.0,
            pending: None,
            bound: initial.max(1),
            pressure: None,
            wait: None,
            free: None,
            last_equal: None,
            evaluations: 0,
            grew_at: None,
            probation: false,
            before_growth: initial.max(1),
            backoff: 0,
            seed: 0,
            draws: 0,
        }
    }

    /// The seed of the random rounding of growths into idle CPUs (0 unless set): jobs on one
    /// machine need different seeds, or those in the same state round alike.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The next draw, uniform in `[0, 1)`: the `draws`-th of the seed's sequence (a generator
    /// per draw keeps the logic `Clone`; draws come at most once per evaluation).
    fn draw(&mut self) -> f64 {
        self.draws += 1;
        let key = self.seed ^ self.draws.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        StdRng::seed_from_u64(key).random_range(0.0..1.0)
    }

    /// The job's own rounding of its equal share ([`fair::share_threads`]): one draw of the
    /// seed, the same at every evaluation, so that a share with a fraction rounds up in about
    /// that fraction of the jobs, and in the same ones each time.
    pub(crate) fn share_rounding(&self) -> f64 {
        StdRng::seed_from_u64(self.seed ^ 0x5EED_F00D_FA1E_0001).random_range(0.0..1.0)
    }

    /// The settings.
    pub fn config(&self) -> &AsatConfig {
        &self.config
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
    ///
    /// The paper's rule evaluates at the first region start. asat's rule acts on its first
    /// evaluation at once, so it waits `eval_interval / samples` for it: a job's first
    /// moments (its threads' first runs, CPUs woken from idle, which on a VM take hundreds of
    /// microseconds) are not load.
    pub fn due(&self, now: Instant) -> bool {
        match (self.last_eval, self.first_eval) {
            (Some(t), _) => now.saturating_duration_since(t) >= self.config.eval_interval,
            (None, Some(first)) if self.config.rule == Rule::Asat => {
                now.saturating_duration_since(first) >= self.first_delay()
            }
            (None, _) => true,
        }
    }

    fn first_delay(&self) -> Duration {
        self.config.eval_interval / self.config.samples.max(1)
    }

    /// Whether a timed-barrier sample is due at `now` (every `eval_interval / samples`).
    fn sample_due(&self, now: Instant) -> bool {
        let every = self.config.eval_interval / self.config.samples.max(1);
        self.last_sample
            .is_none_or(|t| now.saturating_duration_since(t) >= every)
    }

    /// Whether a further sample can change the verdict: the paper's rule only needs to know
    /// whether one was bad; asat's rule averages how many members were on time over all.
    fn window_open(&self) -> bool {
        self.config.rule == Rule::Asat || self.worst.is_none_or(|w| w <= self.bad_time())
    }

    fn record_passage(&mut self, probe: &ProbeResult) {
        if probe.threads >= 2 && probe.given_up == 0 {
            if self.recent.len() == BASELINE_WINDOW {
                self.recent.pop_front();
            }
            self.recent.push_back(probe.passage);
        }
    }

    /// A probe's passage as judged: a probe that gave up on a member, or in which one was not
    /// on time, is bad even if the give-up came exactly at the threshold.
    fn judged_passage(&self, probe: &ProbeResult) -> Duration {
        if probe.given_up > 0 || probe.prompt < probe.threads {
            probe.passage.max(self.bad_time() + Duration::from_nanos(1))
        } else {
            probe.passage
        }
    }

    /// Starts a new sample window (after the team size changed).
    fn restart_samples(&mut self) {
        self.worst = None;
        self.taken = 0;
        self.prompt_sum = 0.0;
        self.last_sample = self.last_eval;
    }

    /// One step at a region start.
    ///
    /// - `now`: the clock; `machine()` the most threads the job may use and the CPU pressure
    ///   (a bare `usize` is a bound with no pressure), called only at the first region start
    ///   and when an evaluation is judged, after its timed barriers, so reading it never
    ///   delays one;
    /// - `probe`: the result of the probe the previous step asked for, or `None` at a fresh
    ///   region start.
    pub fn step<M: Into<Machine>>(
        &mut self,
        now: Instant,
        probe: Option<ProbeResult>,
        machine: impl FnOnce() -> M,
    ) -> Step {
        let mut machine = Some(machine);
        let mut read =
            move |known: usize| -> Machine { machine.take().map_or(known.into(), |f| f().into()) };
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
                if self.config.rule == Rule::Asat {
                    // no sample before the first evaluation is due
                    self.last_sample = Some(now);
                }
                let m = read(self.bound);
                self.bound = m.bound.max(1);
                if self.threads > self.bound {
                    return self.clamp_first(now);
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
                        && self.window_open()
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
            let m = read(self.bound);
            return self.evaluate(now, m);
        };
        match self.pending.take() {
            // A probe we did not ask for: ignore it.
            None => run(self.threads),
            Some(Pending::Sample) => {
                self.record_passage(&probe);
                let passage = self.judged_passage(&probe);
                self.worst = Some(self.worst.map_or(passage, |w| w.max(passage)));
                self.prompt_sum +=
                    probe.prompt.min(probe.threads) as f64 / probe.threads.max(1) as f64;
                self.taken += 1;
                if self.config.rule == Rule::Asat
                    && self.evaluations == 0
                    && self.taken < self.config.samples.min(FIRST_SAMPLES)
                {
                    // The first evaluation acts at once (a job that starts on a crowded
                    // machine starts at its share): judge it on a few barriers back to back,
                    // so that one late start-up of a new thread is not taken for load.
                    self.pending = Some(Pending::Sample);
                    return Step {
                        plan: Plan::probe_within(self.threads, self.bad_time()),
                        evaluation: None,
                    };
                }
                if !self.due(now) {
                    return run(self.threads);
                }
                let m = read(self.bound);
                self.evaluate(now, m)
            }
            Some(Pending::Toe(eval)) => self.toe_result(eval, &probe),
        }
    }

    /// The first region start found more threads than the bound allows.
    fn clamp_first(&mut self, now: Instant) -> Step {
        let before = self.threads;
        self.threads = self.bound;
        self.last_eval = Some(now);
        self.restart_samples();
        Step {
            plan: Plan::run(self.threads),
            evaluation: Some(Evaluation {
                at: Duration::ZERO,
                threads_before: before,
                threads_after: self.threads,
                passage: None,
                toe_passage: None,
                share: None,
                pressure: None,
                wait: None,
                free: None,
                bad_time: self.bad_time(),
                bound: self.bound,
                decision: Decision::Clamp,
            }),
        }
    }

    /// The toe dip's barrier came back: grow or not.
    fn toe_result(&mut self, mut eval: Evaluation, probe: &ProbeResult) -> Step {
        self.record_passage(probe);
        eval.toe_passage = Some(probe.passage);
        let good = self.judged_passage(probe) <= self.bad_time();
        let grown = match self.config.rule {
            Rule::Paper => good.then_some(self.threads + 1),
            Rule::Asat => rule::grow_target(self.threads, probe.prompt, probe.threads),
        };
        match grown {
            Some(n) => self.grow_to(n, &mut eval),
            None => eval.decision = Decision::RejectGrow,
        }
        eval.threads_after = self.threads;
        Step {
            plan: Plan::run(self.threads),
            evaluation: Some(eval),
        }
    }

    /// A growth, on probation until a good evaluation.
    fn grow_to(&mut self, n: usize, eval: &mut Evaluation) {
        self.before_growth = self.threads;
        self.threads = n.min(self.bound);
        eval.decision = Decision::Grow;
        self.grew_at = Some(self.evaluations);
        self.probation = true;
        self.restart_samples();
    }

    /// The good evaluations in a row needed before a toe dip: `good_trig`, doubled for each
    /// recent growth that was dropped again soon after (see the module docs). Under asat's
    /// rule, 1 instead of `good_trig` when the CPU pressure showed room, and no doubling while
    /// the rest of the machine leaves at least twice the team's CPUs free.
    pub fn good_needed(&self) -> u32 {
        match self.config.rule {
            Rule::Paper => self.config.good_trig.saturating_mul(1 << self.backoff),
            Rule::Asat => rule::growth_wait(
                self.pressure,
                self.wait,
                self.config.good_trig,
                if rule::ample(self.threads, self.free) {
                    0
                } else {
                    self.backoff
                },
            )
            .unwrap_or(u32::MAX),
        }
    }

    /// An evaluation: the bound, then the rule's decision on the window's samples (none for a
    /// team of one).
    fn evaluate(&mut self, now: Instant, machine: Machine) -> Step {
        let passage = self.worst.take();
        let prompt = (self.taken > 0).then(|| self.prompt_sum / f64::from(self.taken));
        let share = rule::share(self.threads, prompt, machine.wait);
        self.taken = 0;
        self.prompt_sum = 0.0;
        self.last_eval = Some(now);
        self.last_sample = Some(now);
        self.evaluations += 1;
        let first = *self.first_eval.get_or_insert(now);
        self.bound = machine.bound.max(1);
        self.pressure = machine.pressure;
        self.wait = machine.wait;
        self.free = machine.free;
        let rose = fair::share_rose(self.last_equal, machine.equal);
        self.last_equal = machine.equal;
        let mut eval = Evaluation {
            at: now.saturating_duration_since(first),
            threads_before: self.threads,
            threads_after: self.threads,
            passage,
            toe_passage: None,
            share,
            pressure: machine.pressure,
            wait: machine.wait,
            free: machine.free,
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
        let bad = passage.is_some_and(|p| p > eval.bad_time)
            || self.config.rule == Rule::Asat && rule::crowded_by_wait(machine.wait);
        let undo_growth = bad && self.probation;
        self.probation = false;
        if bad {
            self.bad_count = self.bad_count.saturating_add(1);
            self.good_count = 0;
        } else {
            self.good_count = self.good_count.saturating_add(1);
            self.bad_count = 0;
        }
        let over_free = rule::over_free(self.threads, machine.free);
        // asat's rule never keeps more than its equal share while other jobs claim theirs.
        let rounding = fair::Rounding::new(machine.rank, self.share_rounding());
        let (equal, lift_to) = match self.config.rule {
            Rule::Paper => (self.bound, self.bound),
            Rule::Asat => fair::share_team(machine.equal, self.bound, rounding),
        };
        let target = self
            .shrink_target(bad, undo_growth, share, over_free)
            .min(equal);
        if target < self.threads {
            self.threads = target;
            // Good evaluations count toward a growth of the team that had them, not this one.
            self.good_count = 0;
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
        // A share that rose (a job left) lifts at once: the crowding the probes saw was the
        // leaver's.
        let settled = self.good_count >= 1 << self.backoff || rose;
        if self.config.rule == Rule::Asat && machine.equal.is_some() && settled {
            // To the share as the job rounds it (by draw, the cap rounds shares under
            // `FINE_SHARE` up, which would lift every job at once past the machine).
            let lift = fair::fair_growth(self.threads, lift_to, bad && !rose);
            if let Some(n) = lift {
                // Below its equal share: the jobs over theirs give the CPUs back at their next
                // evaluation. On probation like any growth: where the others do not give way
                // (a fixed pool), it is undone and backs off.
                self.grow_to(n, &mut eval);
                eval.threads_after = self.threads;
                return Step {
                    plan: Plan::run(self.threads),
                    evaluation: Some(eval),
                };
            }
        }
        // asat's rule never grows past the CPUs the rest of the machine leaves free, nor past
        // its equal share.
        let limit = match self.config.rule {
            Rule::Paper => self.bound,
            Rule::Asat => rule::free_limit(self.bound, machine.free).min(equal),
        };
        let may_grow = !bad && self.good_count >= self.good_needed() && self.threads < limit;
        if let (true, Rule::Asat, Some(idle)) = (may_grow, self.config.rule, machine.idle) {
            // The machine's idle CPUs show the room: grow into this team's part of it.
            let u = self.draw();
            if let Some(n) = rule::idle_target(self.threads, idle, machine.pressure, limit, u) {
                self.grow_to(n, &mut eval);
            }
            eval.threads_after = self.threads;
            return Step {
                plan: Plan::run(self.threads),
                evaluation: Some(eval),
            };
        }
        if may_grow {
            // Dip a toe in the water: one timed barrier with more threads.
            let dip = match self.config.rule {
                Rule::Paper => self.threads + 1,
                Rule::Asat => rule::dip_size(self.threads, limit),
            };
            self.pending = Some(Pending::Toe(eval));
            return Step {
                plan: Plan::probe_within(dip, self.bad_time()),
                evaluation: None,
            };
        }
        eval.threads_after = self.threads;
        Step {
            plan: Plan::run(self.threads),
            evaluation: Some(eval),
        }
    }

    /// The team size a judged evaluation leaves (at most the current one).
    ///
    /// The paper's rule drops one thread after `bad_trig` bad evaluations in a row or at once
    /// when a growth on probation meets a bad one. asat's rule first jumps to the share the
    /// evaluation showed or the CPUs the rest of the machine left free, whichever is smaller
    /// ([`rule::share`], [`rule::crowded_target`]); when that is no smaller, it falls back to
    /// the paper's step unless the job's threads hardly waited ([`rule::step_confirmed`]),
    /// and a growth on probation that meets a bad evaluation goes back to the size before it
    /// at the most. A good evaluation gives back the threads
    /// that waited ([`rule::good_target`]: part of a thread counts as one, half a thread or less
    /// is none) when the kernel gave the job's wait, or
    /// when the team is larger than the CPUs the rest of the machine leaves free (`over_free`:
    /// one thread that shares a CPU holds up every barrier of the team).
    fn shrink_target(
        &self,
        bad: bool,
        undo_growth: bool,
        share: Option<f64>,
        over_free: bool,
    ) -> usize {
        let n = self.threads;
        // asat's rule takes the paper's step only when the wait, where known, agrees
        let confirmed = self.config.rule == Rule::Paper || rule::step_confirmed(self.wait);
        let step = if (self.bad_count >= self.config.bad_trig && confirmed || undo_growth) && n > 1
        {
            n - 1
        } else {
            n
        };
        match self.config.rule {
            Rule::Paper => step,
            Rule::Asat if !bad && (over_free || self.wait.is_some()) => {
                share.map_or(n, |s| rule::good_target(n, s))
            }
            Rule::Asat if !bad => n,
            Rule::Asat => {
                let jump = share.map_or(n, |s| rule::crowded_target(n, s, self.free));
                let undo = if undo_growth {
                    self.before_growth.clamp(1, n)
                } else {
                    n
                };
                jump.min(step).min(undo)
            }
        }
    }
}

#[cfg(test)]
mod tests;
