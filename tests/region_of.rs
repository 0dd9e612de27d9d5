//! `Runtime::region_of`: a team of the size the caller asks for, all members at once, whatever
//! the policy would choose; the policy is neither asked nor told. `Runtime::for_each_member`:
//! the same as a loop whose unstarted members the caller runs, one at a time, so that items may
//! still wait for each other. And the iterator calls built on it: a call of exactly one block
//! per thread of the pool (rayon's one-item-per-thread idiom, whose items may wait for each
//! other) runs each block on a member of its own.
//!
//! A wrong team here hangs (members wait at a `Barrier` for members that are not there), so
//! every such test runs under a watchdog.

// asat-core's test helpers, for a policy and threads of the facade's runtime.
#[path = "../crates/asat-core/tests/common/mod.rs"]
mod common;

use asat::prelude::*;
use asat::{
    current_num_threads, current_thread_index, Plan, Policy, RegionReport, RegionStart, Runtime,
    Single, ThreadInfo,
};
use common::{watchdog, Scripted};
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// A team of one for every region it plans, counting its calls.
#[derive(Debug, Default)]
struct CountingSingle {
    plans: AtomicUsize,
    ends: AtomicUsize,
}

impl Policy for CountingSingle {
    fn name(&self) -> &str {
        "counting-single"
    }
    fn plan(&self, _: &RegionStart) -> Plan {
        self.plans.fetch_add(1, Ordering::SeqCst);
        Plan::run(1)
    }
    fn region_end(&self, _: &RegionReport<'_>) {
        self.ends.fetch_add(1, Ordering::SeqCst);
    }
}

/// A runtime of `n` threads under `Single` (every region the policy plans has a team of one).
fn single(n: usize) -> Runtime {
    Runtime::builder()
        .max_threads(n)
        .policy(Single)
        .build()
        .unwrap()
}

/// A runtime of 4 threads under `CountingSingle`, and the policy.
fn counted() -> (Arc<CountingSingle>, Runtime) {
    let policy = Arc::new(CountingSingle::default());
    let rt = Runtime::builder()
        .max_threads(4)
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    (policy, rt)
}

