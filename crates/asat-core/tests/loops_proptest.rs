//! Property tests: every index of every schedule runs exactly once for random ranges, chunk
//! sizes and team sizes, also when the team size changes from region to region; reductions
//! equal the serial result; loops stopped early (`_until`) run each index at most once, the
//! one that stops them always, and leave the runtime clean for the next loop.

mod common;

use asat_core::{Runtime, Schedule};
use proptest::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        Just(Schedule::Static),
        (0usize..40).prop_map(Schedule::static_chunked),
        (0usize..40).prop_map(Schedule::dynamic),
        (0usize..40).prop_map(Schedule::guided),
    ]
}

fn runtime(sizes: Vec<usize>) -> Runtime {
    Runtime::builder()
        .max_threads(4)
        .shared_policy(Arc::new(common::Scripted::new(sizes)))
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_index_exactly_once(
        start in 0usize..500,
        len in 0usize..3000,
        sizes in proptest::collection::vec(1usize..=4, 1..5),
        schedules in proptest::collection::vec(schedule(), 1..4),
    ) {
        let rt = runtime(sizes);
        for s in schedules {
            let hits: Vec<AtomicU8> = (0..start + len).map(|_| AtomicU8::new(0)).collect();
            rt.parallel_for(start..start + len, s, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            for (i, h) in hits.iter().enumerate() {
                prop_assert_eq!(h.load(Ordering::Relaxed), u8::from(i >= start), "index {} {:?}", i, s);
            }
            // the same loop work-shared inside an SPMD region
            let hits: Vec<AtomicU8> = (0..start + len).map(|_| AtomicU8::new(0)).collect();
            rt.region(|team| {
                team.for_each(start..start + len, s, |i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                team.for_each(start..start + len, s, |i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
            });
            for h in &hits[start..] {
                prop_assert_eq!(h.load(Ordering::Relaxed), 2);
            }
        }
    }

    #[test]
    fn reduction_equals_serial(
        len in 0usize..5000,
        sizes in proptest::collection::vec(1usize..=4, 1..4),
        s in schedule(),
    ) {
        static RT: OnceLock<()> = OnceLock::new();
        RT.get_or_init(|| ());
        let rt = runtime(sizes);
        let got = rt.parallel_reduce(0..len, s, || 0u64,
            |acc, r| acc.wrapping_add(r.map(|i| (i as u64).wrapping_mul(2654435761)).fold(0, u64::wrapping_add)),
            u64::wrapping_add);
        let want = (0..len).map(|i| (i as u64).wrapping_mul(2654435761)).fold(0, u64::wrapping_add);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn stopped_loops_run_each_index_at_most_once_and_leave_the_runtime_clean(
        len in 1usize..3000,
        at in 0usize..3000,
        sizes in proptest::collection::vec(1usize..=4, 1..5),
        s in schedule(),
    ) {
        let at = at % len;
        let rt = runtime(sizes);
        let hits: Vec<AtomicU8> = (0..len).map(|_| AtomicU8::new(0)).collect();
        let stopped = AtomicBool::new(false);
        let run = |r: std::ops::Range<usize>| {
            for i in r {
                hits[i].fetch_add(1, Ordering::Relaxed);
                if i == at {
                    stopped.store(true, Ordering::Relaxed);
                }
            }
        };
        let stop = || stopped.load(Ordering::Relaxed);
        let check = |hits: &[AtomicU8]| -> Result<(), TestCaseError> {
            prop_assert!(hits.iter().all(|h| h.swap(0, Ordering::Relaxed) <= 1), "{:?}", s);
            Ok(())
        };
        rt.parallel_for_chunks_until(0..len, s, run, stop);
        // nothing stops before `at` has run, so its chunk is always taken
        prop_assert_eq!(hits[at].load(Ordering::Relaxed), 1);
        check(&hits)?;
        stopped.store(false, Ordering::Relaxed);
        let fold = |a, r: std::ops::Range<usize>| {
            run(r.clone());
            a + r.len()
        };
        let sum = rt.parallel_reduce_until(0..len, s, || 0, fold, |a, b| a + b, stop);
        prop_assert_eq!(hits[at].load(Ordering::Relaxed), 1);
        prop_assert_eq!(sum, hits.iter().filter(|h| h.load(Ordering::Relaxed) == 1).count());
        check(&hits)?;
        stopped.store(false, Ordering::Relaxed);
        rt.region(|team| {
            team.for_chunks_until(0..len, s, run, stop);
            // the counter is back at 0 for the next loop of the region
            team.for_chunks(0..len, s, |r| r.for_each(|i| {
                hits[i].fetch_add(2, Ordering::Relaxed);
            }));
        });
        prop_assert!(hits.iter().all(|h| matches!(h.load(Ordering::Relaxed), 2 | 3)));
        prop_assert_eq!(hits[at].load(Ordering::Relaxed), 3);
        // and for the next region
        let all = AtomicUsize::new(0);
        rt.parallel_for(0..len, s, |_| {
            all.fetch_add(1, Ordering::Relaxed);
        });
        prop_assert_eq!(all.into_inner(), len);
    }
}

/// A loop of a million chunks of one index, stopped at its 11th index, runs a few of them
/// (guided's first chunks are half the loop and a quarter: not a test of stopping).
#[test]
fn a_stopped_loop_deals_no_more_chunks() {
    let rt = runtime(vec![2]);
    let len = 1_000_000;
    for s in [Schedule::dynamic(1), Schedule::static_chunked(1)] {
        let (ran, stopped) = (AtomicUsize::new(0), AtomicBool::new(false));
        rt.parallel_for_chunks_until(
            0..len,
            s,
            |r| {
                ran.fetch_add(r.len(), Ordering::Relaxed);
                if r.contains(&10) {
                    stopped.store(true, Ordering::Relaxed);
                }
            },
            || stopped.load(Ordering::Relaxed),
        );
        let ran = ran.into_inner();
        assert!(
            (1..len / 100).contains(&ran),
            "{s:?}: {ran} of {len} indices ran"
        );
    }
}
