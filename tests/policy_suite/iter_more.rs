//! The suite's cases for parallel sorts, `scope` and calls in rounds, run against every policy by
//! `policy_suite!` (in a file of their own to keep `policy_suite.rs` short).

use asat::prelude::*;
use asat::Runtime;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

/// An element that counts its drops in a shared counter.
struct Counted<'a> {
    key: u32,
    id: usize,
    drops: &'a AtomicUsize,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

/// The sorts equal std's (stable ones exactly), on the calling thread and split into runs; a
/// panicking comparator leaves a permutation whose elements are each dropped once.
pub fn iter_sorts(rt: &Runtime) {
    rt.install(|| {
        for n in [0usize, 1, 100, 2047, 2048, 5000, 20_011] {
            let v: Vec<(u32, usize)> = (0..n).map(|i| ((i * 7919 % 97) as u32, i)).collect();
            let (mut got, mut want) = (v.clone(), v.clone());
            got.par_sort_by_key(|p| p.0);
            want.sort_by_key(|p| p.0);
            assert_eq!(got, want, "{n} items");
            let (mut got, mut want) = (v.clone(), v.clone());
            got.par_sort_by_cached_key(|p| p.0 % 5);
            want.sort_by_cached_key(|p| p.0 % 5);
            assert_eq!(got, want, "{n} items");
            let mut ints: Vec<u32> = v.iter().map(|p| p.0 ^ p.1 as u32).collect();
            let mut want = ints.clone();
            ints.par_sort_unstable();
            want.sort_unstable();
            assert_eq!(ints, want, "{n} items");
        }
        let drops = AtomicUsize::new(0);
        let n = 20_011;
        let mut v: Vec<Counted<'_>> = (0..n)
            .map(|id| Counted {
                key: (id * 7919 % 97) as u32,
                id,
                drops: &drops,
            })
            .collect();
        let calls = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            v.par_sort_by(|a, b| {
                if calls.fetch_add(1, Ordering::Relaxed) == 150_000 {
                    panic!("comparison 150000");
                }
                a.key.cmp(&b.key)
            })
        }));
        assert_eq!(
            *r.unwrap_err().downcast_ref::<&str>().unwrap(),
            "comparison 150000"
        );
        let mut ids: Vec<usize> = v.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        assert!(ids.iter().copied().eq(0..n), "not a permutation");
        assert_eq!(drops.load(Ordering::Relaxed), 0);
        drop(v);
        assert_eq!(drops.load(Ordering::Relaxed), n);
    });
    super::runtime_api::every_index_runs_once(rt);
    super::runtime_api::members_meet_at_barriers(rt);
}

/// Spawns a tree of jobs `depth` deep with `fan` children each; leaves count themselves.
fn tree<'s>(s: &asat::Scope<'s>, depth: u32, fan: usize, leaves: &'s AtomicUsize) {
    if depth == 0 {
        leaves.fetch_add(1, Ordering::Relaxed);
        return;
    }
    for _ in 0..fan {
        s.spawn(move |s| tree(s, depth - 1, fan, leaves));
    }
}

/// `scope` runs every job, nested spawns and borrowed data included, before it returns; a
/// job's panic is re-raised once the others have run; the runtime stays usable.
pub fn iter_scope(rt: &Runtime) {
    rt.install(|| {
        let leaves = AtomicUsize::new(0);
        let mut data: Vec<u64> = (0..10_000).collect();
        let r = asat::scope(|s| {
            tree(s, 4, 3, &leaves);
            for chunk in data.chunks_mut(999) {
                s.spawn(move |_| chunk.iter_mut().for_each(|x| *x *= 2));
            }
            "done"
        });
        assert_eq!(r, "done");
        assert_eq!(leaves.load(Ordering::Relaxed), 81);
        assert!(data.iter().enumerate().all(|(i, &x)| x == 2 * i as u64));
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            asat::scope(|s| {
                for i in 0..30 {
                    let ran = &ran;
                    s.spawn(move |s| {
                        s.spawn(move |_| {
                            ran.fetch_add(1, Ordering::Relaxed);
                            if i == 17 {
                                panic!("job 17");
                            }
                        })
                    });
                }
            })
        }));
        assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "job 17");
        assert_eq!(ran.load(Ordering::Relaxed), 30);
        // a scope inside a parallel call runs inline on the member
        let total: usize = (0..50usize)
            .into_par_iter()
            .map(|i| {
                let c = AtomicUsize::new(0);
                asat::scope(|s| {
                    for _ in 0..i {
                        s.spawn(|_| {
                            c.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                });
                c.into_inner()
            })
            .sum();
        assert_eq!(total, 1225);
    });
    super::runtime_api::every_index_runs_once(rt);
    super::runtime_api::members_meet_at_barriers(rt);
}

