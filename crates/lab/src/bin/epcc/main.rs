//! The EPCC OpenMP microbenchmarks' method applied to asat, with EPCC's own C suite under
//! libgomp run beside it in the same run.
//!
//! ```text
//! cargo run --release -p asat-lab --bin epcc -- [--epcc DIR] [--threads 2] [--out out/epcc] \
//!     [--impls asat,gomp] [--tests syncbench,schedbench] [--outer-reps 20] \
//!     [--test-time 1000] [--delay-time 0.1] [--sched-delay-time 15] [--rounds 1]
//! ```
//!
//! The method (EPCC 3.1's, written here from its description: `delay.rs`, `method.rs`,
//! `stats.rs`): a delay loop calibrated to a given time; for each test, inner repetitions
//! doubled until a run reaches the target test time, then outer repetitions timed; each
//! construct's overhead is its mean time per repetition less that of a reference doing the same
//! delays without the construct, reported with its standard deviation, median, extremes and
//! outliers (beyond 3 standard deviations). The tests on asat (`asat_bench.rs`): syncbench's
//! `PARALLEL`, `FOR`, `PARALLEL_FOR`, `BARRIER`, `REDUCTION`, and schedbench's `STATIC` and
//! `STATIC_<c>`, `DYNAMIC_<c>`, `GUIDED_<c>` chunk sweeps, on a fixed-policy runtime of
//! `--threads` members.
//!
//! Implementations (`--impls`): `asat`, measured in this process; `gomp`, EPCC's C suite built
//! with gcc `-fopenmp` from a checkout of
//! <https://github.com/EPCCed/epcc-openmp-microbenchmarks> given with `--epcc` (never copied
//! into this repository; built in `<out>/build/epcc`, see `gomp.rs`) and run with
//! `OMP_NUM_THREADS=<threads>` and the same outer repetitions, target time and delay times.
//! `--impls asat` needs no checkout. For each of `--tests`, asat runs first, then gomp.
//!
//! `--rounds N` runs each suite N times, the implementations alternating (asat, gomp, asat,
//! gomp, ...), and reports per construct the median over the rounds of each implementation's
//! overhead (with the median of its standard deviations): a slow phase of a shared machine
//! that falls on one implementation's tests in one round, which a single run would put in a
//! ratio, then moves neither median. Every round's figures go to `<out>/epcc_rounds.csv`
//! (`round,construct,impl,overhead_us,stddev_us`).
//!
//! Writes `<out>/epcc.csv` (`construct,impl,overhead_us,stddev_us`, rewritten after each
//! suite), `<out>/epcc.txt` (the table printed at the end: both overheads, their standard
//! deviations and outliers, and asat/gomp) and the gomp programs' own output
//! (`<out>/gomp_syncbench.txt`, `<out>/gomp_schedbench.txt`; with rounds,
//! `gomp_syncbench_r<k>.txt`, ...). Progress goes to stderr: asat's
//! full statistics per test, with what its runtime counted meanwhile (regions, waits that
//! blocked in the kernel, loop shares the starting thread ran itself), and a warning when a
//! reference shows a delay far from its target (a calibration cut short by a preemption).

mod asat_bench;
mod delay;
mod gomp;
mod method;
mod report;
mod stats;

use std::path::PathBuf;
use std::time::Instant;

use asat::MAX_THREADS_LIMIT;
use asat_lab::files;
use asat_peers::cli::{dedup_in_order, number_up_to};
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;

use method::Method;
use report::Row;

const IMPLS: [&str; 2] = ["asat", "gomp"];
const TESTS: [&str; 2] = ["syncbench", "schedbench"];

