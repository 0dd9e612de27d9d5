//! The implicit-coscheduling paper's Figure 13 on this machine: bulk-synchronous jobs, several
//! at once as separate processes, under each waiting strategy.
//!
//! ```text
//! cargo run --release -p asat-lab --bin implicit_bsp -- --patterns barrier,news,transpose \
//!     --grains-us fine,medium,coarse --imbalance low,high \
//!     --strategies block,spin,fixed,local,global,std,gang,gang-procs --jobs 3 --out out/implicit
//! ```
//!
//! Each job has one thread per CPU. Every phase, each thread computes for a time drawn from
//! `U(g - v/2, g + v/2)` (calibrated busy work, not a clock: a descheduled thread does not
//! progress), then communicates:
//!
//! - `barrier`: one barrier;
//! - `news`: a barrier, then one read from each grid neighbour (north, east, south, west on a
//!   torus of the threads; duplicates and self dropped), each followed by `c` of computation,
//!   then a closing barrier;
//! - `transpose`: a barrier, then `P - 1` reads, the `i`-th from thread `(p + i) mod P`, each
//!   followed by `c`, then a closing barrier.
//!
//! A read waits on the partner's [`Flag`](asat::implicit::Flag) until the partner has published the
//! same step: it completes only once the partner is running. Strategies: `block`, `spin`, `fixed`
//! (`2 cs`), `local`, `global` (asat-implicit, barrier and reads), and `std` (`std::sync::Barrier`
//! for the barriers, reads blocking at once), and explicit coscheduling, the paper's baseline
//! (asat-gang; each job one gang, a runtime with the gang policy, barriers and reads busy-waiting),
//! two ways:
//!
//! - `gang`: the jobs are runtimes of this process, gangs of one `GangScheduler`;
//! - `gang-procs`: each job is a separate process, as for the other strategies, with a
//!   `GangScheduler` of its own that joins a shared gang domain (`shared_dir`: a folder made
//!   for the run under the temporary folder, mode 0700, removed at the end, so that only this
//!   run's jobs take part); one job's scheduler is elected and rotates the gangs, each job
//!   stops and resumes its own threads. Its progress lines add the elected job's mean and
//!   longest switch across processes (from the stop's announcement to the last job's
//!   acknowledgement).
//!
//! Both run the same loop on the same scheduler settings (20 ms quantum), so their difference
//! is the cost of coordinating the gangs across processes.
//!
//! Granularities `fine`, `medium`, `coarse` are `0.5`, `5` and `250` context switches (the
//! cost measured at start; printed): the paper's 100 µs, 1 ms and 50 ms with its 200 µs context
//! switch, scaled to this machine. Or numbers of microseconds. Imbalance `low` is `v = 0.25 g`,
//! `high` is `v = 1.5 g`, or a number (the factor). `c = cs / 25` (the paper: 8 µs with a
//! 200 µs context switch).
//!
//! Each cell (pattern, grain, imbalance) runs `--reps` repetitions (default 3) of every
//! strategy, repetitions outside: every strategy once, then every strategy again, so that all
//! strategies are measured in the same time windows of a noisy machine; the strategy order
//! rotates left by one from each repetition to the next (repetition `r` starts with the
//! `r`-th strategy of `--strategies`). With 2 (or 3) threads per job, `news` and `transpose`
//! make the same reads (each thread reads every other, in the same order): the same
//! experiment, noted at start.
//!
//! Writes `DIR/implicit.csv` (`pattern,grain_us,imbalance,strategy,completion_s,
//! slowdown_vs_best`: the median over the repetitions of the mean job completion time, and its
//! ratio to the best strategy of the same cell), `DIR/implicit_runs.csv` (every job of every
//! run, with its repetition) and `DIR/implicit.svg`. The printed table's blocks and successful
//! spins are per run (summed over the jobs, averaged over the repetitions).

mod job;
mod jobs;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use asat_lab::bsp::cli::work_secs;
use asat_lab::bsp::report::{self, Layout};
use asat_lab::bsp::work::units_per_us;
use asat_lab::bsp::{cell_rows, cells, rotated, GridArgs, JobArgs, JobResult, Row};
use asat_lab::files;
use asat_peers::cli::{dedup_in_order, seconds_up_to_a_day};
use asat_peers::procs::Relaunch;
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;

use job::{partners, worker};
use jobs::{domain_switch_note, run_jobs};

