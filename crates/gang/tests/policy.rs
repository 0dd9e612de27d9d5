//! asat-core runtimes built with the gang policy: the runtime's usual guarantees hold, the team
//! is a gang of the shared scheduler, and several runtimes are several gangs. Installs the
//! gang stop signal's handler (this file is its own test process).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use asat_core::{CpuSet, Policy, Runtime, Schedule};
use asat_gang::{GangScheduler, GangWait};

fn sched() -> GangScheduler {
    GangScheduler::builder()
        .quantum(Duration::from_millis(5))
        .build()
        .unwrap()
}

fn rt(s: &GangScheduler) -> Runtime {
    Runtime::builder()
        .max_threads(s.cpus().len())
        .policy(s.policy())
        .build()
        .unwrap()
}

/// The mask of the thread that runs a call's first half, inside a call from outside on `rt`.
fn caller_mask_in_a_call(rt: &Runtime) -> CpuSet {
    rt.install_here(|| asat_core::join(|| CpuSet::of_current_thread().unwrap(), || ()).0)
}

#[test]
fn a_calls_thread_is_member_0_for_the_call_and_leaves_at_its_end() {
    let s = sched();
    let policy = Arc::new(s.policy());
    let rt = Runtime::builder()
        .max_threads(s.cpus().len())
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    let column0: CpuSet = std::iter::once(policy.gang().unwrap().cpu(0).unwrap()).collect();
    let own = CpuSet::of_current_thread().unwrap();
    assert_eq!(caller_mask_in_a_call(&rt), column0);
    assert_eq!(CpuSet::of_current_thread().unwrap(), own, "given back");
    // The thread is in no gang any more: it may join one itself.
    let gang = policy.gang().unwrap();
    drop(
        gang.join(0)
            .expect("the caller left the gang when its call ended"),
    );
    // Another thread's call finds member 0 free again (the first caller left the gang), and
    // so does a region after it.
    let other = std::thread::scope(|sc| sc.spawn(|| caller_mask_in_a_call(&rt)).join().unwrap());
    assert_eq!(other, column0);
    let in_region = std::sync::Mutex::new(None);
    rt.region(|team| {
        if team.index() == 0 {
            *in_region.lock().unwrap() = Some(CpuSet::of_current_thread().unwrap());
        }
    });
    assert_eq!(in_region.into_inner().unwrap(), Some(column0));
    assert_eq!(caller_mask_in_a_call(&rt), column0);
}

#[test]
fn every_index_runs_once_and_barriers_hold() {
    let s = sched();
    let rt = rt(&s);
    assert_eq!(rt.policy().name(), "gang");
    for sch in [
        Schedule::Static,
        Schedule::dynamic(3),
        Schedule::Guided { min_chunk: 2 },
    ] {
        let hits: Vec<AtomicUsize> = (0..5000).map(|_| AtomicUsize::new(0)).collect();
        rt.parallel_for(0..5000, sch, |i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(
            hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
            "{sch:?}"
        );
    }
    let n = rt.max_threads();
    let phase = AtomicUsize::new(0);
    rt.region(|team| {
        assert_eq!(team.size(), n, "the whole gang runs every region");
        for k in 0..200 {
            assert_eq!(phase.load(Ordering::SeqCst) / n, k);
            team.barrier();
            phase.fetch_add(1, Ordering::SeqCst);
            team.barrier();
        }
    });
    assert_eq!(
        format!("{:?}", rt.wait_strategy()),
        format!("{GangWait:?}"),
        "members busy-wait with the gang's strategy"
    );
}

#[test]
fn panics_propagate_and_the_runtime_stays_usable() {
    let s = sched();
    let rt = rt(&s);
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.region(|team| {
            if team.index() == team.size() - 1 {
                panic!("boom");
            }
            team.barrier();
        })
    }));
    assert!(r.is_err());
    // Member 0 left the gang at the region's end even though the region panicked: it can
    // start another region (joining again) and also join another gang.
    assert!(!asat_gang::in_gang());
    let sum = rt.parallel_reduce(
        0..1000,
        Schedule::Static,
        || 0u64,
        |a, r| a + r.map(|i| i as u64).sum::<u64>(),
        |a, b| a + b,
    );
    assert_eq!(sum, 499_500);
}

#[test]
fn several_runtimes_are_several_gangs_and_all_progress() {
    let s = sched();
    let rts: Vec<Runtime> = (0..3).map(|_| rt(&s)).collect();
    let iters: Vec<AtomicU64> = (0..3).map(|_| AtomicU64::new(0)).collect();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        for (rt, it) in rts.iter().zip(&iters) {
            let stop = &stop;
            sc.spawn(move || {
                // Many short regions: member 0 joins and leaves the gang each time.
                while !stop.load(Ordering::Relaxed) {
                    rt.region(|team| {
                        for _ in 0..50 {
                            team.barrier();
                        }
                        if team.index() == 0 {
                            it.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            });
        }
        std::thread::sleep(Duration::from_millis(1000));
        stop.store(true, Ordering::Relaxed);
    });
    let st = s.stats();
    for (g, it) in iters.iter().enumerate() {
        assert!(
            it.load(Ordering::Relaxed) >= 5,
            "gang {g} progressed: {st:?}"
        );
    }
    assert!(st.switches >= 10, "{st:?}");
    assert_eq!(st.late_stops, 0, "{st:?}");
    assert!(rts
        .iter()
        .all(|r| format!("{:?}", r.policy()).contains("GangPolicy")));
    assert_eq!(s.used_slots().len(), 3, "full-width gangs take a slot each");
    drop(rts);
    assert!(
        s.used_slots().is_empty(),
        "dropping a runtime frees its gang's cells"
    );
}

#[test]
fn a_runtime_wider_than_the_gang_domain_is_an_error() {
    let s = sched();
    let p = s.cpus().len();
    let e = Runtime::builder()
        .max_threads(p + 1)
        .policy(s.policy())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!(
            "a gang of {} threads does not fit {p} processors",
            p + 1
        )),
        "{e}"
    );
    let shared: Arc<dyn Policy> = Arc::new(s.policy());
    let _a = Runtime::builder()
        .max_threads(1)
        .shared_policy(Arc::clone(&shared))
        .build()
        .unwrap();
    let e = Runtime::builder()
        .max_threads(1)
        .shared_policy(shared)
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("already attached"), "{e}");
}
