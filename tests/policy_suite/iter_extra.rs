//! The suite's cases for the fallible forms, the adapters beyond the basic set, and the slice
//! and string sources, run against every policy by `policy_suite!` (in a file of their own to
//! keep `policy_suite.rs` short).

use asat::iter::Either;
use asat::prelude::*;
use asat::{Runtime, Schedule};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

const SCHEDULES: [Schedule; 3] = [
    Schedule::Static,
    Schedule::Dynamic { chunk: 7 },
    Schedule::Guided { min_chunk: 3 },
];

/// The `try_` forms return the one failure, run every item without one, and re-raise a panic;
/// the runtime stays usable.
pub fn iter_try(rt: &Runtime) {
    rt.install(|| {
        for s in SCHEDULES {
            for bad in [0usize, 1, 4999, 9999] {
                let ran = AtomicUsize::new(0);
                let got = (0..10_000usize)
                    .into_par_iter()
                    .with_schedule(s)
                    .try_for_each(|i| {
                        ran.fetch_add(1, Ordering::Relaxed);
                        if i == bad {
                            Err(i)
                        } else {
                            Ok(())
                        }
                    });
                assert_eq!(got, Err(bad), "{s:?}");
                assert!(ran.load(Ordering::Relaxed) <= 10_000);
            }
            let ran = AtomicUsize::new(0);
            let got = (0..10_000usize)
                .into_par_iter()
                .with_schedule(s)
                .try_for_each_init(
                    || 1,
                    |one, _| {
                        ran.fetch_add(*one, Ordering::Relaxed);
                        Some(())
                    },
                );
            assert_eq!((got, ran.into_inner()), (Some(()), 10_000), "{s:?}");
            let sum = (0..10_000u64)
                .into_par_iter()
                .with_schedule(s)
                .try_fold(|| 0u64, |a, x| a.checked_add(x))
                .try_reduce(|| 0, u64::checked_add);
            assert_eq!(sum, Some(49_995_000));
            let overflow = (0..10_000u16)
                .into_par_iter()
                .with_schedule(s)
                .map(Some)
                .try_reduce_with(u16::checked_add);
            assert_eq!(overflow, Some(None));
        }
        let r = catch_unwind(AssertUnwindSafe(|| {
            (0..1000).into_par_iter().try_for_each(|i| {
                if i == 500 {
                    panic!("item 500");
                }
                Ok::<(), ()>(())
            })
        }));
        assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "item 500");
        assert_eq!(
            (0..1000u32)
                .into_par_iter()
                .map(Ok::<u32, ()>)
                .try_reduce(|| 0, |a, b| Ok(a + b)),
            Ok(499_500)
        );
    });
    super::runtime_api::every_index_runs_once(rt);
}

