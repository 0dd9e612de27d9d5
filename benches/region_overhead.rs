//! Per-region cost with 2 threads on a quiet machine: a parallel loop over 2 and over 64
//! trivially small chunks, and an SPMD region with one barrier. Peers in the same run: rayon
//! (`par_iter` with the same chunking, `rayon::scope` with a spinning barrier) and the C OpenMP
//! `parallel for` / `parallel` + `barrier` through gcc's libgomp.
//!
//! rayon is measured both ways a program can call it: `rayon` from inside the pool (the bench
//! loop runs in `pool.install`, so each region is a `join` or `scope` on a pool thread, rayon's
//! best case) and `rayon_main` from the bench's own thread (each region enters the pool from
//! outside, as a main loop calling `par_iter` on the global pool does). asat is always called
//! from the bench's own thread, which joins the team.
//!
//! Before criterion's (sequential) measurements the bench prints an interleaved comparison: 15
//! rounds, each running every variant of every case for one burst of regions (with a 30 ms
//! pause after each burst, so that no variant's threads are still spinning when the next one
//! starts), and the median time per region over the rounds. On a shared virtual machine the per-region cost moves by 2-3x
//! between minutes (where the vCPUs land on the host), which sequential measurements mix into
//! the ratios; the interleaved medians do not.
//!
//! `--instructions` measures nothing: it runs [`INSTRUCTION_CALLS`] empty regions of a team of
//! one (`Fixed(1)`, so that no worker's waiting is counted) and as many `install`s of a number
//! on a pool of two, each batch in a function never inlined, for an instruction counter:
//! `valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/deps/region_overhead-*
//! --instructions`, then `callgrind_annotate --inclusive=yes cg.out | grep counted::` (the
//! installs' count includes what the worker runs for them, and so moves a little between runs).
//!
//! `cargo bench --bench region_overhead`

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use asat::{Fixed, Runtime, Schedule};
use asat_peers::omp;
use asat_peers::spin::SpinBarrier;
use criterion::{criterion_group, Criterion};
use rayon::prelude::*;

const THREADS: usize = 2;

fn runtime() -> Runtime {
    Runtime::builder()
        .max_threads(THREADS)
        .policy(Fixed::new(THREADS))
        .build()
        .expect("runtime")
}

/// A variant of a case: runs `n` regions and returns how long they took.
type Burst<'a> = Box<dyn FnMut(usize) -> Duration + 'a>;

/// Runs every variant of `case` for a burst of regions, round after round, and prints the median
/// time per region of each. `bursts[i]` is the number of regions per burst of variant `i` (fewer
/// for the slow ones, so that each burst takes a few milliseconds).
fn interleaved(case: &str, mut variants: Vec<(&str, usize, Burst<'_>)>) {
    const ROUNDS: usize = 15;
    const SETTLE: Duration = Duration::from_millis(30);
    let mut times = vec![Vec::with_capacity(ROUNDS); variants.len()];
    for _ in 0..ROUNDS {
        for (i, (_, n, run)) in variants.iter_mut().enumerate() {
            times[i].push(run(*n).as_secs_f64() * 1e9 / *n as f64);
            // Let the threads of the variant just run go idle: libgomp's spin for a few
            // milliseconds after a region and would take a CPU from the next variant.
            std::thread::sleep(SETTLE);
        }
    }
    eprint!("interleaved {case} (ns per region, median of {ROUNDS} rounds):");
    for ((name, _, _), t) in variants.iter().zip(times) {
        eprint!("  {name} {:.0}", asat_peers::stats::median(t));
    }
    eprintln!();
}

fn timed(n: usize, mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed()
}

/// The four variants of a case: asat (`asat`, called from this thread), rayon from inside its
/// pool and from this thread (`rayon`), and libgomp (`gomp(n)` runs `n` regions in C).
fn peers<'a>(
    names: [&'a str; 4],
    bursts: [usize; 4],
    pool: &'a rayon::ThreadPool,
    asat: impl Fn() + 'a,
    rayon: impl Fn() + Send + Sync + 'a,
    gomp: impl Fn(usize) + 'a,
) -> Vec<(&'a str, usize, Burst<'a>)> {
    let rayon = std::sync::Arc::new(rayon);
    let inside = std::sync::Arc::clone(&rayon);
    vec![
        (names[0], bursts[0], Box::new(move |n| timed(n, &asat))),
        (
            names[1],
            bursts[1],
            Box::new(move |n| pool.install(|| timed(n, &*inside))),
        ),
        (
            names[2],
            bursts[2],
            Box::new(move |n| timed(n, || pool.install(&*rayon))),
        ),
        (
            names[3],
            bursts[3],
            Box::new(move |n| {
                let t = Instant::now();
                gomp(n);
                t.elapsed()
            }),
        ),
    ]
}

fn loops(c: &mut Criterion) {
    let rt = runtime();
    let pool = asat_peers::rayon_peer::pool(THREADS);
    omp::set_threads(THREADS);
    // 2 chunks: one per thread (static). 64 chunks: one iteration each, handed out dynamically
    // (asat Dynamic{1}, OpenMP dynamic,1, rayon with_max_len(1)), and split statically.
    let cases: [(usize, bool); 3] = [(2, false), (64, true), (64, false)];
    for (chunks, dynamic) in cases {
        let name = format!("parallel_for_{chunks}_chunks_{}", sched_name(dynamic));
        let mut g = c.benchmark_group(name);
        let sched = if dynamic {
            Schedule::dynamic(1)
        } else {
            Schedule::Static
        };
        let rayon_loop = || {
            let it = (0..chunks).into_par_iter();
            if dynamic {
                it.with_max_len(1).for_each(|i| {
                    black_box(i);
                })
            } else {
                it.with_min_len(chunks / THREADS).for_each(|i| {
                    black_box(i);
                })
            }
        };
        let asat_loop = || {
            rt.parallel_for(0..chunks, sched, |i| {
                black_box(i);
            })
        };
        interleaved(
            &format!("parallel_for_{chunks}_chunks_{}", sched_name(dynamic)),
            peers(
                ["asat_fixed", "rayon", "rayon_main", "gomp"],
                [20_000, 20_000, 500, 20_000],
                &pool,
                asat_loop,
                rayon_loop,
                |n| omp::parallel_for(chunks, n, dynamic),
            ),
        );
        g.bench_function("asat_fixed", |b| b.iter(asat_loop));
        g.bench_function("rayon", |b| pool.install(|| b.iter(rayon_loop)));
        g.bench_function("rayon_main", |b| b.iter(|| pool.install(rayon_loop)));
        g.bench_function("gomp", |b| {
            b.iter_custom(|iters| {
                let t = Instant::now();
                omp::parallel_for(chunks, iters as usize, dynamic);
                t.elapsed()
            })
        });
        g.finish();
    }
}

fn sched_name(dynamic: bool) -> &'static str {
    if dynamic {
        "dynamic"
    } else {
        "static"
    }
}

