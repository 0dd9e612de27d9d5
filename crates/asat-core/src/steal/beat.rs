//! When a busy thread shares work: its heartbeat (see the work-stealing module docs), as pure
//! functions.
//!
//! A `join` costs a counter decrement and a flag's load; every `interval` joins, or at the
//! first join after another thread started to search (the flag), the thread reads the clock:
//! its beat is due [`AWAKE_BEAT`] after the last one while a thread searches, [`HEARTBEAT`]
//! after it otherwise (waking a sleeper costs a system call on both sides). A call's or a
//! stolen task's first join counts as a beat that is due, so a short call shares little. The
//! interval adapts so that reads come about every quarter heartbeat whatever a join's grain:
//! it doubles while reads come quicker than that (a sum over a tree, a few nanoseconds a
//! join), and halves while they come slower (leaves that sleep or compute for milliseconds),
//! down to a read at every join. A read that follows fewer joins than the interval (a poked
//! one, a stolen task's first, one a burst of shares asked for) never doubles it, and a call
//! from outside after coarse joins starts at a read a join ([`call_interval`]).

use std::time::{Duration, Instant};

/// How long a thread runs its tasks alone, while workers that may take tasks sleep, before it
/// shares its oldest pending work and wakes one of them.
pub(crate) const HEARTBEAT: Duration = Duration::from_micros(100);

/// How long a thread runs its tasks between two shares while another thread is awake and
/// looking for work.
pub(crate) const AWAKE_BEAT: Duration = Duration::from_micros(25);

/// The most joins between two clock reads. A read costs about 100 ns (the clock in a KVM
/// guest, and the policy's turn to be asked): at a tree sum's 6 ns a join, a read every 1024
/// joins took 2% of a one-thread sum's time; 4096 such joins still come within a quarter
/// heartbeat, and a thread that starts to search pokes the others' countdowns anyway.
pub(crate) const MAX_INTERVAL: u32 = 4096;

/// The number of joins until the next clock read, after a read that came `since_read` after
/// the one before, which had been `interval` joins apart, or fewer where another thread
/// `poked` the countdown: such a read halves a slow interval but never doubles a quick one
/// (searchers poke busy threads every few microseconds; the doublings took the interval of a
/// thread whose joins came between leaves of milliseconds to its cap, and that thread then
/// ran a thousand joins, leaves and all, before its next read).
pub(crate) fn next_interval(interval: u32, since_read: Duration, poked: bool) -> u32 {
    if since_read > HEARTBEAT / 4 {
        (interval / 2).max(1)
    } else if poked {
        interval
    } else {
        interval.saturating_mul(2).min(MAX_INTERVAL)
    }
}

/// The mean time between a thread's joins from which they are coarse ([`coarse`]).
pub(crate) const COARSE_GAP: Duration = Duration::from_micros(25);

/// Joins that share their frames at once after a clock read found joins coarse: the descent
/// to the next long leaf, whose joins come fast, shares too.
pub(crate) const COARSE_JOINS: u32 = 16;

/// Whether a read `since_read` after the one before, `interval` joins apart, finds a
/// thread's joins coarse: [`COARSE_GAP`] or more apart on average. Such joins share their
/// frames at once, as rayon's do: a push costs tens of nanoseconds, nothing beside their
/// grain, where a private frame waits behind the thread's next leaf (in a recursion of 64
/// leaves of 2 ms on 8 threads, a thread that ran out of work waited for the others' next
/// joins, up to a leaf, for the work they held).
pub(crate) fn coarse(interval: u32, since_read: Duration) -> bool {
    since_read >= COARSE_GAP * interval.max(1)
}

/// Whether a thread whose last beat was `since_beat` ago shares work now: to a thread awake
/// and searching (`searching`), or else to one it then wakes.
pub(crate) fn beat_due(since_beat: Duration, searching: bool) -> bool {
    since_beat >= if searching { AWAKE_BEAT } else { HEARTBEAT }
}

/// The last beat of a thread that starts a stolen task at `now`: one long enough ago that the
/// first join's beat is due (a thief that took a large part of a recursion passes on half of
/// it at once).
pub(crate) fn first_beat(now: Instant) -> Instant {
    now.checked_sub(HEARTBEAT).unwrap_or(now)
}

/// Joins between clock reads from which a call's joins count as fine-grained.
pub(crate) const FINE_GRAIN: u32 = 16;

/// The last beat of a call from outside that starts at `now`, its thread's clock reads last
/// `interval` joins apart: a call whose joins came fast (a sum over a small tree, whose work a
/// thief would take longer to hand back than it saves) shares nothing before its first beat;
/// one whose joins came slowly (or the first call) may share at its first join.
pub(crate) fn call_beat(now: Instant, interval: u32) -> Instant {
    if interval >= FINE_GRAIN {
        now
    } else {
        first_beat(now)
    }
}

