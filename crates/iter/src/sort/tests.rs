//! The merge sort's protocol with short runs (so that small slices take several passes, with
//! lone runs and pieces that cut runs anywhere), on teams of 1 to 4; the merge path search
//! against a linear count; panics and inconsistent comparators.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering as MemOrdering};
use std::sync::Arc;

use super::merge::co_rank;
use super::*;
use crate::testing::team_of;

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
    for k in [2, 3, 4] {
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
            for at in (0..10).map(|j| total * j / 10).chain([total - 1]) {
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
fn zero_sized_and_nested_sorts_run_on_the_calling_thread() {
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
    // Inside a region the sort runs inline, on the member.
    let mut parts: Vec<Vec<u32>> = (0..4)
        .map(|p| (0..500).map(|i| (i * 37 + p) % 500).collect())
        .collect();
    let slots: Vec<std::sync::Mutex<Vec<u32>>> =
        parts.drain(..).map(std::sync::Mutex::new).collect();
    team_of(4).region(|team| {
        let mut v = slots[team.index()].lock().unwrap();
        sort_with(&mut v, Kind::Stable, &u32::cmp, 1);
    });
    for s in slots {
        assert_eq!(s.into_inner().unwrap(), (0..500).collect::<Vec<u32>>());
    }
}
