//! Property tests: every index of every schedule runs exactly once for random ranges, chunk
//! sizes and team sizes, also when the team size changes from region to region; reductions
//! equal the serial result.

mod common;

use asat::{Runtime, Schedule};
use proptest::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};
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
}
