//! The ASAT paper's experiment (section 6): copies of a fine-grain fork-join job run at once, as
//! separate processes, under each policy; mean job time against the number of copies.
//!
//! ```text
//! cargo run --release -p asat-lab --bin compare -- \
//!     --policies single,fixed,asat,rayon,rayon-main,gomp,gomp-dynamic \
//!     --grains 10000,100000 --copies 1,2,3,4 --out out/compare
//! ```
//!
//! Each job repeats a 1-D Jacobi sweep (`b[i] = (a[i-1] + a[i] + a[i+1]) / 3`, then swap) over
//! `grain` elements, one parallel loop per sweep, until it has done `--total` element updates.
//! Writes `DIR/compare.csv`, `DIR/compare.svg` and prints the table. `bash scripts/demo` runs
//! this program with the defaults and passes its arguments on, e.g.
//! `bash scripts/demo --policies fixed,gomp --copies 1,2 --grains 10000`.
//!
//! Policies: any that `ASAT_POLICY` names (`single`, `fixed`, `asat`, `pools`, `gang`, ...: asat's
//! registry) run on asat's runtime; rayon is run two ways, because its
//! cost depends on where a parallel loop is called from: `rayon` runs the whole sweep loop
//! inside `pool.install`, so each sweep is a `join` on a pool thread (rayon's best case, for a
//! program structured around it), and `rayon-main` calls each sweep's `par_chunks_mut` from the
//! main thread, as a program using the global pool from its own loop does; `gomp`,
//! `gomp-dynamic` and `gomp-passive` are C OpenMP through libgomp (below). asat is always
//! called from the program's own thread, which joins the team.
//!
//! Options: `--policies`, `--grains`, `--copies` (lists); `--total` (element updates per job;
//! default: what one thread does in about 2 s, measured per grain); `--reps` (repetitions of
//! each cell, median reported); `--timeout` (seconds after which a copy is killed and its row
//! marked timed out, default 15); `--threads` (threads per job, default: the CPUs this process
//! may use); `--hogs` (single-threaded CPU hog processes run alongside the copies); `--trace`
//! (ASAT's team size over time: `DIR/asat_trace.{csv,svg}`; with one copy and one hog,
//! `--policies fixed,asat --copies 1 --hogs 1 --trace` shows a job settling at one thread);
//! `--out` (default `out/compare`).
//!
//! Within a grain the cells run side by side: one copies count at a time, repetition by
//! repetition, the policies one after another. The policies compared at one copies count thus
//! ran minutes apart and after the same load (on a shared host a 2-thread job's speed moves by
//! 1.4x between minutes), and `--reps` spreads each cell's repetitions over the run. The order of
//! the policies rotates from one repetition to the next (repetition `r`, counted from 0, starts
//! with the policy at `r mod n` of `--policies` and goes on in list order), so no policy always
//! runs right after the same one; the order is the same in every run. Between the last cell of
//! one grain / copies group and the first cell of the next (or the next grain's calibration) the
//! program pauses 2 s, so a group's heavier load does not spill into the next group's first cell.
//!
//! The libgomp policies: every copy starts with no `OMP_*` or `GOMP_*` variable of the caller's
//! environment (`OMP_WAIT_POLICY`, `GOMP_SPINCOUNT`, `OMP_PROC_BIND`, `OMP_PLACES`,
//! `OMP_SCHEDULE`, ...), and the gomp policies set exactly `OMP_NUM_THREADS` (the threads per
//! job) and: `gomp` nothing else (libgomp's defaults: a waiting thread spins for a while before
//! it sleeps), `gomp-dynamic` `OMP_DYNAMIC=true`, `gomp-passive` `OMP_WAIT_POLICY=passive`
//! (a waiting thread sleeps at once). `gomp-passive` is not in the default `--policies`.
//! `ASAT_*` variables do pass through to every copy, to try ASAT's settings.
//!
//! Every copy reports a checksum of its result (the sum of its final buffer). Every policy runs
//! the same sweeps of the same element-wise kernel and the sum is taken by the same code, so
//! within one grain all copies that finished (a killed copy has none) must report bitwise the
//! same checksum; a difference is an error that names the policies and values.
//!
//! `compare.csv` has one row per policy, grain and copies count:
//!
//! - `mean_job_s`: the median over the repetitions of the cell of the mean job time of the
//!   repetition's copies (a killed copy counts as `--timeout`); with an even `--reps`, the mean
//!   of the two middle repetitions;
//! - `min_job_s`, `max_job_s`, `timed_out`: the fastest and slowest copy, and whether a copy was
//!   killed, in the median repetition (the one whose mean is `mean_job_s`; with an even
//!   `--reps`, the faster of the two middle ones); `median_rep`: which repetition that was
//!   (1 = the first run);
//! - `join_wait_pct` (asat's runtime only: the share of the team's thread time spent waiting at
//!   joins) and `cpu_s` (CPU seconds per copy): averaged over the copies of every repetition;
//! - `all_min_job_s`, `all_max_job_s`: the fastest and slowest copy over every repetition;
//!   `timed_out_reps`: in how many repetitions a copy was killed.

