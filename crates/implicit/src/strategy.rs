//! The two-phase waiting strategies: [`Block`], [`Spin`], [`FixedSpin`], [`Oracle`],
//! [`AdaptiveLocal`] and [`AdaptiveGlobal`], their [`Config`], and [`AnyStrategy`] to choose one
//! by name.
//!
//! Each strategy implements [`TwoPhase`] (used by this crate's [`Barrier`](crate::Barrier) and
//! [`Flag`](crate::Flag)) and asat-core's [`WaitStrategy`], so that
//! `Runtime::builder().wait(AdaptiveGlobal::new())` makes every join and team barrier of a
//! runtime two-phase adaptive.
//!
//! # Where the adaptive strategies learn
//!
//! - [`AdaptiveLocal`] (section 6.2): every waiter records its own barrier wait times in a
//!   per-thread [`Estimator`]; its spin time follows its own estimate.
//! - [`AdaptiveGlobal`] (section 6.3): the last thread to arrive at a barrier sees every arrival
//!   time; the imbalance of that barrier episode (last arrival minus first) goes into one shared
//!   estimator, and the resulting spin time is stored in a word every waiter reads when it
//!   starts waiting: the spin time travels with the barrier's own traffic, with no extra
//!   synchronization. In an asat-core runtime the team barrier hands it the arrivals
//!   ([`WaitStrategy::all_arrived`]); at a region's join, where only the starting thread waits,
//!   it learns from that thread's wait time instead (a lower bound of the imbalance).

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use asat_core::{WaitInfo, WaitOutcome, WaitSite, WaitStrategy};

use crate::calibrate::{self, Calibration};
use crate::estimator::{Estimator, SpinRule, DEFAULT_SAMPLE, MAX_SAMPLE};
use crate::Error;

/// Names [`AnyStrategy::by_name`] accepts.
pub const STRATEGY_NAMES: [&str; 7] = [
    "block",
    "spin",
    "fixed",
    "fixed:<us>",
    "oracle:<us>",
    "local",
    "global",
];

/// A two-phase waiting rule: how long to spin at a barrier and at a point-to-point wait before
/// blocking, and what to learn from waits.
///
/// Methods are called concurrently by the waiting threads; they must not block or panic and
/// should be cheap (they sit next to the barrier's critical path).
pub trait TwoPhase: Send + Sync + fmt::Debug {
    /// A short name (`"global"`, ...).
    fn name(&self) -> &'static str;

    /// How long the calling thread spins at a barrier before blocking. [`Duration::MAX`]: until
    /// released; [`Duration::ZERO`]: block at once.
    fn barrier_spin(&self) -> Duration;

    /// How long the calling thread spins at a point-to-point wait before blocking.
    fn read_spin(&self) -> Duration;

    /// Called by a barrier waiter whose wait did not end at once: its wait time (from its
    /// arrival to its release) and whether it blocked.
    fn record_wait(&self, waited: Duration, blocked: bool) {
        let _ = (waited, blocked);
    }

    /// Called by a barrier waiter whose wait ended within its first spins, before it read the
    /// clock (a wait of about a microsecond or less). Default:
    /// [`record_wait`](TwoPhase::record_wait) of zero.
    fn record_short_wait(&self) {
        self.record_wait(Duration::ZERO, false);
    }

    /// Called after the wait of the thread that started an asat-core region, at the region's
    /// join (the only waiter there). Default: [`record_wait`](TwoPhase::record_wait).
    fn record_join_wait(&self, waited: Duration, blocked: bool) {
        self.record_wait(waited, blocked);
    }

    /// Whether the last arriver of a barrier should report the episode's imbalance through
    /// [`record_imbalance`](TwoPhase::record_imbalance).
    #[inline]
    fn wants_imbalance(&self) -> bool {
        false
    }

