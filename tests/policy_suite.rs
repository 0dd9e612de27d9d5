//! One suite of runtime behaviour, run against every policy (as tokio's `rt_test!`).
//!
//! To add a policy, add a line to the `policy_suite!` invocation at the bottom: a module name
//! and an expression building a `Runtime` with it.

mod common;
#[path = "policy_suite/iter_extra.rs"]
mod iter_extra;
#[path = "policy_suite/iter_more.rs"]
mod iter_more;
#[path = "policy_suite/pool_api.rs"]
mod pool_api;

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
                fn reductions_of_owned_large_and_nested_values() {
                    super::reductions_of_owned_values(&rt());
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

                #[test]
                fn iter_sum_equals_the_serial_sum() {
                    super::iter_sum(&rt());
                }

                #[test]
                fn iter_collect_keeps_the_order() {
                    super::iter_collect_in_order(&rt());
                }

                #[test]
                fn iter_par_iter_mut_updates_every_item_once() {
                    super::iter_par_iter_mut(&rt());
                }

                #[test]
                fn iter_zips_pair_items_by_index() {
                    super::iter_zips(&rt());
                }

                #[test]
                fn iter_filtered_collect_keeps_the_order() {
                    super::iter_filtered_collect(&rt());
                }

                #[test]
                fn iter_panics_propagate_and_the_runtime_stays_usable() {
                    super::iter_panics_propagate(&rt());
                }

                #[test]
                fn iter_sorts_equal_std_and_survive_a_panicking_comparator() {
                    super::iter_more::iter_sorts(&rt());
                }

                #[test]
                fn iter_scope_runs_every_job_and_reraises_panics() {
                    super::iter_more::iter_scope(&rt());
                }

                #[test]
                fn iter_scope_broadcasts_reach_every_member() {
                    super::iter_more::iter_scope_broadcast(&rt());
                }

                #[test]
                fn iter_split_and_tree_walks_keep_rayons_order() {
                    super::iter_more::iter_recursive(&rt());
                }

                #[test]
                fn iter_blocks_run_in_rounds_and_searches_stop() {
                    super::iter_more::iter_blocks(&rt());
                }

                #[test]
                fn iter_try_forms_return_the_failure_and_stop() {
                    super::iter_extra::iter_try(&rt());
                }

                #[test]
                fn iter_more_adapters_equal_std() {
                    super::iter_extra::iter_adapters_extra(&rt());
                }

                #[test]
                fn iter_scope_variants_run_every_job() {
                    super::iter_extra::iter_scope_variants(&rt());
                }

                #[test]
                fn iter_collections_yield_their_items() {
                    super::iter_extra::iter_collections(&rt());
                }

                #[test]
                fn iter_slice_and_string_sources_equal_std() {
                    super::iter_extra::iter_strings(&rt());
                }

                #[test]
                fn broadcast_runs_op_once_per_member_of_the_team() {
                    super::pool_api::broadcast(&rt());
                }

                #[test]
                fn spawned_jobs_run_once_on_their_runtime() {
                    super::pool_api::spawn(&rt());
                }
            }
        )*
    };
}

use asat::prelude::*;
use asat::{Runtime, Schedule};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const SCHEDULES: [Schedule; 7] = [
    Schedule::Static,
    Schedule::StaticChunked { chunk: 1 },
    Schedule::StaticChunked { chunk: 7 },
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

/// Values that own memory (moved through the runtime's result slots), values too large for
/// them, reductions inside a region (inline), and a member that panics after others have put
/// their values: those values are dropped, and the next reduction is right.
fn reductions_of_owned_values(rt: &Runtime) {
    for s in SCHEDULES {
        // every index once; under the static schedule member order is index order
        let mut got = rt.parallel_reduce(
            0..1000,
            s,
            Vec::new,
            |mut v: Vec<usize>, r| {
                v.extend(r);
                v
            },
            |mut a, b| {
                a.extend(b);
                a
            },
        );
        if s != Schedule::Static {
            got.sort_unstable();
        }
        assert_eq!(got, (0..1000).collect::<Vec<_>>(), "{s:?}");
        let big = rt.parallel_reduce(
            0..1000,
            s,
            || [0u64; 32],
            |mut a, r| {
                for i in r {
                    a[i % 32] += i as u64;
                }
                a
            },
            |a, b| std::array::from_fn(|k| a[k] + b[k]),
        );
        let mut want = [0u64; 32];
        (0..1000).for_each(|i| want[i % 32] += i as u64);
        assert_eq!(big, want, "{s:?}");
    }
    let inner = Mutex::new(Vec::new());
    rt.region(|team| {
        let sum = rt.parallel_reduce(
            0..100,
            Schedule::Static,
            || 0u64,
            |a, r| a + r.map(|i| i as u64).sum::<u64>(),
            |a, b| a + b,
        );
        inner.lock().unwrap().push((team.index(), sum));
    });
    assert!(inner.into_inner().unwrap().iter().all(|&(_, s)| s == 4950));
    let tracked = Arc::new(());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.parallel_reduce(
            0..64,
            Schedule::Static,
            || Arc::clone(&tracked),
            |acc, r| {
                assert!(!r.contains(&63), "the last index panics");
                acc
            },
            |a, _b| a,
        )
    }));
    assert!(r.is_err());
    assert_eq!(
        Arc::strong_count(&tracked),
        1,
        "the other members' values were dropped"
    );
    let sum = rt.parallel_reduce(
        0..64,
        Schedule::Static,
        || 0u64,
        |a, r| a + r.len() as u64,
        |a, b| a + b,
    );
    assert_eq!(sum, 64);
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

