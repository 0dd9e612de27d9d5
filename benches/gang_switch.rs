//! The cost of one coordinated gang switch, and the fine-grain barrier loop at load 3 under
//! each method (gang-spin, os-spin, os-block).
//!
//! ```text
//! cargo bench --bench gang_switch
//! ```
//!
//! - `coordinated_switch/stop_2_threads`: two gangs of 2 threads spin (no safe points, so every
//!   stop is by signal); each iteration asks the scheduler for a switch and reports the
//!   scheduler's own measure of it, from the broadcast of the stop signals to the last thread
//!   stopped.
//! - `coordinated_switch/request_to_resumed`: the same switches timed from `switch_now` to the
//!   last thread of the incoming gang running again (includes waking the scheduler thread,
//!   stopping the outgoing gang and waking the incoming one).
//! - `coordinated_switch_processes/stop_2_threads`: the same across processes (a shared gang
//!   domain in a fresh folder): a child process (this bench binary, started again) holds both
//!   gangs of spinning threads, this process's shared scheduler only leads the domain, so every
//!   stop wakes the child's scheduler thread, which signals its own threads; each iteration
//!   asks for a switch and reports the leader's measure of it, from the stop's announcement to
//!   the last thread parked (`GangStats::domain_stop_time_total`).
//! - `barrier_loop_load3/{method}/grain_{g}us`: three gangs of `min(2, CPUs)` threads loop
//!   `g` us + U(0, `g` us)
//!   of work (g = 1 and 5) and a barrier; the time is per iteration of one gang while the
//!   others compete.

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use asat::gang::GangScheduler;
use asat::{CpuSet, Runtime};
use asat_peers::spin::SpinBarrier;
use criterion::{criterion_group, Criterion};

fn width() -> usize {
    GangScheduler::builder()
        .build()
        .map(|s| s.cpus().len().min(2))
        .unwrap_or(1)
}

fn coordinated_switch(c: &mut Criterion) {
    let sched = GangScheduler::builder()
        .quantum(Duration::from_secs(5))
        .build()
        .unwrap();
    let n = width();
    let gangs = [sched.gang(n).unwrap(), sched.gang(n).unwrap()];
    // Per thread: when it last resumed (ns since `epoch`), detected as a gap of more than
    // 100 us between two of its loop turns.
    let epoch = Instant::now();
    let resumed: Vec<Vec<AtomicU64>> = (0..2)
        .map(|_| (0..n).map(|_| AtomicU64::new(0)).collect())
        .collect();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for (g, gang) in gangs.iter().enumerate() {
            for (i, resumed) in resumed[g].iter().enumerate() {
                let stop = &stop;
                s.spawn(move || {
                    let _me = gang.join(i).unwrap();
                    let mut last = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let now = epoch.elapsed().as_nanos() as u64;
                        if now - last > 100_000 {
                            resumed.store(now, Ordering::Relaxed);
                        }
                        last = now;
                    }
                });
            }
        }
        let switch = || switch_and_wait(&sched, &gangs, &resumed, epoch);
        // Let both gangs start (each needs its slot once).
        for _ in 0..4 {
            switch();
        }
        let mut group = c.benchmark_group("coordinated_switch");
        group.sample_size(20);
        group.bench_function(format!("stop_{n}_threads"), |b| {
            b.iter_custom(|iters| {
                let before = sched.stats();
                for _ in 0..iters {
                    switch();
                }
                let after = sched.stats();
                let timed = after.timed_switches - before.timed_switches;
                let total = after.stop_time_total - before.stop_time_total;
                // Scale to `iters` switches in case a switch stopped nobody.
                total.mul_f64(iters as f64 / timed.max(1) as f64)
            })
        });
        group.bench_function("request_to_resumed", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    total += switch();
                }
                total
            })
        });
        group.finish();
        stop.store(true, Ordering::Relaxed);
    });
    eprintln!("coordinated_switch stats: {:?}", sched.stats());
}

