//! rayon's type paths under asat: each type a rayon program may name (in a `type Iter = ...` of
//! its own `IntoParallelIterator`, a field, a return type) exists at the same path with `rayon`
//! replaced by `asat`, with the same generic parameters, and is the type the method or source
//! returns. Each `let _: T = expr;` below fails to compile if it is not; the calls then run, so
//! that the types also do what they are named for.

use asat::prelude::*;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};

/// A user's collection that lends its items as a parallel iterator through rayon's type names,
/// as libraries built on rayon do.
struct Grid {
    cells: Vec<f64>,
    width: usize,
}

impl<'a> IntoParallelIterator for &'a Grid {
    type Iter = asat::slice::Chunks<'a, f64>;
    type Item = &'a [f64];

    fn into_par_iter(self) -> Self::Iter {
        self.cells.par_chunks(self.width)
    }
}

/// A user's type whose parallel iterator is a named chain of adapters.
struct Doubled(Vec<u32>);

impl<'a> IntoParallelIterator for &'a Doubled {
    type Iter = asat::iter::Map<asat::slice::Iter<'a, u32>, fn(&u32) -> u32>;
    type Item = u32;

    fn into_par_iter(self) -> Self::Iter {
        self.0.par_iter().map(|x| 2 * x)
    }
}

impl IntoParallelIterator for Doubled {
    type Iter = asat::iter::Map<asat::vec::IntoIter<u32>, fn(u32) -> u32>;
    type Item = u32;

    fn into_par_iter(self) -> Self::Iter {
        self.0.into_par_iter().map(|x| 2 * x)
    }
}

#[test]
fn user_types_name_their_iterators_as_in_rayon() {
    let grid = Grid {
        cells: (0..12).map(f64::from).collect(),
        width: 4,
    };
    let rows: Vec<f64> = (&grid).into_par_iter().map(|r| r.iter().sum()).collect();
    assert_eq!(rows, [6.0, 22.0, 38.0]);
    let d = Doubled(vec![1, 2, 3]);
    assert_eq!((&d).into_par_iter().sum::<u32>(), 12);
    assert_eq!(d.into_par_iter().collect::<Vec<_>>(), [2, 4, 6]);
}