#[derive(Parser, Debug)]
#[command(
    about = "The EPCC OpenMP microbenchmarks' method on asat, beside EPCC's own suite \
                   under libgomp"
)]
struct Args {
    /// A checkout of <https://github.com/EPCCed/epcc-openmp-microbenchmarks>, or its
    /// openmpbench_C_v31 folder (needed by impl gomp).
    #[arg(long, value_name = "DIR")]
    epcc: Option<PathBuf>,
    /// Threads, 1 ..= 4096 (default: the CPUs this process may use).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS_LIMIT as u64))]
    threads: Option<usize>,
    /// Output folder (EPCC's C suite is built in its build/epcc folder).
    #[arg(long, default_value = "out/epcc")]
    out: PathBuf,
    /// Implementations: asat, gomp.
    #[arg(long, value_delimiter = ',', default_value = "asat,gomp",
          value_parser = PossibleValuesParser::new(IMPLS))]
    impls: Vec<String>,
    /// EPCC programs whose tests run: syncbench, schedbench.
    #[arg(long, value_delimiter = ',', default_value = "syncbench,schedbench",
          value_parser = PossibleValuesParser::new(TESTS))]
    tests: Vec<String>,
    /// Timed outer repetitions per test, 2 ..= 100000 (EPCC's default 20).
    #[arg(long, default_value_t = 20,
          value_parser = RangedU64ValueParser::<usize>::new().range(2..=100_000))]
    outer_reps: usize,
    /// Target test time in microseconds, above 0 and at most 60 s (EPCC's default 1000).
    #[arg(long, default_value_t = 1000.0, allow_negative_numbers = true,
          value_parser = micros_up_to_a_minute)]
    test_time: f64,
    /// syncbench's delay time in microseconds (EPCC's default 0.1).
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true,
          value_parser = micros_up_to_a_second)]
    delay_time: f64,
    /// schedbench's delay time in microseconds (EPCC's default 15).
    #[arg(long, default_value_t = 15.0, allow_negative_numbers = true,
          value_parser = micros_up_to_a_second)]
    sched_delay_time: f64,
    /// Runs of each suite, the implementations alternating; the figures are the medians over
    /// the rounds, 1 ..= 100.
    #[arg(long, default_value_t = 1,
          value_parser = RangedU64ValueParser::<usize>::new().range(1..=100))]
    rounds: usize,
}

fn micros_up_to_a_minute(s: &str) -> Result<f64, String> {
    number_up_to(s, 60e6, "microseconds")
}

fn micros_up_to_a_second(s: &str) -> Result<f64, String> {
    number_up_to(s, 1e6, "microseconds")
}

/// Progress lines on stderr, with the seconds since the start.
#[derive(Debug)]
struct Progress {
    start: Instant,
}

impl Progress {
    fn say(&self, msg: &str) {
        eprintln!("epcc [{:>7.1} s] {msg}", self.start.elapsed().as_secs_f64());
    }
}

fn main() {
    let mut args = Args::parse();
    dedup_in_order(&mut args.impls);
    dedup_in_order(&mut args.tests);
    if let Err(e) = run(&args) {
        eprintln!("epcc: {e}");
        std::process::exit(2);
    }
}

/// One EPCC program's part of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Suite {
    Sync,
    Sched,
}

impl Suite {
    fn of(name: &str) -> Suite {
        if name == "syncbench" {
            Suite::Sync
        } else {
            Suite::Sched
        }
    }

    fn name(self) -> &'static str {
        match self {
            Suite::Sync => "syncbench",
            Suite::Sched => "schedbench",
        }
    }

    fn delay_us(self, args: &Args) -> f64 {
        match self {
            Suite::Sync => args.delay_time,
            Suite::Sched => args.sched_delay_time,
        }
    }

    /// Delays per inner repetition of the suite's reference.
    fn delays_per_rep(self) -> f64 {
        match self {
            Suite::Sync => 1.0,
            Suite::Sched => asat_bench::ITERS_PER_THREAD as f64,
        }
    }

    fn constructs(self, threads: usize) -> Vec<String> {
        match self {
            Suite::Sync => asat_bench::sync_constructs(),
            Suite::Sched => asat_bench::sched_constructs(threads),
        }
    }
}

/// EPCC's programs, built when gomp is among `impls` (its checkout is checked first, before
/// anything runs).
fn gomp_binaries(args: &Args, progress: &Progress) -> Result<Option<gomp::Binaries>, String> {
    if !args.impls.iter().any(|i| i == "gomp") {
        return Ok(None);
    }
    let src = gomp::locate(args.epcc.as_deref())?;
    let build_dir = std::path::absolute(args.out.join("build").join("epcc"))
        .map_err(|e| format!("--out {}: {e}", args.out.display()))?;
    progress.say(&format!(
        "build EPCC's syncbench and schedbench from {} in {}",
        src.display(),
        build_dir.display()
    ));
    gomp::build(&src, &build_dir).map(Some)
}

