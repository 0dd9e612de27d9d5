//! `split` and the tree walks on runtimes of 1 to 4 threads and teams of 1 to 4: the items in
//! rayon's order, each once, splitting bounded and in parallel, panics propagated.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::internal::testing::on_every_team;
use crate::IntoParallelIterator;

/// Halves a range down to `min` numbers.
fn halves(min: usize) -> impl Fn(Range<usize>) -> (Range<usize>, Option<Range<usize>>) {
    move |r| {
        if r.len() <= min {
            (r, None)
        } else {
            let mid = r.start + r.len() / 2;
            (r.start..mid, Some(mid..r.end))
        }
    }
}

/// A runtime of `threads` threads (fixed policy) for the tests that count pieces.
fn pool(threads: usize) -> Runtime {
    Runtime::builder()
        .max_threads(threads)
        .policy(asat_core::Fixed::new(threads))
        .build()
        .unwrap()
}

#[test]
fn split_depth_gives_four_pieces_a_thread() {
    assert_eq!(split_depth(1), 0);
    assert_eq!(split_depth(2), 3);
    assert_eq!(split_depth(3), 3, "8 pieces: the power of two below 12");
    assert_eq!(split_depth(4), 4);
    assert_eq!(split_depth(64), 8);
    assert_eq!(split_depth(usize::MAX), usize::BITS - 1);
    assert!((1..100).all(|t| 1usize << split_depth(t) <= t * PIECES_PER_THREAD));
}

#[test]
fn split_pieces_cover_the_data_in_order() {
    // every test runtime has 4 threads, whatever its team: at most 16 pieces
    on_every_team(|k| {
        for (n, min) in [
            (0usize, 1usize),
            (1, 1),
            (1000, 1),
            (1000, 100),
            (1000, 5000),
        ] {
            let pieces: Vec<Range<usize>> = split(0..n, halves(min)).collect();
            // in order, no gap, no overlap
            let joined: Vec<usize> = pieces.iter().flat_map(Clone::clone).collect();
            assert_eq!(joined, (0..n).collect::<Vec<_>>(), "team {k}, {n} by {min}");
            let most = 4 * PIECES_PER_THREAD;
            assert!(pieces.len() <= most, "team {k}: {} pieces", pieces.len());
            // halves are even: short of the budget, every piece is one the splitter keeps
            assert!(pieces.len() == most || pieces.iter().all(|p| p.len() <= min));
        }
        let sum: usize = split(0..10_000usize, halves(10))
            .map(|r| r.sum::<usize>())
            .sum();
        assert_eq!(sum, 10_000 * 9_999 / 2);
    });
    for (threads, want) in [(1, 1), (2, 8), (3, 8)] {
        let got = pool(threads).install(|| split(0..1000usize, halves(1)).count());
        assert_eq!(got, want, "{threads} threads");
    }
}

