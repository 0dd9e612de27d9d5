//! The strategies whose spin time is fixed: [`Block`], [`Spin`], [`FixedSpin`] and [`Oracle`].

use std::time::Duration;

use super::{Config, TwoPhase};
use crate::estimator::SpinRule;

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
