//! The figures of a simulated run, from its trace (the columns of `asat_sim.csv`).

use std::time::Duration;

use super::{Config, Scenario, TracePoint};

/// What a run shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Evaluation intervals from the moment every job is present until the sum of the team
    /// sizes stays within the band (`[C, C + k]`, `C` the CPUs the hogs leave: `P - hogs`)
    /// for the rest of that phase; `None` if it never does.
    pub settle_evals: Option<u32>,
    /// The mean sum of team sizes after settling (over every evaluation of any job).
    pub total_after: Option<f64>,
    /// The largest relative deviation of a job's mean team after settling from `C / k`.
    pub max_share_dev: Option<f64>,
    /// Mean absolute team change per evaluation after settling, over every job's evaluations
    /// after the one that brought the sum into the band (that move is the settling, not a
    /// move after it).
    pub moves_per_eval_after: Option<f64>,
    /// Evaluation intervals the jobs left need, after the others left, to hold `0.9 C`
    /// threads together (each counted at its first evaluation after the departures; `None`:
    /// never, or no departures in the scenario).
    pub regain_evals: Option<u32>,
    /// The jobs' useful CPU time (their completed regions' work) over the CPU time of the `C`
    /// CPUs the hogs leave, while every job is present: 1 when the jobs keep those CPUs busy
    /// with work, less for idle CPUs, spinning and waiting at barriers, and time slices that
    /// went to the hogs; above 1 when the jobs' threads outnumber the hogs enough to take
    /// part of the hogs' CPUs (the kernel shares per thread). `None` when a job has fewer than
    /// two evaluations then.
    pub efficiency: Option<f64>,
}

/// The team of each job at each evaluation of any job within `[from, until)`, as the sum.
fn sums(
    trace: &[TracePoint],
    jobs: usize,
    from: Duration,
    until: Duration,
) -> Vec<(Duration, usize, Vec<usize>)> {
    let mut team: Vec<Option<usize>> = vec![None; jobs];
    let mut out = Vec::new();
    for p in trace {
        team[p.job] = Some(p.team);
        if p.t >= from && p.t < until && team.iter().all(Option::is_some) {
            let v: Vec<usize> = team.iter().map(|t| t.unwrap_or(0)).collect();
            out.push((p.t, v.iter().sum(), v));
        }
    }
    out
}

/// Computes the [`Summary`] of a trace of `scenario`.
pub fn summarize(trace: &[TracePoint], scenario: &Scenario, cfg: &Config) -> Summary {
    let k = scenario.jobs.len();
    let p = cfg.processors;
    let cpus = p.saturating_sub(scenario.hogs).max(1);
    let (lo, hi) = (cpus, cpus + k);
    let eval = cfg.asat.eval_interval;
    let s = sums(trace, k, scenario.settle_from, scenario.settle_until);
    // The last point out of the band; settled from the next one on.
    let settled_at = match s.iter().rposition(|(_, sum, _)| !(lo..=hi).contains(sum)) {
        None => s.first().map(|x| x.0),
        Some(i) => s.get(i + 1).map(|x| x.0),
    };
    let mut out = Summary {
        settle_evals: None,
        total_after: None,
        max_share_dev: None,
        moves_per_eval_after: None,
        regain_evals: regain(trace, scenario, cfg, cpus),
        efficiency: efficiency(trace, scenario, cfg, cpus),
    };
    let Some(t0) = settled_at else {
        return out;
    };
    let since = t0.saturating_sub(scenario.settle_from);
    out.settle_evals = Some(since.as_nanos().div_ceil(eval.as_nanos().max(1)) as u32);
    let after: Vec<_> = s.iter().filter(|x| x.0 >= t0).collect();
    let n = after.len() as f64;
    out.total_after = Some(after.iter().map(|x| x.1 as f64).sum::<f64>() / n);
    let share = cpus as f64 / k as f64;
    out.max_share_dev = (0..k)
        .map(|j| {
            let mean = after.iter().map(|x| x.2[j] as f64).sum::<f64>() / n;
            (mean - share).abs() / share
        })
        .reduce(f64::max);
    let moves: Vec<f64> = trace
        .iter()
        .filter(|q| q.t > t0 && q.t < scenario.settle_until)
        .map(|q| q.team.abs_diff(q.before) as f64)
        .collect();
    out.moves_per_eval_after =
        (!moves.is_empty()).then(|| moves.iter().sum::<f64>() / moves.len() as f64);
    out
}