mod copies;
mod options;
mod report;
mod worker;

use std::time::{Duration, Instant};

use asat::MAX_THREADS_LIMIT;
use asat_lab::files;
use asat_peers::cli::dedup_in_order;
use asat_peers::stats::median;
use clap::Parser;

use copies::{check_not_bound, run_cell, CopyResult};
use options::{default_threads, Args};
use report::{plot, print_table, write_csv, write_trace, Row};
use worker::worker;

fn main() {
    let mut args = Args::parse();
    if args.worker {
        if let Err(e) = worker(&args) {
            eprintln!("compare worker: {e}");
            std::process::exit(2);
        }
        return;
    }
    if let Err(e) = check_not_bound() {
        eprintln!("compare: {e}");
        std::process::exit(2);
    }
    dedup_in_order(&mut args.policies);
    dedup_in_order(&mut args.grains);
    dedup_in_order(&mut args.copies);
    if let Err(e) = run(&args) {
        eprintln!("compare: {e}");
        std::process::exit(2);
    }
}

/// The pause between the last cell of one grain / copies group and the first of the next.
const GROUP_PAUSE: Duration = Duration::from_secs(2);

/// The repetition whose mean job time is the median (with an even count, the faster of the two
/// middle ones; ties go to the earlier repetition).
fn median_rep(means: &[f64]) -> usize {
    let mut order: Vec<usize> = (0..means.len()).collect();
    order.sort_by(|&a, &b| means[a].total_cmp(&means[b]).then(a.cmp(&b)));
    order[(order.len() - 1) / 2]
}

/// Folds `f` over the wall times of `res`.
fn wall_fold(res: &[CopyResult], init: f64, f: fn(f64, f64) -> f64) -> f64 {
    res.iter().map(|r| r.wall_s).fold(init, f)
}

/// Where a checksum was first seen within a grain.
struct FirstChecksum {
    value: f64,
    policy: String,
    copies: usize,
    rep: usize,
}

/// Checks that every copy that finished reported the grain's first checksum, bit for bit.
fn check_checksums(
    first: &mut Option<FirstChecksum>,
    grain: usize,
    policy: &str,
    copies: usize,
    rep: usize,
    res: &[CopyResult],
) -> Result<(), String> {
    for value in res.iter().filter_map(|r| r.checksum) {
        match first {
            None => {
                *first = Some(FirstChecksum {
                    value,
                    policy: policy.to_owned(),
                    copies,
                    rep,
                })
            }
            Some(f) if f.value.to_bits() == value.to_bits() => {}
            Some(f) => {
                return Err(format!(
                    "grain {grain}: the policies computed different results: {} ({} copies, \
                     repetition {}) reported checksum {:?}, {policy} ({copies} copies, repetition \
                     {}) {value:?} (the same sweeps of the same kernel must agree bit for bit)",
                    f.policy,
                    f.copies,
                    f.rep + 1,
                    f.value,
                    rep + 1
                ))
            }
        }
    }
    Ok(())
}

/// Sweeps for a job of about `total` element updates at this grain (or ~2 s on one thread).
fn sweeps_for(args: &Args, grain: usize, threads: usize) -> Result<usize, String> {
    let per_sweep = grain.saturating_sub(2).max(1) as f64;
    if let Some(total) = args.total {
        return Ok(((total / per_sweep).round() as usize).max(1));
    }
    // Calibrate: one single-threaded copy for ~0.25 s.
    let probe_sweeps = ((5e8 / per_sweep) as usize).max(1);
    let r = run_cell(args, "serial-rust", grain, probe_sweeps, 1, threads)?;
    let rate = probe_sweeps as f64 / r[0].wall_s.max(1e-6);
    Ok(((2.0 * rate).round() as usize).max(1))
}

