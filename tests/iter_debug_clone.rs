//! `Debug` and `Clone` on the parallel iterators' types, as rayon has them. Every type that holds
//! a program's closure is `Debug` whatever the closure: it prints its other fields (its base, a
//! `fold_with` value, a split's slice or string) and elides the closure (`Map { base: .., .. }`).
//! Every iterator whose parts are `Clone` is too, and a clone yields what the original yields:
//! adapters with a counter or flag (`take_any`, `while_some`, `panic_fuse`, ...), sources with
//! an element behind a lock (`once`, `repeat_n`), `intersperse`, `split` and the tree walks
//! (before and after their items are made), `par_bridge`, and the owned items of a `Vec` and of
//! the collections, each cloned once and dropped once (a clone that shared them would free a
//! `String` twice).
//!
//! The clones run on every shared runtime (`iter_support`: fixed teams of 1 to 4 and one whose
//! team size cycles).

mod iter_support;

use asat::iter::plumbing::Producer;
use asat::prelude::*;
use iter_support::{runtime, RUNTIMES};
use std::collections::{BinaryHeap, HashMap};
use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `it`'s `Debug` is `name { shown.., .. }`: the fields in `shown`, and the rest elided.
#[track_caller]
fn prints<T: Debug>(it: &T, name: &str, shown: &[&str]) {
    let s = format!("{it:?}");
    assert!(s.starts_with(&format!("{name} {{")), "{s}: not a {name}");
    for field in shown {
        assert!(s.contains(field), "{s}: no {field}");
    }
    assert!(s.ends_with(", .. }"), "{s}: nothing elided");
}

/// `it` and a clone of it, made before either runs, collect the same items (`want`), in order,
/// on every runtime.
#[track_caller]
fn clones_alike<I>(it: I, want: &[I::Item])
where
    I: ParallelIterator + Clone,
    I::Item: PartialEq + Debug,
{
    for rt in 0..RUNTIMES {
        let (copy, original) = (it.clone(), it.clone());
        let (a, b): (Vec<_>, Vec<_>) = runtime(rt).install(|| (copy.collect(), original.collect()));
        assert_eq!(a, want, "the clone, runtime {rt}");
        assert_eq!(b, want, "the original, runtime {rt}");
    }
}

/// As [`clones_alike`], for items in no fixed order: compared sorted.
#[track_caller]
fn clones_alike_unordered<I>(it: I, want: &[I::Item])
where
    I: ParallelIterator + Clone,
    I::Item: Ord + Clone + Debug,
{
    let mut want = want.to_vec();
    want.sort();
    for rt in 0..RUNTIMES {
        let (copy, original) = (it.clone(), it.clone());
        let (mut a, mut b): (Vec<_>, Vec<_>) =
            runtime(rt).install(|| (copy.collect(), original.collect()));
        a.sort();
        b.sort();
        assert_eq!(a, want, "the clone, runtime {rt}");
        assert_eq!(b, want, "the original, runtime {rt}");
    }
}

#[test]
fn closure_adapters_print_their_base_only() {
    let base = "base: Iter { range: 0..4 }";
    let r = || (0..4u32).into_par_iter();
    prints(&r().map(|x| x + 1), "Map", &[base]);
    prints(&r().filter(|x| x % 2 == 0), "Filter", &[base]);
    prints(&r().filter_map(|x| x.checked_sub(1)), "FilterMap", &[base]);
    prints(&r().flat_map_iter(|x| 0..x), "FlatMapIter", &[base]);
    prints(&r().flat_map(|x| 0..x), "FlatMap", &[base]);
    prints(&r().inspect(|_| {}), "Inspect", &[base]);
    prints(&r().update(|x| *x += 1), "Update", &[base]);
    prints(
        &r().map_init(Vec::<u8>::new, |_, x| x),
        "MapState",
        &[base, "InitFn(..)"],
    );
    prints(
        &r().map_with(7u8, |_, x| x),
        "MapState",
        &[base, "init: CloneOf(7)"],
    );
    prints(&r().fold(|| 0, |a, x| a + x), "Fold", &[base]);
    prints(
        &r().fold_with(9u32, |a, x| a + x),
        "FoldWith",
        &[base, "init: 9"],
    );
    prints(&r().positions(|x| x > 1), "Positions", &[base]);
    prints(&r().take_any_while(|&x| x < 2), "TakeAnyWhile", &[base]);
    prints(&r().skip_any_while(|&x| x < 2), "SkipAnyWhile", &[base]);
    let sum = |a: u32, x: u32| a + x;
    prints(
        &r().fold_chunks(2, || 0, sum),
        "FoldChunksBy",
        &[base, "Identity(..)"],
    );
    prints(
        &r().fold_chunks_with(2, 5, sum),
        "FoldChunksBy",
        &[base, "size: 2", "data: 5"],
    );
    let ok = |a: u32, x: u32| Some(a + x);
    prints(&r().try_fold(|| 0, ok), "TryFoldBy", &[base, "InitFn(..)"]);
    prints(
        &r().try_fold_with(3, ok),
        "TryFoldBy",
        &[base, "CloneOf(3)"],
    );
    // a chain of them
    let chain = r().map(|x| x * 2).filter(|x| *x > 2);
    prints(
        &chain,
        "Filter",
        &["base: Map { base: Iter { range: 0..4 }, .. }"],
    );
}

