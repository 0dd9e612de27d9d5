//! Feitelson and Rudolph's experiments 2 and 4 on this machine: gangs of `n` threads loop
//! `GRAIN + U(0, VAR)` microseconds of work, then a barrier; `--load` such gangs compete for the
//! CPUs. Methods:
//!
//! - `gang-spin`: each gang is an asat-core runtime with the gang policy (one shared
//!   `GangScheduler`); barriers busy-wait.
//! - `os-spin`: the same threads (pinned the same way: member `i` on CPU `i`), a pure
//!   busy-waiting barrier, and the OS's own scheduling.
//! - `os-block`: the same threads with std's blocking `Barrier`.
//!
//! With `--processes` every gang is a process of its own (this program started again in a
//! hidden child mode, one per gang and cell): a gang-spin gang is then a runtime with the gang
//! policy on a `GangScheduler` of its own process that joins a shared gang domain
//! (`shared_dir`: a folder made for the run under the temporary folder, mode 0700, removed at
//! the end), so the gangs' processes are gang-scheduled against each other, one of them
//! elected to rotate the rows; os-spin and os-block gangs run one per process too, so the
//! comparison stays fair. The switch time of the model (`tau_cs`) is then the elected
//! process's domain stop time (`GangStats::mean_domain_stop_time`: from the stop's
//! announcement to the last process's acknowledgement). The protocol between the processes:
//! the `processes` module. Same CSV, model and plots.
//!
//! ```text
//! cargo run --release -p asat-lab --bin gang_sync -- --load 1,2,3,4 \
//!     --grains-us 5,10,20,50,100,200,500,1000 --var-equal-grain --iterations 50000 \
//!     --out out/gang
//! ```
//!
//! Each cell runs until the gangs have done `--iterations` iterations on average or for
//! `--max-seconds`, after a warm-up, and reports the wall time per iteration (and, for
//! gang-spin, the mean and longest coordinated-switch stop time, in the progress lines and
//! summed up after the table). The grid runs
//! `--reps` times round and each cell reports its median run; the load-1 gang-spin cells (the
//! model's dedicated time) run `--baseline-reps` times per round (default 3). It writes
//! `DIR/gang.csv` (`method,load,grain_us,var_us,time_per_iter_us,model_us`) and `DIR/gang.svg`:
//! time per iteration against grain at load 3 (the paper's Figure 5), the ratio os-block /
//! gang-spin per load (Figure 6), and time against load at the finest grain (Figure 8).
//!
//! The model column uses the paper's equations (6) gang-spin, (8) os-spin and (12) os-block,
//! and every prediction at a load `l` is made without any measurement taken at load `l`:
//!
//! - `t_p + t_w` (the dedicated time at grain `g`): for `l >= 2`, the gang-spin time at load 1
//!   and grain `g` (the median of `--reps` x `--baseline-reps` runs); for `l = 1`, the gang-spin
//!   time at the lowest other load `l'`, through eq. 6 inverted
//!   (`T(l') / (l' (1 + tau_cs / tau_q))`). `t_w = VAR (n/(n+1) - 1/2)`, `t_p` the rest.
//! - eq. 6: `tau_q` is the gang quantum (configured); `tau_cs` the mean coordinated-switch stop
//!   time over the gang-spin cells at the loads other than `l`. Since `tau_cs / tau_q` is a
//!   fraction of a percent, eq. 6 is in effect a check that gang-spin time grows linearly with
//!   the load from the baseline load.
//! - eq. 12: the blocking cost `(n - 1)/n alpha tau_cs` is the processor time one episode of
//!   the blocking barrier costs each thread, measured at start-up with no work between
//!   episodes (the model charges blocking as processor time the gangs share, not as wake-up
//!   latency, which the other gangs' work overlaps).
//! - eq. 8: `tau_q` is the kernel's base slice (3 ms unless
//!   `/sys/kernel/debug/sched/base_slice_ns` says otherwise), `tau_cs = 0`.
//!
//! The error of each equation is printed as a grain x load table for every load measured, and
//! written to `DIR/gang_model.csv`
//! (`load,grain_us,method,equation,measured_us,model_us,error_pct,t_p_us,t_w_us,tau_q_us,tau_cs_us,dedicated_from_load`).

mod cell;
mod model;
mod plot;
mod processes;
mod report;
mod work;

use std::path::PathBuf;
use std::time::Instant;