    /// Called by the last arriver of a barrier episode: the time from the first arrival to the
    /// last.
    fn record_imbalance(&self, imbalance: Duration) {
        let _ = imbalance;
    }

    /// Called for `count` episodes whose imbalance was below the first spins' worth (about a
    /// microsecond), batched so that a barrier of threads that keep arriving together does not
    /// read the clock or touch the estimator every episode: by the first arriver of every 32nd
    /// episode, before it spins (by the last arriver when the barrier has one participant).
    /// Default: `count` [`record_imbalance`](TwoPhase::record_imbalance) calls of zero.
    fn record_short_imbalances(&self, count: u32) {
        for _ in 0..count {
            self.record_imbalance(Duration::ZERO);
        }
    }

    /// The current imbalance estimate, if the strategy keeps one (for
    /// [`AdaptiveLocal`], the largest over its threads).
    fn imbalance_estimate(&self) -> Option<Duration> {
        None
    }
}

impl<T: TwoPhase + ?Sized> TwoPhase for std::sync::Arc<T> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    #[inline]
    fn barrier_spin(&self) -> Duration {
        (**self).barrier_spin()
    }
    #[inline]
    fn read_spin(&self) -> Duration {
        (**self).read_spin()
    }
    fn record_wait(&self, waited: Duration, blocked: bool) {
        (**self).record_wait(waited, blocked)
    }
    fn record_short_wait(&self) {
        (**self).record_short_wait()
    }
    fn record_join_wait(&self, waited: Duration, blocked: bool) {
        (**self).record_join_wait(waited, blocked)
    }
    #[inline]
    fn wants_imbalance(&self) -> bool {
        (**self).wants_imbalance()
    }
    fn record_imbalance(&self, imbalance: Duration) {
        (**self).record_imbalance(imbalance)
    }
    fn record_short_imbalances(&self, count: u32) {
        (**self).record_short_imbalances(count)
    }
    fn imbalance_estimate(&self) -> Option<Duration> {
        (**self).imbalance_estimate()
    }
}

/// The costs and sizes the strategies are built from.
///
/// ```
/// use asat_implicit::Config;
/// use std::time::Duration;
/// let c = Config::builder()
///     .context_switch(Duration::from_micros(30))
///     .release_latency(Duration::from_micros(1))
///     .build()?;
/// assert_eq!(c.rule().min_spin, Duration::from_micros(60));
/// let e = Config::builder().sample(0).build().unwrap_err();
/// assert_eq!(e.to_string(), "sample size 0: must be between 1 and 4096");
/// # Ok::<(), asat_implicit::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The context-switch (block and wake) cost `cs`.
    pub context_switch: Duration,
    /// How long a spinning waiter takes to see a release.
    pub release_latency: Duration,
    /// Capacity of each estimator's sample.
    pub sample: usize,
}

impl Config {
    /// From the process's [`calibration`](calibrate::calibration) (measured at first use;
    /// `ASAT_CONTEXT_SWITCH_US` overrides the context-switch cost).
    pub fn calibrated() -> Self {
        Self::from_calibration(calibrate::calibration())
    }

    /// From a calibration.
    pub fn from_calibration(c: Calibration) -> Self {
        Self {
            context_switch: c.context_switch,
            release_latency: c.release_latency,
            sample: DEFAULT_SAMPLE,
        }
    }

    /// A builder; what is not set comes from the calibration.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder::default()
    }

    /// The spin rules these costs give.
    pub fn rule(&self) -> SpinRule {
        SpinRule::from_context_switch(self.context_switch, self.release_latency)
    }
}

/// Builds a [`Config`]; values are checked by [`build`](ConfigBuilder::build).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConfigBuilder {
    context_switch: Option<Duration>,
    release_latency: Option<Duration>,
    sample: Option<usize>,
}

const CS_ALLOWED: &str = "must be greater than 0 and at most 100 ms";

