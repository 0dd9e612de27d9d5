//! What the bulk-synchronous experiments share (`implicit_bsp`: threads of processes under
//! asat-implicit's waiting strategies; `mpi_bsp`: MPI ranks under asat-mpi's): the grid of
//! cells they run (pattern, grain, imbalance, strategy), what a job reports and how its
//! `RESULT` line reads, the rows of their tables (the median over the repetitions of the jobs'
//! mean completion time, and its ratio to the best strategy of the cell), their CSV, table and
//! plot ([`report`]), their command lines ([`cli`]) and the calibrated computation of a phase
//! ([`work`]).
//!
//! A job's process reports one line `RESULT key=value ...` on its standard output; the keys
//! every job gives are `wall_s`, `blocks` and `spin_successes` ([`JobResult::from_fields`]);
//! a harness may add its own ([`result_fields`]).

pub mod cli;
pub mod report;
pub mod work;

pub use cli::{Axes, GridArgs, JobArgs};

use asat_peers::stats::median;

/// The communication patterns of both experiments: `barrier` (a barrier only), `news` (an
/// exchange with the grid neighbours), `transpose` (every thread or rank with every other).
pub const PATTERNS: [&str; 3] = ["barrier", "news", "transpose"];

/// One run's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// One of [`PATTERNS`].
    pub pattern: String,
    /// The grain as named on the command line (`fine`, `medium`, `coarse` or microseconds).
    pub grain_label: String,
    /// The mean computation of a phase, `g`.
    pub grain_ns: u64,
    /// The imbalance as named on the command line (`low`, `high` or a factor).
    pub imbalance_label: String,
    /// The spread of a phase's computation, `v`.
    pub imbalance_ns: u64,
    /// How the job waits (the harness's names).
    pub strategy: String,
}

/// The cells of one pattern, grain (label, ns) and imbalance (label, factor of the grain):
/// one per strategy, in the order of `strategies`.
pub fn cells(
    pattern: &str,
    (grain_label, grain_ns): &(String, u64),
    (imbalance_label, factor): &(String, f64),
    strategies: &[String],
) -> Vec<Cell> {
    strategies
        .iter()
        .map(|strategy| Cell {
            pattern: pattern.to_owned(),
            grain_label: grain_label.clone(),
            grain_ns: *grain_ns,
            imbalance_label: imbalance_label.clone(),
            imbalance_ns: (*grain_ns as f64 * factor) as u64,
            strategy: strategy.clone(),
        })
        .collect()
}

/// The strategy (an index into the cell's strategies) run `k`-th in repetition `rep` of a
/// cell of `n`: their order rotated left by `rep`, so that every strategy takes every position
/// once in `n` repetitions and none always runs first (or after the same one).
pub fn rotated(k: usize, rep: usize, n: usize) -> usize {
    (k + rep) % n
}

/// What one job reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobResult {
    /// Its completion time, seconds (the timeout when it timed out).
    pub wall_s: f64,
    /// Times its threads or ranks blocked while waiting.
    pub blocks: u64,
    /// Waits that ended while spinning.
    pub spin_successes: u64,
    /// Killed or aborted at the timeout: `wall_s` is a lower bound.
    pub timed_out: bool,
}

impl JobResult {
    /// A job counted at the `timeout` it did not finish within.
    pub fn timed_out(timeout: f64) -> Self {
        Self {
            wall_s: timeout,
            timed_out: true,
            ..Self::default()
        }
    }

    /// The job's result from the fields of its `RESULT` line ([`result_fields`]): `wall_s`,
    /// `blocks` and `spin_successes` (missing ones 0, other keys ignored); `None` when one of
    /// them is not a number.
    pub fn from_fields(fields: &[(&str, &str)]) -> Option<Self> {
        let mut r = Self::default();
        for &(k, v) in fields {
            match k {
                "wall_s" => r.wall_s = v.parse().ok()?,
                "blocks" => r.blocks = v.parse().ok()?,
                "spin_successes" => r.spin_successes = v.parse().ok()?,
                _ => {}
            }
        }
        Some(r)
    }

    /// The job's `RESULT` line among `lines`, read ([`result_fields`], [`from_fields`]).
    ///
    /// [`from_fields`]: JobResult::from_fields
    pub fn parse(lines: &[String]) -> Option<Self> {
        Self::from_fields(&result_fields(lines)?)
    }
}

/// The `key=value` fields of the first line of `lines` that starts with `RESULT ` (leading
/// blanks allowed); `None` without such a line or when a field has no `=`.
pub fn result_fields(lines: &[String]) -> Option<Vec<(&str, &str)>> {
    let rest = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("RESULT "))?;
    rest.split_whitespace()
        .map(|kv| kv.split_once('='))
        .collect()
}

