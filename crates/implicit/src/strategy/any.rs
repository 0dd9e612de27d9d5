//! [`AnyStrategy`]: one of the strategies, chosen at run time by name.

use std::time::Duration;

use super::{AdaptiveGlobal, AdaptiveLocal, Block, Config, FixedSpin, Oracle, Spin, TwoPhase};
use crate::calibrate;
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
        let us = |v: &str| {
            calibrate::parse_us(v).ok_or_else(|| Error::unknown_strategy(name, &STRATEGY_NAMES))
        };
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
                    return Err(Error::unknown_strategy(name, &STRATEGY_NAMES));
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