impl ConfigBuilder {
    /// The context-switch cost (default: `ASAT_CONTEXT_SWITCH_US`, else measured).
    pub fn context_switch(mut self, d: Duration) -> Self {
        self.context_switch = Some(d);
        self
    }

    /// The release latency (default: measured).
    pub fn release_latency(mut self, d: Duration) -> Self {
        self.release_latency = Some(d);
        self
    }

    /// Capacity of each estimator's sample (default 64).
    pub fn sample(mut self, n: usize) -> Self {
        self.sample = Some(n);
        self
    }

    /// Checks the values; measures what is missing (once per process).
    pub fn build(self) -> Result<Config, Error> {
        let sample = self.sample.unwrap_or(DEFAULT_SAMPLE);
        if !(1..=MAX_SAMPLE).contains(&sample) {
            return Err(Error::config(
                "sample size",
                sample,
                "must be between 1 and 4096",
            ));
        }
        let limit = Duration::from_millis(100);
        if let Some(cs) = self.context_switch {
            if cs.is_zero() || cs > limit {
                return Err(Error::config("context-switch cost", cs, CS_ALLOWED));
            }
        }
        if let Some(r) = self.release_latency {
            if r > limit {
                return Err(Error::config(
                    "release latency",
                    r,
                    "must be at most 100 ms",
                ));
            }
        }
        let context_switch = match self.context_switch {
            Some(cs) => cs,
            None => match calibrate::env_context_switch()? {
                Some(cs) => cs,
                None => calibrate::calibration().context_switch,
            },
        };
        let release_latency = match self.release_latency {
            Some(r) => r,
            None => calibrate::calibration().release_latency.min(context_switch),
        };
        Ok(Config {
            context_switch,
            release_latency,
            sample,
        })
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `u64::MAX` in an estimate word: no estimate yet.
const NONE: u64 = u64::MAX;

fn load_estimate(w: &AtomicU64) -> Option<Duration> {
    match w.load(Ordering::Relaxed) {
        NONE => None,
        v => Some(Duration::from_nanos(v)),
    }
}

/// The estimator's lock if it is free (a panic while it was held does not matter: the
/// estimator stays consistent between calls). A learner that finds it taken, by another
/// thread sharing the estimator, skips its sample rather than block: strategies' callbacks
/// must not block.
fn try_lock<T>(m: &Mutex<T>) -> Option<std::sync::MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// Records `count` samples of `waited` and publishes the new estimate and spin time, under the
/// estimator's lock, so that two learners cannot publish out of order.
///
/// `zeros_only` mirrors [`Estimator::is_full_of_zeros`]: zeros recorded then change nothing,
/// and are skipped without taking the lock (the steady state of threads that keep arriving
/// together; a nonzero sample being recorded at the same moment may miss its chance of being
/// replaced by them, as when the lock is taken).
fn learn(
    estimator: &Mutex<Estimator>,
    estimate_ns: &AtomicU64,
    spin_ns: &AtomicU64,
    zeros_only: &AtomicBool,
    rule: &SpinRule,
    waited: Duration,
    count: u32,
) {
    if waited.is_zero() && zeros_only.load(Ordering::Relaxed) {
        return;
    }
    let Some(mut e) = try_lock(estimator) else {
        return;
    };
    e.record_n(waited, count);
    let full_of_zeros = e.is_full_of_zeros();
    if zeros_only.load(Ordering::Relaxed) != full_of_zeros {
        zeros_only.store(full_of_zeros, Ordering::Relaxed);
    }
    let est = e.estimate();
    store_if_changed(estimate_ns, est.map_or(NONE, nanos));
    store_if_changed(spin_ns, nanos(rule.barrier_spin(est)));
}

/// Block at once (the paper's "immediate blocking"; spin time 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct Block;

impl TwoPhase for Block {
    fn name(&self) -> &'static str {
        "block"
    }
    #[inline]
    fn barrier_spin(&self) -> Duration {
        Duration::ZERO
    }
    #[inline]
    fn read_spin(&self) -> Duration {
        Duration::ZERO
    }
}

/// Spin until released, never block.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spin;

impl TwoPhase for Spin {
    fn name(&self) -> &'static str {
        "spin"
    }
    #[inline]
    fn barrier_spin(&self) -> Duration {
        Duration::MAX
    }
    #[inline]
    fn read_spin(&self) -> Duration {
        Duration::MAX
    }
}

