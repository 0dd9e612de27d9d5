//! The suite's cases for the iterator layer on the suite's runtime (installed): `sum`,
//! `collect`, `par_iter_mut`, zips, filtered collects and panics, each terminal call one region
//! of it, under every schedule and splitting hint; run against every policy by `policy_suite!`
//! (in a file of their own to keep `policy_suite.rs` short).

use asat::prelude::*;
use asat::Runtime;

use super::runtime_api::{every_index_runs_once, members_meet_at_barriers};
use super::SCHEDULES;

/// `sum` equals the serial sum.
pub fn iter_sum(rt: &Runtime) {
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
pub fn iter_collect_in_order(rt: &Runtime) {
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
pub fn iter_par_iter_mut(rt: &Runtime) {
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
pub fn iter_zips(rt: &Runtime) {
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
pub fn iter_filtered_collect(rt: &Runtime) {
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
pub fn iter_panics_propagate(rt: &Runtime) {
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
