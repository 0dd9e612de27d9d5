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
//! ```text
//! cargo run --release --example gang_sync -- --load 1,2,3,4 \
//!     --grains-us 5,10,20,50,100,200,500,1000 --var-equal-grain --iterations 50000 --out out/gang
//! ```
//!
//! Each cell runs until the gangs have done `--iterations` iterations on average or for
//! `--max-seconds`, after a warm-up, and reports the wall time per iteration. The grid runs
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

use rand::{rngs::StdRng, RngExt, SeedableRng};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use asat::gang::{GangScheduler, Model, MAX_QUANTUM, MIN_QUANTUM};
use asat::{CpuSet, Runtime};
use asat_peers::cli::{dedup_in_order, number_up_to, seconds_up_to_a_day};
use asat_peers::spin::SpinBarrier;
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;
use plotters::prelude::*;

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
    /// Output folder.
    #[arg(long, default_value = "out/gang")]
    out: PathBuf,
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
    /// Mean coordinated-switch stop time (gang-spin only), us.
    switch_us: Option<f64>,
    /// No gang completed an iteration in the window: the time is a lower bound.
    censored: bool,
    /// Every run's time per iteration, us (the row's time is their median).
    runs_us: Vec<f64>,
}

/// The paper's equation for a method.
fn equation(method: &str) -> &'static str {
    match method {
        "gang-spin" => "eq. 6",
        "os-spin" => "eq. 8",
        "os-block" => "eq. 12",
        _ => "-",
    }
}

/// The method whose load-1 time is the dedicated time of the model: gang-spin, or os-spin
/// when gang-spin is not run.
fn baseline_method(methods: &[String]) -> Option<&'static str> {
    ["gang-spin", "os-spin"]
        .into_iter()
        .find(|m| methods.iter().any(|x| x == m))
}

/// Calibrated busy work: `work(us)` computes for about `us` microseconds of CPU time.
#[derive(Clone, Copy)]
struct Work {
    loops_per_us: f64,
}

#[inline(never)]
fn spin_loops(n: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..n {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
    }
    x
}

impl Work {
    fn calibrate() -> Work {
        let n = 2_000_000u64;
        let mut best = f64::MAX;
        for _ in 0..7 {
            let t = Instant::now();
            std::hint::black_box(spin_loops(n));
            best = best.min(t.elapsed().as_secs_f64() * 1e6);
        }
        Work {
            loops_per_us: n as f64 / best,
        }
    }

    #[inline]
    fn run(&self, us: f64) {
        std::hint::black_box(spin_loops((us * self.loops_per_us) as u64));
    }
}

/// What the members of one gang share in a cell.
struct GangState {
    iters: AtomicU64,
    quit_at: AtomicU64,
}

/// The loop every member runs: work, barrier, until member 0 has seen `stop` (the iteration to
/// quit at is published before a barrier, so every member quits at the same one).
#[allow(clippy::too_many_arguments)]
fn member_loop(
    member: usize,
    seed: u64,
    work: Work,
    grain: f64,
    var: f64,
    gang: &GangState,
    stop: &AtomicBool,
    barrier: &dyn Fn(),
) {
    // One generator per thread for the U(0, VAR) draws.
    let mut rng = StdRng::seed_from_u64(seed);
    let mut j = 0u64;
    loop {
        work.run(
            grain
                + if var > 0.0 {
                    rng.random_range(0.0..var)
                } else {
                    0.0
                },
        );
        if member == 0 {
            if stop.load(Ordering::Relaxed) && gang.quit_at.load(Ordering::Relaxed) == u64::MAX {
                gang.quit_at.store(j + 1, Ordering::Relaxed);
            }
            gang.iters.fetch_add(1, Ordering::Relaxed);
        }
        barrier();
        j += 1;
        if j >= gang.quit_at.load(Ordering::Relaxed) {
            break;
        }
    }
}

