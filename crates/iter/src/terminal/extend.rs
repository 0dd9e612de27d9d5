//! `par_extend`: a collection extended with a parallel iterator's items, in order.
//!
//! A `Vec` is extended in place as [`collect`](crate::ParallelIterator::collect) fills one: an
//! indexed iterator's items are written straight into the reserved spare capacity by the members
//! that make them, others are gathered range by range and appended in index order. Other
//! collections are extended from the in-order `Vec` of the items.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hash};

use either::Either;

use crate::terminal::collect::extend_vec;
use crate::{IntoParallelIterator, ParallelIterator};

/// A collection that can be extended with a parallel iterator's items, as rayon's
/// `ParallelExtend`.
///
/// ```
/// use asat_iter::prelude::*;
///
/// let mut v = vec![0, 1];
/// v.par_extend((2..1000).into_par_iter().filter(|i| i % 2 == 0));
/// v.par_extend(&[7, 8]);
/// assert_eq!(v[..4], [0, 1, 2, 4]);
/// assert_eq!(v[v.len() - 2..], [7, 8]);
/// ```
pub trait ParallelExtend<T: Send> {
    /// Appends the items of `par_iter` (in order, for ordered collections).
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>;
}

impl<T: Send> ParallelExtend<T> for Vec<T> {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        extend_vec(par_iter.into_par_iter(), self);
    }
}

impl<'a, T: Copy + Send + Sync + 'a> ParallelExtend<&'a T> for Vec<T> {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = &'a T>,
    {
        extend_vec(par_iter.into_par_iter().copied(), self);
    }
}

/// Collections extended from the in-order `Vec` of the items.
macro_rules! via_vec {
    ($(impl<$($l:lifetime,)* $($g:ident),*> for $c:ty where [$($b:tt)*] item $t:ty;)*) => {$(
        impl<$($l,)* $($g),*> ParallelExtend<$t> for $c
        where
            $($b)*
        {
            fn par_extend<I>(&mut self, par_iter: I)
            where
                I: IntoParallelIterator<Item = $t>,
            {
                let mut items = Vec::new();
                extend_vec(par_iter.into_par_iter(), &mut items);
                self.extend(items);
            }
        }
    )*};
}

via_vec! {
    impl<T> for VecDeque<T> where [T: Send] item T;
    impl<T> for LinkedList<T> where [T: Send] item T;
    impl<T> for BTreeSet<T> where [T: Send + Ord] item T;
    impl<K, V> for BTreeMap<K, V> where [K: Send + Ord, V: Send] item (K, V);
    impl<T, S> for HashSet<T, S> where [T: Send + Eq + Hash, S: BuildHasher] item T;
    impl<K, V, S> for HashMap<K, V, S>
        where [K: Send + Eq + Hash, V: Send, S: BuildHasher] item (K, V);
    impl<> for String where [] item char;
    impl<> for String where [] item String;
    impl<T> for BinaryHeap<T> where [T: Send + Ord] item T;
    impl<'a, T> for BinaryHeap<T> where [T: 'a + Copy + Send + Sync + Ord] item &'a T;
    impl<'a, T> for LinkedList<T> where [T: 'a + Copy + Send + Sync] item &'a T;
    impl<'a, T> for BTreeSet<T> where [T: 'a + Copy + Send + Sync + Ord] item &'a T;
    impl<'a, T, S> for HashSet<T, S>
        where [T: 'a + Copy + Send + Sync + Eq + Hash, S: BuildHasher] item &'a T;
    impl<'a, K, V> for BTreeMap<K, V>
        where [K: 'a + Copy + Send + Sync + Ord, V: 'a + Copy + Send + Sync] item (&'a K, &'a V);
    impl<'a, K, V, S> for HashMap<K, V, S>
        where [K: 'a + Copy + Send + Sync + Eq + Hash, V: 'a + Copy + Send + Sync, S: BuildHasher]
        item (&'a K, &'a V);
    impl<> for String where [] item Box<str>;
    impl<'a,> for String where [] item Cow<'a, str>;
    impl<'a,> for OsString where [] item &'a OsStr;
    impl<> for OsString where [] item OsString;
    impl<'a,> for OsString where [] item Cow<'a, OsStr>;
}

impl<'a> ParallelExtend<&'a str> for String {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = &'a str>,
    {
        let mut items = Vec::new();
        extend_vec(par_iter.into_par_iter(), &mut items);
        self.extend(items);
    }
}