/// Calls run in rounds (`by_uniform_blocks`, `by_exponential_blocks`) give the results of
/// calls without them, and a search runs no round after the one with its answer.
pub fn iter_blocks(rt: &Runtime) {
    rt.install(|| {
        let v: Vec<u64> = (0..20_000).collect();
        for n in [1usize, 7, 1000, 50_000] {
            let sum: u64 = v.par_iter().by_uniform_blocks(n).sum();
            assert_eq!(sum, v.iter().sum::<u64>(), "blocks of {n}");
            let got: Vec<u64> = v.par_iter().by_uniform_blocks(n).map(|x| x + 1).collect();
            assert!(got.iter().copied().eq(1..20_001), "blocks of {n}");
        }
        let mut w = vec![0u64; v.len()];
        w.par_iter_mut()
            .zip(&v)
            .by_exponential_blocks()
            .for_each(|(w, v)| *w = 3 * v);
        assert!(w.iter().zip(&v).all(|(w, v)| *w == 3 * v));
        let seen = AtomicUsize::new(0);
        let hit = (0..1_000_000usize)
            .into_par_iter()
            .by_exponential_blocks()
            .find_first(|&i| {
                seen.fetch_add(1, Ordering::Relaxed);
                i == 1000
            });
        assert_eq!(hit, Some(1000));
        // rounds of t, 2t, 4t, ... items on a pool of t threads end before 2 * 1001 + t
        let t = asat::current_num_threads();
        assert!(seen.into_inner() < 2 * 1001 + t);
    });
    super::runtime_api::every_index_runs_once(rt);
}

/// `Scope::spawn_broadcast` runs its job once on every thread of the pool, whatever the
/// policy, from `op` and from jobs; `current_thread_has_pending_tasks` is `Some` in the jobs
/// and `None` off the runtime's threads.
pub fn iter_scope_broadcast(rt: &Runtime) {
    assert_eq!(rt.current_thread_has_pending_tasks(), None);
    for round in 0..20 {
        let runs: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
        let sizes = std::sync::Mutex::new(Vec::new());
        let record = |ctx: asat::BroadcastContext<'_>| {
            runs[ctx.index()].fetch_add(1, Ordering::Relaxed);
            sizes.lock().unwrap().push(ctx.num_threads());
        };
        rt.scope(|s| {
            if round % 2 == 0 {
                s.spawn_broadcast(|_, ctx| record(ctx));
            } else {
                s.spawn(|s| s.spawn_broadcast(|_, ctx| record(ctx)));
            }
            for _ in 0..10 {
                s.spawn(|_| assert!(rt.current_thread_has_pending_tasks().is_some()));
            }
        });
        let sizes = sizes.into_inner().unwrap();
        let n = sizes[0];
        assert_eq!(n, rt.current_num_threads(), "every thread of the pool");
        assert_eq!(sizes, vec![n; n], "round {round}");
        assert!(runs.iter().take(n).all(|r| r.load(Ordering::Relaxed) == 1));
    }
    super::runtime_api::every_index_runs_once(rt);
}

/// `split` covers its data in order with at most 4 pieces per thread of the pool; the tree
/// walks yield every node in prefix and postfix order.
pub fn iter_recursive(rt: &Runtime) {
    rt.install(|| {
        let halves = |r: std::ops::Range<u64>| {
            if r.end - r.start <= 8 {
                (r, None)
            } else {
                let mid = r.start + (r.end - r.start) / 2;
                (r.start..mid, Some(mid..r.end))
            }
        };
        for _ in 0..10 {
            let pieces: Vec<std::ops::Range<u64>> = asat::iter::split(0..5000u64, halves).collect();
            assert!(pieces.len() <= 4 * asat::current_num_threads());
            assert!(pieces.into_iter().flatten().eq(0..5000));
        }
        // node n has children 2n + 1 and 2n + 2 below 100: a complete binary tree
        let kids = |&n: &u32| {
            [2 * n + 1, 2 * n + 2]
                .into_iter()
                .filter(|&c| c < 100)
                .collect::<Vec<_>>()
        };
        let pre: Vec<u32> = asat::iter::walk_tree_prefix(0u32, kids).collect();
        let post: Vec<u32> = asat::iter::walk_tree_postfix(0u32, kids).collect();
        assert_eq!((pre.len(), post.len()), (100, 100));
        assert_eq!(
            (pre[..4].to_vec(), post[98..].to_vec()),
            (vec![0, 1, 3, 7], vec![2, 0])
        );
        let mut sorted = pre.clone();
        sorted.sort_unstable();
        assert!(sorted.into_iter().eq(0..100));
    });
    super::runtime_api::every_index_runs_once(rt);
}
