//! The equal share across readings, as pure functions: what one reading of `/proc` cannot
//! tell about the parallel jobs that arrived or left during its interval.
//!
//! A reading covers the time since the previous one (200 ms by default). Averaged over it:
//!
//! - a job that arrived a few milliseconds before the reading, with all its threads running,
//!   kept a small part of a CPU busy on average and claims no share ([`busy_cpus`] judges a
//!   process that started within the interval over its life instead): the jobs already
//!   there then kept their teams for one more interval beside the newcomer's whole pool (in
//!   the simulator, 64 CPUs: 124 threads for 0.2 s at each arrival);
//! - a job that left a few milliseconds before the reading still counts in the CPUs the rest
//!   of the machine kept busy, and where it was the last other claimant the job left alone
//!   has no share to grow to ([`share_after`] gives it the CPUs the others leave): it stayed
//!   at half the machine for one more interval.
//!
//! Processes are known by an id that every reader of the same machine sees alike (the
//! process id).

use super::fair::{claimants, equal_share, Process};

/// The CPUs a process kept busy on average: its CPU time `ran` over the reading's `wall`
/// time, or over its life (`age`, when it started within the interval), never less than a
/// quarter of the interval (the kernel counts CPU time in ticks of 10 ms: over a few
/// milliseconds one tick would be several CPUs); the three in one unit. 0 for an empty
/// interval.
pub fn busy_cpus(ran: f64, wall: f64, age: f64) -> f64 {
    let over = wall.min(age.max(wall / 4.0));
    if over > 0.0 && ran.is_finite() {
        ran.max(0.0) / over
    } else {
        0.0
    }
}

/// The equal share of `cpus` CPUs after a reading of `others` ([`equal_share`]); where no
/// other process claims one but a claimant of the previous reading (`before`, by id) is gone
/// from `others`, the CPUs all the others leave, at least one: the share of a job that is
/// the last of its parallel jobs now, to which it grows at once as to any share that rose.
pub fn share_after(cpus: usize, others: &[(u64, Process)], before: &[u64]) -> Option<f64> {
    let list: Vec<Process> = others.iter().map(|&(_, p)| p).collect();
    if let Some(share) = equal_share(cpus, &list) {
        return Some(share);
    }
    let left = before.iter().any(|b| others.iter().all(|(id, _)| id != b));
    left.then(|| {
        let kept: f64 = list
            .iter()
            .filter(|p| p.cpus.is_finite() && p.cpus > 0.0)
            .map(|p| p.cpus)
            .sum();
        (cpus as f64 - kept).max(1.0)
    })
}

/// The claimants to compare the next reading with ([`share_after`]'s `before`): those of
/// `share`, none where there is none.
pub fn claimants_of(others: &[(u64, Process)], share: Option<f64>) -> Vec<u64> {
    share.map_or_else(Vec::new, |s| claimants(others, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, cpus: f64) -> (u64, Process) {
        (id, Process { cpus, threads: 64 })
    }

    #[test]
    fn a_process_that_started_within_the_interval_is_judged_over_its_life() {
        // 32 CPUs for the last 50 ms of a 200 ms reading
        assert_eq!(busy_cpus(1.6, 0.2, 0.05), 32.0);
        assert_eq!(busy_cpus(1.6, 0.2, 10.0), 8.0);
        assert_eq!(busy_cpus(1.6, 0.2, 0.2), 8.0);
    }

    #[test]
    fn a_process_younger_than_a_quarter_of_the_interval_is_judged_over_that_quarter() {
        // one tick of 10 ms in a process 1 ms old is not 10 CPUs
        assert_eq!(busy_cpus(0.01, 0.16, 0.001), 0.25);
        assert_eq!(busy_cpus(0.01, 0.16, 0.0), 0.25);
    }

    #[test]
    fn empty_or_broken_readings_are_no_cpus() {
        assert_eq!(busy_cpus(1.0, 0.0, 1.0), 0.0);
        assert_eq!(busy_cpus(f64::NAN, 0.2, 1.0), 0.0);
        assert_eq!(busy_cpus(-1.0, 0.2, 1.0), 0.0);
    }

    #[test]
    fn the_claimants_are_those_of_the_share() {
        let others = [
            job(7, 20.0),
            job(9, 5.0),
            (
                3,
                Process {
                    cpus: 1.0,
                    threads: 1,
                },
            ),
        ];
        let share = equal_share(64, &others.map(|o| o.1)).unwrap();
        assert_eq!(claimants(&others, share), vec![7]);
        assert_eq!(claimants_of(&others, Some(share)), vec![7]);
        assert!(claimants_of(&others, None).is_empty());
    }

    #[test]
    fn the_last_claimant_gone_leaves_the_job_the_cpus_the_others_leave() {
        // It shared 64 CPUs with job 7, which left during the interval; a hog stays.
        let hog = (
            3,
            Process {
                cpus: 1.0,
                threads: 1,
            },
        );
        assert_eq!(share_after(64, &[hog], &[7]), Some(63.0));
        assert_eq!(share_after(64, &[], &[7]), Some(64.0));
    }

    #[test]
    fn without_a_departure_no_claimant_is_no_share() {
        let hog = (
            3,
            Process {
                cpus: 1.0,
                threads: 1,
            },
        );
        assert_eq!(share_after(64, &[hog], &[]), None);
        // Job 7 is still there but no longer claims (a serial phase): no share.
        let quiet = (
            7,
            Process {
                cpus: 0.5,
                threads: 64,
            },
        );
        assert_eq!(share_after(64, &[hog, quiet], &[7]), None);
    }

    #[test]
    fn with_claimants_left_the_share_is_theirs() {
        // 3 jobs, one left: the equal share of the two that remain.
        assert_eq!(share_after(64, &[job(5, 32.0)], &[5, 7]), Some(32.0));
    }
}
