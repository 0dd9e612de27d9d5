//! asat-implicit's barrier.
//!
//! - `barrier_latency_quiet_2_threads`: one barrier episode with 2 threads (pinned to the
//!   first two CPUs) on an otherwise quiet machine, for each strategy, against two pure spin
//!   barriers (no clock, no futex: the textbook counter-and-generation one on two lines, and
//!   the least one can cost, one word with one fetch-add per arrival), `std::sync::Barrier` and
//!   OpenMP's `omp barrier` (gcc's libgomp, one parallel region passing N barriers).
//! - `bsp_under_2_competing_jobs`: 200 phases of a 2-thread bulk-synchronous loop (each thread
//!   computes `U(15, 25)` µs of busy work, then meets the other at a barrier) while 2 more jobs
//!   of the same kind and strategy loop alongside (threads of this process, started by the bench
//!   and stopped after); thread `i` of every job is pinned to the `i`-th CPU, one thread per CPU
//!   per job as in the paper.
//!
//! `cargo bench --bench implicit_barrier`

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use asat::implicit::{AnyStrategy, Barrier, Config, TwoPhase};
use asat::CpuSet;
use asat_peers::omp;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// The barriers compared.
trait Wait: Send + Sync + 'static {
    fn wait(&self);
}

impl<S: TwoPhase + 'static> Wait for Barrier<S> {
    fn wait(&self) {
        Barrier::wait(self).expect("not poisoned");
    }
}

impl Wait for std::sync::Barrier {
    fn wait(&self) {
        std::sync::Barrier::wait(self);
    }
}

/// A barrier on pages of its own. In the interleaved comparison every barrier is wrapped in
/// one, so that where the allocator put it next to the others does not favour one: with plain
/// allocations, listing `global` third instead of first changed its ratio by 5-8%.
#[repr(align(4096))]
struct Apart<T>(T);

impl<T: Wait> Wait for Apart<T> {
    fn wait(&self) {
        self.0.wait();
    }
}

/// A centralized spin barrier for 2 threads on two lines: an arrival counter and a
/// generation word the waiter spins on (the textbook layout).
struct PureSpin {
    count: crossbeam_like::Padded<AtomicU32>,
    generation: crossbeam_like::Padded<AtomicU32>,
}

mod crossbeam_like {
    #[repr(align(128))]
    pub struct Padded<T>(pub T);
}

impl PureSpin {
    fn new() -> Self {
        Self {
            count: crossbeam_like::Padded(AtomicU32::new(0)),
            generation: crossbeam_like::Padded(AtomicU32::new(0)),
        }
    }
}

impl Wait for PureSpin {
    fn wait(&self) {
        let g = self.generation.0.load(Ordering::Acquire);
        if self.count.0.fetch_add(1, Ordering::AcqRel) + 1 == 2 {
            self.count.0.store(0, Ordering::Relaxed);
            self.generation
                .0
                .store(g.wrapping_add(1), Ordering::Release);
        } else {
            while self.generation.0.load(Ordering::Acquire) == g {
                std::hint::spin_loop();
            }
        }
    }
}

/// The least a 2-thread spin barrier can cost: one word, `2 x episodes + arrived`. An arrival
/// is one fetch-add; the first arriver of an episode spins on the same word until the second
/// one's fetch-add moves it on. One cache line, one read-modify-write per arrival.
struct OneWordSpin {
    word: crossbeam_like::Padded<AtomicU32>,
}

impl OneWordSpin {
    fn new() -> Self {
        Self {
            word: crossbeam_like::Padded(AtomicU32::new(0)),
        }
    }
}

impl Wait for OneWordSpin {
    fn wait(&self) {
        let old = self.word.0.fetch_add(1, Ordering::AcqRel);
        if old % 2 == 0 {
            // First of the episode: wait for the second arrival.
            while self.word.0.load(Ordering::Acquire) == old.wrapping_add(1) {
                std::hint::spin_loop();
            }
        }
    }
}

fn config() -> Config {
    Config::calibrated()
}

fn strategy(name: &str) -> AnyStrategy {
    AnyStrategy::by_name(name, &config()).expect("strategy")
}

/// `iters` episodes between this thread and a persistent partner thread.
fn latency<B: Wait>(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    cpus: &[usize],
    name: &str,
    barrier: B,
) {
    let barrier = Arc::new(barrier);
    pin(cpus[0]);
    let partner_cpu = cpus[1 % cpus.len()];
    let (tx, rx) = mpsc::channel::<u64>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let partner = {
        let barrier = Arc::clone(&barrier);
        std::thread::spawn(move || {
            pin(partner_cpu);
            while let Ok(n) = rx.recv() {
                for _ in 0..n {
                    barrier.wait();
                }
                let _ = done_tx.send(());
            }
        })
    };
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            tx.send(iters).expect("partner alive");
            let t = Instant::now();
            for _ in 0..iters {
                barrier.wait();
            }
            let e = t.elapsed();
            done_rx.recv().expect("partner done");
            e
        })
    });
    drop(tx);
    partner.join().expect("partner");
    // back to every CPU (OpenMP's threads, and the next group's, inherit this mask)
    pin_set(cpus);
}