fn run(args: &Args) -> Result<(), String> {
    let threads = args.threads.unwrap_or_else(default_threads);
    if !(1..=MAX_THREADS_LIMIT).contains(&threads) {
        return Err(format!(
            "{threads} threads per job (the CPUs this process may use): must be between 1 and \
             {MAX_THREADS_LIMIT}; set --threads"
        ));
    }
    if args.policies.iter().any(|p| p == "asat") {
        // The copies read the same `ASAT_*` variables: a bad one is an error before any run.
        asat::Asat::from_env().map_err(|e| e.to_string())?;
    }
    if args.trace && !args.policies.iter().any(|p| p == "asat") {
        eprintln!(
            "compare: --trace traces asat copies only and asat is not in --policies: no trace \
             is written"
        );
    }
    files::create_dir(&args.out)?;
    let cells = args.grains.len() * args.policies.len() * args.copies.len() * args.reps;
    let mut done = 0;
    let mut rows = Vec::new();
    let overall = Instant::now();
    let mut first_group = true;
    for &grain in &args.grains {
        if !first_group {
            std::thread::sleep(GROUP_PAUSE);
        }
        let sweeps = sweeps_for(args, grain, threads)?;
        eprintln!(
            "grain {grain}: {sweeps} sweeps per job ({:.2e} element updates), {threads} threads \
             per job",
            sweeps as f64 * (grain - 2) as f64
        );
        let mut checksum: Option<FirstChecksum> = None;
        // Side by side: one copies count at a time, repetition by repetition, the policies one
        // after another, so that the cells compared in a column ran minutes apart, after the
        // same load, and a slow phase of a shared host hits every policy's repetitions alike.
        // The policy order rotates by one per repetition, so no policy always follows the same.
        let n = args.policies.len();
        let cell = |p: usize, c: usize| p * args.copies.len() + c;
        // Per cell, each repetition's copies, in run order.
        let mut acc: Vec<Vec<Vec<CopyResult>>> = vec![Vec::new(); n * args.copies.len()];
        for (c, &copies) in args.copies.iter().enumerate() {
            if !first_group {
                std::thread::sleep(GROUP_PAUSE);
            }
            first_group = false;
            for rep in 0..args.reps {
                for k in 0..n {
                    let p = (rep + k) % n;
                    let policy = &args.policies[p];
                    done += 1;
                    let res = run_cell(args, policy, grain, sweeps, copies, threads)?;
                    let mean = res.iter().map(|r| r.wall_s).sum::<f64>() / res.len() as f64;
                    eprintln!(
                        "[{done:>3}/{cells}] {policy:<13} grain={grain:<8} copies={copies} \
                         rep={}  mean job {mean:>7.3} s{}   ({:.0} s elapsed)",
                        rep + 1,
                        if res.iter().any(|r| r.timed_out) {
                            "  TIMED OUT"
                        } else {
                            ""
                        },
                        overall.elapsed().as_secs_f64()
                    );
                    check_checksums(&mut checksum, grain, policy, copies, rep, &res)?;
                    if args.trace && policy == "asat" {
                        write_trace(args, grain, copies, &res)?;
                    }
                    acc[cell(p, c)].push(res);
                }
            }
        }
        if let Some(f) = &checksum {
            eprintln!(
                "grain {grain}: every copy that finished reported checksum {:?}",
                f.value
            );
        }
        for (p, policy) in args.policies.iter().enumerate() {
            for (c, &copies) in args.copies.iter().enumerate() {
                let by_rep = std::mem::take(&mut acc[cell(p, c)]);
                let means: Vec<f64> = by_rep
                    .iter()
                    .map(|res| res.iter().map(|r| r.wall_s).sum::<f64>() / res.len() as f64)
                    .collect();
                let med = median_rep(&means);
                let median_res = &by_rep[med];
                let all: Vec<&CopyResult> = by_rep.iter().flatten().collect();
                let jw: Vec<f64> = all.iter().filter_map(|r| r.join_wait_pct).collect();
                let pp: Vec<f64> = all.iter().filter_map(|r| r.probe_pct).collect();
                rows.push(Row {
                    policy: policy.clone(),
                    grain,
                    copies,
                    mean_job_s: median(means),
                    median_rep: med,
                    min_job_s: wall_fold(median_res, f64::INFINITY, f64::min),
                    max_job_s: wall_fold(median_res, 0.0, f64::max),
                    timed_out: median_res.iter().any(|r| r.timed_out),
                    all_min_job_s: by_rep
                        .iter()
                        .map(|res| wall_fold(res, f64::INFINITY, f64::min))
                        .fold(f64::INFINITY, f64::min),
                    all_max_job_s: by_rep
                        .iter()
                        .map(|res| wall_fold(res, 0.0, f64::max))
                        .fold(0.0, f64::max),
                    timed_out_reps: by_rep
                        .iter()
                        .filter(|res| res.iter().any(|r| r.timed_out))
                        .count(),
                    reps: by_rep.len(),
                    join_wait_pct: (!jw.is_empty())
                        .then(|| jw.iter().sum::<f64>() / jw.len() as f64),
                    probe_pct: (!pp.is_empty()).then(|| pp.iter().sum::<f64>() / pp.len() as f64),
                    cpu_s: all.iter().map(|r| r.cpu_s).sum::<f64>() / all.len() as f64,
                });
            }
        }
    }
    write_csv(args, &rows)?;
    print_table(&rows);
    plot(args, &rows).map_err(|e| format!("plot: {e}"))?;
    eprintln!(
        "wrote {0}/compare.csv and {0}/compare.svg",
        args.out.display()
    );
    Ok(())
}
