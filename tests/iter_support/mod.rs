//! Helpers shared by the parallel-iterator property tests (`iter_*.rs`): the shared runtimes
//! (fixed teams of 1 to 4 and one whose team size cycles), the splitting hints a case runs with,
//! value strategies, and items that count their drops.
#![allow(dead_code)]

use asat::iter::indexed::Hinted;
use asat::prelude::*;
use asat::{Fixed, Plan, Policy, RegionStart, Runtime, Schedule};
use proptest::prelude::*;
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// A policy whose team size follows a script, region after region (as ASAT changes it).
#[derive(Debug)]
pub struct Cycling {
    pub sizes: Vec<usize>,
    pub next: AtomicUsize,
}

impl Cycling {
    pub fn new(sizes: Vec<usize>) -> Self {
        assert!(!sizes.is_empty());
        Self {
            sizes,
            next: AtomicUsize::new(0),
        }
    }
}

impl Policy for Cycling {
    fn name(&self) -> &str {
        "cycling"
    }

    fn plan(&self, _start: &RegionStart) -> Plan {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        Plan::run(self.sizes[i % self.sizes.len()])
    }
}

/// Fixed teams of 1, 2, 3 and 4, and a team cycling through 1, 3, 2, 4.
pub const RUNTIMES: usize = 5;

pub fn runtime(i: usize) -> &'static Runtime {
    static RTS: OnceLock<Vec<Runtime>> = OnceLock::new();
    &RTS.get_or_init(|| {
        let mut rts: Vec<Runtime> = (1..=4)
            .map(|t| {
                Runtime::builder()
                    .max_threads(t)
                    .policy(Fixed::new(t))
                    .build()
                    .unwrap()
            })
            .collect();
        rts.push(
            Runtime::builder()
                .max_threads(4)
                .policy(Cycling::new(vec![1, 3, 2, 4]))
                .build()
                .unwrap(),
        );
        rts
    })[i]
}

/// The splitting hints of a chain.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    pub min_len: usize,
    pub max_len: usize,
    pub schedule: Option<Schedule>,
}

/// Where a case runs: one of the shared runtimes, with one set of hints.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    pub rt: usize,
    pub split: Split,
}

impl Setup {
    /// Runs `f` on the calling thread with the case's runtime installed.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        runtime(self.rt).install_here(f)
    }

    /// `it` with the case's hints.
    pub fn split<I: IndexedParallelIterator>(&self, it: I) -> Hinted<Hinted<Hinted<I>>> {
        let Split {
            min_len,
            max_len,
            schedule,
        } = self.split;
        let it = it.with_min_len(min_len).with_max_len(max_len);
        match schedule {
            Some(s) => it.with_schedule(s),
            None => it.with_max_len(max_len),
        }
    }
}

pub fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        Just(Schedule::Static),
        (0usize..50).prop_map(Schedule::dynamic),
        (0usize..50).prop_map(Schedule::guided),
    ]
}

pub fn setup() -> impl Strategy<Value = Setup> {
    let bound = || prop_oneof![3 => Just(0usize), 1 => 1usize..300];
    (
        0..RUNTIMES,
        bound(),
        bound(),
        prop_oneof![Just(None), schedule().prop_map(Some)],
    )
        .prop_map(|(rt, min_len, max_len, schedule)| Setup {
            rt,
            split: Split {
                min_len,
                max_len,
                schedule,
            },
        })
}

pub fn len() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..8, 0usize..2000]
}

pub fn values(range: std::ops::Range<i64>) -> impl Strategy<Value = Vec<i64>> {
    len().prop_flat_map(move |n| proptest::collection::vec(range.clone(), n))
}

/// The message of a panic payload.
pub fn message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// A 2x2 matrix over the integers mod 2^64: its product is associative but not commutative.
pub type Mat = [[u64; 2]; 2];

pub const IDENTITY: Mat = [[1, 0], [0, 1]];

pub fn mat_mul(a: Mat, b: Mat) -> Mat {
    let at = |i: usize, j: usize| {
        a[i][0]
            .wrapping_mul(b[0][j])
            .wrapping_add(a[i][1].wrapping_mul(b[1][j]))
    };
    [[at(0, 0), at(0, 1)], [at(1, 0), at(1, 1)]]
}

pub fn mat_of(x: i64) -> Mat {
    [[x as u64, 1], [1, 0]]
}

/// Ordered by `key` alone, so that equal items can be told apart by `at`.
#[derive(Clone, Copy, Debug)]
pub struct Keyed {
    pub key: i64,
    pub at: usize,
}

impl PartialEq for Keyed {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Keyed {}

impl PartialOrd for Keyed {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Keyed {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// An item that counts its drops, per id.
#[derive(Debug)]
pub struct Tracked {
    pub id: usize,
    pub drops: Arc<Vec<AtomicUsize>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

/// `n` tracked items with ids `0..n`, and their drop counters.
pub fn tracked(n: usize) -> (Vec<Tracked>, Arc<Vec<AtomicUsize>>) {
    let drops: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    let items = (0..n)
        .map(|id| Tracked {
            id,
            drops: drops.clone(),
        })
        .collect();
    (items, drops)
}

/// The ids whose item was not dropped exactly once.
pub fn not_dropped_once(drops: &[AtomicUsize]) -> Vec<(usize, usize)> {
    drops
        .iter()
        .map(|d| d.load(Ordering::SeqCst))
        .enumerate()
        .filter(|&(_, n)| n != 1)
        .collect()
}