#[test]
fn splits_print_their_data_and_char_patterns() {
    let v = [1, 0, 2, 0, 3];
    let slice = "slice: [1, 0, 2, 0, 3]";
    prints(&v.par_split(|x| *x == 0), "SplitBy", &[slice]);
    prints(&v.par_split_inclusive(|x| *x == 0), "SplitBy", &[slice]);
    prints(&v.par_chunk_by(|a, b| a < b), "ChunkBy", &[slice]);
    let mut w = v;
    prints(&w.par_split_mut(|x| *x == 0), "PiecesMut", &["len: 5"]);
    prints(&w.par_chunk_by_mut(|a, b| a < b), "PiecesMut", &["len: 5"]);
    // string patterns: chars are printed, closures elided
    let s = "a,b;c";
    let by = |c: char| c == ',';
    let f = format!("{:?}", s.par_split(by));
    assert_eq!(f, r#"SplitBy { s: "a,b;c", pat: .. }"#);
    let f = format!("{:?}", s.par_split_terminator(';'));
    assert_eq!(f, r#"SplitBy { s: "a,b;c", pat: ';' }"#);
    let f = format!("{:?}", s.par_split_inclusive([',', ';']));
    assert_eq!(f, r#"SplitBy { s: "a,b;c", pat: [',', ';'] }"#);
    let f = format!("{:?}", s.par_matches(by));
    assert_eq!(f, r#"Matches { s: "a,b;c", pat: .. }"#);
    let f = format!("{:?}", s.par_match_indices(&[';'][..]));
    assert_eq!(f, r#"MatchIndices { s: "a,b;c", pat: [';'] }"#);
    assert_eq!(format!("{:?}", s.par_chars()), r#"Chars { s: "a,b;c" }"#);
    // sources of the user's function: whether their items were made
    let halves = |r: std::ops::Range<u32>| (r, None);
    prints(
        &asat::iter::split(0..4u32, halves),
        "Split",
        &["split: false"],
    );
    let kids = |n: &u32| if *n < 3 { vec![n + 1] } else { vec![] };
    prints(
        &asat::iter::walk_tree_prefix(0u32, kids),
        "WalkTreePrefix",
        &[],
    );
    prints(
        &asat::iter::walk_tree_postfix(0u32, kids),
        "WalkTreePostfix",
        &[],
    );
}

#[test]
fn sequential_sides_print_without_their_closures() {
    let v = [3u8, 1, 4, 1, 5];
    let chunks = v.par_chunk_by(|a, b| a < b);
    // SAFETY: the only range asked of this producer.
    let seq = unsafe { chunks.seq(0..5) };
    prints(&seq, "ChunkBySeq", &["slice: [3, 1, 4, 1, 5]", "end: 5"]);
    let pos = v.par_iter().positions(|x| *x == 1);
    // SAFETY: as above.
    let seq = unsafe { pos.seq(1..3) };
    prints(&seq, "PositionsSeq", &["items: Zip"]);
    assert_eq!(seq.collect::<Vec<_>>(), [1]);
    let upd = (0..3).into_par_iter().update(|x| *x *= 2);
    // SAFETY: as above.
    prints(&unsafe { upd.seq(0..3) }, "UpdateSeq", &["items: 0..3"]);
    let taking = (0..3).into_par_iter().take_any_while(|x| *x < 1);
    // SAFETY: as above.
    prints(
        &unsafe { taking.seq(0..3) },
        "TakeAnyWhileSeq",
        &["taking: true"],
    );
}

#[test]
fn closure_adapters_clone() {
    let v: Vec<u32> = (0..100).collect();
    let want: Vec<u32> = v.iter().map(|x| x * 3).collect();
    clones_alike(v.par_iter().map(|x| x * 3), &want);
    let want: Vec<u32> = v.iter().map(|x| x * 3).filter(|x| x % 2 == 0).collect();
    clones_alike(v.par_iter().map(|x| x * 3).filter(|x| x % 2 == 0), &want);
    let want: Vec<usize> = (0..100).filter(|i| i % 7 == 0).collect();
    clones_alike(v.par_iter().positions(|x| x % 7 == 0), &want);
    let want: Vec<u32> = v.iter().flat_map(|&x| 0..x % 3).collect();
    clones_alike(
        v.par_iter().flat_map(|&x| (0..x % 3).into_par_iter()),
        &want,
    );
    let want: Vec<u32> = v.iter().map(|x| x + 2).collect();
    clones_alike(v.par_iter().map_with(2, |k, x| x + *k), &want);
    clones_alike(v.par_iter().map_init(|| 2, |k, x| x + *k), &want);
    // one accumulator per range: how many depends on the team, their sum does not
    let folds = v.par_iter().fold_with(0, |a, x| a + x);
    let (a, b): (u32, u32) = (folds.clone().sum(), folds.sum());
    assert_eq!((a, b), (4950, 4950));
}

#[test]
fn counters_and_flags_start_fresh_in_a_clone() {
    let v: Vec<u32> = (0..100).collect();
    let first: Vec<u32> = (0..10).collect();
    clones_alike(v.par_iter().copied().take_any(10), &first);
    clones_alike(v.par_iter().copied().skip_any(90), &v[90..]);
    // unindexed: which items depends on timing, how many does not
    let evens = v.par_iter().filter(|x| *x % 2 == 0);
    let it = evens.clone().take_any(10);
    assert_eq!((it.clone().count(), it.count()), (10, 10));
    let it = evens.skip_any(10);
    assert_eq!((it.clone().count(), it.count()), (40, 40));
    let some = |x: &u32| if *x < 100 { Some(*x) } else { None };
    clones_alike(v.par_iter().map(some).while_some(), &v);
    clones_alike(v.par_iter().copied().take_any_while(|x| *x < 1000), &v);
    clones_alike(v.par_iter().copied().skip_any_while(|x| *x > 1000), &v);
    clones_alike(v.par_iter().copied().panic_fuse(), &v);
}

#[test]
fn chunk_folds_clone_with_their_value() {
    let want: Vec<u32> = (0..10u32)
        .collect::<Vec<_>>()
        .chunks(3)
        .map(|c| c.iter().sum())
        .collect();
    clones_alike(
        (0..10u32)
            .into_par_iter()
            .fold_chunks(3, || 0, |a, x| a + x),
        &want,
    );
    let tagged = |mut s: String, x: u32| {
        s.push_str(&x.to_string());
        s
    };
    let want = [">012", ">345", ">6"].map(String::from);
    clones_alike(
        (0..7)
            .into_par_iter()
            .fold_chunks_with(3, ">".to_owned(), tagged),
        &want,
    );
}

#[test]
fn sources_clone_their_element() {
    clones_alike(asat::iter::once("one".to_owned()), &["one".to_owned()]);
    clones_alike(
        asat::iter::repeat_n("ab".to_owned(), 5),
        &vec!["ab".to_owned(); 5],
    );
    clones_alike(asat::iter::repeat('x').take_any(4), &['x'; 4]);
    clones_alike(asat::iter::repeat(7).zip(0..3), &[(7, 0), (7, 1), (7, 2)]);
    clones_alike(asat::iter::empty::<String>(), &[]);
    let lines = ["a", "b", "c"].map(String::from).to_vec();
    clones_alike_unordered(lines.clone().into_iter().par_bridge(), &lines);
}

#[test]
fn intersperse_clones_its_separator_and_gathered_items() {
    let sep = || "-".to_owned();
    let words = ["a", "b", "c"].map(String::from).to_vec();
    let want = ["a", "-", "b", "-", "c"].map(String::from);
    clones_alike(words.clone().into_par_iter().intersperse(sep()), &want);
    // unindexed: the base's items are gathered at the first call
    let unindexed = || words.clone().into_par_iter().filter(|w| w != "b");
    let want = ["a", "-", "c"].map(String::from);
    clones_alike(unindexed().intersperse(sep()), &want);
    // gathered (by asking for the length), then cloned
    let gathered = unindexed().intersperse(sep());
    assert_eq!(gathered.base_len(), 3);
    clones_alike(gathered, &want);
}

#[test]
fn splits_and_walks_clone_before_and_after_their_items_are_made() {
    let halves = |r: std::ops::Range<u32>| {
        if r.len() <= 4 {
            (r, None)
        } else {
            let mid = r.start + r.len() as u32 / 2;
            (r.start..mid, Some(mid..r.end))
        }
    };
    // how many pieces depends on the team (and on timing), their items in order do not
    let want: Vec<u32> = (0..64).collect();
    clones_alike(
        asat::iter::split(0..64u32, halves).flat_map_iter(|r| r),
        &want,
    );
    // made (by asking for the length), then cloned: the clone has the pieces
    let made = asat::iter::split(0..64u32, halves);
    let n = made.base_len();
    assert!(format!("{made:?}").contains("split: true"));
    let copy = made.clone();
    let (a, b): (Vec<_>, Vec<_>) = (copy.collect(), made.collect());
    assert_eq!((a.len(), b.len()), (n, n));
    assert_eq!(a, b);

    let kids = |n: &u32| {
        if *n < 3 {
            vec![2 * n + 1, 2 * n + 2]
        } else {
            vec![]
        }
    };
    let want = [0, 1, 3, 4, 2, 5, 6];
    clones_alike(asat::iter::walk_tree_prefix(0u32, kids), &want);
    let want = [3, 4, 1, 5, 6, 2, 0];
    clones_alike(asat::iter::walk_tree_postfix(0u32, kids), &want);
    let walk = asat::iter::walk_tree_postfix(0u32, kids);
    assert_eq!(walk.base_len(), 7);
    clones_alike(walk, &want);
}

#[test]
fn owned_items_are_cloned_once_and_dropped_once() {
    let words: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
    clones_alike(words.clone().into_par_iter(), &words);
    let heap: BinaryHeap<String> = words.iter().cloned().collect();
    clones_alike_unordered(heap.into_par_iter(), &words);
    let map: HashMap<u32, String> = (0..100).map(|i| (i, format!("v{i}"))).collect();
    let want: Vec<(&u32, &String)> = map.iter().collect();
    clones_alike_unordered(map.par_iter(), &want);
    clones_alike(
        [1, 2, 3].map(|i| i.to_string()).into_par_iter(),
        &["1", "2", "3"].map(String::from),
    );

    // every clone counted, every drop counted: a clone that copied the items bitwise would
    // clone none and drop each twice
    let clones = Arc::new(AtomicUsize::new(0));
    let drops = Arc::new(AtomicUsize::new(0));
    let items: Vec<Counted> = (0..500).map(|i| Counted::new(i, &clones, &drops)).collect();
    let it = items.into_par_iter();
    let copy = it.clone();
    assert_eq!(clones.load(Ordering::SeqCst), 500);
    // part of the clone only: the rest is dropped with the iterator
    let firsts: Vec<Counted> = copy.take(100).collect();
    let all: Vec<Counted> = it.collect();
    assert_eq!(
        firsts.iter().map(|c| c.id).collect::<Vec<_>>(),
        (0..100).collect::<Vec<_>>()
    );
    assert_eq!(all.len(), 500);
    assert_eq!(
        (firsts[7].name.as_str(), all[499].name.as_str()),
        ("item 7", "item 499")
    );
    assert_eq!(drops.load(Ordering::SeqCst), 400);
    drop((firsts, all));
    assert_eq!(drops.load(Ordering::SeqCst), 1000);
}

/// An item that counts its clones and drops.
#[derive(Debug)]
struct Counted {
    id: usize,
    name: String,
    clones: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

impl Counted {
    fn new(id: usize, clones: &Arc<AtomicUsize>, drops: &Arc<AtomicUsize>) -> Self {
        Counted {
            id,
            name: format!("item {id}"),
            clones: clones.clone(),
            drops: drops.clone(),
        }
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        self.clones.fetch_add(1, Ordering::SeqCst);
        Counted::new(self.id, &self.clones, &self.drops)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}
