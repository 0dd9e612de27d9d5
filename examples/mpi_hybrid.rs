//! Two hybrid MPI + asat jobs at once: `mpi_jacobi` (MPI halos between ranks, an asat runtime
//! in each rank) started as separate `mpirun`s together, under each way of choosing the
//! threads per rank.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_jacobi --example mpi_hybrid
//! target/release/examples/mpi_hybrid --modes fixed,share,asat --jobs 2 --verify \
//!     --out out/mpi_hybrid
//! ```
//!
//! Modes (`mpi_jacobi --threads`): `fixed`, every rank a fixed team of the whole node's CPUs,
//! as an OpenMP program does by default (two jobs of `R` ranks on `P` CPUs run `2 R P`
//! threads); `share`, a fixed team of the rank's share of the node (`Hybrid`'s bound: `P / R`
//! CPUs, so each job alone fills the node and two jobs run `2 P` threads); `asat`, the ASAT
//! policy bounded by the whole node, which has to find its share of a node that the other job
//! also uses (bounded by the share, it could do no more than `share` where the share is one
//! CPU, as here). Every rank waits for MPI with the same `--wait` (asat-mpi's `local` by
//! default), so that only the threads differ.
//!
//! Each run starts `--jobs` jobs (`mpirun -np R --bind-to none --oversubscribe`, `R` the CPUs
//! this process may use, or `--ranks`), waits until every job's rank 0 is ready, starts them
//! together and takes each job's solve time (`--iters` Jacobi iterations of an `--n` grid,
//! the tolerance 0 so that every job does them all). `--reps` repetitions, modes in an order
//! that rotates by one each repetition. Writes `DIR/mpi_hybrid.csv` (`mode,completion_s,
//! slowdown_vs_best`: the median over the repetitions of the jobs' mean time),
//! `DIR/mpi_hybrid_runs.csv` (every job of every run) and `DIR/mpi_hybrid.svg`; the jobs'
//! own outputs go to `DIR/jobs/`. `--verify` has every rank check its rows against a serial
//! solve (after the timed solve). Needs `mpi_jacobi` built beside this program and Open MPI's
//! `mpirun`; as root, set `OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::time::Duration;

use asat_peers::cli::{dedup_in_order, seconds_up_to_a_day};
use asat_peers::procs::{self, Outcome, Watched};
use asat_peers::stats::median;
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;
use plotters::prelude::*;

#[derive(Parser, Debug)]
#[command(
    about = "Two hybrid MPI + asat Jacobi jobs at once, under each choice of threads per rank"
)]
struct Args {
    /// Threads per rank: fixed (the whole node), share (the rank's share), asat (ASAT,
    /// bounded by the node).
    #[arg(long, value_delimiter = ',', default_value = "fixed,share,asat",
          value_parser = PossibleValuesParser::new(MODES))]
    modes: Vec<String>,
    /// Jobs run at once (1 ..= 8).
    #[arg(long, default_value_t = 2, value_parser = RangedU64ValueParser::<usize>::new().range(1..=8))]
    jobs: usize,
    /// Ranks per job, 1 ..= 64 (default: the CPUs this process may use).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=64))]
    ranks: Option<usize>,
    /// Grid size (points per side, 3 ..= 20000).
    #[arg(long, default_value_t = 512, value_parser = RangedU64ValueParser::<usize>::new().range(3..=20_000))]
    n: usize,
    /// Jacobi iterations per job (1 ..= 1000000).
    #[arg(long, default_value_t = 2000, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    iters: usize,
    /// How every rank waits for MPI: block, spin, fixed, local, global, mpi.
    #[arg(long, default_value = "local",
          value_parser = PossibleValuesParser::new(["block", "spin", "fixed", "local", "global", "mpi"]))]
    wait: String,
    /// Repetitions (1 ..= 100); the median is reported.
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100))]
    reps: usize,
    /// Seconds after which a run's jobs are killed (an error).
    #[arg(long, default_value_t = 300.0, allow_negative_numbers = true, value_parser = seconds_up_to_a_day)]
    timeout: f64,
    /// Have every rank check its rows against a serial solve.
    #[arg(long)]
    verify: bool,
    /// Output folder.
    #[arg(long, default_value = "out/mpi_hybrid")]
    out: PathBuf,
}

