//! User callbacks that panic or re-enter the runtime: a policy's hooks, a wait strategy, the
//! thread hooks. The runtime must stay sound (nothing a worker still uses is freed), must not
//! hang, must report the panic where its docs say, and must stay usable. Also: dynamic
//! schedules whose counter could wrap around, thread names the OS refuses. Each test runs
//! under a watchdog: a hang fails it instead of stalling the suite.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

// asat-core's test helpers, for a policy and threads of the facade's runtime.
#[path = "../crates/asat-core/tests/common/mod.rs"]
mod common;

use asat::{
    MemberInfo, Placement, Plan, Policy, RegionReport, RegionStart, Runtime, Schedule, ThreadInfo,
    WaitInfo, WaitOutcome, WaitSite, WaitStrategy,
};

/// [`common::watchdog`] with this file's limit.
fn watchdog<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    common::watchdog(Duration::from_secs(60), f)
}

/// The message of a panic payload.
fn message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// A region in which member 1 reads, after a delay, data the closure owns. Returns whether
/// member 1 was done (and read the right value) before the region call returned or unwound,
/// and the call's result: a starting thread that left while member 1 still ran would have
/// freed what member 1 reads. `delay` must outlast what the starting thread does after a
/// panic (the panic hook may print a symbolized backtrace) for the check to catch an early
/// return.
fn slow_member_done_in_time(rt: &Runtime, delay: Duration) -> (bool, std::thread::Result<()>) {
    // Leaked: member 1 may still touch them after this function returns (the bug checked).
    let returned: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let in_time: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let data = vec![42u64; 1000];
    let r = catch_unwind(AssertUnwindSafe(|| {
        rt.region(|t| {
            if t.index() == 1 {
                std::thread::sleep(delay);
                let ok = data[999] == 42 && !returned.load(Ordering::SeqCst);
                in_time.store(ok, Ordering::SeqCst);
            }
        })
    }));
    returned.store(true, Ordering::SeqCst);
    (in_time.load(Ordering::SeqCst), r)
}

const SHORT: Duration = Duration::from_millis(20);
const LONG: Duration = Duration::from_millis(1500);

/// Panics in `spin_limit` and `waited` at every site but never unwinds out of a wait.
#[derive(Debug)]
struct PanickyWait;

impl WaitStrategy for PanickyWait {
    fn spin_limit(&self, info: &WaitInfo) -> Duration {
        panic!("spin_limit at {:?}", info.site);
    }
    fn waited(&self, _: &WaitInfo, _: &WaitOutcome) {
        panic!("waited");
    }
}

#[test]
fn a_wait_strategy_that_panics_neither_frees_the_body_nor_kills_workers() {
    watchdog(|| {
        let rt = Runtime::builder()
            .max_threads(2)
            .wait(PanickyWait)
            .build()
            .unwrap();
        for _ in 0..3 {
            // The join waits for the slow member, idle workers wait between regions.
            let (in_time, r) = slow_member_done_in_time(&rt, SHORT);
            assert!(r.is_ok());
            assert!(in_time, "the region returned before member 1 was done");
            let arrived = AtomicUsize::new(0);
            rt.region(|t| {
                arrived.fetch_add(1, Ordering::SeqCst);
                t.barrier();
                assert_eq!(arrived.load(Ordering::SeqCst), 2);
            });
        }
    });
}

/// Plans a team of 2; panics in the hooks named by the flags, once each.
#[derive(Debug, Default)]
struct PanickyPolicy {
    placement_of_member_0: AtomicBool,
    placement_of_member_1: AtomicBool,
    thread_start: AtomicBool,
    region_end: AtomicBool,
    probe_safe_point: AtomicBool,
}

fn once(flag: &AtomicBool) -> bool {
    flag.swap(false, Ordering::SeqCst)
}

impl Policy for PanickyPolicy {
    fn name(&self) -> &str {
        "panicky"
    }
    fn plan(&self, start: &RegionStart) -> Plan {
        if start.probe.is_none() && self.probe_safe_point.load(Ordering::SeqCst) {
            return Plan::probe(2);
        }
        Plan::run(2)
    }
    fn placement(&self, m: &MemberInfo) -> Placement {
        if (m.member == 0 && once(&self.placement_of_member_0))
            || (m.member == 1 && once(&self.placement_of_member_1))
        {
            panic!("placement of member {}", m.member);
        }
        Placement::Keep
    }
    fn safe_point(&self, _: &MemberInfo) {
        if once(&self.probe_safe_point) {
            panic!("safe_point in a probe");
        }
    }
    fn thread_start(&self, _: &ThreadInfo) {
        if once(&self.thread_start) {
            panic!("thread_start");
        }
    }
    fn region_end(&self, _: &RegionReport<'_>) {
        if once(&self.region_end) {
            panic!("region_end");
        }
    }
}

fn runtime_with(policy: Arc<PanickyPolicy>) -> Runtime {
    Runtime::builder()
        .max_threads(2)
        .shared_policy(policy)
        .build()
        .unwrap()
}