/// `chunks`, `interleave`, `positions`, the `_any` forms, `unzip`, the partitions and the
/// comparisons equal std's sequential results.
pub fn iter_adapters_extra(rt: &Runtime) {
    rt.install(|| {
        let v: Vec<u32> = (0..5000).map(|i| i * 7919 % 1009).collect();
        let w: Vec<u32> = v.iter().rev().copied().take(3333).collect();
        for s in SCHEDULES {
            let got: Vec<Vec<u32>> = v.par_iter().copied().chunks(64).with_schedule(s).collect();
            assert_eq!(got, v.chunks(64).map(<[u32]>::to_vec).collect::<Vec<_>>());
            let got: Vec<u32> = v
                .par_iter()
                .interleave(&w)
                .with_schedule(s)
                .copied()
                .collect();
            let want: Vec<u32> = v
                .iter()
                .zip(&w)
                .flat_map(|(a, b)| [*a, *b])
                .chain(v[w.len()..].iter().copied())
                .collect();
            assert_eq!(got, want, "{s:?}");
            let got: Vec<usize> = v.par_iter().positions(|x| x % 10 == 0).collect();
            let want: Vec<usize> = (0..v.len()).filter(|&i| v[i] % 10 == 0).collect();
            assert_eq!(got, want);
            assert_eq!(
                v.par_iter().with_schedule(s).position_last(|&x| x == 5),
                v.iter().rposition(|&x| x == 5)
            );
            let kept = v.iter().filter(|x| *x % 2 == 0).count();
            let got = v
                .par_iter()
                .with_schedule(s)
                .filter(|x| *x % 2 == 0)
                .take_any(100)
                .count();
            assert_eq!(got, kept.min(100));
            let got = v
                .par_iter()
                .with_schedule(s)
                .filter(|x| *x % 2 == 0)
                .skip_any(100)
                .count();
            assert_eq!(got, kept - 100);
            let (a, b): (Vec<u32>, Vec<usize>) =
                v.par_iter().enumerate().map(|(i, &x)| (x, i)).unzip();
            assert_eq!(a, v);
            assert!(b.iter().copied().eq(0..v.len()));
            let (small, big): (Vec<u32>, Vec<u32>) =
                v.par_iter().with_schedule(s).partition(|x| **x < 500);
            assert_eq!(
                small,
                v.iter().copied().filter(|x| *x < 500).collect::<Vec<_>>()
            );
            assert_eq!(big.len() + small.len(), v.len());
            let (l, r): (Vec<u32>, Vec<u32>) = v.par_iter().partition_map(|&x| {
                if x % 3 == 0 {
                    Either::Left(x)
                } else {
                    Either::Right(x)
                }
            });
            assert_eq!(l.len() + r.len(), v.len());
            assert!(l.iter().all(|x| x % 3 == 0) && r.iter().all(|x| x % 3 != 0));
            assert_eq!(
                v.par_iter().with_schedule(s).cmp(&w),
                v.iter().cmp(w.iter())
            );
            assert!(v.par_iter().with_schedule(s).eq(&v));
            assert!(v.par_iter().ne(&w));
            assert_eq!(v.par_iter().lt(&w), v.iter().lt(w.iter()));
        }
    });
    super::runtime_api::every_index_runs_once(rt);
}

/// The slice and string sources equal std's methods of the same names.
pub fn iter_strings(rt: &Runtime) {
    rt.install(|| {
        let text: String = (0..3000)
            .map(|i| ["alpha", "β€ta", "\n", " ", ",", "😀", "\r\n", ""][i * 7 % 8])
            .collect();
        let t = text.as_str();
        assert_eq!(
            t.par_lines().collect::<Vec<_>>(),
            t.lines().collect::<Vec<_>>()
        );
        assert_eq!(
            t.par_split(',').collect::<Vec<_>>(),
            t.split(',').collect::<Vec<_>>()
        );
        assert_eq!(
            t.par_split_whitespace().collect::<Vec<_>>(),
            t.split_whitespace().collect::<Vec<_>>()
        );
        assert_eq!(t.par_chars().collect::<String>(), text);
        assert_eq!(t.par_char_indices().count(), t.chars().count());
        assert_eq!(t.par_matches('€').count(), t.matches('€').count());
        let v: Vec<u32> = (0..20_000).map(|i| i * 7919 % 101).collect();
        let zero = |x: &u32| *x == 0;
        assert_eq!(
            v.par_split(zero).collect::<Vec<_>>(),
            v.split(zero).collect::<Vec<_>>()
        );
        assert_eq!(
            v.par_chunk_by(|a, b| a < b).collect::<Vec<_>>(),
            v.chunk_by(|a, b| a < b).collect::<Vec<_>>()
        );
        assert_eq!(
            v.par_rchunks(33).collect::<Vec<_>>(),
            v.rchunks(33).collect::<Vec<_>>()
        );
        let (mut got, mut want) = (v.clone(), v.clone());
        got.par_split_mut(zero).for_each(|p| p.reverse());
        want.split_mut(zero).for_each(|p| p.reverse());
        assert_eq!(got, want);
        let (mut got, mut want) = (v.clone(), v.clone());
        got.par_chunk_by_mut(|a, b| a < b)
            .for_each(|p| p.sort_unstable_by(|a, b| b.cmp(a)));
        want.chunk_by_mut(|a, b| a < b)
            .for_each(|p| p.sort_unstable_by(|a, b| b.cmp(a)));
        assert_eq!(got, want);
        let (mut got, mut want) = (v.clone(), v.clone());
        got.par_rchunks_exact_mut(64).for_each(|c| c[0] = 1000);
        want.rchunks_exact_mut(64).for_each(|c| c[0] = 1000);
        assert_eq!(got, want);
    });
    super::runtime_api::every_index_runs_once(rt);
}