fn run(args: &Args) -> Result<(), String> {
    let progress = Progress {
        start: Instant::now(),
    };
    let threads = args.threads.unwrap_or_else(default_threads);
    let bins = gomp_binaries(args, &progress)?;
    files::create_dir(&args.out)?;
    let method = Method {
        outer_reps: args.outer_reps,
        target_us: args.test_time,
    };
    progress.say(&format!(
        "{threads} threads, {} outer repetitions, target test time {} µs",
        method.outer_reps, method.target_us
    ));
    let csv = args.out.join("epcc.csv");
    let rounds_csv = args.out.join("epcc_rounds.csv");
    // rounds[k]: every row of round k
    let mut rounds: Vec<Vec<Row>> = vec![Vec::new(); args.rounds];
    for suite in args.tests.iter().map(|t| Suite::of(t)) {
        for (k, round) in rounds.iter_mut().enumerate() {
            if args.rounds > 1 {
                progress.say(&format!(
                    "{} round {} of {}",
                    suite.name(),
                    k + 1,
                    args.rounds
                ));
            }
            if args.impls.iter().any(|i| i == "asat") {
                round.extend(run_asat(suite, threads, &method, args, &progress)?);
            }
            if let Some(bins) = &bins {
                let file = match args.rounds {
                    1 => format!("gomp_{}.txt", suite.name()),
                    _ => format!("gomp_{}_r{}.txt", suite.name(), k + 1),
                };
                round.extend(run_gomp(suite, bins, threads, args, &file, &progress)?);
            }
        }
        report::write_csv(&csv, &report::median_rows(&rounds))?;
        if args.rounds > 1 {
            files::write(&rounds_csv, report::rounds_csv(&rounds))?;
        }
    }
    let rows = report::median_rows(&rounds);
    let table = report::table(&rows);
    print!("{table}");
    let txt = args.out.join("epcc.txt");
    files::write(&txt, &table)?;
    progress.say(&format!("wrote {} and {}", csv.display(), txt.display()));
    Ok(())
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `suite`'s tests on asat.
fn run_asat(
    suite: Suite,
    threads: usize,
    method: &Method,
    args: &Args,
    progress: &Progress,
) -> Result<Vec<Row>, String> {
    let delay_us = suite.delay_us(args);
    let len = delay::calibrate_here(delay_us)?;
    progress.say(&format!(
        "asat {}: delay {delay_us} µs = {len} iterations",
        suite.name()
    ));
    let rt = asat_bench::runtime(threads)?;
    let say = |s: &str| progress.say(s);
    let outcomes = match suite {
        Suite::Sync => asat_bench::syncbench(&rt, threads, method, len, &say)?,
        Suite::Sched => asat_bench::schedbench(&rt, threads, method, len, &say)?,
    };
    if let Some(o) = outcomes.first() {
        check_delay(
            &format!("asat {}", suite.name()),
            suite,
            o.reference_us,
            args,
            progress,
        );
    }
    Ok(outcomes
        .into_iter()
        .map(|o| Row {
            overhead_us: o.overhead_us(),
            stddev_us: o.test.summary.stddev,
            outliers: o.test.summary.outliers,
            construct: o.construct,
            imp: "asat",
        })
        .collect())
}

/// Warns when the delay, as the reference measured it, is far from its target: a calibration
/// cut short by a preemption, which makes the two implementations' delays differ.
fn check_delay(who: &str, suite: Suite, reference_us: f64, args: &Args, progress: &Progress) {
    let per_delay = reference_us / suite.delays_per_rep();
    let target = suite.delay_us(args);
    let q = per_delay / target;
    if !(0.67..=1.5).contains(&q) {
        progress.say(&format!(
            "WARNING {who}: the reference's delay took {per_delay:.4} µs, {q:.2}x its target \
             {target} µs (calibrated on a busy CPU?): overheads are not comparable"
        ));
    }
}

/// `suite`'s EPCC program under libgomp: its rows for the constructs asat has too.
fn run_gomp(
    suite: Suite,
    bins: &gomp::Binaries,
    threads: usize,
    args: &Args,
    file: &str,
    progress: &Progress,
) -> Result<Vec<Row>, String> {
    let bin = match suite {
        Suite::Sync => &bins.syncbench,
        Suite::Sched => &bins.schedbench,
    };
    let params = gomp::RunParams {
        threads,
        outer_reps: args.outer_reps,
        target_us: args.test_time,
        delay_us: suite.delay_us(args),
    };
    progress.say(&format!("gomp {}: run {}", suite.name(), bin.display()));
    let text = gomp::run(bin, &params)?;
    files::write(&args.out.join(file), &text)?;
    let out = gomp::parse(&text).map_err(|e| format!("gomp {}: {e}", suite.name()))?;
    if out.threads != Some(threads) {
        return Err(format!(
            "gomp {} ran with {:?} threads, not {threads}",
            suite.name(),
            out.threads
        ));
    }
    let len = out.delay_length.map_or("?".into(), |l| l.to_string());
    progress.say(&format!("gomp {}: delay of {len} iterations", suite.name()));
    if let Some(r) = out.reference_us {
        check_delay(&format!("gomp {}", suite.name()), suite, r, args, progress);
    }
    gomp_rows(suite, threads, out.tests, progress)
}

/// The rows of `tests` for `suite`'s constructs, in their order; a construct EPCC did not
/// print is an error.
fn gomp_rows(
    suite: Suite,
    threads: usize,
    tests: Vec<gomp::Parsed>,
    progress: &Progress,
) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for c in suite.constructs(threads) {
        let Some(t) = tests.iter().find(|t| t.construct == c) else {
            return Err(format!(
                "gomp {}: EPCC printed no {c} overhead",
                suite.name()
            ));
        };
        progress.say(&format!(
            "gomp {c}: overhead {:.4} µs, sd {:.4} µs, {} outliers",
            t.overhead_us, t.stddev_us, t.outliers
        ));
        rows.push(Row {
            construct: c,
            imp: "gomp",
            overhead_us: t.overhead_us,
            stddev_us: t.stddev_us,
            outliers: t.outliers,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("epcc").chain(line.split_whitespace()))
    }

    #[test]
    fn asat_alone_needs_no_checkout() {
        let args = parse("--impls asat --threads 2").unwrap();
        let progress = Progress {
            start: Instant::now(),
        };
        assert!(gomp_binaries(&args, &progress).unwrap().is_none());
        let args = parse("--impls asat,gomp").unwrap();
        let err = gomp_binaries(&args, &progress).unwrap_err();
        assert!(err.contains(gomp::REPO_URL), "{err}");
    }

    #[test]
    fn bad_arguments_name_what_is_allowed() {
        let err = parse("--impls asat,omp").unwrap_err().to_string();
        assert!(err.contains("asat") && err.contains("gomp"), "{err}");
        let err = parse("--tests taskbench").unwrap_err().to_string();
        assert!(
            err.contains("syncbench") && err.contains("schedbench"),
            "{err}"
        );
        let err = parse("--outer-reps 1").unwrap_err().to_string();
        assert!(err.contains("2..=100000"), "{err}");
        let err = parse("--test-time 0").unwrap_err().to_string();
        assert!(err.contains("above 0"), "{err}");
        let err = parse("--delay-time -1").unwrap_err().to_string();
        assert!(
            err.contains("microseconds above 0 and at most 1000000"),
            "{err}"
        );
        let err = parse("--threads 0").unwrap_err().to_string();
        assert!(err.contains("1..=4096"), "{err}");
        let err = parse("--rounds 0").unwrap_err().to_string();
        assert!(err.contains("1..=100"), "{err}");
    }

    #[test]
    fn a_construct_missing_from_epcc_output_is_an_error() {
        let progress = Progress {
            start: Instant::now(),
        };
        let t = |c: &str| gomp::Parsed {
            construct: c.into(),
            overhead_us: 1.0,
            stddev_us: 0.1,
            outliers: 0,
        };
        let all: Vec<gomp::Parsed> = ["SINGLE", "PARALLEL", "FOR", "PARALLEL_FOR", "BARRIER"]
            .into_iter()
            .chain(["REDUCTION"])
            .map(t)
            .collect();
        let rows = gomp_rows(Suite::Sync, 2, all.clone(), &progress).unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r.construct.as_str()).collect();
        assert_eq!(
            names,
            ["PARALLEL", "FOR", "PARALLEL_FOR", "BARRIER", "REDUCTION"]
        );
        let err = gomp_rows(Suite::Sync, 2, all[..5].to_vec(), &progress).unwrap_err();
        assert!(err.contains("no REDUCTION"), "{err}");
    }
}
