//! `into_par_iter`, `par_iter` and `par_iter_mut` on std's collections, `Option` and `Result`,
//! where rayon has them, with rayon's item types.
//!
//! - `VecDeque`: by reference, its two slices chained (indexed, no copy); by value, moved into
//!   a `Vec` (no copy when the ring does not wrap) and its items moved out.
//! - `Option` and `Result` (the `Ok` value): by reference, a slice of zero or one item; by
//!   value, a `Vec` of zero or one item. Indexed.
//! - `HashMap`, `HashSet`, `BTreeMap`, `BTreeSet`, `LinkedList`, `BinaryHeap`: these cannot be
//!   split in place, so the calling thread first gathers the items (references for `par_iter`
//!   and `par_iter_mut`, values for `into_par_iter`) into a `Vec`, which the call then splits
//!   as any `Vec`: an O(n) sequential pass and an allocation of n items before the parallel
//!   part, as rayon does for these. (A `BinaryHeap` by reference lends its backing slice
//!   instead, and by value gives up its `Vec`.) Items come in the collection's own iteration
//!   order (arbitrary for hash maps and heaps, as in rayon).
//!
//! The iterator types are named as rayon's (`hash_map::Iter`, ...) in the submodules here,
//! with those of arrays by value (`array::IntoIter`) and of `String::par_drain`
//! (`string::Drain`); the `Drain` types are what [`par_drain`](crate::drain) returns. `option`,
//! `result`, `array` and `string` are also at the crate's root, as in rayon.

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};

use crate::iter::chain::Chain;
use crate::IntoParallelIterator;

/// Declares `IntoParallelIterator` for `$coll` and references to it through a `Vec` of its
/// items (`$item` for each way of iterating, `$method` the sequential iterator that gathers
/// them).
macro_rules! via_vec {
    ($(impl<$($g:tt),*> for $coll:ty, $method:ident => $item:ty;)*) => {$(
        impl<$($g),*> IntoParallelIterator for $coll
        where
            $item: Send,
        {
            type Iter = crate::source::vec::IntoIter<$item>;
            type Item = $item;

            fn into_par_iter(self) -> Self::Iter {
                self.$method().collect::<Vec<_>>().into_par_iter()
            }
        }
    )*};
}

via_vec! {
    impl<K, V, S> for HashMap<K, V, S>, into_iter => (K, V);
    impl<'a, K, V, S> for &'a HashMap<K, V, S>, iter => (&'a K, &'a V);
    impl<'a, K, V, S> for &'a mut HashMap<K, V, S>, iter_mut => (&'a K, &'a mut V);
    impl<T, S> for HashSet<T, S>, into_iter => T;
    impl<'a, T, S> for &'a HashSet<T, S>, iter => &'a T;
    impl<K, V> for BTreeMap<K, V>, into_iter => (K, V);
    impl<'a, K, V> for &'a BTreeMap<K, V>, iter => (&'a K, &'a V);
    impl<'a, K, V> for &'a mut BTreeMap<K, V>, iter_mut => (&'a K, &'a mut V);
    impl<T> for BTreeSet<T>, into_iter => T;
    impl<'a, T> for &'a BTreeSet<T>, iter => &'a T;
    impl<T> for LinkedList<T>, into_iter => T;
    impl<'a, T> for &'a LinkedList<T>, iter => &'a T;
    impl<'a, T> for &'a mut LinkedList<T>, iter_mut => &'a mut T;
}

/// The parallel iterators of a `HashMap`: `(K, V)`, `(&K, &V)`, `(&K, &mut V)`.
pub mod hash_map {
    /// By value.
    pub type IntoIter<K, V> = crate::source::vec::IntoIter<(K, V)>;
    /// By reference.
    pub type Iter<'a, K, V> = crate::source::vec::IntoIter<(&'a K, &'a V)>;
    /// By mutable reference.
    pub type IterMut<'a, K, V> = crate::source::vec::IntoIter<(&'a K, &'a mut V)>;
    /// `par_drain`: the drained items, gathered first.
    pub type Drain<'a, K, V> = crate::source::vec::IntoIter<(K, V)>;
}

/// The parallel iterators of a `HashSet`: `T`, `&T`.
pub mod hash_set {
    /// By value.
    pub type IntoIter<T> = crate::source::vec::IntoIter<T>;
    /// By reference.
    pub type Iter<'a, T> = crate::source::vec::IntoIter<&'a T>;
    /// `par_drain`: the drained items, gathered first.
    pub type Drain<'a, T> = crate::source::vec::IntoIter<T>;
}

/// The parallel iterators of a `BTreeMap`: `(K, V)`, `(&K, &V)`, `(&K, &mut V)`, in key order.
pub mod btree_map {
    /// By value.
    pub type IntoIter<K, V> = crate::source::vec::IntoIter<(K, V)>;
    /// By reference.
    pub type Iter<'a, K, V> = crate::source::vec::IntoIter<(&'a K, &'a V)>;
    /// By mutable reference.
    pub type IterMut<'a, K, V> = crate::source::vec::IntoIter<(&'a K, &'a mut V)>;
}

/// The parallel iterators of a `BTreeSet`: `T`, `&T`, in order.
pub mod btree_set {
    /// By value.
    pub type IntoIter<T> = crate::source::vec::IntoIter<T>;
    /// By reference.
    pub type Iter<'a, T> = crate::source::vec::IntoIter<&'a T>;
}

/// The parallel iterators of a `LinkedList`: `T`, `&T`, `&mut T`, in order.
pub mod linked_list {
    /// By value.
    pub type IntoIter<T> = crate::source::vec::IntoIter<T>;
    /// By reference.
    pub type Iter<'a, T> = crate::source::vec::IntoIter<&'a T>;
    /// By mutable reference.
    pub type IterMut<'a, T> = crate::source::vec::IntoIter<&'a mut T>;
}

