//! The global runtime and rayon's names for it: built once from the `ASAT_*` variables,
//! `build_global` after that an error, `install` running iterator calls on a pool of one's
//! own, `current_thread_index`, calls that run inline or alone, and `join`.
//!
//! The global runtime is process-wide state, and the variables must be set before anything
//! touches it: everything is checked in order in the one test of this file (a file of its
//! own is a process of its own).

use asat::prelude::*;
use asat::{
    current_num_threads, current_thread_index, Plan, Policy, RegionStart, Runtime, Schedule,
    ThreadPoolBuilder,
};
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A policy that gives every region the whole pool and counts the regions it planned.
#[derive(Debug, Default)]
struct Counting {
    plans: AtomicUsize,
}

impl Policy for Counting {
    fn name(&self) -> &str {
        "counting"
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        self.plans.fetch_add(1, Ordering::SeqCst);
        Plan::run(start.max_threads)
    }
}

/// The member indices `f` sees on every item of `0..n`, run by `for_each`.
fn indices_seen(n: usize) -> BTreeSet<Option<usize>> {
    let seen = Mutex::new(BTreeSet::new());
    (0..n).into_par_iter().for_each(|_| {
        let i = current_thread_index();
        assert!(
            i.is_some_and(|i| i < current_num_threads()),
            "index {i:?} of {}",
            current_num_threads()
        );
        seen.lock().unwrap().insert(i);
    });
    seen.into_inner().unwrap()
}

