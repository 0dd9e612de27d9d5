//! ASAT's bound follows the process's CPU affinity: a job restricted to one CPU never runs more
//! than one thread. Its own binary, because it changes the affinity of the test thread.

use asat_core::{Asat, CpuSet, Runtime};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
fn restricted_to_one_cpu_the_team_is_one() {
    let allowed = CpuSet::of_current_thread().expect("sched_getaffinity");
    let one: CpuSet = allowed.iter().take(1).collect();
    one.bind_current_thread().expect("sched_setaffinity");
    let asat = Arc::new(Asat::new());
    let rt = Runtime::builder()
        .max_threads(4)
        .shared_policy(asat.clone())
        .build()
        .unwrap();
    let biggest = AtomicUsize::new(0);
    for _ in 0..50 {
        rt.region(|team| {
            biggest.fetch_max(team.size(), Ordering::Relaxed);
        });
    }
    assert_eq!(biggest.load(Ordering::Relaxed), 1);
    let h = asat.history();
    assert!(!h.is_empty());
    assert!(h.iter().all(|e| e.bound == 1), "{h:?}");
}
