//! One suite of runtime behaviour, run against every policy (as tokio's `rt_test!`).
//!
//! To add a policy, add a line to the `policy_suite!` invocation at the bottom: a module name
//! and an expression building a `Runtime` with it.

mod common;

macro_rules! policy_suite {
    ($($name:ident => $build:expr;)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                fn rt() -> asat::Runtime {
                    $build
                }

                #[test]
                fn every_index_runs_once_under_every_schedule() {
                    super::every_index_runs_once(&rt());
                }

                #[test]
                fn region_members_meet_at_barriers() {
                    super::members_meet_at_barriers(&rt());
                }

                #[test]
                fn reductions_equal_the_serial_result() {
                    super::reductions_equal_serial(&rt());
                }

                #[test]
                fn panics_propagate_and_the_runtime_stays_usable() {
                    super::panics_propagate(&rt());
                }

                #[test]
                fn nested_regions_run_inline() {
                    super::nested_inline(&rt());
                }

                #[test]
                fn several_user_threads_share_one_runtime() {
                    super::several_callers(&rt());
                }

                #[test]
                fn slices_are_split_disjointly() {
                    super::slices_split(&rt());
                }
            }
        )*
    };
}

use asat::{Runtime, Schedule};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

const SCHEDULES: [Schedule; 5] = [
    Schedule::Static,
    Schedule::Dynamic { chunk: 1 },
    Schedule::Dynamic { chunk: 7 },
    Schedule::Guided { min_chunk: 1 },
    Schedule::Guided { min_chunk: 5 },
];

fn every_index_runs_once(rt: &Runtime) {
    for s in SCHEDULES {
        for range in [0..0, 3..4, 0..1000, 17..1234] {
            let hits: Vec<AtomicUsize> = (0..range.end).map(|_| AtomicUsize::new(0)).collect();
            rt.parallel_for(range.clone(), s, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            for (i, h) in hits.iter().enumerate() {
                let want = usize::from(range.contains(&i));
                assert_eq!(h.load(Ordering::Relaxed), want, "index {i} under {s:?}");
            }
        }
    }
}

fn members_meet_at_barriers(rt: &Runtime) {
    for _ in 0..20 {
        let phase = AtomicUsize::new(0);
        let size = AtomicUsize::new(0);
        rt.region(|team| {
            size.store(team.size(), Ordering::Relaxed);
            assert!(team.index() < team.size());
            for p in 0..5 {
                phase.fetch_add(1, Ordering::SeqCst);
                team.barrier();
                // every member has incremented for phase p before anyone passes
                assert!(phase.load(Ordering::SeqCst) >= (p + 1) * team.size());
                team.barrier();
            }
        });
        let n = size.load(Ordering::Relaxed);
        assert!(n >= 1 && n <= rt.max_threads());
        assert_eq!(phase.load(Ordering::SeqCst), 5 * n);
    }
    // a work-shared loop inside a region ends with a barrier
    let done = AtomicUsize::new(0);
    rt.region(|team| {
        for round in 0..3 {
            team.for_each(0..100, Schedule::dynamic(3), |_| {
                done.fetch_add(1, Ordering::Relaxed);
            });
            assert_eq!(done.load(Ordering::Relaxed), 100 * (round + 1));
            // nobody starts the next round before everyone has checked this one
            team.barrier();
        }
    });
}

fn reductions_equal_serial(rt: &Runtime) {
    for s in SCHEDULES {
        let got = rt.parallel_reduce(
            0..10_001,
            s,
            || 0u64,
            |acc, r| acc + r.map(|i| (i * i) as u64).sum::<u64>(),
            |a, b| a + b,
        );
        let want: u64 = (0..10_001u64).map(|i| i * i).sum();
        assert_eq!(got, want, "{s:?}");
        let max = rt.parallel_reduce(
            0..999,
            s,
            || 0usize,
            |acc, r| acc.max(r.max().unwrap_or(0)),
            usize::max,
        );
        assert_eq!(max, 998);
    }
    // an empty range gives the identity
    assert_eq!(
        rt.parallel_reduce(5..5, Schedule::Static, || 0, |a, _| a + 1, |a, b| a + b),
        0
    );
}

fn panics_propagate(rt: &Runtime) {
    // a panic on the last member while the others wait at a barrier
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.region(|team| {
            if team.index() == team.size() - 1 {
                panic!("boom from member {}", team.index());
            }
            team.barrier();
            team.barrier();
        });
    }));
    let msg = r.expect_err("the panic must reach the caller");
    let msg = msg
        .downcast_ref::<String>()
        .cloned()
        .expect("the original payload");
    assert!(msg.starts_with("boom from member"), "{msg}");
    // a panic in a loop body
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.parallel_for(0..1000, Schedule::dynamic(10), |i| {
            if i == 500 {
                panic!("index 500");
            }
        });
    }));
    assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "index 500");
    every_index_runs_once(rt);
    // a panic in a work-shared loop inside a region: the loop's counter and the barrier's
    // count are left part-way, and the next regions must start clean
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.region(|team| {
            team.for_each(0..1000, Schedule::dynamic(10), |i| {
                if i == 500 {
                    panic!("index 500 in a region");
                }
            });
            team.barrier();
        });
    }));
    assert_eq!(
        *r.unwrap_err().downcast_ref::<&str>().unwrap(),
        "index 500 in a region"
    );
    // still usable
    members_meet_at_barriers(rt);
    every_index_runs_once(rt);
}