#[derive(Parser, Debug)]
#[command(
    about = "Bulk-synchronous jobs under implicit coscheduling strategies (Dusseau, Arpaci, Culler 1996, Figure 13)"
)]
struct Args {
    #[command(flatten)]
    grid: GridArgs,
    /// Strategies: block, spin, fixed, local, global, std, gang (explicit coscheduling, the
    /// jobs in one process), gang-procs (explicit coscheduling, each job a process, the
    /// gangs coordinated through a shared gang domain).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "block,spin,fixed,local,global,std,gang,gang-procs",
        value_parser = PossibleValuesParser::new(STRATEGIES)
    )]
    strategies: Vec<String>,
    /// Jobs run at once (1 ..= 64), each a separate process with one thread per CPU.
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=64))]
    jobs: usize,
    /// Threads per job, 1 ..= 1024 (default: the CPUs this process may use).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS as u64))]
    threads: Option<usize>,
    /// Computation per job and thread, in seconds of a dedicated CPU (sets the phase count;
    /// above 0, at most 600).
    #[arg(long, default_value_t = 0.25, allow_negative_numbers = true, value_parser = work_secs)]
    work_s: f64,
    /// Repetitions of each run (1 ..= 10000); the median completion time is reported. Within
    /// a cell the repetitions are the outer loop (every strategy once, then again), the
    /// strategy order rotating by one from each repetition to the next.
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    reps: usize,
    /// Seconds after which a run's jobs are killed (the run is marked timed out and counted at
    /// this time, a lower bound).
    #[arg(long, default_value_t = 12.0, allow_negative_numbers = true, value_parser = seconds_up_to_a_day)]
    timeout: f64,
    /// Leave the job threads unpinned (default: thread i of every job runs on the i-th CPU
    /// this process may use, the paper's one process per processor per job).
    #[arg(long)]
    no_pin: bool,
    /// Output folder.
    #[arg(long, default_value = "out/implicit")]
    out: PathBuf,
    /// Internal: run one job.
    #[arg(long, hide = true)]
    worker: bool,
    #[command(flatten)]
    job: JobArgs,
    /// Internal: the driver's release latency.
    #[arg(long, hide = true, requires = "worker", default_value_t = 500)]
    release_ns: u64,
    /// Internal: the folder of the shared gang domain (gang-procs).
    #[arg(long, hide = true, requires = "worker")]
    gang_dir: Option<PathBuf>,
}

/// The most threads per job.
const MAX_THREADS: usize = 1024;

/// The strategies this program knows. `gang` and `gang-procs` are explicit coscheduling
/// (asat-gang), the paper's baseline, with the jobs in one process or each in its own.
const STRATEGIES: [&str; 8] = [
    "block",
    "spin",
    "fixed",
    "local",
    "global",
    "std",
    "gang",
    "gang-procs",
];

