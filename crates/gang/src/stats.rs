//! [`GangStats`]: what a gang scheduler has done.

use std::time::Duration;

/// Counters of a [`GangScheduler`](crate::GangScheduler) since it was built.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GangStats {
    /// Coordinated switches from one slot to another (the first start of a slot not counted).
    /// With a shared domain: the stops of a row this process ran (its part of the domain's
    /// switches; see `domain_switches` for those it led).
    pub switches: u64,
    /// Switches made before the quantum ended because no thread of the running slot was
    /// runnable (all idle, blocked or gone).
    pub early_switches: u64,
    /// Switches that had at least one thread to stop (those that have a stop time).
    pub timed_switches: u64,
    /// Time from the broadcast of the stop signals to the last thread stopped, summed over
    /// timed switches.
    pub stop_time_total: Duration,
    /// The longest such time.
    pub stop_time_max: Duration,
    /// Stop signals sent.
    pub signals: u64,
    /// Threads stopped inside the signal handler.
    pub signal_stops: u64,
    /// Threads stopped at a cooperative safe point.
    pub cooperative_stops: u64,
    /// Stop signals that arrived inside a `preempt_off` section (or the crate's own critical
    /// sections) and were taken at the section's end.
    pub deferred_stops: u64,
    /// Switches where some thread did not stop within the stop timeout (the scheduler went on).
    pub late_stops: u64,
    /// Signals of the stop signal's number that this scheduler did not send (a `pthread_kill`,
    /// `kill` or `sigqueue` from anyone else), received by its gang threads and ignored. A
    /// signal that lands on a thread bound to no gang is ignored without being counted.
    pub ignored_signals: u64,
    /// Switches that found another handler installed for the stop signal, and so sent no
    /// signal (their threads stopped at safe points, or the switch was late). While this
    /// happens, creating and joining gangs fail with an error that says why.
    pub handler_replaced: u64,
    /// With a shared domain: the switches this process's scheduler thread led as the domain's
    /// scheduler, and completed (every live participant acknowledged the stop in time).
    pub domain_switches: u64,
    /// Those of `domain_switches` that had a thread to stop, in any process.
    pub domain_timed_switches: u64,
    /// Time from the stop's announcement (the odd epoch, the broadcast to every process) to
    /// the last thread parked, in whatever process (each acknowledgement carries its
    /// process's last park time), summed over `domain_timed_switches`: the in-process
    /// `stop_time_total` measured across processes.
    pub domain_stop_time_total: Duration,
    /// The longest such time.
    pub domain_stop_time_max: Duration,
    /// With a shared domain: stops of this process's row that its scheduler thread saw while
    /// polling around the published end of the slice, without being woken (see "Waking
    /// before the quantum ends" in the `domain` module docs).
    pub polled_stops: u64,
}

impl GangStats {
    /// The mean time of a switch across processes (see `domain_stop_time_total`).
    pub fn mean_domain_stop_time(&self) -> Duration {
        mean(self.domain_stop_time_total, self.domain_timed_switches)
    }

    /// The mean time per coordinated switch, from the broadcast to the last thread stopped.
    pub fn mean_stop_time(&self) -> Duration {
        mean(self.stop_time_total, self.timed_switches)
    }
}

fn mean(total: Duration, n: u64) -> Duration {
    if n == 0 {
        Duration::ZERO
    } else {
        // In u128 nanoseconds: a u32 count would truncate (to 0 past 2^32 switches).
        Duration::from_nanos((total.as_nanos() / u128::from(n)) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_stop_time_past_2_to_the_32_switches() {
        let s = GangStats {
            timed_switches: 1 << 33,
            stop_time_total: Duration::from_secs(1 << 33),
            ..GangStats::default()
        };
        assert_eq!(s.mean_stop_time(), Duration::from_secs(1));
    }
}
