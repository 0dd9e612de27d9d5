//! The NAS Parallel Benchmarks under asat and its peers: the kernels CG, EP, FT, IS and MG (by
//! default) and the pseudo-applications BT, LU and SP (`--kernels bt,lu,sp`) of NPB-Rust
//! (serial and rayon), of NPB-Rust's rayon version built on asat, and of NPB-CPP's
//! OpenMP version, each run alone and as several copies at once (separate processes started
//! together).
//!
//! ```text
//! cargo run --release -p asat-lab --bin npb -- --npb-rust ~/src/NPB-Rust \
//!     --npb-cpp ~/src/NPB-CPP [--impls serial,rayon,omp,asat-fixed,asat] \
//!     [--kernels cg,ep,ft,is,mg] [--class B] [--copies 1,2,3,4] [--threads N] [--reps 1] \
//!     [--timeout 300] [--out out/npb] [--build-only | --no-build]
//! ```
//!
//! The suites are not part of this repository; get them with
//! `git clone https://github.com/GMAP/NPB-Rust DIR` (MIT; its `NPB-RUST` and `NPB-RAYON`
//! folders) and `git clone https://github.com/GMAP/NPB-CPP DIR` (MIT; its `NPB-OMP` folder),
//! and pass the folders with `--npb-rust` and `--npb-cpp` (each only needed by the
//! implementations that use it). The harness never builds inside them: it copies what it builds
//! to `<out>/build` and builds there (the copies and their cargo target folders are kept, so a
//! second run rebuilds only what changed; see `suites.rs`). To run on a machine without the
//! toolchains, build there with `--build-only`, copy `<out>/build` (the binaries under
//! `target/*/release/` and `npb-omp/bin/` suffice) to the same place under `--out` on the
//! other machine and run with `--no-build` and the same `--kernels` and `--class`.
//!
//! The implementations (`--impls`):
//! - `serial`: NPB-RUST as published;
//! - `rayon`: NPB-RAYON as published, `RAY_NUM_THREADS=<threads>`;
//! - `omp`: NPB-OMP (g++ `-fopenmp`, its `config/make.def`) with libgomp's defaults,
//!   `OMP_NUM_THREADS=<threads>`;
//! - `asat-fixed`, `asat`: NPB-RAYON with every `rayon::` path made `asat::` and the rayon
//!   dependency made this workspace's `asat`, `RAY_NUM_THREADS=<threads>` and
//!   `ASAT_POLICY=fixed` or `ASAT_POLICY=asat`.
//!
//! Every copy starts with the caller's environment less every `OMP_*` and `GOMP_*` variable and
//! `RAY_NUM_THREADS`, `RAYON_NUM_THREADS` and `ASAT_POLICY`; then each implementation sets what
//! it needs, as above. The caller's other `ASAT_*` variables pass through, to try asat's
//! settings.
//!
//! The class of each kernel (CG A, EP W, FT A, IS B, MG B; BT, LU, SP W) is chosen so that one serial run
//! takes a few seconds on a 2-vCPU machine (see [`default_class`]); `--class` sets it for all
//! kernels. A copy's wall time runs from its spawn to its exit, as the harness sees them
//! (NPB's own `Time in seconds` leaves out its set-up; it is shown in the progress lines); its
//! CPU time is the user + system time `wait4` reports for it. For each kernel, copies
//! count and repetition, every implementation runs once, in an order that rotates from one
//! repetition to the next (repetition `r` starts with the `r mod n`-th of `--impls`). A copy
//! that does not print `Verification = SUCCESSFUL` or fails stops the harness with its last
//! output lines; copies still running at `--timeout` are killed, and their row is kept with
//! `verified=false` and its times as lower bounds (marked `>` in the table), since a collapse
//! under oversubscription is what the harness measures.
//!
//! Writes `<out>/npb.csv` (`kernel,class,impl,copies,mean_s,max_s,cpu_s,verified,npb_s`:
//! medians over the repetitions of the copies' mean wall time, of the time until the last copy
//! finished and of the CPU seconds of all copies together; `npb_s`, NPB's own timed section
//! (the mean of the copies' `Time in seconds`, median over repetitions); rewritten after every
//! kernel and copies count),
//! `<out>/npb.svg` (one panel per kernel, max_s against copies) and prints a table. Progress
//! goes to stderr.

mod asat_port;
mod copies;
mod report;
mod suite_copy;
mod suites;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use asat::MAX_THREADS_LIMIT;
use asat_peers::cli::{dedup_in_order, seconds_up_to_a_day};
use asat_peers::stats::median;
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;

use report::Row;
use suites::{Binaries, Checkouts, Suite};

/// The implementations, in the order of the table and the legend.
pub const IMPLS: [&str; 5] = ["serial", "rayon", "omp", "asat-fixed", "asat"];
const KERNELS: [&str; 8] = ["cg", "ep", "ft", "is", "mg", "bt", "lu", "sp"];
const CLASSES: [&str; 5] = ["S", "W", "A", "B", "C"];