// The iterator layer on the suite's runtime (installed): each terminal call is one region of
// it, under every schedule and splitting hint.

/// `sum` equals the serial sum.
fn iter_sum(rt: &Runtime) {
    rt.install(|| {
        // the calls run on this runtime: one region each
        assert_eq!(asat::current_num_threads(), rt.max_threads());
        let regions = rt.stats().regions;
        assert_eq!((0..100u64).into_par_iter().sum::<u64>(), 4950);
        assert_eq!(rt.stats().regions, regions + 1);
        for n in [0u64, 1, 2, 7, 1000, 100_003] {
            let want = n * n.saturating_sub(1) / 2;
            assert_eq!((0..n).into_par_iter().sum::<u64>(), want, "{n}");
            assert_eq!((0..n).into_par_iter().with_max_len(64).sum::<u64>(), want);
            assert_eq!((0..n).into_par_iter().with_min_len(100).sum::<u64>(), want);
            for s in SCHEDULES {
                let got = (0..n).into_par_iter().with_schedule(s).sum::<u64>();
                assert_eq!(got, want, "{n} items, {s:?}");
            }
            // whole numbers below 2^53: exact in any order
            let v: Vec<f64> = (0..n).map(|i| i as f64).collect();
            assert_eq!(v.par_iter().sum::<f64>(), want as f64);
        }
    });
}

/// `collect`, a non-commutative `reduce` and `collect_into_vec` keep the items' order.
fn iter_collect_in_order(rt: &Runtime) {
    rt.install(|| {
        for n in [0usize, 1, 5, 1000, 20_001] {
            let want: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            let items = || (0..n).into_par_iter();
            assert_eq!(items().map(|i| i.to_string()).collect::<Vec<_>>(), want);
            for s in SCHEDULES {
                let got: Vec<String> = items().with_schedule(s).map(|i| i.to_string()).collect();
                assert_eq!(got, want, "{s:?}");
            }
            let got: Vec<String> = items().with_max_len(7).map(|i| i.to_string()).collect();
            assert_eq!(got, want);
            let got: Vec<String> = items().with_min_len(300).map(|i| i.to_string()).collect();
            assert_eq!(got, want);
            // a reduction that is associative but not commutative
            let got = items()
                .with_max_len(13)
                .map(|i| i.to_string())
                .reduce(String::new, |a, b| a + &b);
            assert_eq!(got, want.concat());
            let mut target = vec![String::from("old"); 3];
            items().map(|i| i.to_string()).collect_into_vec(&mut target);
            assert_eq!(target, want);
        }
    });
}

/// `par_iter_mut` and `par_chunks_mut` reach every item once.
fn iter_par_iter_mut(rt: &Runtime) {
    rt.install(|| {
        for s in SCHEDULES {
            let mut v: Vec<u64> = (0..10_007).collect();
            v.par_iter_mut()
                .with_schedule(s)
                .for_each(|x| *x = *x * 2 + 1);
            assert!(
                v.iter().enumerate().all(|(i, &x)| x == 2 * i as u64 + 1),
                "{s:?}"
            );
            v.par_chunks_mut(100)
                .with_schedule(s)
                .enumerate()
                .for_each(|(c, chunk)| {
                    for x in chunk {
                        *x -= 2 * c as u64;
                    }
                });
            assert!(
                v.iter()
                    .enumerate()
                    .all(|(i, &x)| x == 2 * i as u64 + 1 - 2 * (i as u64 / 100)),
                "{s:?}"
            );
        }
        let mut v = vec![1u32; 5000];
        v.par_iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x += i as u32);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32 + 1));
    });
}

