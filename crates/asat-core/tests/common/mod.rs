//! Helpers shared by asat-core's integration tests, and by the facade's that need a scripted
//! policy or threads started at once.
#![allow(dead_code)]

use asat_core::{Plan, Policy, RegionStart};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// A policy that cycles through a script of team sizes, region after region, and through the
/// same script for the threads that take tasks, call after call.
#[derive(Debug)]
pub struct Scripted {
    sizes: Vec<usize>,
    next: AtomicUsize,
    next_tasks: AtomicUsize,
}

impl Scripted {
    pub fn new(sizes: Vec<usize>) -> Self {
        assert!(!sizes.is_empty());
        Self {
            sizes,
            next: AtomicUsize::new(0),
            next_tasks: AtomicUsize::new(0),
        }
    }
}

impl Policy for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn plan(&self, _start: &RegionStart) -> Plan {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        Plan::run(self.sizes[i % self.sizes.len()])
    }
    fn task_workers(&self, _max_threads: usize) -> usize {
        let i = self.next_tasks.fetch_add(1, Ordering::Relaxed);
        self.sizes[i % self.sizes.len()]
    }
}

/// Runs `f()` on `n` threads that start it together (past a barrier); their results, in
/// thread order. A panic on one of them is raised here.
pub fn at_once<T: Send>(n: usize, f: impl Fn() -> T + Sync) -> Vec<T> {
    let start = std::sync::Barrier::new(n);
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    f()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    })
}

/// Runs `f` on another thread and fails the test if it does not finish within `limit` (a hang
/// shows as a failure, not as a CI job that never ends).
pub fn watchdog<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not finish within {limit:?}: it hangs"))
}