/// See [`Summary::efficiency`]: each job's completed regions between its first and its last
/// evaluation of the span, as a rate.
fn efficiency(trace: &[TracePoint], sc: &Scenario, cfg: &Config, cpus: usize) -> Option<f64> {
    let mut useful = 0.0;
    for (j, spec) in sc.jobs.iter().enumerate() {
        let mut span = trace
            .iter()
            .filter(|q| q.job == j && q.t >= sc.settle_from && q.t < sc.settle_until);
        let first = span.next()?;
        let last = span.next_back()?;
        let secs = last.t.saturating_sub(first.t).as_secs_f64();
        if secs <= 0.0 {
            return None;
        }
        let work = spec.grain.unwrap_or(cfg.region_work).as_secs_f64() * spec.max_threads as f64;
        useful += (last.regions - first.regions) as f64 * work / secs;
    }
    Some(useful / cpus as f64)
}

/// Evaluation intervals after the departures until the teams of the jobs left add up to
/// `0.9 C` (`C` the CPUs the hogs leave), counted at their evaluations.
fn regain(trace: &[TracePoint], scenario: &Scenario, cfg: &Config, cpus: usize) -> Option<u32> {
    let from = scenario.regain_from?;
    let left: Vec<usize> = (0..scenario.jobs.len())
        .filter(|&j| scenario.jobs[j].depart > from)
        .collect();
    let goal = (0.9 * cpus as f64).ceil() as usize;
    let mut team: Vec<Option<usize>> = vec![None; scenario.jobs.len()];
    let eval = cfg.asat.eval_interval.as_nanos().max(1);
    for q in trace.iter().filter(|q| q.t >= from) {
        team[q.job] = Some(q.team);
        let sum: usize = left.iter().filter_map(|&j| team[j]).sum();
        if left.iter().all(|&j| team[j].is_some()) && sum >= goal {
            return Some((q.t - from).as_nanos().div_ceil(eval).max(1) as u32);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::JobSpec;
    use super::*;
    use asat_core::adaptive::Rule;

    fn pt(job: usize, ms: u64, before: usize, team: usize) -> TracePoint {
        TracePoint {
            job,
            evaluation: 0,
            t: Duration::from_millis(ms),
            before,
            team,
            // 500 us regions of 8 members at 4 CPUs' worth of work each: 1 region per ms is
            // 4 CPUs kept busy
            regions: ms,
        }
    }

    #[test]
    fn figures_of_a_scripted_trace() {
        let cfg = Config::new(8, Rule::Asat, 0);
        let sc = Scenario {
            jobs: vec![
                JobSpec::new(8, Duration::ZERO, Duration::from_secs(1)),
                JobSpec::new(8, Duration::ZERO, Duration::from_secs(2)),
            ],
            hogs: 0,
            end: Duration::from_secs(2),
            settle_from: Duration::ZERO,
            settle_until: Duration::from_secs(1),
            regain_from: Some(Duration::from_secs(1)),
        };
        let trace = vec![
            pt(0, 0, 8, 8),
            pt(1, 1, 8, 8), // sum 16: out of [8, 10]
            pt(0, 200, 8, 4),
            pt(1, 201, 8, 5), // sum 9
            pt(0, 400, 4, 4),
            pt(1, 401, 5, 6), // sum 10
            pt(1, 1200, 6, 7),
            pt(1, 1400, 7, 8),
        ];
        let s = summarize(&trace, &sc, &cfg);
        assert_eq!(
            s.settle_evals,
            Some(2),
            "settled at 201 ms: the second interval"
        );
        // from 201 ms on, the teams are 4+5, 4+5, 4+6
        assert_eq!(s.total_after, Some((9.0 + 9.0 + 10.0) / 3.0));
        let j1 = (5.0 + 5.0 + 6.0) / 3.0;
        assert!(
            (s.max_share_dev.unwrap() - (j1 - 4.0) / 4.0).abs() < 1e-9,
            "{s:?}"
        );
        // the evaluations after the settling one (201 ms: 8 -> 5) moved 0 and 1
        assert_eq!(s.moves_per_eval_after, Some((0.0 + 1.0) / 2.0));
        assert_eq!(
            s.regain_evals,
            Some(2),
            "8 >= 0.9 * 8 at the second interval after the departure"
        );
        // each job: one region (8 x 500 us) per ms, 4 CPUs each, 8 CPUs in all
        assert!((s.efficiency.unwrap() - 1.0).abs() < 1e-9, "{s:?}");
    }
}
