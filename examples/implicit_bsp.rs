//! The implicit-coscheduling paper's Figure 13 on this machine: bulk-synchronous jobs, several
//! at once as separate processes, under each waiting strategy.
//!
//! ```text
//! cargo run --release --example implicit_bsp -- --patterns barrier,news,transpose \
//!     --grains-us fine,medium,coarse --imbalance low,high \
//!     --strategies block,spin,fixed,local,global,std,gang --jobs 3 --out out/implicit
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
//! A read waits on the partner's [`Flag`] until the partner has published the same step: it
//! completes only once the partner is running. Strategies: `block`, `spin`, `fixed` (`2 cs`),
//! `local`, `global` (asat-implicit, barrier and reads), and `std` (`std::sync::Barrier` for the
//! barriers, reads blocking at once), and `gang`: explicit coscheduling, the paper's baseline
//! (asat-gang; gangs live in one process, so its jobs run as runtimes of this process, each one
//! gang of a shared `GangScheduler`, barriers and reads busy-waiting).
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

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use asat::gang::GangScheduler;
use asat::implicit::{AnyStrategy, Block, Config, Flag, Spin};
use asat::{CpuSet, Runtime};
use asat_peers::cli::{dedup_in_order, number_up_to, seconds_up_to_a_day};
use asat_peers::procs::{self, Outcome, Watched};
use asat_peers::stats::median;
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;
use plotters::prelude::*;
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Uniform};

#[derive(Parser, Debug)]
#[command(
    about = "Bulk-synchronous jobs under implicit coscheduling strategies (Dusseau, Arpaci, Culler 1996, Figure 13)"
)]
struct Args {
    /// Communication patterns: barrier, news, transpose.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "barrier,news,transpose",
        value_parser = PossibleValuesParser::new(PATTERNS)
    )]
    patterns: Vec<String>,
    /// Computation granularities g: fine, medium, coarse (0.5, 5, 250 context switches) or
    /// microseconds.
    #[arg(long, value_delimiter = ',', default_value = "fine,medium,coarse")]
    grains_us: Vec<String>,
    /// Load imbalances v: low (0.25 g), high (1.5 g) or a factor of g (0 ..= 2).
    #[arg(long, value_delimiter = ',', default_value = "low,high")]
    imbalance: Vec<String>,
    /// Strategies: block, spin, fixed, local, global, std, gang.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "block,spin,fixed,local,global,std,gang",
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
    #[arg(long, hide = true, requires = "worker", default_value = "global")]
    strategy: String,
    #[arg(
        long,
        hide = true,
        requires = "worker",
        default_value = "barrier",
        value_parser = PossibleValuesParser::new(PATTERNS)
    )]
    pattern: String,
    #[arg(long, hide = true, requires = "worker", default_value_t = 100_000)]
    grain_ns: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 0)]
    imbalance_ns: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 100)]
    phases: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 30_000)]
    cs_ns: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 500)]
    release_ns: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 1000.0, value_parser = units_per_us_arg)]
    units_per_us: f64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 0)]
    seed: u64,
}

/// The most threads per job.
const MAX_THREADS: usize = 1024;

/// `--work-s`: seconds, above 0 and at most 600.
fn work_secs(s: &str) -> Result<f64, String> {
    number_up_to(s, 600.0, "seconds")
}

/// `--units-per-us` (internal): the calibrated work rate, finite and above 0.
fn units_per_us_arg(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err("must be a number of work units per microsecond above 0 and at most 1e6".into()),
    }
}

const PATTERNS: [&str; 3] = ["barrier", "news", "transpose"];
/// The strategies this example knows. `gang` is explicit coscheduling (asat-gang), the paper's
/// baseline.
const STRATEGIES: [&str; 7] = ["block", "spin", "fixed", "local", "global", "std", "gang"];

/// How a strategy's jobs are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    /// Each job a separate process (implicit coscheduling, std): the local schedulers
    /// coordinate nothing.
    Processes,
    /// Each job a runtime of this process, one gang of one `GangScheduler` (gangs live in one
    /// process): the job's threads run together and busy-wait.
    OneProcess,
}

