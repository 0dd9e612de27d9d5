//! The strategies that learn the imbalance: [`AdaptiveLocal`] and [`AdaptiveGlobal`].

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::{Config, TwoPhase};
use crate::estimator::{Estimator, SpinRule};

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