/// Pins the calling thread to `cpu` (best effort: a CPU the kernel refuses is ignored).
fn pin(cpu: usize) {
    let _ = CpuSet::from_iter([cpu]).bind_current_thread();
}

struct Cell<'a> {
    method: &'a str,
    load: usize,
    n: usize,
    grain: f64,
    var: f64,
}

/// Runs one cell; returns (time per iteration in us, censored, mean switch stop time in us).
fn run_cell(args: &Args, cpus: &[usize], work: Work, c: &Cell<'_>) -> Result<CellResult, String> {
    let gangs: Vec<GangState> = (0..c.load)
        .map(|_| GangState {
            iters: AtomicU64::new(0),
            quit_at: AtomicU64::new(u64::MAX),
        })
        .collect();
    let stop = AtomicBool::new(false);
    let quantum = Duration::from_secs_f64(args.quantum_ms / 1e3);
    let sched = if c.method == "gang-spin" {
        Some(
            GangScheduler::builder()
                .quantum(quantum)
                .cpus(cpus.iter().copied().collect())
                .build()
                .map_err(|e| e.to_string())?,
        )
    } else {
        None
    };
    let runtimes: Vec<Runtime> = match &sched {
        Some(s) => (0..c.load)
            .map(|_| {
                Runtime::builder()
                    .max_threads(c.n)
                    .policy(s.policy())
                    .build()
            })
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    let spin_barriers: Vec<SpinBarrier> = (0..c.load).map(|_| SpinBarrier::new(c.n)).collect();
    let block_barriers: Vec<Barrier> = (0..c.load).map(|_| Barrier::new(c.n)).collect();
    let warmup = Duration::from_secs_f64((0.1f64).max(3.0 * c.load as f64 * args.quantum_ms / 1e3));
    let window = Duration::from_secs_f64(args.max_seconds);
    let (grain, var) = (c.grain, c.var);
    let result = std::thread::scope(|s| {
        for g in 0..c.load {
            let (gang, stop) = (&gangs[g], &stop);
            match c.method {
                "gang-spin" => {
                    let rt = &runtimes[g];
                    s.spawn(move || {
                        rt.region(|team| {
                            let m = team.index();
                            member_loop(
                                m,
                                (g * 1000 + m) as u64 + 7,
                                work,
                                grain,
                                var,
                                gang,
                                stop,
                                &|| team.barrier(),
                            );
                        })
                    });
                }
                method => {
                    for m in 0..c.n {
                        let cpu = cpus[m % cpus.len()];
                        let spin = &spin_barriers[g];
                        let block = &block_barriers[g];
                        let blocking = method == "os-block";
                        s.spawn(move || {
                            pin(cpu);
                            let barrier = || {
                                if blocking {
                                    block.wait();
                                } else {
                                    spin.wait();
                                }
                            };
                            member_loop(
                                m,
                                (g * 1000 + m) as u64 + 7,
                                work,
                                grain,
                                var,
                                gang,
                                stop,
                                &barrier,
                            );
                        });
                    }
                }
            }
        }
        std::thread::sleep(warmup);
        let count = || {
            gangs
                .iter()
                .map(|g| g.iters.load(Ordering::Relaxed))
                .sum::<u64>()
        };
        let c0 = count();
        let stats0 = sched.as_ref().map(|s| s.stats());
        let cpu0 = process_cpu_seconds();
        let t0 = Instant::now();
        let target = args.iterations.saturating_mul(c.load as u64);
        while t0.elapsed() < window && count() - c0 < target {
            std::thread::sleep(Duration::from_millis(5));
        }
        let elapsed = t0.elapsed();
        let cpu_share =
            (process_cpu_seconds() - cpu0) / (elapsed.as_secs_f64() * cpus.len() as f64);
        let done = count() - c0;
        let stats1 = sched.as_ref().map(|s| s.stats());
        stop.store(true, Ordering::Relaxed);
        let switch_us = match (stats0, stats1) {
            (Some(a), Some(b)) if b.timed_switches > a.timed_switches => Some(
                (b.stop_time_total - a.stop_time_total).as_secs_f64() * 1e6
                    / (b.timed_switches - a.timed_switches) as f64,
            ),
            _ => None,
        };
        let mean_iters = done as f64 / c.load as f64;
        CellResult {
            time_us: elapsed.as_secs_f64() * 1e6 / mean_iters.max(1.0),
            censored: mean_iters == 0.0,
            switch_us,
            cpu_share,
        }
    });
    drop(runtimes);
    Ok(result)
}

/// What one run of a cell measured.
#[derive(Clone, Copy, Debug)]
struct CellResult {
    /// Wall time per iteration of a gang, us.
    time_us: f64,
    /// No gang finished an iteration in the window (`time_us` is then a lower bound).
    censored: bool,
    /// Mean coordinated-switch stop time (gang-spin), us.
    switch_us: Option<f64>,
    /// The process's CPU time over the window divided by wall time times CPUs. Busy-waiting
    /// methods use every CPU they are given, so well under 1 means outside load took CPUs.
    cpu_share: f64,
}

/// User plus system CPU time of this process, seconds.
fn process_cpu_seconds() -> f64 {
    cpu_seconds(libc::RUSAGE_SELF)
}

/// User plus system CPU time of `who` (`RUSAGE_SELF`: every thread of the process;
/// `RUSAGE_THREAD`: the calling thread), seconds.
fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: all-zeroes is a valid rusage for getrusage to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage; `who` is RUSAGE_SELF or RUSAGE_THREAD.
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The processor time one episode of the os-block barrier costs each thread, in microseconds:
/// `n` threads pinned as in the experiment pass `std::sync::Barrier` with no work between, and
/// their own CPU time (user + system) is divided by episodes times threads. Median of five
/// (single runs on this VM range from 3 to 8 us).
///
/// This is the blocking cost of the model's eq. 12, `(n - 1)/n alpha tau_cs` per thread and
/// iteration: the model charges blocking as processor time that the `l` gangs share, not as
/// wake-up latency, which on a loaded machine the other gangs' work overlaps. (Measured with a
/// compute-bound thread beside each member instead, the cost came out higher, 8.5-9.8 us, and
/// the model further from the load-3 data.)
fn block_barrier_cpu_us(cpus: &[usize], n: usize) -> f64 {
    let mut runs: Vec<f64> = (0..5).map(|_| block_barrier_cpu_once(cpus, n)).collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn block_barrier_cpu_once(cpus: &[usize], n: usize) -> f64 {
    const EPISODES: u32 = 5_000;
    let barrier = Barrier::new(n);
    std::thread::scope(|s| {
        let members: Vec<_> = (0..n)
            .map(|m| cpus[m % cpus.len()])
            .map(|cpu| {
                let barrier = &barrier;
                s.spawn(move || {
                    pin(cpu);
                    barrier.wait();
                    let cpu0 = cpu_seconds(libc::RUSAGE_THREAD);
                    for _ in 0..EPISODES {
                        barrier.wait();
                    }
                    cpu_seconds(libc::RUSAGE_THREAD) - cpu0
                })
            })
            .collect();
        let total: f64 = members.into_iter().map(|h| h.join().unwrap()).sum();
        total * 1e6 / (f64::from(EPISODES) * n as f64)
    })
}

/// The kernel's base time slice, for the os-spin model, us, and where it came from.
fn os_slice_us() -> (f64, &'static str) {
    std::fs::read_to_string("/sys/kernel/debug/sched/base_slice_ns")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map_or((3000.0, "EEVDF default; debugfs not readable"), |ns| {
            (ns / 1e3, "/sys/kernel/debug/sched/base_slice_ns")
        })
}

fn var_for(args: &Args, grain: f64) -> f64 {
    if args.var_equal_grain {
        grain
    } else {
        args.var_us
    }
}

/// Where one load's model inputs came from.
struct Calibration {
    load: usize,
    /// eq. 6's `tau_cs`: the mean coordinated-switch stop time over the gang-spin cells at
    /// `tau_cs_loads` (never `load`), us; 0 when there are none.
    tau_cs: f64,
    tau_cs_loads: Vec<usize>,
    tau_cs_cells: usize,
    /// The loads the dedicated time was taken from (one per grain; normally a single load).
    baseline_loads: Vec<usize>,
}

/// Fills in the model column, each load from the other loads' rows (see the module docs).
fn add_model(
    args: &Args,
    rows: &mut [Row],
    n: usize,
    block_cpu_us: f64,
    slice_us: f64,
) -> Vec<Calibration> {
    let tau_q = args.quantum_ms * 1e3;
    let Some(base_method) = baseline_method(&args.methods) else {
        return Vec::new();
    };
    let mut loads: Vec<usize> = rows.iter().map(|r| r.load).collect();
    loads.sort_unstable();
    loads.dedup();
    let snapshot = rows.to_vec();
    let time = |m: &str, l: usize, g: f64| {
        snapshot
            .iter()
            .find(|r| r.method == m && r.load == l && r.grain_us == g && !r.censored)
            .map(|r| r.time_per_iter_us)
    };
    let mut calibrations = Vec::new();
    for &load in &loads {
        let others: Vec<&Row> = snapshot
            .iter()
            .filter(|r| r.load != load && r.method == "gang-spin")
            .filter(|r| r.switch_us.is_some())
            .collect();
        let tau_cs = if others.is_empty() {
            0.0
        } else {
            others.iter().filter_map(|r| r.switch_us).sum::<f64>() / others.len() as f64
        };
        let mut tau_cs_loads: Vec<usize> = others.iter().map(|r| r.load).collect();
        tau_cs_loads.dedup();
        let mut baseline_loads = Vec::new();
        for r in rows.iter_mut().filter(|r| r.load == load) {
            let g = r.grain_us;
            // The dedicated time at grain g, from another load: load 1 if this is not load 1,
            // else gang-spin at the lowest other load through eq. 6 inverted.
            let from_load_1 = (load != 1)
                .then(|| time(base_method, 1, g))
                .flatten()
                .map(|t| (1, t));
            let Some((from, dedicated)) = from_load_1.or_else(|| {
                loads
                    .iter()
                    .filter(|&&l| l != load && l >= 2)
                    .find_map(|&l| {
                        time("gang-spin", l, g)
                            .map(|t| (l, t / (l as f64 * (1.0 + tau_cs / tau_q))))
                    })
            }) else {
                continue;
            };
            if !baseline_loads.contains(&from) {
                baseline_loads.push(from);
            }
            let (_, t_w) = Model::synthetic(g, r.var_us, 0.0, n as u32);
            let base = Model {
                t_p: (dedicated - t_w).max(0.0),
                t_w,
                n: n as u32,
                load: r.load as f64,
                tau_q,
                tau_cs,
                alpha: 1.0,
            };
            let (model, predicted) = match r.method.as_str() {
                "gang-spin" => (base, base.gang_spin()),
                "os-spin" => {
                    let m = Model {
                        tau_q: slice_us,
                        tau_cs: 0.0,
                        ..base
                    };
                    (m, m.os_spin())
                }
                "os-block" => {
                    let m = Model {
                        // eq. 12 charges (n - 1)/n alpha tau_cs per thread and iteration.
                        tau_cs: block_cpu_us * n as f64 / (n as f64 - 1.0).max(1.0),
                        alpha: 1.0,
                        ..base
                    };
                    (m, m.os_block())
                }
                _ => continue,
            };
            r.model = Some((model, from));
            r.model_us = Some(predicted);
        }
        calibrations.push(Calibration {
            load,
            tau_cs,
            tau_cs_loads,
            tau_cs_cells: others.len(),
            baseline_loads,
        });
    }
    calibrations
}

/// `DIR/gang_model.csv`: one line per cell with a model value.
fn write_model_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let path = args.out.join("gang_model.csv");
    let mut s = String::from(
        "load,grain_us,method,equation,measured_us,model_us,error_pct,\
         t_p_us,t_w_us,tau_q_us,tau_cs_us,dedicated_from_load\n",
    );
    for r in rows {
        let (Some(m), Some((p, from))) = (r.model_us, r.model) else {
            continue;
        };
        let _ = writeln!(
            s,
            "{},{},{},{},{:.3},{:.3},{:.1},{:.3},{:.3},{:.1},{:.3},{}",
            r.load,
            r.grain_us,
            r.method,
            equation(&r.method),
            r.time_per_iter_us,
            m,
            error_pct(r).unwrap_or(f64::NAN),
            p.t_p,
            p.t_w,
            p.tau_q,
            p.alpha * p.tau_cs,
            from
        );
    }
    std::fs::write(&path, s).map_err(|e| format!("{}: {e}", path.display()))
}

/// The model's error for a row, percent of the measurement (`None` without a model value).
fn error_pct(r: &Row) -> Option<f64> {
    r.model_us
        .map(|m| 100.0 * (m - r.time_per_iter_us) / r.time_per_iter_us)
}

/// Where every model input came from, then each equation's error by grain and load.
#[allow(clippy::too_many_arguments)]
fn print_model_check(
    args: &Args,
    rows: &[Row],
    calibrations: &[Calibration],
    n: usize,
    block_cpu_us: f64,
    slice: (f64, &str),
) {
    let Some(base_method) = baseline_method(&args.methods) else {
        return;
    };
    let tau_q = args.quantum_ms * 1e3;
    let mut grains = args.grains_us.clone();
    grains.sort_by(f64::total_cmp);
    println!();
    println!("model inputs (a prediction at load l uses no measurement taken at load l):");
    let baseline: Vec<String> = grains
        .iter()
        .filter_map(|&g| {
            let r = rows
                .iter()
                .find(|r| r.method == base_method && r.load == 1 && r.grain_us == g)?;
            let lo = r.runs_us.iter().copied().fold(f64::MAX, f64::min);
            let hi = r.runs_us.iter().copied().fold(f64::MIN, f64::max);
            Some(format!("{g}: {:.2} [{lo:.2}-{hi:.2}]", r.time_per_iter_us))
        })
        .collect();
    if !baseline.is_empty() {
        let runs = rows
            .iter()
            .find(|r| r.method == base_method && r.load == 1)
            .map_or(0, |r| r.runs_us.len());
        println!(
            "  dedicated time t_p + t_w, loads >= 2: {base_method} at load 1, median of {runs} runs \
             [min-max], us, by grain: {}",
            baseline.join(", ")
        );
    }
    for c in calibrations {
        let from: Vec<String> = c.baseline_loads.iter().map(|l| l.to_string()).collect();
        let how = if c.baseline_loads.iter().all(|&l| l == 1) {
            format!("{base_method} at load 1")
        } else {
            format!(
                "gang-spin at load {} / (load (1 + tau_cs/tau_q)) (eq. 6 inverted)",
                from.join(",")
            )
        };
        let tau = if c.tau_cs_cells == 0 {
            "tau_cs = 0 (no gang-spin switch measured at another load)".to_string()
        } else {
            let ls: Vec<String> = c.tau_cs_loads.iter().map(|l| l.to_string()).collect();
            format!(
                "tau_cs = {:.1} us = mean switch stop time of the {} gang-spin cells at load{} {} \
                 (tau_cs/tau_q = {:.2}%)",
                c.tau_cs,
                c.tau_cs_cells,
                if ls.len() > 1 { "s" } else { "" },
                ls.join(","),
                100.0 * c.tau_cs / tau_q
            )
        };
        println!("  load {}: dedicated time from {how}; eq. 6 {tau}", c.load);
    }
    println!("  t_w = VAR (n/(n+1) - 1/2) with n = {n} (analytic); t_p = dedicated time - t_w");
    println!(
        "  eq. 6: tau_q = {tau_q:.0} us (the gang quantum, configured); eq. 8: tau_q = {:.0} us \
         (kernel base slice: {}), tau_cs = 0; eq. 12: (n-1)/n alpha tau_cs = {block_cpu_us:.2} us \
         (blocking-barrier CPU per thread and episode, start-up microbenchmark)",
        slice.0, slice.1
    );
    if let Some(c) = calibrations.iter().find(|c| c.tau_cs_cells > 0) {
        println!(
            "  note: eq. 6 predicts (dedicated time) x l x (1 + tau_cs/tau_q), and tau_cs/tau_q \
             is about {:.2}% here: it is in effect a check that gang-spin time grows linearly \
             with the load from the baseline load, not a test of the switch-cost term",
            100.0 * c.tau_cs / tau_q
        );
    }
    let mut loads: Vec<usize> = rows.iter().map(|r| r.load).collect();
    loads.sort_unstable();
    loads.dedup();
    for m in METHODS {
        if !rows.iter().any(|r| r.method == m && r.model_us.is_some()) {
            continue;
        }
        println!();
        println!(
            "{} ({m}) model error, % of measured, by grain (rows) and load (columns):",
            equation(m)
        );
        let mut head = format!("{:>9}", "grain_us");
        for l in &loads {
            let _ = write!(head, " {:>7}", format!("l={l}"));
        }
        println!("{head}");
        for &g in &grains {
            let mut line = format!("{g:>9}");
            for &l in &loads {
                let e = rows
                    .iter()
                    .find(|r| r.method == m && r.load == l && r.grain_us == g)
                    .and_then(error_pct);
                let _ = write!(
                    line,
                    " {:>7}",
                    e.map_or(String::from("-"), |e| format!("{e:+.0}"))
                );
            }
            println!("{line}");
        }
        let mut within = format!("{:>9}", "<=25%");
        let mut med = format!("{:>9}", "median");
        for &l in &loads {
            let errs: Vec<f64> = rows
                .iter()
                .filter(|r| r.method == m && r.load == l)
                .filter_map(error_pct)
                .collect();
            let ok = errs.iter().filter(|e| e.abs() <= 25.0).count();
            let _ = write!(within, " {:>7}", format!("{ok}/{}", errs.len()));
            let _ = write!(
                med,
                " {:>7}",
                if errs.is_empty() {
                    String::from("-")
                } else {
                    format!("{:+.0}", asat_peers::stats::median(errs))
                }
            );
        }
        println!("{within}");
        println!("{med}");
    }
}

fn write_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let path = args.out.join("gang.csv");
    let mut s = String::from("method,load,grain_us,var_us,time_per_iter_us,model_us\n");
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{:.3},{}",
            r.method,
            r.load,
            r.grain_us,
            r.var_us,
            r.time_per_iter_us,
            r.model_us.map_or(String::new(), |m| format!("{m:.3}"))
        );
    }
    std::fs::write(&path, s).map_err(|e| format!("{}: {e}", path.display()))
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<10} {:>5} {:>9} {:>8} {:>14} {:>10} {:>8}",
        "method", "load", "grain_us", "var_us", "us/iter", "model_us", "err%"
    );
    for r in rows {
        let err = r.model_us.map_or(String::from("-"), |m| {
            format!(
                "{:+.0}",
                100.0 * (m - r.time_per_iter_us) / r.time_per_iter_us
            )
        });
        println!(
            "{:<10} {:>5} {:>9} {:>8} {:>13.2}{} {:>10} {:>8}",
            r.method,
            r.load,
            r.grain_us,
            r.var_us,
            r.time_per_iter_us,
            if r.censored { ">" } else { " " },
            r.model_us.map_or(String::from("-"), |m| format!("{m:.2}")),
            err
        );
    }
}

