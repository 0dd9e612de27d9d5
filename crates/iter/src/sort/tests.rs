//! The merge sort's protocol with short leaves (so that small slices take several halvings and
//! merges cut anywhere), on pools of 1 to 4 threads; the merge path search against a linear
//! count; panics and inconsistent comparators; sorts nested in other parallel calls.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering as MemOrdering};
use std::sync::Arc;

use super::merge::co_rank;
use super::*;
use crate::internal::testing::team_of;

/// A xorshift generator: reproducible data without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// `(key, position)` pairs with keys below `keys`, so that equal keys can be told apart.
fn keyed(rng: &mut Rng, n: usize, keys: u64) -> Vec<(u64, usize)> {
    (0..n).map(|i| (rng.below(keys), i)).collect()
}

#[test]
fn stable_sorts_equal_std_on_every_team_and_run_length() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for k in 1..=4 {
        for min_run in [1, 2, 3, 7] {
            for n in (0..40).chain([97, 256, 1000]) {
                for keys in [1, 3, 1000] {
                    let v = keyed(&mut rng, n, keys);
                    let mut want = v.clone();
                    want.sort_by_key(|&(key, _)| key);
                    let mut got = v.clone();
                    team_of(k).install(|| {
                        sort_with(
                            &mut got,
                            Kind::Stable,
                            &|a: &(u64, usize), b: &(u64, usize)| a.0.cmp(&b.0),
                            min_run,
                        )
                    });
                    assert_eq!(
                        got, want,
                        "team {k}, runs of {min_run}, {n} items, {keys} keys"
                    );
                }
            }
        }
    }
}

#[test]
fn unstable_sorts_give_a_sorted_permutation() {
    let mut rng = Rng(7);
    for k in 1..=4 {
        for min_run in [1, 2, 5] {
            for n in (0..30).chain([101, 640]) {
                let v = keyed(&mut rng, n, 10);
                let mut got = v.clone();
                team_of(k).install(|| {
                    sort_with(
                        &mut got,
                        Kind::Unstable,
                        &|a: &(u64, usize), b: &(u64, usize)| a.0.cmp(&b.0),
                        min_run,
                    )
                });
                assert!(
                    got.windows(2).all(|w| w[0].0 <= w[1].0),
                    "team {k}: not sorted"
                );
                let mut ids: Vec<usize> = got.iter().map(|&(_, i)| i).collect();
                ids.sort_unstable();
                assert_eq!(
                    ids,
                    (0..n).collect::<Vec<_>>(),
                    "team {k}: not a permutation"
                );
            }
        }
    }
}

#[test]
fn co_rank_counts_the_left_elements_among_the_first_d() {
    let mut rng = Rng(99);
    let less = |x: &(u64, usize), y: &(u64, usize)| x.0 < y.0;
    for _ in 0..200 {
        let (na, nb) = (rng.below(9) as usize, rng.below(9) as usize);
        let mut a = keyed(&mut rng, na, 4);
        let mut b = keyed(&mut rng, nb, 4);
        a.sort();
        b.iter_mut().for_each(|x| x.1 += 100);
        b.sort();
        // The stable merge, with each element marked by its side.
        let mut merged: Vec<bool> = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if j < b.len() && (i == a.len() || less(&b[j], &a[i])) {
                merged.push(false);
                j += 1;
            } else {
                merged.push(true);
                i += 1;
            }
        }
        for d in 0..=merged.len() {
            let want = merged[..d].iter().filter(|&&left| left).count();
            let lo = d.saturating_sub(b.len());
            let hi = d.min(a.len());
            assert_eq!(co_rank(&a, &b, d, lo, hi, &less), want, "{a:?} {b:?} {d}");
        }
    }
}

/// An element that counts its drops, by id.
struct Tracked {
    id: usize,
    key: u64,
    drops: Arc<Vec<AtomicUsize>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, MemOrdering::Relaxed);
    }
}

