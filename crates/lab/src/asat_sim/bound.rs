//! The shortest makespan any runtime could reach in a scenario without running more threads
//! than CPUs: a bound to judge the rule's and the fixed teams' makespans against; and the
//! static partition of the machine into the jobs' equal shares ([`share_teams`]), the
//! baseline of what choosing team sizes alone can reach.
//!
//! The jobs get the CPUs the hogs leave (`P - hogs`: a hog keeps its CPU, as it does when no
//! runtime puts more threads on the machine than it has CPUs), do their work at full speed
//! with no barrier, imbalance, wake-up or switch costs, and each uses at most `max_threads`
//! of them. Two bounds hold for any such schedule, and the larger is returned:
//!
//! - the machine's: the work that has arrived by each arrival time is done at the rate of all
//!   free CPUs at best, so the last job cannot end before the CPUs have worked through every
//!   job in arrival order without ever idling while work is there;
//! - each job's own: its arrival plus its work at `min(max_threads, P - hogs)` CPUs.
//!
//! When no job is limited by its `max_threads` (every scenario of `asat_sim`: jobs of `P`
//! threads), the first is reached by running the jobs one after another at full width, so
//! the bound is the optimum, not only a bound.

use std::time::Duration;

use super::Scenario;

/// The bound of the module docs for `scenario` (its jobs given work by
/// [`Scenario::with_work`]) on `processors` CPUs; `None` if a job has no work or the hogs
/// leave no CPU.
///
/// ```
/// use asat_lab::asat_sim::{ideal_makespan, Scenario};
/// use std::time::Duration;
/// let eval = Duration::from_millis(200);
/// // two jobs of 4 CPU-seconds each on 4 CPUs: 2 s
/// let sc = Scenario::together(4, 2, eval).with_work(Duration::from_secs(4), eval * 100);
/// assert_eq!(ideal_makespan(4, &sc), Some(Duration::from_secs(2)));
/// ```
pub fn ideal_makespan(processors: usize, scenario: &Scenario) -> Option<Duration> {
    let free = processors.checked_sub(scenario.hogs).filter(|&f| f > 0)? as f64;
    let mut jobs: Vec<(f64, f64, f64)> = scenario
        .jobs
        .iter()
        .map(|j| {
            let width = (j.max_threads as f64).min(free);
            Some((j.arrive.as_secs_f64(), j.work?.as_secs_f64(), width))
        })
        .collect::<Option<_>>()?;
    jobs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut machine = 0.0_f64;
    let mut own = 0.0_f64;
    for &(arrive, work, width) in &jobs {
        machine = machine.max(arrive) + work / free;
        own = own.max(arrive + work / width);
    }
    Some(Duration::from_secs_f64(machine.max(own)))
}

/// Each job's equal share of the CPUs the hogs leave, in threads: `(P - hogs) / k` rounded
/// down, the remainder one each to the first jobs, at least 1 and at most the job's
/// `max_threads`. Fixed teams of these sizes ([`Config::partition`](super::Config::partition))
/// run the jobs' regions with no oversubscription and no CPU idle while every job is there
/// (where the jobs are no more than the free CPUs and none is narrower than its share): what
/// a runtime that knew the shares in advance, and paid nothing to learn them, would run.
///
/// ```
/// use asat_lab::asat_sim::{share_teams, Scenario};
/// use std::time::Duration;
/// let eval = Duration::from_millis(200);
/// assert_eq!(share_teams(64, &Scenario::together(64, 4, eval)), [16; 4]);
/// // 16 CPUs, 4 hogs: 12 left to 8 jobs
/// assert_eq!(share_teams(16, &Scenario::hogs(16, 8, eval)), [2, 2, 2, 2, 1, 1, 1, 1]);
/// ```
pub fn share_teams(processors: usize, scenario: &Scenario) -> Vec<usize> {
    let k = scenario.jobs.len().max(1);
    let free = processors.saturating_sub(scenario.hogs);
    scenario
        .jobs
        .iter()
        .enumerate()
        .map(|(j, spec)| {
            let share = free / k + usize::from(j < free % k);
            share.clamp(1, spec.max_threads.max(1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asat_sim::JobSpec;

    const EVAL: Duration = Duration::from_millis(200);

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn with_work(sc: Scenario, work: f64) -> Scenario {
        sc.with_work(secs(work), EVAL * 1000)
    }

    #[test]
    fn jobs_together_share_the_machine_with_no_loss() {
        // 4 jobs of 64 CPU-seconds on 64 CPUs: 4 s, whatever the order
        let sc = with_work(Scenario::together(64, 4, EVAL), 64.0);
        assert_eq!(ideal_makespan(64, &sc), Some(secs(4.0)));
    }

    #[test]
    fn a_late_arrival_after_the_machine_emptied_starts_from_its_arrival() {
        // staggered: arrivals every 5 evaluations (1 s); jobs of 16 CPU-seconds on 16 CPUs
        // take 1 s alone, so each ends before the next arrives: the last at 1 + 1 s
        let sc = with_work(Scenario::staggered(16, 2, EVAL), 16.0);
        assert_eq!(ideal_makespan(16, &sc), Some(secs(2.0)));
        // jobs of 32 CPU-seconds (2 s alone): the second waits for the first's second half
        let sc = with_work(Scenario::staggered(16, 2, EVAL), 32.0);
        assert_eq!(ideal_makespan(16, &sc), Some(secs(4.0)));
    }

    #[test]
    fn hogs_keep_their_cpus() {
        // 16 CPUs, 4 hogs: 12 free; 2 jobs of 12 CPU-seconds take 2 s
        let sc = with_work(Scenario::hogs(16, 2, EVAL), 12.0);
        assert_eq!(sc.hogs, 4);
        assert_eq!(ideal_makespan(16, &sc), Some(secs(2.0)));
        let mut all = sc.clone();
        all.hogs = 16;
        assert_eq!(ideal_makespan(16, &all), None, "no CPU left to the jobs");
    }

    #[test]
    fn a_narrow_job_is_bounded_by_its_own_width() {
        // one job of 4 threads on 16 CPUs with 8 CPU-seconds: 2 s, not 0.5 s
        let mut sc = with_work(Scenario::together(16, 1, EVAL), 8.0);
        sc.jobs[0].max_threads = 4;
        assert_eq!(ideal_makespan(16, &sc), Some(secs(2.0)));
    }

    #[test]
    fn shares_split_the_free_cpus_within_each_job_s_width() {
        assert_eq!(share_teams(16, &Scenario::together(16, 1, EVAL)), [16]);
        assert_eq!(share_teams(16, &Scenario::together(16, 3, EVAL)), [6, 5, 5]);
        // more jobs than free CPUs: a thread each
        assert_eq!(share_teams(16, &Scenario::hogs(16, 16, EVAL)), [1; 16]);
        let mut narrow = Scenario::together(16, 2, EVAL);
        narrow.jobs[0].max_threads = 4;
        assert_eq!(share_teams(16, &narrow), [4, 8]);
    }

    #[test]
    fn no_work_no_bound() {
        let mut sc = Scenario::together(16, 2, EVAL);
        assert_eq!(ideal_makespan(16, &sc), None);
        sc.jobs.push(JobSpec::new(16, Duration::ZERO, EVAL));
        assert_eq!(ideal_makespan(16, &sc), None);
    }
}
