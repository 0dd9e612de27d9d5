use std::time::Duration;

use super::*;
use crate::LocalLoads;
use asat_core::{CpuSet, Runtime};

/// Two pools of two (made-up) CPUs; a job of 2 threads on them with this hold.
fn job(hold: Duration) -> (Arc<LocalLoads>, Arc<PoolPolicy>, Runtime) {
    let a: CpuSet = [0, 1].into_iter().collect();
    let b: CpuSet = [2, 3].into_iter().collect();
    let pools = Pools::new(vec![a, b], false).unwrap();
    let table = Arc::new(LocalLoads::new(2));
    let policy = Arc::new(
        PoolPolicy::builder(pools)
            .table(table.clone())
            .pin(false)
            .hold(hold)
            .build()
            .unwrap(),
    );
    let rt = Runtime::builder()
        .max_threads(2)
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    (table, policy, rt)
}

/// Waits (10 s at most) for the table to read `want`.
fn wait_for_loads(table: &LocalLoads, want: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while table.loads() != want && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(table.loads(), want);
}

#[test]
fn regions_within_a_hold_do_not_wake_the_releaser() {
    // A fine-grain job: many regions on one held placement. The releaser times the
    // hold's deadline once; it used to be woken at the end of every region.
    let (table, policy, rt) = job(Duration::from_secs(3600));
    for _ in 0..2000 {
        rt.region(|_| {});
    }
    assert_eq!(policy.regions(), 2000);
    assert_eq!(policy.last_region().unwrap().per_pool, vec![(0, 2)]);
    assert_eq!(table.loads(), vec![2, 0]);
    let wakes = policy.releaser_wakes();
    assert!(
        wakes <= 5,
        "the releaser woke {wakes} times for 2000 regions"
    );
    drop(rt);
    drop(policy);
    assert_eq!(table.loads(), vec![0, 0]);
}

#[test]
fn a_hold_too_long_to_end_is_kept() {
    // Duration::MAX cannot be added to an Instant: such a hold never ends (it used to end
    // at every region's end).
    let (table, policy, rt) = job(Duration::MAX);
    rt.region(|_| {});
    let first = policy.last_region().unwrap();
    assert_eq!(table.loads(), vec![2, 0]);
    table.add(0, 2);
    rt.region(|_| {});
    assert_eq!(policy.last_region().unwrap(), first);
    assert_eq!(table.loads(), vec![4, 0]);
    assert!(policy.releaser_wakes() <= 2);
    table.sub(0, 2);
    drop(rt);
    drop(policy);
    assert_eq!(table.loads(), vec![0, 0]);
}

#[test]
fn a_hold_placed_after_a_deadline_passed_in_a_region_still_ends() {
    let hold = Duration::from_millis(200);
    let (table, policy, rt) = job(hold);
    // A: the releaser times A's deadline.
    rt.region(|_| {});
    // B, on A's placement, runs past that deadline: the releaser finds a region running
    // and goes idle; B's end releases the threads itself.
    rt.region(|team| {
        if team.index() == 0 {
            std::thread::sleep(hold + Duration::from_millis(100));
        }
    });
    assert_eq!(table.loads(), vec![1, 0], "the master alone, at home");
    // C: a new placement; the releaser, idle, must be told, and end C's hold.
    rt.region(|_| {});
    assert_eq!(policy.regions(), 3);
    wait_for_loads(&table, &[1, 0]);
    // The job goes on as before.
    rt.region(|_| {});
    wait_for_loads(&table, &[1, 0]);
    drop(rt);
    drop(policy);
    assert_eq!(table.loads(), vec![0, 0]);
}
