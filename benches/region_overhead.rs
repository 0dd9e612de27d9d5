//! Per-region cost with 2 threads on a quiet machine: a parallel loop over 2 and over 64
//! trivially small chunks, and an SPMD region with one barrier. Peers in the same run: rayon
//! (`par_iter` with the same chunking, `rayon::scope` with a std `Barrier`) and the C OpenMP
//! `parallel for` / `parallel` + `barrier` through gcc's libgomp.
//!
//! rayon is measured both ways a program can call it: `rayon` from inside the pool (the bench
//! loop runs in `pool.install`, so each region is a `join` or `scope` on a pool thread, rayon's
//! best case) and `rayon_main` from the bench's own thread (each region enters the pool from
//! outside, as a main loop calling `par_iter` on the global pool does). asat is always called
//! from the bench's own thread, which joins the team.
//!
//! `cargo bench --bench region_overhead`

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use asat::{Fixed, Runtime, Schedule};
use asat_peers::omp;
use criterion::{criterion_group, criterion_main, Criterion};
use rayon::prelude::*;

const THREADS: usize = 2;

fn runtime() -> Runtime {
    Runtime::builder()
        .max_threads(THREADS)
        .policy(Fixed::new(THREADS))
        .build()
        .expect("runtime")
}

fn loops(c: &mut Criterion) {
    let rt = runtime();
    let pool = asat_peers::rayon_peer::pool(THREADS);
    omp::set_threads(THREADS);
    // 2 chunks: one per thread (static). 64 chunks: one iteration each, handed out dynamically
    // (asat Dynamic{1}, OpenMP dynamic,1, rayon with_max_len(1)), and split statically.
    let cases: [(usize, bool); 3] = [(2, false), (64, true), (64, false)];
    for (chunks, dynamic) in cases {
        let name = format!(
            "parallel_for_{chunks}_chunks_{}",
            if dynamic { "dynamic" } else { "static" }
        );
        let mut g = c.benchmark_group(name);
        let sched = if dynamic {
            Schedule::dynamic(1)
        } else {
            Schedule::Static
        };
        g.bench_function("asat_fixed", |b| {
            b.iter(|| {
                rt.parallel_for(0..chunks, sched, |i| {
                    black_box(i);
                })
            })
        });
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

fn region_barrier(c: &mut Criterion) {
    let rt = runtime();
    let pool = asat_peers::rayon_peer::pool(THREADS);
    omp::set_threads(THREADS);
    let mut g = c.benchmark_group("region_with_one_barrier");
    g.bench_function("asat_fixed", |b| {
        b.iter(|| rt.region(|team| team.barrier()))
    });
    let barrier = Barrier::new(THREADS);
    let rayon_region = || {
        rayon::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|_| {
                    barrier.wait();
                });
            }
        })
    };
    g.bench_function("rayon_scope_std_barrier", |b| {
        pool.install(|| b.iter(rayon_region))
    });
    g.bench_function("rayon_main_scope_std_barrier", |b| {
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

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(40)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = loops, region_barrier
}
criterion_main!(benches);
