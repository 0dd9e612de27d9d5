//! Property tests of the parallel iterators' terminal calls: sums and products, ordered (not
//! commutative) reductions, `min`/`max` with ties, counts and searches, and `collect` into every
//! supported collection give what std's sequential iterators give, for random lengths,
//! splitting hints and team sizes.
//!
//! Runtimes are shared by the cases (built once, in `iter_support`: fixed teams of 1 to 4 and one
//! whose team size cycles), so that a case also checks that the calls before it left its runtime
//! clean.

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::num::Wrapping;
use std::sync::Mutex;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sums_and_products(
        v in values(-1000..1000),
        f in proptest::collection::vec(-1e3f64..1e3, 0..2000),
        g in proptest::collection::vec(0.99f64..1.01, 0..2000),
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(s.split(v.par_iter()).sum::<i64>(), v.iter().sum::<i64>());
            prop_assert_eq!(
                s.split(v.par_iter()).map(|&x| i128::from(x) * i128::from(x)).sum::<i128>(),
                v.iter().map(|&x| i128::from(x) * i128::from(x)).sum::<i128>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).map(|x| if x % 2 == 0 { 1 } else { -1 }).product::<i64>(),
                v.iter().map(|x| if x % 2 == 0 { 1 } else { -1 }).product::<i64>()
            );
            let odd = |x: &i64| Wrapping(*x as u64 | 1);
            prop_assert_eq!(
                s.split(v.par_iter()).map(odd).product::<Wrapping<u64>>(),
                v.iter().map(odd).product::<Wrapping<u64>>()
            );
            let par: f64 = s.split(f.par_iter()).sum();
            let seq: f64 = f.iter().sum();
            let scale: f64 = f.iter().map(|x| x.abs()).sum::<f64>() + 1.0;
            prop_assert!((par - seq).abs() <= 1e-9 * scale, "{} vs {}", par, seq);
            let par: f64 = s.split(g.par_iter()).product();
            let seq: f64 = g.iter().product();
            prop_assert!((par - seq).abs() <= 1e-9 * seq.abs(), "{} vs {}", par, seq);
            Ok(())
        })?;
    }

    #[test]
    fn ordered_reductions(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(v.par_iter()).map(|&x| mat_of(x)).reduce(|| IDENTITY, mat_mul),
                v.iter().map(|&x| mat_of(x)).fold(IDENTITY, mat_mul)
            );
            prop_assert_eq!(
                s.split(v.par_iter()).map(|x| format!("{x},")).reduce(String::new, |a, b| a + &b),
                v.iter().map(|x| format!("{x},")).collect::<String>()
            );
            let concat = |mut a: Vec<i64>, mut b: Vec<i64>| {
                a.append(&mut b);
                a
            };
            prop_assert_eq!(
                s.split(v.par_iter()).map(|&x| vec![x]).reduce_with(concat),
                (!v.is_empty()).then(|| v.clone())
            );
            prop_assert_eq!(
                s.split(v.par_iter()).map(|&x| mat_of(x)).reduce_with(mat_mul),
                v.iter().map(|&x| mat_of(x)).reduce(mat_mul)
            );
            let push = |mut acc: Vec<i64>, x: &i64| {
                acc.push(*x);
                acc
            };
            prop_assert_eq!(
                &s.split(v.par_iter()).fold(Vec::new, push).reduce(Vec::new, concat),
                &v
            );
            prop_assert_eq!(
                &s.split(v.par_iter()).fold(Vec::new, push).collect::<Vec<_>>().concat(),
                &v
            );
            prop_assert_eq!(
                s.split(v.par_iter()).fold(|| 0i64, |a, x| a + x).sum::<i64>(),
                v.iter().sum::<i64>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .filter(|x| **x > 0)
                    .fold(String::new, |acc, x| acc + &x.to_string() + ",")
                    .collect::<String>(),
                v.iter().filter(|x| **x > 0).map(|x| format!("{x},")).collect::<String>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .map(|&x| mat_of(x))
                    .fold(|| IDENTITY, mat_mul)
                    .reduce(|| IDENTITY, mat_mul),
                v.iter().map(|&x| mat_of(x)).fold(IDENTITY, mat_mul)
            );
            Ok(())
        })?;
    }

    #[test]
    fn min_and_max_with_ties(v in values(0..20), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(s.split(v.par_iter()).min(), v.iter().min());
            prop_assert_eq!(s.split(v.par_iter()).max(), v.iter().max());
            let keyed = || v.iter().enumerate().map(|(at, &key)| Keyed { key, at });
            let par = || s.split(v.par_iter()).enumerate().map(|(at, &key)| Keyed { key, at });
            // ties: the first of the smallest, the last of the largest, as std
            prop_assert_eq!(par().min().map(|k| k.at), keyed().min().map(|k| k.at));
            prop_assert_eq!(par().max().map(|k| k.at), keyed().max().map(|k| k.at));
            let cmp = |a: &Keyed, b: &Keyed| a.key.cmp(&b.key);
            prop_assert_eq!(par().min_by(cmp).map(|k| k.at), keyed().min_by(cmp).map(|k| k.at));
            prop_assert_eq!(par().max_by(cmp).map(|k| k.at), keyed().max_by(cmp).map(|k| k.at));
            let key = |k: &Keyed| k.key % 7;
            prop_assert_eq!(
                par().min_by_key(key).map(|k| k.at),
                keyed().min_by_key(key).map(|k| k.at)
            );
            prop_assert_eq!(
                par().max_by_key(key).map(|k| k.at),
                keyed().max_by_key(key).map(|k| k.at)
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate()).min_by_key(|p| *p.1),
                v.iter().enumerate().min_by_key(|p| *p.1)
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate()).max_by_key(|p| *p.1),
                v.iter().enumerate().max_by_key(|p| *p.1)
            );
            // after a filter (not indexed)
            prop_assert_eq!(
                par().filter(|k| k.key > 3).max_by_key(key).map(|k| k.at),
                keyed().filter(|k| k.key > 3).max_by_key(key).map(|k| k.at)
            );
            Ok(())
        })?;
    }

    #[test]
    fn counts_and_searches(v in values(0..50), target in 0i64..60, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let is = |x: &i64| *x == target;
            prop_assert_eq!(s.split(v.par_iter()).count(), v.len());
            prop_assert_eq!(
                s.split(v.par_iter()).filter(|x| is(x)).count(),
                v.iter().filter(|x| is(x)).count()
            );
            prop_assert_eq!(s.split(v.par_iter()).any(is), v.iter().any(is));
            prop_assert_eq!(s.split(v.par_iter()).all(|x| !is(x)), v.iter().all(|x| !is(x)));
            prop_assert!(s.split(v.par_iter()).all(|x| *x < 50));
            let exists = v.contains(&target);
            let found = s.split(v.par_iter().enumerate()).find_any(|(_, x)| **x == target);
            prop_assert_eq!(found.is_some(), exists);
            if let Some((i, x)) = found {
                prop_assert!(is(x) && v[i] == *x, "found {} at {}", x, i);
            }
            let found = s.split(v.par_iter()).filter(|x| *x % 2 == 0).find_any(|x| is(x));
            prop_assert_eq!(found.is_some(), exists && target % 2 == 0);
            prop_assert!(found.is_none_or(is));
            prop_assert_eq!(
                s.split(v.par_iter().enumerate()).find_first(|(_, x)| **x == target),
                v.iter().enumerate().find(|(_, x)| **x == target)
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate()).find_last(|(_, x)| **x == target),
                v.iter().enumerate().rfind(|(_, x)| **x == target)
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate())
                    .filter(|(i, _)| i % 3 != 0)
                    .find_first(|(_, x)| **x > target),
                v.iter().enumerate().filter(|(i, _)| i % 3 != 0).find(|(_, x)| **x > target)
            );
            let pos = s.split(v.par_iter()).position_any(is);
            prop_assert_eq!(pos.is_some(), exists);
            prop_assert!(pos.is_none_or(|i| is(&v[i])));
            prop_assert_eq!(s.split(v.par_iter()).position_first(is), v.iter().position(is));
            Ok(())
        })?;
    }

    #[test]
    fn collects(v in values(-1000..1000), limit in -1000i64..1100, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(v.par_iter()).map(|x| x * 2).collect::<Vec<_>>(),
                v.iter().map(|x| x * 2).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).filter(|x| **x < limit).collect::<Vec<_>>(),
                v.iter().filter(|x| **x < limit).collect::<Vec<_>>()
            );
            let letter = |x: &i64| char::from(b'a' + x.rem_euclid(26) as u8);
            prop_assert_eq!(
                s.split(v.par_iter()).map(letter).collect::<String>(),
                v.iter().map(letter).collect::<String>()
            );
            let words: Vec<String> = v.iter().map(|x| format!("{x};")).collect();
            prop_assert_eq!(
                s.split(words.par_iter()).map(String::as_str).collect::<String>(),
                words.concat()
            );
            prop_assert_eq!(
                s.split(words.clone().into_par_iter()).collect::<String>(),
                words.concat()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().collect::<HashMap<_, _>>(),
                v.iter().enumerate().collect::<HashMap<_, _>>()
            );
            // repeated keys: the last value wins, as in std
            let pair = |(i, x): (usize, &i64)| (x.rem_euclid(17), i);
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().map(pair).collect::<BTreeMap<_, _>>(),
                v.iter().enumerate().map(pair).collect::<BTreeMap<_, _>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().map(pair).collect::<HashMap<_, _>>(),
                v.iter().enumerate().map(pair).collect::<HashMap<_, _>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).copied().collect::<BTreeSet<_>>(),
                v.iter().copied().collect::<BTreeSet<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).collect::<VecDeque<_>>(),
                v.iter().collect::<VecDeque<_>>()
            );
            // the first error in order
            let check = |(i, x): (usize, &i64)| if *x > limit { Err((i, *x)) } else { Ok(*x) };
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().map(check).collect::<Result<Vec<_>, _>>(),
                v.iter().enumerate().map(check).collect::<Result<Vec<_>, _>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .map(|x| (*x <= limit).then_some(x))
                    .collect::<Option<Vec<_>>>(),
                v.iter().map(|x| (*x <= limit).then_some(x)).collect::<Option<Vec<_>>>()
            );
            let mut target = vec![-1i64; 5];
            s.split(v.par_iter()).map(|x| x + 1).collect_into_vec(&mut target);
            prop_assert_eq!(target, v.iter().map(|x| x + 1).collect::<Vec<_>>());
            Ok(())
        })?;
    }
}