/// The parallel iterators of a `BinaryHeap`: `T` and `&T`, in the heap's own order.
pub mod binary_heap {
    /// By value: the heap's `Vec`, its items moved out.
    pub type IntoIter<T> = crate::source::vec::IntoIter<T>;
    /// By reference: the heap's backing slice.
    pub type Iter<'a, T> = crate::source::slice::Iter<'a, T>;
    /// `par_drain`: the drained items, gathered first.
    pub type Drain<'a, T> = crate::source::vec::IntoIter<T>;
}

impl<T: Ord + Send> IntoParallelIterator for BinaryHeap<T> {
    type Iter = binary_heap::IntoIter<T>;
    type Item = T;

    fn into_par_iter(self) -> Self::Iter {
        self.into_vec().into_par_iter()
    }
}

impl<'a, T: Ord + Sync> IntoParallelIterator for &'a BinaryHeap<T> {
    type Iter = binary_heap::Iter<'a, T>;
    type Item = &'a T;

    fn into_par_iter(self) -> Self::Iter {
        self.as_slice().into_par_iter()
    }
}

/// The parallel iterators of a `VecDeque`: `T`, `&T`, `&mut T`, in order; indexed.
pub mod vec_deque {
    use crate::iter::chain::Chain;
    use crate::source::slice;

    /// By value: moved into a `Vec`, its items moved out.
    pub type IntoIter<T> = crate::source::vec::IntoIter<T>;
    /// By reference: the deque's two slices, chained.
    pub type Iter<'a, T> = Chain<slice::Iter<'a, T>, slice::Iter<'a, T>>;
    /// By mutable reference: the deque's two slices, chained.
    pub type IterMut<'a, T> = Chain<slice::IterMut<'a, T>, slice::IterMut<'a, T>>;
    /// `par_drain(range)`: the drained items, gathered first.
    pub type Drain<'a, T> = crate::source::vec::IntoIter<T>;
}

impl<T: Send> IntoParallelIterator for VecDeque<T> {
    type Iter = vec_deque::IntoIter<T>;
    type Item = T;

    fn into_par_iter(self) -> Self::Iter {
        Vec::from(self).into_par_iter()
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a VecDeque<T> {
    type Iter = vec_deque::Iter<'a, T>;
    type Item = &'a T;

    fn into_par_iter(self) -> Self::Iter {
        let (a, b) = self.as_slices();
        Chain {
            a: a.into_par_iter(),
            b: b.into_par_iter(),
        }
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut VecDeque<T> {
    type Iter = vec_deque::IterMut<'a, T>;
    type Item = &'a mut T;

    fn into_par_iter(self) -> Self::Iter {
        let (a, b) = self.as_mut_slices();
        Chain {
            a: a.into_par_iter(),
            b: b.into_par_iter(),
        }
    }
}

/// The parallel iterators of an `Option`: zero or one item, indexed.
pub mod option {
    /// By value.
    pub type IntoIter<T> = crate::source::vec::IntoIter<T>;
    /// By reference.
    pub type Iter<'a, T> = crate::source::slice::Iter<'a, T>;
    /// By mutable reference.
    pub type IterMut<'a, T> = crate::source::slice::IterMut<'a, T>;
}

/// The parallel iterators of a `Result`: its `Ok` value, zero or one item, indexed.
pub mod result {
    /// By value.
    pub type IntoIter<T> = crate::source::vec::IntoIter<T>;
    /// By reference.
    pub type Iter<'a, T> = crate::source::slice::Iter<'a, T>;
    /// By mutable reference.
    pub type IterMut<'a, T> = crate::source::slice::IterMut<'a, T>;
}

/// The parallel iterator of `String::par_drain`: the drained characters, gathered first.
pub mod string {
    /// `par_drain(range)`.
    pub type Drain<'a> = crate::source::vec::IntoIter<char>;
}

impl<T: Send> IntoParallelIterator for Option<T> {
    type Iter = option::IntoIter<T>;
    type Item = T;

    fn into_par_iter(self) -> Self::Iter {
        Vec::from_iter(self).into_par_iter()
    }
}

impl<'a, T: Sync> IntoParallelIterator for &'a Option<T> {
    type Iter = option::Iter<'a, T>;
    type Item = &'a T;

    fn into_par_iter(self) -> Self::Iter {
        self.as_slice().into_par_iter()
    }
}

impl<'a, T: Send> IntoParallelIterator for &'a mut Option<T> {
    type Iter = option::IterMut<'a, T>;
    type Item = &'a mut T;

    fn into_par_iter(self) -> Self::Iter {
        self.as_mut_slice().into_par_iter()
    }
}

impl<T: Send, E> IntoParallelIterator for Result<T, E> {
    type Iter = result::IntoIter<T>;
    type Item = T;

    fn into_par_iter(self) -> Self::Iter {
        self.ok().into_par_iter()
    }
}

impl<'a, T: Sync, E> IntoParallelIterator for &'a Result<T, E> {
    type Iter = result::Iter<'a, T>;
    type Item = &'a T;

    fn into_par_iter(self) -> Self::Iter {
        self.as_ref()
            .map_or(&[][..], std::slice::from_ref)
            .into_par_iter()
    }
}

impl<'a, T: Send, E> IntoParallelIterator for &'a mut Result<T, E> {
    type Iter = result::IterMut<'a, T>;
    type Item = &'a mut T;

    fn into_par_iter(self) -> Self::Iter {
        match self {
            Ok(x) => std::slice::from_mut(x).into_par_iter(),
            Err(_) => (&mut [][..]).into_par_iter(),
        }
    }
}