/// `zip`, `zip_eq` and tuples of sources pair items by index, as long as the shortest.
fn iter_zips(rt: &Runtime) {
    rt.install(|| {
        let a: Vec<u64> = (0..5000).collect();
        let b: Vec<u64> = (0..7000).map(|i| i * 3).collect();
        let dot: u64 = a.par_iter().zip(&b).map(|(x, y)| x * y).sum();
        assert_eq!(dot, a.iter().zip(&b).map(|(x, y)| x * y).sum::<u64>());
        let mut c = vec![0u64; 6000];
        (&mut c, &a, &b)
            .into_par_iter()
            .for_each(|(c, a, b)| *c = a + b);
        assert!(c[..5000]
            .iter()
            .enumerate()
            .all(|(i, &x)| x == 4 * i as u64));
        assert!(c[5000..].iter().all(|&x| x == 0));
        let got: Vec<(usize, u64, u64)> = (0..10_000usize, &a, b.par_chunks(2))
            .into_par_iter()
            .with_max_len(17)
            .map(|(i, a, b)| (i, *a, b.iter().sum::<u64>()))
            .collect();
        assert_eq!(got.len(), 3500);
        assert!(got
            .iter()
            .all(|&(i, a, b)| a == i as u64 && b == 3 * (4 * i as u64 + 1)));
        let pairs: Vec<(u64, u64)> = a
            .par_iter()
            .with_min_len(64)
            .zip_eq(b[..5000].par_iter())
            .map(|(x, y)| (*x, *y))
            .collect();
        assert_eq!(
            pairs,
            a.iter().copied().zip(b.iter().copied()).collect::<Vec<_>>()
        );
    });
}

/// A collect after `filter`, `filter_map` or `flat_map_iter` keeps the order.
fn iter_filtered_collect(rt: &Runtime) {
    rt.install(|| {
        for n in [0usize, 3, 1000, 30_011] {
            let keep = |i: &usize| i % 3 == 1 || i % 7 == 0;
            let want: Vec<usize> = (0..n).filter(keep).collect();
            assert_eq!(
                (0..n).into_par_iter().filter(keep).collect::<Vec<_>>(),
                want
            );
            for s in SCHEDULES {
                let got: Vec<usize> = (0..n)
                    .into_par_iter()
                    .with_schedule(s)
                    .filter(keep)
                    .collect();
                assert_eq!(got, want, "{n} items, {s:?}");
            }
            let got: Vec<usize> = (0..n)
                .into_par_iter()
                .with_max_len(50)
                .filter(keep)
                .collect();
            assert_eq!(got, want);
            let got: Vec<usize> = (0..n)
                .into_par_iter()
                .filter_map(|i| keep(&i).then_some(i))
                .collect();
            assert_eq!(got, want);
            let got: Vec<usize> = (0..n)
                .into_par_iter()
                .with_min_len(97)
                .flat_map_iter(|i| keep(&i).then_some(i))
                .collect();
            assert_eq!(got, want);
        }
    });
}

/// A panic in a closure reaches the terminal call; the runtime stays usable.
fn iter_panics_propagate(rt: &Runtime) {
    rt.install(|| {
        for s in SCHEDULES {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (0..1000usize)
                    .into_par_iter()
                    .with_schedule(s)
                    .for_each(|i| {
                        if i == 777 {
                            panic!("item 777");
                        }
                    })
            }));
            assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "item 777");
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (0..1000usize)
                    .into_par_iter()
                    .with_schedule(s)
                    .map(|i| {
                        if i == 3 {
                            panic!("item 3");
                        }
                        i.to_string()
                    })
                    .collect::<Vec<_>>()
            }));
            assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "item 3");
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                (0..1000usize)
                    .into_par_iter()
                    .with_schedule(s)
                    .filter(|i| i % 2 == 0)
                    .reduce(
                        || 0,
                        |a, b| if b == 998 { panic!("item 998") } else { a + b },
                    )
            }));
            assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "item 998");
            // still usable
            assert_eq!(
                (0..1000usize)
                    .into_par_iter()
                    .with_schedule(s)
                    .sum::<usize>(),
                499_500
            );
            let v: Vec<usize> = (0..1000usize).into_par_iter().map(|i| i * 2).collect();
            assert!(v.iter().enumerate().all(|(i, &x)| x == 2 * i));
        }
    });
    every_index_runs_once(rt);
    members_meet_at_barriers(rt);
}

/// A runtime whose team is a gang of a scheduler that lives as long as the test process: one
/// in-process scheduler, or one that joins a shared domain (its file in a folder of this suite,
/// one per user and reused by later runs, so that other programs are not in it).
fn gang_runtime(shared: bool) -> asat::Runtime {
    use asat::gang::GangScheduler;
    use std::sync::OnceLock;
    static IN_PROCESS: OnceLock<GangScheduler> = OnceLock::new();
    static SHARED: OnceLock<GangScheduler> = OnceLock::new();
    let build = || {
        let b = GangScheduler::builder().quantum(std::time::Duration::from_millis(5));
        match shared {
            true => {
                // SAFETY: getuid has no preconditions.
                let uid = unsafe { libc::getuid() };
                b.shared_dir(std::env::temp_dir().join(format!("asat-policy-suite-u{uid}")))
            }
            false => b,
        }
        .build()
        .unwrap()
    };
    let s = match shared {
        true => SHARED.get_or_init(build),
        false => IN_PROCESS.get_or_init(build),
    };
    Runtime::builder()
        .max_threads(s.cpus().len().min(3))
        .policy(s.policy())
        .build()
        .unwrap()
}

policy_suite! {
    gang_in_process => gang_runtime(false);
    gang_shared => gang_runtime(true);
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