/// `find_last` and its relatives look through the index space from its end, as `rfind` does:
/// a hit at the very end of a range of 2^40 items is found after a few items under every team
/// and schedule (a search from the front would look at 2^39 items and trip the count). Every
/// member's range has hits within a few items of its end, so that the count does not depend
/// on when the member with the last range runs (a member without hits would look on until it
/// had).
#[test]
fn searches_for_the_last_hit_start_at_the_end() {
    use asat::Schedule;
    use std::sync::atomic::{AtomicUsize, Ordering};
    const N: usize = 1 << 40;
    let schedules = [None, Some(Schedule::dynamic(1)), Some(Schedule::guided(1))];
    for (rt, schedule) in (0..RUNTIMES).flat_map(|i| schedules.map(|s| (runtime(i), s))) {
        rt.install(|| {
            let looked = AtomicUsize::new(0);
            let look = |_: &usize| {
                assert!(
                    looked.fetch_add(1, Ordering::Relaxed) < 64,
                    "looked from the front"
                );
            };
            // Pieces of 2^30 keep the dynamic schedules' count of pieces small.
            let iter = || (0..N).into_par_iter().with_min_len(1 << 30).inspect(look);
            let with = |s: Option<Schedule>| iter().with_schedule(s.unwrap_or(Schedule::Static));
            assert_eq!(with(schedule).find_last(|_| true), Some(N - 1));
            assert_eq!(with(schedule).position_last(|i| i % 3 == 0), Some(N - 1));
            assert_eq!(
                with(schedule).filter(|i| i % 2 == 0).find_last(|_| true),
                Some(N - 2)
            );
            let odd = |i: usize| (i % 4 == 3).then_some(i);
            assert_eq!(with(schedule).find_map_last(odd), Some(N - 1));
            assert!(looked.load(Ordering::Relaxed) <= 64);
        });
    }
}

