//! Three co-located jobs of the fine-grain kernel (the 1-D Jacobi sweep of `asat_peers::kernel`,
//! one parallel loop per sweep), each on its own runtime and started at once; the time until all
//! three are done. Policies compared in the same run:
//!
//! - `fixed_unpinned`: every job runs teams of all usable CPUs, placed by the OS (what OpenMP or
//!   rayon do by default);
//! - `pools_unpinned`: processor pools decide team sizes and pools (one table shared by the three
//!   jobs), but threads are not pinned;
//! - `pools_pinned`: the same, members pinned to their pool's CPUs;
//! - `pools_pinned_hold`: pinned, and each placement held for 10 ms
//!   ([`PoolPolicyBuilder::hold`](asat::pools::PoolPolicyBuilder::hold)) instead of a decision
//!   (and possibly a migration) at every one of the job's thousands of regions a second.
//!
//! Pools: NUMA nodes when the machine has more than one, else pools of 4 CPUs when the usable
//! CPUs are 8 or more and divisible by 4, else one CPU per pool. `ASAT_POOLS_BENCH_POOLS`
//! (numa, l3, package or a size) overrides; `ASAT_POOLS_BENCH_GRAIN` (default 10000) and
//! `ASAT_POOLS_BENCH_SWEEPS` (default 300) set the job.
//!
//! `cargo bench --bench pools_colocated`

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use asat::pools::{LoadTable, LocalLoads, PoolKind, PoolPolicy, Pools, Topology};
use asat::{Fixed, Runtime, Schedule};
use asat_peers::kernel;
use criterion::{criterion_group, criterion_main, Criterion};

const JOBS: usize = 3;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn pools(topo: &Topology) -> Pools {
    if let Ok(kind) = std::env::var("ASAT_POOLS_BENCH_POOLS") {
        let kind: PoolKind = kind.parse().expect("ASAT_POOLS_BENCH_POOLS");
        return topo.pools(kind).expect("pools");
    }
    let numa = topo.pools(PoolKind::Numa).expect("NUMA pools");
    if numa.len() > 1 {
        return numa;
    }
    let n = topo.usable_cpus().len();
    let size = if n >= 8 && n % 4 == 0 { 4 } else { 1 };
    topo.pools(PoolKind::Size(size)).expect("pools")
}

/// One job: a runtime and its buffers.
struct Job {
    rt: Runtime,
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Job {
    fn run(&mut self, sweeps: usize) {
        let n = self.a.len();
        for _ in 0..sweeps {
            let src = &self.a;
            self.rt
                .parallel_slice_mut(&mut self.b[1..n - 1], Schedule::Static, |start, out| {
                    kernel::sweep_chunk(src, out, start + 1)
                });
            std::mem::swap(&mut self.a, &mut self.b);
        }
    }
}

fn jobs(policy: &str, pools: &Pools, cpus: usize, grain: usize) -> Vec<Job> {
    let table: Arc<dyn LoadTable> = Arc::new(LocalLoads::new(pools.len()));
    (0..JOBS)
        .map(|_| {
            let builder = Runtime::builder().max_threads(cpus);
            let builder = match policy {
                "fixed_unpinned" => builder.policy(Fixed::all()),
                _ => builder.policy(
                    PoolPolicy::builder(pools.clone())
                        .table(table.clone())
                        .pin(policy != "pools_unpinned")
                        .hold(if policy == "pools_pinned_hold" {
                            Duration::from_millis(10)
                        } else {
                            Duration::ZERO
                        })
                        .build()
                        .expect("pools policy"),
                ),
            };
            let (a, b) = kernel::buffers(grain);
            Job {
                rt: builder.build().expect("runtime"),
                a,
                b,
            }
        })
        .collect()
}

/// Runs the jobs at once; returns the time until the last is done.
fn colocated(jobs: &mut [Job], sweeps: usize) -> Duration {
    let t = Instant::now();
    std::thread::scope(|s| {
        for job in jobs.iter_mut() {
            s.spawn(move || job.run(sweeps));
        }
    });
    t.elapsed()
}

fn bench(c: &mut Criterion) {
    let topo = Topology::detect().expect("topology");
    let pools = pools(&topo);
    let cpus = topo.usable_cpus().len();
    let grain = env_usize("ASAT_POOLS_BENCH_GRAIN", 10_000);
    let sweeps = env_usize("ASAT_POOLS_BENCH_SWEEPS", 300);
    eprintln!(
        "pools_colocated: {JOBS} jobs x {sweeps} sweeps of {grain} elements, {cpus} CPUs, pools \
         {pools:?}"
    );
    let mut g = c.benchmark_group(format!("colocated_{JOBS}_jobs_grain_{grain}"));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(6));
    for policy in [
        "fixed_unpinned",
        "pools_unpinned",
        "pools_pinned",
        "pools_pinned_hold",
    ] {
        let mut js = jobs(policy, &pools, cpus, grain);
        // Start the workers (and pin them) before measuring.
        colocated(&mut js, 5);
        g.bench_function(policy, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| colocated(&mut js, sweeps)).sum())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
