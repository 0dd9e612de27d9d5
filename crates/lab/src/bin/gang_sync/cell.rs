//! A cell with every gang in this process: gang-spin gangs are runtimes of one
//! `GangScheduler`, os-spin and os-block gangs threads of this process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use asat::gang::GangScheduler;
use asat::Runtime;
use asat_peers::spin::SpinBarrier;

use crate::work::{process_cpu_seconds, GangState, OneGang, Work};
use crate::{Args, Cell};

/// Runs one cell with every gang in this process.
pub fn run_cell(
    args: &Args,
    cpus: &[usize],
    work: Work,
    c: &Cell<'_>,
) -> Result<CellResult, String> {
    let gangs: Vec<GangState> = (0..c.load).map(|_| GangState::new()).collect();
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
    let warmup = warmup(args, c.load);
    let window = Duration::from_secs_f64(args.max_seconds);
    let (grain, var) = (c.grain, c.var);
    let result = std::thread::scope(|s| {
        for g in 0..c.load {
            OneGang {
                g,
                n: c.n,
                method: c.method,
                runtime: runtimes.get(g),
                cpus,
                work,
                grain,
                var,
                iters: &gangs[g].iters,
                quit_at: &gangs[g].quit_at,
                stop: &stop,
                spin: &spin_barriers[g],
                block: &block_barriers[g],
            }
            .spawn(s);
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
        let switch_us = match (&stats0, &stats1) {
            (Some(a), Some(b)) if b.timed_switches > a.timed_switches => Some(
                (b.stop_time_total - a.stop_time_total).as_secs_f64() * 1e6
                    / (b.timed_switches - a.timed_switches) as f64,
            ),
            _ => None,
        };
        let switch_max_us = stats1
            .filter(|_| switch_us.is_some())
            .map(|b| b.stop_time_max.as_secs_f64() * 1e6);
        let mean_iters = done as f64 / c.load as f64;
        CellResult {
            time_us: elapsed.as_secs_f64() * 1e6 / mean_iters.max(1.0),
            censored: mean_iters == 0.0,
            switch_us,
            switch_max_us,
            own_stop_us: None,
            cpu_share,
        }
    });
    drop(runtimes);
    Ok(result)
}

/// What one run of a cell measured.
#[derive(Clone, Copy, Debug)]
pub struct CellResult {
    /// Wall time per iteration of a gang, us.
    pub time_us: f64,
    /// No gang finished an iteration in the window (`time_us` is then a lower bound).
    pub censored: bool,
    /// Mean coordinated-switch stop time over the window (gang-spin), us: in one process,
    /// from the broadcast of the stop signals to the last thread stopped; with `--processes`,
    /// the leader's domain stop time, from the stop's announcement to the last process's
    /// acknowledgement (every thread of the row stopped in every process).
    pub switch_us: Option<f64>,
    /// The longest such stop, us, over the scheduler's life (warm-up included); with
    /// `--processes` the longest of the processes that led.
    pub switch_max_us: Option<f64>,
    /// With `--processes`: each process's own part of a switch (its signals to its last
    /// thread parked), the mean over the processes' stops, us.
    pub own_stop_us: Option<f64>,
    /// The CPU time of the gangs' process(es) over the window divided by wall time times
    /// CPUs. Busy-waiting methods use every CPU they are given, so well under 1 means outside
    /// load took CPUs.
    pub cpu_share: f64,
}

/// The warm-up before a cell's window: 0.1 s or 3 rounds of the gang quanta, the longer.
pub fn warmup(args: &Args, load: usize) -> Duration {
    Duration::from_secs_f64((0.1f64).max(3.0 * load as f64 * args.quantum_ms / 1e3))
}
