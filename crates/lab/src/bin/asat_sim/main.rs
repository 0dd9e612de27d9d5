//! ASAT on machines this project does not have: `k` ASAT jobs (and CPU hogs) on `P` simulated
//! CPUs, the paper's rule and asat's side by side, with the real decision logic driven by the
//! simulator [`asat_lab::asat_sim`] (its model is in that module's docs).
//!
//! ```text
//! cargo run --release -p asat-lab --bin asat_sim -- --processors 2,64,256 --jobs 1,4,8 \
//!     --rules paper,asat --scenarios together,staggered,hogs --seed 1 --out out/asat_sim
//! ```
//!
//! Scenarios: `together` (k jobs of P threads start at once), `staggered` (one arrives every
//! 5 evaluations; 30 evaluations after the last, all but the last leave), `departure` (as
//! together; after 30 evaluations the first job leaves), `grain` (as together, the jobs'
//! regions in turn 50 us, 500 us and 5 ms of CPU time per member), `hogs` (as together,
//! beside max(1, P/4) single-threaded CPU hogs). `--seed` takes a list (`1-10` for a range).
//! Writes:
//!
//! - `DIR/asat_sim_trace.csv`: `rule,processors,jobs,scenario,job,evaluation,t_s,team_size`,
//!   one row per evaluation of each job, for the first seed;
//! - `DIR/asat_sim.csv`: one row per rule x processors x jobs x scenario x seed with
//!   `rule,processors,jobs,scenario,settle_evals,total_after,max_share_dev,
//!   moves_per_eval_after,regain_evals,efficiency,makespan,makespan_fixed,seed,hog_share,
//!   hog_share_fixed,makespan_ideal,makespan_share` (see [`Summary`]; an empty cell is
//!   "never" or "not applicable").
//!   `makespan` is the time in seconds from the start to the last job's end when every job
//!   of the scenario (same arrivals, grains and hogs) has the same work, `--work-evals`
//!   evaluation intervals of P CPUs, and leaves when it is done; `makespan_fixed` is the same
//!   with a fixed team of P threads per job ([`sim::makespan`]); `hog_share` and
//!   `hog_share_fixed`, the CPU the hogs got until then, as a share of a CPU each
//!   ([`sim::makespan_run`]); `makespan_ideal`, the shortest makespan a runtime could reach
//!   without running more threads than the CPUs the hogs leave ([`sim::ideal_makespan`]): where
//!   `makespan_fixed` is not well above it, the fixed teams lose little to oversubscription
//!   and no runtime can gain much on them; `makespan_share`, the same jobs as fixed teams of
//!   their equal shares of those CPUs ([`sim::share_teams`]): a static partition, what
//!   choosing team sizes alone can reach where every job is there from the start;
//! - `DIR/asat_sim.svg`: every job's team size over time for the largest P and k of the run,
//!   one panel per scenario and rule;
//!
//! and prints the table. The runs (one per machine size, number of jobs, scenario and seed)
//! are spread over the machine's CPUs with asat's own parallel iterators; each is
//! deterministic, so the figures do not depend on how many run at once.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use asat::adaptive::Rule;
use asat::prelude::*;
use asat_lab::asat_sim::{self as sim, Config, Makespan, Scenario, Summary, TracePoint};
use asat_lab::files;
use asat_peers::cli::dedup_in_order;
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;
use plotters::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "ASAT jobs on a simulated P-CPU machine: the paper's rule and asat's")]
struct Args {
    /// CPUs of the simulated machine (each 1 ..= 4096).
    #[arg(long, value_delimiter = ',', default_value = "2,64,256", value_parser = RangedU64ValueParser::<usize>::new().range(1..=sim::MAX_PROCESSORS as u64))]
    processors: Vec<usize>,
    /// Numbers of ASAT jobs (each 1 ..= 256).
    #[arg(long, value_delimiter = ',', default_value = "1,4,8", value_parser = RangedU64ValueParser::<usize>::new().range(1..=256))]
    jobs: Vec<usize>,
    /// Rules: paper (one thread at a time) and asat (jump to the probed share).
    #[arg(long, value_delimiter = ',', default_value = "paper,asat", value_parser = PossibleValuesParser::new(["paper", "asat"]))]
    rules: Vec<String>,
    /// Scenarios: together, staggered, departure, grain, hogs.
    #[arg(long, value_delimiter = ',', default_value = "together,staggered,hogs", value_parser = PossibleValuesParser::new(sim::SCENARIOS))]
    scenarios: Vec<String>,
    /// Seeds of the simulated machine's random choices (a list; `A-B` is a range).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = parse_seeds)]
    seed: Vec<Vec<u64>>,
    /// Each job's work for the makespan, in evaluation intervals of all P CPUs (0: no
    /// makespan runs).
    #[arg(long, default_value_t = 10, value_parser = RangedU64ValueParser::<u32>::new().range(0..=100))]
    work_evals: u32,
    /// Output folder.
    #[arg(long, default_value = "out/asat_sim")]
    out: PathBuf,
}

