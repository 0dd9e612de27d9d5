//! Property tests of the adapters and terminal calls beyond the basic set: `fold_with`,
//! `positions`, `position_last`, `find_map_any`, `find_map_first`, `find_map_last`, `update`,
//! `chunks`, `interleave`, `interleave_shortest`, `while_some`, `take_any`, `skip_any`, `unzip`,
//! `unzip_into_vecs`, `collect_vec_list`, `partition`, `partition_map`, `intersperse`,
//! `panic_fuse` and the comparisons (`cmp`, `partial_cmp`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`)
//! give what std's sequential chains give, for random lengths, splitting hints and team sizes.
//! Where timing decides (the `_any` forms on unindexed iterators, `while_some` after a `None`,
//! `take_any_while` and `skip_any_while`), the items are an in-order subsequence of the right
//! ones, as many as std's `take` or `skip` would give for the `_any` forms, and for the
//! `_any_while` forms only items the predicate accepted are taken and none it rejected is
//! skipped (on a team of one, exactly std's `take_while` and `skip_while`). Owned items are
//! dropped once, also when a `panic_fuse` chain panics.
//!
//! Runtimes are shared by the cases (built once, in `iter_support`: fixed teams of 1 to 4 and one
//! whose team size cycles).

mod iter_support;

use asat::iter::Either;
use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::collections::{BTreeSet, HashSet, LinkedList, VecDeque};
use std::sync::{Arc, Weak};

