//! The ASAT paper's experiment (section 6): copies of a fine-grain fork-join job run at once, as
//! separate processes, under each policy; mean job time against the number of copies.
//!
//! ```text
//! cargo run --release --example compare -- \
//!     --policies single,fixed,asat,rayon,rayon-main,gomp,gomp-dynamic \
//!     --grains 10000,100000 --copies 1,2,3,4 --out out/compare
//! ```
//!
//! Each job repeats a 1-D Jacobi sweep (`b[i] = (a[i-1] + a[i] + a[i+1]) / 3`, then swap) over
//! `grain` elements, one parallel loop per sweep, until it has done `--total` element updates.
//! Writes `DIR/compare.csv`, `DIR/compare.svg` and prints the table. `bash scripts/demo` runs
//! this example with the defaults and passes its arguments on, e.g.
//! `bash scripts/demo --policies fixed,gomp --copies 1,2 --grains 10000`.
//!
//! Policies: `single`, `fixed` and `asat` are asat's runtime; rayon is run two ways, because its
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
//! example pauses 2 s, so a group's heavier load does not spill into the next group's first cell.
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

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use asat::{Runtime, Schedule, MAX_THREADS_LIMIT};
use asat_peers::cli::{dedup_in_order, seconds_up_to_a_day};
use asat_peers::procs::{self, Outcome, Watched};
use asat_peers::stats::median;
use asat_peers::{kernel, load::CpuHogs, omp, rayon_peer};
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;
use plotters::prelude::*;

#[derive(Parser, Debug)]
#[command(
    about = "Copies of a fine-grain fork-join job under each policy (the ASAT paper, section 6)"
)]
struct Args {
    /// Policies to compare: single, fixed, asat, rayon (the sweep loop inside `pool.install`),
    /// rayon-main (each sweep's `par_chunks_mut` called from the main thread), gomp (libgomp's
    /// defaults), gomp-dynamic (`OMP_DYNAMIC=true`), gomp-passive (`OMP_WAIT_POLICY=passive`; not
    /// in the default list).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "single,fixed,asat,rayon,rayon-main,gomp,gomp-dynamic",
        value_parser = PossibleValuesParser::new(POLICIES)
    )]
    policies: Vec<String>,
    /// Elements per parallel loop (3 ..= 100000000).
    #[arg(long, value_delimiter = ',', default_value = "10000,100000", value_parser = grain_parser())]
    grains: Vec<usize>,
    /// Numbers of copies run at once (each 1 ..= 256).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4", value_parser = RangedU64ValueParser::<usize>::new().range(1..=256))]
    copies: Vec<usize>,
    /// Element updates per job (default: what one thread does in about 2 s, measured per grain).
    #[arg(long, allow_negative_numbers = true, value_parser = positive_total)]
    total: Option<f64>,
    /// Repetitions of each cell (1 ..= 10000); the median is reported.
    #[arg(long, default_value_t = 1, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    reps: usize,
    /// Seconds after which a copy is killed and its row marked timed out.
    #[arg(long, default_value_t = 15.0, allow_negative_numbers = true, value_parser = seconds_up_to_a_day)]
    timeout: f64,
    /// Threads per job, 1 ..= 4096 (default: the CPUs this process may use).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS_LIMIT as u64))]
    threads: Option<usize>,
    /// Single-threaded CPU hog processes run alongside the copies (load that is not ASAT;
    /// 0 ..= 256).
    #[arg(long, default_value_t = 0, value_parser = RangedU64ValueParser::<usize>::new().range(0..=256))]
    hogs: usize,
    /// Record ASAT's team size over time per copy: DIR/asat_trace.csv and DIR/asat_trace.svg
    /// (of the last asat cell run; every asat cell also gets DIR/asat_trace_g{grain}_c{copies}.csv).
    /// Only asat copies are traced.
    #[arg(long)]
    trace: bool,
    /// Output folder.
    #[arg(long, default_value = "out/compare")]
    out: PathBuf,
    /// Internal: run one copy of a job and print its result.
    #[arg(long, hide = true)]
    worker: bool,
    #[arg(
        long,
        hide = true,
        requires = "worker",
        default_value = "fixed",
        value_parser = PossibleValuesParser::new(worker_policies())
    )]
    policy: String,
    #[arg(long, hide = true, requires = "worker", default_value_t = 10000, value_parser = grain_parser())]
    grain: usize,
    #[arg(long, hide = true, requires = "worker", default_value_t = 1)]
    sweeps: usize,
}