fn main() {
    let mut args = Args::parse();
    if args.worker {
        if let Err(e) = worker(&args) {
            eprintln!("implicit_bsp worker: {e}");
            std::process::exit(2);
        }
        return;
    }
    args.grid.dedup();
    dedup_in_order(&mut args.strategies);
    if let Err(e) = run(&args) {
        eprintln!("implicit_bsp: {e}");
        std::process::exit(2);
    }
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

struct Setup {
    threads: usize,
    cs: Duration,
    release: Duration,
    units_per_us: f64,
    /// The folder of the run's shared gang domain (`gang-procs`).
    gang_dir: Option<PathBuf>,
    /// How the jobs are started (this program, in its worker mode).
    relaunch: Relaunch,
}

/// When `news` and `transpose` make the same reads with `p` threads per job (as with 2 or 3
/// threads: every thread reads every other, in the same order), they are the same experiment.
fn news_is_transpose(p: usize) -> bool {
    (0..p).all(|me| partners("news", me, p) == partners("transpose", me, p))
}

fn run(args: &Args) -> Result<(), String> {
    let threads = args.threads.unwrap_or_else(default_threads);
    if threads == 0 || threads > MAX_THREADS {
        return Err(format!(
            "{threads} threads per job (the CPUs this process may use): must be between 1 and \
             {MAX_THREADS}; set --threads"
        ));
    }
    let cal = asat::implicit::calibrate::try_calibration().map_err(|e| e.to_string())?;
    // gang-procs: the jobs' gang schedulers meet in a folder made for this run (removed when
    // `gang_dir` is dropped at the end), so that no other process takes part.
    let gang_dir = match args.strategies.iter().any(|s| s == "gang-procs") {
        true => Some(gang_domain_dir()?),
        false => None,
    };
    let setup = Setup {
        threads,
        cs: cal.context_switch,
        release: cal.release_latency,
        units_per_us: units_per_us(),
        gang_dir: gang_dir.as_ref().map(|d| d.path().to_path_buf()),
        relaunch: Relaunch::this_program()
            .map_err(|e| format!("cannot find this program to start the jobs: {e}"))?,
    };
    let axes = args.grid.axes(setup.cs)?;
    let (grains, imbalances) = (&axes.grains, &axes.imbalances);
    files::create_dir(&args.out)?;
    eprintln!(
        "context switch {:.1} us ({:?}), release latency {:.2} us: S = {:.1} us, V = {:.1} us, c = {:.2} us",
        setup.cs.as_secs_f64() * 1e6,
        cal.source,
        setup.release.as_secs_f64() * 1e6,
        2.0 * setup.cs.as_secs_f64() * 1e6,
        10.0 * setup.cs.as_secs_f64() * 1e6,
        setup.cs.as_secs_f64() * 1e6 / 25.0
    );
    eprintln!(
        "grains: {}; {} jobs x {threads} threads; {:.0} work units/us",
        grains
            .iter()
            .map(|(l, ns)| format!("{l} = {:.1} us", *ns as f64 / 1e3))
            .collect::<Vec<_>>()
            .join(", "),
        args.jobs,
        setup.units_per_us
    );
    let both = ["news", "transpose"]
        .iter()
        .all(|p| args.grid.patterns.iter().any(|q| q == p));
    if both && news_is_transpose(threads) {
        eprintln!(
            "note: with {threads} thread{} per job, news and transpose make the same reads{}: the \
             same experiment, their rows are replicates (their differences are run-to-run noise)",
            if threads == 1 { "" } else { "s" },
            if threads == 1 {
                " (none: both are the barrier pattern)".to_string()
            } else {
                let reads: Vec<String> = (1..threads)
                    .map(|i| format!("(p + {i}) mod {threads}"))
                    .collect();
                format!(" (thread p reads thread {})", reads.join(", then "))
            }
        );
    }
    let total = args.grid.patterns.len()
        * grains.len()
        * imbalances.len()
        * args.strategies.len()
        * args.reps;
    let mut done = 0;
    let overall = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    let mut runs_csv = String::from(
        "pattern,grain_us,imbalance,strategy,rep,job,wall_s,blocks,spin_successes,timed_out\n",
    );
    let n_strategies = args.strategies.len();
    for pattern in &args.grid.patterns {
        for grain @ (glabel, gns) in grains {
            let phases = ((args.work_s * 1e9 / *gns as f64).round() as u64).max(5);
            for imbalance @ (ilabel, _) in imbalances {
                let cells = cells(pattern, grain, imbalance, &args.strategies);
                // Per strategy (in the order of --strategies), per repetition: every job's
                // result.
                let mut runs: Vec<Vec<Vec<JobResult>>> = vec![Vec::new(); n_strategies];
                // Repetitions outside, strategies inside, so that every strategy's k-th run
                // falls in the same time window; the order rotates by one strategy per
                // repetition, so that no strategy always runs first (or after the same one).
                for rep in 0..args.reps {
                    for k in 0..n_strategies {
                        let si = rotated(k, rep, n_strategies);
                        let (cell, strategy) = (&cells[si], &args.strategies[si]);
                        done += 1;
                        let res = run_jobs(args, &setup, cell, phases)?;
                        let jobs: Vec<JobResult> = res.iter().map(|r| r.result.clone()).collect();
                        let mean = jobs.iter().map(|r| r.wall_s).sum::<f64>() / jobs.len() as f64;
                        let to = jobs.iter().any(|r| r.timed_out);
                        for (j, r) in jobs.iter().enumerate() {
                            runs_csv.push_str(&format!(
                                "{pattern},{:.1},{ilabel},{strategy},{rep},{j},{:.4},{},{},{}\n",
                                *gns as f64 / 1e3,
                                r.wall_s,
                                r.blocks,
                                r.spin_successes,
                                r.timed_out
                            ));
                        }
                        let rep_label = if args.reps > 1 {
                            format!(" rep {}/{}", rep + 1, args.reps)
                        } else {
                            String::new()
                        };
                        eprintln!(
                            "[{done:>3}/{total}] {pattern:<9} g={glabel:<6} v={ilabel:<4} {strategy:<10}{rep_label} {phases:>5} phases  mean job {mean:>7.3} s{}{}   ({:.0} s elapsed)",
                            if to { "  TIMED OUT" } else { "" },
                            domain_switch_note(&res),
                            overall.elapsed().as_secs_f64()
                        );
                        runs[si].push(jobs);
                    }
                }
                rows.extend(cell_rows(cells, runs));
            }
        }
    }
    files::write(&args.out.join("implicit_runs.csv"), runs_csv)?;
    println!("{}", report::header());
    for r in &rows {
        println!("{}", report::line(r));
    }
    let layout = Layout {
        patterns: &args.grid.patterns,
        axes: &axes,
        strategies: &args.strategies,
    };
    report::write(&args.out, "implicit", layout, &rows)?;
    eprintln!(
        "wrote {0}/implicit.csv, {0}/implicit_runs.csv and {0}/implicit.svg ({1:.0} s)",
        args.out.display(),
        overall.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A folder for the run's shared gang domain: under the temporary folder (`TMPDIR`), mode
/// 0700, a name no other run uses, an absolute path (as asat-gang requires).
fn gang_domain_dir() -> Result<tempfile::TempDir, String> {
    use std::os::unix::fs::PermissionsExt;
    let base = std::env::temp_dir();
    let fail = |e: std::io::Error| {
        format!(
            "cannot make a folder for the gang domain in {}: {e} (set TMPDIR to a folder you \
             may write to)",
            base.display()
        )
    };
    let abs = std::path::absolute(&base).map_err(fail)?;
    tempfile::Builder::new()
        .prefix("asat-implicit_bsp-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(abs)
        .map_err(fail)
}