struct Cell {
    rule: String,
    processors: usize,
    jobs: usize,
    scenario: String,
    seed: u64,
    trace: Vec<TracePoint>,
    summary: Summary,
    makespans: Makespans,
}

/// `7` or `1-10`.
fn parse_seeds(v: &str) -> Result<Vec<u64>, String> {
    let num = |x: &str| {
        x.trim()
            .parse::<u64>()
            .map_err(|_| format!("{x:?}: a seed is a whole number from 0"))
    };
    match v.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (num(a)?, num(b)?);
            if a > b || b - a >= 1000 {
                return Err(format!("{v}: a range A-B needs A <= B, at most 1000 seeds"));
            }
            Ok((a..=b).collect())
        }
        None => Ok(vec![num(v)?]),
    }
}

fn main() {
    let mut args = Args::parse();
    dedup_in_order(&mut args.processors);
    dedup_in_order(&mut args.jobs);
    dedup_in_order(&mut args.rules);
    dedup_in_order(&mut args.scenarios);
    let mut seeds: Vec<u64> = args.seed.concat();
    dedup_in_order(&mut seeds);
    args.seed = vec![seeds];
    if let Err(e) = run(&args) {
        eprintln!("asat_sim: {e}");
        std::process::exit(2);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    files::create_dir(&args.out)?;
    let seeds = &args.seed[0];
    let mut points = Vec::new();
    for &p in &args.processors {
        for &k in &args.jobs {
            for scenario in &args.scenarios {
                for &seed in seeds {
                    points.push(Point {
                        p,
                        k,
                        scenario,
                        seed,
                        traced: seed == seeds[0],
                    });
                }
            }
        }
    }
    let progress = Progress {
        start: Instant::now(),
        done: AtomicUsize::new(0),
        total: points.len() * args.rules.len(),
    };
    // Each machine, scenario and seed on a thread of its own (the runs are deterministic, so
    // running them side by side changes no figure), handed out one at a time: they take from
    // a tenth of a second to half a minute.
    let cells: Vec<Vec<Cell>> = points
        .par_iter()
        .with_max_len(1)
        .map(|point| run_point(args, point, &progress))
        .collect::<Result<_, String>>()?;
    let cells: Vec<Cell> = cells.into_iter().flatten().collect();
    write_csvs(args, &cells)?;
    print_table(&cells);
    plot(args, &cells)?;
    Ok(())
}

/// One machine size, number of jobs, scenario and seed, run under each rule.
struct Point<'a> {
    p: usize,
    k: usize,
    scenario: &'a String,
    seed: u64,
    /// Whether its traces are kept (the first seed's).
    traced: bool,
}

/// The runs done so far, for the progress lines.
struct Progress {
    start: Instant,
    done: AtomicUsize,
    total: usize,
}

/// The cells of `point`, one per rule (the fixed teams' makespans run once for all rules).
fn run_point(args: &Args, point: &Point<'_>, progress: &Progress) -> Result<Vec<Cell>, String> {
    let Point {
        p,
        k,
        scenario,
        seed,
        traced,
    } = *point;
    let mut baselines = None;
    let mut cells = Vec::new();
    for rule in &args.rules {
        let r = Rule::parse(rule).ok_or("unknown rule")?;
        let cfg = Config::new(p, r, seed);
        let sc = Scenario::named(scenario, p, k, cfg.asat.eval_interval, cfg.region_work)
            .ok_or("unknown scenario")?;
        let t = Instant::now();
        let trace = sim::run(&cfg, &sc).map_err(|e| e.to_string())?;
        let summary = sim::summarize(&trace, &sc, &cfg);
        let makespans =
            makespans(&cfg, &sc, args.work_evals, baselines).map_err(|e| e.to_string())?;
        baselines = Some(makespans);
        eprintln!(
            "asat_sim [{:>6.1} s] {}/{}: {rule} P={p} k={k} {scenario} seed {seed}: {:.1} s",
            progress.start.elapsed().as_secs_f64(),
            progress.done.fetch_add(1, Ordering::Relaxed) + 1,
            progress.total,
            t.elapsed().as_secs_f64()
        );
        cells.push(Cell {
            rule: rule.clone(),
            processors: p,
            jobs: k,
            scenario: scenario.clone(),
            seed,
            trace: if traced { trace } else { Vec::new() },
            summary,
            makespans,
        });
    }
    Ok(cells)
}