/// One row of the table: a strategy in a cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The cell.
    pub cell: Cell,
    /// The median over the repetitions of the jobs' mean completion time, seconds.
    pub completion_s: f64,
    /// `completion_s` over the best strategy's of the same cell.
    pub slowdown: f64,
    /// A job of some repetition timed out: `completion_s` may be a lower bound.
    pub timed_out: bool,
    /// Blocks per run (summed over the jobs, averaged over the repetitions, rounded).
    pub blocks: u64,
    /// Successful spins per run, likewise.
    pub spin_successes: u64,
}

/// One cell's row per strategy from its runs (`runs[s][rep]`: every job's result of
/// repetition `rep` of `cells[s]`): the median over the repetitions of the jobs' mean
/// completion time, and its ratio to the best of the cell.
pub fn cell_rows(cells: Vec<Cell>, runs: Vec<Vec<Vec<JobResult>>>) -> Vec<Row> {
    let mut rows: Vec<Row> = cells
        .into_iter()
        .zip(runs)
        .map(|(cell, reps)| {
            let means: Vec<f64> = reps
                .iter()
                .map(|jobs| jobs.iter().map(|j| j.wall_s).sum::<f64>() / jobs.len() as f64)
                .collect();
            let n = reps.len();
            let all = reps.iter().flatten();
            Row {
                completion_s: median(means),
                slowdown: 1.0,
                timed_out: all.clone().any(|j| j.timed_out),
                blocks: per_rep(all.clone().map(|j| j.blocks).sum(), n),
                spin_successes: per_rep(all.map(|j| j.spin_successes).sum(), n),
                cell,
            }
        })
        .collect();
    let best = rows
        .iter()
        .map(|r| r.completion_s)
        .fold(f64::INFINITY, f64::min);
    for r in &mut rows {
        r.slowdown = r.completion_s / best;
    }
    rows
}

/// A total over `reps` repetitions as a per-run figure (rounded to nearest).
fn per_rep(total: u64, reps: usize) -> u64 {
    let reps = reps.max(1) as u64;
    (total + reps / 2) / reps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(wall_s: f64) -> JobResult {
        JobResult {
            wall_s,
            blocks: 3,
            ..JobResult::default()
        }
    }

    #[test]
    fn rows_are_medians_of_job_means_against_the_best() {
        let cells = cells(
            "barrier",
            &("fine".into(), 1_000),
            &("low".into(), 0.25),
            &["global".into(), "mpi".into()],
        );
        assert_eq!(cells[1].imbalance_ns, 250);
        let runs = vec![
            // global: job means 1, 2, 9: median 2
            vec![
                vec![job(1.0), job(1.0)],
                vec![job(1.0), job(3.0)],
                vec![job(9.0), JobResult::timed_out(9.0)],
            ],
            // mpi: job means 4, 5, 6: median 5
            vec![vec![job(4.0)], vec![job(5.0)], vec![job(6.0)]],
        ];
        let rows = cell_rows(cells, runs);
        assert_eq!(rows[0].completion_s, 2.0);
        assert_eq!(rows[1].slowdown, 2.5);
        assert!(rows[0].timed_out && !rows[1].timed_out);
        // 5 jobs of 3 blocks over 3 repetitions: 5 per run; 3 jobs of 3: 3 per run
        assert_eq!((rows[0].blocks, rows[1].blocks), (5, 3));
    }

    #[test]
    fn the_order_rotates_by_one_per_repetition() {
        let order = |rep| (0..3).map(|k| rotated(k, rep, 3)).collect::<Vec<_>>();
        assert_eq!(order(0), [0, 1, 2]);
        assert_eq!(order(1), [1, 2, 0]);
        assert_eq!(order(2), [2, 0, 1]);
        assert_eq!(order(3), order(0));
        assert_eq!(per_rep(7, 2), 4);
        assert_eq!(per_rep(7, 0), 7);
    }

    #[test]
    fn result_lines() {
        let lines = vec![
            "noise".to_owned(),
            "RESULT wall_s=0.25 blocks=7 spin_successes=3 domain_switches=2".to_owned(),
        ];
        let r = JobResult::parse(&lines).unwrap();
        assert_eq!((r.wall_s, r.blocks, r.spin_successes), (0.25, 7, 3));
        assert!(result_fields(&lines)
            .unwrap()
            .contains(&("domain_switches", "2")));
        assert_eq!(JobResult::parse(&["RESULT wall_s=x".to_owned()]), None);
        assert_eq!(JobResult::parse(&["RESULT wall_s".to_owned()]), None);
        assert_eq!(JobResult::parse(&["READY".to_owned()]), None);
    }
}
