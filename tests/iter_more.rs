//! Property tests of `chain`, `rev`, `flat_map` (parallel inner iterators), `flatten`,
//! `par_extend`, `par_bridge` and `scope`: each gives what std's sequential counterpart gives
//! (`par_bridge` as a multiset: it promises no order, as in rayon), for random lengths,
//! splitting hints and team sizes; owned items are dropped exactly once; `scope` runs every job,
//! nested spawns included, with borrowed data, and re-raises a job's panic once the others have
//! run, leaving the runtime usable; so do `scope_fifo` and the `in_place` scopes, whose jobs
//! start in spawn order (in order on a team of one).
//!
//! Runtimes are shared by the cases (built once, in `iter_support`).

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn chains_equal_std(a in values(-1000..1000), b in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let got: Vec<&i64> = s.split(a.par_iter().chain(&b)).collect();
            prop_assert_eq!(got, a.iter().chain(&b).collect::<Vec<_>>());
            let got: Vec<&i64> = s.split(a.par_iter()).chain(s.split(b.par_iter())).collect();
            prop_assert_eq!(got, a.iter().chain(&b).collect::<Vec<_>>());
            prop_assert_eq!(a.par_iter().chain(&b).len(), a.len() + b.len());
            // unindexed parts, either side
            let even = |x: &&i64| **x % 2 == 0;
            let got: Vec<&i64> = s.split(a.par_iter()).filter(even).chain(&b).collect();
            prop_assert_eq!(got, a.iter().filter(even).chain(&b).collect::<Vec<_>>());
            let got: Vec<&i64> = a.par_iter().chain(s.split(b.par_iter()).filter(even)).collect();
            prop_assert_eq!(got, a.iter().chain(b.iter().filter(even)).collect::<Vec<_>>());
            // indexed chains zip, enumerate and reverse as one sequence
            let got: Vec<(usize, i64)> =
                s.split(a.par_iter().chain(&b).copied().enumerate().rev()).collect();
            let both: Vec<i64> = a.iter().chain(&b).copied().collect();
            let want: Vec<(usize, i64)> = both.into_iter().enumerate().rev().collect();
            prop_assert_eq!(got, want);
            let got: i64 = s.split(a.par_iter().chain(&b).zip(b.par_iter().chain(&a)))
                .map(|(x, y)| x * y)
                .sum();
            prop_assert_eq!(got, a.iter().chain(&b).zip(b.iter().chain(&a)).map(|(x, y)| x * y).sum::<i64>());
            // owned items
            let got: Vec<i64> = a.clone().into_par_iter().chain(b.clone()).collect();
            prop_assert_eq!(got, a.iter().chain(&b).copied().collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn rev_equals_std(
        v in values(-1000..1000),
        step in 1usize..10,
        skip in 0usize..100,
        take in 0usize..3000,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let want: Vec<&i64> = v.iter().rev().collect();
            prop_assert_eq!(s.split(v.par_iter().rev()).collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(s.split(v.par_iter()).rev().collect::<Vec<_>>(), want);
            let got: Vec<&i64> = s.split(v.par_iter().skip(skip).take(take).step_by(step).rev()).collect();
            let want: Vec<&i64> = v.iter().skip(skip).take(take).step_by(step).rev().collect();
            prop_assert_eq!(got, want);
            let got: Vec<&i64> = s.split(v.par_iter().rev().step_by(step).skip(skip)).collect();
            let want: Vec<&i64> = v.iter().rev().step_by(step).skip(skip).collect();
            prop_assert_eq!(got, want);
            let got: Vec<(usize, &i64)> = s.split(v.par_iter().rev().enumerate()).collect();
            prop_assert_eq!(got, v.iter().rev().enumerate().collect::<Vec<_>>());
            let got: Vec<(usize, &i64)> = s.split(v.par_iter().enumerate().rev()).collect();
            prop_assert_eq!(got, v.iter().enumerate().rev().collect::<Vec<_>>());
            let got: Vec<&[i64]> = s.split(v.par_chunks(step).rev()).collect();
            prop_assert_eq!(got, v.chunks(step).rev().collect::<Vec<_>>());
            let got: Vec<&[i64]> = s.split(v.par_windows(step).rev()).collect();
            prop_assert_eq!(got, v.windows(step).rev().collect::<Vec<_>>());
            let n = v.len() as i64;
            let got: Vec<(i64, i64)> = s.split((0..n).into_par_iter().zip(v.par_iter().copied()).rev()).collect();
            let mut want: Vec<(i64, i64)> = (0..n).zip(v.iter().copied()).collect();
            want.reverse();
            prop_assert_eq!(got, want);
            let got: Vec<i64> = s.split(v.clone().into_par_iter().rev()).map(|x| x * 2).collect();
            prop_assert_eq!(got, v.iter().rev().map(|x| x * 2).collect::<Vec<_>>());
            prop_assert_eq!(
                s.split(v.par_iter().rev()).position_first(|&x| x > 500),
                v.iter().rev().position(|&x| x > 500)
            );
            let mut w = v.clone();
            s.split(w.par_iter_mut().rev().enumerate()).for_each(|(i, x)| *x += i as i64);
            let want: Vec<i64> = v.iter().enumerate().map(|(i, x)| x + (v.len() - 1 - i) as i64).collect();
            prop_assert_eq!(w, want);
            Ok(())
        })?;
    }

    #[test]
    fn flat_maps_equal_std(v in values(-60..60), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let inner = |x: i64| 0..x.rem_euclid(40);
            let got: Vec<i64> = s.split(v.par_iter())
                .flat_map(|&x| inner(x).into_par_iter().map(move |j| x * j))
                .collect();
            let want: Vec<i64> = v.iter().flat_map(|&x| inner(x).map(move |j| x * j)).collect();
            prop_assert_eq!(got, want);
            // owned, filtered inner iterators longer than a batch
            let long = |x: i64| (0..x.rem_euclid(60) * 7).collect::<Vec<i64>>();
            let got: Vec<i64> = s.split(v.par_iter())
                .flat_map(|&x| long(x).into_par_iter().filter(|j| j % 3 != 0))
                .collect();
            let want: Vec<i64> = v.iter().flat_map(|&x| long(x).into_iter().filter(|j| j % 3 != 0)).collect();
            prop_assert_eq!(got, want);
            let nested: Vec<Vec<i64>> = v.iter().map(|&x| inner(x).collect()).collect();
            let got: Vec<i64> = s.split(nested.par_iter()).flatten().copied().collect();
            prop_assert_eq!(got, nested.iter().flatten().copied().collect::<Vec<_>>());
            let got: usize = s.split(nested.par_iter()).flat_map(|w| w.par_iter().rev()).count();
            prop_assert_eq!(got, nested.iter().map(Vec::len).sum::<usize>());
            let got: Vec<i64> = s.split(nested.clone().into_par_iter()).flatten_iter().collect();
            prop_assert_eq!(got, nested.concat());
            Ok(())
        })?;
    }

    #[test]
    fn owned_items_are_dropped_once_after_rev_chain_and_flat_map(
        n in len(),
        k in 0usize..3000,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let (v, drops) = tracked(n);
            let ids: Vec<usize> = s.split(v.into_par_iter().rev().take(k)).map(|t| t.id).collect();
            prop_assert_eq!(ids, (0..n).rev().take(k).collect::<Vec<_>>());
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            let (v, drops) = tracked(n);
            let (w, wdrops) = tracked(k % 100);
            let ids: Vec<usize> = s.split(v.into_par_iter().chain(w).skip(k / 2)).map(|t| t.id).collect();
            prop_assert_eq!(ids, (0..n).chain(0..k % 100).skip(k / 2).collect::<Vec<_>>());
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            prop_assert_eq!(not_dropped_once(&wdrops), vec![]);
            // owned inner iterators, the search stopping part way
            let (v, drops) = tracked(n * 20);
            let mut v = v.into_iter();
            let parts: Vec<Mutex<Vec<Tracked>>> = (0..n)
                .map(|_| Mutex::new(v.by_ref().take(20).collect()))
                .collect();
            let found = s.split((0..n).into_par_iter())
                .flat_map(|i| std::mem::take(&mut *parts[i].lock().unwrap()).into_par_iter())
                .find_any(|t| t.id == n * 10 + 7)
                .map(|t| t.id);
            prop_assert_eq!(found, (n > 0).then_some(n * 10 + 7));
            drop(parts);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            let (v, drops) = tracked(n);
            let chunks: Vec<Vec<Tracked>> = {
                let mut v = v;
                let mut out = Vec::new();
                while !v.is_empty() {
                    let rest = v.split_off(v.len().min(1 + k % 50));
                    out.push(v);
                    v = rest;
                }
                out
            };
            let hit = s.split(chunks.into_par_iter()).flatten().any(|t| t.id == n / 3);
            prop_assert_eq!(hit, n > 0);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            Ok(())
        })?;
    }

    #[test]
    fn par_extend_equals_std_extend(a in values(-1000..1000), b in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let mut want = a.clone();
            want.extend(&b);
            want.extend(b.iter().filter(|x| **x > 0).map(|x| x * 3));
            let mut got = a.clone();
            got.par_extend(s.split(b.par_iter()));
            got.par_extend(s.split(b.par_iter()).filter(|x| **x > 0).map(|x| x * 3));
            prop_assert_eq!(got, want);
            let mut got = a.clone();
            got.par_extend(s.split(b.clone().into_par_iter().rev()));
            prop_assert_eq!(got, a.iter().chain(b.iter().rev()).copied().collect::<Vec<_>>());
            let mut got: VecDeque<i64> = a.iter().copied().collect();
            got.par_extend(s.split(b.par_iter()).copied());
            prop_assert!(got.iter().eq(a.iter().chain(&b)));
            let mut got = String::from("<");
            got.par_extend(s.split(b.par_iter()).map(|x| char::from(b'a' + x.rem_euclid(26) as u8)));
            let want: String = "<".chars().chain(b.iter().map(|x| char::from(b'a' + x.rem_euclid(26) as u8))).collect();
            prop_assert_eq!(got, want);
            Ok(())
        })?;
    }

    #[test]
    fn par_bridge_yields_each_item_once(v in values(-1000..1000), rt in 0..RUNTIMES) {
        runtime(rt).install(|| -> Result<(), TestCaseError> {
            let mut got: Vec<i64> = v.iter().map(|x| x * 2).par_bridge().collect();
            got.sort_unstable();
            let mut want: Vec<i64> = v.iter().map(|x| x * 2).collect();
            want.sort_unstable();
            prop_assert_eq!(got, want);
            prop_assert_eq!(
                v.iter().par_bridge().filter(|x| **x > 0).map(|x| *x).sum::<i64>(),
                v.iter().filter(|x| **x > 0).sum::<i64>()
            );
            let (items, drops) = tracked(v.len());
            let seen: usize = items.into_iter().par_bridge().map(|t| t.id).count();
            prop_assert_eq!(seen, v.len());
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            Ok(())
        })?;
    }

    #[test]
    fn scope_runs_every_job_with_borrowed_data(
        widths in proptest::collection::vec(1usize..4, 0..5),
        v in values(-1000..1000),
        chunk in 1usize..300,
        rt in 0..RUNTIMES,
    ) {
        runtime(rt).install(|| -> Result<(), TestCaseError> {
            let leaves: usize = widths.iter().product();
            let hits: Vec<AtomicUsize> = (0..leaves).map(|_| AtomicUsize::new(0)).collect();
            let mut w = v.clone();
            let answer = asat::scope(|s| {
                spawn_tree(s, &widths, 0, &hits);
                for c in w.chunks_mut(chunk) {
                    s.spawn(move |_| c.iter_mut().for_each(|x| *x = *x * 3 - 1));
                }
                42
            });
            prop_assert_eq!(answer, 42);
            prop_assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            prop_assert_eq!(w, v.iter().map(|x| x * 3 - 1).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn fifo_and_in_place_scopes_run_every_job(
        widths in proptest::collection::vec(1usize..4, 0..5),
        rt in 0..RUNTIMES,
    ) {
        runtime(rt).install(|| -> Result<(), TestCaseError> {
            let leaves: usize = widths.iter().product();
            let order = Mutex::new(Vec::new());
            let local = std::rc::Rc::new(leaves); // `op` stays on the caller
            let n = asat::iter::in_place_scope_fifo(|s| {
                spawn_fifo_tree(s, &widths, 0, &order);
                *local
            });
            prop_assert_eq!(n, leaves);
            let order = order.into_inner().unwrap();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..leaves).collect::<Vec<_>>());
            if runtime(rt).max_threads() == 1 {
                // one member: jobs run in spawn order, level by level, so leaves in order
                prop_assert_eq!(order, (0..leaves).collect::<Vec<_>>());
            }
            let hits: Vec<AtomicUsize> = (0..leaves).map(|_| AtomicUsize::new(0)).collect();
            asat::iter::scope_fifo(|s| {
                for h in &hits {
                    s.spawn_fifo(move |_| {
                        h.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
            asat::iter::in_place_scope(|s| spawn_tree(s, &widths, 0, &hits));
            prop_assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 2));
            Ok(())
        })?;
    }

    #[test]
    fn scope_reraises_a_panic_once_every_job_has_run(
        jobs in 1usize..40,
        bad in 0usize..40,
        rt in 0..RUNTIMES,
    ) {
        let bad = bad % jobs;
        runtime(rt).install(|| -> Result<(), TestCaseError> {
            let ran = AtomicU64::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                asat::scope(|s| {
                    for i in 0..jobs {
                        let ran = &ran;
                        // half of the jobs are spawned from another job
                        s.spawn(move |s| {
                            if i % 2 == 1 {
                                s.spawn(move |_| job(ran, i, bad));
                            } else {
                                job(ran, i, bad);
                            }
                        });
                    }
                })
            }));
            let p = r.expect_err("a job panicked");
            prop_assert_eq!(message(&*p), format!("job {bad}"));
            prop_assert_eq!(ran.load(Ordering::Relaxed), jobs as u64);
            // still usable
            let sum = AtomicU64::new(0);
            asat::scope(|s| {
                for i in 0..10u64 {
                    let sum = &sum;
                    s.spawn(move |_| {
                        sum.fetch_add(i, Ordering::Relaxed);
                    });
                }
            });
            prop_assert_eq!(sum.into_inner(), 45);
            Ok(())
        })?;
    }
}

/// Spawns `widths[0]` jobs, each spawning `widths[1]`, and so on; each leaf counts a hit at its
/// own index (leaves are numbered in mixed radix by their path).
fn spawn_tree<'s>(s: &asat::Scope<'s>, widths: &'s [usize], at: usize, hits: &'s [AtomicUsize]) {
    match widths.split_first() {
        None => {
            hits[at].fetch_add(1, Ordering::Relaxed);
        }
        Some((&w, rest)) => {
            for i in 0..w {
                s.spawn(move |s| spawn_tree(s, rest, at * w + i, hits));
            }
        }
    }
}

/// As [`spawn_tree`] in a FIFO scope, each leaf pushing its index.
fn spawn_fifo_tree<'s>(
    s: &asat::iter::ScopeFifo<'s>,
    widths: &'s [usize],
    at: usize,
    order: &'s Mutex<Vec<usize>>,
) {
    match widths.split_first() {
        None => order.lock().unwrap().push(at),
        Some((&w, rest)) => {
            for i in 0..w {
                s.spawn_fifo(move |s| spawn_fifo_tree(s, rest, at * w + i, order));
            }
        }
    }
}

fn job(ran: &AtomicU64, i: usize, bad: usize) {
    ran.fetch_add(1, Ordering::Relaxed);
    if i == bad {
        panic!("job {bad}");
    }
}