/// A cell's makespans (module docs; `None` without `--work-evals`).
#[derive(Clone, Copy, Debug, Default)]
struct Makespans {
    /// Under the rule.
    rule: Option<Makespan>,
    /// Fixed teams of `P`.
    fixed: Option<Makespan>,
    /// Fixed teams of the jobs' equal shares.
    share: Option<Makespan>,
    ideal: Option<Duration>,
}

/// The makespans of `sc` with every job given `work_evals` intervals of all CPUs as work:
/// under `cfg`'s rule, with fixed teams of `P` and of the shares (taken from `known` when
/// already run for this cell: they do not depend on the rule), and the ideal
/// ([`sim::ideal_makespan`]).
fn makespans(
    cfg: &Config,
    sc: &Scenario,
    work_evals: u32,
    known: Option<Makespans>,
) -> Result<Makespans, asat_lab::Error> {
    if work_evals == 0 {
        return Ok(Makespans::default());
    }
    let eval = cfg.asat.eval_interval;
    let work = eval * work_evals * cfg.processors as u32;
    // generous: every job alone at a quarter of the machine's speed, after the last arrival
    let last = sc.jobs.iter().map(|j| j.arrive).max().unwrap_or_default();
    let limit = (last + eval * work_evals * 4 * sc.jobs.len() as u32).min(sim::MAX_DURATION);
    let with_work = sc.with_work(work, limit);
    let rule = sim::makespan_run(cfg, &with_work)?;
    let fixed_run = |partition| {
        let fixed = Config {
            fixed: true,
            partition,
            ..cfg.clone()
        };
        sim::makespan_run(&fixed, &with_work)
    };
    let (fixed, share) = match known {
        Some(m) => (m.fixed, m.share),
        None => (fixed_run(false)?, fixed_run(true)?),
    };
    Ok(Makespans {
        rule,
        fixed,
        share,
        ideal: sim::ideal_makespan(cfg.processors, &with_work),
    })
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

fn opt_f(v: Option<f64>, digits: usize) -> String {
    v.map_or(String::new(), |x| format!("{x:.digits$}"))
}

fn write_csvs(args: &Args, cells: &[Cell]) -> Result<(), Box<dyn std::error::Error>> {
    let mut t =
        std::io::BufWriter::new(std::fs::File::create(args.out.join("asat_sim_trace.csv"))?);
    writeln!(
        t,
        "rule,processors,jobs,scenario,job,evaluation,t_s,team_size"
    )?;
    let mut s = std::fs::File::create(args.out.join("asat_sim.csv"))?;
    writeln!(s, "rule,processors,jobs,scenario,settle_evals,total_after,max_share_dev,moves_per_eval_after,regain_evals,efficiency,makespan,makespan_fixed,seed,hog_share,hog_share_fixed,makespan_ideal,makespan_share")?;
    let secs = |m: Option<Makespan>| opt_f(m.map(|m| m.time.as_secs_f64()), 3);
    let hogs = |m: Option<Makespan>| opt_f(m.and_then(|m| m.hog_share), 3);
    for c in cells {
        for p in &c.trace {
            writeln!(
                t,
                "{},{},{},{},{},{},{:.3},{}",
                c.rule,
                c.processors,
                c.jobs,
                c.scenario,
                p.job,
                p.evaluation,
                p.t.as_secs_f64(),
                p.team
            )?;
        }
        let m = &c.summary;
        writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            c.rule,
            c.processors,
            c.jobs,
            c.scenario,
            opt(m.settle_evals),
            opt_f(m.total_after, 2),
            opt_f(m.max_share_dev, 3),
            opt_f(m.moves_per_eval_after, 3),
            opt(m.regain_evals),
            opt_f(m.efficiency, 3),
            secs(c.makespans.rule),
            secs(c.makespans.fixed),
            c.seed,
            hogs(c.makespans.rule),
            hogs(c.makespans.fixed),
            opt_f(c.makespans.ideal.map(|d| d.as_secs_f64()), 3),
            secs(c.makespans.share)
        )?;
    }
    t.flush()?;
    Ok(())
}