/// The message of a panic payload.
fn message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[test]
fn the_global_runtime_and_rayons_names() {
    // Built from the environment on first use, once.
    std::env::set_var("ASAT_MAX_THREADS", "3");
    std::env::set_var("ASAT_POLICY", "fixed");
    assert_eq!(current_thread_index(), None);
    assert_eq!(current_num_threads(), 3);
    let global = Runtime::global();
    assert_eq!(global.max_threads(), 3);
    assert_eq!(global.policy().name(), "fixed");
    std::env::set_var("ASAT_MAX_THREADS", "1");
    std::env::set_var("ASAT_POLICY", "single");
    assert_eq!(current_num_threads(), 3);
    assert_eq!(Runtime::global().max_threads(), 3);
    assert!(std::ptr::eq(Runtime::global(), global));
    std::env::set_var("ASAT_MAX_THREADS", "2");
    std::env::set_var("ASAT_POLICY", "fixed");

    // build_global after that: an error that says so.
    let err = ThreadPoolBuilder::new().build_global().unwrap_err();
    assert!(
        err.to_string()
            .contains("the global runtime exists already"),
        "{err}"
    );
    let err = ThreadPoolBuilder::new()
        .num_threads(4)
        .build_global()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the global runtime exists already"),
        "{err}"
    );
    assert_eq!(current_num_threads(), 3);
    // num_threads(0) is the default, as in rayon; too many is an error naming what is allowed
    let auto = ThreadPoolBuilder::new()
        .num_threads(4)
        .num_threads(0)
        .build()
        .unwrap();
    assert_eq!(
        auto.current_num_threads(),
        asat::Builder::new().build().unwrap().max_threads()
    );
    let err = ThreadPoolBuilder::new()
        .num_threads(5000)
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("num_threads 5000: must be at most 4096"),
        "{err}"
    );
    // a builder without num_threads reads the variables now set
    assert_eq!(
        ThreadPoolBuilder::new()
            .build()
            .unwrap()
            .current_num_threads(),
        2
    );

    // Calls outside install run on the global runtime: one region per call with more than one
    // block, a team of 3.
    let regions = global.stats().regions;
    assert_eq!((0..1000u64).into_par_iter().sum::<u64>(), 499_500);
    assert_eq!(global.stats().regions, regions + 1);
    assert_eq!(global.stats().last_team, 3);
    assert_eq!(indices_seen(3000), (0..3).map(Some).collect());
    assert_eq!(global.stats().regions, regions + 2);

    // install runs them on the given pool: its policy sees every call, the global one none.
    let counting = Arc::new(Counting::default());
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .policy(SharedPolicy(counting.clone()))
        .build()
        .unwrap();
    assert_eq!(pool.current_num_threads(), 2);
    let global_regions = global.stats().regions;
    pool.install(|| {
        assert_eq!(current_num_threads(), 2);
        assert_eq!(current_thread_index(), None);
        let v: Vec<u64> = (0..10_000).collect();
        let calls: [&dyn Fn(); 6] = [
            &|| assert_eq!(v.par_iter().sum::<u64>(), 49_995_000),
            &|| assert_eq!(v.par_iter().filter(|x| *x % 2 == 0).count(), 5_000),
            &|| {
                assert_eq!(
                    v.par_iter().map(|x| x * 2).collect::<Vec<_>>()[4_999],
                    9_998
                )
            },
            &|| assert_eq!(v.par_iter().max(), Some(&9_999)),
            &|| assert_eq!(v.par_iter().with_min_len(3_000).min(), Some(&0)),
            &|| {
                v.par_iter()
                    .with_schedule(Schedule::dynamic(10))
                    .for_each(|x| assert!(*x < 10_000))
            },
        ];
        for (k, call) in calls.iter().enumerate() {
            let (regions, plans) = (pool.stats().regions, counting.plans.load(Ordering::SeqCst));
            call();
            assert_eq!(pool.stats().regions, regions + 1, "call {k}");
            assert_eq!(pool.stats().last_team, 2, "call {k}");
            assert_eq!(counting.plans.load(Ordering::SeqCst), plans + 1, "call {k}");
        }
        // a call of one block per thread of the pool has its team of 2 without the policy
        let (regions, plans) = (pool.stats().regions, counting.plans.load(Ordering::SeqCst));
        assert_eq!(v.par_iter().with_min_len(5_000).min(), Some(&0));
        assert_eq!(pool.stats().regions, regions + 1);
        assert_eq!(pool.stats().last_team, 2);
        assert_eq!(counting.plans.load(Ordering::SeqCst), plans);
        // calls with a single block or none run no region
        let regions = pool.stats().regions;
        assert_eq!(v.par_iter().with_min_len(10_000).count(), 10_000);
        assert_eq!(v[..0].par_iter().count(), 0);
        assert_eq!(v.par_iter().take(1).count(), 1);
        assert_eq!(pool.stats().regions, regions);
        // every member of the team of 2 runs items (a revoked member runs on the caller
        // under its own index)
        for _ in 0..5 {
            assert_eq!(indices_seen(10_000), [Some(0), Some(1)].into());
        }
        assert_eq!(current_thread_index(), None);
    });
    assert_eq!(global.stats().regions, global_regions);
    assert_eq!(current_num_threads(), 3);
    // install returns what its closure returns, and nests
    let other = Runtime::builder().max_threads(1).build().unwrap();
    let sizes = pool.install(|| {
        let inner = other.install(current_num_threads);
        (current_num_threads(), inner)
    });
    assert_eq!(sizes, (2, 1));

    // A call inside a region runs as tasks of the member that makes it (which other threads
    // of the runtime may take), starting no region; every item has a thread index.
    for rt in [global, &pool] {
        let regions = (pool.stats().regions, global.stats().regions);
        let bad = AtomicUsize::new(0);
        let items = AtomicUsize::new(0);
        rt.region(|team| {
            let me = current_thread_index();
            assert_eq!(me, Some(team.index()));
            (0..100).into_par_iter().for_each(|_| {
                items.fetch_add(1, Ordering::Relaxed);
                if current_thread_index().is_none_or(|i| i >= current_num_threads()) {
                    bad.fetch_add(1, Ordering::Relaxed);
                }
            });
            // install on the region's own runtime runs inline, on the member; on another
            // one it runs on a thread of that runtime, as rayon's cross-pool install does
            let here = std::thread::current().id();
            let (s, ran_on) = pool.install(|| {
                let s: u64 = (0..100u64).into_par_iter().sum();
                (s, std::thread::current().id())
            });
            assert_eq!(s, 4950);
            assert_eq!(ran_on == here, std::ptr::eq(rt, &pool));
        });
        let size = rt.stats().last_team;
        assert_eq!(bad.load(Ordering::Relaxed), 0);
        assert_eq!(items.load(Ordering::Relaxed), 100 * size);
        // the region itself is the one region of its runtime; on the pool's threads, each
        // member's install sums in at most one region of the pool
        let after = (pool.stats().regions, global.stats().regions);
        if std::ptr::eq(rt, &pool) {
            assert_eq!(after, (regions.0 + 1, regions.1));
        } else {
            assert_eq!(after.1, regions.1 + 1);
            assert!(after.0 <= regions.0 + size as u64, "{after:?} {regions:?}");
        }
    }
    // and a call inside another call's closure
    pool.install(|| {
        let regions = pool.stats().regions;
        let bad = AtomicUsize::new(0);
        let sums: Vec<u64> = (0..8u64)
            .into_par_iter()
            .map(|k| {
                (0..1000u64)
                    .into_par_iter()
                    .map(|x| {
                        if current_thread_index().is_none_or(|i| i >= current_num_threads()) {
                            bad.fetch_add(1, Ordering::Relaxed);
                        }
                        x * k
                    })
                    .sum()
            })
            .collect();
        assert_eq!(sums, (0..8).map(|k| 499_500 * k).collect::<Vec<_>>());
        assert_eq!(bad.load(Ordering::Relaxed), 0);
        assert_eq!(pool.stats().regions, regions + 1);
    });

    // with_min_len(n) with at most n items runs alone, on the caller as member 0.
    for rt in [global, &pool] {
        rt.install(|| {
            let regions = rt.stats().regions;
            let seen = Mutex::new(BTreeSet::new());
            let record = |_: &u32| {
                seen.lock().unwrap().insert(current_thread_index());
            };
            let v: Vec<u32> = (0..500).collect();
            v.par_iter().with_min_len(500).for_each(record);
            v.par_iter().with_min_len(10_000).for_each(record);
            assert_eq!(v.par_iter().with_min_len(500).sum::<u32>(), 124_750);
            v[..1].par_iter().for_each(record);
            assert_eq!(seen.into_inner().unwrap(), [Some(0)].into());
            assert_eq!(rt.stats().regions, regions);
            assert_eq!(current_thread_index(), None);
        });
    }

    // join: both results, in parallel where the team allows, a panic from either side.
    for rt in [global, &pool] {
        rt.install(|| {
            let (a, b) = asat::join(
                || (current_thread_index(), (0..100u64).sum::<u64>()),
                || (current_thread_index(), "right"),
            );
            assert_eq!((a.1, b.1), (4950, "right"));
            // each side on a member of the call (as in rayon, the caller may run both when no
            // other member took `b` first)
            let n = current_num_threads();
            assert!(a.0.is_some_and(|i| i < n) && b.0.is_some_and(|i| i < n));
            // a join inside a join: its `a` runs on the member running that side, its `b`
            // there or on another member that took it (as in rayon)
            let (x, (y, (z, w))) = asat::join(
                || 1,
                || {
                    let me = current_thread_index();
                    (me, asat::join(current_thread_index, current_thread_index))
                },
            );
            assert_eq!(x, 1);
            let member = |i: Option<usize>| i.is_some_and(|i| i < n);
            assert!(member(y) && z == y && member(w), "{y:?} {z:?} {w:?}");
            for left in [true, false] {
                let other_ran = AtomicBool::new(false);
                let r = catch_unwind(AssertUnwindSafe(|| {
                    asat::join(
                        || {
                            if left {
                                panic!("left side");
                            }
                            other_ran.store(true, Ordering::SeqCst);
                        },
                        || {
                            if !left {
                                panic!("right side");
                            }
                            other_ran.store(true, Ordering::SeqCst);
                        },
                    )
                }));
                let p = r.expect_err("the panic must reach the caller");
                let want = if left { "left side" } else { "right side" };
                assert_eq!(message(&*p), want);
                // `a` is always started (it is handed out first); `b` may be skipped once `a`
                // has panicked, as in rayon when no other thread took it.
                if !left {
                    assert!(other_ran.load(Ordering::SeqCst), "the other side ran");
                }
                // still usable
                assert_eq!(asat::join(|| 1, || 2), (1, 2));
                assert_eq!((0..1000u64).into_par_iter().sum::<u64>(), 499_500);
            }
        });
    }
    // rayon's ThreadPool::join, on the pool itself
    assert_eq!(pool.join(|| 1, || 2), (1, 2));
    assert_eq!(current_thread_index(), None);
}

/// A shared policy, so that the test keeps a handle on its counter.
#[derive(Debug)]
struct SharedPolicy(Arc<Counting>);

impl Policy for SharedPolicy {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        self.0.plan(start)
    }
}
