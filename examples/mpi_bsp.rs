//! Bulk-synchronous MPI jobs sharing a machine, under each way of waiting for MPI: the
//! implicit-coscheduling experiment (`examples/implicit_bsp.rs`) with ranks of MPI jobs in
//! place of threads.
//!
//! ```text
//! cargo run --release --features mpi --example mpi_bsp -- --patterns barrier,ring \
//!     --grains-us fine,medium,coarse --imbalance low,high \
//!     --strategies block,spin,fixed,local,global,mpi --jobs 2 --out out/mpi_bsp
//! ```
//!
//! Each run starts `--jobs` MPI jobs at once (`mpirun -np R --bind-to none --oversubscribe`,
//! one rank per CPU by default), so the machine has `jobs` ranks per CPU. Every phase, each
//! rank computes for a time drawn from `U(g - v/2, g + v/2)` (calibrated busy work: a rank
//! that is off its CPU does not progress), then communicates:
//!
//! - `barrier`: one barrier;
//! - `ring`: sends one word to each ring neighbour and receives one from each, completed with
//!   one `wait_all`, then a barrier.
//!
//! Strategies: `block`, `spin`, `fixed` (`2 cs`), `local` and `global` wait with asat-mpi's
//! [`Waiter`](asat::mpi::Waiter) (spin by testing, then sleep between tests); `mpi` is Open
//! MPI's own waits (`MPI_Waitall`, `MPI_Barrier`), which poll until done and never give the
//! CPU away. Granularities `fine`, `medium`, `coarse` are `0.5`, `5` and `250` context
//! switches (asat-implicit's calibration, printed), or microseconds; imbalance `low` is `v =
//! 0.25 g`, `high` is `v = 1.5 g`, or a factor.
//!
//! Each cell (pattern, grain, imbalance) runs `--reps` repetitions (default 3) of every
//! strategy, repetitions outside, the strategy order rotating by one from each repetition to
//! the next. A job that is not done `--timeout` seconds after its start aborts itself (its
//! ranks check the clock every phase) and is counted at the timeout, a lower bound.
//!
//! Writes `DIR/mpi_bsp.csv` (`pattern,grain_us,imbalance,strategy,completion_s,
//! slowdown_vs_best`: the median over the repetitions of the jobs' mean completion time, and
//! its ratio to the best strategy of the cell) and `DIR/mpi_bsp.svg`. The table's blocks and
//! successful spins are per run, summed over the ranks of all jobs. The defaults (0.1 s of
//! work per rank, 3 repetitions of 72 runs) took 8 minutes on this project's 2-vCPU machine,
//! busy with other work. Needs Open MPI's `mpirun`; as root, set
//! `OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use asat::implicit::{calibration, Config};
use asat::mpi::mpi::collective::SystemOperation;
use asat::mpi::mpi::traits::*;
use asat::mpi::{Hybrid, Waiter};
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
#[command(about = "Bulk-synchronous MPI jobs sharing a machine, under each way of waiting for MPI")]
struct Args {
    /// Communication patterns: barrier, ring.
    #[arg(long, value_delimiter = ',', default_value = "barrier,ring",
          value_parser = PossibleValuesParser::new(PATTERNS))]
    patterns: Vec<String>,
    /// Computation granularities g: fine, medium, coarse (0.5, 5, 250 context switches) or
    /// microseconds.
    #[arg(long, value_delimiter = ',', default_value = "fine,medium,coarse")]
    grains_us: Vec<String>,
    /// Load imbalances v: low (0.25 g), high (1.5 g) or a factor of g (0 ..= 2).
    #[arg(long, value_delimiter = ',', default_value = "low,high")]
    imbalance: Vec<String>,
    /// Strategies: block, spin, fixed, local, global (asat-mpi), mpi (Open MPI's own waits).
    #[arg(long, value_delimiter = ',', default_value = "block,spin,fixed,local,global,mpi",
          value_parser = PossibleValuesParser::new(STRATEGIES))]
    strategies: Vec<String>,
    /// MPI jobs run at once (1 ..= 16).
    #[arg(long, default_value_t = 2, value_parser = RangedU64ValueParser::<usize>::new().range(1..=16))]
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
    #[arg(long, hide = true, requires = "worker", default_value = "global")]
    strategy: String,
    #[arg(long, hide = true, requires = "worker", default_value = "barrier")]
    pattern: String,
    #[arg(long, hide = true, requires = "worker", default_value_t = 100_000)]
    grain_ns: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 0)]
    imbalance_ns: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 100)]
    phases: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 30_000)]
    cs_ns: u64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 1000.0)]
    units_per_us: f64,
    #[arg(long, hide = true, requires = "worker", default_value_t = 0)]
    seed: u64,
}

