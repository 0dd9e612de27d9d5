//! Figure 3 of Zhou and Brecht (1991): mean job response time against pool size, one line per
//! mean desired parallelism D, from the simulator [`asat_lab::pools_sim`] (the paper's model
//! with Table 2's defaults and the placement functions of [`asat::pools::placement`]).
//!
//! ```text
//! cargo run --release -p asat-lab --bin pools_sim -- --processors 60 --parallelism 10,20 \
//!     --load 0.6 --pool-sizes 1,2,3,4,5,6,10,12,15,20,30,60 --F 0.8 --G 0.5 --reps 10 \
//!     --out out/pools_sim
//! ```
//!
//! Writes `DIR/pools_sim.csv` (`processors,parallelism,load,pool_size,mean_rt,ci_low,ci_high,
//! actual_parallelism,utilization`; the interval is 90%, over independent replications) and
//! `DIR/pools_sim.svg`, and prints the table with A, the mean actual parallelism averaged over
//! the pool sizes (as the paper reports it).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use asat::pools::placement::Params;
use asat_lab::files;
use asat_lab::pools_sim::{self as sim, Config, RunResult, Summary};
use asat_peers::cli::dedup_in_order;
use clap::builder::RangedU64ValueParser;
use clap::Parser;
use plotters::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "Figure 3 of Zhou and Brecht (1991): mean response time against pool size")]
struct Args {
    /// P: processors (1 ..= 1000000).
    #[arg(long, default_value_t = 60, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    processors: usize,
    /// D: mean desired parallelism, one line each.
    #[arg(long, value_delimiter = ',', default_value = "10,20")]
    parallelism: Vec<f64>,
    /// L: load level (utilization without overheads).
    #[arg(long, default_value_t = 0.6)]
    load: f64,
    /// Pool sizes p (each must divide P).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,3,4,5,6,10,12,15,20,30,60"
    )]
    pool_sizes: Vec<usize>,
    /// F: spanning control.
    #[arg(long = "F", default_value_t = 0.8)]
    f: f64,
    /// G: least actual parallelism, as a fraction of d.
    #[arg(long = "G", default_value_t = 0.5)]
    g: f64,
    /// Independent replications per point (1 ..= 100000).
    #[arg(long, default_value_t = 10, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100_000))]
    reps: usize,
    /// Jobs measured per replication (1 ..= 10000000).
    #[arg(long, default_value_t = 20_000, value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_JOBS))]
    jobs: usize,
    /// Jobs discarded at the start of each replication (0 ..= 10000000).
    #[arg(long, default_value_t = 2_000, value_parser = RangedU64ValueParser::<usize>::new().range(0..=MAX_JOBS))]
    warmup: usize,
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads running replications, 1 ..= 1024 (default: the CPUs available).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1024))]
    threads: Option<usize>,
    /// Output folder.
    #[arg(long, default_value = "out/pools_sim")]
    out: PathBuf,
}

/// The most jobs measured, and the most discarded, per replication: a replication keeps a
/// record of each of its jobs.
const MAX_JOBS: u64 = 10_000_000;

struct Point {
    cfg: Config,
    summary: Summary,
}

