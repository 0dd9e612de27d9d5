//! The scenarios of the simulator: which jobs arrive when, how fine their regions are, when
//! they leave, beside how many CPU hogs, and over which span the figures are taken.

use std::time::Duration;

/// A job: its `max_threads`, when it arrives and when it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobSpec {
    /// The runtime's `max_threads`.
    pub max_threads: usize,
    /// Arrival.
    pub arrive: Duration,
    /// Departure (at its first region start after this).
    pub depart: Duration,
    /// CPU time of a region per member at `max_threads` (`None`: the model's
    /// [`region_work`](super::Config::region_work)).
    pub grain: Option<Duration>,
    /// The job's work, in CPU time: it also leaves at its first region start once its
    /// completed regions add up to this (`None`: no limit).
    pub work: Option<Duration>,
}

impl JobSpec {
    /// A job of `max_threads` threads from `arrive` to `depart`, of the model's grain and
    /// without a work limit.
    pub fn new(max_threads: usize, arrive: Duration, depart: Duration) -> Self {
        JobSpec {
            max_threads,
            arrive,
            depart,
            grain: None,
            work: None,
        }
    }
}

/// Jobs and hogs on the machine, and the span the figures are taken over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// The ASAT jobs.
    pub jobs: Vec<JobSpec>,
    /// Single-threaded CPU hogs, running from the start to the end.
    pub hogs: usize,
    /// When the run ends.
    pub end: Duration,
    /// From when every job is present: the settling is counted from here...
    pub settle_from: Duration,
    /// ...to here (the first departure, or the end).
    pub settle_until: Duration,
    /// When the jobs that leave early have left (scenarios with departures): the jobs left
    /// regain the machine from here.
    pub regain_from: Option<Duration>,
}

/// The scenarios [`Scenario::named`] knows, in the order the `asat_sim` program runs them.
pub const SCENARIOS: [&str; 5] = ["together", "staggered", "departure", "grain", "hogs"];

/// Evaluations each phase of a scenario lasts.
const PHASE_EVALS: u32 = 30;
/// Evaluations between two arrivals of the staggered scenario.
const STAGGER_EVALS: u32 = 5;
/// Evaluations the jobs left run after a departure.
const REGAIN_EVALS: u32 = 15;
/// The grains of the `grain` scenario's jobs, in turn, as multiples of the model's.
const GRAINS: [f64; 3] = [0.1, 1.0, 10.0];

impl Scenario {
    /// `jobs` jobs of `processors` threads start together and run for 30 evaluations.
    pub fn together(processors: usize, jobs: usize, eval: Duration) -> Self {
        let end = eval * PHASE_EVALS;
        Scenario {
            jobs: vec![JobSpec::new(processors, Duration::ZERO, end); jobs],
            hogs: 0,
            end,
            settle_from: Duration::ZERO,
            settle_until: end,
            regain_from: None,
        }
    }

    /// As [`together`](Self::together), beside `max(1, processors / 4)` CPU hogs.
    pub fn hogs(processors: usize, jobs: usize, eval: Duration) -> Self {
        Scenario {
            hogs: (processors / 4).max(1),
            ..Self::together(processors, jobs, eval)
        }
    }

    /// Jobs arrive one every 5 evaluations; 30 evaluations after the last arrived, all but
    /// the last leave, and the last runs alone for 15 more.
    pub fn staggered(processors: usize, jobs: usize, eval: Duration) -> Self {
        let last = eval * STAGGER_EVALS * (jobs.max(1) as u32 - 1);
        let leave = last + eval * PHASE_EVALS;
        let end = leave + eval * REGAIN_EVALS;
        let jobs_v = (0..jobs)
            .map(|j| {
                let arrive = eval * STAGGER_EVALS * j as u32;
                JobSpec::new(processors, arrive, if j + 1 == jobs { end } else { leave })
            })
            .collect();
        Scenario {
            jobs: jobs_v,
            hogs: 0,
            end,
            settle_from: last,
            settle_until: leave,
            regain_from: (jobs > 1).then_some(leave),
        }
    }