use asat::gang::{GangScheduler, Model, MAX_QUANTUM, MIN_QUANTUM};
use asat_lab::files;
use asat_peers::cli::{dedup_in_order, number_up_to, seconds_up_to_a_day};
use asat_peers::procs::Relaunch;
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;

use cell::CellResult;
use model::{add_model, baseline_method, os_slice_us, print_model_check, write_model_csv};
use plot::plot;
use report::{print_table, summary, write_csv};
use work::{block_barrier_cpu_us, Work};

#[derive(Parser, Debug)]
#[command(
    about = "Gang scheduling vs OS scheduling for fine-grain barrier loops (Feitelson & Rudolph 1992)"
)]
struct Args {
    /// Numbers of competing gangs (each 1 ..= 64).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4", value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_LOAD))]
    load: Vec<usize>,
    /// GRAIN values: microseconds of work per iteration. The default adds 1 and 2 us to the
    /// paper-like range: on a machine whose blocking hand-off costs a few microseconds, that is
    /// where the fine-grain regime of the paper (grain below the blocking cost) lies. Each
    /// above 0 and at most 1000000.
    #[arg(
        long = "grains-us",
        value_delimiter = ',',
        default_value = "1,2,5,10,20,50,100,200,500,1000",
        allow_negative_numbers = true,
        value_parser = grain_us
    )]
    grains_us: Vec<f64>,
    /// VAR = GRAIN (the paper's experiment 2); otherwise VAR is --var-us.
    #[arg(long, conflicts_with = "var_us")]
    var_equal_grain: bool,
    /// VAR in microseconds when --var-equal-grain is not given (0 ..= 1000000).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true, value_parser = var_us)]
    var_us: f64,
    /// Iterations per gang per cell (on average over the gangs); a cell also ends at
    /// --max-seconds.
    #[arg(long, default_value_t = 50_000)]
    iterations: u64,
    /// The longest a cell measures, in seconds (after its warm-up; above 0, at most 86400).
    #[arg(long, default_value_t = 0.8, allow_negative_numbers = true, value_parser = seconds_up_to_a_day)]
    max_seconds: f64,
    /// Repetitions of each cell (the whole grid is run this many times; 1 ..= 10000); the
    /// median is reported.
    #[arg(long, default_value_t = 1, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    reps: usize,
    /// Runs of each load-1 baseline cell (gang-spin, or os-spin when gang-spin is not among
    /// --methods) in each round of the grid (1 ..= 100): the dedicated time every model
    /// prediction at loads 2 and up starts from is the median of --reps x this many runs.
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=100))]
    baseline_reps: usize,
    /// Methods to compare: gang-spin, os-spin, os-block.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "gang-spin,os-spin,os-block",
        value_parser = PossibleValuesParser::new(METHODS)
    )]
    methods: Vec<String>,
    /// Threads per gang (default: the CPUs this process may use).
    #[arg(long)]
    threads: Option<usize>,
    /// The gang scheduler's quantum in milliseconds (0.1 ..= 10000).
    #[arg(long, default_value_t = 20.0, allow_negative_numbers = true, value_parser = quantum_ms)]
    quantum_ms: f64,
    /// Run every gang as its own process: gang-spin gangs then meet in a shared gang domain
    /// made for this run (see the docs); os-spin and os-block gangs run one per process too.
    #[arg(long)]
    processes: bool,
    /// Output folder.
    #[arg(long, default_value = "out/gang")]
    out: PathBuf,
    /// Internal (`--processes`): run one gang of a cell, spoken to on stdin and stdout.
    #[arg(long, hide = true)]
    child: bool,
    #[arg(long, hide = true, requires = "child", default_value = "gang-spin", value_parser = PossibleValuesParser::new(METHODS))]
    child_method: String,
    #[arg(long, hide = true, requires = "child", default_value_t = 0)]
    child_gang: usize,
    #[arg(long, hide = true, requires = "child", value_delimiter = ',')]
    child_cpus: Vec<usize>,
    #[arg(long, hide = true, requires = "child", default_value_t = 1000.0)]
    child_loops_per_us: f64,
    #[arg(long, hide = true, requires = "child")]
    child_dir: Option<PathBuf>,
}

const METHODS: [&str; 3] = ["gang-spin", "os-spin", "os-block"];

/// The most competing gangs: each is `--threads` threads.
const MAX_LOAD: u64 = 64;

