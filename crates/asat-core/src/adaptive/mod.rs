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
//! override with `ASAT_RULE`, `ASAT_EVAL_TIME`, `ASAT_BAD_TIME`, `ASAT_BAD_TRIG`,
//! `ASAT_GOOD_TRIG` and `ASAT_SAMPLES` ([`Asat::from_env`]; a bad value is an error that says
//! what is allowed).
//! `bash scripts/demo --policies fixed,asat --copies 1 --hogs 1 --trace` shows a job beside one
//! CPU hog settling at one thread (`out/compare/asat_trace.{csv,svg}`).
//!
//! Two rules move the team size ([`Rule`]): asat's own (the default) and the paper's
//! one-thread steps (`ASAT_RULE=paper`), kept for comparison. Both share the evaluations, the
//! samples, the threshold, the bound and the growth probation described below; asat's rule
//! comes first.
//!
//! # asat's rule: a share in a few evaluations at any machine size
//!
//! The paper's rule moves one thread per evaluation at best (two bad evaluations per drop):
//! four jobs of 64 threads that start together on 64 CPUs need some 48 drops each, about 20 s
//! of an oversubscribed machine, and a job left alone needs as long to grow back. asat's rule
//! uses three things each evaluation already sees or the kernel offers, and jumps.
//!
//! **What an evaluation sees.** `T` the team size, `P` the machine's CPUs.
//! - `prompt`: the mean, over the window's timed barriers, of the fraction of members that
//!   entered within the threshold ([`ProbeResult::prompt`](crate::ProbeResult::prompt)): how
//!   many of the team's threads the machine ran at once;
//! - `wait`: the share of their runnable time the process's threads spent waiting for a CPU
//!   since the last evaluation (`/proc/self/task/*/schedstat`). Under a fair scheduler, `N`
//!   runnable threads on `P` CPUs each wait `1 - P/N` of the time, so `T (1 - wait)` is the
//!   job's share `T P / N` of the machine;
//! - `pressure`: the machine's PSI `some` stall share (`/proc/pressure/cpu`, else the cgroup's
//!   `cpu.pressure`), and `idle`: the machine's idle share of CPU time (`/proc/stat`), both
//!   as deltas over the interval;
//! - `free`: the CPUs the rest of the machine left free, `P` less the CPUs busy with anything
//!   but this process (`(1 - idle) P` less the process's own CPU time over the interval).
//!
//! **The control law** (the pure functions of [`rule`], driven by [`AsatLogic`]). The share
//! `s` is `T (1 - wait)` where the kernel gives the wait, else `T prompt`:
//! - *crowded* (a timed barrier was bad, or `wait > 5%`): `T := max(ceil(T/2), round(min(s,
//!   free)))` (a tie rounds down; never more than `T`, never below 1; `free` where known);
//!   when that is no drop, the paper's step still applies (`bad_trig` bad evaluations drop one
//!   thread) unless the kernel says the job's threads waited at most 2% (slow barriers then
//!   have another cause), and a growth still on probation goes back to the size before it;
//! - *a good evaluation* gives back the threads that waited when the kernel gives the wait:
//!   `T := max(ceil(T/2), floor(s))` once `T - s > 1/2` (part of a thread counts as one: the
//!   wait understates a bulk-synchronous job's excess, since its members blocked at a barrier
//!   do not wait; half a thread or less is none, as jobs that fit the machine wait that
//!   little). A good evaluation
//!   over the free CPUs (`T > free + 1/2`) takes it even without a wait reading. One thread more
//!   than the CPUs the others leave shares a CPU with them, and in a bulk-synchronous job it
//!   holds up every barrier: the team runs at that thread's pace and leaves the rest of its
//!   CPUs idle, while its mean `wait` (one thread of `T` waiting half the time) stays small;
//! - *room* (a good evaluation, `wait` below 2%, idle `i` at least 5%, pressure below
//!   `i / 40`, so 0.25% at 10% idle):
//!   `T := min(4T, bound, round(free), floor(T / (1 - idle) + u))`, `u` drawn uniformly from
//!   `[0, 1)` (the target rounded up with the probability of its fraction, so that k jobs
//!   fill the idle CPUs on average and a team of one can grow before half the machine is
//!   idle), on probation. Without an idle
//!   reading, a growth probe of `min(2T, bound, round(free))` threads is run (pressure below
//!   2%) and as many as entered on time are kept;
//! - otherwise the team keeps its size. Good evaluations are counted from the last drop.
//!
//! **Why k jobs settle without oscillating, and fairly.** Both moves are proportional, the
//! same for every job: a fair scheduler gives every runnable thread the same `P/N`, so every
//! crowded job sees the same `1 - wait` and takes the same fraction of its team, and the k new
//! sizes sum to `N P / N = P`: the excess is removed in one step, not one thread per job per
//! two intervals. Jobs that evaluate one after another see an excess already partly removed
//! and remove only the rest (each step multiplies the excess by `(N - T_j)/N < 1`, never below
//! zero), so the sum approaches `P` from above and does not overshoot. Bulk-synchronous
//! threads block at barriers, so the wait understates the excess, by about half while the
//! machine is crowded (8 jobs of 64 threads on 256 simulated CPUs waited 25-27% where
//! runnable threads would wait 50%), and alone it would bring the sum down over several
//! evaluations. The free CPUs do not depend on how the team's threads wait: the others' threads
//! kept all but `free` CPUs busy, and a team larger than that shares CPUs with them, so a
//! crowded job keeps no more. Jobs that take their free CPUs together cannot undershoot: each
//! job's `free` is its own CPU time plus all the idle CPUs, so their sum is at least the CPUs
//! that load other than these jobs leaves (`P` without such load). (The
//! job's own part of the busy CPUs, `P` times its CPU time over the machine's busy time, was
//! tried instead and undershot: beside always-runnable hogs it charges them part of the idle
//! that the job's barriers leave, and while jobs are unequal the smaller ones' parts are
//! below their shares, and a team a thread or two below `P` has too little idle to grow.) In
//! the tail a good evaluation counts part of a waiting thread as one; it stops where every
//! job's waiting threads are at most half a thread, about one thread per job over `P`. Growth
//! is the mirror image: every job that sees the same idle share `i` grows by the same factor
//! `1/(1 - i)`, and their busy CPUs `(1 - i) P` become `P`. The two moves cannot chase each
//! other: a job grows only when nobody waits (pressure under `i / 40` and its own wait under 2%)
//! and shrinks only when its threads wait. Jobs a few percent over `P` leave 5-10% of the
//! machine idle at barriers while their threads wait at other moments: the pressure rule keeps
//! that idle from passing for room (before it did, jobs grew into it and settled 3-9% over
//! `P`). The halving limit keeps one noisy reading (a burst of waits while every other job
//! also shrinks) from emptying the machine, at the cost of one more evaluation for an excess
//! above 2x. `free` keeps idle CPUs that the job's own barrier waits leave (a straggler's team
//! mates blocked) from passing for room: beside hogs the team settles at the CPUs the hogs
//! leave instead of bouncing between them and the bound.
//!
//! Jobs started together stay close because the share comes from the wait, which every
//! thread of every job shares: the probes' `prompt` (how many members entered a barrier of a
//! few microseconds on time) is a coarse, noisy fraction of a small team, and taking the
//! smaller of the two, as this rule did before, sent single jobs to half their share in one
//! evaluation and the proportional moves kept them there (8 jobs on 256 simulated CPUs ended
//! as far apart as 9 and 40 threads; now each within 3% of `P / k`).
//!
//! **Equal shares.** The proportional moves do not equalize jobs that already sum to `P`:
//! they keep their ratio. A newcomer starts at `max_threads`, its share of an oversubscribed
//! machine is proportional to that, and it kept some of its entry advantage for good (8 jobs
//! arriving one after another on 64 simulated CPUs: the last held 13 threads, the others 6-9); jobs
//! of unequal grains settled up to 80% apart. A move that is not proportional (Chiu and Jain:
//! additive increase, multiplicative decrease) evens shares out only over many cycles of a crowded
//! machine; additive steps, tried in the simulator, neither settled within the `[P, P + k]` band
//! nor made the jobs fair. What the jobs lack is how many parallel jobs share the machine, and the
//! kernel says it to anyone who reads `/proc`: each process's CPU time and threads. Each evaluation
//! (while the rest of the machine keeps half a CPU busy, or the job's threads waited for CPUs) the
//! job reads them and takes the *equal share* ([`fair`]): the CPUs that single-threaded load and
//! small pools leave, divided among the multithreaded processes that keep at least half of it busy,
//! and this job. A process that started during the interval counts over its life, and when the last
//! other claimant left during it, the share is all the CPUs the others leave ([`claims`]): jobs
//! that arrive or leave count at the next evaluation, not the one after. Every job computes the
//! same share, so they agree without talking: a job never keeps more than its share (rounded by its
//! place among the claimants, ordered by process id, so that the teams add up to the CPUs and each
//! keeps its size), and a job below its share grows to it at once unless it was crowded (the jobs
//! above theirs drop at their next evaluation; when the share rose because a job left, crowded or
//! not), on probation like any growth. The share only caps and lifts: the wait, the free CPUs and
//! the idle share still decide everything else, so a parallel job that does not give way (a fixed
//! pool) still makes this one shrink to what the machine gives it, and undoes the growths to the
//! share, which back off.
//!
//! asat-lab's simulator (`asat_lab::asat_sim`, in the repository's `crates/lab`) drives this
//! logic ([`AsatLogic`], the pure functions of [`rule`], the arithmetic of [`pressure`]) on a
//! model of a time-sharing machine; its `asat_sim` program runs the scenarios and
//! BENCHMARKS.md has the figures.
//!
//! # The paper's algorithm (section 5)
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
//! once, as in the paper), and one every `eval_interval / samples` in between. Under the
//! paper's rule sampling stops at the first bad one (the verdict is then known, and further
//! samples would only cost); asat's rule takes them all, since it averages how many members
//! were on time. The toe dip stays one barrier, as in the paper.
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
//!   doublings); a growth that holds resets it. Under asat's rule the doubling does not apply
//!   while the rest of the machine leaves at least twice the team's CPUs free
//!   ([`rule::ample`]): the machine changed (other jobs left) since the growths failed.
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
//! # Programs of tasks
//!
//! A program made only of `join` and loops on tasks starts no region, so no evaluation
//! happens and no barrier is timed. Until its first evaluation, ASAT sizes the threads that
//! take tasks ([`Policy::task_workers`]) from the kernel alone ([`tasks`]): [`tasks::READINGS`]
//! times per `eval_interval` (and early, below), at a call from outside the pool or, while a
//! call runs, when a thread running its tasks asks again ([`Policy::task_refresh`]), it reads
//! the CPUs the rest of the machine left free since the last reading (the first reading is
//! taken when the runtime is built, the other processes' included) and the equal share.
//! Alone or beside load that claims no share, `round(free)` threads take tasks, at least 1
//! and at most the pool's size (all of them where the kernel does not say); beside other
//! parallel jobs, its equal share, rounded as regions round it, on probation when it grows
//! to it. It reads early when CPUs fall idle while it is below its pool, and when threads
//! wait for a CPU while it has more than one ([`tasks`], "Early readings"), so that a job's
//! departure frees its CPUs for the others, and a job that starts beside others leaves its
//! whole pool, within tens of milliseconds.
//! Copies of one program therefore share the machine equally, whenever
//! each started: each one's own CPU time counts as free for it, and the share evens out what
//! the free CPUs alone would keep unequal. Once regions have been evaluated, their team size
//! is used for tasks too.
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

