//! Faults asat-core must survive without hanging: a region started by a helper
//! thread of a running region, a worker thread the system refuses to start, and panic payloads
//! whose destructors panic. Each test runs under a watchdog: a hang fails it instead of
//! stalling the suite.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

mod common;

use asat_core::{Fixed, Runtime, Schedule, WaitInfo, WaitStrategy};

fn watchdog<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    common::watchdog(Duration::from_secs(60), f)
}

fn runtime(threads: usize) -> Runtime {
    Runtime::builder()
        .max_threads(threads)
        .policy(Fixed::new(threads))
        .build()
        .unwrap()
}

/// A panic payload whose destructor panics.
struct Bomb;
impl Drop for Bomb {
    fn drop(&mut self) {
        // Not while unwinding already (that would abort the test process, not show the bug).
        if !std::thread::panicking() {
            panic!("the payload's destructor panics");
        }
    }
}

/// Catches a region's panic and leaks its payload (a `Bomb` would panic when dropped here).
fn leak_panic(f: impl FnOnce()) -> bool {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => false,
        Err(p) => {
            std::mem::forget(p);
            true
        }
    }
}

#[test]
fn a_helper_thread_of_a_region_starts_regions_without_a_hang() {
    watchdog(|| {
        let rt = runtime(2);
        let total = AtomicUsize::new(0);
        rt.region(|team| {
            if team.index() == 0 {
                // The body waits for a thread that starts loops and a region on the same
                // runtime, whose lock this region holds: the loops run on its tasks (without
                // waiting for the lock), the region inline on the helper after the wait.
                std::thread::scope(|s| {
                    s.spawn(|| {
                        rt.parallel_for(0..100, Schedule::Static, |_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        });
                        rt.region(|t| {
                            assert_eq!(t.size(), 1);
                            total.fetch_add(1000, Ordering::Relaxed);
                        });
                        let sum = rt.parallel_reduce(
                            0..10,
                            Schedule::Static,
                            || 0u64,
                            |a, r| a + r.len() as u64,
                            |a, b| a + b,
                        );
                        assert_eq!(sum, 10);
                    });
                });
            }
        });
        assert_eq!(total.into_inner(), 1100);
        assert_eq!(rt.stats().inline_busy, 1);
        // and the runtime still runs full teams
        let size = AtomicUsize::new(0);
        rt.region(|t| {
            size.fetch_max(t.size(), Ordering::Relaxed);
        });
        assert_eq!(size.into_inner(), 2);
    });
}

#[test]
fn a_worker_the_system_refuses_is_reported_and_the_team_runs_smaller() {
    watchdog(|| {
        // A stack no system maps: 1 TiB per thread.
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(Fixed::new(2))
            .stack_size(1 << 40)
            .build()
            .unwrap();
        let sum = rt.parallel_reduce(
            0..1000,
            Schedule::Static,
            || 0u64,
            |a, r| a + r.map(|i| i as u64).sum::<u64>(),
            |a, b| a + b,
        );
        assert_eq!(sum, 499_500);
        let size = AtomicUsize::new(0);
        rt.region(|t| {
            size.fetch_max(t.size(), Ordering::Relaxed);
        });
        assert_eq!(size.into_inner(), 1, "the team is what could start");
        let stats = rt.stats();
        assert!(stats.spawn_failures >= 1, "{stats:?}");
        assert_eq!(stats.last_team, 1);
        assert_eq!(rt.workers_started(), 0);
    });
}

#[test]
fn calls_handed_to_a_spawn_thread_the_system_refuses_run_on_the_caller() {
    watchdog(|| {
        // Named threads: calls from this thread go to a spawn thread, which cannot start
        // (1 TiB stacks); the caller runs them itself, once.
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(Fixed::new(2))
            .thread_name(|i| format!("refused-{i}"))
            .stack_size(1 << 40)
            .build()
            .unwrap();
        assert!(rt.hands_calls_over());
        assert_eq!(rt.join(|| 1, || 2), (1, 2));
        let got = rt.broadcast(|ctx| ctx.index());
        assert_eq!(got, [0]);
        assert!(rt.stats().spawn_failures >= 1);
    });
}

#[test]
fn workers_survive_payloads_whose_destructors_panic() {
    watchdog(|| {
        let rt = runtime(2);
        for _ in 0..3 {
            // Both members panic: the runtime keeps the first payload and drops the other,
            // on whichever thread panicked second.
            assert!(leak_panic(|| rt.region(|_| std::panic::panic_any(Bomb))));
        }
        // Every worker is still there: an SPMD region needs all of them.
        let seen = AtomicUsize::new(0);
        rt.region(|team| {
            seen.fetch_add(1, Ordering::Relaxed);
            team.barrier();
        });
        assert_eq!(seen.into_inner(), 2);
    });
}

/// A strategy whose spin limit panics with a payload whose destructor panics.
#[derive(Debug)]
struct BombStrategy;
impl WaitStrategy for BombStrategy {
    fn spin_limit(&self, _: &WaitInfo) -> Duration {
        std::panic::panic_any(Bomb)
    }
}

#[test]
fn waits_survive_strategy_payloads_whose_destructors_panic() {
    watchdog(|| {
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(Fixed::new(2))
            .wait(BombStrategy)
            .build()
            .unwrap();
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let seen = AtomicUsize::new(0);
        for _ in 0..20 {
            rt.region(|team| {
                seen.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
                team.barrier();
            });
        }
        std::panic::set_hook(prev);
        assert_eq!(seen.into_inner(), 40);
    });
}