fn print_table(cells: &[Cell]) {
    println!("| rule | P | k | scenario | seed | settle evals | total after | max share dev | moves/eval | regain evals | efficiency | makespan s | fixed s | ratio | share s | ideal s | hogs' CPU, fixed's |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for c in cells {
        let m = &c.summary;
        let dash = |s: String| if s.is_empty() { "-".to_string() } else { s };
        let ratio = match (c.makespans.rule, c.makespans.fixed) {
            (Some(a), Some(f)) if !f.time.is_zero() => {
                format!("{:.2}", a.time.as_secs_f64() / f.time.as_secs_f64())
            }
            _ => "-".into(),
        };
        let secs =
            |m: Option<Makespan>| m.map_or("-".into(), |m| format!("{:.2}", m.time.as_secs_f64()));
        let hogs = match (
            c.makespans.rule.and_then(|m| m.hog_share),
            c.makespans.fixed.and_then(|m| m.hog_share),
        ) {
            (Some(a), Some(f)) => format!("{:.0}%, {:.0}%", a * 100.0, f * 100.0),
            _ => "-".into(),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.rule,
            c.processors,
            c.jobs,
            c.scenario,
            c.seed,
            m.settle_evals.map_or("never".into(), |v| v.to_string()),
            dash(opt_f(m.total_after, 1)),
            m.max_share_dev
                .map_or("-".into(), |d| format!("{:.0}%", d * 100.0)),
            dash(opt_f(m.moves_per_eval_after, 2)),
            dash(opt(m.regain_evals)),
            m.efficiency
                .map_or("-".into(), |e| format!("{:.0}%", e * 100.0)),
            secs(c.makespans.rule),
            secs(c.makespans.fixed),
            ratio,
            secs(c.makespans.share),
            c.makespans.ideal
                .map_or("-".into(), |d| format!("{:.2}", d.as_secs_f64())),
            hogs,
        );
    }
}

fn plot(args: &Args, cells: &[Cell]) -> Result<(), Box<dyn std::error::Error>> {
    let (Some(&p), Some(&k)) = (args.processors.iter().max(), args.jobs.iter().max()) else {
        return Ok(());
    };
    let path = args.out.join("asat_sim.svg");
    let rows = args.scenarios.len();
    let cols = args.rules.len();
    let root = SVGBackend::new(&path, (520 * cols as u32, 300 * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((rows, cols));
    for (i, scenario) in args.scenarios.iter().enumerate() {
        for (j, rule) in args.rules.iter().enumerate() {
            let Some(c) = cells.iter().find(|c| {
                c.processors == p
                    && c.jobs == k
                    && &c.scenario == scenario
                    && &c.rule == rule
                    && !c.trace.is_empty()
            }) else {
                continue;
            };
            let tmax = c
                .trace
                .iter()
                .map(|q| q.t.as_secs_f64())
                .fold(0.1, f64::max);
            let mut chart = ChartBuilder::on(&panels[i * cols + j])
                .caption(
                    format!("{rule}: {scenario}, P={p}, k={k}"),
                    ("sans-serif", 16),
                )
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(40)
                .build_cartesian_2d(0.0..tmax * 1.02, 0.0..p as f64 * 1.05)?;
            chart
                .configure_mesh()
                .x_desc("s")
                .y_desc("team size")
                .draw()?;
            for job in 0..k {
                let pts: Vec<(f64, f64)> = c
                    .trace
                    .iter()
                    .filter(|q| q.job == job)
                    .map(|q| (q.t.as_secs_f64(), q.team as f64))
                    .collect();
                chart.draw_series(LineSeries::new(pts, Palette99::pick(job).stroke_width(1)))?;
            }
        }
    }
    root.present()?;
    Ok(())
}