pub mod claims;
mod evaluation;
pub mod fair;
mod logic;
pub mod pressure;
mod procs;
pub mod rule;
pub mod tasks;

pub use evaluation::{Decision, Evaluation};
pub use logic::{AsatLogic, Machine, Step, FIRST_SAMPLES};

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::env::{parse_duration, DURATION_ALLOWED};
use crate::{Error, Plan, Policy, RegionStart, RuntimeInfo};
use pressure::Readings;

/// Multiple of the balanced passage above which a passage is bad.
pub const BAD_FACTOR: u32 = 20;
/// The derived threshold is never below this (see the [module docs](crate::adaptive)).
pub const MIN_BAD_TIME: Duration = Duration::from_micros(250);
/// The threshold used before any passage was measured.
pub const DEFAULT_BAD_TIME: Duration = MIN_BAD_TIME;
/// How many recent passages the baseline is the minimum of.
pub const BASELINE_WINDOW: usize = 32;
/// The derived threshold is never above this (see the [module docs](crate::adaptive)).
pub const MAX_BAD_TIME: Duration = Duration::from_millis(1);
/// Toe dips wait at most `good_trig << MAX_BACKOFF` good evaluations.
pub const MAX_BACKOFF: u32 = 3;
/// How many evaluations [`Asat::history`] keeps (the oldest are dropped).
pub const HISTORY_LIMIT: usize = 100_000;

