//! Sources that split their data with the user's own function: rayon's [`split`] and
//! [`walk_tree_prefix`], [`walk_tree_postfix`], [`walk_tree`].
//!
//! # How they run
//!
//! rayon splits these as it goes, a piece at a time, as threads steal. Here a call's index
//! space must be known when it starts, so each runs in **two phases**, both at the first
//! terminal call (nothing happens when the iterator is made):
//!
//! 1. The pieces are found. [`split`] splits `data` recursively, both halves of each split at
//!    once (a `join`, whose second half another thread of the pool may take), each branch
//!    down to a depth that makes at most [`PIECES_PER_THREAD`] pieces per thread of the
//!    current runtime (a power of two of them) or to a piece the splitter does not split.
//!    On a runtime of one thread it does not split: `data` is the only piece. Nested in
//!    another call (a task, a region's member), the halves are tasks as any `join`'s. The
//!    walks expand the tree a level at a time, each level one parallel call (`children_of` of
//!    every node of the level), keeping every node.
//! 2. The items (the pieces; the nodes) are put **in order** (the split tree's left to right;
//!    the walk's prefix or postfix order) and shared out as a `Vec`'s items are: `collect`
//!    keeps that order, and each item is moved out once.
//!
//! What differs from rayon: all pieces (all of a tree's nodes) exist at once before phase 2,
//! where rayon holds only those being worked on; a walk of depth `d` takes `d` parallel calls
//! to expand; [`split`] makes at most [`PIECES_PER_THREAD`] pieces per thread (rayon
//! splits further where a thread runs out of work, so a piece that turns out long is split
//! again there, and not here); and the
//! closures must be `Send` as well as `Sync`.
//!
//! A panic in `splitter` or `children_of` reaches the terminal call once the other splits
//! under way have ended; the pieces made so far are dropped.

use std::fmt;
use std::ops::Range;

use asat_core::Runtime;

use crate::internal::deferred::Deferred;
use crate::internal::plumbing::Producer;
use crate::source::vec::{IntoIter, SliceDrain};
use crate::{IntoParallelRefMutIterator, ParallelIterator};

/// The most pieces per thread of the current runtime that [`split`] makes (in all, the
/// largest power of two within that many).
pub const PIECES_PER_THREAD: usize = 4;

/// The bound's name when [`split`] ran on a region's team: it now counts threads.
#[deprecated(note = "split's bound counts the runtime's threads: use PIECES_PER_THREAD")]
pub const PIECES_PER_MEMBER: usize = PIECES_PER_THREAD;

/// Splits `data` with `splitter` into pieces, which are the items (rayon's `split`):
/// `splitter(d)` returns the two halves of `d`, or `(d, None)` when `d` should not be split.
/// See the [module docs](self) for how far it splits and in what order the pieces come.
///
/// ```
/// use asat_iter::prelude::*;
///
/// // the sum of 0..1000 over pieces of a range, split in halves down to 100 numbers
/// let total: u64 = asat_iter::split(0..1000u64, |r| {
///     if r.end - r.start <= 100 {
///         (r, None)
///     } else {
///         let mid = r.start + (r.end - r.start) / 2;
///         (r.start..mid, Some(mid..r.end))
///     }
/// })
/// .map(|r| r.sum::<u64>())
/// .sum();
/// assert_eq!(total, 499_500);
/// ```
pub fn split<D, S>(data: D, splitter: S) -> Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Send + Sync,
{
    Split {
        pieces: Deferred::new(data),
        splitter,
    }
}

/// The pieces of a value split by a function (rayon's `Split`, made by [`split`]).
#[derive(Clone)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct Split<D, S> {
    pieces: Deferred<D>,
    splitter: S,
}

impl<D, S> fmt::Debug for Split<D, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Split")
            .field("split", &self.pieces.made())
            .finish_non_exhaustive()
    }
}

impl<D, S> Producer for Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Send + Sync,
{
    type Item = D;
    type Seq<'s>
        = SliceDrain<'s, D>
    where
        Self: 's;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        self.pieces().base_len()
    }

    unsafe fn seq(&self, r: Range<usize>) -> SliceDrain<'_, D> {
        // SAFETY: the caller's promise (the Producer rule), passed on.
        unsafe { self.pieces().seq(r) }
    }
}