fn runner(strategy: &str) -> Runner {
    if strategy == "gang" {
        Runner::OneProcess
    } else {
        Runner::Processes
    }
}

fn main() {
    let mut args = Args::parse();
    if args.worker {
        if let Err(e) = worker(&args) {
            eprintln!("implicit_bsp worker: {e}");
            std::process::exit(2);
        }
        return;
    }
    dedup_in_order(&mut args.patterns);
    dedup_in_order(&mut args.grains_us);
    dedup_in_order(&mut args.imbalance);
    dedup_in_order(&mut args.strategies);
    if let Err(e) = run(&args) {
        eprintln!("implicit_bsp: {e}");
        std::process::exit(2);
    }
}

// ---------------------------------------------------------------------------------------------
// The job

/// Busy work: `units` steps of a dependent integer chain (about 1 ns each).
#[inline(never)]
fn work(units: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..units {
        x = std::hint::black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
    std::hint::black_box(x);
}

/// What every member of a BSP job shares: its phases, each a computation of `U(g - v/2, g +
/// v/2)` (`dist`, in ns) followed by the communication phase.
struct Bsp<'a> {
    phases: u64,
    dist: &'a Uniform<f64>,
    /// Work units per ns of computation.
    per_ns: f64,
    /// Work units between two reads of the communication phase.
    c_units: u64,
    /// One flag per member: the last step it published.
    flags: &'a [Flag],
}

impl Bsp<'_> {
    /// Member `me`'s phases: compute; opening barrier; publish a step and `read` the flag of
    /// each partner in `reads` (the pattern); closing barrier (none when there is nothing to
    /// read: the pattern `barrier`).
    fn run(
        &self,
        me: usize,
        reads: &[usize],
        rng: &mut StdRng,
        barrier: impl Fn(),
        read: impl Fn(&Flag, u32),
    ) {
        let steps = reads.len().max(1) as u32;
        for phase in 0..self.phases {
            work((self.dist.sample(rng) * self.per_ns) as u64);
            barrier();
            if reads.is_empty() {
                continue;
            }
            let base = (phase as u32).wrapping_mul(steps);
            for (i, &q) in reads.iter().enumerate() {
                let step = base.wrapping_add(i as u32 + 1);
                self.flags[me].set(step);
                read(&self.flags[q], step);
                work(self.c_units);
            }
            barrier();
        }
    }
}

/// Work units per microsecond on this CPU: the best of a few short runs.
fn units_per_us() -> f64 {
    let units = 2_000_000;
    (0..5)
        .map(|_| {
            let t = Instant::now();
            work(units);
            units as f64 / (t.elapsed().as_secs_f64() * 1e6)
        })
        .fold(0.0, f64::max)
}

/// The barrier of a job: asat-implicit's or std's.
enum JobBarrier {
    Implicit(Box<asat::implicit::Barrier<AnyStrategy>>),
    Std(std::sync::Barrier),
}

impl JobBarrier {
    fn wait(&self) {
        match self {
            JobBarrier::Implicit(b) => {
                b.wait().expect("a job thread panicked");
            }
            JobBarrier::Std(b) => {
                b.wait();
            }
        }
    }

    fn read(&self, flag: &Flag, step: u32) {
        let r = match self {
            JobBarrier::Implicit(b) => flag.wait_at_least(step, b.strategy()),
            JobBarrier::Std(_) => flag.wait_at_least(step, &Block),
        };
        r.expect("a job thread panicked");
    }
}

/// The partners thread `me` of `p` reads from in one communication phase.
fn partners(pattern: &str, me: usize, p: usize) -> Vec<usize> {
    match pattern {
        "news" => {
            // the most square torus grid of p threads
            let cols = (1..=p)
                .filter(|c| p % c == 0 && c * c <= p)
                .max()
                .map_or(p, |c| p / c);
            let rows = p / cols;
            let (r, c) = (me / cols, me % cols);
            let mut v = Vec::new();
            for (dr, dc) in [(rows - 1, 0), (0, 1), (1, 0), (0, cols - 1)] {
                let q = ((r + dr) % rows) * cols + (c + dc) % cols;
                if q != me && !v.contains(&q) {
                    v.push(q);
                }
            }
            v
        }
        "transpose" => (1..p).map(|i| (me + i) % p).collect(),
        _ => Vec::new(),
    }
}