/// After a callback's panic, regions with a barrier still run with both members.
fn still_usable(rt: &Runtime) {
    for _ in 0..3 {
        let (in_time, r) = slow_member_done_in_time(rt, SHORT);
        assert!(r.is_ok());
        assert!(in_time, "the region returned before member 1 was done");
    }
}

#[test]
fn a_placement_panic_on_the_starting_thread_is_raised_after_the_team_joined() {
    watchdog(|| {
        let policy = Arc::new(PanickyPolicy::default());
        policy.placement_of_member_0.store(true, Ordering::SeqCst);
        let rt = runtime_with(policy);
        let (in_time, r) = slow_member_done_in_time(&rt, LONG);
        assert_eq!(message(&*r.unwrap_err()), "placement of member 0");
        assert!(in_time, "the region unwound before member 1 was done");
        still_usable(&rt);
    });
}

#[test]
fn a_placement_panic_on_a_worker_poisons_the_region() {
    watchdog(|| {
        let policy = Arc::new(PanickyPolicy::default());
        policy.placement_of_member_1.store(true, Ordering::SeqCst);
        let rt = runtime_with(policy);
        let r = catch_unwind(AssertUnwindSafe(|| rt.region(|t| t.barrier())));
        assert_eq!(message(&*r.unwrap_err()), "placement of member 1");
        still_usable(&rt);
    });
}

#[test]
fn a_thread_start_panic_does_not_end_the_worker() {
    watchdog(|| {
        let policy = Arc::new(PanickyPolicy::default());
        policy.thread_start.store(true, Ordering::SeqCst);
        let rt = runtime_with(policy);
        still_usable(&rt);
    });
}