/// A search over a million items dealt in pieces of one (`with_max_len(1)`, a dynamic
/// schedule) stops dealing them once it has its answer near the start: far fewer items are
/// made than the call has, on every runtime (before, every piece left was still handed out).
#[test]
fn searches_in_small_pieces_stop_dealing_them_at_the_answer() {
    use asat::Schedule;
    use std::ops::ControlFlow;
    use std::sync::atomic::{AtomicUsize, Ordering};
    const N: usize = 1_000_000;
    for rt in (0..RUNTIMES).map(runtime) {
        rt.install(|| {
            let made = AtomicUsize::new(0);
            let make = |i: usize| {
                made.fetch_add(1, Ordering::Relaxed);
                i
            };
            let pieces = || (0..N).into_par_iter().with_max_len(1).map(make);
            let dealt = || {
                (0..N)
                    .into_par_iter()
                    .with_schedule(Schedule::dynamic(1))
                    .map(make)
            };
            let few = |what: &str| {
                let n = made.swap(0, Ordering::Relaxed);
                assert!(n < N / 100, "{what}: {n} of {N} items made");
            };
            assert!(pieces().find_any(|&i| i == 10).is_some());
            few("find_any");
            assert!(pieces().any(|i| i == 10));
            few("any");
            assert!(!pieces().all(|i| i != 10));
            few("all");
            assert_eq!(pieces().position_first(|i| i >= 10), Some(10));
            few("position_first");
            assert_eq!(pieces().find_last(|&i| i < N - 10), Some(N - 11));
            few("find_last");
            assert_eq!(dealt().find_map_first(|i| (i >= 10).then_some(i)), Some(10));
            few("find_map_first, dynamic schedule");
            let fail = |i: usize| if i == 10 { Err(i) } else { Ok(()) };
            assert_eq!(pieces().try_for_each(fail), Err(10));
            few("try_for_each");
            let flow = pieces().try_for_each(|i| {
                if i >= 10 {
                    ControlFlow::Break(i)
                } else {
                    ControlFlow::Continue(())
                }
            });
            assert!(flow.is_break());
            few("try_for_each, ControlFlow");
        });
    }
}