/// The most elements per parallel loop: two buffers of 10^8 `f64`s are 1.6 GB per copy.
const MAX_GRAIN: u64 = 100_000_000;

fn grain_parser() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::<usize>::new().range(3..=MAX_GRAIN)
}

/// `--total`: element updates, finite and above 0.
fn positive_total(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err("must be a finite number of element updates above 0".into()),
    }
}

const POLICIES: [&str; 8] = [
    "single",
    "fixed",
    "asat",
    "rayon",
    "rayon-main",
    "gomp",
    "gomp-dynamic",
    "gomp-passive",
];

/// What a copy (`--worker --policy`) may run besides the policies: the calibration kernels.
const CALIBRATION_KERNELS: [&str; 2] = ["serial-c", "serial-rust"];

/// What a copy (`--worker --policy`) may run.
fn worker_policies() -> impl Iterator<Item = &'static str> {
    POLICIES.into_iter().chain(CALIBRATION_KERNELS)
}

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

extern "C" {
    /// libgomp's `omp_get_proc_bind` (libgomp is linked through `asat_peers`).
    fn omp_get_proc_bind() -> std::os::raw::c_int;
}

/// This process links libgomp, which reads its environment when it is loaded, before `main`:
/// with `OMP_PROC_BIND` (other than `false`), `OMP_PLACES` or `GOMP_CPU_AFFINITY` it pins the
/// starting thread to one place, and every copy would inherit that one CPU (the copies' own
/// environment is cleaned, but the affinity mask is passed on). That cannot be undone here (the
/// mask before the pinning is lost), so such a run is refused.
fn check_not_bound() -> Result<(), String> {
    // SAFETY: a plain libgomp query without arguments.
    if unsafe { omp_get_proc_bind() } == 0 {
        return Ok(());
    }
    let set: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| OMP_ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .collect();
    Err(format!(
        "libgomp has bound this process to one CPU at start-up (the OMP_*/GOMP_* variables set: \
         {}), and the copies would inherit it: run compare without OMP_PROC_BIND, OMP_PLACES \
         and GOMP_CPU_AFFINITY (every copy starts without the caller's OMP_*/GOMP_* variables \
         anyway)",
        set.join(", ")
    ))
}

/// What one copy reports.
#[derive(Clone, Debug, Default)]
struct CopyResult {
    wall_s: f64,
    join_wait_pct: Option<f64>,
    cpu_s: f64,
    timed_out: bool,
    /// Share of the job's time its starting thread spent in ASAT's probes, in percent.
    probe_pct: Option<f64>,
    /// `t_s team_size passage_us decision wait free_cpus` lines of an ASAT copy run with --trace.
    trace: Vec<String>,
    /// The sum of the job's result (none for a killed copy).
    checksum: Option<f64>,
}