#[test]
fn a_thread_start_hook_panic_does_not_end_the_worker() {
    watchdog(|| {
        let rt = Runtime::builder()
            .max_threads(2)
            .on_thread_start(|_| panic!("on_thread_start"))
            .build()
            .unwrap();
        let arrived = AtomicUsize::new(0);
        rt.region(|t| {
            arrived.fetch_add(1, Ordering::SeqCst);
            t.barrier();
        });
        assert_eq!(arrived.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_members_panic_comes_before_region_ends() {
    watchdog(|| {
        let policy = Arc::new(PanickyPolicy::default());
        policy.region_end.store(true, Ordering::SeqCst);
        let rt = runtime_with(policy.clone());
        let r = catch_unwind(AssertUnwindSafe(|| {
            rt.region(|t| {
                if t.index() == 1 {
                    panic!("member 1");
                }
            })
        }));
        assert_eq!(message(&*r.unwrap_err()), "member 1");
        // region_end's own panic, alone, is raised too.
        policy.region_end.store(true, Ordering::SeqCst);
        let r = catch_unwind(AssertUnwindSafe(|| rt.region(|_| {})));
        assert_eq!(message(&*r.unwrap_err()), "region_end");
        still_usable(&rt);
    });
}

#[test]
fn a_panic_in_a_probe_is_raised() {
    watchdog(|| {
        let policy = Arc::new(PanickyPolicy::default());
        policy.probe_safe_point.store(true, Ordering::SeqCst);
        let rt = runtime_with(policy);
        let r = catch_unwind(AssertUnwindSafe(|| rt.region(|_| {})));
        assert_eq!(message(&*r.unwrap_err()), "safe_point in a probe");
        still_usable(&rt);
    });
}

/// Starts a region (on its own runtime) from `plan` and `region_end`.
#[derive(Debug, Default)]
struct ReentrantPolicy {
    rt: std::sync::OnceLock<Arc<Runtime>>,
    inner_regions: AtomicUsize,
}

impl ReentrantPolicy {
    fn nested(&self) {
        if let Some(rt) = self.rt.get() {
            rt.region(|t| {
                assert_eq!(t.size(), 1, "a region started from a hook runs inline");
                self.inner_regions.fetch_add(1, Ordering::SeqCst);
            });
            let _ = rt.workers_started();
        }
    }
}

impl Policy for ReentrantPolicy {
    fn name(&self) -> &str {
        "reentrant"
    }
    fn plan(&self, _: &RegionStart) -> Plan {
        self.nested();
        Plan::run(2)
    }
    fn region_end(&self, _: &RegionReport<'_>) {
        self.nested();
    }
}

#[test]
fn regions_and_stats_from_inside_a_region_or_a_hook_do_not_deadlock() {
    watchdog(|| {
        let policy = Arc::new(ReentrantPolicy::default());
        let rt = Arc::new(
            Runtime::builder()
                .max_threads(2)
                .shared_policy(policy.clone())
                .build()
                .unwrap(),
        );
        policy.rt.set(Arc::clone(&rt)).unwrap();
        let started = AtomicUsize::new(0);
        rt.parallel_for(0..2, Schedule::Static, |_| {
            started.fetch_max(rt.workers_started(), Ordering::SeqCst);
        });
        assert_eq!(started.load(Ordering::SeqCst), 1);
        assert_eq!(policy.inner_regions.load(Ordering::SeqCst), 2);
        // The runtime refers to itself through its policy: break the cycle.
        drop(policy.rt.get().cloned());
    });
}

#[test]
fn dynamic_chunks_that_would_wrap_the_counter_hand_out_each_index_once() {
    watchdog(|| {
        let rt = Runtime::builder().max_threads(3).build().unwrap();
        for chunk in [1usize << 63, usize::MAX, (1 << 62) + 1] {
            let hits: Vec<AtomicUsize> = (0..10).map(|_| AtomicUsize::new(0)).collect();
            rt.parallel_for(0..10, Schedule::dynamic(chunk), |i| {
                hits[i].fetch_add(1, Ordering::SeqCst);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::SeqCst) == 1));
            let mut v = vec![0u32; 10];
            rt.parallel_slice_mut(&mut v, Schedule::dynamic(chunk), |_, part| {
                for x in part {
                    *x += 1;
                }
            });
            assert_eq!(v, vec![1; 10]);
        }
        // A range near usize::MAX: the counter moves by compare-and-swap there.
        let top = usize::MAX - 5..usize::MAX;
        let seen = AtomicUsize::new(0);
        rt.parallel_for(top, Schedule::dynamic(2), |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(seen.load(Ordering::SeqCst), 5);
    });
}

#[test]
fn a_thread_name_with_a_nul_byte_is_accepted() {
    watchdog(|| {
        let rt = Runtime::builder()
            .max_threads(2)
            .thread_name(|i| format!("worker\0{i}"))
            .build()
            .unwrap();
        let n = AtomicUsize::new(0);
        rt.region(|_| {
            n.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(n.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn waits_at_every_site_reach_the_strategy() {
    // The strategy above is consulted at joins and barriers (not only idle waits): a check
    // that the panicking-strategy test exercises what it claims.
    #[derive(Debug, Default)]
    struct Sites(std::sync::Mutex<Vec<WaitSite>>);
    impl WaitStrategy for Sites {
        fn spin_limit(&self, info: &WaitInfo) -> Duration {
            self.0.lock().unwrap().push(info.site);
            Duration::ZERO
        }
    }
    watchdog(|| {
        let sites = Arc::new(Sites::default());
        let rt = Runtime::builder()
            .max_threads(2)
            .shared_wait(sites.clone())
            .build()
            .unwrap();
        for _ in 0..3 {
            let _ = slow_member_done_in_time(&rt, SHORT);
            rt.region(|t| {
                if t.index() == 0 {
                    std::thread::sleep(Duration::from_millis(20));
                }
                t.barrier();
            });
        }
        drop(rt);
        let s = sites.0.lock().unwrap();
        for site in [WaitSite::Join, WaitSite::Barrier, WaitSite::Idle] {
            assert!(s.contains(&site), "no wait at {site:?}: {s:?}");
        }
    });
}

/// A worker's start hook that starts a region of its own runtime: the region runs inline,
/// with a team of one (the thread starting the first region holds the region lock and waits
/// for this worker, so a real region would deadlock).
#[test]
fn a_region_started_from_a_workers_start_hook_runs_inline() {
    watchdog(|| {
        let rt_cell: Arc<std::sync::OnceLock<std::sync::Weak<Runtime>>> = Arc::default();
        let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let rt = {
            let (cell, sizes) = (Arc::clone(&rt_cell), Arc::clone(&sizes));
            Arc::new(
                Runtime::builder()
                    .max_threads(2)
                    .on_thread_start(move |_| {
                        if let Some(rt) = cell.get().and_then(std::sync::Weak::upgrade) {
                            rt.region(|t| sizes.lock().unwrap().push(t.size()));
                        }
                    })
                    .build()
                    .unwrap(),
            )
        };
        rt_cell.set(Arc::downgrade(&rt)).unwrap();
        rt.region(|_| {});
        still_usable(&rt);
        assert_eq!(*sizes.lock().unwrap(), vec![1]);
    });
}

/// A value whose drop makes parallel calls on a runtime of 2 (a region with a team barrier, an
/// iterator reduction) and records what they computed.
struct ParallelInDrop<'a> {
    rt: &'a Runtime,
    sums: &'a std::sync::Mutex<Vec<u64>>,
}

impl Drop for ParallelInDrop<'_> {
    fn drop(&mut self) {
        use asat::prelude::*;
        let met = AtomicUsize::new(0);
        self.rt.region(|t| {
            met.fetch_add(1, Ordering::SeqCst);
            t.barrier();
        });
        let sum: u64 = self.rt.install(|| (1..=100u64).into_par_iter().sum());
        self.sums
            .lock()
            .unwrap()
            .extend([met.load(Ordering::SeqCst) as u64, sum]);
    }
}

#[test]
fn parallel_calls_in_a_drop_run_while_a_panic_unwinds() {
    watchdog(|| {
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(asat::Fixed::new(2))
            .build()
            .unwrap();
        let sums = std::sync::Mutex::new(Vec::new());
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _d = ParallelInDrop {
                rt: &rt,
                sums: &sums,
            };
            panic!("outer");
        }));
        assert_eq!(message(&*r.unwrap_err()), "outer");
        // both members met at the barrier and the sum is whole (no abort, no hang)
        assert_eq!(*sums.lock().unwrap(), [2, 5050]);
        still_usable(&rt);
    });
}