/// Spin a fixed time, then block (section 5).
#[derive(Clone, Copy, Debug)]
pub struct FixedSpin {
    spin: Duration,
}

impl FixedSpin {
    /// Spin `spin` at barriers and point-to-point waits.
    pub const fn new(spin: Duration) -> Self {
        Self { spin }
    }

    /// `S = 2 cs` from the calibration: the paper's best fixed spin.
    pub fn two_context_switches() -> Self {
        Self::with_config(&Config::calibrated())
    }

    /// `S = 2 cs` from `config`.
    pub fn with_config(config: &Config) -> Self {
        Self::new(config.rule().min_spin)
    }

    /// The spin time.
    pub fn spin(&self) -> Duration {
        self.spin
    }
}

impl Default for FixedSpin {
    fn default() -> Self {
        Self::two_context_switches()
    }
}

impl TwoPhase for FixedSpin {
    fn name(&self) -> &'static str {
        "fixed"
    }
    #[inline]
    fn barrier_spin(&self) -> Duration {
        self.spin
    }
    #[inline]
    fn read_spin(&self) -> Duration {
        self.spin
    }
}

/// The rules of section 6.1 applied to a known load imbalance `v`.
#[derive(Clone, Copy, Debug)]
pub struct Oracle {
    rule: SpinRule,
    imbalance: Duration,
}

impl Oracle {
    /// An oracle that knows the program's imbalance, with the calibrated costs.
    pub fn new(imbalance: Duration) -> Self {
        Self::with_config(imbalance, &Config::calibrated())
    }

    /// An oracle with the costs of `config`.
    pub fn with_config(imbalance: Duration, config: &Config) -> Self {
        Self {
            rule: config.rule(),
            imbalance,
        }
    }
}

impl TwoPhase for Oracle {
    fn name(&self) -> &'static str {
        "oracle"
    }
    #[inline]
    fn barrier_spin(&self) -> Duration {
        self.rule.barrier_spin(Some(self.imbalance))
    }
    #[inline]
    fn read_spin(&self) -> Duration {
        self.rule.read_spin()
    }
    fn imbalance_estimate(&self) -> Option<Duration> {
        Some(self.imbalance)
    }
}

/// Default number of per-thread slots of [`AdaptiveLocal`].
pub const LOCAL_SLOTS: usize = 64;

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD_NUMBER: usize = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
}

fn thread_number() -> usize {
    THREAD_NUMBER.try_with(|n| *n).unwrap_or(0)
}

#[derive(Debug)]
#[repr(align(128))]
struct LocalSlot {
    spin_ns: AtomicU64,
    estimate_ns: AtomicU64,
    /// The estimator's sample is full of zeros (see `learn`).
    zeros_only: AtomicBool,
    /// Short waits not yet in the estimator.
    short: AtomicU32,
    estimator: Mutex<Estimator>,
}

/// How many short waits (or episodes) are gathered before they go into an estimator at once.
pub(crate) const SHORT_BATCH: u32 = 32;

/// Each thread estimates the imbalance from its own barrier wait times (section 6.2).
///
/// Threads are mapped to [`LOCAL_SLOTS`] slots by a per-thread number; two threads that share
/// a slot (more than 64 threads use the strategy) share an estimator.
#[derive(Debug)]
pub struct AdaptiveLocal {
    rule: SpinRule,
    slots: Box<[LocalSlot]>,
}