#[test]
fn adapters_are_the_types_rayon_names() {
    use asat::iter::*;
    let v: Vec<u32> = (0..100).collect();
    let w: Vec<u32> = (100..200).collect();
    let nested: Vec<Vec<u32>> = vec![vec![1, 2], vec![3]];
    let s = v.par_iter();
    type It<'a> = asat::slice::Iter<'a, u32>;

    let _: Map<It<'_>, _> = s.clone().map(|x| x + 1);
    let _: MapInit<It<'_>, _, _> = s.clone().map_init(|| 0u32, |a, x| *a + x);
    let _: MapWith<It<'_>, u32, _> = s.clone().map_with(0u32, |a, x| *a + x);
    let _: Filter<It<'_>, _> = s.clone().filter(|x| **x > 3);
    let _: FilterMap<It<'_>, _> = s.clone().filter_map(|x| Some(*x));
    let _: FlatMap<It<'_>, _> = s.clone().flat_map(|x| vec![*x]);
    let _: FlatMapIter<It<'_>, _> = s.clone().flat_map_iter(|x| vec![*x]);
    let f: Flatten<asat::slice::Iter<'_, Vec<u32>>> = nested.par_iter().flatten();
    assert_eq!(f.count(), 3);
    let f: FlattenIter<asat::slice::Iter<'_, Vec<u32>>> = nested.par_iter().flatten_iter();
    assert_eq!(f.count(), 3);
    let _: Inspect<It<'_>, _> = s.clone().inspect(|_| ());
    let _: Update<asat::slice::IterMut<'_, u32>, _> = [1u32].par_iter_mut().update(|_| ());
    let _: Cloned<It<'_>> = s.clone().cloned();
    let c: Copied<It<'_>> = s.clone().copied();
    let _: Chain<Copied<It<'_>>, asat::range::Iter<u32>> = c.chain(0..3u32);
    let _: Fold<It<'_>, _, _> = s.clone().fold(|| 0u32, |a, x| a + x);
    let _: FoldWith<It<'_>, u32, _> = s.clone().fold_with(0u32, |a, x| a + x);
    let _: TryFold<It<'_>, Option<u32>, _, _> =
        s.clone().try_fold(|| 0u32, |a, x| a.checked_add(*x));
    let _: TryFoldWith<It<'_>, Option<u32>, _> =
        s.clone().try_fold_with(0u32, |a, x| a.checked_add(*x));
    let _: WhileSome<asat::vec::IntoIter<Option<u32>>> =
        vec![Some(1u32)].into_par_iter().while_some();
    let _: TakeAny<It<'_>> = s.clone().take_any(3);
    let _: SkipAny<It<'_>> = s.clone().skip_any(3);
    let _: TakeAnyWhile<It<'_>, _> = s.clone().take_any_while(|x| **x < 3);
    let _: SkipAnyWhile<It<'_>, _> = s.clone().skip_any_while(|x| **x < 3);
    let _: Intersperse<It<'_>> = s.clone().intersperse(&0);
    let _: PanicFuse<It<'_>> = s.clone().panic_fuse();

    let z: Zip<It<'_>, It<'_>> = s.clone().zip(&w);
    assert_eq!(z.count(), 100);
    let _: ZipEq<It<'_>, It<'_>> = s.clone().zip_eq(&w);
    let _: Enumerate<It<'_>> = s.clone().enumerate();
    let _: Rev<It<'_>> = s.clone().rev();
    let _: StepBy<It<'_>> = s.clone().step_by(3);
    let t: Take<It<'_>> = s.clone().take(7);
    assert_eq!(t.count(), 7);
    let k: Skip<It<'_>> = s.clone().skip(7);
    assert_eq!(k.count(), 93);
    let _: MinLen<It<'_>> = s.clone().with_min_len(8);
    let _: MaxLen<It<'_>> = s.clone().with_max_len(8);
    let _: UniformBlocks<It<'_>> = s.clone().by_uniform_blocks(8);
    let _: ExponentialBlocks<It<'_>> = s.clone().by_exponential_blocks();
    let _: Positions<It<'_>, _> = s.clone().positions(|x| *x % 2 == 0);
    let ch: Chunks<It<'_>> = s.clone().chunks(10);
    assert_eq!(ch.count(), 10);
    let _: FoldChunks<It<'_>, _, _> = s.clone().fold_chunks(4, || 0u32, |a, x| a + x);
    let _: FoldChunksWith<It<'_>, u32, _> = s.clone().fold_chunks_with(4, 0u32, |a, x| a + x);
    let _: Interleave<It<'_>, It<'_>> = s.clone().interleave(&w);
    let _: InterleaveShortest<It<'_>, It<'_>> = s.clone().interleave_shortest(&w);
    let m: MultiZip<(It<'_>, It<'_>)> = (&v, &w).into_par_iter();
    assert_eq!(m.map(|(a, b)| a + b).max(), Some(298));
    let _: IterBridge<std::ops::Range<u32>> = (0..3u32).par_bridge();
    let _: Either<u32, u32> = Either::Left(1);
}