    /// As [`together`](Self::together); after 30 evaluations the first job leaves and the
    /// others run for 15 more (with one job, nobody leaves).
    pub fn departure(processors: usize, jobs: usize, eval: Duration) -> Self {
        let leave = eval * PHASE_EVALS;
        let end = leave + eval * REGAIN_EVALS;
        let mut sc = Self::together(processors, jobs, eval);
        for (j, spec) in sc.jobs.iter_mut().enumerate() {
            spec.depart = if j == 0 && jobs > 1 { leave } else { end };
        }
        sc.end = end;
        sc.settle_until = leave;
        sc.regain_from = (jobs > 1).then_some(leave);
        sc
    }

    /// As [`together`](Self::together), the jobs' grains in turn a tenth of the model's,
    /// the model's and ten times it (50 us, 500 us, 5 ms of CPU time per member at
    /// `max_threads` by default).
    pub fn grain(processors: usize, jobs: usize, eval: Duration, region_work: Duration) -> Self {
        let mut sc = Self::together(processors, jobs, eval);
        for (j, spec) in sc.jobs.iter_mut().enumerate() {
            spec.grain = Some(region_work.mul_f64(GRAINS[j % GRAINS.len()]));
        }
        sc
    }

    /// The scenario named `name` (one of [`SCENARIOS`]); `region_work` is the model's grain.
    pub fn named(
        name: &str,
        processors: usize,
        jobs: usize,
        eval: Duration,
        region_work: Duration,
    ) -> Option<Self> {
        match name {
            "together" => Some(Self::together(processors, jobs, eval)),
            "staggered" => Some(Self::staggered(processors, jobs, eval)),
            "departure" => Some(Self::departure(processors, jobs, eval)),
            "grain" => Some(Self::grain(processors, jobs, eval, region_work)),
            "hogs" => Some(Self::hogs(processors, jobs, eval)),
            _ => None,
        }
    }

    /// The same arrivals, grains and hogs, every job with `work` of CPU time to do and
    /// leaving when it is done (not at its scripted departure); the run ends when the last
    /// job has left, or at `limit`. [`makespan`](super::makespan) runs it.
    pub fn with_work(&self, work: Duration, limit: Duration) -> Self {
        let mut sc = self.clone();
        for spec in &mut sc.jobs {
            spec.work = Some(work);
            spec.depart = limit;
        }
        sc.end = limit;
        sc.settle_until = limit;
        sc.regain_from = None;
        sc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVAL: Duration = Duration::from_millis(200);

    #[test]
    fn a_departure_leaves_the_others_to_regain_the_machine() {
        let sc = Scenario::departure(64, 4, EVAL);
        assert_eq!(sc.jobs[0].depart, EVAL * 30);
        assert!(sc.jobs[1..].iter().all(|j| j.depart == EVAL * 45));
        assert_eq!(
            (sc.settle_until, sc.regain_from),
            (EVAL * 30, Some(EVAL * 30))
        );
        assert_eq!(Scenario::departure(64, 1, EVAL).regain_from, None);
    }

    #[test]
    fn grains_take_turns_and_work_replaces_departures() {
        let work = Duration::from_micros(500);
        let sc = Scenario::grain(16, 4, EVAL, work);
        let grains: Vec<_> = sc.jobs.iter().map(|j| j.grain.unwrap()).collect();
        assert_eq!(
            grains,
            [50, 500, 5000, 50].map(Duration::from_micros).to_vec()
        );
        let w = Scenario::staggered(16, 3, EVAL).with_work(EVAL * 40, EVAL * 1000);
        assert!(w.jobs.iter().all(|j| j.work == Some(EVAL * 40)));
        assert!(w.jobs.iter().all(|j| j.depart == EVAL * 1000));
        assert_eq!(w.jobs[2].arrive, EVAL * 10, "arrivals kept");
        assert!(SCENARIOS
            .iter()
            .all(|n| Scenario::named(n, 16, 2, EVAL, work).is_some()));
        assert_eq!(Scenario::named("x", 16, 2, EVAL, work), None);
    }
}
