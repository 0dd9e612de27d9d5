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
//!
//! [`Estimator`]: crate::Estimator
//! [`WaitStrategy`]: asat_core::WaitStrategy
//! [`WaitStrategy::all_arrived`]: asat_core::WaitStrategy::all_arrived

mod adaptive;
mod any;
mod config;
mod fixed;
#[cfg(test)]
mod tests;
mod wait_strategy;

use std::fmt;
use std::time::Duration;

pub(crate) use adaptive::SHORT_BATCH;
pub use adaptive::{AdaptiveGlobal, AdaptiveLocal, LOCAL_SLOTS};
pub use any::{AnyStrategy, STRATEGY_NAMES};
pub use config::{Config, ConfigBuilder};
pub use fixed::{Block, FixedSpin, Oracle, Spin};

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
