//! The suite's cases for the runtime's own calls (`parallel_for`, `region` and its barriers,
//! `parallel_reduce`, `parallel_slice_mut`): every index once, panics, nesting and several
//! callers, run against every policy by `policy_suite!` (in a file of their own to keep
//! `policy_suite.rs` short).

use asat::{Runtime, Schedule};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::SCHEDULES;

pub fn every_index_runs_once(rt: &Runtime) {
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

pub fn members_meet_at_barriers(rt: &Runtime) {
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

pub fn reductions_equal_serial(rt: &Runtime) {
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
pub fn reductions_of_owned_values(rt: &Runtime) {
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

pub fn panics_propagate(rt: &Runtime) {
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

pub fn nested_inline(rt: &Runtime) {
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

pub fn several_callers(rt: &Runtime) {
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

pub fn slices_split(rt: &Runtime) {
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