#[test]
fn a_region_of_n_has_n_members_at_once_and_leaves_the_policy_out() {
    watchdog(LIMIT, || {
        let (policy, rt) = counted();
        for n in [2, 3, 4, 3, 2] {
            let met = Barrier::new(n);
            let seen = Mutex::new(BTreeSet::new());
            rt.region_of(n, |team| {
                assert_eq!(team.size(), n);
                met.wait();
                seen.lock().unwrap().insert(team.index());
            });
            assert_eq!(seen.into_inner().unwrap(), (0..n).collect());
            assert_eq!(rt.stats().last_team, n);
        }
        assert_eq!(policy.plans.load(Ordering::SeqCst), 0);
        assert_eq!(policy.ends.load(Ordering::SeqCst), 0);
        assert_eq!(rt.stats().regions, 5);
        // The policy's own regions are still its own.
        rt.region(|team| assert_eq!(team.size(), 1));
        assert_eq!(policy.plans.load(Ordering::SeqCst), 1);
        assert_eq!(policy.ends.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_region_of_is_between_one_and_max_threads() {
    watchdog(LIMIT, || {
        let rt = single(3);
        let size = |n: usize| {
            let s = AtomicUsize::new(0);
            rt.region_of(n, |team| {
                s.store(team.size(), Ordering::SeqCst);
            });
            s.into_inner()
        };
        assert_eq!(size(0), 1);
        assert_eq!(size(1), 1);
        assert_eq!(size(3), 3);
        assert_eq!(size(100), 3);
        // Inside a region it runs inline, as every nested region does.
        rt.region_of(2, |outer| {
            rt.region_of(3, |inner| assert_eq!(inner.size(), 1));
            assert_eq!(outer.size(), 2);
        });
    });
}

#[test]
fn a_panic_in_a_region_of_is_raised_and_the_runtime_goes_on() {
    watchdog(LIMIT, || {
        let rt = single(3);
        let r = catch_unwind(AssertUnwindSafe(|| {
            rt.region_of(3, |team| {
                if team.index() == 2 {
                    panic!("member 2");
                }
            })
        }));
        assert!(r.is_err());
        let met = Barrier::new(3);
        rt.region_of(3, |_| {
            met.wait();
        });
    });
}

#[test]
fn for_each_member_runs_item_i_on_member_i_at_once() {
    watchdog(LIMIT, || {
        let (policy, rt) = counted();
        for n in [4, 2, 3, 1, 0] {
            let met = Barrier::new(n.max(1));
            let seen = Mutex::new(Vec::new());
            rt.for_each_member(n, |i| {
                met.wait();
                seen.lock().unwrap().push((i, current_thread_index()));
            });
            let mut seen = seen.into_inner().unwrap();
            seen.sort();
            assert_eq!(seen, (0..n).map(|i| (i, Some(i))).collect::<Vec<_>>());
        }
        assert_eq!(policy.plans.load(Ordering::SeqCst), 0);
        assert_eq!(policy.ends.load(Ordering::SeqCst), 0);
        // beyond the pool, members take several items
        let count = AtomicUsize::new(0);
        rt.for_each_member(10, |_| {
            count.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(count.into_inner(), 10);
    });
}

/// Single, but a worker sleeps when it starts, as a worker that is not on a CPU would.
#[derive(Debug)]
struct SlowStart;

impl Policy for SlowStart {
    fn name(&self) -> &str {
        "slow-start"
    }
    fn plan(&self, _: &RegionStart) -> Plan {
        Plan::run(1)
    }
    fn thread_start(&self, _: &ThreadInfo) {
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn the_caller_takes_unstarted_items_one_at_a_time() {
    watchdog(LIMIT, || {
        let rt = Runtime::builder()
            .max_threads(3)
            .policy(SlowStart)
            .build()
            .unwrap();
        // Item 0 waits for nobody; items 1 and 2 wait for each other. The caller finishes
        // item 0 while the workers sleep, takes item 1 and waits in it for item 2, which must
        // still be offered to its worker (taking both at once would wait forever).
        let met = Barrier::new(2);
        rt.for_each_member(3, |i| {
            if i > 0 {
                met.wait();
            }
        });
        assert!(rt.stats().revoked >= 1, "{:?}", rt.stats());
    });
}

/// Runs the one-item-per-thread idiom of NPB-RAYON's LU on `rt`: as many items as the pool has
/// threads, each waiting at a barrier of that many for the others; also as a reduction and a
/// collect. Returns the sum and the collected items.
fn idiom(rt: &Runtime) -> (usize, Vec<usize>) {
    rt.install(|| {
        let n = current_num_threads();
        let met = Barrier::new(n);
        (0..n).into_par_iter().for_each(|_| {
            met.wait();
        });
        let sum = (0..n)
            .into_par_iter()
            .map(|i| {
                met.wait();
                i
            })
            .sum();
        let all = (0..n)
            .into_par_iter()
            .map(|i| {
                met.wait();
                i * 10
            })
            .collect();
        (sum, all)
    })
}

#[test]
fn one_item_per_thread_runs_all_at_once_under_any_team() {
    watchdog(LIMIT, || {
        for n in [2, 3, 4] {
            let one = single(n);
            // A policy whose team changes from call to call, as ASAT's does.
            let cycling = Runtime::builder()
                .max_threads(n)
                .policy(Scripted::new(vec![1, n, 2.min(n), 1]))
                .build()
                .unwrap();
            for rt in [&one, &cycling] {
                for _ in 0..3 {
                    let (sum, all) = idiom(rt);
                    assert_eq!(sum, n * (n - 1) / 2);
                    assert_eq!(all, (0..n).map(|i| i * 10).collect::<Vec<_>>());
                }
            }
        }
    });
}

#[test]
fn other_calls_keep_the_policys_team() {
    watchdog(LIMIT, || {
        let rt = single(3);
        rt.install(|| {
            for len in [2, 4, 7, 100] {
                let seen = Mutex::new(BTreeSet::new());
                (0..len).into_par_iter().for_each(|_| {
                    seen.lock().unwrap().insert(current_thread_index());
                });
                assert_eq!(seen.into_inner().unwrap(), [Some(0)].into(), "len {len}");
            }
        });
    });
}