/// ASAT's settings. See the [module docs](crate::adaptive) for their meaning.
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
    /// How the team size moves: asat's rule (the default) or the paper's one-thread steps.
    pub rule: Rule,
}

/// How ASAT moves the team size (see the [module docs](crate::adaptive)).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The paper's: one thread at a time, after `bad_trig` bad evaluations in a row or
    /// `good_trig` good ones (with this crate's samples, probation and back-off).
    Paper,
    /// asat's: jump to the share the probes showed, grow by doubling probes when the CPU
    /// pressure shows room; the paper's step as a fallback.
    #[default]
    Asat,
}

impl Rule {
    /// `paper` or `asat` (as `ASAT_RULE` takes them).
    pub fn as_str(&self) -> &'static str {
        match self {
            Rule::Paper => "paper",
            Rule::Asat => "asat",
        }
    }

    /// Parses `paper` or `asat` (case-insensitive).
    pub fn parse(v: &str) -> Option<Rule> {
        match v.trim().to_ascii_lowercase().as_str() {
            "paper" => Some(Rule::Paper),
            "asat" => Some(Rule::Asat),
            _ => None,
        }
    }
}

impl Default for AsatConfig {
    fn default() -> Self {
        Self {
            eval_interval: Duration::from_millis(200),
            samples: 4,
            bad_time: None,
            bad_trig: 2,
            good_trig: 3,
            rule: Rule::Asat,
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
    readings: Option<Readings>,
    tasks: Option<TaskMeasure>,
}

/// The threads that take tasks before the first evaluation (see "Programs of tasks").
#[derive(Debug)]
struct TaskMeasure {
    /// Readings of their own: the evaluations' deltas must not be cut by these.
    readings: Readings,
    last: Instant,
    team: tasks::TaskTeam,
    /// The last look at the machine's runnable threads ([`tasks::Looks`]).
    looked: Instant,
    looks: tasks::Looks,
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
                readings: None,
                tasks: None,
            }),
            history: Mutex::new(VecDeque::new()),
        }
    }

    /// ASAT with the defaults overridden by `ASAT_EVAL_TIME`, `ASAT_BAD_TIME`, `ASAT_BAD_TRIG`,
    /// `ASAT_GOOD_TRIG` and `ASAT_SAMPLES` (times in seconds, or with a `ms`/`us` suffix; `ASAT_BAD_TIME=auto`
    /// derives it).
    pub fn from_env() -> Result<Self, Error> {
        Self::from_env_with(&crate::env::env_var)
    }

    pub(crate) fn from_env_with(env: &dyn Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let mut c = AsatConfig::default();
        if let Some(v) = env("ASAT_RULE") {
            c.rule = Rule::parse(&v)
                .ok_or_else(|| Error::env("ASAT_RULE", &v, "must be asat or paper"))?;
        }
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

impl Asat {
    /// The threads that take tasks now (see "Programs of tasks").
    fn tasks_now(&self, max_threads: usize) -> usize {
        let evaluated = !self.history.lock().is_empty();
        let mut st = self.state.lock();
        let State {
            logic,
            config,
            tasks,
            ..
        } = &mut *st;
        let Some(logic) = logic.as_ref() else {
            return max_threads;
        };
        let Some(m) = tasks.as_mut().filter(|_| !evaluated) else {
            return logic.threads();
        };
        let now = Instant::now();
        let since = now.saturating_duration_since(m.last);
        let team = m.team.team();
        let early =
            max_threads > 1 && now.saturating_duration_since(m.looked) >= tasks::LOOK_INTERVAL && {
                m.looked = now;
                pressure::running_now()
                    .zip(m.readings.cpus())
                    .is_some_and(|(running, cpus)| {
                        m.looks.look(running, cpus, team, max_threads, since)
                    })
            };
        let reading = early || since >= config.eval_interval / tasks::READINGS;
        // Crowded looks cap the team (`tasks::crowded_cap`) where no other job claims a
        // share: after the early reading they called, or before a reading may come.
        let crowded = if reading {
            let r = m.readings.sample(now);
            m.team.next(r.free, r.equal, r.rank);
            m.looks.crowded().filter(|_| early && r.equal.is_none())
        } else if m.team.shared() {
            None
        } else {
            m.looks.cap_now(since)
        };
        if let Some((running, cpus)) = crowded.zip(m.readings.cpus()) {
            m.team.cap(tasks::crowded_cap(running, cpus, team));
        }
        if reading {
            m.looks.read(early, m.team.team() != team);
            m.last = now;
        }
        m.team.team().min(max_threads.max(1))
    }
}

impl Policy for Asat {
    fn name(&self) -> &str {
        "asat"
    }

    /// Before the first evaluation, the threads the kernel's readings allow (see "Programs
    /// of tasks"; reading the kernel's files, tens of microseconds alone and about a
    /// millisecond on a machine shared with other processes, happens [`tasks::READINGS`]
    /// times per `eval_interval`, and early where CPUs fall idle or threads wait for one:
    /// [`tasks::Looks`]); after it, the team size of the last evaluation.
    fn task_workers(&self, max_threads: usize) -> usize {
        self.tasks_now(max_threads)
    }

    /// As [`task_workers`](Asat::task_workers): a long call follows the machine.
    fn task_refresh(&self, max_threads: usize) -> Option<usize> {
        Some(self.tasks_now(max_threads))
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
        // Jobs round their growths at random; each process draws its own seed.
        let logic = AsatLogic::new(c, rt.max_threads).with_seed(rand::random());
        let u = logic.share_rounding();
        st.logic = Some(logic);
        st.readings = (c.rule == Rule::Asat).then(Readings::with_procs);
        st.tasks = (c.rule == Rule::Asat).then(|| {
            let (mut readings, last) = (Readings::with_procs(), Instant::now());
            readings.sample(last);
            TaskMeasure {
                readings,
                last,
                looked: last,
                looks: tasks::Looks::default(),
                team: tasks::TaskTeam::new(rt.max_threads, u),
            }
        });
        Ok(())
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        let mut st = self.state.lock();
        let State {
            logic, readings, ..
        } = &mut *st;
        let Some(logic) = logic.as_mut() else {
            return Plan::run(start.max_threads);
        };
        let max = start.max_threads;
        let step = logic.step(start.now(), start.probe, || {
            let r = readings.as_mut().map(|r| r.sample(start.now()));
            Machine {
                bound: start.cpu_budget().min(max),
                pressure: r.and_then(|r| r.pressure),
                wait: r.and_then(|r| r.wait),
                idle: r.and_then(|r| r.idle),
                free: r.and_then(|r| r.free),
                equal: r.and_then(|r| r.equal),
                rank: r.and_then(|r| r.rank),
            }
        });
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
            ("ASAT_RULE", "Paper"),
        ]))
        .unwrap();
        assert_eq!(
            a.config(),
            AsatConfig {
                eval_interval: 250 * MS,
                samples: 2,
                bad_time: Some(50 * US),
                bad_trig: 3,
                good_trig: 4,
                rule: Rule::Paper,
            }
        );
        let e = Asat::from_env_with(&env(&[("ASAT_RULE", "fast")])).unwrap_err();
        assert!(e.to_string().contains("must be asat or paper"), "{e}");
        assert_eq!(
            Asat::from_env_with(&env(&[])).unwrap().config().rule,
            Rule::Asat
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
}