#[test]
fn sources_are_the_types_rayon_names() {
    let e: asat::iter::Empty<u32> = asat::iter::empty();
    let o: asat::iter::Once<u32> = asat::iter::once(3);
    let r: asat::iter::Repeat<u32> = asat::iter::repeat(1);
    let n: asat::iter::RepeatN<u32> = asat::iter::repeat_n(1, 4);
    assert_eq!(e.chain(o).count() + r.take(2).count() + n.count(), 7);

    let _: asat::range::Iter<u64> = (0..10u64).into_par_iter();
    let ri: asat::range_inclusive::Iter<u8> = (0..=255u8).into_par_iter();
    assert_eq!(ri.count(), 256);
    let _: asat::vec::IntoIter<u32> = vec![1u32].into_par_iter();
    let mut v = vec![1u32, 2, 3];
    let d: asat::vec::Drain<'_, u32> = v.par_drain(1..);
    assert_eq!(d.sum::<u32>(), 5);
    let a: asat::array::IntoIter<u32, 3> = [1u32, 2, 3].into_par_iter();
    assert_eq!(a.sum::<u32>(), 6);
    let mut s = String::from("héllo");
    let sd: asat::string::Drain<'_> = s.par_drain(..3);
    assert_eq!(sd.collect::<String>(), "hé");

    let mut opt = Some(4u32);
    let _: asat::option::Iter<'_, u32> = opt.par_iter();
    let _: asat::option::IterMut<'_, u32> = opt.par_iter_mut();
    let _: asat::option::IntoIter<u32> = opt.into_par_iter();
    let mut res: Result<u32, ()> = Ok(4);
    let _: asat::result::Iter<'_, u32> = res.par_iter();
    let _: asat::result::IterMut<'_, u32> = res.par_iter_mut();
    let _: asat::result::IntoIter<u32> = res.into_par_iter();

    let text = "a b\nc";
    let _: asat::str::Chars<'_> = text.par_chars();
    let _: asat::str::CharIndices<'_> = text.par_char_indices();
    let _: asat::str::Bytes<'_> = text.par_bytes();
    let _: asat::str::Lines<'_> = text.par_lines();
    let _: asat::str::SplitWhitespace<'_> = text.par_split_whitespace();
    let sp: asat::str::Split<'_, char> = text.par_split(' ');
    assert_eq!(sp.count(), 2);

    let sl = [1u32, 2, 3, 4];
    let _: asat::slice::Windows<'_, u32> = sl.par_windows(2);
    let _: asat::slice::ChunksExact<'_, u32> = sl.par_chunks_exact(2);
    let _: asat::slice::RChunks<'_, u32> = sl.par_rchunks(2);
    let _: asat::slice::Split<'_, u32, _> = sl.par_split(|x| *x == 2);
    let mut sm = [1u32, 2, 3, 4];
    let _: asat::slice::ChunksMut<'_, u32> = sm.par_chunks_mut(2);
}

#[test]
fn collections_iterate_through_rayon_names() {
    use asat::collections::*;
    let mut hm: HashMap<u32, u32> = (0..10).map(|i| (i, i)).collect();
    let _: hash_map::Iter<'_, u32, u32> = hm.par_iter();
    let _: hash_map::IterMut<'_, u32, u32> = hm.par_iter_mut();
    let dr: hash_map::Drain<'_, u32, u32> = hm.clone().par_drain();
    assert_eq!(dr.count(), 10);
    let _: hash_map::IntoIter<u32, u32> = hm.into_par_iter();
    let mut hs: HashSet<u32> = (0..10).collect();
    let _: hash_set::Iter<'_, u32> = hs.par_iter();
    let _: hash_set::Drain<'_, u32> = hs.par_drain();
    let _: hash_set::IntoIter<u32> = hs.into_par_iter();
    let bm: BTreeMap<u32, u32> = (0..10).map(|i| (i, i)).collect();
    let _: btree_map::Iter<'_, u32, u32> = bm.par_iter();
    let _: btree_map::IntoIter<u32, u32> = bm.into_par_iter();
    let bs: BTreeSet<u32> = (0..10).collect();
    let _: btree_set::Iter<'_, u32> = bs.par_iter();
    let _: btree_set::IntoIter<u32> = bs.into_par_iter();
    let mut bh: BinaryHeap<u32> = (0..10).collect();
    let _: binary_heap::Iter<'_, u32> = bh.par_iter();
    let _: binary_heap::Drain<'_, u32> = bh.par_drain();
    let _: binary_heap::IntoIter<u32> = bh.into_par_iter();
    let mut ll: LinkedList<u32> = (0..10).collect();
    let _: linked_list::Iter<'_, u32> = ll.par_iter();
    let _: linked_list::IterMut<'_, u32> = ll.par_iter_mut();
    let _: linked_list::IntoIter<u32> = ll.into_par_iter();
    let mut vd: VecDeque<u32> = (0..10).collect();
    let it: vec_deque::Iter<'_, u32> = vd.par_iter();
    assert_eq!(it.sum::<u32>(), 45);
    let _: vec_deque::IterMut<'_, u32> = vd.par_iter_mut();
    let _: vec_deque::Drain<'_, u32> = vd.par_drain(..5);
    let _: vec_deque::IntoIter<u32> = vd.into_par_iter();
}
