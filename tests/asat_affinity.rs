//! ASAT's bound follows the process's CPU affinity: a job restricted to one CPU never runs more
//! than one thread. Its own binary, because it changes the affinity of the test thread.

use asat::{Asat, Runtime};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn set_affinity(cpus: &[usize]) {
    // SAFETY: cpu_set_t is plain data; all-zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: c is a small CPU number, in range of the set.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    assert_eq!(rc, 0, "sched_setaffinity");
}

#[test]
fn restricted_to_one_cpu_the_team_is_one() {
    set_affinity(&[0]);
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
