//! Pinning takes effect on this machine: each member's affinity mask is its pool's CPUs, and
//! so is that of each thread running a call's tasks. Its own binary, because it runs regions
//! and calls that change thread affinity.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use asat_core::{CpuSet, Runtime};
use asat_pools::{LoadTable, LocalLoads, PoolKind, PoolPolicy, Topology};

/// A job on this machine's pools of `kind` that wants every usable CPU, counted in a table
/// of its own.
struct Job {
    pools: asat_pools::Pools,
    n: usize,
    table: Arc<LocalLoads>,
    policy: Arc<PoolPolicy>,
    rt: Runtime,
}

fn job(kind: PoolKind) -> Job {
    let topo = Topology::detect().unwrap();
    let pools = topo.pools(kind).unwrap();
    let n = topo.usable_cpus().len();
    let table = Arc::new(LocalLoads::new(pools.len()));
    let policy = Arc::new(
        PoolPolicy::builder(pools.clone())
            .table(table.clone())
            .g(1.0)
            .desired(n)
            .build()
            .unwrap(),
    );
    let rt = Runtime::builder()
        .max_threads(n)
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    Job {
        pools,
        n,
        table,
        policy,
        rt,
    }
}

fn run_pinned(kind: PoolKind) {
    let Job {
        pools,
        n,
        policy,
        rt,
        ..
    } = job(kind);
    let before = CpuSet::of_current_thread().unwrap();
    for _ in 0..3 {
        let masks = Mutex::new(vec![None; n]);
        rt.region(|team| {
            masks.lock().unwrap()[team.index()] = Some(CpuSet::of_current_thread().unwrap());
            team.barrier();
        });
        let last = policy.last_region().unwrap();
        assert_eq!(last.threads, n, "{last:?}");
        let masks = masks.into_inner().unwrap();
        for (m, mask) in masks.iter().enumerate() {
            let want = pools.cpus(last.member_pools[m]);
            assert_eq!(mask.unwrap(), want, "member {m} of {last:?}");
        }
        // The caller gets its own mask back.
        assert_eq!(CpuSet::of_current_thread().unwrap(), before);
    }
}

#[test]
fn members_are_pinned_to_single_cpu_pools() {
    // One pool per usable CPU: with 2 or more CPUs the members run on different CPUs, so a
    // mask equal to the pool's proves the pinning (the default mask holds every CPU).
    run_pinned(PoolKind::Size(1));
}

#[test]
fn members_are_pinned_to_numa_pools() {
    run_pinned(PoolKind::Numa);
}

/// A recursion of joins whose leaves sleep (so that every thread takes part), recording the
/// mask of the thread that ran each leaf by its pool index.
fn sleepy(depth: u32, masks: &Mutex<Vec<Option<CpuSet>>>) {
    if depth == 0 {
        std::thread::sleep(Duration::from_millis(2));
        let i = asat_core::current_thread_index().expect("a task runs on the pool");
        masks.lock().unwrap()[i] = Some(CpuSet::of_current_thread().unwrap());
        return;
    }
    asat_core::join(|| sleepy(depth - 1, masks), || sleepy(depth - 1, masks));
}

#[test]
fn threads_running_a_calls_tasks_are_pinned_and_counted_until_it_ends() {
    let Job {
        pools,
        n,
        table,
        policy,
        rt,
    } = job(PoolKind::Size(1));
    let before = CpuSet::of_current_thread().unwrap();
    let idle = table.loads();
    for _ in 0..3 {
        let masks = Mutex::new(vec![None; n]);
        let during = rt.install_here(|| {
            asat_core::join(
                || {
                    sleepy(5, &masks);
                    table.loads()
                },
                || (),
            )
            .0
        });
        let last = policy.last_region().unwrap();
        assert_eq!(last.threads, n, "{last:?}");
        for (i, mask) in masks.into_inner().unwrap().iter().enumerate() {
            // A thread that ran no leaf has nothing to show.
            if let Some(mask) = mask {
                assert_eq!(*mask, pools.cpus(last.member_pools[i]), "thread {i}");
            }
        }
        // Counted while the call ran, and back to the master alone once it ended.
        assert_eq!(during.iter().sum::<u32>(), n as u32, "{during:?}");
        assert_eq!(table.loads(), idle);
        // The caller gets its own mask back.
        assert_eq!(CpuSet::of_current_thread().unwrap(), before);
    }
}

#[test]
fn pinning_on_a_synthetic_topology_fails_cleanly() {
    let pools = Topology::synthetic("node:4 core:4 pu:1")
        .unwrap()
        .pools(PoolKind::Numa)
        .unwrap();
    let e = PoolPolicy::builder(pools)
        .table(Arc::new(LocalLoads::new(4)))
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cannot pin threads: the pools come from a topology that is not this system"),
        "{e}"
    );
}