fn find(rows: &[Row], m: &str, load: usize, g: f64) -> Option<f64> {
    rows.iter()
        .find(|r| r.method == m && r.load == load && r.grain_us == g)
        .map(|r| r.time_per_iter_us)
}

fn summary(args: &Args, rows: &[Row]) {
    let Some(&load) = args
        .load
        .iter()
        .find(|&&l| l == 3)
        .or(args.load.iter().max())
    else {
        return;
    };
    let mut grains = args.grains_us.clone();
    grains.sort_by(f64::total_cmp);
    let ratio = |g: f64| Some(find(rows, "os-block", load, g)? / find(rows, "gang-spin", load, g)?);
    if let Some(&g0) = grains.first() {
        if let Some(r) = ratio(g0) {
            println!("load {load}, finest grain {g0} us: os-block / gang-spin = {r:.2}");
        }
        // A conclusion only where both methods ran at some grain.
        if grains.iter().any(|&g| ratio(g).is_some()) {
            let crossover = grains.iter().find(|&&g| ratio(g).is_some_and(|r| r < 1.0));
            match crossover {
                Some(g) => println!("load {load}: blocking is faster from grain {g} us on"),
                None => {
                    println!("load {load}: gang-spin is at least as fast at every grain measured")
                }
            }
        }
        let mut loads = args.load.clone();
        loads.sort_unstable();
        for m in METHODS {
            let ts: Vec<String> = loads
                .iter()
                .filter_map(|&l| find(rows, m, l, g0).map(|t| format!("{l}:{t:.1}")))
                .collect();
            if !ts.is_empty() {
                println!("{m} at grain {g0} us, us/iter by load: {}", ts.join(" "));
            }
        }
    }
    let mut loads = args.load.clone();
    loads.sort_unstable();
    loads.dedup();
    for m in METHODS {
        let per_load: Vec<String> = loads
            .iter()
            .filter_map(|&l| {
                let errs: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.method == m && r.load == l)
                    .filter_map(error_pct)
                    .collect();
                (!errs.is_empty()).then(|| {
                    let ok = errs.iter().filter(|e| e.abs() <= 25.0).count();
                    format!("l={l}: {ok}/{}", errs.len())
                })
            })
            .collect();
        if !per_load.is_empty() {
            println!(
                "model {} ({m}), cells within 25% by load: {}",
                equation(m),
                per_load.join(", ")
            );
        }
    }
}