fn nested_inline(rt: &Runtime) {
    let inner_sizes = Mutex::new(Vec::new());
    let count = AtomicUsize::new(0);
    rt.region(|_team| {
        rt.region(|inner| {
            inner_sizes.lock().unwrap().push(inner.size());
            inner.barrier();
        });
        rt.parallel_for(0..10, Schedule::Static, |_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
    });
    let sizes = inner_sizes.into_inner().unwrap();
    assert!(sizes.iter().all(|&s| s == 1), "{sizes:?}");
    assert_eq!(count.load(Ordering::Relaxed) % 10, 0);
}

fn several_callers(rt: &Runtime) {
    let total = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..50 {
                    rt.parallel_for(0..100, Schedule::Static, |i| {
                        total.fetch_add(i as u64, Ordering::Relaxed);
                    });
                }
            });
        }
    });
    assert_eq!(total.load(Ordering::Relaxed), 3 * 50 * 4950);
}

fn slices_split(rt: &Runtime) {
    for s in SCHEDULES {
        let mut v = vec![0usize; 777];
        rt.parallel_slice_mut(&mut v, s, |start, chunk| {
            for (j, x) in chunk.iter_mut().enumerate() {
                *x += start + j + 1;
            }
        });
        assert!(v.iter().enumerate().all(|(i, &x)| x == i + 1), "{s:?}");
    }
}

policy_suite! {
    fixed_all => Runtime::builder().max_threads(2).policy(asat::Fixed::all()).build().unwrap();
    fixed_four => Runtime::builder().max_threads(4).policy(asat::Fixed::new(4)).build().unwrap();
    single => Runtime::builder().max_threads(2).policy(asat::Single).build().unwrap();
    changing_sizes => Runtime::builder()
        .max_threads(3)
        .shared_policy(std::sync::Arc::new(common::Scripted::new(vec![3, 1, 2])))
        .build()
        .unwrap();
    asat_policy => Runtime::builder().max_threads(2).policy(asat::Asat::new()).build().unwrap();
    asat_eager => Runtime::builder()
        .max_threads(3)
        .policy(asat::Asat::with_config(asat::AsatConfig {
            eval_interval: std::time::Duration::from_micros(1),
            good_trig: 1,
            ..asat::AsatConfig::default()
        }))
        .build()
        .unwrap();
    blocking_waits => Runtime::builder()
        .max_threads(3)
        .wait(asat::SpinThenPark::new(std::time::Duration::ZERO))
        .build()
        .unwrap();
}