/// As rayon's, a `fold` (`fold_with`, `try_fold`) before a call that stops early stops with
/// it: the call folds each range in pieces of 1, 2, 4, ... items and stops between them, so
/// where every fold's result is an answer, each member makes one item (before, each folded its
/// whole range). The answers are the first and last pieces' folds.
#[test]
fn a_fold_before_a_search_stops_with_it() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    const N: usize = 1 << 20;
    for rt in (0..RUNTIMES).map(runtime) {
        rt.install(|| {
            let made = AtomicUsize::new(0);
            let items = || {
                (0..N).into_par_iter().map(|i| {
                    made.fetch_add(1, Ordering::Relaxed);
                    i
                })
            };
            let few = |what: &str| {
                let n = made.swap(0, Ordering::Relaxed);
                assert!(n < N / 100, "{what}: {n} of {N} items made");
            };
            let gather = || {
                items().fold(Vec::new, |mut v, i| {
                    v.push(i);
                    v
                })
            };
            assert!(items()
                .fold(|| 0, |a, i| a + i)
                .find_any(|_| true)
                .is_some());
            few("fold, find_any");
            assert!(items().fold_with(0, usize::max).any(|m| m < N));
            few("fold_with, any");
            assert_eq!(gather().find_first(|v| !v.is_empty()), Some(vec![0]));
            few("fold, find_first");
            assert_eq!(gather().find_last(|v| !v.is_empty()), Some(vec![N - 1]));
            few("fold, find_last");
            let failed = items()
                .try_fold(|| 0, |a: usize, i| i.checked_sub(N).map(|d| a + d).ok_or(i))
                .try_reduce(|| 0, |a, b| Ok(a + b));
            assert!(failed.is_err());
            few("try_fold, try_reduce");
            // a call that does not stop folds each range whole
            assert_eq!(gather().map(|v| v.len()).sum::<usize>(), N);
            assert_eq!(made.swap(0, Ordering::Relaxed), N);
        });
    }
}

