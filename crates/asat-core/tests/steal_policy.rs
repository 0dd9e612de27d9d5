//! The policy's hooks on the work-stealing engine: each call from outside asks `task_workers`
//! and ends with `task_call_end` (also when it unwinds), a long call asks `task_refresh` and
//! follows its number, the threads that run its tasks are placed (`MemberInfo::tasks`), and
//! each task taken from a queue passes a safe point.

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

    fn task_refresh(&self, _max_threads: usize) -> Option<usize> {
        panic!("in task_refresh");
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

/// Lets a number of threads take tasks that the test sets, at each call and, where it
/// refreshes, while calls run.
#[derive(Debug)]
struct Number {
    n: AtomicUsize,
    refreshes: bool,
    refreshed: AtomicUsize,
}

impl Number {
    fn new(n: usize, refreshes: bool) -> Arc<Self> {
        Arc::new(Number {
            n: AtomicUsize::new(n),
            refreshes,
            refreshed: AtomicUsize::new(0),
        })
    }
}

impl Policy for Number {
    fn name(&self) -> &str {
        "number"
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        Plan::run(start.max_threads)
    }

    fn task_workers(&self, _max_threads: usize) -> usize {
        self.n.load(Ordering::SeqCst)
    }

    fn task_refresh(&self, _max_threads: usize) -> Option<usize> {
        if !self.refreshes {
            return None;
        }
        self.refreshed.fetch_add(1, Ordering::SeqCst);
        Some(self.n.load(Ordering::SeqCst))
    }
}

fn pool_of(n: usize, policy: &Arc<Number>) -> Runtime {
    Runtime::builder()
        .max_threads(n)
        .shared_policy(policy.clone())
        .build()
        .unwrap()
}

#[test]
fn workers_kept_out_by_one_call_take_part_in_the_next_when_the_number_rises() {
    let policy = Number::new(1, false);
    let p = policy.clone();
    let (alone, after) = watchdog(LIMIT, move || {
        let rt = pool_of(4, &p);
        let seen = Mutex::new(HashSet::new());
        rt.install_here(|| sleepy(3, Duration::from_millis(2), &seen));
        let alone = seen.lock().unwrap().len();
        // The workers, kept out, have gone to sleep.
        thread::sleep(Duration::from_millis(100));
        p.n.store(4, Ordering::SeqCst);
        let seen = Mutex::new(HashSet::new());
        rt.install_here(|| sleepy(6, Duration::from_millis(2), &seen));
        (alone, seen.into_inner().unwrap().len())
    });
    assert_eq!(alone, 1, "one thread may take tasks");
    assert!(after >= 2, "the leaves ran on {after} threads of 4");
}

#[test]
fn a_long_call_follows_the_number_while_it_runs() {
    let policy = Number::new(1, true);
    let p = policy.clone();
    let (threads, early) = watchdog(LIMIT, move || {
        let rt = pool_of(4, &p);
        let seen = Mutex::new(HashSet::new());
        let early = Mutex::new(HashSet::new());
        let start = std::time::Instant::now();
        // One call of 256 leaves of 1 ms; the number rises once it has run for 30 ms.
        let leaf = |seen: &Mutex<HashSet<thread::ThreadId>>| {
            if start.elapsed() < Duration::from_millis(25) {
                early.lock().unwrap().insert(thread::current().id());
            }
            if start.elapsed() >= Duration::from_millis(30) {
                p.n.store(4, Ordering::SeqCst);
            }
            thread::sleep(Duration::from_millis(1));
            seen.lock().unwrap().insert(thread::current().id());
        };
        fn tree(depth: u32, leaf: &(dyn Fn() + Sync)) {
            if depth == 0 {
                return leaf();
            }
            asat_core::join(|| tree(depth - 1, leaf), || tree(depth - 1, leaf));
        }
        rt.install_here(|| tree(8, &|| leaf(&seen)));
        let early = early.into_inner().unwrap().len();
        (seen.into_inner().unwrap().len(), early)
    });
    assert_eq!(early, 1, "before the rise, one thread took tasks");
    assert!(
        policy.refreshed.load(Ordering::SeqCst) >= 1,
        "the call asked again"
    );
    assert!(threads >= 2, "the leaves ran on {threads} threads of 4");
}