/// The largest GRAIN and VAR, in microseconds: a second of work per iteration.
const MAX_GRAIN_US: f64 = 1e6;

/// `--grains-us`: microseconds, above 0 and at most [`MAX_GRAIN_US`].
fn grain_us(s: &str) -> Result<f64, String> {
    number_up_to(s, MAX_GRAIN_US, "microseconds")
}

/// `--var-us`: microseconds, 0 to [`MAX_GRAIN_US`].
fn var_us(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=MAX_GRAIN_US).contains(&v) => Ok(v),
        _ => Err(format!(
            "must be a number of microseconds between 0 and {MAX_GRAIN_US}"
        )),
    }
}

/// `--quantum-ms`: milliseconds in the range the gang scheduler allows.
fn quantum_ms(s: &str) -> Result<f64, String> {
    let (lo, hi) = (
        MIN_QUANTUM.as_secs_f64() * 1e3,
        MAX_QUANTUM.as_secs_f64() * 1e3,
    );
    match s.trim().parse::<f64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!(
            "must be a number of milliseconds between {lo} and {hi}"
        )),
    }
}

/// One cell's result: the median of its runs.
#[derive(Clone, Debug)]
struct Row {
    method: String,
    load: usize,
    grain_us: f64,
    var_us: f64,
    time_per_iter_us: f64,
    model_us: Option<f64>,
    /// The model's parameters for this row and the load the dedicated time came from.
    model: Option<(Model, usize)>,
    /// Mean coordinated-switch stop time (gang-spin only), us: the mean of the runs' means
    /// (with `--processes`, the domain stop time of the process that led).
    switch_us: Option<f64>,
    /// The longest stop of any run, us.
    switch_max_us: Option<f64>,
    /// With `--processes`: the processes' own part of a stop (their own threads), mean, us.
    own_stop_us: Option<f64>,
    /// No gang completed an iteration in the window: the time is a lower bound.
    censored: bool,
    /// Every run's time per iteration, us (the row's time is their median).
    runs_us: Vec<f64>,
}

/// One cell of the grid: a method, a load (gangs), gangs of `n` threads, GRAIN and VAR (us).
struct Cell<'a> {
    method: &'a str,
    load: usize,
    n: usize,
    grain: f64,
    var: f64,
}

fn var_for(args: &Args, grain: f64) -> f64 {
    if args.var_equal_grain {
        grain
    } else {
        args.var_us
    }
}