fn tracked(keys: &[u64], drops: &Arc<Vec<AtomicUsize>>) -> Vec<Tracked> {
    keys.iter()
        .enumerate()
        .map(|(id, &key)| Tracked {
            id,
            key,
            drops: drops.clone(),
        })
        .collect()
}

#[test]
fn a_panicking_comparator_leaves_a_permutation_and_drops_each_element_once() {
    let mut rng = Rng(3);
    let n = 64;
    // Under Miri, one team and three stages (each run a thousand times slower there).
    let (teams, points): (&[usize], usize) = if cfg!(miri) {
        (&[2], 2)
    } else {
        (&[2, 3, 4], 10)
    };
    for &k in teams {
        for kind in [Kind::Stable, Kind::Unstable] {
            let keys: Vec<u64> = (0..n).map(|_| rng.below(8)).collect();
            let calls = AtomicUsize::new(0);
            let panic_at = AtomicUsize::new(usize::MAX);
            let cmp = |a: &Tracked, b: &Tracked| {
                let c = calls.fetch_add(1, MemOrdering::Relaxed);
                if c == panic_at.load(MemOrdering::Relaxed) {
                    panic!("comparison {c}");
                }
                a.key.cmp(&b.key)
            };
            // The number of comparisons each stage makes is fixed by the data and the team
            // (only their interleaving within a stage varies), so comparison `c` falls in the
            // same stage every time: a run sort, a cut search, an even or an odd pass.
            let drops: Arc<Vec<AtomicUsize>> =
                Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
            let mut v = tracked(&keys, &drops);
            team_of(k).install(|| sort_with(&mut v, kind, &cmp, 4));
            let total = calls.swap(0, MemOrdering::Relaxed);
            drop(v);
            for at in (0..points).map(|j| total * j / points).chain([total - 1]) {
                let drops: Arc<Vec<AtomicUsize>> =
                    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
                let mut v = tracked(&keys, &drops);
                calls.store(0, MemOrdering::Relaxed);
                panic_at.store(at, MemOrdering::Relaxed);
                let r = catch_unwind(AssertUnwindSafe(|| {
                    team_of(k).install(|| sort_with(&mut v, kind, &cmp, 4))
                }));
                let msg = r.expect_err("the comparator panicked");
                assert_eq!(
                    msg.downcast_ref::<String>(),
                    Some(&format!("comparison {at}"))
                );
                let mut ids: Vec<usize> = v.iter().map(|t| t.id).collect();
                ids.sort_unstable();
                assert_eq!(
                    ids,
                    (0..n).collect::<Vec<_>>(),
                    "team {k}, at {at}: not a permutation"
                );
                assert!(drops.iter().all(|d| d.load(MemOrdering::Relaxed) == 0));
                drop(v);
                assert!(
                    drops.iter().all(|d| d.load(MemOrdering::Relaxed) == 1),
                    "team {k}, {kind:?}, at {at}: an element dropped other than once"
                );
                // the runtime is still usable
                let mut w: Vec<u32> = (0..100).rev().collect();
                team_of(k).install(|| sort_with(&mut w, Kind::Stable, &u32::cmp, 3));
                assert!(w.windows(2).all(|p| p[0] < p[1]));
            }
        }
    }
}

#[test]
fn an_inconsistent_comparator_never_panics_and_leaves_a_permutation() {
    let mut rng = Rng(11);
    let answers = std::sync::Mutex::new(Rng(5));
    for k in 1..=4 {
        for n in [0, 1, 17, 200, 3000] {
            for kind in [Kind::Stable, Kind::Unstable] {
                let mut v: Vec<u64> = (0..n).collect();
                let coin = |_: &u64, _: &u64| match answers.lock().unwrap().below(3) {
                    0 => Ordering::Less,
                    1 => Ordering::Equal,
                    _ => Ordering::Greater,
                };
                let min_run = [1, 3, MIN_RUN][rng.below(3) as usize];
                // std's sorts of the runs may panic on such an order; the sort goes on
                team_of(k).install(|| sort_with(&mut v, kind, &coin, min_run));
                v.sort_unstable();
                assert_eq!(v, (0..n).collect::<Vec<_>>(), "team {k}, {n} items");
            }
        }
    }
}

