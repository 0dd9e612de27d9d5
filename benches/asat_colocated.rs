//! The fine-grain Jacobi job (grain 10,000, 3,000 sweeps: 3e7 element updates) under 0, 1 and
//! 3 co-located competing processes (single-threaded CPU hogs, load that is not ASAT), with
//! `max_threads` = the CPUs of the machine: ASAT against fixed threads, a single thread and
//! rayon, side by side in one run.
//!
//! Each policy keeps one runtime (one rayon pool) for all its iterations, so ASAT adapts across
//! them as a long-running job would; criterion's warm-up gives it the time to settle.
//!
//! `cargo bench --bench asat_colocated`

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Duration;

use asat::{Asat, Fixed, Runtime, Schedule, Single};
use asat_peers::{kernel, load::CpuHogs, rayon_peer};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const GRAIN: usize = 10_000;
const SWEEPS: usize = 3_000;

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn jacobi(rt: &Runtime, a: &mut Vec<f64>, b: &mut Vec<f64>) {
    let n = a.len();
    for _ in 0..SWEEPS {
        let src = &a[..];
        rt.parallel_slice_mut(&mut b[1..n - 1], Schedule::Static, |start, out| {
            kernel::sweep_chunk(src, out, start + 1)
        });
        std::mem::swap(a, b);
    }
}

fn colocated(c: &mut Criterion) {
    let p = threads();
    for hogs in [0usize, 1, 3] {
        let _load = CpuHogs::spawn(hogs).expect("start the CPU hogs");
        let mut g = c.benchmark_group(format!("jacobi_10k_{hogs}_hogs"));
        g.sample_size(10)
            .warm_up_time(Duration::from_secs(2))
            .measurement_time(Duration::from_secs(4));
        let (mut a, mut b) = kernel::buffers(GRAIN);
        let asat = Arc::new(Asat::new());
        let runtimes: [(&str, Runtime); 3] = [
            (
                "asat",
                Runtime::builder()
                    .max_threads(p)
                    .shared_policy(asat.clone())
                    .build()
                    .expect("asat runtime"),
            ),
            (
                "fixed",
                Runtime::builder()
                    .max_threads(p)
                    .policy(Fixed::all())
                    .build()
                    .expect("fixed runtime"),
            ),
            (
                "single",
                Runtime::builder()
                    .max_threads(p)
                    .policy(Single)
                    .build()
                    .expect("single runtime"),
            ),
        ];
        for (name, rt) in &runtimes {
            g.bench_function(BenchmarkId::new(*name, p), |bench| {
                bench.iter(|| jacobi(rt, &mut a, &mut b))
            });
        }
        eprintln!(
            "asat with {hogs} hogs: team of {} after {} evaluations",
            asat.threads(),
            asat.history().len()
        );
        drop(runtimes);
        let pool = rayon_peer::pool(p);
        g.bench_function(BenchmarkId::new("rayon", p), |bench| {
            bench.iter(|| rayon_peer::jacobi(&pool, &mut a, &mut b, SWEEPS))
        });
        g.finish();
    }
}

criterion_group!(benches, colocated);
criterion_main!(benches);
