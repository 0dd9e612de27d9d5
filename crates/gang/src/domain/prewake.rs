//! How a watcher that is not the scheduler waits (see "Waking before the quantum ends" in the
//! [module docs](super)): asleep on the `epoch` futex, except around the end of a slice of a
//! row that has threads in its process, where it polls `epoch` instead, so that the stop
//! reaches its threads without a futex wake-up of its own thread on the critical path.

use std::time::Duration;

/// How long before the published end of the slice a watcher starts polling (at most; an
/// eighth of the quantum when that is shorter).
pub(crate) const LEAD: Duration = Duration::from_micros(50);
/// How long after the published end it keeps polling when the scheduler is late (at most; a
/// quarter of the quantum when that is shorter); then it sleeps on the futex as at any time.
pub(crate) const LATE: Duration = Duration::from_micros(200);

/// What the watcher does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Sleep on the `epoch` futex, at most this long.
    Sleep(Duration),
    /// Poll `epoch` (yielding to threads of its priority between looks), at most this long.
    Poll(Duration),
}

/// The watcher's next wait. `now_us` and `end_us` are the low 32 bits of `CLOCK_MONOTONIC` in
/// microseconds (the control word's unit); `end_us` is the published end of the running slice
/// (`None`: the scheduler expects no switch at any time it could publish, or publishes none).
/// `runs_here`: this process has threads of the running row (only then does the stop concern
/// it). `longest`: the longest sleep (the campaign period). An end further away than two
/// quanta, either way, is not believed (a stale or foreign word).
pub(crate) fn plan(
    now_us: u32,
    end_us: Option<u32>,
    quantum: Duration,
    runs_here: bool,
    longest: Duration,
) -> Wait {
    let Some(end) = end_us.filter(|_| runs_here) else {
        return Wait::Sleep(longest);
    };
    let q = micros(quantum);
    let lead = micros(LEAD).min(q / 8);
    let late = micros(LATE).min(q / 4);
    // Signed distance to the end, wrapping with the 32-bit clock (about 71 minutes).
    let left = i64::from(end.wrapping_sub(now_us) as i32);
    if left.unsigned_abs() > 2 * q {
        Wait::Sleep(longest)
    } else if left > lead as i64 {
        Wait::Sleep(longest.min(Duration::from_micros(left as u64 - lead)))
    } else if left > -(late as i64) {
        Wait::Poll(Duration::from_micros((left + late as i64) as u64))
    } else {
        Wait::Sleep(longest)
    }
}

/// The control word for a slice ending at `end_ns` (`CLOCK_MONOTONIC`): its microseconds' low
/// 32 bits with the lowest bit set, so that 0 stays "none".
pub(crate) fn encode(end_ns: Option<u64>) -> u32 {
    end_ns.map_or(0, |ns| (ns / 1000) as u32 | 1)
}

/// The inverse of [`encode`] (to the microsecond, the lowest bit aside).
pub(crate) fn decode(word: u32) -> Option<u32> {
    (word != 0).then_some(word)
}

/// `CLOCK_MONOTONIC` ns as the control word's unit.
pub(crate) fn micros_now(now_ns: u64) -> u32 {
    (now_ns / 1000) as u32
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u32::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: Duration = Duration::from_millis(20);
    const LONG: Duration = Duration::from_millis(20);

    fn at(now: u32, end: u32) -> Wait {
        plan(now, decode(end), Q, true, LONG)
    }

    #[test]
    fn sleeps_until_the_lead_then_polls_until_late() {
        assert_eq!(at(1000, 11_001), Wait::Sleep(Duration::from_micros(9_951)));
        assert_eq!(at(10_951, 11_001), Wait::Poll(Duration::from_micros(250)));
        assert_eq!(at(11_001, 11_001), Wait::Poll(Duration::from_micros(200)));
        assert_eq!(at(11_200, 11_001), Wait::Poll(Duration::from_micros(1)));
        assert_eq!(at(11_201, 11_001), Wait::Sleep(LONG));
    }

    #[test]
    fn sleeps_at_most_the_longest() {
        assert_eq!(
            plan(0, decode(39_001), Q, true, Duration::from_millis(5)),
            Wait::Sleep(Duration::from_millis(5))
        );
    }

    #[test]
    fn no_end_no_threads_or_an_unbelievable_end_means_sleep() {
        assert_eq!(plan(5, None, Q, true, LONG), Wait::Sleep(LONG));
        assert_eq!(plan(5, decode(41), Q, false, LONG), Wait::Sleep(LONG));
        assert_eq!(at(0, 40_001), Wait::Sleep(LONG));
        assert_eq!(at(50_000, 1), Wait::Sleep(LONG));
    }

    #[test]
    fn wraps_with_the_32_bit_clock() {
        assert_eq!(at(u32::MAX - 9, 1), Wait::Poll(Duration::from_micros(211)));
        assert_eq!(at(5, u32::MAX), Wait::Poll(Duration::from_micros(194)));
    }

    #[test]
    fn short_quanta_scale_the_window() {
        let q = Duration::from_micros(400);
        assert_eq!(
            plan(0, decode(49), q, true, LONG),
            Wait::Poll(Duration::from_micros(149))
        );
        assert_eq!(
            plan(0, decode(101), q, true, LONG),
            Wait::Sleep(Duration::from_micros(51))
        );
    }

    #[test]
    fn encoding_keeps_zero_for_none() {
        assert_eq!(encode(None), 0);
        assert_eq!(decode(encode(Some(0))), Some(1));
        assert_eq!(decode(encode(Some(12_345_678))), Some(12_345));
        assert_eq!(micros_now(12_345_678), 12_345);
    }
}