const MODES: [&str; 3] = ["fixed", "share", "asat"];

fn main() {
    let mut args = Args::parse();
    dedup_in_order(&mut args.modes);
    if let Err(e) = run(&args) {
        eprintln!("mpi_hybrid: {e}");
        std::process::exit(2);
    }
}

/// `mpi_jacobi`'s arguments for one job of a mode.
fn job_args(args: &Args, mode: &str, out: &Path) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "--threads".into(),
        mode.into(),
        "--strategies".into(),
        args.wait.clone(),
        "--n".into(),
        args.n.to_string(),
        "--iters".into(),
        args.iters.to_string(),
        "--check".into(),
        args.iters.min(10).to_string(),
        "--tolerance".into(),
        "0".into(),
        "--go".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    if args.verify {
        v.push("--verify".into());
    }
    v
}

/// The solve time in a job's `RESULT` line.
fn parse_seconds(lines: &[String]) -> Option<f64> {
    let rest = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("RESULT "))?;
    rest.split_whitespace()
        .find_map(|kv| kv.strip_prefix("seconds="))?
        .parse()
        .ok()
}

/// Runs the jobs of one mode together; each job's seconds.
fn run_jobs(args: &Args, jacobi: &Path, ranks: usize, mode: &str) -> Result<Vec<f64>, String> {
    let mut children = Vec::new();
    let mut stdins: Vec<ChildStdin> = Vec::new();
    for j in 0..args.jobs {
        let out = args.out.join("jobs").join(format!("{mode}-{j}"));
        let mut child = Command::new("mpirun")
            .args(["--quiet", "-np", &ranks.to_string()])
            .args(["--bind-to", "none", "--oversubscribe"])
            .arg(jacobi)
            .args(job_args(args, mode, &out))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start mpirun ({e}); install Open MPI (openmpi-bin)"))?;
        stdins.push(child.stdin.take().expect("stdin is piped"));
        let mut out = BufReader::new(child.stdout.take().expect("stdout is piped"));
        // rank 0's start-up line, then READY
        let mut seen = Vec::new();
        loop {
            let mut line = String::new();
            let got = out
                .read_line(&mut line)
                .map_err(|e| format!("reading a job: {e}"))?;
            if got == 0 {
                let _ = child.kill();
                let mut e = format!("a {mode} job did not start: {seen:?}");
                if let Some(hint) = asat::mpi::launch::mpirun_root_hint() {
                    e = format!("{e}; {hint}");
                }
                return Err(e);
            }
            if line.trim() == "READY" {
                break;
            }
            seen.push(line.trim().to_owned());
        }
        if j == 0 {
            if let Some(l) = seen.first() {
                println!("  {mode}: {l}");
            }
        }
        children.push(Watched::with_reader(child, out));
    }
    procs::start_together(stdins);
    let outcomes = procs::wait_all(
        children,
        Duration::from_secs_f64(args.timeout),
        Duration::from_millis(5),
    )
    .map_err(|e| format!("waiting for a job: {e}"))?;
    outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Exited { status, lines } if status.success() => {
                parse_seconds(&lines).ok_or_else(|| format!("bad job output {lines:?}"))
            }
            Outcome::Exited { status, .. } => Err(format!("a {mode} job failed: {status}")),
            Outcome::TimedOut => Err(format!(
                "a {mode} job was still running after {} s",
                args.timeout
            )),
        })
        .collect()
}

