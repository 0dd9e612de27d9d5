//! The pools policy on asat-core's runtime: team sizes, load accounting in the table, jobs in
//! one process seeing each other. Synthetic topologies, no pinning: independent of this machine.

use std::sync::{Arc, Barrier};

use asat_core::Runtime;
use asat_pools::{LoadTable, LocalLoads, PoolKind, PoolPolicy, Topology};

fn four_pools_of_four() -> asat_pools::Pools {
    Topology::synthetic("node:4 core:4 pu:1")
        .unwrap()
        .pools(PoolKind::Numa)
        .unwrap()
}

fn job(table: &Arc<LocalLoads>, d: usize) -> (Arc<PoolPolicy>, Runtime) {
    job_holding(table, d, std::time::Duration::ZERO)
}

/// A job on the four pools that keeps its placements for `hold`.
fn job_holding(
    table: &Arc<LocalLoads>,
    d: usize,
    hold: std::time::Duration,
) -> (Arc<PoolPolicy>, Runtime) {
    let policy = Arc::new(
        PoolPolicy::builder(four_pools_of_four())
            .table(table.clone())
            .pin(false)
            .desired(d)
            .hold(hold)
            .build()
            .unwrap(),
    );
    let rt = Runtime::builder()
        .max_threads(d)
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    (policy, rt)
}

#[test]
fn load_is_held_during_regions_and_released_after() {
    let table = Arc::new(LocalLoads::new(4));
    let (policy, rt) = job(&table, 4);
    let home = policy.home();
    assert_eq!(home, 0);
    // The master thread counts in the home pool between regions.
    assert_eq!(table.loads(), vec![1, 0, 0, 0]);
    let inside = std::sync::Mutex::new(Vec::new());
    rt.region(|team| {
        if team.index() == 0 {
            *inside.lock().unwrap() = table.loads();
        }
        team.barrier();
    });
    // x = round(0.8*4/4) = 1 pool; 4 idle there: a = 4, all in the home pool; the master
    // sleeps meanwhile.
    assert_eq!(*inside.lock().unwrap(), vec![4, 0, 0, 0]);
    let last = policy.last_region().unwrap();
    assert_eq!(last.threads, 4);
    assert_eq!(last.member_pools, vec![0, 0, 0, 0]);
    assert_eq!(table.loads(), vec![1, 0, 0, 0]);
    assert_eq!(policy.regions(), 1);
    drop(rt);
    drop(policy);
    assert_eq!(table.loads(), vec![0, 0, 0, 0]);
}

#[test]
fn team_size_is_the_actual_parallelism() {
    let table = Arc::new(LocalLoads::new(4));
    // Another job's load: 3 threads in pool 0, 4 in each of pools 1-3 (all but one CPU busy).
    table.add(0, 3);
    for p in 1..4 {
        table.add(p, 4);
    }
    let (policy, rt) = job(&table, 8);
    assert_eq!(policy.home(), 0);
    let sizes = std::sync::Mutex::new(0);
    rt.region(|team| {
        if team.index() == 0 {
            *sizes.lock().unwrap() = team.size();
        }
    });
    // d = 8: x = round(0.8*8/4) = 2 candidates (home 0, then 1 on a tie), 1 idle CPU:
    // a = max(1, G*d = 4) = 4. One thread takes the idle CPU, the other 3 balance pools 0 and 1
    // (4 and 4 threads): pool 0 ends at 6, pool 1 at 5.
    let last = policy.last_region().unwrap();
    assert_eq!(last.threads, 4);
    assert_eq!(*sizes.lock().unwrap(), 4);
    assert_eq!(last.candidates, vec![0, 1]);
    assert_eq!(last.per_pool, vec![(0, 3), (1, 1)]);
}

#[test]
fn jobs_in_one_process_see_each_other() {
    let table = Arc::new(LocalLoads::new(4));
    let (a, rt_a) = job(&table, 4);
    let (b, rt_b) = job(&table, 8);
    assert_eq!(a.home(), 0);
    assert_eq!(b.home(), 1, "the second job's home avoids the first's");
    let inside = Barrier::new(2);
    let go = Barrier::new(2);
    std::thread::scope(|s| {
        s.spawn(|| {
            rt_a.region(|team| {
                if team.index() == 0 {
                    inside.wait();
                    go.wait();
                }
            });
        });
        inside.wait();
        // A holds 4 threads in pool 0 now.
        rt_b.region(|_| {});
        go.wait();
    });
    let last = b.last_region().unwrap();
    assert_eq!(last.loads[0], 4, "{last:?}");
    // B spans 2 pools: its home and the least loaded other one, never A's full pool.
    assert_eq!(last.candidates.len(), 2);
    assert!(!last.candidates.contains(&0), "{last:?}");
    assert_eq!(last.threads, 8);
    drop((rt_a, rt_b, a, b));
    assert_eq!(table.loads(), vec![0; 4]);
}

