//! Property tests of the parallel sorts: the stable sorts give exactly what std's stable sorts
//! give (equal keys in their order), the unstable ones a sorted permutation, on every shared
//! runtime (pools of 1 to 4 threads and a team that changes from call to call) and for lengths
//! that take the calling thread alone and several halvings and merges; a comparator that
//! panics anywhere leaves a permutation whose items are each dropped once later, and the
//! runtime stays usable; a sort inside a parallel call gives the same results.

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Lengths below, around and well above the point where a sort goes parallel (2048).
fn sort_len() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..16, 0usize..3000, 2048usize..9000]
}

/// Items with keys below `keys` (many duplicates when it is small), told apart by position.
fn keyed(keys: i64) -> impl Strategy<Value = Vec<Keyed>> {
    sort_len()
        .prop_flat_map(move |n| proptest::collection::vec(0..keys, n))
        .prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(at, key)| Keyed { key, at })
                .collect()
        })
}

/// Keys and positions: `Keyed`'s `==` compares keys only.
fn pairs(v: &[Keyed]) -> Vec<(i64, usize)> {
    v.iter().map(|k| (k.key, k.at)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn stable_sorts_equal_std(
        v in prop_oneof![keyed(4), keyed(1000), keyed(i64::MAX)],
        rt in 0..RUNTIMES,
    ) {
        runtime(rt).install(|| -> Result<(), TestCaseError> {
            let (mut want, mut got) = (v.clone(), v.clone());
            want.sort();
            got.par_sort();
            prop_assert_eq!(pairs(&got), pairs(&want));
            let rev = |a: &Keyed, b: &Keyed| b.key.cmp(&a.key);
            let (mut want, mut got) = (v.clone(), v.clone());
            want.sort_by(rev);
            got.par_sort_by(rev);
            prop_assert_eq!(pairs(&got), pairs(&want));
            let (mut want, mut got) = (v.clone(), v.clone());
            want.sort_by_key(|k| k.key / 3);
            got.par_sort_by_key(|k| k.key / 3);
            prop_assert_eq!(pairs(&got), pairs(&want));
            let (mut want, mut got) = (v.clone(), v.clone());
            want.sort_by_cached_key(|k| (k.key % 7).to_string());
            got.par_sort_by_cached_key(|k| (k.key % 7).to_string());
            prop_assert_eq!(pairs(&got), pairs(&want));
            Ok(())
        })?;
    }

    #[test]
    fn unstable_sorts_give_sorted_permutations(
        v in prop_oneof![keyed(4), keyed(i64::MAX)],
        rt in 0..RUNTIMES,
    ) {
        runtime(rt).install(|| -> Result<(), TestCaseError> {
            let n = v.len();
            let check = |got: &[Keyed], want_keys: Vec<i64>| -> Result<(), TestCaseError> {
                prop_assert_eq!(got.iter().map(|k| k.key).collect::<Vec<_>>(), want_keys);
                let mut ats: Vec<usize> = got.iter().map(|k| k.at).collect();
                ats.sort_unstable();
                prop_assert_eq!(ats, (0..n).collect::<Vec<_>>());
                Ok(())
            };
            let keys = || v.iter().map(|k| k.key);
            let mut want: Vec<i64> = keys().collect();
            want.sort_unstable();
            let mut got = v.clone();
            got.par_sort_unstable();
            check(&got, want.clone())?;
            let mut got = v.clone();
            got.par_sort_unstable_by(|a, b| b.key.cmp(&a.key));
            check(&got, want.iter().rev().copied().collect())?;
            let mut got = v.clone();
            got.par_sort_unstable_by_key(|k| std::cmp::Reverse(k.key));
            check(&got, want.iter().rev().copied().collect())?;
            // plain integers: a total order on the values, so one answer
            let mut ints: Vec<i64> = keys().collect();
            ints.par_sort_unstable();
            prop_assert_eq!(ints, want);
            Ok(())
        })?;
    }

    #[test]
    fn a_panicking_comparator_leaves_a_permutation_dropped_once(
        keys in sort_len().prop_flat_map(|n| proptest::collection::vec(0u32..50, n)),
        at in 0.0f64..1.0,
        rt in 0..RUNTIMES,
    ) {
        let n = keys.len();
        runtime(rt).install(|| -> Result<(), TestCaseError> {
            // A dry run counts the comparisons (about the same on the next call: the team may
            // change, so the panic run checks whether it reached `at` by its own count).
            let calls = AtomicUsize::new(0);
            let (mut v, _) = tracked(n);
            v.par_sort_by(|a, b| {
                calls.fetch_add(1, Ordering::Relaxed);
                keys[a.id].cmp(&keys[b.id])
            });
            drop(v);
            let at = (calls.swap(0, Ordering::Relaxed) as f64 * at) as usize;
            let (mut v, drops) = tracked(n);
            let r = catch_unwind(AssertUnwindSafe(|| {
                v.par_sort_by(|a, b| {
                    if calls.fetch_add(1, Ordering::Relaxed) == at {
                        panic!("comparison {at}");
                    }
                    keys[a.id].cmp(&keys[b.id])
                })
            }));
            match r {
                Err(p) => prop_assert_eq!(message(&*p), format!("comparison {at}")),
                Ok(()) => {
                    prop_assert!(calls.load(Ordering::Relaxed) <= at, "a panic was swallowed");
                    prop_assert!(v.windows(2).all(|w| keys[w[0].id] <= keys[w[1].id]));
                }
            }
            let mut ids: Vec<usize> = v.iter().map(|t| t.id).collect();
            ids.sort_unstable();
            prop_assert_eq!(ids, (0..n).collect::<Vec<_>>());
            prop_assert!(drops.iter().all(|d| d.load(Ordering::SeqCst) == 0));
            drop(v);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            // still usable
            let mut w: Vec<u32> = keys.clone();
            w.par_sort_unstable();
            let mut want = keys.clone();
            want.sort_unstable();
            prop_assert_eq!(w, want);
            Ok(())
        })?;
    }

    #[test]
    fn sorts_inside_parallel_calls_equal_std(
        v in values(-1000..1000),
        chunk in 1usize..5000,
        rt in 0..RUNTIMES,
    ) {
        runtime(rt).install(|| -> Result<(), TestCaseError> {
            let mut got = v.clone();
            got.par_chunks_mut(chunk).for_each(|c| c.par_sort());
            let mut want = v.clone();
            want.chunks_mut(chunk).for_each(|c| c.sort());
            prop_assert_eq!(got, want);
            Ok(())
        })?;
    }
}