fn run(args: &Args) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let jacobi = exe.with_file_name("mpi_jacobi");
    if !jacobi.exists() {
        return Err(format!(
            "{} is missing: cargo build --release --features mpi --example mpi_jacobi",
            jacobi.display()
        ));
    }
    let ranks = args
        .ranks
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!(
        "mpi_hybrid: {} jobs x {ranks} ranks at once, {n}x{n} grid, {} iterations, wait {}, \
         {} repetitions",
        args.jobs,
        args.iters,
        args.wait,
        args.reps,
        n = args.n
    );
    let n = args.modes.len();
    let mut runs: Vec<Vec<Vec<f64>>> = vec![Vec::new(); n];
    for rep in 0..args.reps {
        for k in 0..n {
            let i = (k + rep) % n;
            let secs = run_jobs(args, &jacobi, ranks, &args.modes[i])?;
            println!(
                "  rep {rep} {:<6} jobs: {}",
                args.modes[i],
                secs.iter()
                    .map(|s| format!("{s:.3} s"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            runs[i].push(secs);
        }
    }
    let medians: Vec<f64> = runs
        .iter()
        .map(|reps| {
            median(
                reps.iter()
                    .map(|j| j.iter().sum::<f64>() / j.len() as f64)
                    .collect(),
            )
        })
        .collect();
    let best = medians.iter().copied().fold(f64::INFINITY, f64::min);
    println!("{:<6} {:>12} {:>9}", "mode", "completion_s", "slowdown");
    let mut csv = String::from("mode,completion_s,slowdown_vs_best\n");
    let mut runs_csv = String::from("mode,rep,job,seconds\n");
    for (i, mode) in args.modes.iter().enumerate() {
        println!("{mode:<6} {:>12.4} {:>9.2}", medians[i], medians[i] / best);
        csv.push_str(&format!(
            "{mode},{:.6},{:.4}\n",
            medians[i],
            medians[i] / best
        ));
        for (rep, secs) in runs[i].iter().enumerate() {
            for (j, s) in secs.iter().enumerate() {
                runs_csv.push_str(&format!("{mode},{rep},{j},{s:.6}\n"));
            }
        }
    }
    let write = |name: &str, text: &str| {
        let p = args.out.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("mpi_hybrid.csv", &csv)?;
    write("mpi_hybrid_runs.csv", &runs_csv)?;
    plot(args, &medians).map_err(|e| format!("plot: {e}"))?;
    if args.verify {
        println!("verified: every rank's rows equal the serial solve's, in every job and mode");
    }
    println!(
        "wrote {0}/mpi_hybrid.csv, {0}/mpi_hybrid_runs.csv and {0}/mpi_hybrid.svg",
        args.out.display()
    );
    Ok(())
}

/// Seconds per mode, one bar each.
fn plot(args: &Args, medians: &[f64]) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("mpi_hybrid.svg");
    let root = SVGBackend::new(&path, (520, 340)).into_drawing_area();
    root.fill(&WHITE)?;
    let ymax = medians.iter().copied().fold(0.0, f64::max) * 1.15 + 1e-9;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "{} Jacobi jobs at once: mean job seconds per threads-per-rank mode",
                args.jobs
            ),
            ("sans-serif", 15),
        )
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(52)
        .build_cartesian_2d(-0.5f64..medians.len() as f64 - 0.5, 0.0..ymax)?;
    let names = &args.modes;
    chart
        .configure_mesh()
        .y_desc("seconds")
        .x_labels(names.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            let ok = (x - i).abs() < 0.01 && i >= 0.0 && (i as usize) < names.len();
            if ok {
                names[i as usize].clone()
            } else {
                String::new()
            }
        })
        .draw()?;
    chart.draw_series(medians.iter().enumerate().map(|(i, m)| {
        Rectangle::new(
            [(i as f64 - 0.3, 0.0), (i as f64 + 0.3, *m)],
            Palette99::pick(i).filled(),
        )
    }))?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_arguments_follow_the_mode() {
        let a = Args::try_parse_from(["mpi_hybrid", "--verify", "--iters", "5"]).unwrap();
        assert_eq!(a.modes, MODES);
        assert_eq!(a.jobs, 2);
        let v = job_args(&a, "asat", Path::new("o")).join(" ");
        assert!(v.contains("--threads asat --strategies local"), "{v}");
        assert!(v.contains("--iters 5 --check 5 --tolerance 0 --go"), "{v}");
        assert!(v.ends_with("--verify"), "{v}");
        assert!(Args::try_parse_from(["mpi_hybrid", "--modes", "openmp"]).is_err());
        assert!(Args::try_parse_from(["mpi_hybrid", "--jobs", "0"]).is_err());
    }

    #[test]
    fn result_lines() {
        let lines = [
            "x".to_owned(),
            "RESULT strategy=global seconds=1.5 iterations=9".to_owned(),
        ];
        assert_eq!(parse_seconds(&lines), Some(1.5));
        assert_eq!(parse_seconds(&["READY".to_owned()]), None);
    }
}