impl AdaptiveLocal {
    /// With the calibrated costs.
    pub fn new() -> Self {
        Self::with_config(&Config::calibrated())
    }

    /// With the costs and sample size of `config`.
    pub fn with_config(config: &Config) -> Self {
        let rule = config.rule();
        let slots = (0..LOCAL_SLOTS)
            .map(|i| LocalSlot {
                spin_ns: AtomicU64::new(nanos(rule.min_spin)),
                estimate_ns: AtomicU64::new(NONE),
                zeros_only: AtomicBool::new(false),
                short: AtomicU32::new(0),
                estimator: Mutex::new(Estimator::with_seed(config.sample, 0x5eed_0000 + i as u64)),
            })
            .collect();
        Self { rule, slots }
    }

    fn slot(&self) -> &LocalSlot {
        &self.slots[thread_number() % self.slots.len()]
    }

    /// The rules in use.
    pub fn rule(&self) -> SpinRule {
        self.rule
    }

    fn record_local(&self, waited: Duration, count: u32) {
        let slot = self.slot();
        learn(
            &slot.estimator,
            &slot.estimate_ns,
            &slot.spin_ns,
            &slot.zeros_only,
            &self.rule,
            waited,
            count,
        );
    }
}

/// Stores only when the value changes, so that readers keep their cached line.
fn store_if_changed(w: &AtomicU64, v: u64) {
    if w.load(Ordering::Relaxed) != v {
        w.store(v, Ordering::Relaxed);
    }
}

impl Default for AdaptiveLocal {
    fn default() -> Self {
        Self::new()
    }
}

impl TwoPhase for AdaptiveLocal {
    fn name(&self) -> &'static str {
        "local"
    }
    #[inline]
    fn barrier_spin(&self) -> Duration {
        Duration::from_nanos(self.slot().spin_ns.load(Ordering::Relaxed))
    }
    #[inline]
    fn read_spin(&self) -> Duration {
        self.rule.read_spin()
    }
    fn record_wait(&self, waited: Duration, _blocked: bool) {
        self.record_local(waited, 1);
    }
    fn record_short_wait(&self) {
        let slot = self.slot();
        let n = slot.short.load(Ordering::Relaxed) + 1;
        if n < SHORT_BATCH {
            slot.short.store(n, Ordering::Relaxed);
        } else {
            slot.short.store(0, Ordering::Relaxed);
            self.record_local(Duration::ZERO, n);
        }
    }
    fn imbalance_estimate(&self) -> Option<Duration> {
        self.slots
            .iter()
            .filter_map(|s| load_estimate(&s.estimate_ns))
            .max()
    }
}

/// The last arriver of each barrier estimates the imbalance from every arrival time and
/// publishes the next spin time (section 6.3).
#[derive(Debug)]
pub struct AdaptiveGlobal {
    rule: SpinRule,
    /// Read by every waiter; written only when it changes.
    spin_ns: Padded<AtomicU64>,
    estimate_ns: AtomicU64,
    /// The estimator's sample is full of zeros (see `learn`).
    zeros_only: AtomicBool,
    estimator: Mutex<Estimator>,
}

/// A value on its own cache line.
#[derive(Debug)]
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl AdaptiveGlobal {
    /// With the calibrated costs.
    pub fn new() -> Self {
        Self::with_config(&Config::calibrated())
    }

    /// With the costs and sample size of `config`.
    pub fn with_config(config: &Config) -> Self {
        let rule = config.rule();
        Self {
            rule,
            spin_ns: Padded(AtomicU64::new(nanos(rule.min_spin))),
            estimate_ns: AtomicU64::new(NONE),
            zeros_only: AtomicBool::new(false),
            estimator: Mutex::new(Estimator::new(config.sample)),
        }
    }

    /// The rules in use.
    pub fn rule(&self) -> SpinRule {
        self.rule
    }
}