fn cpu_seconds() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage fills the rusage it is pointed at; it cannot fail for RUSAGE_SELF.
    let ru = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr());
        ru.assume_init()
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn worker(args: &Args) -> Result<(), String> {
    let threads = args.threads.unwrap_or_else(default_threads);
    let (mut a, mut b) = kernel::buffers(args.grain);
    let n = a.len();
    let mut join_wait = None;
    let mut probe_pct = None;
    let start = Instant::now();
    // ASAT's settings from the caller's `ASAT_*` variables (`ASAT_RULE=paper`, ...), which
    // pass through to every copy.
    let asat_policy = std::sync::Arc::new(asat::Asat::from_env().map_err(|e| e.to_string())?);
    match args.policy.as_str() {
        "single" | "fixed" | "asat" => {
            let mut builder = Runtime::builder().max_threads(threads).timing(true);
            builder = match args.policy.as_str() {
                "single" => builder.policy(asat::Single),
                "asat" => builder.shared_policy(asat_policy.clone()),
                _ => builder.policy(asat::Fixed::all()),
            };
            let rt = builder.build().map_err(|e| e.to_string())?;
            for _ in 0..args.sweeps {
                let src = &a;
                rt.parallel_slice_mut(&mut b[1..n - 1], Schedule::Static, |start, out| {
                    kernel::sweep_chunk(src, out, start + 1)
                });
                std::mem::swap(&mut a, &mut b);
            }
            let stats = rt.stats();
            join_wait = Some(stats.join_wait_pct());
            if args.policy == "asat" {
                probe_pct =
                    Some(100.0 * stats.probe_time.as_secs_f64() / start.elapsed().as_secs_f64());
            }
        }
        "rayon" => {
            let pool = rayon_peer::pool(threads);
            rayon_peer::jacobi(&pool, &mut a, &mut b, args.sweeps);
        }
        "rayon-main" => {
            let pool = rayon_peer::pool(threads);
            rayon_peer::jacobi_per_call(&pool, &mut a, &mut b, args.sweeps);
        }
        // The three differ only in the environment `spawn_copy` gives them (`omp_env`).
        "gomp" | "gomp-dynamic" | "gomp-passive" => {
            omp::jacobi_omp(&mut a, &mut b, args.sweeps);
        }
        "serial-c" => omp::jacobi_serial(&mut a, &mut b, args.sweeps),
        "serial-rust" => kernel::serial(&mut a, &mut b, args.sweeps),
        other => {
            return Err(format!(
                "unknown policy {other:?}: must be one of {}",
                worker_policies().collect::<Vec<_>>().join(", ")
            ))
        }
    }
    let wall = start.elapsed().as_secs_f64();
    if args.trace {
        for e in asat_policy.history() {
            println!(
                "TRACE {} {} {} {} {} {}",
                e.at.as_secs_f64(),
                e.threads_after,
                e.passage
                    .or(e.toe_passage)
                    .map_or(String::new(), |p| format!("{:.1}", p.as_secs_f64() * 1e6)),
                e.decision.as_str(),
                e.wait.map_or(String::new(), |w| format!("{w:.4}")),
                e.free.map_or(String::new(), |f| format!("{f:.2}")),
            );
        }
    }
    println!(
        "RESULT wall_s={wall} join_wait_pct={} probe_pct={} cpu_s={} checksum={}",
        join_wait.map_or(String::from("-"), |j| format!("{j}")),
        probe_pct.map_or(String::from("-"), |j| format!("{j}")),
        cpu_seconds(),
        kernel::checksum(&a)
    );
    Ok(())
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Prefixes of the environment variables libgomp reads (OpenMP's and its own).
const OMP_ENV_PREFIXES: [&str; 2] = ["OMP_", "GOMP_"];

/// The libgomp settings of a copy under `policy`, set after every `OMP_*` / `GOMP_*` variable of
/// the caller's environment has been removed: `gomp` is libgomp's defaults bar the thread count.
fn omp_env(policy: &str, threads: usize) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    if matches!(policy, "gomp" | "gomp-dynamic" | "gomp-passive") {
        env.push(("OMP_NUM_THREADS", threads.to_string()));
    }
    match policy {
        "gomp-dynamic" => env.push(("OMP_DYNAMIC", "true".to_owned())),
        "gomp-passive" => env.push(("OMP_WAIT_POLICY", "passive".to_owned())),
        _ => {}
    }
    env
}

fn spawn_copy(
    args: &Args,
    policy: &str,
    grain: usize,
    sweeps: usize,
    threads: usize,
) -> std::io::Result<Child> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args([
        "--worker",
        "--policy",
        policy,
        "--grain",
        &grain.to_string(),
        "--sweeps",
        &sweeps.to_string(),
        "--threads",
        &threads.to_string(),
    ]);
    // libgomp reads its settings from the environment when the process starts: drop the caller's,
    // then set exactly what the policy needs, so that a run does not depend on the shell's.
    for (key, _) in std::env::vars_os() {
        let k = key.as_encoded_bytes();
        if OMP_ENV_PREFIXES.iter().any(|p| k.starts_with(p.as_bytes())) {
            cmd.env_remove(&key);
        }
    }
    cmd.envs(omp_env(policy, threads));
    if args.trace {
        cmd.arg("--trace");
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()
}

/// Runs `copies` copies at once; returns each copy's result.
fn run_cell(
    args: &Args,
    policy: &str,
    grain: usize,
    sweeps: usize,
    copies: usize,
    threads: usize,
) -> Result<Vec<CopyResult>, String> {
    // The co-located load that is not ASAT: killed when the cell ends.
    let _hogs = CpuHogs::spawn(args.hogs).map_err(|e| format!("cannot start a hog: {e}"))?;
    let mut children = Vec::new();
    for _ in 0..copies {
        let child = spawn_copy(args, policy, grain, sweeps, threads)
            .map_err(|e| format!("cannot start a copy: {e}"))?;
        children.push(Watched::new(child));
    }
    let outcomes = procs::wait_all(
        children,
        Duration::from_secs_f64(args.timeout),
        Duration::from_millis(5),
    )
    .map_err(|e| format!("waiting for a copy: {e}"))?;
    outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Exited { status, lines } => {
                if !status.success() {
                    return Err(format!("a {policy} copy failed: {status}"));
                }
                parse_output(&lines).ok_or_else(|| format!("bad copy output {lines:?}"))
            }
            Outcome::TimedOut => Ok(CopyResult {
                wall_s: args.timeout,
                join_wait_pct: None,
                cpu_s: f64::NAN,
                timed_out: true,
                probe_pct: None,
                trace: Vec::new(),
                checksum: None,
            }),
        })
        .collect()
}