/// A search stops inside the adapters that drop items, as rayon's does (its consumers ask
/// whether they are full before each item of a `filter`'s base): once one member has the
/// answer, a member whose range has no hit stops within a few items instead of looking through
/// the rest of its range. On teams of 2 to 4, the hit is at the first index (the last for
/// `find_last`) and is not found before other members have looked at `need` items (or a
/// second has passed: a call may run alone): every other item counts itself, and from the
/// `need`th on waits until the hit has been looked at, then counts itself as looked at after
/// it. (`find_last` looks through pieces of 1, 2, 4, ... items and stops between them: its hit
/// waits until the others are into large pieces.)
#[test]
fn a_search_stops_inside_adapters_that_drop_items() {
    use asat::{Fixed, Runtime};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};
    const N: usize = 1 << 22;
    // Whether `until()` came true within `secs`.
    let wait = |until: &dyn Fn() -> bool, secs: u64| {
        let waiting = Instant::now();
        while !until() {
            if waiting.elapsed() > Duration::from_secs(secs) {
                return false;
            }
            std::thread::yield_now();
        }
        true
    };
    // Runtimes of its own: a shared one may be running another test's region, and a call
    // then runs on its calling thread alone.
    for t in 2..=4 {
        let rt = Runtime::builder()
            .max_threads(t)
            .policy(Fixed::new(t))
            .build()
            .unwrap();
        rt.install(|| {
            let started = AtomicUsize::new(0);
            let seen = AtomicBool::new(false);
            let after = AtomicUsize::new(0);
            // Whether `i` is the hit `at`, found once `need` others have started.
            let hit_after = |i: usize, at: usize, need: usize| {
                if i == at {
                    wait(&|| started.load(Ordering::Relaxed) >= need, 1);
                    seen.store(true, Ordering::Relaxed);
                    return true;
                }
                if started.fetch_add(1, Ordering::Relaxed) + 1 >= need {
                    assert!(wait(&|| seen.load(Ordering::Relaxed), 60), "no hit");
                    after.fetch_add(1, Ordering::Relaxed);
                }
                false
            };
            let first = |i: &usize| hit_after(*i, 0, 1);
            let few = |what: &str| {
                let n = after.swap(0, Ordering::Relaxed);
                seen.store(false, Ordering::Relaxed);
                started.store(0, Ordering::Relaxed);
                assert!(
                    n < N / 16,
                    "{what}: looked at {n} of {N} items after the hit"
                );
            };
            let items = || (0..N).into_par_iter();
            assert_eq!(items().filter(first).find_any(|_| true), Some(0));
            few("filter, find_any");
            assert_eq!(
                items().filter(first).map(|i| i + 1).find_first(|_| true),
                Some(1)
            );
            few("filter, map, find_first");
            let last = |i: &usize| hit_after(*i, N - 1, N / 4);
            assert_eq!(items().filter(last).find_last(|_| true), Some(N - 1));
            few("filter, find_last");
            assert!(items().filter_map(|i| first(&i).then_some(i)).any(|_| true));
            few("filter_map, any");
            let chained = items().filter(first).chain(asat::iter::empty());
            assert_eq!(chained.find_any(|_| true), Some(0));
            few("filter, chain, find_any");
            let flat = items().flat_map_iter(|i| first(&i).then_some(i));
            assert_eq!(flat.find_any(|_| true), Some(0));
            few("flat_map_iter, find_any");
            let flat = items().flat_map(|i| (i..i + 1).into_par_iter().filter(first));
            assert_eq!(flat.find_first(|_| true), Some(0));
            few("flat_map, find_first");
            let halves = (0..2).into_par_iter();
            let flat =
                halves.flat_map(|h| (h * N / 2..(h + 1) * N / 2).into_par_iter().filter(first));
            assert_eq!(flat.find_any(|_| true), Some(0));
            few("flat_map over halves, find_any");
            assert_eq!(items().positions(|i| first(&i)).find_any(|_| true), Some(0));
            few("positions, find_any");
            assert_eq!(items().filter(first).try_for_each(Err), Err(0));
            few("filter, try_for_each");
            // the adapters that stop or skip by what the call has seen pass the stop on
            assert_eq!(
                items().filter(first).take_any(N).find_any(|_| true),
                Some(0)
            );
            few("filter, take_any, find_any");
            assert_eq!(
                items().filter(first).skip_any(0).find_any(|_| true),
                Some(0)
            );
            few("filter, skip_any, find_any");
            let some = items().filter(first).map(Some).while_some();
            assert_eq!(some.find_any(|_| true), Some(0));
            few("filter, while_some, find_any");
            let taking = items().filter(first).take_any_while(|_| true);
            assert_eq!(taking.find_any(|_| true), Some(0));
            few("filter, take_any_while, find_any");
            let skipping = items().filter(first).skip_any_while(|_| false);
            assert_eq!(skipping.find_any(|_| true), Some(0));
            few("filter, skip_any_while, find_any");
            // and the skipping ones ask it before each item they drop (a `u128` range is not
            // indexed: `skip_any` claims its items from a shared count)
            let one = || (0..1).into_par_iter().filter(first);
            let wide = || {
                let wide = (0..N as u128).into_par_iter().map(|i| i as usize);
                wide.inspect(|i| _ = hit_after(i + 1, 0, 1))
            };
            assert_eq!(one().chain(wide().skip_any(N)).find_any(|_| true), Some(0));
            few("chain, skip_any, find_any");
            let skipping = one().chain(wide().skip_any_while(|_| true));
            assert_eq!(skipping.find_any(|_| true), Some(0));
            few("chain, skip_any_while, find_any");
        });
    }
}

