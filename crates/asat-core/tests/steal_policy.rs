//! The policy's hooks on the work-stealing engine: each call from outside asks `task_workers`
//! and ends with `task_call_end` (also when it unwinds), the threads that run its tasks are
//! placed (`MemberInfo::tasks`), and each task taken from a queue passes a safe point.

mod common;

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use asat_core::{MemberInfo, Placement, Plan, Policy, RegionStart, Runtime};
use common::watchdog;

/// Long enough for any of these calls on a loaded machine; reached only by a hang.
const LIMIT: Duration = Duration::from_secs(120);

/// Records what the engine tells it.
#[derive(Debug, Default)]
struct Recorder {
    asked: AtomicUsize,
    ended: AtomicUsize,
    /// The pool indices placed for tasks, and the team sizes they were told.
    placed: Mutex<Vec<(usize, usize)>>,
    /// Placements of region members.
    region_placed: AtomicUsize,
    safe_points: AtomicUsize,
}

impl Policy for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        Plan::run(start.max_threads)
    }

    fn task_workers(&self, max_threads: usize) -> usize {
        self.asked.fetch_add(1, Ordering::SeqCst);
        max_threads
    }

    fn task_call_end(&self) {
        self.ended.fetch_add(1, Ordering::SeqCst);
    }

    fn placement(&self, member: &MemberInfo) -> Placement {
        if member.tasks {
            let mut placed = self.placed.lock().unwrap();
            placed.push((member.member, member.team_size));
        } else {
            self.region_placed.fetch_add(1, Ordering::SeqCst);
        }
        Placement::Keep
    }

    fn safe_point(&self, member: &MemberInfo) {
        if member.tasks {
            self.safe_points.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A recursion of joins whose `2^depth` leaves sleep `leaf` (so that every thread of the pool
/// takes part); returns the threads that ran leaves.
fn sleepy(depth: u32, leaf: Duration, seen: &Mutex<HashSet<thread::ThreadId>>) {
    if depth == 0 {
        thread::sleep(leaf);
        seen.lock().unwrap().insert(thread::current().id());
        return;
    }
    asat_core::join(
        || sleepy(depth - 1, leaf, seen),
        || sleepy(depth - 1, leaf, seen),
    );
}

fn pool(policy: &Arc<Recorder>) -> Runtime {
    Runtime::builder()
        .max_threads(2)
        .shared_policy(policy.clone())
        .build()
        .unwrap()
}

#[test]
fn each_call_is_asked_for_placed_and_ended_and_its_stolen_tasks_pass_safe_points() {
    let rec = Arc::new(Recorder::default());
    let r = rec.clone();
    let threads = watchdog(LIMIT, move || {
        let rt = pool(&r);
        let seen = Mutex::new(HashSet::new());
        for _ in 0..3 {
            rt.install_here(|| sleepy(5, Duration::from_millis(3), &seen));
        }
        seen.into_inner().unwrap().len()
    });
    assert_eq!(threads, 2, "the leaves ran on both threads");
    // One call per outermost join (the inner ones are the call's own tasks).
    assert_eq!(rec.asked.load(Ordering::SeqCst), 3);
    assert_eq!(rec.ended.load(Ordering::SeqCst), 3);
    let placed = rec.placed.lock().unwrap().clone();
    assert_eq!(
        placed.iter().filter(|&&(m, _)| m == 0).count(),
        3,
        "the calling thread, once per call: {placed:?}"
    );
    assert!(
        placed.iter().any(|&(m, _)| m == 1),
        "the worker, as it took tasks: {placed:?}"
    );
    assert!(placed.iter().all(|&(_, n)| n == 2), "{placed:?}");
    assert!(rec.safe_points.load(Ordering::SeqCst) >= 1);
    assert_eq!(rec.region_placed.load(Ordering::SeqCst), 0);
}

#[test]
fn a_call_that_unwinds_is_ended_too() {
    let rec = Arc::new(Recorder::default());
    let r = rec.clone();
    watchdog(LIMIT, move || {
        let rt = pool(&r);
        let got = catch_unwind(AssertUnwindSafe(|| {
            rt.install_here(|| asat_core::join(|| panic!("in a"), || ()))
        }));
        assert!(got.is_err());
        // The pool goes on.
        assert_eq!(rt.install_here(|| asat_core::join(|| 1, || 2)), (1, 2));
    });
    assert_eq!(rec.asked.load(Ordering::SeqCst), 2);
    assert_eq!(rec.ended.load(Ordering::SeqCst), 2);
}

/// A policy whose task hooks panic: calls still run, and end.
#[derive(Debug)]
struct Panicky;

impl Policy for Panicky {
    fn name(&self) -> &str {
        "panicky"
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        Plan::run(start.max_threads)
    }

    fn task_call_end(&self) {
        panic!("in task_call_end");
    }

    fn placement(&self, _member: &MemberInfo) -> Placement {
        panic!("in placement");
    }

    fn safe_point(&self, _member: &MemberInfo) {
        panic!("in safe_point");
    }
}

#[test]
fn panics_in_the_task_hooks_leave_the_calls_whole() {
    let seen = watchdog(LIMIT, || {
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(Panicky)
            .build()
            .unwrap();
        let seen = Mutex::new(HashSet::new());
        for _ in 0..2 {
            rt.install_here(|| sleepy(4, Duration::from_millis(2), &seen));
        }
        seen.into_inner().unwrap().len()
    });
    assert_eq!(seen, 2);
}
