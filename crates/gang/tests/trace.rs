//! The switching protocol on real threads, checked from a trace: every thread records when it
//! runs; threads of different gangs must never run at the same time, and every gang must make
//! progress. Installs the gang stop signal's handler (this file is its own test process).
//!
//! Tolerances are generous so that the tests pass on a loaded 2-core machine: a "running
//! segment" is two consecutive samples of one thread less than `GAP` apart (a stopped thread is
//! stopped for at least a quantum, much longer than `GAP`), and the total overlap allowed
//! between gangs is a small fraction of the run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use asat_core::{CpuSet, Runtime};
use asat_gang::{GangScheduler, GangStats};

const GAP: Duration = Duration::from_micros(1500);

/// The first (at most) `max` CPUs this process may use.
fn domain(max: usize) -> CpuSet {
    let all = GangScheduler::builder().build().unwrap().cpus().to_vec();
    all.into_iter().take(max).collect()
}

/// Merges the samples of a gang's threads into running segments (sorted, disjoint).
fn segments(threads: &[Vec<u64>]) -> Vec<(u64, u64)> {
    let gap = GAP.as_nanos() as u64;
    let mut segs: Vec<(u64, u64)> = Vec::new();
    for samples in threads {
        for w in samples.windows(2) {
            if w[1] - w[0] < gap {
                segs.push((w[0], w[1]));
            }
        }
    }
    segs.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (a, b) in segs {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

fn total(segs: &[(u64, u64)]) -> u64 {
    segs.iter().map(|(a, b)| b - a).sum()
}

fn overlap(x: &[(u64, u64)], y: &[(u64, u64)]) -> u64 {
    let (mut i, mut j, mut sum) = (0, 0, 0);
    while i < x.len() && j < y.len() {
        let lo = x[i].0.max(y[j].0);
        let hi = x[i].1.min(y[j].1);
        if hi > lo {
            sum += hi - lo;
        }
        if x[i].1 < y[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    sum
}

/// Checks a trace: `gangs[g][t]` = the samples (ns since a common epoch) of thread `t` of gang
/// `g`, taken over `run`.
/// Every thread of every gang must have at least `min_samples` samples (progress).
fn check(gangs: &[Vec<Vec<u64>>], run: Duration, stats: &GangStats, min_samples: usize) {
    let segs: Vec<Vec<(u64, u64)>> = gangs.iter().map(|g| segments(g)).collect();
    let run_ns = run.as_nanos() as u64;
    for (g, threads) in gangs.iter().enumerate() {
        let fewest = threads.iter().map(Vec::len).min().unwrap_or(0);
        assert!(
            fewest >= min_samples,
            "a thread of gang {g} has {fewest} samples, fewer than {min_samples}: every gang \
             must progress (segments: {} ns; {stats:?})",
            total(&segs[g])
        );
    }
    let mut worst = 0;
    for a in 0..segs.len() {
        for b in a + 1..segs.len() {
            worst = worst.max(overlap(&segs[a], &segs[b]));
        }
    }
    assert!(
        worst <= run_ns / 200,
        "gangs ran at the same time for {worst} ns of {run_ns} ns ({stats:?})"
    );
    assert!(stats.switches >= 5, "too few switches: {stats:?}");
    assert_eq!(stats.late_stops, 0, "{stats:?}");
}

#[test]
fn gangs_never_run_together_and_all_progress() {
    gangs_alternate(true);
}

/// The same without a real-time scheduler thread (what an unprivileged process gets).
#[test]
fn gangs_never_run_together_with_a_normal_priority_scheduler() {
    gangs_alternate(false);
}

fn gangs_alternate(realtime: bool) {
    let cpus = domain(4);
    let n = cpus.len();
    let sched = GangScheduler::builder()
        .cpus(cpus)
        .quantum(Duration::from_millis(10))
        .realtime(realtime)
        .build()
        .unwrap();
    if !realtime {
        assert!(!sched.is_realtime());
    }
    let gangs: Vec<_> = (0..3).map(|_| sched.gang(n).unwrap()).collect();
    let slots: Vec<usize> = gangs.iter().map(|g| g.slot()).collect();
    assert_eq!(slots, vec![0, 1, 2], "full-width gangs take a slot each");
    let epoch = Instant::now();
    let run = Duration::from_millis(1500);
    let stop = AtomicBool::new(false);
    let start = Barrier::new(3 * n + 1);
    let traces: Vec<Vec<Vec<u64>>> = std::thread::scope(|s| {
        let handles: Vec<Vec<_>> = gangs
            .iter()
            .enumerate()
            .map(|(g, gang)| {
                (0..n)
                    .map(|i| {
                        let (stop, start) = (&stop, &start);
                        s.spawn(move || {
                            let mut v = Vec::with_capacity(1 << 20);
                            start.wait();
                            let me = gang.join(i).unwrap();
                            assert_eq!(me.index(), i);
                            // SAFETY: sched_getcpu has no preconditions.
                            let on = unsafe { libc::sched_getcpu() };
                            assert_eq!(on as usize, me.cpu(), "pinned to its column's CPU");
                            assert_eq!(Some(me.cpu()), gang.cpu(i));
                            while !stop.load(Ordering::Relaxed) {
                                v.push(epoch.elapsed().as_nanos() as u64);
                                let t = Instant::now();
                                while t.elapsed() < Duration::from_micros(2) {
                                    std::hint::spin_loop();
                                }
                                // Gang 0 also stops cooperatively; the others only by signal.
                                if g == 0 {
                                    asat_gang::safe_point();
                                }
                            }
                            drop(me);
                            v
                        })
                    })
                    .collect()
            })
            .collect();
        start.wait();
        std::thread::sleep(run);
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|g| g.into_iter().map(|h| h.join().unwrap()).collect())
            .collect()
    });
    let stats = sched.stats();
    check(&traces, run, &stats, 1000);
    assert!(stats.signal_stops > 0, "{stats:?}");
    assert!(stats.mean_stop_time() > Duration::ZERO, "{stats:?}");
}

#[test]
fn runtimes_with_the_gang_policy_are_gangs() {
    let cpus = domain(4);
    let n = cpus.len();
    let sched = GangScheduler::builder()
        .cpus(cpus)
        .quantum(Duration::from_millis(10))
        .build()
        .unwrap();
    let rts: Vec<Runtime> = (0..2)
        .map(|_| {
            Runtime::builder()
                .max_threads(n)
                .policy(sched.policy())
                .build()
                .unwrap()
        })
        .collect();
    let epoch = Instant::now();
    let run = Duration::from_millis(1500);
    let stop = AtomicBool::new(false);
    let traces: Vec<Vec<Vec<u64>>> = std::thread::scope(|s| {
        let hs: Vec<_> = rts
            .iter()
            .map(|rt| {
                let stop = &stop;
                s.spawn(move || {
                    let per: Vec<std::sync::Mutex<Vec<u64>>> =
                        (0..n).map(|_| std::sync::Mutex::new(Vec::new())).collect();
                    let quit = AtomicBool::new(false);
                    rt.region(|team| {
                        let mut v = Vec::with_capacity(1 << 18);
                        loop {
                            let t = Instant::now();
                            while t.elapsed() < Duration::from_micros(5) {
                                std::hint::spin_loop();
                            }
                            v.push(epoch.elapsed().as_nanos() as u64);
                            if team.index() == 0 && stop.load(Ordering::Relaxed) {
                                quit.store(true, Ordering::Relaxed);
                            }
                            team.barrier();
                            let q = quit.load(Ordering::Relaxed);
                            team.barrier();
                            if q {
                                break;
                            }
                        }
                        *per[team.index()].lock().unwrap() = v;
                    });
                    per.into_iter().map(|m| m.into_inner().unwrap()).collect()
                })
            })
            .collect();
        std::thread::sleep(run);
        stop.store(true, Ordering::Relaxed);
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let stats = sched.stats();
    // Samples are taken once per iteration (two barriers): at least 100 iterations per gang.
    check(&traces, run, &stats, 100);
}
