//! A parallel loop does not wait for a worker that has not started its share: the starting
//! thread runs that member itself (revocation). An SPMD region does wait.

use asat_core::{Plan, Policy, RegionStart, Runtime, Schedule, ThreadInfo};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Fixed(2), but worker 1 sleeps when it starts, as a worker that is not on a CPU would.
#[derive(Debug)]
struct SlowWorker;

impl Policy for SlowWorker {
    fn name(&self) -> &str {
        "slow-worker"
    }
    fn plan(&self, _: &RegionStart) -> Plan {
        Plan::run(2)
    }
    fn thread_start(&self, _: &ThreadInfo) {
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn loops_run_unstarted_members_on_the_caller() {
    let rt = Runtime::builder()
        .max_threads(2)
        .policy(SlowWorker)
        .build()
        .unwrap();
    let t = Instant::now();
    for s in [Schedule::Static, Schedule::dynamic(3), Schedule::guided(2)] {
        let hits: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
        rt.parallel_for(0..1000, s, |i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "{s:?}");
    }
    let r = rt.parallel_reduce(
        0..100,
        Schedule::Static,
        || 0,
        |a, r| a + r.len(),
        |a, b| a + b,
    );
    assert_eq!(r, 100);
    let elapsed = t.elapsed();
    assert!(rt.stats().revoked >= 1, "{:?}", rt.stats());
    // The SPMD region below must wait for the worker: both members run, on two threads.
    let members = AtomicUsize::new(0);
    rt.region(|team| {
        members.fetch_add(1, Ordering::Relaxed);
        team.barrier();
    });
    assert_eq!(members.load(Ordering::Relaxed), 2);
    // the loops did not wait out the worker's 500 ms start (generous: loaded CI machines)
    assert!(elapsed < Duration::from_millis(450), "{elapsed:?}");
}