impl AdaptiveGlobal {
    fn record_global(&self, imbalance: Duration, count: u32) {
        // Called by a long episode's last arriver and by a first arriver reporting a window
        // of short episodes. A learner that finds the estimator taken (by the other of these
        // on the same barrier, or by another barrier sharing this strategy) skips its sample,
        // a window's batch included, rather than wait.
        learn(
            &self.estimator,
            &self.estimate_ns,
            &self.spin_ns,
            &self.zeros_only,
            &self.rule,
            imbalance,
            count,
        );
    }
}

impl Default for AdaptiveGlobal {
    fn default() -> Self {
        Self::new()
    }
}

impl TwoPhase for AdaptiveGlobal {
    fn name(&self) -> &'static str {
        "global"
    }
    #[inline]
    fn barrier_spin(&self) -> Duration {
        Duration::from_nanos(self.spin_ns.load(Ordering::Relaxed))
    }
    #[inline]
    fn read_spin(&self) -> Duration {
        self.rule.read_spin()
    }
    fn record_join_wait(&self, waited: Duration, _blocked: bool) {
        self.record_imbalance(waited);
    }
    #[inline]
    fn wants_imbalance(&self) -> bool {
        true
    }
    fn record_imbalance(&self, imbalance: Duration) {
        self.record_global(imbalance, 1);
    }
    fn record_short_imbalances(&self, count: u32) {
        self.record_global(Duration::ZERO, count);
    }
    fn imbalance_estimate(&self) -> Option<Duration> {
        load_estimate(&self.estimate_ns)
    }
}

/// One of this crate's strategies, chosen at run time (by name, from a command line).
// The adaptive variants are large (a padded spin word, an estimator); they stay inline so that
// a waiter reads its spin time without a pointer chase. One value per barrier or runtime.
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
#[derive(Debug)]
pub enum AnyStrategy {
    /// [`Block`].
    Block(Block),
    /// [`Spin`].
    Spin(Spin),
    /// [`FixedSpin`].
    Fixed(FixedSpin),
    /// [`Oracle`].
    Oracle(Oracle),
    /// [`AdaptiveLocal`].
    Local(AdaptiveLocal),
    /// [`AdaptiveGlobal`].
    Global(AdaptiveGlobal),
}

impl AnyStrategy {
    /// Parses `block`, `spin`, `fixed` (`S = 2 cs`), `fixed:<us>`, `oracle:<us>` (the known
    /// imbalance in microseconds), `local` or `global`, with the costs of `config`.
    ///
    /// ```
    /// use asat_implicit::{AnyStrategy, Config, TwoPhase};
    /// use std::time::Duration;
    /// let c = Config::builder().context_switch(Duration::from_micros(20)).build()?;
    /// assert_eq!(AnyStrategy::by_name("global", &c)?.name(), "global");
    /// assert_eq!(
    ///     AnyStrategy::by_name("fixed", &c)?.barrier_spin(),
    ///     Duration::from_micros(40)
    /// );
    /// assert!(AnyStrategy::by_name("gang", &c).is_err());
    /// # Ok::<(), asat_implicit::Error>(())
    /// ```
    pub fn by_name(name: &str, config: &Config) -> Result<Self, Error> {
        let t = name.trim().to_ascii_lowercase();
        let us = |v: &str| calibrate::parse_us(v).ok_or_else(|| Error::unknown_strategy(name));
        Ok(match t.as_str() {
            "block" => Self::Block(Block),
            "spin" => Self::Spin(Spin),
            "fixed" => Self::Fixed(FixedSpin::with_config(config)),
            "local" => Self::Local(AdaptiveLocal::with_config(config)),
            "global" => Self::Global(AdaptiveGlobal::with_config(config)),
            _ => {
                if let Some(v) = t.strip_prefix("fixed:") {
                    Self::Fixed(FixedSpin::new(us(v)?))
                } else if let Some(v) = t.strip_prefix("oracle:") {
                    Self::Oracle(Oracle::with_config(us(v)?, config))
                } else {
                    return Err(Error::unknown_strategy(name));
                }
            }
        })
    }
}