/// Asks for a switch and waits until every thread of the incoming gang runs again; returns
/// the time from the request to the last of them resuming. Polls with short sleeps: the gang
/// threads need the CPUs more than this thread.
fn switch_and_wait(
    sched: &GangScheduler,
    gangs: &[asat::gang::Gang; 2],
    resumed: &[Vec<AtomicU64>],
    epoch: Instant,
) -> Duration {
    let before = sched.stats().switches;
    let t0 = epoch.elapsed().as_nanos() as u64;
    sched.switch_now();
    while sched.stats().switches == before {
        std::thread::sleep(Duration::from_micros(20));
    }
    let cur = sched.current_slot();
    let g = gangs
        .iter()
        .position(|g| Some(g.slot()) == cur)
        .unwrap_or(0);
    loop {
        let times: Vec<u64> = resumed[g]
            .iter()
            .map(|r| r.load(Ordering::Relaxed))
            .collect();
        if times.iter().all(|&t| t > t0) {
            let last = times.into_iter().max().unwrap_or(t0);
            return Duration::from_nanos(last - t0);
        }
        std::thread::sleep(Duration::from_micros(20));
    }
}

#[inline(never)]
fn spin_loops(n: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..n {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
    }
    x
}

fn loops_per_us() -> f64 {
    let n = 2_000_000u64;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        std::hint::black_box(spin_loops(n));
        best = best.min(t.elapsed().as_secs_f64() * 1e6);
    }
    n as f64 / best
}

/// The barrier loop of one member: work GRAIN + U(0, VAR), barrier, until `stop` (member 0
/// publishes the iteration to quit at before a barrier).
#[allow(clippy::too_many_arguments)]
fn member_loop(
    grain: f64,
    m: usize,
    seed: u64,
    loops: f64,
    iters: &AtomicU64,
    quit_at: &AtomicU64,
    stop: &AtomicBool,
    barrier: &dyn Fn(),
) {
    let mut x = seed | 1;
    let mut j = 0u64;
    loop {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let us = grain + grain * (x >> 11) as f64 / (1u64 << 53) as f64;
        std::hint::black_box(spin_loops((us * loops) as u64));
        if m == 0 {
            if stop.load(Ordering::Relaxed) && quit_at.load(Ordering::Relaxed) == u64::MAX {
                quit_at.store(j + 1, Ordering::Relaxed);
            }
            iters.fetch_add(1, Ordering::Relaxed);
        }
        barrier();
        j += 1;
        if j >= quit_at.load(Ordering::Relaxed) {
            break;
        }
    }
}

/// Pins the calling thread to `cpu` (best effort: a CPU the kernel refuses is ignored).
fn pin(cpu: usize) {
    let _ = CpuSet::from_iter([cpu]).bind_current_thread();
}