/// The interval a call from outside starts with, its thread's clock reads last `interval`
/// joins apart: kept where its joins came fast (a sum over a small tree, call after call),
/// else one, a read at every join until reads come quick again (an interval of a few joins
/// left from a descent of the last call's, between leaves of milliseconds, kept the next
/// call's first leaves from being shared for that many joins).
pub(crate) fn call_interval(interval: u32) -> u32 {
    if interval >= FINE_GRAIN {
        interval
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST: Duration = Duration::from_nanos(500);
    const SLOW: Duration = Duration::from_millis(2);

    #[test]
    fn quick_joins_read_the_clock_ever_more_rarely_up_to_the_cap() {
        let mut i = 1;
        let mut seen = vec![];
        for _ in 0..15 {
            i = next_interval(i, FAST, false);
            seen.push(i);
        }
        assert_eq!(&seen[..4], &[2, 4, 8, 16]);
        assert_eq!(i, MAX_INTERVAL);
        assert!(seen.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn slow_joins_read_the_clock_at_every_join() {
        assert_eq!(next_interval(MAX_INTERVAL, SLOW, false), MAX_INTERVAL / 2);
        let mut i = MAX_INTERVAL;
        for _ in 0..MAX_INTERVAL.trailing_zeros() {
            i = next_interval(i, SLOW, false);
        }
        assert_eq!(i, 1);
        assert_eq!(next_interval(1, SLOW, false), 1);
    }

    #[test]
    fn reads_a_quarter_heartbeat_apart_are_the_turning_point() {
        assert_eq!(next_interval(8, HEARTBEAT / 4, false), 16);
        assert_eq!(
            next_interval(8, HEARTBEAT / 4 + Duration::from_nanos(1), false),
            4
        );
    }

    #[test]
    fn a_poked_read_halves_a_slow_interval_and_keeps_a_quick_one() {
        assert_eq!(next_interval(64, FAST, true), 64);
        assert_eq!(next_interval(MAX_INTERVAL, FAST, true), MAX_INTERVAL);
        assert_eq!(next_interval(64, SLOW, true), 32);
        assert_eq!(next_interval(1, SLOW, true), 1);
    }

    #[test]
    fn joins_a_quarter_heartbeat_apart_on_average_are_coarse() {
        assert!(coarse(1, COARSE_GAP));
        assert!(coarse(1, SLOW));
        assert!(coarse(64, SLOW));
        assert!(!coarse(1, COARSE_GAP - Duration::from_nanos(1)));
        // a sum over a tree: a thousand joins between reads a quarter heartbeat apart
        assert!(!coarse(MAX_INTERVAL, HEARTBEAT / 4));
        assert!(!coarse(2, FAST));
    }

    #[test]
    fn a_beat_is_due_sooner_for_a_searcher_than_for_a_sleeper() {
        let tick = Duration::from_nanos(1);
        assert!(!beat_due(HEARTBEAT - tick, false));
        assert!(beat_due(HEARTBEAT, false));
        assert!(!beat_due(AWAKE_BEAT - tick, true));
        assert!(beat_due(AWAKE_BEAT, true));
        assert!(AWAKE_BEAT < HEARTBEAT);
    }

    #[test]
    fn a_call_of_fine_joins_waits_a_beat_and_one_of_coarse_joins_does_not() {
        let now = Instant::now();
        assert_eq!(call_beat(now, FINE_GRAIN), now);
        assert_eq!(call_beat(now, MAX_INTERVAL), now);
        assert_eq!(call_beat(now, FINE_GRAIN - 1), first_beat(now));
        assert_eq!(call_beat(now, 1), first_beat(now));
    }

    #[test]
    fn a_call_keeps_a_fine_interval_and_reads_at_every_join_after_coarse_ones() {
        assert_eq!(call_interval(MAX_INTERVAL), MAX_INTERVAL);
        assert_eq!(call_interval(FINE_GRAIN), FINE_GRAIN);
        assert_eq!(call_interval(FINE_GRAIN - 1), 1);
        assert_eq!(call_interval(4), 1);
    }

    #[test]
    fn the_first_join_of_a_start_is_due() {
        let now = Instant::now();
        let first = first_beat(now);
        assert!(beat_due(now - first, false) || now.checked_sub(HEARTBEAT).is_none());
        assert!(beat_due(now - first, true) || now.checked_sub(HEARTBEAT).is_none());
    }
}