fn plot(args: &Args, rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("gang.svg");
    let root = SVGBackend::new(&path, (1560, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, 3));
    let mut grains = args.grains_us.clone();
    grains.sort_by(f64::total_cmp);
    let (gmin, gmax) = (grains[0], grains[grains.len() - 1]);
    let load = args
        .load
        .iter()
        .copied()
        .find(|&l| l == 3)
        .or(args.load.iter().copied().max())
        .unwrap_or(1);
    let colors = |i: usize| Palette99::pick(i).to_rgba();

    // Figure 5: time per iteration against grain at one load.
    let sel: Vec<&Row> = rows.iter().filter(|r| r.load == load).collect();
    let ymax = sel
        .iter()
        .map(|r| r.time_per_iter_us.max(r.model_us.unwrap_or(0.0)))
        .fold(1.0, f64::max)
        * 1.5;
    let ymin = sel
        .iter()
        .map(|r| r.time_per_iter_us)
        .fold(f64::MAX, f64::min)
        .max(0.1)
        / 1.5;
    let mut chart = ChartBuilder::on(&areas[0])
        .caption(
            format!("time per iteration, load {load} (Fig. 5)"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (gmin / 1.3..gmax * 1.3).log_scale(),
            (ymin..ymax).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("grain (us, log)")
        .y_desc("us per iteration (log)")
        .draw()?;
    for (i, m) in METHODS.iter().enumerate() {
        let color = colors(i);
        let pts: Vec<(f64, f64)> = sel
            .iter()
            .filter(|r| r.method == *m)
            .map(|r| (r.grain_us, r.time_per_iter_us))
            .collect();
        if pts.is_empty() {
            continue;
        }
        asat_peers::plot::series(&mut chart, *m, color, &pts, true)?;
        let model: Vec<(f64, f64)> = sel
            .iter()
            .filter(|r| r.method == *m)
            .filter_map(|r| r.model_us.map(|y| (r.grain_us, y)))
            .collect();
        if *m != "os-spin" && !model.is_empty() {
            chart
                .draw_series(DashedLineSeries::new(model, 5, 4, color.stroke_width(1)))?
                .label(format!("{m} model"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(1))
                });
        }
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;

    // Figure 6: os-block / gang-spin against grain, per load.
    let mut loads = args.load.clone();
    loads.sort_unstable();
    let ratios: Vec<(usize, Vec<(f64, f64)>)> = loads
        .iter()
        .map(|&l| {
            let pts = grains
                .iter()
                .filter_map(|&g| {
                    Some((
                        g,
                        find(rows, "os-block", l, g)? / find(rows, "gang-spin", l, g)?,
                    ))
                })
                .collect();
            (l, pts)
        })
        .collect();
    let rmax = ratios
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.1))
        .fold(2.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&areas[1])
        .caption("os-block / gang-spin (Fig. 6)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d((gmin / 1.3..gmax * 1.3).log_scale(), 0.0..rmax)?;
    chart
        .configure_mesh()
        .x_desc("grain (us, log)")
        .y_desc("time ratio")
        .draw()?;
    chart.draw_series(LineSeries::new(
        vec![(gmin / 1.3, 1.0), (gmax * 1.3, 1.0)],
        BLACK.mix(0.4),
    ))?;
    for (i, (l, pts)) in ratios.into_iter().enumerate() {
        if pts.is_empty() {
            continue;
        }
        let color = colors(i + 3);
        asat_peers::plot::series(&mut chart, format!("load {l}"), color, &pts, true)?;
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;

    // Figure 8: time per iteration against load at the finest grain.
    let g0 = gmin;
    let lmax = *loads.last().unwrap_or(&1) as f64;
    let sel: Vec<&Row> = rows.iter().filter(|r| r.grain_us == g0).collect();
    let ymax = sel.iter().map(|r| r.time_per_iter_us).fold(1.0, f64::max) * 1.5;
    let ymin = sel
        .iter()
        .map(|r| r.time_per_iter_us)
        .fold(f64::MAX, f64::min)
        .max(0.1)
        / 1.5;
    let mut chart = ChartBuilder::on(&areas[2])
        .caption(
            format!("against load, grain {g0} us (Fig. 8)"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5..lmax + 0.5, (ymin..ymax).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("load (gangs)")
        .y_desc("us per iteration (log)")
        .x_labels(loads.len())
        .draw()?;
    for (i, m) in METHODS.iter().enumerate() {
        let color = colors(i);
        let pts: Vec<(f64, f64)> = sel
            .iter()
            .filter(|r| r.method == *m)
            .map(|r| (r.load as f64, r.time_per_iter_us))
            .collect();
        if pts.is_empty() {
            continue;
        }
        asat_peers::plot::series(&mut chart, *m, color, &pts, true)?;
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
    root.present()?;
    Ok(())
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
    std::fs::create_dir_all(&args.out).map_err(|e| {
        format!(
            "cannot create the output folder {}: {e}",
            args.out.display()
        )
    })?;
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
            let r = run_cell(args, &cpus, work, c)?;
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
                r.switch_us.map_or(String::new(), |s| format!(", switch {s:.0} us")),
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
        rows.push(Row {
            method: c.method.to_string(),
            load: c.load,
            grain_us: c.grain,
            var_us: c.var,
            time_per_iter_us: t,
            model_us: None,
            model: None,
            switch_us,
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

fn main() {
    let mut args = Args::parse();
    dedup_in_order(&mut args.grains_us);
    dedup_in_order(&mut args.methods);
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}
