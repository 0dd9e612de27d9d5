//! asat-implicit's strategies as asat-core wait strategies: one suite run through a runtime
//! built with each (`Runtime::builder().wait(...)`), plus what the adaptive strategies learn
//! from a runtime's barriers and joins.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use asat_core::{Fixed, Runtime, Schedule};
use asat_implicit::{
    AdaptiveGlobal, AdaptiveLocal, AnyStrategy, Block, Config, FixedSpin, Oracle, Spin, TwoPhase,
};

fn cfg() -> Config {
    Config::builder()
        .context_switch(Duration::from_micros(30))
        .release_latency(Duration::from_micros(1))
        .build()
        .unwrap()
}

fn runtime(wait: impl asat_core::WaitStrategy + 'static) -> Runtime {
    Runtime::builder()
        .max_threads(3)
        .policy(Fixed::new(3))
        .wait(wait)
        .build()
        .unwrap()
}

/// Two threads sharing `wait`, which the test keeps to look at what it learned.
fn two_threads(wait: Arc<dyn asat_core::WaitStrategy>) -> Runtime {
    Runtime::builder()
        .max_threads(2)
        .policy(Fixed::new(2))
        .shared_wait(wait)
        .build()
        .unwrap()
}

macro_rules! wait_suite {
    ($($name:ident => $wait:expr;)*) => {$(
        mod $name {
            use super::*;

            fn rt() -> Runtime {
                runtime($wait)
            }

            #[test]
            fn loops_run_every_index_once() {
                super::loops_run_every_index_once(&rt());
            }

            #[test]
            fn members_meet_at_barriers() {
                super::members_meet_at_barriers(&rt());
            }

            #[test]
            fn panics_propagate_and_the_runtime_stays_usable() {
                super::panics_propagate(&rt());
            }
        }
    )*};
}

wait_suite! {
    block => Block;
    spin => Spin;
    fixed => FixedSpin::with_config(&cfg());
    oracle => Oracle::with_config(Duration::from_micros(100), &cfg());
    local => AdaptiveLocal::with_config(&cfg());
    global => AdaptiveGlobal::with_config(&cfg());
    any_global => AnyStrategy::by_name("global", &cfg()).unwrap();
}

fn loops_run_every_index_once(rt: &Runtime) {
    for schedule in [Schedule::Static, Schedule::dynamic(3), Schedule::guided(2)] {
        let hits: Vec<AtomicUsize> = (0..500).map(|_| AtomicUsize::new(0)).collect();
        for _ in 0..20 {
            rt.parallel_for(0..hits.len(), schedule, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
        }
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 20));
    }
}

fn members_meet_at_barriers(rt: &Runtime) {
    let phase = AtomicUsize::new(0);
    let arrived = AtomicUsize::new(0);
    rt.region(|team| {
        for p in 0..200 {
            assert_eq!(phase.load(Ordering::SeqCst), p);
            if arrived.fetch_add(1, Ordering::SeqCst) + 1 == team.size() {
                arrived.store(0, Ordering::SeqCst);
                phase.fetch_add(1, Ordering::SeqCst);
            }
            team.barrier();
        }
    });
    assert_eq!(phase.load(Ordering::SeqCst), 200);
}

fn panics_propagate(rt: &Runtime) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.region(|team| {
            if team.index() == 1 {
                panic!("member 1 fails");
            }
            // the others wait at a barrier member 1 never reaches: poisoning releases them
            team.barrier();
        })
    }));
    let msg = r.unwrap_err();
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"member 1 fails"));
    let n = AtomicUsize::new(0);
    rt.parallel_for(0..10, Schedule::Static, |_| {
        n.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(n.load(Ordering::Relaxed), 10);
}

/// A team barrier with a deliberate imbalance: member 0 busy-works ~3 ms longer each phase.
fn imbalanced_phases(rt: &Runtime, phases: usize) {
    rt.region(|team| {
        for _ in 0..phases {
            if team.index() == 0 {
                let t = Instant::now();
                while t.elapsed() < Duration::from_millis(3) {
                    std::hint::spin_loop();
                }
            }
            team.barrier();
        }
    });
}

#[test]
fn global_learns_the_imbalance_from_team_barrier_arrivals() {
    let g = Arc::new(AdaptiveGlobal::with_config(&cfg()));
    let rt = two_threads(g.clone());
    assert_eq!(g.barrier_spin(), Duration::from_micros(60));
    imbalanced_phases(&rt, 30);
    let v = g
        .imbalance_estimate()
        .expect("the team barrier reported arrivals");
    assert!(v >= Duration::from_millis(2), "estimate {v:?}");
    // 3 ms is more than V = 10 cs = 300 µs: spin only S. (Whether a waiter then blocks depends
    // on the machine: on a loaded one the late member may arrive while the waiter is off its
    // CPU, so blocks are not asserted.)
    assert_eq!(g.barrier_spin(), Duration::from_micros(60));
}

#[test]
fn global_spins_through_a_small_imbalance() {
    let g = Arc::new(AdaptiveGlobal::with_config(
        &Config::builder()
            .context_switch(Duration::from_millis(5))
            .release_latency(Duration::from_micros(1))
            .build()
            .unwrap(),
    ));
    let rt = two_threads(g.clone());
    imbalanced_phases(&rt, 30);
    // 3 ms < V = 50 ms: spin the imbalance plus the release latency (at least S = 10 ms)
    let v = g.imbalance_estimate().unwrap();
    assert!(g.barrier_spin() >= v);
    assert!(g.barrier_spin() >= Duration::from_millis(10));
}

#[test]
fn global_learns_from_joins() {
    let g = Arc::new(AdaptiveGlobal::with_config(&cfg()));
    let rt = two_threads(g.clone());
    let done = AtomicU64::new(0);
    for _ in 0..30 {
        // an SPMD region (not a loop, whose unclaimed members the starter would run itself):
        // the starter finishes at once and waits at the join for member 1's 2 ms
        rt.region(|team| {
            if team.index() == 1 {
                let t = Instant::now();
                while t.elapsed() < Duration::from_millis(2) {
                    std::hint::spin_loop();
                }
            }
            done.fetch_add(1, Ordering::Relaxed);
        });
    }
    assert_eq!(done.load(Ordering::Relaxed), 60);
    let v = g.imbalance_estimate().expect("join waits were recorded");
    assert!(v >= Duration::from_millis(1), "estimate {v:?}");
}

#[test]
fn local_learns_from_waits_at_team_barriers() {
    let l = Arc::new(AdaptiveLocal::with_config(&cfg()));
    let rt = two_threads(l.clone());
    imbalanced_phases(&rt, 30);
    let v = l
        .imbalance_estimate()
        .expect("waiters recorded their waits");
    assert!(v >= Duration::from_millis(1), "estimate {v:?}");
}
