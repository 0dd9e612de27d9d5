//! The computation of a bulk-synchronous phase: calibrated busy work, not a clock, so that a
//! thread or rank that is off its CPU does not progress, and each phase's length drawn from
//! `U(g - v/2, g + v/2)`.

use std::time::Instant;

use rand::Rng;
use rand_distr::{Distribution, Uniform};

/// Busy work: `units` steps of a dependent integer chain (about 1 ns each).
#[inline(never)]
pub fn work(units: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..units {
        x = std::hint::black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
    std::hint::black_box(x);
}

/// Work units per microsecond on this CPU: the best of a few short runs.
pub fn units_per_us() -> f64 {
    let units = 2_000_000;
    (0..5)
        .map(|_| {
            let t = Instant::now();
            work(units);
            units as f64 / (t.elapsed().as_secs_f64() * 1e6)
        })
        .fold(0.0, f64::max)
}

/// The computation of each phase: a time drawn from `U(g - v/2, g + v/2)`, done as busy work
/// at a calibrated rate.
#[derive(Clone, Copy, Debug)]
pub struct Compute {
    dist: Uniform<f64>,
    /// Work units per ns.
    per_ns: f64,
}

impl Compute {
    /// Phases of `grain_ns` on average, spread over `imbalance_ns` (`g` and `v`), at
    /// `units_per_us` work units per microsecond ([`units_per_us`]); an error when the spread
    /// is not a range of numbers.
    pub fn new(grain_ns: u64, imbalance_ns: u64, units_per_us: f64) -> Result<Self, String> {
        let (g, v) = (grain_ns as f64, imbalance_ns as f64);
        let dist = Uniform::new_inclusive(g - v / 2.0, g + v / 2.0).map_err(|e| e.to_string())?;
        Ok(Self {
            dist,
            per_ns: units_per_us / 1e3,
        })
    }

    /// Work units for `ns` nanoseconds of computation.
    pub fn units(&self, ns: f64) -> u64 {
        (ns * self.per_ns) as u64
    }

    /// One phase's computation, its length drawn with `rng`.
    pub fn phase(&self, rng: &mut impl Rng) {
        work(self.units(self.dist.sample(rng)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn phases_are_drawn_around_the_grain() {
        let c = Compute::new(1_000, 500, 2_000.0).unwrap();
        assert_eq!(c.units(1_000.0), 2_000);
        let mut rng = StdRng::seed_from_u64(1);
        let draws: Vec<f64> = (0..1000).map(|_| c.dist.sample(&mut rng)).collect();
        assert!(draws.iter().all(|&d| (750.0..=1250.0).contains(&d)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 1_000.0).abs() < 25.0, "{mean}");
        c.phase(&mut rng);
        assert!(units_per_us() > 0.0);
    }
}