#[derive(Parser, Debug)]
#[command(
    about = "NAS Parallel Benchmarks (NPB-Rust, NPB-CPP) under asat, rayon and OpenMP, \
                   alone and as several copies at once"
)]
struct Args {
    /// A checkout of <https://github.com/GMAP/NPB-Rust> (needed by serial, rayon, asat-fixed,
    /// asat).
    #[arg(long, value_name = "DIR")]
    npb_rust: Option<PathBuf>,
    /// A checkout of <https://github.com/GMAP/NPB-CPP> (needed by omp).
    #[arg(long, value_name = "DIR")]
    npb_cpp: Option<PathBuf>,
    /// Implementations: serial, rayon, omp, asat-fixed, asat.
    #[arg(long, value_delimiter = ',', default_value = "serial,rayon,omp,asat-fixed,asat",
          value_parser = PossibleValuesParser::new(IMPLS))]
    impls: Vec<String>,
    /// Kernels: cg, ep, ft, is, mg, and the pseudo-applications bt, lu, sp.
    #[arg(long, value_delimiter = ',', default_value = "cg,ep,ft,is,mg",
          value_parser = PossibleValuesParser::new(KERNELS))]
    kernels: Vec<String>,
    /// NPB class of every kernel (default: per kernel, a serial run of a few seconds).
    #[arg(long, ignore_case = true, value_parser = PossibleValuesParser::new(CLASSES))]
    class: Option<String>,
    /// Numbers of copies run at once (each 1 ..= 64).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4",
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=64))]
    copies: Vec<usize>,
    /// Threads per job, 1 ..= 4096 (default: the CPUs this process may use).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS_LIMIT as u64))]
    threads: Option<usize>,
    /// Repetitions of each cell (1 ..= 1000); medians are reported.
    #[arg(long, default_value_t = 1, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1000))]
    reps: usize,
    /// Seconds after which a run's copies are killed (an error that stops the harness).
    #[arg(long, default_value_t = 300.0, allow_negative_numbers = true, value_parser = seconds_up_to_a_day)]
    timeout: f64,
    /// Output folder (the builds go to its `build` folder).
    #[arg(long, default_value = "out/npb")]
    out: PathBuf,
    /// Only build the programs.
    #[arg(long)]
    build_only: bool,
    /// Build nothing: run the binaries an earlier `--build-only` (same --kernels, --class)
    /// left in `<out>/build`, e.g. copied to a machine without cargo, make or g++.
    #[arg(long, conflicts_with = "build_only")]
    no_build: bool,
}

/// The class a kernel runs at without `--class`: the one whose serial run (NPB-RUST, wall time
/// from spawn to exit, initialization included) is closest to 2-10 s on this project's 2-vCPU
/// machine. Measured there: CG A 1.5 s (B 40 s), EP W 2.0 s (A 17 s), FT A 4.2 s (B 45 s),
/// IS B 4.0 s (A 1.1 s), MG B 6.1 s (A 3.5 s); the pseudo-applications BT W 0.9 s (A 24 s),
/// LU W 2.3 s (A 19 s), SP W 1.9 s (A 16 s).
fn default_class(kernel: &str) -> &'static str {
    match kernel {
        "cg" | "ft" => "A",
        "ep" | "bt" | "lu" | "sp" => "W",
        _ => "B",
    }
}

/// Progress lines on stderr, with the seconds since the start.
#[derive(Debug)]
pub struct Progress {
    start: Instant,
}

impl Progress {
    /// Prints `msg`.
    pub fn say(&self, msg: &str) {
        eprintln!("npb [{:>7.1} s] {msg}", self.start.elapsed().as_secs_f64());
    }
}

fn main() {
    let mut args = Args::parse();
    dedup_in_order(&mut args.impls);
    dedup_in_order(&mut args.kernels);
    dedup_in_order(&mut args.copies);
    if let Some(c) = &mut args.class {
        *c = c.to_uppercase();
    }
    if let Err(e) = run(&args) {
        eprintln!("npb: {e}");
        std::process::exit(2);
    }
}

