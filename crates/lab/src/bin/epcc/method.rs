//! EPCC's measurement of one test: how many inner repetitions it runs, its timed outer
//! repetitions, and the overhead against a reference.
//!
//! A test is a function of the inner repetition count `r` that runs the construct `r` times
//! (a reference runs the same work without the construct). The method:
//!
//! 1. **Inner repetitions.** Starting at 10, the test is run and timed with `r` repetitions,
//!    then `r` doubles, until the timed run has reached the target test time (1000 µs by
//!    default). As in EPCC, the doubling happens after the run that reached the target, so the
//!    count used is twice the one that first reached it and a test runs about twice the target.
//! 2. **Outer repetitions.** One untimed run (a warm-up), then `outer` timed runs (20 by
//!    default); each run's time divided by `r` is one sample, in microseconds.
//! 3. **Warm-up (asat's side only), before step 1.** [`Method::warm_up`] runs a test untimed for
//!    [`WARM_UP_MS`] ms before it is measured. A worker that slept through the previous test is
//!    woken by the first region, and the kernel sometimes wakes it on the starting thread's CPU,
//!    where the two share one CPU until the load balancer moves one, a few milliseconds later
//!    (seen as 10-20 µs regions for 3-10 ms at the start of a test). Step 1 times its first
//!    runs in that window and settles on a count of 160 or so instead of 5000-10000, and one
//!    outer repetition then carries the whole stall. EPCC's C suite has no such step; libgomp's
//!    threads poll for about 300,000 iterations before they sleep.
//! 4. **Overhead.** The statistics of the samples ([`Summary`]); the construct's overhead is the
//!    test's mean less its reference's mean, and its spread the test's standard deviation.

use std::time::Instant;

use crate::stats::Summary;

/// How long [`Method::warm_up`] runs a test.
pub const WARM_UP_MS: u64 = 20;

/// The first inner repetition count tried.
const FIRST_INNER_REPS: u64 = 10;

/// Inner repetition counts beyond this mean that the test takes no measurable time.
const MAX_INNER_REPS: u64 = 1 << 40;

/// What every test is measured with.
#[derive(Clone, Copy, Debug)]
pub struct Method {
    /// Timed outer repetitions.
    pub outer_reps: usize,
    /// Target test time, microseconds.
    pub target_us: f64,
}

/// One test's outcome.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Inner repetitions per timed run.
    pub inner_reps: u64,
    /// The samples' statistics, microseconds per inner repetition.
    pub summary: Summary,
}

/// The inner repetition count for a test whose run with `r` repetitions takes `run_us(r)`
/// microseconds (see the module docs).
pub fn inner_reps(target_us: f64, mut run_us: impl FnMut(u64) -> f64) -> Result<u64, String> {
    let mut reps = FIRST_INNER_REPS;
    loop {
        let took = run_us(reps);
        reps *= 2;
        if took >= target_us {
            return Ok(reps);
        }
        if reps > MAX_INNER_REPS {
            return Err(format!(
                "the test still took {took} µs at {reps} inner repetitions (target \
                 {target_us} µs): its work is being optimized away"
            ));
        }
    }
}

/// Microseconds `f` takes.
fn time_us(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() * 1e6
}

impl Method {
    /// Runs `test` untimed, [`FIRST_INNER_REPS`] repetitions at a time, for [`WARM_UP_MS`]
    /// (step 3 of the module docs).
    pub fn warm_up(&self, mut test: impl FnMut(u64)) {
        let start = Instant::now();
        while start.elapsed().as_millis() < u128::from(WARM_UP_MS) {
            test(FIRST_INNER_REPS);
        }
    }

    /// Measures `test` (see the module docs).
    pub fn measure(&self, mut test: impl FnMut(u64)) -> Result<Measured, String> {
        let reps = inner_reps(self.target_us, |r| time_us(|| test(r)))?;
        test(reps);
        let samples: Vec<f64> = (0..self.outer_reps)
            .map(|_| time_us(|| test(reps)) / reps as f64)
            .collect();
        Ok(Measured {
            inner_reps: reps,
            summary: Summary::of(&samples),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_reps_double_until_the_target_then_once_more() {
        // 0.5 µs per repetition: 10 -> 5 µs, ..., 2560 -> 1280 µs >= 1000, then doubled.
        let mut tried = Vec::new();
        let r = inner_reps(1000.0, |r| {
            tried.push(r);
            r as f64 * 0.5
        })
        .unwrap();
        assert_eq!(tried, vec![10, 20, 40, 80, 160, 320, 640, 1280, 2560]);
        assert_eq!(r, 5120);
    }

    #[test]
    fn a_slow_test_keeps_the_first_count_doubled() {
        assert_eq!(inner_reps(1000.0, |_| 5000.0), Ok(20));
    }

    #[test]
    fn exactly_the_target_is_enough() {
        assert_eq!(inner_reps(40.0, |r| r as f64), Ok(80));
    }

    #[test]
    fn a_test_that_takes_no_time_is_an_error() {
        let err = inner_reps(1000.0, |_| 0.0).unwrap_err();
        assert!(err.contains("optimized away"), "{err}");
    }

    #[test]
    fn measure_runs_warm_up_then_outer_reps_of_the_chosen_count() {
        let m = Method {
            outer_reps: 5,
            target_us: 1e-3,
        };
        let mut calls = Vec::new();
        let out = m.measure(|r| calls.push(r)).unwrap();
        // Calibration runs until a run takes a nanosecond, then one warm-up and 5 timed runs,
        // all with the chosen count.
        let n = calls.len();
        assert!(n >= 7);
        assert!(calls[n - 6..].iter().all(|&r| r == out.inner_reps));
        assert_eq!(out.summary.n, 5);
    }
}
