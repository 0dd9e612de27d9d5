//! EPCC's delay: the work every test does inside the construct it measures, a loop of
//! dependent single-precision additions whose length (in iterations) is calibrated at the start
//! to take a given time (0.1 µs in syncbench, 15 µs in schedbench by default).
//!
//! Calibration, as EPCC does it: starting from a length of 0, the length grows to
//! `floor(1.1 * length + 1)` until the mean of 1000 timed calls reaches the target time; the
//! first length that does is the delay length. Each call is kept out of line, as EPCC's `delay`
//! (in another C file than the tests) is a real call.
//!
//! One difference: each step here is timed twice and the shorter time taken. EPCC times it once,
//! so that on a busy machine one preemption during a step (10 ms spread over 1000 calls is 10 µs
//! a call) ends the calibration early, with a delay a fraction of the target; a preemption only
//! ever lengthens a step, so the shorter of two is the better estimate.

use std::hint::black_box;
use std::time::Instant;

/// Timed calls per calibration step.
const CALLS_PER_STEP: u32 = 1000;

/// The longest delay the calibration tries before giving up (about 0.1-1 s on current CPUs).
const MAX_LENGTH: u32 = 1 << 30;

/// Runs the delay loop `length` times.
#[inline(never)]
pub fn delay(length: u32) {
    let mut a = 0.0f32;
    for i in 0..black_box(length) {
        a += i as f32;
    }
    black_box(a);
}

/// The length after `length` in the calibration: grown by 10% plus one, so that the sequence
/// strictly increases from 0 and no length is tried twice.
pub fn grow(length: u32) -> u32 {
    (f64::from(length) * 1.1 + 1.0) as u32
}

/// The first length of the growth sequence from 0 whose time per call, as `per_call_us`
/// measures it, reaches `target_us`.
pub fn calibrate(target_us: f64, mut per_call_us: impl FnMut(u32) -> f64) -> Result<u32, String> {
    let mut length = 0;
    loop {
        length = grow(length);
        if per_call_us(length) >= target_us {
            return Ok(length);
        }
        if length > MAX_LENGTH {
            return Err(format!(
                "the delay loop did not reach {target_us} µs at {length} iterations: \
                 it is being optimized away or the clock does not move"
            ));
        }
    }
}

/// The mean time of one call of [`delay`] with `length`, in microseconds, over 1000 calls.
pub fn measure_us(length: u32) -> f64 {
    let start = Instant::now();
    for _ in 0..CALLS_PER_STEP {
        delay(length);
    }
    start.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS_PER_STEP)
}

/// The delay length that takes `target_us` on this machine now (each step timed twice, the
/// shorter taken).
pub fn calibrate_here(target_us: f64) -> Result<u32, String> {
    delay(0);
    calibrate(target_us, |len| measure_us(len).min(measure_us(len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_strictly_increases_from_zero() {
        let mut seq = vec![0];
        for _ in 0..60 {
            seq.push(grow(*seq.last().unwrap()));
        }
        assert!(seq.windows(2).all(|w| w[1] > w[0]));
        assert_eq!(&seq[..12], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    }

    /// A machine on which a call costs 2 ns per iteration plus 10 ns.
    fn model(length: u32) -> f64 {
        0.010 + 0.002 * f64::from(length)
    }

    #[test]
    fn calibration_stops_at_the_first_length_that_reaches_the_target() {
        let len = calibrate(0.1, model).unwrap();
        assert!(model(len) >= 0.1);
        let mut prev = 0;
        while grow(prev) != len {
            prev = grow(prev);
        }
        assert!(prev == 0 || model(prev) < 0.1, "{prev} already reached it");
    }

    #[test]
    fn calibration_is_monotone_in_the_target() {
        let targets = [0.01, 0.05, 0.1, 0.5, 1.0, 15.0, 100.0];
        let lengths: Vec<u32> = targets
            .iter()
            .map(|&t| calibrate(t, model).unwrap())
            .collect();
        assert!(lengths.windows(2).all(|w| w[1] >= w[0]), "{lengths:?}");
        assert!(lengths[6] > lengths[0]);
    }

    #[test]
    fn a_loop_that_takes_no_time_is_an_error() {
        let err = calibrate(1.0, |_| 0.0).unwrap_err();
        assert!(err.contains("optimized away"), "{err}");
    }

    #[test]
    fn the_real_calibration_returns_a_length_of_the_sequence() {
        // No timed assertion: only that the real calibration ends, on a length of the growth
        // sequence.
        let short = calibrate_here(0.05).unwrap();
        let mut l = 0;
        while l < short {
            l = grow(l);
        }
        assert_eq!(l, short);
    }
}