#[test]
fn floats_with_nans_compared_as_equal_sort_without_panicking() {
    let mut rng = Rng(3);
    for n in [20, 100, 1000, 5000] {
        for kind in [Kind::Stable, Kind::Unstable] {
            let v: Vec<f64> = (0..n)
                .map(|_| match rng.below(20) {
                    0 => f64::NAN,
                    r => (r * 37 % 1000) as f64,
                })
                .collect();
            let mut got = v.clone();
            let cmp = |a: &f64, b: &f64| a.partial_cmp(b).unwrap_or(Ordering::Equal);
            team_of(2).install(|| sort_with(&mut got, kind, &cmp, 64));
            let bits = |v: &[f64]| {
                let mut b: Vec<u64> = v.iter().map(|x| x.to_bits()).collect();
                b.sort_unstable();
                b
            };
            assert_eq!(bits(&got), bits(&v), "{n} items, {kind:?}");
        }
    }
}

#[test]
fn the_fallback_sort_is_a_stable_sort() {
    let mut rng = Rng(7);
    for n in (0..40).chain([255, 256, 257, 1000]) {
        for keys in [1, 3, 1000] {
            let v = keyed(&mut rng, n, keys);
            let mut want = v.clone();
            want.sort_by_key(|&(key, _)| key);
            let mut got = v.clone();
            sort_any_order(&mut got, &|a: &(u64, usize), b: &(u64, usize)| {
                a.0.cmp(&b.0)
            });
            assert_eq!(got, want, "{n} items, {keys} keys");
        }
    }
}

#[test]
fn leaves_are_at_least_min_run_and_about_two_per_thread() {
    for threads in [2, 3, 8, 64] {
        for min_run in [1, 4, MIN_RUN] {
            for n in [2 * min_run, 2 * min_run + 1, 10_000, 1 << 20, (1 << 20) + 7] {
                if n < 2 * min_run {
                    continue;
                }
                let d = depth(n, min_run, threads);
                assert!(d >= 1, "{n} items: not halved");
                // The shortest leaf after `d` halvings is `n >> d` long.
                assert!(
                    n >> d >= min_run,
                    "{n} items, {threads} threads: leaves too short"
                );
                let leaves = 1usize << d;
                assert!(
                    leaves <= LEAVES_PER_THREAD * threads || n >> (d - 1) < 2 * min_run,
                    "{n} items, {threads} threads: {leaves} leaves"
                );
                assert!(
                    2 * leaves > LEAVES_PER_THREAD * threads || n >> (d + 1) < min_run,
                    "{n} items, {threads} threads: only {leaves} leaves"
                );
            }
        }
    }
}

#[test]
fn zero_sized_elements_are_sorted_on_the_calling_thread() {
    let mut units = vec![(); 5000];
    team_of(4).install(|| {
        sort_with(
            &mut units,
            Kind::Stable,
            &|_: &(), _: &()| Ordering::Equal,
            1,
        )
    });
    assert_eq!(units.len(), 5000);
}

fn shuffled(n: u32, seed: u32) -> Vec<u32> {
    (0..n).map(|i| (i * 37 + seed) % n).collect()
}