fn run(args: &Args) -> Result<(), String> {
    let progress = Progress {
        start: Instant::now(),
    };
    let threads = args.threads.unwrap_or_else(default_threads);
    let plan: Vec<(String, String)> = args
        .kernels
        .iter()
        .map(|k| {
            let class = args
                .class
                .clone()
                .unwrap_or_else(|| default_class(k).into());
            (k.clone(), class)
        })
        .collect();
    let checkouts = Checkouts {
        npb_rust: args.npb_rust.clone(),
        npb_cpp: args.npb_cpp.clone(),
    };
    let build_dir = std::path::absolute(args.out.join("build"))
        .map_err(|e| format!("--out {}: {e}", args.out.display()))?;
    let wanted = suites_wanted(&args.impls);
    let bins = if args.no_build {
        suites::prebuilt(&wanted, &plan, &build_dir)?
    } else {
        suites::build_all(&checkouts, &wanted, &plan, &build_dir, &progress)?
    };
    if args.build_only {
        progress.say("built; --build-only: nothing run");
        return Ok(());
    }
    let csv = args.out.join("npb.csv");
    let mut rows = Vec::new();
    for (kernel, class) in &plan {
        for &copies in &args.copies {
            let cell = Cell {
                kernel,
                class,
                copies,
                threads,
            };
            rows.extend(measure(args, &bins, &cell, &progress)?);
            report::write_csv(&csv, &rows)?;
        }
    }
    let svg = args.out.join("npb.svg");
    report::write_svg(&svg, &rows, &plan, threads)?;
    report::print_table(&rows, &plan, &args.copies, threads);
    progress.say(&format!("wrote {} and {}", csv.display(), svg.display()));
    Ok(())
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Each suite to build, with the implementations that need it (for error messages).
fn suites_wanted(impls: &[String]) -> BTreeMap<Suite, String> {
    let mut by_suite: BTreeMap<Suite, Vec<&str>> = BTreeMap::new();
    for i in impls {
        by_suite.entry(Suite::of_impl(i)).or_default().push(i);
    }
    by_suite
        .into_iter()
        .map(|(s, v)| {
            let s_ = if v.len() > 1 { "s" } else { "" };
            (s, format!("impl{s_} {}", v.join(", ")))
        })
        .collect()
}

/// A kernel, class and copies count, and the threads per job.
#[derive(Debug)]
struct Cell<'a> {
    kernel: &'a str,
    class: &'a str,
    copies: usize,
    threads: usize,
}

/// Runs every implementation of `cell` `--reps` times (rotating their order) and returns their
/// rows.
fn measure(
    args: &Args,
    bins: &Binaries,
    cell: &Cell<'_>,
    progress: &Progress,
) -> Result<Vec<Row>, String> {
    let n = args.impls.len();
    let mut runs: Vec<Vec<copies::Run>> = vec![Vec::new(); n];
    for rep in 0..args.reps {
        for k in 0..n {
            let i = (rep + k) % n;
            let imp = &args.impls[i];
            let what = format!(
                "{} class {}, impl {imp}, {} copies, rep {}/{}",
                cell.kernel,
                cell.class,
                cell.copies,
                rep + 1,
                args.reps
            );
            progress.say(&format!("run {what}"));
            let bin = &bins[&(
                Suite::of_impl(imp),
                cell.class.to_owned(),
                cell.kernel.to_owned(),
            )];
            let make = || command(bin, imp, cell.threads);
            let run = copies::run(&make, cell.copies, Duration::from_secs_f64(args.timeout))
                .map_err(|e| format!("{what}: {e}"))?;
            progress.say(&summary(&run));
            runs[i].push(run);
        }
    }
    Ok(args
        .impls
        .iter()
        .zip(runs)
        .map(|(imp, r)| Row {
            kernel: cell.kernel.to_owned(),
            class: cell.class.to_owned(),
            imp: imp.clone(),
            copies: cell.copies,
            mean_s: median(r.iter().map(copies::Run::mean_s).collect()),
            max_s: median(r.iter().map(|x| x.max_s).collect()),
            cpu_s: median(r.iter().map(copies::Run::cpu_s).collect()),
            npb_s: r
                .iter()
                .map(copies::Run::npb_s)
                .collect::<Option<Vec<f64>>>()
                .map(median),
            timed_out: r.iter().any(|x| x.timed_out),
        })
        .collect())
}

/// One line on a finished run: max, mean and CPU seconds, and the times NPB printed.
fn summary(run: &copies::Run) -> String {
    let npb: Vec<String> = run
        .copies
        .iter()
        .map(|c| c.npb_s.map_or("?".into(), |s| format!("{s:.2}")))
        .collect();
    format!(
        "  max {:.2} s, mean {:.2} s, cpu {:.2} s; NPB's own times: {} s{}",
        run.max_s,
        run.mean_s(),
        run.cpu_s(),
        npb.join(" "),
        if run.timed_out {
            " (killed at --timeout)"
        } else {
            ""
        }
    )
}

/// The command of one copy of `bin` under `imp` with `threads` threads (see the module docs for
/// its environment).
fn command(bin: &std::path::Path, imp: &str, threads: usize) -> Command {
    let mut cmd = Command::new(bin);
    for (key, _) in std::env::vars_os() {
        let Some(k) = key.to_str() else { continue };
        let cleaned = k.starts_with("OMP_")
            || k.starts_with("GOMP_")
            || matches!(k, "RAY_NUM_THREADS" | "RAYON_NUM_THREADS" | "ASAT_POLICY");
        if cleaned {
            cmd.env_remove(k);
        }
    }
    let threads = threads.to_string();
    match imp {
        "serial" => {}
        "rayon" => {
            cmd.env("RAY_NUM_THREADS", &threads);
        }
        "omp" => {
            cmd.env("OMP_NUM_THREADS", &threads);
        }
        "asat-fixed" => {
            cmd.env("RAY_NUM_THREADS", &threads)
                .env("ASAT_POLICY", "fixed");
        }
        _ => {
            cmd.env("RAY_NUM_THREADS", &threads)
                .env("ASAT_POLICY", "asat");
        }
    }
    cmd
}