/// Calls a method on the strategy inside an [`AnyStrategy`], with a match rather than through
/// a trait object, so that each arm is a direct (inlinable) call on the waiters' path.
macro_rules! dispatch {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            AnyStrategy::Block($s) => $call,
            AnyStrategy::Spin($s) => $call,
            AnyStrategy::Fixed($s) => $call,
            AnyStrategy::Oracle($s) => $call,
            AnyStrategy::Local($s) => $call,
            AnyStrategy::Global($s) => $call,
        }
    };
}

impl TwoPhase for AnyStrategy {
    fn name(&self) -> &'static str {
        dispatch!(self, s => s.name())
    }
    #[inline]
    fn barrier_spin(&self) -> Duration {
        dispatch!(self, s => s.barrier_spin())
    }
    #[inline]
    fn read_spin(&self) -> Duration {
        dispatch!(self, s => s.read_spin())
    }
    #[inline]
    fn record_wait(&self, waited: Duration, blocked: bool) {
        dispatch!(self, s => s.record_wait(waited, blocked))
    }
    #[inline]
    fn record_short_wait(&self) {
        dispatch!(self, s => s.record_short_wait())
    }
    fn record_join_wait(&self, waited: Duration, blocked: bool) {
        dispatch!(self, s => s.record_join_wait(waited, blocked))
    }
    #[inline]
    fn wants_imbalance(&self) -> bool {
        dispatch!(self, s => s.wants_imbalance())
    }
    fn record_imbalance(&self, imbalance: Duration) {
        dispatch!(self, s => s.record_imbalance(imbalance))
    }
    fn record_short_imbalances(&self, count: u32) {
        dispatch!(self, s => s.record_short_imbalances(count))
    }
    fn imbalance_estimate(&self) -> Option<Duration> {
        dispatch!(self, s => s.imbalance_estimate())
    }
}

/// asat-core's waits through a [`TwoPhase`] rule: every site spins the barrier spin time (the
/// runtime caps idle workers at [`asat_core::IDLE_SPIN_CAP`]); barrier and probe waits feed
/// [`record_wait`](TwoPhase::record_wait), joins [`record_join_wait`](TwoPhase::record_join_wait),
/// and the team barrier's arrival times [`record_imbalance`](TwoPhase::record_imbalance).
fn core_spin_limit(s: &dyn TwoPhase, _info: &WaitInfo) -> Duration {
    s.barrier_spin()
}

fn core_waited(s: &dyn TwoPhase, info: &WaitInfo, outcome: &WaitOutcome) {
    match info.site {
        WaitSite::Join => s.record_join_wait(outcome.waited, outcome.blocked),
        WaitSite::Barrier | WaitSite::Probe => s.record_wait(outcome.waited, outcome.blocked),
        _ => {}
    }
}

fn core_all_arrived(s: &dyn TwoPhase, arrivals_ns: &[u64]) {
    let (Some(&lo), Some(&hi)) = (arrivals_ns.iter().min(), arrivals_ns.iter().max()) else {
        return;
    };
    s.record_imbalance(Duration::from_nanos(hi - lo));
}

macro_rules! impl_wait_strategy {
    ($($t:ty),*) => {$(
        impl WaitStrategy for $t {
            fn spin_limit(&self, info: &WaitInfo) -> Duration {
                core_spin_limit(self, info)
            }
            fn waited(&self, info: &WaitInfo, outcome: &WaitOutcome) {
                core_waited(self, info, outcome)
            }
            fn wants_arrivals(&self) -> bool {
                self.wants_imbalance()
            }
            fn all_arrived(&self, _info: &WaitInfo, arrivals_ns: &[u64]) {
                core_all_arrived(self, arrivals_ns)
            }
        }
    )*};
}

