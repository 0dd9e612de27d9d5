//! The team barrier through whole runtimes: a barrier holds across its generation's wrap
//! and with more members than CPUs.

use crate::sync::{AtomicUsize, Ordering};
use crate::team::{GENERATION_ONE, SPLIT_FROM};
use crate::{Fixed, Runtime};

/// Every member must have arrived at barrier `p` before anyone passes it, and nobody can
/// arrive at barrier `p + 1` before everyone passed `p`: after barrier `p` the count of
/// arrivals lies in `[(p + 1) n, (p + 2) n)`.
fn barriers_hold(threads: usize, barriers: usize) {
    barriers_hold_from(threads, barriers, 0);
}

/// [`barriers_hold`] with the barrier's generation moved on by `skip` first.
fn barriers_hold_from(threads: usize, barriers: usize, skip: u32) {
    let rt = Runtime::builder()
        .max_threads(threads)
        .policy(Fixed::new(threads))
        .build()
        .unwrap();
    rt.region_state().skip_generations(skip);
    let arrivals = AtomicUsize::new(0);
    rt.region(|team| {
        let n = team.size();
        for p in 0..barriers {
            arrivals.fetch_add(1, Ordering::SeqCst);
            team.barrier();
            let a = arrivals.load(Ordering::SeqCst);
            assert!(
                (p + 1) * n <= a && a < (p + 2) * n,
                "barrier {p}: {a} arrivals"
            );
        }
    });
    assert_eq!(arrivals.load(Ordering::SeqCst), barriers * threads);
}

#[test]
fn barrier_generation_wraps_around_in_step() {
    // More barriers than the event's generation bits count (2^15): the generation wraps
    // (both layouts), also when it starts just below its wrap.
    let wrap = (u32::MAX / GENERATION_ONE) as usize + 1;
    barriers_hold(2, wrap + 1000);
    barriers_hold(SPLIT_FROM, wrap + 1000);
    barriers_hold_from(SPLIT_FROM + 1, 1000, wrap as u32 - 500);
}

#[test]
fn barrier_holds_with_more_members_than_cpus() {
    // Members that are not on a CPU: waits end in the kernel and are woken by the release;
    // one word below SPLIT_FROM, two from it on.
    barriers_hold(SPLIT_FROM - 1, 2000);
    barriers_hold(5, 2000);
}
