//! Property tests of the collections' parallel iterators (`into_par_iter`, `par_iter`,
//! `par_iter_mut` on `HashMap`, `HashSet`, `BTreeMap`, `BTreeSet`, `VecDeque`, `LinkedList`,
//! `BinaryHeap`, `Option` and `Result`) and `par_drain` (of a range of a `Vec`, `VecDeque`,
//! `String`; of all of a `HashMap`, `HashSet`, `BinaryHeap`): each yields what the collection's
//! sequential iterator (or std's `drain`) yields (in its order where it has one, as a multiset
//! for hash maps and heaps), mutable references update every value once, a drain leaves the
//! collection as std's `drain` does, and owned values are dropped once, for random contents,
//! ranges, splitting hints and team sizes.
//!
//! Runtimes are shared by the cases (built once, in `iter_support`: fixed teams of 1 to 4 and one
//! whose team size cycles).

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn maps_and_sets_yield_their_items(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let hm: HashMap<i64, i64> = v.iter().enumerate().map(|(i, &x)| (x, i as i64)).collect();
            let got = sorted(s.split(hm.par_iter()).map(|(k, v)| (*k, *v)).collect());
            prop_assert_eq!(got, sorted(hm.iter().map(|(k, v)| (*k, *v)).collect()));
            let mut hm2 = hm.clone();
            s.split(hm2.par_iter_mut()).for_each(|(k, v)| *v += *k);
            prop_assert!(hm2.iter().all(|(k, v)| *v == hm[k] + *k));
            let got = sorted(s.split(hm.clone().into_par_iter()).collect());
            prop_assert_eq!(got, sorted(hm.into_iter().collect()));

            let hs: HashSet<i64> = v.iter().copied().collect();
            prop_assert_eq!(s.split(hs.par_iter()).sum::<i64>(), hs.iter().sum::<i64>());
            let got: HashSet<i64> = s.split(hs.clone().into_par_iter()).map(|x| x * 2).collect();
            prop_assert_eq!(got, hs.iter().map(|x| x * 2).collect::<HashSet<_>>());

            let bm: BTreeMap<i64, usize> = v.iter().enumerate().map(|(i, &x)| (x, i)).collect();
            prop_assert_eq!(
                s.split(bm.par_iter()).collect::<Vec<_>>(),
                bm.iter().collect::<Vec<_>>()
            );
            let mut bm2 = bm.clone();
            s.split(bm2.par_iter_mut().enumerate()).for_each(|(i, (_, v))| *v = i);
            prop_assert!(bm2.values().copied().eq(0..bm.len()));
            prop_assert_eq!(
                s.split(bm.clone().into_par_iter()).collect::<Vec<_>>(),
                bm.into_iter().collect::<Vec<_>>()
            );

            let bs: BTreeSet<i64> = v.iter().copied().collect();
            prop_assert_eq!(s.split(bs.par_iter()).collect::<Vec<_>>(), bs.iter().collect::<Vec<_>>());
            prop_assert_eq!(
                s.split(bs.clone().into_par_iter()).rev().collect::<Vec<_>>(),
                bs.iter().rev().copied().collect::<Vec<_>>()
            );
            Ok(())
        })?;
    }

    #[test]
    fn sequences_yield_their_items_in_order(
        v in values(-1000..1000),
        front in 0usize..50,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            // a deque whose ring wraps: items pushed at the front too
            let mut d: VecDeque<i64> = v.iter().copied().collect();
            for i in 0..front as i64 {
                d.push_front(-i);
            }
            prop_assert_eq!(s.split(d.par_iter()).collect::<Vec<_>>(), d.iter().collect::<Vec<_>>());
            prop_assert_eq!(d.par_iter().len(), d.len());
            let mut d2 = d.clone();
            s.split(d2.par_iter_mut().enumerate()).for_each(|(i, x)| *x += i as i64);
            prop_assert!(d2.iter().zip(&d).enumerate().all(|(i, (a, b))| *a == b + i as i64));
            prop_assert_eq!(
                s.split(d.clone().into_par_iter().zip(d.par_iter())).map(|(a, b)| a - b).sum::<i64>(),
                0
            );

            let l: LinkedList<i64> = v.iter().copied().collect();
            prop_assert_eq!(s.split(l.par_iter()).collect::<Vec<_>>(), l.iter().collect::<Vec<_>>());
            let mut l2 = l.clone();
            s.split(l2.par_iter_mut()).for_each(|x| *x *= 3);
            prop_assert!(l2.iter().zip(&l).all(|(a, b)| *a == b * 3));
            prop_assert_eq!(s.split(l.clone().into_par_iter()).collect::<Vec<_>>(), v.clone());

            let h: BinaryHeap<i64> = v.iter().copied().collect();
            prop_assert_eq!(sorted(s.split(h.par_iter()).copied().collect()), sorted(v.clone()));
            prop_assert_eq!(sorted(s.split(h.clone().into_par_iter()).collect()), sorted(v.clone()));
            Ok(())
        })?;
    }

    #[test]
    fn options_and_results_yield_zero_or_one_item(x in proptest::option::of(-1000i64..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(s.split(x.par_iter()).collect::<Vec<_>>(), x.iter().collect::<Vec<_>>());
            prop_assert_eq!(s.split(x.into_par_iter()).collect::<Vec<_>>(), x.into_iter().collect::<Vec<_>>());
            let mut y = x;
            s.split(y.par_iter_mut()).for_each(|v| *v += 1);
            prop_assert_eq!(y, x.map(|v| v + 1));
            let r: Result<i64, String> = x.ok_or_else(|| "none".to_owned());
            prop_assert_eq!(s.split(r.par_iter()).count(), usize::from(x.is_some()));
            let mut r2 = r.clone();
            s.split(r2.par_iter_mut()).for_each(|v| *v *= 2);
            prop_assert_eq!(r2, r.clone().map(|v| v * 2));
            prop_assert_eq!(s.split(r.into_par_iter()).collect::<Vec<_>>(), x.into_iter().collect::<Vec<_>>());
            // indexed: zips with a range
            prop_assert_eq!(x.par_iter().zip(5..10).collect::<Vec<_>>(), x.iter().zip(5..10).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn owned_values_are_dropped_once(n in len(), k in 0usize..100, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let (items, drops) = tracked(n);
            let map: BTreeMap<usize, Tracked> = items.into_iter().map(|t| (t.id, t)).collect();
            let got: Vec<usize> = s.split(map.into_par_iter()).map(|(id, _)| id).take_any(k).collect();
            prop_assert_eq!(got, (0..n.min(k)).collect::<Vec<_>>());
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            let (items, drops) = tracked(n);
            let d: VecDeque<Tracked> = items.into_iter().collect();
            let found = s.split(d.into_par_iter()).find_any(|t| t.id == n / 2).map(|t| t.id);
            prop_assert_eq!(found, (n > 0).then_some(n / 2));
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            Ok(())
        })?;
    }

    #[test]
    fn par_drain_leaves_what_std_drain_leaves(
        v in values(-1000..1000),
        a in 0usize..2000,
        b in 0usize..2000,
        k in 0usize..100,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let (lo, hi) = (a.min(b).min(v.len()), a.max(b).min(v.len()));
            let (mut got, mut want) = (v.clone(), v.clone());
            prop_assert_eq!(
                s.split(got.par_drain(lo..hi)).collect::<Vec<_>>(),
                want.drain(lo..hi).collect::<Vec<_>>()
            );
            prop_assert_eq!(&got, &want);
            let (mut got, mut want) = (v.clone(), v.clone());
            prop_assert_eq!(
                s.split(got.par_drain(lo..)).rev().take(k).collect::<Vec<_>>(),
                want.drain(lo..).rev().take(k).collect::<Vec<_>>()
            );
            prop_assert_eq!(&got, &want);
            let (mut got, mut want): (VecDeque<i64>, VecDeque<i64>) =
                (v.iter().copied().collect(), v.iter().copied().collect());
            got.rotate_left(lo);
            want.rotate_left(lo);
            prop_assert_eq!(
                s.split(got.par_drain(..hi - lo)).collect::<Vec<_>>(),
                want.drain(..hi - lo).collect::<Vec<_>>()
            );
            prop_assert_eq!(&got, &want);
            let text: String = v.iter().map(|x| char::from_u32(0x41 + x.unsigned_abs() as u32 % 0x2000).unwrap_or('?')).collect();
            let chars = text.chars().count();
            let byte = |c: usize| text.char_indices().nth(c).map_or(text.len(), |(i, _)| i);
            let (bl, bh) = (byte(lo.min(chars)), byte(hi.min(chars)));
            let (mut got, mut want) = (text.clone(), text.clone());
            prop_assert_eq!(
                s.split(got.par_drain(bl..bh)).collect::<String>(),
                want.drain(bl..bh).collect::<String>()
            );
            prop_assert_eq!(&got, &want);
            let mut hm: HashMap<i64, usize> = v.iter().enumerate().map(|(i, &x)| (x, i)).collect();
            let want = sorted(hm.clone().into_iter().collect());
            prop_assert_eq!(sorted(hm.par_drain().collect()), want);
            prop_assert!(hm.is_empty());
            let mut hs: HashSet<i64> = v.iter().copied().collect();
            let want = hs.iter().sum::<i64>();
            prop_assert_eq!(hs.par_drain().sum::<i64>(), want);
            prop_assert!(hs.is_empty());
            let mut bh: BinaryHeap<i64> = v.iter().copied().collect();
            prop_assert_eq!(bh.par_drain().max(), v.iter().copied().max());
            prop_assert!(bh.is_empty());
            Ok(())
        })?;
    }

    #[test]
    fn drained_values_are_dropped_once(n in len(), a in 0usize..2000, b in 0usize..2000, k in 0usize..100, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let (mut items, drops) = tracked(n);
            let (lo, hi) = (a.min(b).min(n), a.max(b).min(n));
            // take_any stops early: what it did not take is dropped with the iterator
            let got: Vec<usize> = s.split(items.par_drain(lo..hi)).map(|t| t.id).take_any(k).collect();
            prop_assert_eq!(got.len(), (hi - lo).min(k));
            prop_assert!(got.iter().all(|id| (lo..hi).contains(id)));
            let kept: Vec<usize> = items.iter().map(|t| t.id).collect();
            prop_assert_eq!(kept, (0..lo).chain(hi..n).collect::<Vec<_>>());
            drop(items);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            Ok(())
        })?;
    }
}
