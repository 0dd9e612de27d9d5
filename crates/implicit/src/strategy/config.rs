//! [`Config`]: the costs and sizes the strategies are built from, and its builder.

use std::time::Duration;

use crate::calibrate::{self, Calibration};
use crate::estimator::{SpinRule, DEFAULT_SAMPLE, MAX_SAMPLE};
use crate::Error;

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
