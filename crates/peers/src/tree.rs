//! Divide-and-conquer workloads for comparing `join`s: the sum of a balanced binary tree with
//! one `join` per node (the benchmark chili publishes against rayon), serially, on rayon, on
//! chili, or on any runtime given as a [`Join`] (the `tree_sum` example gives asat's), and a
//! recursive `join` whose leaves run a closure ([`fork_leaves`]: leaves that sleep show whether
//! the whole pool takes part).
//!
//! The sums recurse into both children of every node, leaves included (a leaf joins two empty
//! sides), so a tree of `levels` levels makes `2^levels - 1` joins.
//!
//! Code shape: [`sum_join`] and [`sum_serial`]'s recursion are each kept a function of their own
//! (`#[inline(never)]`; the serial one private, so that it calls itself directly and not through
//! the global offset table, as the public function did), so that every sum recurses through its own
//! function, which tests a child for `None` before calling itself. Left to itself, the compiler
//! inlined `sum_join` into the `Option::map_or` that calls it and recursed through that, calling it
//! once more for each empty child of a leaf: 2047 calls a 1023-node sum instead of 1023, and 1.6x
//! the serial sum's time with [`InlineJoin`], a join that does nothing but call both closures
//! (0.94-1.04x with the attribute), before any runtime's join added its cost. chili's sum
//! ([`sum_chili`]) keeps the compiler's choice, which measured faster for it (2.0x serial at best
//! against 2.4x with the attribute).
//!
//! Memory order: [`Node::tree`] allocates each node after its two subtrees (as
//! `Box::new(build(..))` does, in chili's benchmark too), left before right, so the tree lies
//! in memory in postorder. chili's `Scope::join(a, b)` runs `b` (the right subtree) first on
//! the calling thread, which walks that layout downward, one node after the next; a walk that
//! went left first would jump across it, and at 20 levels (tens of MB, out of cache) ran
//! 4 to 8 times slower per node than chili on one thread for that reason alone. So every sum
//! here goes right first on the calling thread: [`sum_serial`] visits the right subtree first,
//! and [`sum_join`] hands the right subtree to `join` as `a` (the side rayon's `join` runs on
//! the caller) and the left one as `b` (the side another thread may steal), as chili leaves
//! `a` to be stolen.
//!
//! ```
//! use asat_peers::tree::{sum_serial, Node};
//! let tree = Node::tree(10);
//! assert_eq!(Node::count(10), 1023);
//! assert_eq!(sum_serial(&tree), Node::expected_sum(10));
//! ```

use std::num::NonZero;

/// A node of a balanced binary tree (both children present, or neither).
#[derive(Debug)]
pub struct Node {
    /// This node's value.
    pub value: u64,
    /// The left subtree.
    pub left: Option<Box<Node>>,
    /// The right subtree.
    pub right: Option<Box<Node>>,
}

impl Node {
    /// A balanced tree of `levels` levels (`2^levels - 1` nodes) whose values are `1 ..=`
    /// [`count(levels)`](Node::count) in preorder, so its sum is
    /// [`expected_sum(levels)`](Node::expected_sum).
    ///
    /// # Panics
    /// If `levels` is 0 or above 32 (whose sums would not fit a `u64`).
    pub fn tree(levels: u32) -> Node {
        assert!(
            (1..=32).contains(&levels),
            "tree of {levels} levels: must be between 1 and 32"
        );
        let mut next = 1;
        Self::build(levels, &mut next)
    }

    fn build(levels: u32, next: &mut u64) -> Node {
        let value = *next;
        *next += 1;
        let child = |next: &mut u64| (levels > 1).then(|| Box::new(Self::build(levels - 1, next)));
        let left = child(next);
        let right = child(next);
        Node { value, left, right }
    }

    /// The number of nodes of a tree of `levels` levels: `2^levels - 1`.
    pub fn count(levels: u32) -> u64 {
        (1u64 << levels) - 1
    }