const PATTERNS: [&str; 2] = ["barrier", "ring"];
const STRATEGIES: [&str; 6] = ["block", "spin", "fixed", "local", "global", "mpi"];

/// `--work-s`: seconds, above 0 and at most 600.
fn work_secs(s: &str) -> Result<f64, String> {
    number_up_to(s, 600.0, "seconds")
}

fn main() {
    let mut args = Args::parse();
    let r = if args.worker {
        worker(&args)
    } else {
        dedup_in_order(&mut args.patterns);
        dedup_in_order(&mut args.grains_us);
        dedup_in_order(&mut args.imbalance);
        dedup_in_order(&mut args.strategies);
        run(&args)
    };
    if let Err(e) = r {
        eprintln!("mpi_bsp: {e}");
        std::process::exit(2);
    }
}

// ---------------------------------------------------------------------------------------------
// One rank

/// Busy work: `units` steps of a dependent integer chain (about 1 ns each).
#[inline(never)]
fn work(units: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..units {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    std::hint::black_box(x);
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

fn worker(args: &Args) -> Result<(), String> {
    let native = args.strategy == "mpi";
    let cfg = Config::builder()
        .context_switch(Duration::from_nanos(args.cs_ns))
        .build()
        .map_err(|e| e.to_string())?;
    // `mpi` waits natively; its waiter is not used
    let strategy = if native {
        "spin"
    } else {
        args.strategy.as_str()
    };
    let hybrid = Hybrid::builder()
        .strategy(strategy)
        .config(cfg)
        .build()
        .map_err(|e| e.to_string())?;
    let world = hybrid.world();
    let (me, np) = (world.rank(), world.size());
    let waiter: &Waiter = hybrid.waiter();
    let (g, v) = (args.grain_ns as f64, args.imbalance_ns as f64);
    let dist = Uniform::new_inclusive(g - v / 2.0, g + v / 2.0).map_err(|e| e.to_string())?;
    let per_ns = args.units_per_us / 1e3;
    let mut rng = StdRng::seed_from_u64(args.seed.wrapping_mul(1000) + me as u64);
    if me == 0 {
        println!("READY");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
    world.barrier();
    let start = Instant::now();
    let timeout = Duration::from_secs_f64(args.timeout);
    let (left, right) = ((me + np - 1) % np, (me + 1) % np);
    for phase in 0..args.phases {
        work((dist.sample(&mut rng) * per_ns) as u64);
        if args.pattern == "ring" {
            let send = [phase, phase];
            let mut got = [u64::MAX; 2];
            asat::mpi::mpi::request::scope(|scope| {
                let (lo, hi) = got.split_at_mut(1);
                let reqs = vec![
                    world
                        .process_at_rank(left)
                        .immediate_receive_into(scope, lo),
                    world
                        .process_at_rank(right)
                        .immediate_receive_into(scope, hi),
                    world
                        .process_at_rank(left)
                        .immediate_send(scope, &send[..1]),
                    world
                        .process_at_rank(right)
                        .immediate_send(scope, &send[1..]),
                ];
                if native {
                    for r in reqs {
                        r.wait_without_status();
                    }
                } else {
                    waiter.wait_all(reqs);
                }
            });
            if got != [phase, phase] {
                return Err(format!("rank {me}: phase {phase} received {got:?}"));
            }
        }
        if native {
            world.barrier();
        } else {
            waiter.barrier(world);
        }
        if start.elapsed() > timeout {
            println!("TIMEOUT rank={me} phase={phase}");
            let _ = std::io::stdout().flush();
            world.abort(4);
        }
    }
    world.barrier();
    let wall = start.elapsed().as_secs_f64();
    let s = waiter.stats();
    let mine = [s.blocks, s.spin_successes];
    let mut sum = [0u64; 2];
    world.all_reduce_into(&mine[..], &mut sum[..], SystemOperation::sum());
    if me == 0 {
        println!(
            "RESULT wall_s={wall} blocks={} spin_successes={}",
            sum[0], sum[1]
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The driver

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
    ranks: usize,
    cs: Duration,
    units_per_us: f64,
}

/// Starts the jobs of one run, waits until each has its ranks up, starts them together and
/// collects their results.
fn run_jobs(
    args: &Args,
    setup: &Setup,
    cell: &Cell,
    phases: u64,
) -> Result<Vec<JobResult>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut children = Vec::new();
    let mut stdins: Vec<ChildStdin> = Vec::new();
    for j in 0..args.jobs {
        let mut child = Command::new("mpirun")
            // --quiet: no help text when a job aborts itself at the timeout
            .args(["--quiet", "-np", &setup.ranks.to_string()])
            .args(["--bind-to", "none", "--oversubscribe"])
            .arg(&exe)
            .args([
                "--worker",
                "--strategy",
                &cell.strategy,
                "--pattern",
                &cell.pattern,
            ])
            .args(["--grain-ns", &cell.grain_ns.to_string()])
            .args(["--imbalance-ns", &cell.imbalance_ns.to_string()])
            .args(["--phases", &phases.to_string()])
            .args(["--cs-ns", &(setup.cs.as_nanos() as u64).to_string()])
            .args(["--units-per-us", &setup.units_per_us.to_string()])
            .args([
                "--seed",
                &(j + 1).to_string(),
                "--timeout",
                &args.timeout.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start mpirun ({e}); install Open MPI (openmpi-bin)"))?;
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
    for s in &mut stdins {
        let _ = s.write_all(b"GO\n");
        let _ = s.flush();
    }
    drop(stdins);
    let started = Instant::now();
    // the jobs abort themselves at the timeout; this is only a guard against a stuck mpirun
    let guard = Duration::from_secs_f64(args.timeout + 60.0);
    let outcomes = procs::wait_all(children, guard, Duration::from_millis(5))
        .map_err(|e| format!("waiting for a job: {e}"))?;
    // an aborted job's TIMEOUT line may be lost with its ranks: a failure at the timeout is one
    let late = started.elapsed().as_secs_f64() >= args.timeout;
    outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Exited { status, lines }
                if lines.iter().any(|l| l.starts_with("TIMEOUT"))
                    || (!status.success() && late) =>
            {
                Ok(JobResult {
                    wall_s: args.timeout,
                    timed_out: true,
                    ..JobResult::default()
                })
            }
            Outcome::Exited { status, lines } => {
                if !status.success() {
                    return Err(format!("a {} job failed: {status}", cell.strategy));
                }
                parse_result(&lines).ok_or_else(|| format!("bad job output {lines:?}"))
            }
            Outcome::TimedOut => Err(format!("a {} job's mpirun did not exit", cell.strategy)),
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
    let grains = args
        .grains_us
        .iter()
        .map(|g| parse_grain(g, setup.cs))
        .collect::<Result<Vec<_>, _>>()?;
    let imbalances = args
        .imbalance
        .iter()
        .map(|i| parse_imbalance(i))
        .collect::<Result<Vec<_>, _>>()?;
    println!(
        "mpi_bsp: {} jobs x {ranks} ranks, context switch {:.1} us, {:.0} work units/us, \
         {} s of work per rank, {} repetitions",
        args.jobs,
        setup.cs.as_nanos() as f64 / 1e3,
        setup.units_per_us,
        args.work_s,
        args.reps
    );
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!(
        "{:<8} {:>10} {:>9} {:<7} {:>12} {:>9} {:>9} {:>9}",
        "pattern", "grain", "imbalance", "wait", "completion_s", "slowdown", "blocks", "spins"
    );
    let mut rows = Vec::new();
    for pattern in &args.patterns {
        for (gl, g) in &grains {
            for (il, f) in &imbalances {
                let phases = ((args.work_s * 1e9 / *g as f64).round() as u64).max(1);
                let cells: Vec<Cell> = args
                    .strategies
                    .iter()
                    .map(|s| Cell {
                        pattern: pattern.clone(),
                        grain_label: gl.clone(),
                        grain_ns: *g,
                        imbalance_label: il.clone(),
                        imbalance_ns: (*g as f64 * f) as u64,
                        strategy: s.clone(),
                    })
                    .collect();
                let n = cells.len();
                let mut runs: Vec<Vec<Vec<JobResult>>> = vec![Vec::new(); n];
                for rep in 0..args.reps {
                    for k in 0..n {
                        let i = (k + rep) % n;
                        runs[i].push(run_jobs(args, &setup, &cells[i], phases)?);
                    }
                }
                let mut cell_rows: Vec<Row> = cells
                    .into_iter()
                    .zip(runs)
                    .map(|(cell, reps)| {
                        let means: Vec<f64> = reps
                            .iter()
                            .map(|jobs| {
                                jobs.iter().map(|j| j.wall_s).sum::<f64>() / jobs.len() as f64
                            })
                            .collect();
                        let all = reps.iter().flatten();
                        let r = args.reps.max(1) as u64;
                        Row {
                            completion_s: median(means),
                            slowdown: 1.0,
                            timed_out: all.clone().any(|j| j.timed_out),
                            blocks: all.clone().map(|j| j.blocks).sum::<u64>() / r,
                            spin_successes: all.map(|j| j.spin_successes).sum::<u64>() / r,
                            cell,
                        }
                    })
                    .collect();
                let best = cell_rows
                    .iter()
                    .map(|r| r.completion_s)
                    .fold(f64::INFINITY, f64::min);
                for r in &mut cell_rows {
                    r.slowdown = r.completion_s / best;
                    println!(
                        "{:<8} {:>10} {:>9} {:<7} {:>12.4} {:>9.2} {:>9} {:>9}{}",
                        r.cell.pattern,
                        format!("{gl} {:.0}us", *g as f64 / 1e3),
                        il,
                        r.cell.strategy,
                        r.completion_s,
                        r.slowdown,
                        r.blocks,
                        r.spin_successes,
                        if r.timed_out {
                            "  (timed out: a lower bound)"
                        } else {
                            ""
                        }
                    );
                }
                rows.extend(cell_rows);
            }
        }
    }
    write_csv(args, &rows)?;
    plot(args, &rows, &grains, &imbalances).map_err(|e| format!("plot: {e}"))?;
    println!(
        "wrote {0}/mpi_bsp.csv and {0}/mpi_bsp.svg",
        args.out.display()
    );
    Ok(())
}

fn write_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let mut csv =
        String::from("pattern,grain_us,imbalance,strategy,completion_s,slowdown_vs_best\n");
    for r in rows {
        csv.push_str(&format!(
            "{},{},{},{},{:.6},{:.4}\n",
            r.cell.pattern,
            r.cell.grain_ns as f64 / 1e3,
            r.cell.imbalance_label,
            r.cell.strategy,
            r.completion_s,
            r.slowdown
        ));
    }
    let path = args.out.join("mpi_bsp.csv");
    std::fs::write(&path, csv).map_err(|e| format!("{}: {e}", path.display()))
}

/// One panel per pattern and imbalance: slowdown against the best strategy, by grain.
fn plot(
    args: &Args,
    rows: &[Row],
    grains: &[(String, u64)],
    imbalances: &[(String, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("mpi_bsp.svg");
    let (cols, nrows) = (args.patterns.len(), imbalances.len());
    let root = SVGBackend::new(&path, (430 * cols as u32, 340 * nrows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let labels: Vec<String> = grains
        .iter()
        .map(|(l, ns)| format!("{l} {:.0}us", *ns as f64 / 1e3))
        .collect();
    for (k, area) in root.split_evenly((nrows, cols)).iter().enumerate() {
        let (pattern, ilabel) = (&args.patterns[k % cols], &imbalances[k / cols].0);
        let panel: Vec<&Row> = rows
            .iter()
            .filter(|r| &r.cell.pattern == pattern && &r.cell.imbalance_label == ilabel)
            .collect();
        let ymax = panel.iter().map(|r| r.slowdown).fold(1.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{pattern}, imbalance {ilabel}"), ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(48)
            .build_cartesian_2d(
                -0.5f64..grains.len() as f64 - 0.5,
                (0.9f64..ymax).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_desc("granularity g")
            .y_desc("slowdown vs best (log)")
            .x_labels(grains.len())
            .x_label_formatter(&|x| {
                let i = x.round();
                let ok = (x - i).abs() < 0.01 && i >= 0.0 && (i as usize) < labels.len();
                if ok {
                    labels[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .draw()?;
        for (si, strategy) in args.strategies.iter().enumerate() {
            let pts: Vec<(f64, f64)> = grains
                .iter()
                .enumerate()
                .filter_map(|(gi, (gl, _))| {
                    panel
                        .iter()
                        .find(|r| &r.cell.strategy == strategy && &r.cell.grain_label == gl)
                        .map(|r| (gi as f64, r.slowdown))
                })
                .collect();
            let color = Palette99::pick(si).to_rgba();
            asat_peers::plot::series(&mut chart, strategy.as_str(), color, &pts, true)?;
        }
        if k == 0 {
            asat_peers::plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
    }
    root.present()?;
    Ok(())
}