/// A barrier with a persistent partner thread pinned to the second CPU.
struct Pair {
    name: &'static str,
    barrier: Arc<dyn Wait>,
    tx: Option<mpsc::Sender<u64>>,
    done: mpsc::Receiver<()>,
    partner: Option<std::thread::JoinHandle<()>>,
    episodes: u64,
}

impl Pair {
    fn new(name: &'static str, barrier: Arc<dyn Wait>, partner_cpu: usize, episodes: u64) -> Self {
        let (tx, rx) = mpsc::channel::<u64>();
        let (done_tx, done) = mpsc::channel::<()>();
        let b = Arc::clone(&barrier);
        let partner = std::thread::spawn(move || {
            pin(partner_cpu);
            while let Ok(n) = rx.recv() {
                for _ in 0..n {
                    b.wait();
                }
                let _ = done_tx.send(());
            }
        });
        Self {
            name,
            barrier,
            tx: Some(tx),
            done,
            partner: Some(partner),
            episodes,
        }
    }

    /// Nanoseconds per episode over one burst.
    fn burst(&self) -> f64 {
        self.tx
            .as_ref()
            .expect("open")
            .send(self.episodes)
            .expect("partner alive");
        let t = Instant::now();
        for _ in 0..self.episodes {
            self.barrier.wait();
        }
        let e = t.elapsed();
        self.done.recv().expect("partner done");
        e.as_nanos() as f64 / self.episodes as f64
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(h) = self.partner.take() {
            let _ = h.join();
        }
    }
}

/// The same comparison, interleaved: 15 rounds, each running every barrier for one burst (in
/// an order that rotates), so that load from other processes on a shared machine hits them
/// alike; prints each one's median and its ratio to the pure spin barrier's (stderr).
fn interleaved_latency(cpus: &[usize]) {
    pin(cpus[0]);
    let partner = cpus[1 % cpus.len()];
    let mut pairs: Vec<Pair> = Vec::new();
    for (name, s) in [
        ("implicit_global", "global"),
        ("implicit_local", "local"),
        ("implicit_fixed", "fixed"),
    ] {
        pairs.push(Pair::new(
            name,
            Arc::new(Apart(Barrier::new(2, strategy(s)).unwrap())),
            partner,
            200_000,
        ));
    }
    pairs.push(Pair::new(
        "pure_spin",
        Arc::new(Apart(PureSpin::new())),
        partner,
        200_000,
    ));
    pairs.push(Pair::new(
        "one_word_spin",
        Arc::new(Apart(OneWordSpin::new())),
        partner,
        200_000,
    ));
    pairs.push(Pair::new(
        "implicit_block",
        Arc::new(Apart(Barrier::new(2, strategy("block")).unwrap())),
        partner,
        5_000,
    ));
    pairs.push(Pair::new(
        "std_barrier",
        Arc::new(Apart(std::sync::Barrier::new(2))),
        partner,
        5_000,
    ));
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); pairs.len()];
    for round in 0..15 {
        // each round starts one barrier later, so that none always runs right after another
        for k in 0..pairs.len() {
            let i = (round + k) % pairs.len();
            times[i].push(pairs[i].burst());
        }
    }
    let medians: Vec<f64> = times.into_iter().map(asat_peers::stats::median).collect();
    // The target is judged against the faster spin barrier.
    let spin = medians[3].min(medians[4]);
    let cal = asat::implicit::calibration();
    eprintln!(
        "interleaved 2-thread barrier latency (median of 15 rounds; ratio to the faster of pure_spin and one_word_spin); context switch {:.1} us, release latency {:.2} us:",
        cal.context_switch.as_secs_f64() * 1e6,
        cal.release_latency.as_secs_f64() * 1e6
    );
    for (p, m) in pairs.iter().zip(&medians) {
        eprintln!("  {:<16} {:>10.1} ns  {:>7.2}x", p.name, m, m / spin);
    }
    drop(pairs);
    pin_set(cpus);
}

fn quiet_latency(c: &mut Criterion) {
    // the process's CPUs, read before this thread pins itself
    let cpus = allowed_cpus();
    // calibrate (at first use, cached) before anything is pinned
    let _ = asat::implicit::calibration();
    interleaved_latency(&cpus);
    let mut g = c.benchmark_group("barrier_latency_quiet_2_threads");
    for name in ["global", "local", "fixed", "block"] {
        latency(
            &mut g,
            &cpus,
            &format!("implicit_{name}"),
            Barrier::new(2, strategy(name)).unwrap(),
        );
    }
    latency(&mut g, &cpus, "pure_spin", PureSpin::new());
    latency(&mut g, &cpus, "one_word_spin", OneWordSpin::new());
    latency(&mut g, &cpus, "std_barrier", std::sync::Barrier::new(2));
    omp::set_threads(2);
    g.bench_function("gomp", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            omp::barriers(iters as usize);
            t.elapsed()
        })
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------------
// BSP under competing jobs

/// The CPUs the calling thread may run on (CPU 0 if the kernel does not say).
fn allowed_cpus() -> Vec<usize> {
    CpuSet::of_current_thread().map_or_else(|_| vec![0], |set| set.iter().collect())
}