fn run(args: &Args) -> Result<(), String> {
    if args.iterations == 0 {
        return Err("--iterations must be at least 1".into());
    }
    let cpus = GangScheduler::builder()
        .build()
        .map_err(|e| e.to_string())?
        .cpus()
        .to_vec();
    let n = args.threads.unwrap_or(cpus.len());
    if n == 0 || n > cpus.len() {
        return Err(format!(
            "--threads {n}: a gang may have 1 to {} threads (the CPUs this process may use)",
            cpus.len()
        ));
    }
    files::create_dir(&args.out)?;
    let work = Work::calibrate();
    let block_cpu_us = block_barrier_cpu_us(&cpus, n);
    eprintln!(
        "{} CPUs ({:?}), gangs of {n}, quantum {} ms, work calibrated at {:.0} loops/us, \
         blocking barrier {block_cpu_us:.2} us of CPU per thread and episode",
        cpus.len(),
        cpus,
        args.quantum_ms,
        work.loops_per_us
    );
    // With --processes, the gangs' processes share a folder of their own: their counters
    // and the gang-spin gangs' domain.
    let run_dir = match args.processes {
        true => Some(processes::RunDir::new(Relaunch::this_program().map_err(
            |e| format!("cannot find this program to start the gang processes: {e}"),
        )?)?),
        false => None,
    };
    if let Some(d) = &run_dir {
        eprintln!(
            "every gang a process of its own; their folder (gang domain, counters): {}",
            d.path().display()
        );
    }
    let mut loads = args.load.clone();
    loads.sort_unstable();
    loads.dedup();
    let mut cells = Vec::new();
    for &load in &loads {
        for &grain in &args.grains_us {
            for m in &args.methods {
                cells.push(Cell {
                    method: m,
                    load,
                    n,
                    grain,
                    var: var_for(args, grain),
                });
            }
        }
    }
    // The load-1 cells of the baseline method give every model prediction at loads 2 and up
    // its dedicated time: they run --baseline-reps times per round.
    let base_method = baseline_method(&args.methods);
    let runs_of = |c: &Cell<'_>| {
        if c.load == 1 && Some(c.method) == base_method {
            args.baseline_reps
        } else {
            1
        }
    };
    let total = cells.iter().map(runs_of).sum::<usize>() * args.reps;
    let mut done = 0;
    let mut runs: Vec<Vec<CellResult>> = vec![Vec::new(); cells.len()];
    let started = Instant::now();
    // Repetitions go round the whole grid, so that a burst of outside load hits one repetition
    // of several cells rather than every repetition of one cell.
    for _ in 0..args.reps {
        for (k, c) in cells
            .iter()
            .enumerate()
            .flat_map(|(k, c)| std::iter::repeat_n((k, c), runs_of(c)))
        {
            let r = match &run_dir {
                Some(d) => processes::run_cell(args, &cpus, work, c, d)?,
                None => cell::run_cell(args, &cpus, work, c)?,
            };
            let spins = c.method != "os-block";
            done += 1;
            eprintln!(
                "[{:>3}/{total}] {:>6.1}s  {:<9} load {} grain {:>6} us var {:>6} us: {:>10.2}{} us/iter, cpu {:.0}%{}{}",
                done,
                started.elapsed().as_secs_f64(),
                c.method,
                c.load,
                c.grain,
                c.var,
                r.time_us,
                if r.censored { " (no iteration finished: lower bound)" } else { "" },
                100.0 * r.cpu_share,
                switch_note(&r),
                if spins && r.cpu_share < 0.85 {
                    "  ! the spinning threads did not get the CPUs: outside load? (use --reps)"
                } else {
                    ""
                }
            );
            runs[k].push(r);
        }
    }
    let mut rows = Vec::new();
    for (c, mut r) in cells.iter().zip(runs) {
        // The median repetition (the lower middle one for an even count).
        r.sort_by(|a, b| a.time_us.total_cmp(&b.time_us));
        let CellResult {
            time_us: t,
            censored,
            ..
        } = r[(r.len() - 1) / 2];
        let switches: Vec<f64> = r.iter().filter_map(|x| x.switch_us).collect();
        let switch_us =
            (!switches.is_empty()).then(|| switches.iter().sum::<f64>() / switches.len() as f64);
        let switch_max_us = r.iter().filter_map(|x| x.switch_max_us).reduce(f64::max);
        let own: Vec<f64> = r.iter().filter_map(|x| x.own_stop_us).collect();
        let own_stop_us = (!own.is_empty()).then(|| own.iter().sum::<f64>() / own.len() as f64);
        rows.push(Row {
            method: c.method.to_string(),
            load: c.load,
            grain_us: c.grain,
            var_us: c.var,
            time_per_iter_us: t,
            model_us: None,
            model: None,
            switch_us,
            switch_max_us,
            own_stop_us,
            censored,
            runs_us: r.iter().map(|x| x.time_us).collect(),
        });
    }
    let slice = os_slice_us();
    let calibrations = add_model(args, &mut rows, n, block_cpu_us, slice.0);
    write_csv(args, &rows)?;
    write_model_csv(args, &rows)?;
    print_table(&rows);
    print_model_check(args, &rows, &calibrations, n, block_cpu_us, slice);
    println!();
    summary(args, &rows);
    plot(args, &rows).map_err(|e| format!("plot: {e}"))?;
    eprintln!(
        "wrote {}, {} and {}",
        args.out.join("gang.csv").display(),
        args.out.join("gang_model.csv").display(),
        args.out.join("gang.svg").display()
    );
    Ok(())
}

/// The progress line's note on a gang-spin run's switches.
fn switch_note(r: &CellResult) -> String {
    let Some(mean) = r.switch_us else {
        return String::new();
    };
    let max = r
        .switch_max_us
        .map_or(String::new(), |m| format!(" (max {m:.0})"));
    match r.own_stop_us {
        Some(own) => {
            format!(", switch {mean:.0} us{max} across processes, {own:.0} us own threads")
        }
        None => format!(", switch {mean:.0} us{max}"),
    }
}

fn main() {
    let mut args = Args::parse();
    if args.child {
        if let Err(e) = processes::child(&args) {
            eprintln!("gang_sync gang process: {e}");
            std::process::exit(2);
        }
        return;
    }
    dedup_in_order(&mut args.grains_us);
    dedup_in_order(&mut args.methods);
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