impl<D, S> Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Send + Sync,
{
    fn pieces(&self) -> &IntoIter<D> {
        self.pieces.items(|d| split_all(d, &self.splitter))
    }
}

/// Phase 1 of [`split`]: the pieces of `data`, in the split tree's order.
fn split_all<D: Send>(data: D, splitter: &(impl Fn(D) -> (D, Option<D>) + Sync)) -> Vec<D> {
    let depth = split_depth(Runtime::with_current(Runtime::max_threads));
    split_down(data, splitter, depth)
}

/// How many times [`split`] may halve its data on a runtime of `threads` threads: as often as
/// makes at most [`PIECES_PER_THREAD`] pieces a thread (a power of two of them), none on one
/// thread.
fn split_depth(threads: usize) -> u32 {
    if threads <= 1 {
        0
    } else {
        threads.saturating_mul(PIECES_PER_THREAD).ilog2()
    }
}

/// `data`'s pieces, left to right, splitting it at most `depth` levels down; the halves of a
/// split are split at once by a `join` (the right one offered to the pool's other threads).
fn split_down<D: Send>(
    data: D,
    splitter: &(impl Fn(D) -> (D, Option<D>) + Sync),
    depth: u32,
) -> Vec<D> {
    if depth == 0 {
        return vec![data];
    }
    match splitter(data) {
        (whole, None) => vec![whole],
        (left, Some(right)) => {
            let (mut l, mut r) = asat_core::join_coarse(
                || split_down(left, splitter, depth - 1),
                || split_down(right, splitter, depth - 1),
            );
            l.append(&mut r);
            l
        }
    }
}

/// A tree's nodes as items, `root` first (rayon's `walk_tree_prefix`): `children_of(node)`
/// gives a node's children, left to right. Every node is yielded once; `collect` gives them in
/// prefix order (a node, then each child's subtree in turn). See the [module docs](self).
///
/// ```
/// use asat_iter::prelude::*;
///
/// // 4 has children 2 and 3; 3 has children 1 and 2
/// let nodes: Vec<u32> = asat_iter::walk_tree_prefix(4u32, |&n| match n {
///     4 => vec![2, 3],
///     3 => vec![1, 2],
///     _ => vec![],
/// })
/// .collect();
/// assert_eq!(nodes, [4, 2, 3, 1, 2]);
/// ```
pub fn walk_tree_prefix<S, B, I>(root: S, children_of: B) -> WalkTreePrefix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    WalkTreePrefix(Walk::new(root, children_of))
}

/// A tree's nodes, the children after their parent (rayon's `walk_tree_postfix`): as
/// [`walk_tree_prefix`], but `collect` gives them in postfix order (each child's subtree in
/// turn, then the node).
///
/// ```
/// use asat_iter::prelude::*;
///
/// let nodes: Vec<u32> = asat_iter::walk_tree_postfix(4u32, |&n| match n {
///     4 => vec![2, 3],
///     3 => vec![1, 2],
///     _ => vec![],
/// })
/// .collect();
/// assert_eq!(nodes, [2, 1, 2, 3, 4]);
/// ```
pub fn walk_tree_postfix<S, B, I>(root: S, children_of: B) -> WalkTreePostfix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    WalkTreePostfix(Walk::new(root, children_of))
}

/// A tree's nodes in an order rayon leaves unspecified (rayon's `walk_tree`): here, as
/// [`walk_tree_prefix`].
pub fn walk_tree<S, B, I>(root: S, children_of: B) -> WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    walk_tree_prefix(root, children_of)
}

/// rayon's `WalkTree` (made by [`walk_tree`]): here the prefix walk.
pub type WalkTree<S, B> = WalkTreePrefix<S, B>;

/// A tree's nodes in prefix order ([`walk_tree_prefix`], rayon's `WalkTreePrefix`).
#[derive(Clone)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct WalkTreePrefix<S, B>(Walk<S, B>);