fn pin(cpu: usize) {
    pin_set(&[cpu]);
}

/// Restricts the calling thread to `cpus` (best effort: a mask the kernel refuses is ignored).
fn pin_set(cpus: &[usize]) {
    let _ = cpus
        .iter()
        .copied()
        .collect::<CpuSet>()
        .bind_current_thread();
}

/// Busy work calibrated in units of about 1 ns.
fn work(units: u64) {
    let mut x = 1u64;
    for _ in 0..units {
        x = black_box(
            x.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        );
    }
    black_box(x);
}

fn units_per_us() -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            work(2_000_000);
            2_000_000.0 / (t.elapsed().as_secs_f64() * 1e6)
        })
        .fold(0.0, f64::max)
}

const PHASES: u64 = 200;

/// A job's barrier: asat-implicit's (poisoned to stop a competing job) or std's (stopped by
/// agreeing on an episode: see `wait`).
enum JobBarrier {
    Implicit(Box<Barrier<AnyStrategy>>),
    Std {
        barrier: std::sync::Barrier,
        stop: AtomicBool,
        /// The episode after which each of the 2 threads first saw `stop` (`u64::MAX`: not yet).
        saw: [AtomicU64; 2],
    },
}

impl JobBarrier {
    fn new(name: &str) -> Self {
        if name == "std" {
            JobBarrier::Std {
                barrier: std::sync::Barrier::new(2),
                stop: AtomicBool::new(false),
                saw: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
            }
        } else {
            JobBarrier::Implicit(Box::new(Barrier::new(2, strategy(name)).unwrap()))
        }
    }

    /// Thread `me` (0 or 1) waits; `episode` counts its waits. Returns false when the job was
    /// told to stop.
    ///
    /// std's threads leave after the same episode `max(saw) + 1`: a thread writes its `saw`
    /// before arriving at the next episode, so once both have passed `max(saw) + 1` each sees
    /// both values, and neither can leave earlier.
    fn wait(&self, me: usize, episode: &mut u64) -> bool {
        match self {
            JobBarrier::Implicit(b) => b.wait().is_ok(),
            JobBarrier::Std { barrier, stop, saw } => {
                barrier.wait();
                *episode += 1;
                if saw[me].load(Ordering::SeqCst) == u64::MAX && stop.load(Ordering::SeqCst) {
                    saw[me].store(*episode, Ordering::SeqCst);
                }
                let (a, b) = (saw[0].load(Ordering::SeqCst), saw[1].load(Ordering::SeqCst));
                !(a != u64::MAX && b != u64::MAX && *episode > a.max(b))
            }
        }
    }

    fn stop(&self) {
        match self {
            JobBarrier::Implicit(b) => b.poison(),
            JobBarrier::Std { stop, .. } => stop.store(true, Ordering::SeqCst),
        }
    }
}

fn phase_units(rng: &mut StdRng, per_us: f64) -> u64 {
    (rng.random_range(15.0..=25.0) * per_us) as u64
}

fn bsp_competing(c: &mut Criterion) {
    let cpus = allowed_cpus();
    let per_us = units_per_us();
    let mut g = c.benchmark_group("bsp_under_2_competing_jobs");
    g.sample_size(10);
    for name in ["block", "fixed", "local", "global", "std", "spin"] {
        // 2 competing jobs
        let competitors: Vec<Arc<JobBarrier>> =
            (0..2).map(|_| Arc::new(JobBarrier::new(name))).collect();
        let mut handles = Vec::new();
        for (j, job) in competitors.iter().enumerate() {
            for t in 0..2 {
                let job = Arc::clone(job);
                let cpu = cpus[t % cpus.len()];
                handles.push(std::thread::spawn(move || {
                    pin(cpu);
                    let mut rng = StdRng::seed_from_u64((j * 2 + t) as u64 + 100);
                    let mut episode = 0;
                    loop {
                        work(phase_units(&mut rng, per_us));
                        if !job.wait(t, &mut episode) {
                            break;
                        }
                    }
                }));
            }
        }
        let measured = Arc::new(JobBarrier::new(name));
        g.bench_function(BenchmarkId::new(name, PHASES), |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                std::thread::scope(|s| {
                    for th in 0..2 {
                        let measured = &measured;
                        let cpu = cpus[th % cpus.len()];
                        s.spawn(move || {
                            pin(cpu);
                            let mut rng = StdRng::seed_from_u64(th as u64);
                            let mut episode = 0;
                            for _ in 0..iters * PHASES {
                                work(phase_units(&mut rng, per_us));
                                measured.wait(th, &mut episode);
                            }
                        });
                    }
                });
                t.elapsed()
            })
        });
        for job in &competitors {
            job.stop();
        }
        for h in handles {
            h.join().expect("competing job");
        }
    }
    g.finish();
}

criterion_group! {
    name = quiet;
    config = Criterion::default()
        .sample_size(40)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = quiet_latency
}
criterion_group! {
    name = loaded;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4));
    targets = bsp_competing
}
criterion_main!(quiet, loaded);
