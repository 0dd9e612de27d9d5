//! Bulk-synchronous MPI jobs sharing a machine, under each way of waiting for MPI: the
//! implicit-coscheduling paper's Figure 13 (the lab's `implicit_bsp`) with the ranks of MPI
//! jobs in place of threads.
//!
//! ```text
//! cargo run --release -p asat-lab --features mpi --bin mpi_bsp -- \
//!     --patterns barrier,news,transpose --grains-us fine,medium,coarse --imbalance low,high \
//!     --strategies block,spin,fixed,local,global,mpi,mpi-yield --jobs 3 --out out/mpi_bsp
//! ```
//!
//! Each run starts `--jobs` MPI jobs at once (3 by default), each a separate `mpirun -np R
//! --bind-to none --oversubscribe` with one rank per CPU (`R`: the CPUs this process may use,
//! or `--ranks`), so the machine has `jobs` ranks per CPU, as Figure 13 has one process per
//! processor per job. Every phase, each rank computes for a time drawn from
//! `U(g - v/2, g + v/2)` (calibrated busy work: a rank that is off its CPU does not
//! progress), then communicates, then passes a barrier:
//!
//! - `barrier`: the barrier only;
//! - `news`: a halo exchange with its grid neighbours (north, east, south, west on the most
//!   square torus of the ranks, duplicates and itself dropped, as `implicit_bsp` defines
//!   them): a non-blocking receive from and send to each (`MPI_Irecv`, `MPI_Isend`), one wait
//!   for all of them, then the barrier;
//! - `transpose`: an all-to-all of one word per pair of ranks (`MPI_Ialltoall`, waited for as
//!   one request), then the barrier.
//!
//! Every word received is checked. With 2 or 3 ranks per job, `news` and `transpose` exchange
//! with the same ranks (every other one), `news` by point-to-point messages and `transpose`
//! by the collective. `implicit_bsp`'s `c` of work after each read is not modelled: a message
//! costs more than it here.
//!
//! Strategies: `block`, `spin`, `fixed` (`2 cs`), `local` and `global` wait with asat-mpi's
//! [`Waiter`](asat::mpi::Waiter) (spin by testing, then sleep between tests), named and
//! calibrated as in `implicit_bsp`; `mpi` is Open MPI's own waits (`MPI_Waitall`, `MPI_Wait`,
//! `MPI_Barrier`) with its default settings, which poll until done and never give the CPU
//! away (with no more ranks than CPUs per job); `mpi-yield` is the same waits with
//! `--mca mpi_yield_when_idle 1`, which calls `sched_yield` between polls. Granularities
//! `fine`, `medium`, `coarse` are `0.5`, `5` and `250` context switches (asat-implicit's
//! calibration, printed), or microseconds; imbalance `low` is `v = 0.25 g`, `high` is
//! `v = 1.5 g`, or a factor.
//!
//! Each cell (pattern, grain, imbalance) runs `--reps` repetitions (default 3) of every
//! strategy, repetitions outside, the strategy order rotating by one from each repetition to
//! the next. A job that is not done `--timeout` seconds after its start aborts itself (its
//! ranks check the clock every phase) and is counted at the timeout, a lower bound. A job's
//! completion time is its rank 0's, from the common start through a closing barrier that
//! each strategy waits for its own way.
//!
//! Writes `DIR/mpi_bsp.csv` (`pattern,grain_us,imbalance,strategy,completion_s,
//! slowdown_vs_best`: the median over the repetitions of the jobs' mean completion time, and
//! its ratio to the best strategy of the cell, `implicit_bsp`'s columns) and
//! `DIR/mpi_bsp.svg`. The table's blocks and successful spins are per run, summed over the
//! ranks of all jobs; with `mpi` and `local` or `global` in the list, each cell ends with its
//! target line (the better adaptive strategy against `mpi` and against the best).
//! Needs Open MPI's `mpirun`; as root, set `OMPI_ALLOW_RUN_AS_ROOT=1
//! OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`.

mod jobs;
mod rank;
mod report;

use std::path::PathBuf;

use asat::implicit::calibration;
use asat_lab::bsp::cli::work_secs;
use asat_lab::bsp::report::{self as bsp_report, Layout};
use asat_lab::bsp::work::units_per_us;
use asat_lab::bsp::{cell_rows, cells, rotated, GridArgs, JobArgs, JobResult};
use asat_lab::files;
use asat_peers::cli::{dedup_in_order, seconds_up_to_a_day};
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;

use jobs::{run_jobs, Setup};
use report::target_line;

#[derive(Parser, Debug)]
#[command(about = "Bulk-synchronous MPI jobs sharing a machine, under each way of waiting for MPI")]
struct Args {
    #[command(flatten)]
    grid: GridArgs,
    /// Strategies: block, spin, fixed, local, global (asat-mpi), mpi (Open MPI's own waits,
    /// default settings), mpi-yield (the same with mpi_yield_when_idle).
    #[arg(long, value_delimiter = ',',
          default_value = "block,spin,fixed,local,global,mpi,mpi-yield",
          value_parser = PossibleValuesParser::new(STRATEGIES))]
    strategies: Vec<String>,
    /// MPI jobs run at once (1 ..= 16), each a separate mpirun.
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=16))]
    jobs: usize,
    /// Ranks per job, 1 ..= 256 (default: the CPUs this process may use).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=256))]
    ranks: Option<usize>,
    /// Computation per rank, in seconds of a dedicated CPU (sets the phase count; above 0, at
    /// most 600).
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true, value_parser = work_secs)]
    work_s: f64,
    /// Repetitions of each run (1 ..= 1000); the median completion time is reported.
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    reps: usize,
    /// Seconds after its start at which a job aborts itself (counted at this time).
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true, value_parser = seconds_up_to_a_day)]
    timeout: f64,
    /// Output folder.
    #[arg(long, default_value = "out/mpi_bsp")]
    out: PathBuf,
    /// Internal: run as one rank of a job.
    #[arg(long, hide = true)]
    worker: bool,
    #[command(flatten)]
    job: JobArgs,
}