fn worker(args: &Args) -> Result<(), String> {
    let p = args.threads.unwrap_or_else(default_threads);
    let cfg = Config::builder()
        .context_switch(Duration::from_nanos(args.cs_ns))
        .release_latency(Duration::from_nanos(args.release_ns))
        .build()
        .map_err(|e| e.to_string())?;
    let barrier = if args.strategy == "std" {
        JobBarrier::Std(std::sync::Barrier::new(p))
    } else {
        let s = AnyStrategy::by_name(&args.strategy, &cfg).map_err(|e| e.to_string())?;
        JobBarrier::Implicit(Box::new(
            asat::implicit::Barrier::new(p, s).map_err(|e| e.to_string())?,
        ))
    };
    let flags: Vec<Flag> = (0..p).map(|_| Flag::new()).collect();
    let per_ns = args.units_per_us / 1e3;
    let g = args.grain_ns as f64;
    let v = args.imbalance_ns as f64;
    let dist = Uniform::new_inclusive(g - v / 2.0, g + v / 2.0).map_err(|e| e.to_string())?;
    let c_units = ((args.cs_ns as f64 / 25.0) * per_ns) as u64;
    let bsp = Bsp {
        phases: args.phases,
        dist: &dist,
        per_ns,
        c_units,
        flags: &flags,
    };
    let go = Flag::new();
    let cpus: Vec<usize> = CpuSet::of_current_thread()
        .map(|set| set.iter().collect())
        .unwrap_or_default();
    let wall = std::thread::scope(|s| {
        for me in 0..p {
            let (barrier, go, bsp) = (&barrier, &go, &bsp);
            let reads = partners(&args.pattern, me, p);
            let seed = args.seed.wrapping_mul(1000).wrapping_add(me as u64);
            let cpu = (!args.no_pin && !cpus.is_empty()).then(|| cpus[me % cpus.len()]);
            s.spawn(move || {
                if let Some(cpu) = cpu {
                    // Best effort: a pin the kernel refuses leaves the thread where it is.
                    let _ = CpuSet::from_iter([cpu]).bind_current_thread();
                }
                let mut rng = StdRng::seed_from_u64(seed);
                go.wait_at_least(1, &Block).expect("start");
                bsp.run(
                    me,
                    &reads,
                    &mut rng,
                    || barrier.wait(),
                    |flag, step| barrier.read(flag, step),
                );
            });
        }
        println!("READY");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        let t = Instant::now();
        go.set(1);
        t
    });
    let wall = wall.elapsed().as_secs_f64();
    let (blocks, spins) = match &barrier {
        JobBarrier::Implicit(b) => {
            let st = b.stats();
            (st.blocks, st.spin_successes)
        }
        JobBarrier::Std(_) => (0, 0),
    };
    println!("RESULT wall_s={wall} blocks={blocks} spin_successes={spins}");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The driver

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One run's settings.
#[derive(Clone, Debug)]
struct Cell {
    pattern: String,
    grain_label: String,
    grain_ns: u64,
    imbalance_label: String,
    imbalance_ns: u64,
    strategy: String,
}

/// What one job reports.
#[derive(Clone, Debug, Default)]
struct JobResult {
    wall_s: f64,
    blocks: u64,
    spin_successes: u64,
    timed_out: bool,
}

struct Setup {
    threads: usize,
    cs: Duration,
    release: Duration,
    units_per_us: f64,
}

fn spawn_job(
    setup: &Setup,
    cell: &Cell,
    phases: u64,
    seed: u64,
    no_pin: bool,
) -> std::io::Result<Child> {
    let exe = std::env::current_exe()?;
    Command::new(exe)
        .args([
            "--worker",
            "--strategy",
            &cell.strategy,
            "--pattern",
            &cell.pattern,
            "--grain-ns",
            &cell.grain_ns.to_string(),
            "--imbalance-ns",
            &cell.imbalance_ns.to_string(),
            "--phases",
            &phases.to_string(),
            "--threads",
            &setup.threads.to_string(),
            "--cs-ns",
            &(setup.cs.as_nanos() as u64).to_string(),
            "--release-ns",
            &(setup.release.as_nanos() as u64).to_string(),
            "--units-per-us",
            &setup.units_per_us.to_string(),
            "--seed",
            &seed.to_string(),
        ])
        .args(no_pin.then_some("--no-pin"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
}

/// Runs the jobs of one cell at once; returns each job's result.
fn run_jobs(
    args: &Args,
    setup: &Setup,
    cell: &Cell,
    phases: u64,
) -> Result<Vec<JobResult>, String> {
    match runner(&cell.strategy) {
        Runner::Processes => run_processes(args, setup, cell, phases),
        Runner::OneProcess => run_gangs(args, setup, cell, phases),
    }
}

/// The jobs as gangs of one `GangScheduler` in this process: each job is a runtime with the
/// gang policy whose SPMD region runs the same BSP loop; team barriers busy-wait (the gang
/// policy's wait strategy) and so do the point-to-point reads. A gang cannot be killed, so
/// there is no timeout: the phases are calibrated like every other strategy's.
fn run_gangs(
    args: &Args,
    setup: &Setup,
    cell: &Cell,
    phases: u64,
) -> Result<Vec<JobResult>, String> {
    let p = setup.threads;
    let sched = GangScheduler::builder()
        .build()
        .map_err(|e| format!("gang scheduler: {e}"))?;
    let runtimes = (0..args.jobs)
        .map(|_| {
            Runtime::builder()
                .max_threads(p)
                .policy(sched.policy())
                .build()
                .map_err(|e| format!("gang runtime: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let per_ns = setup.units_per_us / 1e3;
    let (g, v) = (cell.grain_ns as f64, cell.imbalance_ns as f64);
    let dist = Uniform::new_inclusive(g - v / 2.0, g + v / 2.0).map_err(|e| e.to_string())?;
    let c_units = ((setup.cs.as_nanos() as f64 / 25.0) * per_ns) as u64;
    let go = std::sync::Barrier::new(args.jobs);
    let walls: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = runtimes
            .iter()
            .enumerate()
            .map(|(j, rt)| {
                let (go, dist) = (&go, &dist);
                s.spawn(move || {
                    let flags: Vec<Flag> = (0..p).map(|_| Flag::new()).collect();
                    go.wait();
                    let t = Instant::now();
                    rt.region(|team| {
                        let me = team.index();
                        let reads = partners(&cell.pattern, me, team.size());
                        let seed = (j as u64 + 1).wrapping_mul(1000).wrapping_add(me as u64);
                        let mut rng = StdRng::seed_from_u64(seed);
                        let bsp = Bsp {
                            phases,
                            dist,
                            per_ns,
                            c_units,
                            flags: &flags,
                        };
                        bsp.run(
                            me,
                            &reads,
                            &mut rng,
                            || team.barrier(),
                            |flag, step| {
                                flag.wait_at_least(step, &Spin)
                                    .expect("flags are never poisoned here");
                            },
                        );
                    });
                    t.elapsed().as_secs_f64()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(f64::NAN))
            .collect()
    });
    if walls.iter().any(|w| w.is_nan()) {
        return Err("a gang job panicked".into());
    }
    Ok(walls
        .into_iter()
        .map(|wall_s| JobResult {
            wall_s,
            ..JobResult::default()
        })
        .collect())
}

fn run_processes(
    args: &Args,
    setup: &Setup,
    cell: &Cell,
    phases: u64,
) -> Result<Vec<JobResult>, String> {
    let mut children = Vec::new();
    let mut stdins: Vec<ChildStdin> = Vec::new();
    for j in 0..args.jobs {
        let mut child = spawn_job(setup, cell, phases, j as u64 + 1, args.no_pin)
            .map_err(|e| format!("cannot start a job: {e}"))?;
        stdins.push(child.stdin.take().expect("stdin is piped"));
        let mut out = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let mut ready = String::new();
        out.read_line(&mut ready)
            .map_err(|e| format!("reading a job: {e}"))?;
        if ready.trim() != "READY" {
            let _ = child.kill();
            return Err(format!("a {} job did not start: {ready:?}", cell.strategy));
        }
        children.push(Watched::with_reader(child, out));
    }
    // all jobs are ready: start them together
    for s in &mut stdins {
        let _ = s.write_all(b"GO\n");
        let _ = s.flush();
    }
    drop(stdins);
    let outcomes = procs::wait_all(
        children,
        Duration::from_secs_f64(args.timeout),
        Duration::from_millis(2),
    )
    .map_err(|e| format!("waiting for a job: {e}"))?;
    outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Exited { status, lines } => {
                if !status.success() {
                    return Err(format!("a {} job failed: {status}", cell.strategy));
                }
                parse_result(&lines).ok_or_else(|| format!("bad job output {lines:?}"))
            }
            Outcome::TimedOut => Ok(JobResult {
                wall_s: args.timeout,
                timed_out: true,
                ..JobResult::default()
            }),
        })
        .collect()
}

fn parse_result(lines: &[String]) -> Option<JobResult> {
    let rest = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("RESULT "))?;
    let mut r = JobResult::default();
    for kv in rest.split_whitespace() {
        let (k, v) = kv.split_once('=')?;
        match k {
            "wall_s" => r.wall_s = v.parse().ok()?,
            "blocks" => r.blocks = v.parse().ok()?,
            "spin_successes" => r.spin_successes = v.parse().ok()?,
            _ => {}
        }
    }
    Some(r)
}

fn parse_grain(s: &str, cs: Duration) -> Result<(String, u64), String> {
    let cs = cs.as_nanos() as u64;
    match s.trim() {
        "fine" => Ok(("fine".into(), cs / 2)),
        "medium" => Ok(("medium".into(), 5 * cs)),
        "coarse" => Ok(("coarse".into(), 250 * cs)),
        t => match t.parse::<f64>() {
            Ok(us) if (1.0..=10_000_000.0).contains(&us) => Ok((t.into(), (us * 1e3) as u64)),
            _ => Err(format!(
                "grain {t:?}: must be fine, medium, coarse or microseconds between 1 and 10000000"
            )),
        },
    }
}

fn parse_imbalance(s: &str) -> Result<(String, f64), String> {
    match s.trim() {
        "low" => Ok(("low".into(), 0.25)),
        "high" => Ok(("high".into(), 1.5)),
        t => match t.parse::<f64>() {
            Ok(f) if (0.0..=2.0).contains(&f) => Ok((t.into(), f)),
            _ => Err(format!(
                "imbalance {t:?}: must be low, high or a factor of the grain between 0 and 2"
            )),
        },
    }
}

/// One row of the table.
#[derive(Clone, Debug)]
struct Row {
    cell: Cell,
    completion_s: f64,
    slowdown: f64,
    timed_out: bool,
    blocks: u64,
    spin_successes: u64,
}

/// The strategy (index into `--strategies`) run `k`-th in repetition `rep` of a cell: the
/// order of `--strategies` rotated left by `rep` (deterministic; every strategy takes every
/// position once in `n` repetitions).
fn rotated(k: usize, rep: usize, n: usize) -> usize {
    (k + rep) % n
}

/// A total over `reps` repetitions as a per-run figure (rounded to nearest).
fn per_rep(total: u64, reps: usize) -> u64 {
    let reps = reps.max(1) as u64;
    (total + reps / 2) / reps
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
    let setup = Setup {
        threads,
        cs: cal.context_switch,
        release: cal.release_latency,
        units_per_us: units_per_us(),
    };
    let grains = args
        .grains_us
        .iter()
        .map(|g| parse_grain(g, setup.cs))
        .collect::<Result<Vec<_>, _>>()?;
    let imbalances = args
        .imbalance
        .iter()
        .map(|v| parse_imbalance(v))
        .collect::<Result<Vec<_>, _>>()?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
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
        .all(|p| args.patterns.iter().any(|q| q == p));
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
    let total =
        args.patterns.len() * grains.len() * imbalances.len() * args.strategies.len() * args.reps;
    let mut done = 0;
    let overall = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    let mut runs_csv = String::from(
        "pattern,grain_us,imbalance,strategy,rep,job,wall_s,blocks,spin_successes,timed_out\n",
    );
    let n_strategies = args.strategies.len();
    for pattern in &args.patterns {
        for (glabel, gns) in &grains {
            let phases = ((args.work_s * 1e9 / *gns as f64).round() as u64).max(5);
            for (ilabel, factor) in &imbalances {
                let cells: Vec<Cell> = args
                    .strategies
                    .iter()
                    .map(|strategy| Cell {
                        pattern: pattern.clone(),
                        grain_label: glabel.clone(),
                        grain_ns: *gns,
                        imbalance_label: ilabel.clone(),
                        imbalance_ns: (*gns as f64 * factor) as u64,
                        strategy: strategy.clone(),
                    })
                    .collect();
                // Per strategy (in the order of --strategies): each repetition's mean job
                // time, whether one timed out, and blocks and successful spins summed.
                let mut means: Vec<Vec<f64>> = vec![Vec::with_capacity(args.reps); n_strategies];
                let mut timed_out = vec![false; n_strategies];
                let mut blocks = vec![0u64; n_strategies];
                let mut spins = vec![0u64; n_strategies];
                // Repetitions outside, strategies inside, so that every strategy's k-th run
                // falls in the same time window; the order rotates by one strategy per
                // repetition, so that no strategy always runs first (or after the same one).
                for rep in 0..args.reps {
                    for k in 0..n_strategies {
                        let si = rotated(k, rep, n_strategies);
                        let (cell, strategy) = (&cells[si], &args.strategies[si]);
                        done += 1;
                        let res = run_jobs(args, &setup, cell, phases)?;
                        let mean = res.iter().map(|r| r.wall_s).sum::<f64>() / res.len() as f64;
                        let to = res.iter().any(|r| r.timed_out);
                        for (j, r) in res.iter().enumerate() {
                            runs_csv.push_str(&format!(
                                "{pattern},{:.1},{ilabel},{strategy},{rep},{j},{:.4},{},{},{}\n",
                                *gns as f64 / 1e3,
                                r.wall_s,
                                r.blocks,
                                r.spin_successes,
                                r.timed_out
                            ));
                            blocks[si] += r.blocks;
                            spins[si] += r.spin_successes;
                        }
                        let rep_label = if args.reps > 1 {
                            format!(" rep {}/{}", rep + 1, args.reps)
                        } else {
                            String::new()
                        };
                        eprintln!(
                            "[{done:>3}/{total}] {pattern:<9} g={glabel:<6} v={ilabel:<4} {strategy:<6}{rep_label} {phases:>5} phases  mean job {mean:>7.3} s{}   ({:.0} s elapsed)",
                            if to { "  TIMED OUT" } else { "" },
                            overall.elapsed().as_secs_f64()
                        );
                        means[si].push(mean);
                        timed_out[si] |= to;
                    }
                }
                let first_row = rows.len();
                for (si, cell) in cells.into_iter().enumerate() {
                    rows.push(Row {
                        cell,
                        completion_s: median(std::mem::take(&mut means[si])),
                        slowdown: f64::NAN,
                        timed_out: timed_out[si],
                        // per run (the mean over the repetitions), as with one repetition
                        blocks: per_rep(blocks[si], args.reps),
                        spin_successes: per_rep(spins[si], args.reps),
                    });
                }
                let best = rows[first_row..]
                    .iter()
                    .map(|r| r.completion_s)
                    .fold(f64::INFINITY, f64::min);
                for r in &mut rows[first_row..] {
                    r.slowdown = r.completion_s / best;
                }
            }
        }
    }
    let runs_path = args.out.join("implicit_runs.csv");
    std::fs::write(&runs_path, runs_csv).map_err(|e| format!("{}: {e}", runs_path.display()))?;
    write_csv(args, &rows)?;
    print_table(&rows);
    plot(args, &rows, &grains, &imbalances).map_err(|e| format!("plot: {e}"))?;
    eprintln!(
        "wrote {0}/implicit.csv, {0}/implicit_runs.csv and {0}/implicit.svg ({1:.0} s)",
        args.out.display(),
        overall.elapsed().as_secs_f64()
    );
    Ok(())
}

fn write_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let path = args.out.join("implicit.csv");
    let mut s = String::from("pattern,grain_us,imbalance,strategy,completion_s,slowdown_vs_best\n");
    for r in rows {
        s.push_str(&format!(
            "{},{:.1},{},{},{:.4},{:.3}\n",
            r.cell.pattern,
            r.cell.grain_ns as f64 / 1e3,
            r.cell.imbalance_label,
            r.cell.strategy,
            r.completion_s,
            r.slowdown
        ));
    }
    std::fs::write(&path, s).map_err(|e| format!("{}: {e}", path.display()))
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<9} {:>7} {:>10} {:>9} {:<8} {:>12} {:>9} {:>9} {:>9}",
        "pattern",
        "grain",
        "grain_us",
        "imbalance",
        "strategy",
        "completion_s",
        "slowdown",
        "blocks",
        "spin_ok"
    );
    for r in rows {
        println!(
            "{:<9} {:>7} {:>10.1} {:>9} {:<8} {:>12.3} {:>9.2} {:>9} {:>9}{}",
            r.cell.pattern,
            r.cell.grain_label,
            r.cell.grain_ns as f64 / 1e3,
            r.cell.imbalance_label,
            r.cell.strategy,
            r.completion_s,
            r.slowdown,
            r.blocks,
            r.spin_successes,
            if r.timed_out {
                "  timed out (lower bound)"
            } else {
                ""
            }
        );
    }
}

/// One panel per pattern and imbalance (rows: imbalance), slowdown against granularity, one
/// line per strategy: the layout of the paper's Figure 13.
fn plot(
    args: &Args,
    rows: &[Row],
    grains: &[(String, u64)],
    imbalances: &[(String, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("implicit.svg");
    let (cols, nrows) = (args.patterns.len(), imbalances.len());
    let root = SVGBackend::new(&path, (430 * cols as u32, 340 * nrows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((nrows, cols));
    let xmax = grains.len() as f64 - 0.5;
    for (k, area) in areas.iter().enumerate() {
        let (ri, ci) = (k / cols, k % cols);
        let (pattern, (ilabel, _)) = (&args.patterns[ci], &imbalances[ri]);
        let cell: Vec<&Row> = rows
            .iter()
            .filter(|r| &r.cell.pattern == pattern && &r.cell.imbalance_label == ilabel)
            .collect();
        let ymax = cell.iter().map(|r| r.slowdown).fold(1.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{pattern}, imbalance {ilabel}"), ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(48)
            .build_cartesian_2d(-0.5f64..xmax, (0.9f64..ymax).log_scale())?;
        let labels: Vec<String> = grains
            .iter()
            .map(|(l, ns)| format!("{l} {:.0}us", *ns as f64 / 1e3))
            .collect();
        chart
            .configure_mesh()
            .x_desc("granularity g")
            .y_desc("slowdown vs best (log)")
            .x_labels(grains.len())
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 0.01 && i >= 0.0 && (i as usize) < labels.len() {
                    labels[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .draw()?;
        for (si, strategy) in args.strategies.iter().enumerate() {
            let color = Palette99::pick(si).to_rgba();
            let pts: Vec<(f64, f64)> = grains
                .iter()
                .enumerate()
                .filter_map(|(gi, (gl, _))| {
                    cell.iter()
                        .find(|r| &r.cell.strategy == strategy && &r.cell.grain_label == gl)
                        .map(|r| (gi as f64, r.slowdown))
                })
                .collect();
            // Every panel names its series; only the first draws its legend (below).
            asat_peers::plot::series(&mut chart, strategy.as_str(), color, &pts, true)?;
        }
        if k == 0 {
            asat_peers::plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
    }
    root.present()?;
    Ok(())
}