    /// The sum of the values of [`Node::tree(levels)`](Node::tree): `n (n + 1) / 2` for
    /// `n` nodes.
    pub fn expected_sum(levels: u32) -> u64 {
        let n = Self::count(levels);
        n * (n + 1) / 2
    }
}

/// The sum of the tree's values, on the calling thread alone (the same recursion as the
/// parallel sums, right subtree first, without the joins).
pub fn sum_serial(node: &Node) -> u64 {
    serial(node)
}

/// [`sum_serial`]'s recursion, private so that it calls itself directly: the public function
/// called itself through the global offset table (an indirect call a node).
#[inline(never)]
fn serial(node: &Node) -> u64 {
    let right = node.right.as_deref().map_or(0, serial);
    let left = node.left.as_deref().map_or(0, serial);
    node.value + left + right
}

/// A runtime's `join` (rayon's signature), as a type, so one generic recursion serves every
/// runtime without a call through a pointer.
pub trait Join {
    /// Runs `a` and `b`, perhaps in parallel, and returns both results.
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send;
}

/// [`rayon::join`]: on the rayon pool the caller runs in (the global pool outside `install`).
#[derive(Debug, Clone, Copy)]
pub struct RayonJoin;

impl Join for RayonJoin {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(a, b)
    }
}

/// A `join` that calls `a`, then `b`, on the calling thread: [`sum_join`] with it measures
/// what the recursion costs beside [`sum_serial`] before any runtime's join adds its own.
#[derive(Debug, Clone, Copy)]
pub struct InlineJoin;

impl Join for InlineJoin {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let ra = a();
        (ra, b())
    }
}

/// The sum of the tree's values with one `J::join` per node: the right subtree as `a` (run by
/// the caller in rayon's `join`), the left one as `b` (see the module docs).
#[inline(never)]
pub fn sum_join<J: Join>(node: &Node) -> u64 {
    let (right, left) = J::join(
        || node.right.as_deref().map_or(0, sum_join::<J>),
        || node.left.as_deref().map_or(0, sum_join::<J>),
    );
    node.value + left + right
}

/// The sum with one [`rayon::join`] per node; call it inside `pool.install` to use that pool.
///
/// ```
/// use asat_peers::tree::{sum_rayon, Node};
/// let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let tree = Node::tree(8);
/// assert_eq!(pool.install(|| sum_rayon(&tree)), Node::expected_sum(8));
/// ```
pub fn sum_rayon(node: &Node) -> u64 {
    sum_join::<RayonJoin>(node)
}

/// The sum with one chili [`Scope::join`](chili::Scope::join) per node as chili's benchmark
/// has it (the left subtree as `a`, the right one as `b`, which chili runs first), on the pool
/// the scope came from (`pool.scope()`; the thread holding the scope is one of the pool's
/// `thread_count`).
///
/// ```
/// use asat_peers::tree::{chili_pool, sum_chili, Node};
/// let pool = chili_pool(2);
/// let tree = Node::tree(8);
/// assert_eq!(sum_chili(&tree, &mut pool.scope()), Node::expected_sum(8));
/// ```
pub fn sum_chili(node: &Node, scope: &mut chili::Scope<'_>) -> u64 {
    let (left, right) = scope.join(
        |s| node.left.as_deref().map_or(0, |n| sum_chili(n, s)),
        |s| node.right.as_deref().map_or(0, |n| sum_chili(n, s)),
    );
    node.value + left + right
}

/// A chili pool of `threads` threads in all (chili starts `threads - 1`: the thread holding a
/// scope is the other), with chili's default heartbeat interval.
///
/// # Panics
/// If `threads` is 0.
pub fn chili_pool(threads: usize) -> chili::ThreadPool {
    let thread_count = NonZero::new(threads);
    assert!(thread_count.is_some(), "a chili pool of 0 threads");
    chili::ThreadPool::with_config(chili::Config {
        thread_count,
        ..Default::default()
    })
}