impl<'a> ParallelExtend<&'a char> for String {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = &'a char>,
    {
        self.par_extend(par_iter.into_par_iter().copied());
    }
}

impl<'a, T: Copy + Send + Sync + 'a> ParallelExtend<&'a T> for VecDeque<T> {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = &'a T>,
    {
        self.par_extend(par_iter.into_par_iter().copied());
    }
}

/// Runs the iterator for its effects, as rayon's `()` does.
impl ParallelExtend<()> for () {
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = ()>,
    {
        par_iter.into_par_iter().for_each(drop);
    }
}

/// Extends two collections with the pairs' first and second values, each in order (rayon's
/// tuple `par_extend`).
impl<L, R, A, B> ParallelExtend<(L, R)> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + ParallelExtend<L>,
    B: Send + ParallelExtend<R>,
{
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = (L, R)>,
    {
        let (l, r): (Vec<L>, Vec<R>) = par_iter.into_par_iter().unzip();
        self.0.par_extend(l);
        self.1.par_extend(r);
    }
}

/// Extends `A` with the `Left` values and `B` with the `Right` values, each in order.
impl<L, R, A, B> ParallelExtend<Either<L, R>> for (A, B)
where
    L: Send,
    R: Send,
    A: Send + ParallelExtend<L>,
    B: Send + ParallelExtend<R>,
{
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = Either<L, R>>,
    {
        let (l, r): (Vec<L>, Vec<R>) = par_iter.into_par_iter().partition_map(|x| x);
        self.0.par_extend(l);
        self.1.par_extend(r);
    }
}

/// Extends the collection an `Either` holds, whichever side it is (rayon's `Either`
/// `par_extend`).
impl<T, L, R> ParallelExtend<T> for Either<L, R>
where
    T: Send,
    L: ParallelExtend<T>,
    R: ParallelExtend<T>,
{
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>,
    {
        match self {
            Either::Left(l) => l.par_extend(par_iter),
            Either::Right(r) => r.par_extend(par_iter),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeSet, HashMap, LinkedList, VecDeque};

    use crate::internal::testing::on_every_team;
    use crate::prelude::*;
    use either::Either;

    #[test]
    fn collections_are_extended_in_order() {
        on_every_team(|k| {
            let mut v = vec![7usize, 8];
            v.par_extend(0..1000);
            v.par_extend((0..1000usize).into_par_iter().filter(|i| i % 7 == 0));
            v.par_extend(&[1usize, 2, 3]);
            let want: Vec<usize> = [7, 8]
                .into_iter()
                .chain(0..1000)
                .chain((0..1000).filter(|i| i % 7 == 0))
                .chain([1, 2, 3])
                .collect();
            assert_eq!(v, want, "team {k}");
            let mut d: VecDeque<usize> = VecDeque::from([1]);
            d.par_extend((0..100usize).into_par_iter().rev());
            assert!(d.iter().copied().eq([1].into_iter().chain((0..100).rev())));
            let mut l = LinkedList::new();
            l.par_extend(0..10);
            assert!(l.iter().copied().eq(0..10));
            let mut s = BTreeSet::new();
            s.par_extend((0..100).into_par_iter().map(|i| i % 10));
            assert!(s.iter().copied().eq(0..10));
            let mut m: HashMap<usize, usize> = HashMap::new();
            m.par_extend((0..100usize).into_par_iter().map(|i| (i, i * i)));
            assert_eq!((m.len(), m[&9]), (100, 81));
            let mut t = String::from(">");
            t.par_extend(vec!["a", "b", "c"]);
            t.par_extend(vec!['x', 'y']);
            t.par_extend(vec![String::from("!")]);
            assert_eq!(t, ">abcxy!");
            let mut unit = ();
            unit.par_extend((0..10).into_par_iter().map(|_| ()));
            let mut left: Either<Vec<usize>, BTreeSet<usize>> = Either::Left(vec![9]);
            left.par_extend(0..3);
            let mut right: Either<Vec<usize>, BTreeSet<usize>> = Either::Right(BTreeSet::new());
            right.par_extend((0..30usize).into_par_iter().map(|i| i % 3));
            assert_eq!(left, Either::Left(vec![9, 0, 1, 2]));
            assert_eq!(right, Either::Right(BTreeSet::from([0, 1, 2])));
        });
    }
}