/// A tree's nodes in postfix order ([`walk_tree_postfix`], rayon's `WalkTreePostfix`).
#[derive(Clone)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct WalkTreePostfix<S, B>(Walk<S, B>);

/// The root (then the nodes) and the children function.
#[derive(Clone)]
struct Walk<S, B> {
    nodes: Deferred<S>,
    children_of: B,
}

impl<S: Send, B> Walk<S, B> {
    fn new(root: S, children_of: B) -> Self {
        Walk {
            nodes: Deferred::new(root),
            children_of,
        }
    }

    fn nodes<I>(&self, postfix: bool) -> &IntoIter<S>
    where
        B: Fn(&S) -> I + Sync,
        I: IntoIterator<Item = S>,
    {
        self.nodes
            .items(|root| Tree::expand(root, &self.children_of).in_order(postfix))
    }
}

/// Declares a walk's `Debug` and `Producer` impls.
macro_rules! walk_source {
    ($($name:ident, postfix: $postfix:expr;)*) => {$(
        impl<S, B> fmt::Debug for $name<S, B> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("expanded", &self.0.nodes.made())
                    .finish_non_exhaustive()
            }
        }

        impl<S, B, I> Producer for $name<S, B>
        where
            S: Send,
            B: Fn(&S) -> I + Send + Sync,
            I: IntoIterator<Item = S>,
        {
            type Item = S;
            type Seq<'s>
                = SliceDrain<'s, S>
            where
                Self: 's;
            const EXACT: bool = true;

            fn base_len(&self) -> usize {
                self.0.nodes($postfix).base_len()
            }

            unsafe fn seq(&self, r: Range<usize>) -> SliceDrain<'_, S> {
                // SAFETY: the caller's promise (the Producer rule), passed on.
                unsafe { self.0.nodes($postfix).seq(r) }
            }
        }
    )*};
}

walk_source! {
    WalkTreePrefix, postfix: false;
    WalkTreePostfix, postfix: true;
}

/// A tree expanded level by level: `levels[l][i]` is node `i` of depth `l`, whose children are
/// `levels[l + 1][children[l][i]]`.
struct Tree<S> {
    levels: Vec<Vec<Option<S>>>,
    children: Vec<Vec<Range<usize>>>,
}

impl<S: Send> Tree<S> {
    /// Phase 1 of a walk: every node, each level's children found in one parallel call.
    fn expand<B, I>(root: S, children_of: &B) -> Self
    where
        B: Fn(&S) -> I + Sync,
        I: IntoIterator<Item = S>,
    {
        let mut levels = vec![vec![Some(root)]];
        let mut children = Vec::new();
        loop {
            let level = levels.last_mut().expect("the root's level");
            let kids: Vec<Vec<S>> = level
                .par_iter_mut()
                .map(|n| match n {
                    Some(n) => children_of(n).into_iter().collect(),
                    None => unreachable!("nodes are taken only after the expansion"),
                })
                .collect();
            let mut ranges = Vec::with_capacity(kids.len());
            let mut next = Vec::new();
            for k in kids {
                ranges.push(next.len()..next.len() + k.len());
                next.extend(k.into_iter().map(Some));
            }
            children.push(ranges);
            if next.is_empty() {
                return Tree { levels, children };
            }
            levels.push(next);
        }
    }

    /// The nodes in prefix (or postfix) order, moved out.
    fn in_order(mut self, postfix: bool) -> Vec<S> {
        let total = self.levels.iter().map(Vec::len).sum();
        let mut out = Vec::with_capacity(total);
        // (depth, index, whether its children are already on the stack)
        let mut stack = vec![(0usize, 0usize, false)];
        while let Some((l, i, opened)) = stack.pop() {
            if postfix && !opened {
                stack.push((l, i, true));
            } else if let Some(node) = self.levels[l][i].take() {
                out.push(node);
                if postfix {
                    continue;
                }
            }
            if !opened {
                let kids = self.children[l][i].clone();
                stack.extend(kids.rev().map(|k| (l + 1, k, false)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