#[test]
fn split_nested_in_a_call_splits_in_parallel() {
    let rt = pool(4);
    // inside a parallel loop and a join, as from outside: 16 pieces each
    let counts: Vec<usize> = rt.install(|| {
        (0..3)
            .into_par_iter()
            .map(|_| split(0..1000usize, halves(1)).count())
            .collect()
    });
    assert_eq!(counts, [16, 16, 16]);
    let (a, b) = rt.install(|| {
        asat_core::join(
            || split(0..1000usize, halves(1)).count(),
            || split(0..1000usize, halves(1)).count(),
        )
    });
    assert_eq!((a, b), (16, 16));
    // the two halves of the root's split run at once: the left one waits for the right one
    // to start on another thread (a split that ran them one after the other would wait for
    // the whole deadline and fail)
    let right_started = std::sync::atomic::AtomicBool::new(false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let pieces = rt.install(|| {
        asat_core::join(
            || {
                split(0..2usize, |r: Range<usize>| {
                    if r.len() == 2 {
                        return (0..1, Some(1..2));
                    }
                    if r.start == 1 {
                        right_started.store(true, Ordering::Release);
                    } else {
                        while !right_started.load(Ordering::Acquire)
                            && std::time::Instant::now() < deadline
                        {
                            std::thread::yield_now();
                        }
                    }
                    (r, None)
                })
                .count()
            },
            || (),
        )
        .0
    });
    assert_eq!(pieces, 2);
    assert!(right_started.load(Ordering::Acquire));
    assert!(
        std::time::Instant::now() < deadline,
        "the halves ran one after the other"
    );
}

#[test]
fn split_data_may_borrow_and_be_mutable() {
    on_every_team(|k| {
        let mut v: Vec<u32> = (0..1000).collect();
        split(&mut v[..], |s: &mut [u32]| {
            if s.len() <= 64 {
                (s, None)
            } else {
                let (a, b) = s.split_at_mut(s.len() / 2);
                (a, Some(b))
            }
        })
        .for_each(|s| s.iter_mut().for_each(|x| *x *= 2));
        assert!(
            v.iter().enumerate().all(|(i, &x)| x == 2 * i as u32),
            "team {k}"
        );
    });
}

#[test]
fn split_panics_reach_the_caller() {
    let panicky = || {
        split(0..1000usize, |r| {
            // the root is split, then one of its halves panics
            if r.len() < 1000 {
                panic!("splitter");
            }
            halves(1)(r)
        })
        .count()
    };
    on_every_team(|k| {
        let r = catch_unwind(AssertUnwindSafe(panicky));
        assert_eq!(
            *r.unwrap_err().downcast_ref::<&str>().unwrap(),
            "splitter",
            "team {k}"
        );
        assert_eq!(
            split(0..10usize, halves(1)).count(),
            10,
            "usable afterwards"
        );
    });
    assert_eq!(pool(1).install(panicky), 1, "one thread does not split");
}

/// Node `n` has children `n - 1` and `n - 2` (for `n >= 2`): a Fibonacci tree.
fn fib_children(n: &u32) -> Vec<u32> {
    if *n >= 2 {
        vec![n - 1, n - 2]
    } else {
        vec![]
    }
}

fn prefix_seq(n: u32, out: &mut Vec<u32>) {
    out.push(n);
    fib_children(&n)
        .into_iter()
        .for_each(|c| prefix_seq(c, out));
}

fn postfix_seq(n: u32, out: &mut Vec<u32>) {
    fib_children(&n)
        .into_iter()
        .for_each(|c| postfix_seq(c, out));
    out.push(n);
}

#[test]
fn walks_yield_every_node_in_order() {
    on_every_team(|k| {
        for root in [0u32, 1, 2, 5, 15] {
            let (mut pre, mut post) = (Vec::new(), Vec::new());
            prefix_seq(root, &mut pre);
            postfix_seq(root, &mut post);
            let got: Vec<u32> = walk_tree_prefix(root, fib_children).collect();
            assert_eq!(got, pre, "team {k}, prefix from {root}");
            let got: Vec<u32> = walk_tree_postfix(root, fib_children).collect();
            assert_eq!(got, post, "team {k}, postfix from {root}");
            let got: Vec<u32> = walk_tree(root, fib_children).collect();
            assert_eq!(got, pre);
            let sum: u64 = walk_tree_prefix(root, fib_children).map(u64::from).sum();
            assert_eq!(sum, pre.iter().map(|&x| u64::from(x)).sum::<u64>());
        }
        // a deep chain: one node per level
        let chain: Vec<u32> = walk_tree_postfix(0u32, |&n| (n < 300).then_some(n + 1)).collect();
        assert_eq!(chain, (0..=300).rev().collect::<Vec<_>>());
    });
}

#[test]
fn walks_drop_each_node_once_and_propagate_panics() {
    on_every_team(|k| {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct Node(u32);
        impl Drop for Node {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        let kids = |n: &Node| -> Vec<Node> { (0..n.0).map(|_| Node(n.0 - 1)).collect() };
        // 1 + 3 + 3*2 + 3*2*1 = 16 nodes; a search stops early, the rest dropped unconsumed
        let leaf = walk_tree_prefix(Node(3), kids)
            .map(|n| n.0)
            .find_first(|&x| x == 0);
        assert_eq!(leaf, Some(0), "team {k}");
        assert_eq!(DROPS.swap(0, Ordering::Relaxed), 16);
        let r = catch_unwind(AssertUnwindSafe(|| {
            walk_tree_postfix(5u32, |&n| {
                if n == 1 {
                    panic!("children_of");
                }
                fib_children(&n)
            })
            .count()
        }));
        assert_eq!(
            *r.unwrap_err().downcast_ref::<&str>().unwrap(),
            "children_of"
        );
    });
}