/// `scope_fifo`, `in_place_scope`, `in_place_scope_fifo` and the runtime's scope methods run
/// every job, nested spawns included, keep `op` on the caller and re-raise a job's panic once
/// the others have run; the runtime stays usable.
pub fn iter_scope_variants(rt: &Runtime) {
    use std::rc::Rc;
    let caller = std::thread::current().id();
    let hits: Vec<AtomicUsize> = (0..200).map(|_| AtomicUsize::new(0)).collect();
    let local = Rc::new(3); // stays on the caller
    let r = rt.in_place_scope(|s| {
        assert_eq!(std::thread::current().id(), caller);
        for (i, h) in hits.iter().enumerate() {
            s.spawn(move |s| {
                if i % 2 == 0 {
                    s.spawn(move |_| {
                        h.fetch_add(1, Ordering::Relaxed);
                    });
                } else {
                    h.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        Rc::clone(&local)
    });
    assert_eq!(*r, 3);
    assert!(hits.iter().all(|h| h.swap(0, Ordering::Relaxed) == 1));
    rt.scope_fifo(|s| {
        for h in &hits {
            s.spawn_fifo(move |s| {
                s.spawn_fifo(move |_| {
                    h.fetch_add(1, Ordering::Relaxed);
                })
            });
        }
    });
    assert!(hits.iter().all(|h| h.swap(0, Ordering::Relaxed) == 1));
    let r = catch_unwind(AssertUnwindSafe(|| {
        rt.in_place_scope_fifo(|s| {
            for (i, h) in hits.iter().enumerate() {
                s.spawn_fifo(move |_| {
                    h.fetch_add(1, Ordering::Relaxed);
                    if i == 150 {
                        panic!("job 150");
                    }
                });
            }
        })
    }));
    assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "job 150");
    assert!(hits.iter().all(|h| h.swap(0, Ordering::Relaxed) == 1));
    let n = rt.scope(|s| {
        s.spawn(|_| {
            hits[0].fetch_add(1, Ordering::Relaxed);
        });
        7
    });
    assert_eq!((n, hits[0].load(Ordering::Relaxed)), (7, 1));
    super::runtime_api::every_index_runs_once(rt);
    super::runtime_api::members_meet_at_barriers(rt);
}

/// The collections' parallel iterators yield their items (in order where the collection has
/// one) and update every value once.
pub fn iter_collections(rt: &Runtime) {
    use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
    rt.install(|| {
        let mut m: HashMap<u32, u64> = (0..5000).map(|i| (i, u64::from(i))).collect();
        m.par_iter_mut().for_each(|(k, v)| *v += u64::from(*k));
        assert!(m.iter().all(|(k, v)| *v == 2 * u64::from(*k)));
        assert_eq!(
            m.par_iter().map(|(_, v)| v).sum::<u64>(),
            2 * 4999 * 5000 / 2
        );
        let set: HashSet<u32> = m.into_par_iter().map(|(k, _)| k % 100).collect();
        assert_eq!(set.len(), 100);
        let b: BTreeMap<u32, u32> = (0..3000).map(|i| (i, i * i)).collect();
        let got: Vec<(&u32, &u32)> = b.par_iter().collect();
        assert_eq!(got, b.iter().collect::<Vec<_>>());
        let mut d: VecDeque<u32> = (0..3000).collect();
        d.rotate_left(1234); // the ring wraps
        d.par_iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as u32);
        assert!(d.iter().copied().eq(0..3000));
        assert_eq!(Some(7).into_par_iter().chain(None).sum::<i32>(), 7);
        // par_drain: a range of a Vec in place, all of a map
        let mut v: Vec<String> = (0..5000).map(|i| i.to_string()).collect();
        let lens: usize = v.par_drain(1000..4000).map(|s| s.len()).sum::<usize>();
        assert_eq!(
            lens,
            (1000..4000)
                .map(|i: u32| i.to_string().len())
                .sum::<usize>()
        );
        assert!(v
            .iter()
            .map(|s| s.parse::<u32>().unwrap())
            .eq((0..1000).chain(4000..5000)));
        let mut m: HashMap<u32, u32> = (0..3000).map(|i| (i, i)).collect();
        assert_eq!(m.par_drain().map(|(k, v)| k + v).max(), Some(5998));
        assert!(m.is_empty());
    });
    super::runtime_api::every_index_runs_once(rt);
}