fn barrier_loop_load3(c: &mut Criterion) {
    const LOAD: usize = 3;
    let n = width();
    let loops = loops_per_us();
    let cpus: Vec<usize> = GangScheduler::builder().build().unwrap().cpus().to_vec();
    let mut group = c.benchmark_group("barrier_loop_load3");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(4));
    for (grain, method) in [1.0, 5.0].into_iter().flat_map(|g| {
        ["gang-spin", "os-spin", "os-block"]
            .into_iter()
            .map(move |m| (g, m))
    }) {
        let iters: Vec<AtomicU64> = (0..LOAD).map(|_| AtomicU64::new(0)).collect();
        let quit: Vec<AtomicU64> = (0..LOAD).map(|_| AtomicU64::new(u64::MAX)).collect();
        let stop = AtomicBool::new(false);
        let sched = GangScheduler::builder().build().unwrap();
        let rts: Vec<Runtime> = if method == "gang-spin" {
            (0..LOAD)
                .map(|_| {
                    Runtime::builder()
                        .max_threads(n)
                        .policy(sched.policy())
                        .build()
                        .unwrap()
                })
                .collect()
        } else {
            Vec::new()
        };
        let spins: Vec<SpinBarrier> = (0..LOAD).map(|_| SpinBarrier::new(n)).collect();
        let blocks: Vec<Arc<Barrier>> = (0..LOAD).map(|_| Arc::new(Barrier::new(n))).collect();
        std::thread::scope(|s| {
            for g in 0..LOAD {
                let (it, q, stop) = (&iters[g], &quit[g], &stop);
                if method == "gang-spin" {
                    let rt = &rts[g];
                    s.spawn(move || {
                        rt.region(|team| {
                            let m = team.index();
                            member_loop(grain, m, (g * 100 + m) as u64, loops, it, q, stop, &|| {
                                team.barrier()
                            })
                        })
                    });
                } else {
                    for m in 0..n {
                        let (spin, block) = (&spins[g], &blocks[g]);
                        let cpu = cpus[m % cpus.len()];
                        s.spawn(move || {
                            pin(cpu);
                            let barrier = || {
                                if method == "os-block" {
                                    block.wait();
                                } else {
                                    spin.wait();
                                }
                            };
                            member_loop(
                                grain,
                                m,
                                (g * 100 + m) as u64,
                                loops,
                                it,
                                q,
                                stop,
                                &barrier,
                            )
                        });
                    }
                }
            }
            group.bench_function(format!("{method}/grain_{grain}us"), |b| {
                b.iter_custom(|k| {
                    let start = iters[0].load(Ordering::Relaxed);
                    let t = Instant::now();
                    while iters[0].load(Ordering::Relaxed) - start < k {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    t.elapsed()
                })
            });
            stop.store(true, Ordering::Relaxed);
        });
    }
    group.finish();
}

/// The child process of `coordinated_switch_processes`: its folder, in this variable.
const CHILD_DIR: &str = "ASAT_BENCH_GANG_SWITCH_CHILD";

/// In the child: two gangs of spinning threads in the shared domain of `dir`, until killed.
fn switch_child(dir: &str) -> ! {
    let sched = GangScheduler::builder()
        .shared(true)
        .shared_dir(dir)
        .quantum(Duration::from_secs(5))
        .build()
        .unwrap();
    let n = width();
    let gangs = [sched.gang(n).unwrap(), sched.gang(n).unwrap()];
    std::thread::scope(|s| {
        for gang in &gangs {
            for i in 0..n {
                s.spawn(move || {
                    let _me = gang.join(i).unwrap();
                    loop {
                        std::hint::spin_loop();
                    }
                });
            }
        }
    });
    unreachable!("the spinning threads never end")
}

fn coordinated_switch_processes(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("asat-bench-gang-switch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Built first, so it leads the domain (the child's scheduler finds the lock taken).
    let sched = GangScheduler::builder()
        .shared(true)
        .shared_dir(&dir)
        .quantum(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD_DIR, &dir)
        .spawn()
        .unwrap();
    let t = Instant::now();
    while sched.used_slots().len() < 2 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the child placed no gangs"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let switch = || {
        let before = sched.stats().domain_switches;
        sched.switch_now();
        let t = Instant::now();
        while sched.stats().domain_switches == before {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "no switch: this process does not lead the domain"
            );
            std::thread::sleep(Duration::from_micros(20));
        }
    };
    for _ in 0..4 {
        switch();
    }
    let mut group = c.benchmark_group("coordinated_switch_processes");
    group.sample_size(20);
    group.bench_function(format!("stop_{}_threads", width()), |b| {
        b.iter_custom(|iters| {
            let before = sched.stats();
            for _ in 0..iters {
                switch();
            }
            let after = sched.stats();
            let timed = after.domain_timed_switches - before.domain_timed_switches;
            let total = after.domain_stop_time_total - before.domain_stop_time_total;
            total.mul_f64(iters as f64 / timed.max(1) as f64)
        })
    });
    group.finish();
    eprintln!("coordinated_switch_processes stats: {:?}", sched.stats());
    let _ = child.kill();
    let _ = child.wait();
    drop(sched);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(
    benches,
    coordinated_switch,
    coordinated_switch_processes,
    barrier_loop_load3
);

fn main() {
    if let Ok(dir) = std::env::var(CHILD_DIR) {
        switch_child(&dir);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