fn main() {
    let mut args = Args::parse();
    dedup_in_order(&mut args.parallelism);
    dedup_in_order(&mut args.pool_sizes);
    if let Err(e) = run(&args) {
        eprintln!("pools_sim: {e}");
        std::process::exit(2);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut configs = Vec::new();
    for &d in &args.parallelism {
        for &p in &args.pool_sizes {
            let mut c = Config::paper(args.processors, p, d, args.load);
            c.params = Params {
                f: args.f,
                g: args.g,
            };
            c.jobs = args.jobs;
            c.warmup_jobs = args.warmup;
            c.seed = args.seed;
            c.validate()?;
            configs.push(c);
        }
    }
    files::create_dir(&args.out)?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let tasks = configs.len() * args.reps;
    eprintln!(
        "pools_sim: {} points x {} replications x {} jobs on {threads} threads",
        configs.len(),
        args.reps,
        args.jobs
    );
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Vec<Option<RunResult>>>> =
        Mutex::new(vec![vec![None; args.reps]; configs.len()]);
    let finished = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let t = next.fetch_add(1, Ordering::Relaxed);
                if t >= tasks {
                    break;
                }
                let (ci, rep) = (t / args.reps, t % args.reps);
                let mut c = configs[ci].clone();
                c.seed = sim::replication_seed(configs[ci].seed, rep);
                let r = sim::run(&c).expect("validated");
                let mut res = results.lock().unwrap();
                res[ci][rep] = Some(r);
                let done = finished.fetch_add(1, Ordering::Relaxed) + 1;
                if res[ci].iter().all(Option::is_some) {
                    let runs: Vec<RunResult> = res[ci].iter().flatten().copied().collect();
                    let s = sim::summarize(&runs);
                    let el = start.elapsed().as_secs_f64();
                    eprintln!(
                        "[{done:>4}/{tasks}] {:5.1}s  D={:<4} p={:<3} mean RT {:7.1}  A {:5.2}  \
                         eta {:.0}s",
                        el,
                        c.parallelism,
                        c.pool_size,
                        s.mean_rt,
                        s.actual_parallelism,
                        el / done as f64 * (tasks - done) as f64
                    );
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let points: Vec<Point> = configs
        .into_iter()
        .zip(results)
        .map(|(cfg, runs)| {
            let runs: Vec<RunResult> = runs.into_iter().flatten().collect();
            Point {
                cfg,
                summary: sim::summarize(&runs),
            }
        })
        .collect();
    eprintln!("pools_sim: done in {:.1}s", start.elapsed().as_secs_f64());
    let csv = args.out.join("pools_sim.csv");
    write_csv(&csv, &points).map_err(|e| format!("{}: {e}", csv.display()))?;
    print_table(args, &points);
    plot(args, &points).map_err(|e| format!("plot: {e}"))?;
    println!(
        "wrote {} and {}",
        args.out.join("pools_sim.csv").display(),
        args.out.join("pools_sim.svg").display()
    );
    Ok(())
}

fn write_csv(path: &std::path::Path, points: &[Point]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    writeln!(
        f,
        "processors,parallelism,load,pool_size,mean_rt,ci_low,ci_high,actual_parallelism,utilization"
    )?;
    for p in points {
        let (c, s) = (&p.cfg, &p.summary);
        writeln!(
            f,
            "{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.4}",
            c.processors,
            c.parallelism,
            c.load,
            c.pool_size,
            s.mean_rt,
            s.ci_low,
            s.ci_high,
            s.actual_parallelism,
            s.utilization
        )?;
    }
    Ok(())
}

fn print_table(args: &Args, points: &[Point]) {
    println!(
        "P={} L={} F={} G={}, {} replications x {} jobs (after {} warm-up); 90% CI",
        args.processors, args.load, args.f, args.g, args.reps, args.jobs, args.warmup
    );
    println!(
        "{:>5} {:>5} {:>9} {:>19} {:>6} {:>6}",
        "D", "p", "mean RT", "90% CI", "A", "U"
    );
    for &d in &args.parallelism {
        let rows: Vec<&Point> = points.iter().filter(|p| p.cfg.parallelism == d).collect();
        for p in &rows {
            let s = &p.summary;
            println!(
                "{:>5} {:>5} {:>9.1} [{:>7.1}, {:>7.1}] {:>6.2} {:>6.3}",
                d,
                p.cfg.pool_size,
                s.mean_rt,
                s.ci_low,
                s.ci_high,
                s.actual_parallelism,
                s.utilization
            );
        }
        let a = rows
            .iter()
            .map(|p| p.summary.actual_parallelism)
            .sum::<f64>()
            / rows.len() as f64;
        let min = rows
            .first()
            .map_or(f64::NAN, |p| p.cfg.minimum_response_time());
        println!(
            "D={d}: A averaged over pool sizes = {a:.2}; minimum response time (no overheads, \
             a = d) = {min:.1}"
        );
    }
}

fn plot(args: &Args, points: &[Point]) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("pools_sim.svg");
    let root = SVGBackend::new(&path, (760, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let ymax = points.iter().map(|p| p.summary.ci_high).fold(0.0, f64::max) * 1.08;
    let xmax = args.pool_sizes.iter().copied().max().unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Processor pools: P={}, L={}, F={}, G={} ({} reps, 90% CI)",
                args.processors, args.load, args.f, args.g, args.reps
            ),
            ("sans-serif", 18),
        )
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..xmax * 1.03, 0.0..ymax)?;
    chart
        .configure_mesh()
        .x_desc("pool size p")
        .y_desc("mean response time")
        .draw()?;
    for (i, &d) in args.parallelism.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let rows: Vec<&Point> = points.iter().filter(|p| p.cfg.parallelism == d).collect();
        let a = rows
            .iter()
            .map(|p| p.summary.actual_parallelism)
            .sum::<f64>()
            / rows.len() as f64;
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .map(|p| (p.cfg.pool_size as f64, p.summary.mean_rt))
            .collect();
        asat_peers::plot::series(&mut chart, format!("D={d} (A={a:.1})"), color, &pts, true)?;
        chart.draw_series(rows.iter().map(|p| {
            let x = p.cfg.pool_size as f64;
            PathElement::new(
                vec![(x, p.summary.ci_low), (x, p.summary.ci_high)],
                color.stroke_width(1),
            )
        }))?;
        if let Some(p) = rows.first() {
            let m = p.cfg.minimum_response_time();
            chart
                .draw_series(LineSeries::new(
                    vec![(0.0, m), (xmax * 1.03, m)],
                    color.mix(0.5).stroke_width(1),
                ))?
                .label(format!("D={d}: minimum {m:.0}"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.mix(0.5).stroke_width(1))
                });
        }
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    root.present()?;
    Ok(())
}