const STRATEGIES: [&str; 7] = [
    "block",
    "spin",
    "fixed",
    "local",
    "global",
    "mpi",
    "mpi-yield",
];

fn main() {
    let mut args = Args::parse();
    let r = if args.worker {
        rank::worker(&args)
    } else {
        args.grid.dedup();
        dedup_in_order(&mut args.strategies);
        run(&args)
    };
    if let Err(e) = r {
        eprintln!("mpi_bsp: {e}");
        std::process::exit(2);
    }
}

fn run(args: &Args) -> Result<(), String> {
    let cal = calibration();
    let ranks = args
        .ranks
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let setup = Setup {
        ranks,
        cs: cal.context_switch,
        units_per_us: units_per_us(),
    };
    let axes = args.grid.axes(setup.cs)?;
    println!(
        "mpi_bsp: {} jobs x {ranks} ranks, context switch {:.1} us, {:.0} work units/us, \
         {} s of work per rank, {} repetitions",
        args.jobs,
        setup.cs.as_nanos() as f64 / 1e3,
        setup.units_per_us,
        args.work_s,
        args.reps
    );
    if ranks <= 3
        && ["news", "transpose"]
            .iter()
            .all(|p| args.grid.patterns.iter().any(|q| q == p))
    {
        println!(
            "note: with {ranks} ranks per job, news and transpose exchange with the same ranks \
             (point-to-point messages against one all-to-all)"
        );
    }
    files::create_dir(&args.out)?;
    println!("{}", bsp_report::header());
    let mut rows = Vec::new();
    for pattern in &args.grid.patterns {
        for grain @ (_, g) in &axes.grains {
            for imbalance in &axes.imbalances {
                let phases = ((args.work_s * 1e9 / *g as f64).round() as u64).max(1);
                let cells = cells(pattern, grain, imbalance, &args.strategies);
                let n = cells.len();
                let mut runs: Vec<Vec<Vec<JobResult>>> = vec![Vec::new(); n];
                for rep in 0..args.reps {
                    for k in 0..n {
                        let i = rotated(k, rep, n);
                        runs[i].push(run_jobs(args, &setup, &cells[i], phases)?);
                    }
                }
                let done = cell_rows(cells, runs);
                for r in &done {
                    println!("{}", bsp_report::line(r));
                }
                if let Some(t) = target_line(&done) {
                    println!("{t}");
                }
                rows.extend(done);
            }
        }
    }
    let layout = Layout {
        patterns: &args.grid.patterns,
        axes: &axes,
        strategies: &args.strategies,
    };
    bsp_report::write(&args.out, "mpi_bsp", layout, &rows)?;
    println!(
        "wrote {0}/mpi_bsp.csv and {0}/mpi_bsp.svg",
        args.out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use asat_lab::bsp::PATTERNS;
    use asat_peers::cli;
    use std::time::Duration;

    #[test]
    fn defaults_are_three_jobs_every_pattern_and_strategy() {
        let a = Args::try_parse_from(["mpi_bsp"]).unwrap();
        assert_eq!(a.jobs, 3);
        assert_eq!(a.grid.patterns, PATTERNS);
        assert_eq!(a.strategies, STRATEGIES);
    }

    #[test]
    fn bad_arguments_are_refused() {
        for bad in [
            &["--patterns", "ring"][..],
            &["--strategies", "yield"],
            &["--jobs", "0"],
            &["--jobs", "17"],
            &["--work-s", "0"],
        ] {
            let argv = std::iter::once("mpi_bsp").chain(bad.iter().copied());
            assert!(Args::try_parse_from(argv).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn grains_and_imbalances() {
        let cs = Duration::from_micros(30);
        assert_eq!(cli::parse_grain("fine", cs).unwrap().1, 15_000);
        assert_eq!(cli::parse_grain("coarse", cs).unwrap().1, 7_500_000);
        assert_eq!(cli::parse_grain("40", cs).unwrap().1, 40_000);
        assert!(cli::parse_grain("0.5", cs).is_err() && cli::parse_grain("x", cs).is_err());
        assert_eq!(cli::parse_imbalance("high").unwrap().1, 1.5);
        assert!(cli::parse_imbalance("3").is_err());
    }

    #[test]
    fn rows_are_medians_of_job_means_against_the_best() {
        let strategies = ["global".to_string(), "mpi".to_string()];
        let cells = cells(
            "barrier",
            &("fine".into(), 1),
            &("low".into(), 0.0),
            &strategies,
        );
        let job = |w: f64| JobResult {
            wall_s: w,
            ..JobResult::default()
        };
        let runs = vec![
            // global: job means 1, 2, 9: median 2
            vec![
                vec![job(1.0), job(1.0)],
                vec![job(1.0), job(3.0)],
                vec![job(9.0), job(9.0)],
            ],
            // mpi: job means 4, 5, 6: median 5
            vec![vec![job(4.0)], vec![job(5.0)], vec![job(6.0)]],
        ];
        let rows = cell_rows(cells, runs);
        assert_eq!(rows[0].completion_s, 2.0);
        assert_eq!(rows[1].slowdown, 2.5);
        let t = target_line(&rows).unwrap();
        assert!(t.contains("global is 2.50x faster than mpi"), "{t}");
        assert!(t.contains("1.000x the best"), "{t}");
    }
}