#[test]
fn sorts_nested_in_regions_joins_loops_and_scopes_are_correct() {
    let pool = team_of(4);
    let slots: Vec<std::sync::Mutex<Vec<u32>>> = (0..4)
        .map(|p| std::sync::Mutex::new(shuffled(500, p)))
        .collect();
    pool.region(|team| {
        let mut v = slots[team.index()].lock().unwrap();
        sort_with(&mut v, Kind::Stable, &u32::cmp, 1);
    });
    let want: Vec<u32> = (0..500).collect();
    for s in &slots {
        assert_eq!(*s.lock().unwrap(), want, "in a region");
    }
    let (mut a, mut b) = (shuffled(700, 1), shuffled(700, 2));
    pool.install(|| {
        asat_core::join(
            || sort_with(&mut a, Kind::Stable, &u32::cmp, 3),
            || sort_with(&mut b, Kind::Unstable, &u32::cmp, 3),
        )
    });
    let want: Vec<u32> = (0..700).collect();
    assert_eq!((&a, &b), (&want, &want), "in a join");
    let mut many: Vec<Vec<u32>> = (0..8).map(|s| shuffled(300, s)).collect();
    pool.install(|| {
        use crate::prelude::*;
        many.par_iter_mut()
            .for_each(|v| sort_with(v, Kind::Stable, &u32::cmp, 2));
    });
    let want: Vec<u32> = (0..300).collect();
    assert!(many.iter().all(|v| *v == want), "in a parallel loop");
    let mut c = shuffled(900, 3);
    pool.install(|| {
        asat_core::scope(|s| s.spawn(|_| sort_with(&mut c, Kind::Stable, &u32::cmp, 5)))
    });
    assert_eq!(c, (0..900).collect::<Vec<u32>>(), "in a scope's task");
}

#[test]
fn a_sort_nested_in_a_join_runs_on_more_than_one_thread() {
    // While one thread alone has compared, each comparison waits a little, so that the sort
    // lasts until another thread takes part (up to a deadline, after which it runs at full
    // speed and the assertion fails).
    let seen = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let start = std::time::Instant::now();
    let cmp = |a: &u32, b: &u32| {
        let mut s = seen.lock().unwrap();
        s.insert(asat_core::current_thread_index());
        let alone = s.len() < 2;
        drop(s);
        if alone && start.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        a.cmp(b)
    };
    let mut v = shuffled(1024, 5);
    team_of(4).install(|| asat_core::join(|| sort_with(&mut v, Kind::Stable, &cmp, 4), || ()));
    assert_eq!(v, (0..1024).collect::<Vec<u32>>());
    let seen = seen.into_inner().unwrap();
    assert!(seen.len() >= 2, "the sort ran on {seen:?} alone");
}

/// Small enough for Miri (which CI runs on it): the merges' copies, leaves copied to the
/// buffer (one halving) or not (two), and panics in leaves and in merges (166 and 249
/// comparisons in all), on two threads.
#[test]
fn a_small_sort_on_two_threads() {
    let mut rng = Rng(21);
    let keys: Vec<u64> = (0..40).map(|_| rng.below(6)).collect();
    let pool = team_of(2);
    for (min_run, panic_at) in [
        (3, usize::MAX),
        (14, usize::MAX),
        (3, 40),
        (14, 60),
        (14, 110),
    ] {
        let drops: Arc<Vec<AtomicUsize>> = Arc::new((0..40).map(|_| AtomicUsize::new(0)).collect());
        let mut v = tracked(&keys, &drops);
        let calls = AtomicUsize::new(0);
        let cmp = |a: &Tracked, b: &Tracked| {
            if calls.fetch_add(1, MemOrdering::Relaxed) == panic_at {
                panic!("comparison {panic_at}");
            }
            a.key.cmp(&b.key)
        };
        // Leaves of 10 after two halvings, or of 20 after one (then copied to the buffer).
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| sort_with(&mut v, Kind::Stable, &cmp, min_run))
        }));
        if panic_at == usize::MAX {
            eprintln!(
                "{min_run}: {} comparisons",
                calls.load(MemOrdering::Relaxed)
            );
        }
        assert_eq!(r.is_err(), panic_at != usize::MAX);
        let mut ids: Vec<usize> = v.iter().map(|t| t.id).collect();
        if r.is_ok() {
            let mut want: Vec<(u64, usize)> = keys.iter().copied().zip(0..).collect();
            want.sort_by_key(|&(k, _)| k);
            assert_eq!(ids, want.iter().map(|&(_, i)| i).collect::<Vec<_>>());
        }
        ids.sort_unstable();
        assert_eq!(
            ids,
            (0..40).collect::<Vec<_>>(),
            "at {panic_at}: not a permutation"
        );
        drop(v);
        assert!(drops.iter().all(|d| d.load(MemOrdering::Relaxed) == 1));
    }
}
