//! `unzip`, `partition` and `partition_map`: one iterator's items sent to two collections, each
//! keeping their order (and `collect_vec_list`, which keeps each range's items apart).
//!
//! One region sorts the items: each range pushes them to a pair of vectors of its own, and the
//! pairs are appended in index order. Then each collection is extended from its vector with
//! [`par_extend`](crate::ParallelExtend::par_extend) (for a `Vec`, a parallel move of the items
//! into place: a second, short region when there are enough of them). So a collection gets its
//! items in the iterator's order, and the two together get every item once.

use std::collections::LinkedList;

use crate::terminal::drive;
use crate::{IntoParallelIterator, ParallelExtend, ParallelIterator};

/// Either of two values (from the `either` crate, as rayon's `rayon::iter::Either`): what
/// [`partition_map`](crate::ParallelIterator::partition_map)'s closure returns.
pub use either::Either;

/// Sends each item of `iter` to the left or right vector with `sort`, then extends a default
/// `A` and `B` with them.
pub(crate) fn split_into<I, L, R, A, B, F>(iter: I, sort: F) -> (A, B)
where
    I: ParallelIterator,
    L: Send,
    R: Send,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
    F: Fn(I::Item, &mut Vec<L>, &mut Vec<R>) + Sync,
{
    let (left, right) = drive::reduce::reduce(
        &iter,
        || (Vec::new(), Vec::new()),
        |(mut left, mut right), items| {
            for item in items {
                sort(item, &mut left, &mut right);
            }
            (left, right)
        },
        |(mut l1, mut r1), (mut l2, mut r2)| {
            l1.append(&mut l2);
            r1.append(&mut r2);
            (l1, r1)
        },
    );
    drop(iter);
    let (mut a, mut b) = (A::default(), B::default());
    a.par_extend(left.into_par_iter());
    b.par_extend(right.into_par_iter());
    (a, b)
}

/// `unzip`: the pairs' first values to `A`, second values to `B`.
pub(crate) fn unzip<I, L, R, A, B>(iter: I) -> (A, B)
where
    I: ParallelIterator<Item = (L, R)>,
    L: Send,
    R: Send,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
{
    split_into(iter, |(l, r), left: &mut Vec<L>, right: &mut Vec<R>| {
        left.push(l);
        right.push(r);
    })
}

/// `partition`: items `pred` holds for to `A`, the others to `B`.
pub(crate) fn partition<I, A, B, P>(iter: I, pred: P) -> (A, B)
where
    I: ParallelIterator,
    A: Default + Send + ParallelExtend<I::Item>,
    B: Default + Send + ParallelExtend<I::Item>,
    P: Fn(&I::Item) -> bool + Sync,
{
    split_into(
        iter,
        |x, left: &mut Vec<I::Item>, right: &mut Vec<I::Item>| {
            if pred(&x) {
                left.push(x);
            } else {
                right.push(x);
            }
        },
    )
}

/// `partition_map`: `Left` values to `A`, `Right` values to `B`.
pub(crate) fn partition_map<I, L, R, A, B, P>(iter: I, f: P) -> (A, B)
where
    I: ParallelIterator,
    L: Send,
    R: Send,
    A: Default + Send + ParallelExtend<L>,
    B: Default + Send + ParallelExtend<R>,
    P: Fn(I::Item) -> Either<L, R> + Sync,
{
    split_into(iter, |x, left: &mut Vec<L>, right: &mut Vec<R>| {
        match f(x) {
            Either::Left(l) => left.push(l),
            Either::Right(r) => right.push(r),
        }
    })
}

/// `collect_vec_list`: each range's items in a vector of their own, the vectors listed in order.
pub(crate) fn vec_list<I: ParallelIterator>(iter: I) -> LinkedList<Vec<I::Item>> {
    drive::reduce::reduce(
        &iter,
        LinkedList::new,
        |mut list, items| {
            let v: Vec<I::Item> = items.collect();
            if !v.is_empty() {
                list.push_back(v);
            }
            list
        },
        |mut a, mut b| {
            a.append(&mut b);
            a
        },
    )
}