/// `any` and `find_any` under `with_max_len` deal their pieces from as many places as the pool
/// has threads, each going forward, as rayon's halving splits send its second thread to the
/// far half: where the hits lie only in the second half, they look at a few pieces' items
/// before a hit, whatever the team, where dealt in index order they looked through the first
/// half. `find_first` keeps the index order.
#[test]
fn order_free_searches_deal_their_pieces_from_several_places() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    const N: usize = 1 << 20;
    const PIECE: usize = 1000;
    // Runtimes of its own: on a runtime that another test's call is using, the call runs on
    // the work-stealing engine's tasks, whose halves are shared only as threads come to
    // take them (rayon's order), and a lone thread looks through the first half.
    let own = |t: usize| {
        asat::Runtime::builder()
            .max_threads(t)
            .policy(asat::Fixed::new(t))
            .build()
            .unwrap()
    };
    for rt in (2..=4).map(own) {
        rt.install(|| {
            let looked = AtomicUsize::new(0);
            let late = |i: &usize| {
                looked.fetch_add(1, Ordering::Relaxed);
                *i >= N / 2
            };
            // A few pieces' items per thread when the threads run at once; a loaded machine
            // may stop the thread at the far half while the others deal on, so the bound is
            // a quarter of the items, half of what index order looks through (the plan's own
            // dealing is checked exactly by the drive's unit tests).
            let few = |what: &str| {
                let n = looked.swap(0, Ordering::Relaxed);
                let most = ((rt.max_threads() + 2) * PIECE).max(N / 4);
                assert!(n <= most, "{what}: looked at {n} items before a hit");
            };
            let items = || (0..N).into_par_iter().with_max_len(PIECE);
            assert!(items().any(|i| late(&i)));
            few("any");
            assert!(items().find_any(late).is_some_and(|i| i >= N / 2));
            few("find_any");
            assert!(items().filter(late).find_any(|_| true).is_some());
            few("filter, find_any");
            assert_eq!(
                items().position_any(|i| late(&i)).map(|i| i >= N / 2),
                Some(true)
            );
            few("position_any");
            assert_eq!(items().find_first(late), Some(N / 2));
            assert!(looked.swap(0, Ordering::Relaxed) >= N / 2, "find_first");
        });
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The pieces a `fold` sees keep to `with_min_len` and `with_max_len` as rayon's do: none
    /// shorter than the minimum unless the whole call is, none
    /// longer than the larger of the maximum (0 stands for 1) and twice the minimum less one;
    /// and they cover the items. Also where a call that may stop early cuts its ranges into
    /// growing pieces (searches, `try_` calls: rayon's `check_lengths` asks this of `all`).
    #[test]
    fn pieces_keep_to_min_and_max_len(
        len in 0usize..3000,
        min in prop_oneof![Just(0usize), 1usize..1200],
        max in prop_oneof![Just(0usize), 1usize..1200],
        rt in 0..RUNTIMES,
    ) {
        let lo = min.clamp(1, len.max(1));
        let hi = max.max(1).max(2 * lo - 1);
        let check = |how: &str, pieces: Vec<usize>| {
            prop_assert_eq!(pieces.iter().sum::<usize>(), len, "{}", how);
            for (i, &n) in pieces.iter().enumerate() {
                prop_assert!(n >= lo, "{}: piece {} of {:?} below {}", how, i, pieces, lo);
                prop_assert!(n <= hi, "{}: piece {} of {:?} above {}", how, i, pieces, hi);
            }
            Ok(())
        };
        let pieces = || {
            (0..len)
                .into_par_iter()
                .with_min_len(min)
                .with_max_len(max)
                .fold(|| 0, |n, _| n + 1)
        };
        runtime(rt).install(|| {
            check("collect", pieces().collect())?;
            let seen = Mutex::new(Vec::new());
            let see = |n: &usize| seen.lock().unwrap().push(*n);
            let taken = || std::mem::take(&mut *seen.lock().unwrap());
            let all = pieces().all(|n| {
                see(&n);
                true
            });
            prop_assert!(all);
            check("all", taken())?;
            prop_assert_eq!(pieces().inspect(see).find_last(|_| false), None);
            check("find_last", taken())?;
            let tried = pieces().try_for_each(|n| {
                see(&n);
                Ok::<(), ()>(())
            });
            prop_assert_eq!(tried, Ok(()));
            check("try_for_each", taken())
        })?;
    }
}