#[test]
fn one_policy_per_runtime() {
    let table = Arc::new(LocalLoads::new(4));
    let (policy, _rt) = job(&table, 2);
    let e = Runtime::builder()
        .max_threads(2)
        .shared_policy(policy.clone())
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("already attached"), "{e}");
}

#[test]
fn bad_settings_are_clear_errors() {
    let pools = four_pools_of_four();
    let t = || Arc::new(LocalLoads::new(4)) as Arc<dyn LoadTable>;
    let b = || PoolPolicy::builder(pools.clone()).table(t()).pin(false);
    let e = b().g(1.5).build().unwrap_err().to_string();
    assert_eq!(e, "pools policy: G = 1.5: must be between 0 and 1");
    let e = b().f(-1.0).build().unwrap_err().to_string();
    assert_eq!(e, "pools policy: F = -1: must be a finite number >= 0");
    let e = b().desired(0).build().unwrap_err().to_string();
    assert_eq!(
        e,
        "pools policy: desired parallelism 0: must be at least 1 thread"
    );
    let e = PoolPolicy::builder(pools.clone())
        .table(Arc::new(LocalLoads::new(3)))
        .pin(false)
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the load table has 3 pools but there are 4"),
        "{e}"
    );
}

#[test]
fn a_held_placement_is_reused_and_stays_counted() {
    let table = Arc::new(LocalLoads::new(4));
    let (policy, rt) = job_holding(&table, 4, std::time::Duration::from_secs(3600));
    rt.region(|_| {});
    let first = policy.last_region().unwrap();
    assert_eq!(first.per_pool, vec![(0, 4)]);
    // Between regions the 4 threads stay counted (the master is one of them).
    assert_eq!(table.loads(), vec![4, 0, 0, 0]);
    // Another job's load arrives in pool 0; within the hold the placement does not change.
    table.add(0, 4);
    rt.region(|_| {});
    assert_eq!(policy.regions(), 2);
    assert_eq!(policy.last_region().unwrap(), first);
    assert_eq!(table.loads(), vec![8, 0, 0, 0]);
    table.sub(0, 4);
    drop(rt);
    drop(policy);
    assert_eq!(table.loads(), vec![0; 4]);
}

#[test]
fn after_the_hold_the_job_is_placed_anew() {
    let table = Arc::new(LocalLoads::new(4));
    let (policy, rt) = job_holding(&table, 4, std::time::Duration::from_millis(1));
    rt.region(|_| {});
    assert_eq!(policy.last_region().unwrap().per_pool, vec![(0, 4)]);
    // Pool 0 fills up with another job's threads; after the hold the job spreads its threads
    // by the rules again (x = 1 pool, its home; no idle CPU: a = G*d = 2).
    table.add(0, 4);
    std::thread::sleep(std::time::Duration::from_millis(5));
    rt.region(|_| {});
    let last = policy.last_region().unwrap();
    assert_eq!(last.loads, vec![4, 0, 0, 0]);
    assert_eq!(last.per_pool, vec![(0, 2)]);
    // Its 2 threads count while held (4 + 2), then, the 1 ms hold over, only its master does.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while table.loads() != vec![5, 0, 0, 0] && std::time::Instant::now() < deadline {
        assert!(table.loads()[0] >= 5, "{:?}", table.loads());
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(table.loads(), vec![5, 0, 0, 0]);
}

#[test]
fn a_hold_ends_when_it_expires_even_without_another_region() {
    // A job that stops starting regions (a serial phase) must not stay counted with its held
    // threads: when the hold expires they leave the table and the master is counted at home.
    let table = Arc::new(LocalLoads::new(4));
    let (policy, rt) = job_holding(&table, 4, std::time::Duration::from_millis(50));
    rt.region(|_| {});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while table.loads() != vec![1, 0, 0, 0] && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(table.loads(), vec![1, 0, 0, 0]);
    // The job goes on as before.
    rt.region(|_| {});
    assert_eq!(policy.regions(), 2);
    drop(rt);
    drop(policy);
    assert_eq!(table.loads(), vec![0; 4]);
}