/// Parses a copy's output: one `RESULT` line and, with --trace, `TRACE` lines.
fn parse_output(lines: &[String]) -> Option<CopyResult> {
    let mut r = parse_result(
        lines
            .iter()
            .find_map(|l| l.trim().strip_prefix("RESULT "))?,
    )?;
    r.trace = lines
        .iter()
        .filter_map(|l| l.trim().strip_prefix("TRACE "))
        .map(str::to_owned)
        .collect();
    Some(r)
}

fn parse_result(rest: &str) -> Option<CopyResult> {
    let mut r = CopyResult::default();
    for kv in rest.split_whitespace() {
        let (k, v) = kv.split_once('=')?;
        match k {
            "wall_s" => r.wall_s = v.parse().ok()?,
            "join_wait_pct" => r.join_wait_pct = v.parse().ok(),
            "probe_pct" => r.probe_pct = v.parse().ok(),
            "cpu_s" => r.cpu_s = v.parse().ok()?,
            "checksum" => r.checksum = Some(v.parse().ok()?),
            _ => {}
        }
    }
    // A copy that finished always reports its checksum.
    r.checksum.is_some().then_some(r)
}

/// One row of the table.
#[derive(Clone, Debug)]
struct Row {
    policy: String,
    grain: usize,
    copies: usize,
    /// The median over the repetitions of the repetition's mean job time.
    mean_job_s: f64,
    /// Which repetition is the median one (0 = the first run).
    median_rep: usize,
    /// The fastest and slowest copy of the median repetition.
    min_job_s: f64,
    max_job_s: f64,
    /// Whether a copy of the median repetition was killed.
    timed_out: bool,
    /// The fastest and slowest copy over every repetition.
    all_min_job_s: f64,
    all_max_job_s: f64,
    /// Repetitions in which a copy was killed, of `reps`.
    timed_out_reps: usize,
    reps: usize,
    /// Averaged over the copies of every repetition.
    join_wait_pct: Option<f64>,
    probe_pct: Option<f64>,
    cpu_s: f64,
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
        eprintln!("compare: --trace traces asat copies only and asat is not in --policies: no trace is written");
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
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
            "grain {grain}: {sweeps} sweeps per job ({:.2e} element updates), {threads} threads per job",
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
                        "[{done:>3}/{cells}] {policy:<13} grain={grain:<8} copies={copies} rep={}  mean job {mean:>7.3} s{}   ({:.0} s elapsed)",
                        rep + 1,
                        if res.iter().any(|r| r.timed_out) { "  TIMED OUT" } else { "" },
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

/// Writes the ASAT trace of one cell (and makes it the current DIR/asat_trace.{csv,svg}).
fn write_trace(args: &Args, grain: usize, copies: usize, res: &[CopyResult]) -> Result<(), String> {
    let mut csv = String::from("copy,t_s,team_size,passage_us,decision,wait,free_cpus\n");
    let mut series: Vec<Vec<(f64, f64)>> = Vec::new();
    for (copy, r) in res.iter().enumerate() {
        let mut pts = Vec::new();
        for line in &r.trace {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() == 6 {
                csv.push_str(&format!("{copy},{}\n", f.join(",")));
                if let (Ok(t), Ok(n)) = (f[0].parse::<f64>(), f[1].parse::<f64>()) {
                    pts.push((t, n));
                }
            }
        }
        series.push(pts);
    }
    for name in [
        format!("asat_trace_g{grain}_c{copies}.csv"),
        "asat_trace.csv".into(),
    ] {
        let path = args.out.join(name);
        std::fs::write(&path, &csv).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    plot_trace(args, grain, copies, &series).map_err(|e| format!("trace plot: {e}"))
}

fn plot_trace(
    args: &Args,
    grain: usize,
    copies: usize,
    series: &[Vec<(f64, f64)>],
) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("asat_trace.svg");
    let root = SVGBackend::new(&path, (760, 380)).into_drawing_area();
    root.fill(&WHITE)?;
    let tmax = series
        .iter()
        .flatten()
        .map(|p| p.0)
        .fold(0.0, f64::max)
        .max(0.1);
    let nmax = series.iter().flatten().map(|p| p.1).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "ASAT team size over time (grain {grain}, {copies} copies, {} hogs)",
                args.hogs
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(44)
        .build_cartesian_2d(0.0..tmax * 1.02, 0.0..nmax + 0.5)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("team size")
        .draw()?;
    for (copy, pts) in series.iter().enumerate() {
        let color = Palette99::pick(copy).to_rgba();
        // a step line: the size holds until the next evaluation
        let mut steps = Vec::new();
        for w in pts.windows(2) {
            steps.push(w[0]);
            steps.push((w[1].0, w[0].1));
        }
        if let Some(&last) = pts.last() {
            steps.push(last);
        }
        asat_peers::plot::series(&mut chart, format!("copy {copy}"), color, &steps, false)?;
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
    root.present()?;
    Ok(())
}

fn write_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let path = args.out.join("compare.csv");
    let mut f = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut s = String::from(
        "policy,grain,copies,mean_job_s,min_job_s,max_job_s,join_wait_pct,cpu_s,timed_out,\
         median_rep,all_min_job_s,all_max_job_s,timed_out_reps\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{:.4},{:.4},{:.4},{},{:.3},{},{},{:.4},{:.4},{}\n",
            r.policy,
            r.grain,
            r.copies,
            r.mean_job_s,
            r.min_job_s,
            r.max_job_s,
            r.join_wait_pct.map_or(String::new(), |j| format!("{j:.1}")),
            r.cpu_s,
            r.timed_out,
            r.median_rep + 1,
            r.all_min_job_s,
            r.all_max_job_s,
            r.timed_out_reps
        ));
    }
    f.write_all(s.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn print_table(rows: &[Row]) {
    println!(
        "mean_job_s: median over the repetitions of the mean job time; rep: the median \
         repetition; min_s, max_s: its fastest and slowest copy; all_min, all_max: over every \
         repetition; join%, probe%, cpu_s: averaged over every repetition"
    );
    println!(
        "{:<13} {:>8} {:>6} {:>10} {:>4} {:>8} {:>8} {:>8} {:>8} {:>6} {:>6} {:>7}",
        "policy",
        "grain",
        "copies",
        "mean_job_s",
        "rep",
        "min_s",
        "max_s",
        "all_min",
        "all_max",
        "join%",
        "probe%",
        "cpu_s"
    );
    for r in rows {
        let killed = match (r.timed_out, r.timed_out_reps) {
            (_, 0) => String::new(),
            (true, k) => format!("  a copy killed in the median rep ({k} of {} reps)", r.reps),
            (false, k) => format!("  none killed in the median rep ({k} of {} reps)", r.reps),
        };
        println!(
            "{:<13} {:>8} {:>6} {:>10.3} {:>4} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>6} {:>6} {:>7.2}{killed}",
            r.policy,
            r.grain,
            r.copies,
            r.mean_job_s,
            r.median_rep + 1,
            r.min_job_s,
            r.max_job_s,
            r.all_min_job_s,
            r.all_max_job_s,
            r.join_wait_pct
                .map_or(String::from("-"), |j| format!("{j:.1}")),
            r.probe_pct.map_or(String::from("-"), |j| format!("{j:.2}")),
            r.cpu_s,
        );
    }
}

fn plot(args: &Args, rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("compare.svg");
    let panels = args.grains.len();
    let root = SVGBackend::new(&path, (520 * panels as u32, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, panels));
    let max_copies = *args.copies.iter().max().unwrap_or(&1);
    for (area, &grain) in areas.iter().zip(&args.grains) {
        let cell: Vec<&Row> = rows.iter().filter(|r| r.grain == grain).collect();
        let ymax = cell.iter().map(|r| r.mean_job_s).fold(0.0, f64::max) * 1.1 + 1e-3;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("grain {grain}"), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(0.5f64..max_copies as f64 + 0.5, (0.0..ymax).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("copies")
            .y_desc("mean job time (s, log)")
            .x_labels(max_copies)
            .draw()?;
        for (i, policy) in args.policies.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = cell
                .iter()
                .filter(|r| &r.policy == policy)
                .map(|r| (r.copies as f64, r.mean_job_s))
                .collect();
            asat_peers::plot::series(&mut chart, policy.as_str(), color, &pts, true)?;
        }
        asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
    }
    root.present()?;
    Ok(())
}