/// Whether `sub` is `all` with some items left out (order kept).
fn is_subsequence<T: PartialEq>(sub: &[T], all: &[T]) -> bool {
    let mut all = all.iter();
    sub.iter().all(|x| all.any(|y| y == x))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn folds_positions_and_chunks(v in values(-1000..1000), size in 1usize..40, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            // one accumulator per range, each a clone of the start
            let parts: Vec<Vec<i64>> = s.split(v.par_iter()).fold_with(Vec::new(), |mut acc, &x| {
                acc.push(x);
                acc
            }).collect();
            prop_assert_eq!(parts.concat(), v.clone());
            let sum: i64 = s.split(v.par_iter()).fold_with(0i64, |a, &x| a + x).sum();
            prop_assert_eq!(sum, v.iter().sum::<i64>());
            let even = |x: &i64| x % 2 == 0;
            let got: Vec<usize> = s.split(v.par_iter()).positions(even).collect();
            let want: Vec<usize> = v.iter().enumerate().filter(|(_, x)| even(x)).map(|(i, _)| i).collect();
            prop_assert_eq!(got, want.clone());
            prop_assert_eq!(s.split(v.par_iter()).position_last(even), want.last().copied());
            prop_assert_eq!(s.split(v.par_iter()).position_first(even), want.first().copied());
            let got: Vec<Vec<i64>> = s.split(v.par_iter().copied().chunks(size)).collect();
            prop_assert_eq!(got, v.chunks(size).map(<[i64]>::to_vec).collect::<Vec<_>>());
            let got: Vec<Vec<i64>> = s.split(v.par_iter().copied().chunks(size).rev()).collect();
            prop_assert_eq!(got, v.chunks(size).rev().map(<[i64]>::to_vec).collect::<Vec<_>>());
            prop_assert_eq!(v.par_iter().chunks(size).len(), v.len().div_ceil(size));
            let got: Vec<(usize, Vec<i64>)> = s.split(v.clone().into_par_iter().chunks(size).enumerate()).collect();
            prop_assert_eq!(got, v.chunks(size).map(<[i64]>::to_vec).enumerate().collect::<Vec<_>>());
            let got: Vec<Vec<i64>> = s.split(v.par_iter().copied().rev().chunks(size)).collect();
            let rev: Vec<i64> = v.iter().rev().copied().collect();
            prop_assert_eq!(got, rev.chunks(size).map(<[i64]>::to_vec).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn find_maps_and_update_equal_std(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let big = |x: &i64| (*x > 900).then_some(x * 2);
            let want: Vec<i64> = v.iter().filter_map(big).collect();
            prop_assert_eq!(s.split(v.par_iter()).find_map_first(big), want.first().copied());
            prop_assert_eq!(s.split(v.par_iter()).find_map_last(big), want.last().copied());
            let any = s.split(v.par_iter()).find_map_any(big);
            prop_assert!(any.is_none() == want.is_empty() && any.is_none_or(|x| want.contains(&x)));
            let got: Vec<i64> = s.split(v.par_iter().copied()).update(|x| *x -= 1).rev().collect();
            prop_assert_eq!(got, v.iter().rev().map(|x| x - 1).collect::<Vec<_>>());
            let got: Vec<String> = s.split(v.par_iter()).filter(|x| **x > 0).map(|x| x.to_string())
                .update(|t| t.push('!'))
                .collect();
            prop_assert_eq!(got, v.iter().filter(|x| **x > 0).map(|x| format!("{x}!")).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn interleavings_equal_std(a in values(-1000..1000), b in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let mut want = Vec::new();
            let (mut x, mut y) = (a.iter(), b.iter());
            loop {
                match (x.next(), y.next()) {
                    (None, None) => break,
                    (p, q) => want.extend(p.into_iter().chain(q)),
                }
            }
            prop_assert_eq!(s.split(a.par_iter().interleave(&b)).collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(a.par_iter().interleave(&b).len(), a.len() + b.len());
            let got: Vec<&i64> = s.split(a.par_iter().interleave(b.par_iter()).rev()).collect();
            prop_assert_eq!(got, want.iter().rev().copied().collect::<Vec<_>>());
            let got: Vec<(usize, &i64)> = s.split(a.par_iter().interleave(&b).enumerate()).collect();
            prop_assert_eq!(got, want.iter().copied().enumerate().collect::<Vec<_>>());
            // shortest: until the side whose turn it is runs out
            let mut want = Vec::new();
            let (mut x, mut y) = (a.iter(), b.iter());
            'turns: loop {
                for side in [&mut x, &mut y] {
                    match side.next() {
                        Some(item) => want.push(item),
                        None => break 'turns,
                    }
                }
            }
            prop_assert_eq!(s.split(a.par_iter().interleave_shortest(&b)).collect::<Vec<_>>(), want.clone());
            prop_assert_eq!(a.par_iter().interleave_shortest(&b).len(), want.len());
            let got: Vec<&i64> = s.split(a.par_iter().interleave_shortest(&b).rev()).collect();
            prop_assert_eq!(got, want.iter().rev().copied().collect::<Vec<_>>());
            // owned items, dropped once
            let (xs, xdrops) = tracked(a.len());
            let (ys, ydrops) = tracked(b.len());
            let ids: Vec<usize> = s.split(xs.into_par_iter().interleave_shortest(ys)).map(|t| t.id).take(20).collect();
            prop_assert_eq!(ids.len(), want.len().min(20));
            prop_assert_eq!(not_dropped_once(&xdrops), vec![]);
            prop_assert_eq!(not_dropped_once(&ydrops), vec![]);
            Ok(())
        })?;
    }

    #[test]
    fn take_skip_any_and_while_some(v in values(-1000..1000), n in 0usize..2500, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            // items one for one with indices: the first n
            prop_assert_eq!(s.split(v.par_iter()).take_any(n).collect::<Vec<_>>(), v.iter().take(n).collect::<Vec<_>>());
            prop_assert_eq!(s.split(v.par_iter()).skip_any(n).collect::<Vec<_>>(), v.iter().skip(n).collect::<Vec<_>>());
            prop_assert_eq!(s.split(v.par_iter()).map(|x| x * 2).skip_any(n).count(), v.len().saturating_sub(n));
            // unindexed: as many, in order, from the kept items
            let kept: Vec<i64> = v.iter().copied().filter(|x| x % 3 != 0).collect();
            let took: Vec<i64> = s.split(v.par_iter()).copied().filter(|x| x % 3 != 0).take_any(n).collect();
            prop_assert_eq!(took.len(), kept.len().min(n));
            prop_assert!(is_subsequence(&took, &kept));
            let rest: Vec<i64> = s.split(v.par_iter()).copied().filter(|x| x % 3 != 0).skip_any(n).collect();
            prop_assert_eq!(rest.len(), kept.len().saturating_sub(n));
            prop_assert!(is_subsequence(&rest, &kept));
            // owned items, some left untaken
            let (items, drops) = tracked(v.len());
            let got = s.split(items.into_par_iter()).filter(|t| t.id % 2 == 0).take_any(n).count();
            prop_assert_eq!(got, v.len().div_ceil(2).min(n));
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            // while_some: all values with no None; with one, values from before it in order
            let all: Vec<i64> = s.split(v.par_iter()).map(|&x| Some(x)).while_some().collect();
            prop_assert_eq!(all, v.clone());
            let stop = n % (v.len() + 1);
            let some: Vec<i64> = s.split(v.par_iter().enumerate())
                .map(|(i, &x)| (i != stop).then_some(x))
                .while_some()
                .collect();
            let want: Vec<i64> = v.iter().copied().enumerate().filter(|&(i, _)| i != stop).map(|(_, x)| x).collect();
            prop_assert!(is_subsequence(&some, &want));
            if stop == v.len() {
                prop_assert_eq!(some, want);
            }
            Ok(())
        })?;
    }

    #[test]
    fn take_and_skip_any_while(v in values(-1000..1000), cut in -1000i64..1000, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let all: Vec<(usize, i64)> = v.iter().copied().enumerate().collect();
            let pred = |&(_, x): &(usize, i64)| x < cut;
            let items = || s.split(v.par_iter().copied().enumerate());
            let took: Vec<(usize, i64)> = items().take_any_while(pred).collect();
            prop_assert!(took.iter().all(pred));
            prop_assert!(is_subsequence(&took, &all));
            let kept: Vec<(usize, i64)> = items().skip_any_while(pred).collect();
            prop_assert!(is_subsequence(&kept, &all));
            let rejected: Vec<(usize, i64)> = all.iter().copied().filter(|x| !pred(x)).collect();
            prop_assert!(is_subsequence(&rejected, &kept));
            if rejected.is_empty() {
                prop_assert_eq!(took.len(), v.len());
                prop_assert!(kept.is_empty());
            }
            if s.rt == 0 {
                // a team of one
                prop_assert_eq!(&took, &all.iter().copied().take_while(pred).collect::<Vec<_>>());
                prop_assert_eq!(&kept, &all.iter().copied().skip_while(pred).collect::<Vec<_>>());
            }
            // owned items, unindexed: those not taken are dropped with the iterator
            let (owned, drops) = tracked(v.len());
            let ids: Vec<usize> = s.split(owned.into_par_iter())
                .filter(|t| t.id % 3 != 0)
                .take_any_while(|t| v[t.id] < cut)
                .map(|t| t.id)
                .collect();
            prop_assert!(ids.iter().all(|&i| i % 3 != 0 && v[i] < cut));
            prop_assert!(ids.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            Ok(())
        })?;
    }

    #[test]
    fn intersperse_equals_std(v in values(-1000..1000), at in 0usize..2000, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let want: Vec<i64> = v.iter().flat_map(|&x| [5000, x]).skip(1).collect();
            prop_assert_eq!(v.par_iter().copied().intersperse(5000).len(), want.len());
            let got: Vec<i64> = s.split(v.par_iter().copied().intersperse(5000)).collect();
            prop_assert_eq!(&got, &want);
            let back: Vec<i64> = s.split(v.par_iter().copied().intersperse(5000).rev()).collect();
            prop_assert!(back.iter().eq(want.iter().rev()));
            let from = at % (want.len() + 1);
            let it = v.par_iter().copied().intersperse(5000).enumerate().skip(from);
            let got: Vec<(usize, i64)> = s.split(it).collect();
            prop_assert!(got.into_iter().eq(want.iter().copied().enumerate().skip(from)));
            // owned items and separator, with `take` stopping the call early: nothing leaks
            let sep = Arc::new(5000i64);
            let owned: Vec<Arc<i64>> = v.iter().map(|&x| Arc::new(x)).collect();
            let weak: Vec<Weak<i64>> = owned.iter().map(Arc::downgrade).collect();
            let half = want.len() / 2;
            let it = owned.into_par_iter().intersperse(sep.clone()).take(half);
            let got: Vec<i64> = s.split(it).map(|a| *a).collect();
            prop_assert_eq!(&got[..], &want[..half]);
            prop_assert_eq!(Arc::strong_count(&sep), 1);
            prop_assert!(weak.iter().all(|w| w.upgrade().is_none()));
            // unindexed (after `filter`): gathered first, no separator leading or trailing
            let odd = |x: &i64| x % 2 != 0;
            let want: Vec<i64> =
                v.iter().copied().filter(odd).flat_map(|x| [5000, x]).skip(1).collect();
            let it = || s.split(v.par_iter().copied()).filter(odd).intersperse(5000);
            prop_assert_eq!(&it().collect::<Vec<i64>>(), &want);
            let sum: i64 = it().sum();
            prop_assert_eq!(sum, want.iter().sum::<i64>());
            Ok(())
        })?;
    }

    #[test]
    fn panic_fuse_passes_the_items_and_a_panic_through(
        v in values(-1000..1000),
        at in 0usize..2000,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let doubled: Vec<i64> = s.split(v.par_iter().panic_fuse()).map(|x| x * 2).collect();
            prop_assert_eq!(doubled, v.iter().map(|x| x * 2).collect::<Vec<_>>());
            let back: Vec<&i64> = s.split(v.par_iter().panic_fuse().rev()).collect();
            prop_assert!(back.into_iter().eq(v.iter().rev()));
            let positive = s.split(v.par_iter()).filter(|x| **x > 0).panic_fuse().count();
            prop_assert_eq!(positive, v.iter().filter(|x| **x > 0).count());
            // a panic at one item, owned items collected in place: the panic reaches the caller,
            // and each item is dropped once (ranges the fuse ended short included)
            if !v.is_empty() {
                let at = at % v.len();
                let (owned, drops) = tracked(v.len());
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    s.split(owned.into_par_iter())
                        .panic_fuse()
                        .map(|t| {
                            assert!(t.id != at, "item {at} fails");
                            t
                        })
                        .collect::<Vec<Tracked>>()
                }));
                let p = r.err().ok_or_else(|| TestCaseError::fail("the panic was lost"))?;
                prop_assert_eq!(message(&*p), format!("item {at} fails"));
                prop_assert_eq!(not_dropped_once(&drops), vec![]);
            }
            Ok(())
        })?;
    }

    #[test]
    fn unzip_and_partitions_equal_std(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let (l, r): (Vec<i64>, Vec<String>) = s.split(v.par_iter()).map(|&x| (x, x.to_string())).unzip();
            let (wl, wr): (Vec<i64>, Vec<String>) = v.iter().map(|&x| (x, x.to_string())).unzip();
            prop_assert_eq!((l, r), (wl, wr));
            let (mut l, mut r) = (vec![7i64], vec![String::from("old")]);
            s.split(v.par_iter().map(|&x| (x, x.to_string()))).unzip_into_vecs(&mut l, &mut r);
            prop_assert_eq!(&l, &v);
            prop_assert!(r.iter().zip(&v).all(|(a, b)| *a == b.to_string()) && r.len() == v.len());
            let list = s.split(v.par_iter()).filter(|x| **x % 5 != 0).collect_vec_list();
            prop_assert!(list.iter().all(|part| !part.is_empty()));
            let flat: Vec<&i64> = list.into_iter().flatten().collect();
            prop_assert_eq!(flat, v.iter().filter(|x| **x % 5 != 0).collect::<Vec<_>>());
            let (l, r): (VecDeque<i64>, LinkedList<usize>) = s.split(v.par_iter().enumerate()).map(|(i, &x)| (x, i)).unzip();
            prop_assert!(l.iter().eq(v.iter()));
            prop_assert!(r.iter().copied().eq(0..v.len()));
            let pos = |x: &&i64| **x > 0;
            let (p, q): (Vec<&i64>, Vec<&i64>) = s.split(v.par_iter()).partition(pos);
            let (wp, wq): (Vec<&i64>, Vec<&i64>) = v.iter().partition(pos);
            prop_assert_eq!((p, q), (wp, wq));
            let (p, q): (BTreeSet<i64>, HashSet<i64>) = s.split(v.par_iter()).copied().filter(|x| x % 2 == 0).partition(|x| *x > 0);
            prop_assert_eq!(p, v.iter().copied().filter(|x| x % 2 == 0 && *x > 0).collect::<BTreeSet<_>>());
            prop_assert_eq!(q, v.iter().copied().filter(|x| x % 2 == 0 && *x <= 0).collect::<HashSet<_>>());
            let (p, q): (Vec<i64>, Vec<String>) = s.split(v.par_iter()).partition_map(|&x| {
                if x % 3 == 0 { Either::Left(x / 3) } else { Either::Right(format!("{x}")) }
            });
            prop_assert_eq!(p, v.iter().filter(|x| *x % 3 == 0).map(|x| x / 3).collect::<Vec<_>>());
            prop_assert_eq!(q, v.iter().filter(|x| *x % 3 != 0).map(|x| format!("{x}")).collect::<Vec<_>>());
            // owned items, each dropped once
            let (items, drops) = tracked(v.len());
            let (even, odd): (Vec<Tracked>, Vec<Tracked>) = s.split(items.into_par_iter()).partition(|t| t.id % 2 == 0);
            prop_assert!(even.iter().map(|t| t.id).eq((0..v.len()).step_by(2)));
            prop_assert!(odd.iter().map(|t| t.id).eq((1..v.len()).step_by(2)));
            drop((even, odd));
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            Ok(())
        })?;
    }

    #[test]
    fn comparisons_equal_std(
        a in values(-3..3),
        b in values(-3..3),
        cut in 0usize..2000,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            // also a prefix of `a` and `a` with one item changed, so that equal and nearly
            // equal sequences come up
            let prefix: Vec<i64> = a.iter().copied().take(cut).collect();
            let mut changed = a.clone();
            if let Some(x) = changed.get_mut(cut % a.len().max(1)) {
                *x += 1;
            }
            for other in [&b, &a, &prefix, &changed] {
                let (x, y) = (s.split(a.par_iter()), other.par_iter());
                prop_assert_eq!(x.cmp(y), a.iter().cmp(other.iter()));
                let f = |v: &Vec<i64>| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
                let (fa, fo) = (f(&a), f(other));
                prop_assert_eq!(s.split(fa.par_iter()).partial_cmp(&fo), fa.iter().partial_cmp(fo.iter()));
                prop_assert_eq!(s.split(a.par_iter()).eq(other), a.iter().eq(other.iter()));
                prop_assert_eq!(s.split(a.par_iter()).ne(other), a.iter().ne(other.iter()));
                prop_assert_eq!(s.split(a.par_iter()).lt(other), a.iter().lt(other.iter()));
                prop_assert_eq!(s.split(a.par_iter()).le(other), a.iter().le(other.iter()));
                prop_assert_eq!(s.split(a.par_iter()).gt(other), a.iter().gt(other.iter()));
                prop_assert_eq!(s.split(a.par_iter()).ge(other), a.iter().ge(other.iter()));
            }
            // NaN makes the orderings undefined, as in std
            let mut fa: Vec<f64> = a.iter().map(|&x| x as f64).collect();
            if !fa.is_empty() {
                let at = cut % fa.len();
                fa[at] = f64::NAN;
                let same = fa.clone();
                prop_assert_eq!(fa.par_iter().partial_cmp(&same), fa.iter().partial_cmp(same.iter()));
                prop_assert_eq!(fa.par_iter().eq(&same), false);
                prop_assert_eq!(fa.par_iter().le(&same), fa.iter().le(same.iter()));
            }
            Ok(())
        })?;
    }
}