/// A recursive `J::join` of `depth` levels whose `2^depth` leaves each call `leaf`.
pub fn fork_leaves<J: Join, F: Fn() + Sync>(depth: u32, leaf: &F) {
    if depth == 0 {
        leaf();
    } else {
        J::join(
            || fork_leaves::<J, F>(depth - 1, leaf),
            || fork_leaves::<J, F>(depth - 1, leaf),
        );
    }
}

/// `seconds` with an adaptive unit (ns, µs, ms or s) and four significant digits or so.
///
/// ```
/// use asat_peers::tree::format_seconds;
/// assert_eq!(format_seconds(12.5e-6), "12.50 µs");
/// assert_eq!(format_seconds(0.25), "250.0 ms");
/// assert_eq!(format_seconds(3.0), "3.000 s");
/// ```
pub fn format_seconds(seconds: f64) -> String {
    let (value, unit) = match seconds.abs() {
        s if s < 1e-6 => (seconds * 1e9, "ns"),
        s if s < 1e-3 => (seconds * 1e6, "µs"),
        s if s < 1.0 => (seconds * 1e3, "ms"),
        _ => (seconds, "s"),
    };
    match value.abs() {
        v if v < 10.0 => format!("{value:.3} {unit}"),
        v if v < 100.0 => format!("{value:.2} {unit}"),
        _ => format!("{value:.1} {unit}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn tree_shape_and_serial_sum() {
        for levels in 1..=12 {
            let tree = Node::tree(levels);
            let mut nodes = 0;
            let mut stack = vec![&tree];
            while let Some(n) = stack.pop() {
                nodes += 1;
                assert_eq!(n.left.is_some(), n.right.is_some(), "unbalanced node");
                stack.extend(n.left.as_deref().into_iter().chain(n.right.as_deref()));
            }
            assert_eq!(nodes, Node::count(levels));
            assert_eq!(sum_serial(&tree), Node::expected_sum(levels));
        }
        assert_eq!(Node::tree(1).value, 1);
        assert!(Node::tree(1).left.is_none());
    }

    #[test]
    #[should_panic(expected = "tree of 0 levels: must be between 1 and 32")]
    fn tree_of_no_levels_is_refused() {
        Node::tree(0);
    }

    #[test]
    fn tree_sums_equal_the_serial_sum() {
        let rayon = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let chili = chili_pool(3);
        let mut scope = chili.scope();
        for levels in 1..=14 {
            let tree = Node::tree(levels);
            let serial = sum_serial(&tree);
            assert_eq!(sum_join::<InlineJoin>(&tree), serial, "inline, {levels}");
            assert_eq!(
                rayon.install(|| sum_rayon(&tree)),
                serial,
                "rayon, {levels}"
            );
            assert_eq!(sum_chili(&tree, &mut scope), serial, "chili, {levels}");
        }
    }

    #[test]
    fn tree_fork_leaves_runs_every_leaf_once() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for depth in 0..=8 {
            let leaves = AtomicUsize::new(0);
            let leaf = || {
                leaves.fetch_add(1, Ordering::Relaxed);
            };
            pool.install(|| fork_leaves::<RayonJoin, _>(depth, &leaf));
            assert_eq!(leaves.load(Ordering::Relaxed), 1 << depth, "rayon, {depth}");
            fork_leaves::<InlineJoin, _>(depth, &leaf);
            assert_eq!(leaves.into_inner(), 2 << depth, "inline, {depth}");
        }
    }

    #[test]
    fn tree_format_seconds_units() {
        assert_eq!(format_seconds(5e-9), "5.000 ns");
        assert_eq!(format_seconds(1.5e-6), "1.500 µs");
        assert_eq!(format_seconds(123.4e-6), "123.4 µs");
        assert_eq!(format_seconds(0.0123), "12.30 ms");
        assert_eq!(format_seconds(42.0), "42.00 s");
    }
}