fn region_barrier(c: &mut Criterion) {
    let rt = runtime();
    let pool = asat_peers::rayon_peer::pool(THREADS);
    omp::set_threads(THREADS);
    let mut g = c.benchmark_group("region_with_one_barrier");
    // A spinning barrier, as asat's and libgomp's barriers spin: with std's Barrier the rayon
    // region would measure futex sleeps and wakes, not rayon.
    let barrier = SpinBarrier::new(THREADS);
    let rayon_region = || {
        rayon::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|_| {
                    barrier.wait();
                });
            }
        })
    };
    let asat_region = || rt.region(|team| team.barrier());
    interleaved(
        "region_with_one_barrier",
        peers(
            [
                "asat_fixed",
                "rayon_scope_spin_barrier",
                "rayon_main_scope_spin_barrier",
                "gomp",
            ],
            [20_000, 500, 500, 20_000],
            &pool,
            asat_region,
            rayon_region,
            omp::region_barrier,
        ),
    );
    g.bench_function("asat_fixed", |b| b.iter(asat_region));
    g.bench_function("rayon_scope_spin_barrier", |b| {
        pool.install(|| b.iter(rayon_region))
    });
    g.bench_function("rayon_main_scope_spin_barrier", |b| {
        b.iter(|| pool.install(rayon_region))
    });
    g.bench_function("gomp", |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            omp::region_barrier(iters as usize);
            t.elapsed()
        })
    });
    g.finish();
}

/// Calls of each kind in `--instructions` mode.
const INSTRUCTION_CALLS: usize = 20_000;

/// The batches `--instructions` runs, each in a function of its own.
mod counted {
    use super::*;

    #[inline(never)]
    pub fn team_of_one_regions(rt: &Runtime, n: usize) {
        for _ in 0..n {
            rt.region(|t| {
                black_box(t);
            });
        }
    }

    #[inline(never)]
    pub fn installs(pool: &asat::ThreadPool, n: usize) {
        for _ in 0..n {
            black_box(pool.install(|| black_box(1)));
        }
    }
}

/// `--instructions`: [`INSTRUCTION_CALLS`] empty regions of a team of one, then as many
/// `install`s on a pool of two (after a warm-up of each).
fn instructions() {
    let one = Runtime::builder()
        .max_threads(1)
        .policy(Fixed::new(1))
        .build()
        .expect("runtime");
    counted::team_of_one_regions(&one, 100);
    let pool = asat::ThreadPool::from(runtime());
    for _ in 0..100 {
        black_box(pool.install(|| black_box(1)));
    }
    counted::team_of_one_regions(&one, INSTRUCTION_CALLS);
    counted::installs(&pool, INSTRUCTION_CALLS);
    println!(
        "ran {INSTRUCTION_CALLS} empty regions of a team of one and {INSTRUCTION_CALLS} installs \
         on a pool of {THREADS}; an instruction counter gives each batch's instructions \
         (`counted::`)"
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(40)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = loops, region_barrier
}
fn main() {
    if std::env::args().any(|a| a == "--instructions") {
        instructions();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
