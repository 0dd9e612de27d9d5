//! The suite's cases for nested parallel calls on the work-stealing `join`: random chains of
//! `join`, parallel iterators, iterators inside iterators and `scope` spawns inside joins,
//! whose results must equal the sequential ones, with several callers at once (so that, with a
//! policy whose answer changes, the number of threads taking tasks changes during calls).

use asat::prelude::*;
use asat::Runtime;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::sync::atomic::{AtomicU64, Ordering};

/// A shape of nested calls.
#[derive(Clone, Debug)]
enum Shape {
    /// A leaf: the sum of `0..n`.
    Leaf(u64),
    /// `join` of the two sides.
    Join(Box<Shape>, Box<Shape>),
    /// A parallel sum over `0..n` of the inner shape's value plus the index.
    Map(u64, Box<Shape>),
    /// A scope that spawns each shape as a job and adds up their values.
    Scope(Vec<Shape>),
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = (0u64..200).prop_map(Shape::Leaf);
    leaf.prop_recursive(6, 48, 4, |inner| {
        prop_oneof![
            3 => (inner.clone(), inner.clone())
                .prop_map(|(a, b)| Shape::Join(Box::new(a), Box::new(b))),
            1 => (1u64..6, inner.clone()).prop_map(|(n, s)| Shape::Map(n, Box::new(s))),
            1 => prop::collection::vec(inner, 1..4).prop_map(Shape::Scope),
        ]
    })
}

/// The value of a shape, computed sequentially.
fn serial(s: &Shape) -> u64 {
    match s {
        Shape::Leaf(n) => n * n.saturating_sub(1) / 2,
        Shape::Join(a, b) => serial(a) + serial(b),
        Shape::Map(n, s) => (0..*n).map(|i| serial(s) + i).sum(),
        Shape::Scope(v) => v.iter().map(serial).sum(),
    }
}

/// The value of a shape, computed with the parallel calls it names.
fn parallel(s: &Shape) -> u64 {
    match s {
        Shape::Leaf(n) => (0..*n).into_par_iter().sum(),
        Shape::Join(a, b) => {
            let (x, y) = asat::join(|| parallel(a), || parallel(b));
            x + y
        }
        Shape::Map(n, s) => (0..*n).into_par_iter().map(|i| parallel(s) + i).sum(),
        Shape::Scope(v) => {
            let total = AtomicU64::new(0);
            asat::scope(|sc| {
                for s in v {
                    let total = &total;
                    sc.spawn(move |_| {
                        total.fetch_add(parallel(s), Ordering::Relaxed);
                    });
                }
            });
            total.into_inner()
        }
    }
}

/// Random chains equal their sequential value, from two callers at once.
pub fn nested_chains(rt: &Runtime) {
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&(shape(), shape()), |(a, b)| {
            let (x, y) = std::thread::scope(|s| {
                let x = s.spawn(|| rt.install_here(|| parallel(&a)));
                let y = s.spawn(|| rt.install_here(|| parallel(&b)));
                (x.join().unwrap(), y.join().unwrap())
            });
            prop_assert_eq!(x, serial(&a));
            prop_assert_eq!(y, serial(&b));
            Ok(())
        })
        .unwrap();
}

/// Unbalanced recursion: one side deep, the other a leaf, at random depths.
pub fn unbalanced_recursion(rt: &Runtime) {
    fn lopsided(depth: u32, width: u64) -> u64 {
        if depth == 0 {
            return (0..width).sum();
        }
        let (a, b) = asat::join(|| lopsided(depth - 1, width), || width);
        a + b
    }
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&(0u32..300, 0u64..50), |(depth, width)| {
            let got = rt.install_here(|| lopsided(depth, width));
            prop_assert_eq!(got, (0..width).sum::<u64>() + u64::from(depth) * width);
            Ok(())
        })
        .unwrap();
}