impl_wait_strategy!(
    Block,
    Spin,
    FixedSpin,
    Oracle,
    AdaptiveLocal,
    AdaptiveGlobal,
    AnyStrategy
);

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config::builder()
            .context_switch(Duration::from_micros(30))
            .release_latency(Duration::from_micros(1))
            .sample(20)
            .build()
            .unwrap()
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn fixed_and_trivial_strategies() {
        let c = cfg();
        assert_eq!(Block.barrier_spin(), Duration::ZERO);
        assert_eq!(Spin.barrier_spin(), Duration::MAX);
        let f = FixedSpin::with_config(&c);
        assert_eq!(f.barrier_spin(), us(60));
        assert_eq!(f.read_spin(), us(60));
        let o = Oracle::with_config(us(100), &c);
        assert_eq!(o.barrier_spin(), us(101));
        assert_eq!(o.read_spin(), us(60));
        assert_eq!(Oracle::with_config(us(301), &c).barrier_spin(), us(60));
    }

    #[test]
    fn global_learns_from_imbalances_and_drops_outliers() {
        let g = AdaptiveGlobal::with_config(&cfg());
        assert_eq!(g.barrier_spin(), us(60));
        assert_eq!(g.imbalance_estimate(), None);
        for _ in 0..18 {
            g.record_imbalance(us(150));
        }
        g.record_imbalance(Duration::from_millis(40));
        g.record_imbalance(Duration::from_millis(40));
        assert_eq!(g.imbalance_estimate(), Some(us(150)));
        assert_eq!(g.barrier_spin(), us(151));
        // the imbalance grows past V = 300 µs: spin only S
        for _ in 0..200 {
            g.record_imbalance(us(900));
        }
        assert_eq!(g.barrier_spin(), us(60));
    }

    #[test]
    fn global_learns_through_core_arrivals() {
        let g = AdaptiveGlobal::with_config(&cfg());
        assert!(WaitStrategy::wants_arrivals(&g));
        for _ in 0..5 {
            core_all_arrived(&g, &[1_000, 81_000, 41_000]);
        }
        assert_eq!(g.imbalance_estimate(), Some(us(80)));
        assert_eq!(g.barrier_spin(), us(81));
    }

    #[test]
    fn local_learns_per_thread() {
        let l = std::sync::Arc::new(AdaptiveLocal::with_config(&cfg()));
        for _ in 0..10 {
            l.record_wait(us(200), false);
        }
        assert_eq!(l.barrier_spin(), us(201));
        // another thread has its own estimate
        let l2 = std::sync::Arc::clone(&l);
        let other = std::thread::spawn(move || l2.barrier_spin())
            .join()
            .unwrap();
        assert_eq!(other, us(60));
        assert_eq!(l.imbalance_estimate(), Some(us(200)));
    }

    #[test]
    fn by_name_errors_name_the_choices() {
        let c = cfg();
        let e = AnyStrategy::by_name("gang", &c).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown wait strategy \"gang\": must be one of block, spin, fixed, fixed:<us>, oracle:<us>, local, global"
        );
        assert!(AnyStrategy::by_name("oracle:abc", &c).is_err());
        assert_eq!(
            AnyStrategy::by_name("fixed:15", &c).unwrap().barrier_spin(),
            us(15)
        );
        assert_eq!(
            AnyStrategy::by_name(" Oracle:100 ", &c)
                .unwrap()
                .barrier_spin(),
            us(101)
        );
    }

    #[test]
    fn config_errors() {
        let e = Config::builder()
            .context_switch(Duration::ZERO)
            .build()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "context-switch cost 0ns: must be greater than 0 and at most 100 ms"
        );
        assert!(Config::builder().sample(5000).build().is_err());
        assert!(Config::builder()
            .context_switch(us(10))
            .release_latency(Duration::from_secs(1))
            .build()
            .is_err());
    }
}
