//! Property tests of the parallel iterators: every supported chain gives what the same chain
//! gives on std's sequential iterators, for random lengths, splitting hints (`with_min_len`,
//! `with_max_len`, `with_schedule`) and team sizes, also when the team size changes from call to
//! call; owned items are dropped exactly once (also after `take`, a shorter `zip`, a panic); a
//! panic in a closure reaches the terminal call and the runtime stays usable.
//!
//! Runtimes are shared by the cases (built once: fixed teams of 1 to 4 and one whose team size
//! cycles), so that a case also checks that the calls before it left its runtime clean.

use asat::iter::indexed::Hinted;
use asat::prelude::*;
use asat::{Fixed, Plan, Policy, RegionStart, Runtime, Schedule};
use proptest::prelude::*;
use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::num::Wrapping;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, OnceLock};

/// A policy whose team size follows a script, region after region (as ASAT changes it).
#[derive(Debug)]
struct Cycling {
    sizes: Vec<usize>,
    next: AtomicUsize,
}

impl Cycling {
    fn new(sizes: Vec<usize>) -> Self {
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
const RUNTIMES: usize = 5;

fn runtime(i: usize) -> &'static Runtime {
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
struct Split {
    min_len: usize,
    max_len: usize,
    schedule: Option<Schedule>,
}

/// Where a case runs: one of the shared runtimes, with one set of hints.
#[derive(Clone, Copy, Debug)]
struct Setup {
    rt: usize,
    split: Split,
}

impl Setup {
    /// Runs `f` with the case's runtime installed.
    fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        runtime(self.rt).install(f)
    }

    /// `it` with the case's hints.
    fn split<I: IndexedParallelIterator>(&self, it: I) -> Hinted<Hinted<Hinted<I>>> {
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

fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        Just(Schedule::Static),
        (0usize..50).prop_map(Schedule::dynamic),
        (0usize..50).prop_map(Schedule::guided),
    ]
}

fn setup() -> impl Strategy<Value = Setup> {
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

fn len() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..8, 0usize..2000]
}

fn values(range: std::ops::Range<i64>) -> impl Strategy<Value = Vec<i64>> {
    len().prop_flat_map(move |n| proptest::collection::vec(range.clone(), n))
}

/// The message of a panic payload.
fn message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// A 2x2 matrix over the integers mod 2^64: its product is associative but not commutative.
type Mat = [[u64; 2]; 2];

const IDENTITY: Mat = [[1, 0], [0, 1]];

fn mat_mul(a: Mat, b: Mat) -> Mat {
    let at = |i: usize, j: usize| {
        a[i][0]
            .wrapping_mul(b[0][j])
            .wrapping_add(a[i][1].wrapping_mul(b[1][j]))
    };
    [[at(0, 0), at(0, 1)], [at(1, 0), at(1, 1)]]
}

fn mat_of(x: i64) -> Mat {
    [[x as u64, 1], [1, 0]]
}

/// Ordered by `key` alone, so that equal items can be told apart by `at`.
#[derive(Clone, Copy, Debug)]
struct Keyed {
    key: i64,
    at: usize,
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
struct Tracked {
    id: usize,
    drops: Arc<Vec<AtomicUsize>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::SeqCst);
    }
}

/// `n` tracked items with ids `0..n`, and their drop counters.
fn tracked(n: usize) -> (Vec<Tracked>, Arc<Vec<AtomicUsize>>) {
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
fn not_dropped_once(drops: &[AtomicUsize]) -> Vec<(usize, usize)> {
    drops
        .iter()
        .map(|d| d.load(Ordering::SeqCst))
        .enumerate()
        .filter(|&(_, n)| n != 1)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ranges_of_every_integer_type(
        start in -1000i64..1000,
        n in len(),
        a in any::<u8>(),
        b in any::<u8>(),
        skip in 0usize..100,
        step in 1usize..9,
        take in 0usize..2000,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let end = start + n as i64;
            prop_assert_eq!(
                s.split((start..end).into_par_iter()).collect::<Vec<_>>(),
                (start..end).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split((start..=end - 1).into_par_iter()).collect::<Vec<_>>(),
                (start..=end - 1).collect::<Vec<_>>()
            );
            // reversed and empty ranges
            prop_assert_eq!(s.split((end..start).into_par_iter()).count(), (end..start).count());
            let (s32, e32) = (start as i32, end as i32);
            prop_assert_eq!(
                s.split((s32..e32).into_par_iter()).map(i64::from).sum::<i64>(),
                (s32..e32).map(i64::from).sum::<i64>()
            );
            let (s16, e16) = (start as i16, end as i16);
            prop_assert_eq!(
                s.split((s16..=e16).into_par_iter()).collect::<Vec<_>>(),
                (s16..=e16).collect::<Vec<_>>()
            );
            let (si, ei) = (start as isize, end as isize);
            prop_assert_eq!(
                s.split((si..ei).into_par_iter()).map(|x| x * x).sum::<isize>(),
                (si..ei).map(|x| x * x).sum::<isize>()
            );
            // small types, up to their maximum
            prop_assert_eq!(
                s.split((a..b).into_par_iter()).collect::<Vec<u8>>(),
                (a..b).collect::<Vec<u8>>()
            );
            prop_assert_eq!(
                s.split((a..=b).into_par_iter()).collect::<Vec<u8>>(),
                (a..=b).collect::<Vec<u8>>()
            );
            prop_assert_eq!((a..=u8::MAX).into_par_iter().len(), (a..=u8::MAX).count());
            let (a8, b8) = (a as i8, b as i8);
            prop_assert_eq!(
                s.split((a8..=b8).into_par_iter()).collect::<Vec<i8>>(),
                (a8..=b8).collect::<Vec<i8>>()
            );
            prop_assert_eq!(
                s.split((a8..=i8::MAX).into_par_iter()).collect::<Vec<i8>>(),
                (a8..=i8::MAX).collect::<Vec<i8>>()
            );
            let (u16s, u32s) = (n as u16, n as u32);
            prop_assert_eq!(
                s.split((0..=u16s).into_par_iter()).map(u64::from).sum::<u64>(),
                (0..=u16s).map(u64::from).sum::<u64>()
            );
            prop_assert_eq!(
                s.split((u32s..2 * u32s).into_par_iter()).collect::<Vec<_>>(),
                (u32s..2 * u32s).collect::<Vec<_>>()
            );
            // the ends of the 64-bit types
            let top = u64::MAX - n as u64;
            prop_assert_eq!(
                s.split((top..=u64::MAX).into_par_iter()).collect::<Vec<_>>(),
                (top..=u64::MAX).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split((top..u64::MAX).into_par_iter()).collect::<Vec<_>>(),
                (top..u64::MAX).collect::<Vec<_>>()
            );
            let bottom = i64::MIN + n as i64;
            prop_assert_eq!(
                s.split((i64::MIN..bottom).into_par_iter()).collect::<Vec<_>>(),
                (i64::MIN..bottom).collect::<Vec<_>>()
            );
            // skip, step_by, take
            prop_assert_eq!(
                s.split((0..n).into_par_iter())
                    .skip(skip)
                    .step_by(step)
                    .take(take)
                    .collect::<Vec<_>>(),
                (0..n).skip(skip).step_by(step).take(take).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split((start..end).into_par_iter().step_by(step))
                    .skip(skip)
                    .collect::<Vec<_>>(),
                (start..end).step_by(step).skip(skip).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split((start..=end).into_par_iter().take(take).step_by(step)).len(),
                (start..=end).take(take).step_by(step).count()
            );
            Ok(())
        })?;
    }

    #[test]
    fn slices_vecs_and_arrays(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(&s.split(v.par_iter()).copied().collect::<Vec<_>>(), &v);
            prop_assert_eq!(&s.split((&v[..]).into_par_iter()).cloned().collect::<Vec<_>>(), &v);
            prop_assert_eq!(
                s.split((&v).into_par_iter()).map(|x| x * 2).collect::<Vec<_>>(),
                v.iter().map(|x| x * 2).collect::<Vec<_>>()
            );
            let mut w = v.clone();
            s.split(w.par_iter_mut())
                .enumerate()
                .for_each(|(i, x)| *x = *x * 3 + i as i64);
            let want: Vec<i64> = v.iter().enumerate().map(|(i, x)| x * 3 + i as i64).collect();
            prop_assert_eq!(&w, &want);
            s.split((&mut w[..]).into_par_iter()).for_each(|x| *x -= 1);
            s.split((&mut w).into_par_iter()).for_each(|x| *x += 1);
            prop_assert_eq!(&w, &want);
            // by value
            prop_assert_eq!(&s.split(v.clone().into_par_iter()).collect::<Vec<_>>(), &v);
            let words: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            prop_assert_eq!(&s.split(words.par_iter()).cloned().collect::<Vec<_>>(), &words);
            prop_assert_eq!(
                s.split(words.clone().into_par_iter()).map(|w| w.len()).collect::<Vec<_>>(),
                words.iter().map(|w| w.len()).collect::<Vec<_>>()
            );
            // arrays
            let mut arr: [i64; 97] = std::array::from_fn(|i| v.get(i).copied().unwrap_or(i as i64));
            let want: Vec<i64> = arr.iter().map(|x| x - 7).collect();
            prop_assert_eq!(
                s.split(arr.par_iter()).map(|x| x - 7).collect::<Vec<_>>(),
                want.clone()
            );
            s.split((&mut arr).into_par_iter()).for_each(|x| *x -= 7);
            prop_assert_eq!(&arr[..], &want[..]);
            s.split(arr.par_iter_mut()).for_each(|x| *x += 7);
            prop_assert_eq!(
                s.split((&arr).into_par_iter()).map(|x| x - 7).collect::<Vec<_>>(),
                want
            );
            Ok(())
        })?;
    }

    #[test]
    fn chunks_and_windows(v in values(-1000..1000), size in 1usize..64, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(v.par_chunks(size)).map(<[i64]>::to_vec).collect::<Vec<_>>(),
                v.chunks(size).map(<[i64]>::to_vec).collect::<Vec<_>>()
            );
            let exact = v.par_chunks_exact(size);
            prop_assert_eq!(exact.remainder(), v.chunks_exact(size).remainder());
            prop_assert_eq!(
                s.split(exact).map(<[i64]>::to_vec).collect::<Vec<_>>(),
                v.chunks_exact(size).map(<[i64]>::to_vec).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_windows(size)).map(|w| w.iter().sum::<i64>()).collect::<Vec<_>>(),
                v.windows(size).map(|w| w.iter().sum::<i64>()).collect::<Vec<_>>()
            );
            let (mut got, mut want) = (v.clone(), v.clone());
            s.split(got.par_chunks_mut(size)).enumerate().for_each(|(i, c)| {
                for x in c {
                    *x = *x * 10 + i as i64;
                }
            });
            for (i, c) in want.chunks_mut(size).enumerate() {
                for x in c {
                    *x = *x * 10 + i as i64;
                }
            }
            prop_assert_eq!(&got, &want);
            let (mut got, mut want) = (v.clone(), v.clone());
            s.split(got.par_chunks_exact_mut(size)).enumerate().for_each(|(i, c)| {
                c.reverse();
                c[0] += i as i64;
            });
            for (i, c) in want.chunks_exact_mut(size).enumerate() {
                c.reverse();
                c[0] += i as i64;
            }
            prop_assert_eq!(&got, &want);
            Ok(())
        })?;
    }

    #[test]
    fn zips_and_tuples(
        a in values(-1000..1000),
        b in proptest::collection::vec(0u32..100, 0..700),
        c in proptest::collection::vec(-5i64..5, 0..700),
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(a.par_iter()).zip(&b).map(|(x, y)| x + i64::from(*y)).collect::<Vec<_>>(),
                a.iter().zip(&b).map(|(x, y)| x + i64::from(*y)).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                b.par_iter().zip(s.split(a.par_iter())).collect::<Vec<_>>(),
                b.iter().zip(&a).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(a.par_iter())
                    .zip_eq((0..a.len()).into_par_iter().map(|i| &a[a.len() - 1 - i]))
                    .collect::<Vec<_>>(),
                a.iter().zip(a.iter().rev()).collect::<Vec<_>>()
            );
            if a.len() != b.len() {
                let r = catch_unwind(AssertUnwindSafe(|| a.par_iter().zip_eq(&b).count()));
                prop_assert!(r.is_err(), "zip_eq of lengths {} and {}", a.len(), b.len());
            }
            // tuples of 2 to 5 sources
            prop_assert_eq!(
                (&a, s.split(b.par_iter())).into_par_iter().collect::<Vec<_>>(),
                a.iter().zip(&b).collect::<Vec<_>>()
            );
            let mut got = a.clone();
            (&mut got, &b, s.split(c.par_iter())).into_par_iter().for_each(|(x, y, z)| {
                *x += i64::from(*y) * z;
            });
            let mut want = a.clone();
            for ((x, y), z) in want.iter_mut().zip(&b).zip(&c) {
                *x += i64::from(*y) * z;
            }
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(
                (a.par_iter(), &b, 0..a.len(), s.split(c.par_chunks(2)))
                    .into_par_iter()
                    .map(|(x, y, i, ch)| x * i as i64 + i64::from(*y) + ch.iter().sum::<i64>())
                    .collect::<Vec<_>>(),
                a.iter()
                    .zip(&b)
                    .zip(0..a.len())
                    .zip(c.chunks(2))
                    .map(|(((x, y), i), ch)| x * i as i64 + i64::from(*y) + ch.iter().sum::<i64>())
                    .collect::<Vec<_>>()
            );
            let mut got = c.clone();
            (s.split(got.par_iter_mut()), &a, &b, 10u8..=255, c.clone())
                .into_par_iter()
                .for_each(|(g, x, y, k, z)| *g = x + i64::from(*y) + i64::from(k) * z);
            let mut want = c.clone();
            let zipped = want.iter_mut().zip(&a).zip(&b).zip(10u8..=255).zip(c.clone());
            for ((((g, x), y), k), z) in zipped {
                *g = x + i64::from(*y) + i64::from(k) * z;
            }
            prop_assert_eq!(&got, &want);
            Ok(())
        })?;
    }

    #[test]
    fn adapters(
        v in values(-1000..1000),
        skip in 0usize..300,
        step in 1usize..9,
        take in 0usize..2000,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(v.par_iter()).map(|x| x * 3).filter(|x| x % 2 == 0).collect::<Vec<_>>(),
                v.iter().map(|x| x * 3).filter(|x| x % 2 == 0).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .filter_map(|x| (x % 3 == 0).then_some(x / 3))
                    .collect::<Vec<_>>(),
                v.iter().filter_map(|x| (x % 3 == 0).then_some(x / 3)).collect::<Vec<_>>()
            );
            let expand = |x: &i64| {
                let x = *x;
                (0..x.rem_euclid(4)).map(move |j| x * 10 + j)
            };
            prop_assert_eq!(
                s.split(v.par_iter()).flat_map_iter(expand).collect::<Vec<_>>(),
                v.iter().flat_map(expand).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().map(|(i, x)| i as i64 * x).collect::<Vec<_>>(),
                v.iter().enumerate().map(|(i, x)| i as i64 * x).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .skip(skip)
                    .step_by(step)
                    .take(take)
                    .enumerate()
                    .collect::<Vec<_>>(),
                v.iter().skip(skip).step_by(step).take(take).enumerate().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate().take(take).skip(skip))
                    .map(|(i, x)| (i, *x))
                    .collect::<Vec<_>>(),
                v.iter().copied().enumerate().take(take).skip(skip).collect::<Vec<_>>()
            );
            let seen = AtomicUsize::new(0);
            prop_assert_eq!(
                &s.split(v.par_iter())
                    .inspect(|_| {
                        seen.fetch_add(1, Ordering::Relaxed);
                    })
                    .copied()
                    .collect::<Vec<_>>(),
                &v
            );
            prop_assert_eq!(seen.load(Ordering::Relaxed), v.len());
            // a state serves a run of items in order
            let inits = AtomicUsize::new(0);
            let in_order = s.split(v.par_iter().enumerate())
                .map_init(
                    || {
                        inits.fetch_add(1, Ordering::Relaxed);
                        None
                    },
                    |last: &mut Option<usize>, (i, _)| {
                        let ok = last.is_none_or(|l| l < i);
                        *last = Some(i);
                        ok
                    },
                )
                .collect::<Vec<_>>();
            prop_assert!(in_order.iter().all(|&ok| ok));
            prop_assert!(inits.load(Ordering::Relaxed) <= v.len());
            prop_assert_eq!(
                s.split(v.par_iter()).map_with(7i64, |o, x| x + *o).collect::<Vec<_>>(),
                v.iter().map(|x| x + 7).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .map_init(Vec::new, |buf: &mut Vec<i64>, x| {
                        buf.clear();
                        buf.extend([*x, 1]);
                        buf.iter().sum::<i64>()
                    })
                    .collect::<Vec<_>>(),
                v.iter().map(|x| x + 1).collect::<Vec<_>>()
            );
            // hints after a non-indexed adapter: only the schedule can be set there
            if let Some(sch) = s.split.schedule {
                prop_assert_eq!(
                    v.par_iter()
                        .filter(|x| **x > 0)
                        .with_schedule(sch)
                        .copied()
                        .collect::<Vec<_>>(),
                    v.iter().filter(|x| **x > 0).copied().collect::<Vec<_>>()
                );
            }
            Ok(())
        })?;
    }

    #[test]
    fn for_each_variants(n in len(), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            s.split((0..n).into_par_iter()).for_each(|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            s.split((0..n).into_par_iter()).for_each_init(
                || 10usize,
                |k, i| {
                    hits[i].fetch_add(*k, Ordering::Relaxed);
                },
            );
            s.split((0..n).into_par_iter()).for_each_with(100usize, |k, i| {
                hits[i].fetch_add(*k, Ordering::Relaxed);
            });
            let counts: Vec<usize> = hits.iter().map(|h| h.load(Ordering::Relaxed)).collect();
            prop_assert!(counts.iter().all(|&c| c == 111), "{:?}", counts);
            let (tx, rx) = mpsc::channel();
            s.split((0..n).into_par_iter()).for_each_with(tx, |tx, i| tx.send(i).unwrap());
            let mut got: Vec<usize> = rx.iter().collect();
            got.sort_unstable();
            prop_assert_eq!(got, (0..n).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn sums_and_products(
        v in values(-1000..1000),
        f in proptest::collection::vec(-1e3f64..1e3, 0..2000),
        g in proptest::collection::vec(0.99f64..1.01, 0..2000),
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(s.split(v.par_iter()).sum::<i64>(), v.iter().sum::<i64>());
            prop_assert_eq!(
                s.split(v.par_iter()).map(|&x| i128::from(x) * i128::from(x)).sum::<i128>(),
                v.iter().map(|&x| i128::from(x) * i128::from(x)).sum::<i128>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).map(|x| if x % 2 == 0 { 1 } else { -1 }).product::<i64>(),
                v.iter().map(|x| if x % 2 == 0 { 1 } else { -1 }).product::<i64>()
            );
            let odd = |x: &i64| Wrapping(*x as u64 | 1);
            prop_assert_eq!(
                s.split(v.par_iter()).map(odd).product::<Wrapping<u64>>(),
                v.iter().map(odd).product::<Wrapping<u64>>()
            );
            let par: f64 = s.split(f.par_iter()).sum();
            let seq: f64 = f.iter().sum();
            let scale: f64 = f.iter().map(|x| x.abs()).sum::<f64>() + 1.0;
            prop_assert!((par - seq).abs() <= 1e-9 * scale, "{} vs {}", par, seq);
            let par: f64 = s.split(g.par_iter()).product();
            let seq: f64 = g.iter().product();
            prop_assert!((par - seq).abs() <= 1e-9 * seq.abs(), "{} vs {}", par, seq);
            Ok(())
        })?;
    }

    #[test]
    fn ordered_reductions(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(v.par_iter()).map(|&x| mat_of(x)).reduce(|| IDENTITY, mat_mul),
                v.iter().map(|&x| mat_of(x)).fold(IDENTITY, mat_mul)
            );
            prop_assert_eq!(
                s.split(v.par_iter()).map(|x| format!("{x},")).reduce(String::new, |a, b| a + &b),
                v.iter().map(|x| format!("{x},")).collect::<String>()
            );
            let concat = |mut a: Vec<i64>, mut b: Vec<i64>| {
                a.append(&mut b);
                a
            };
            prop_assert_eq!(
                s.split(v.par_iter()).map(|&x| vec![x]).reduce_with(concat),
                (!v.is_empty()).then(|| v.clone())
            );
            prop_assert_eq!(
                s.split(v.par_iter()).map(|&x| mat_of(x)).reduce_with(mat_mul),
                v.iter().map(|&x| mat_of(x)).reduce(mat_mul)
            );
            let push = |mut acc: Vec<i64>, x: &i64| {
                acc.push(*x);
                acc
            };
            prop_assert_eq!(
                &s.split(v.par_iter()).fold(Vec::new, push).reduce(Vec::new, concat),
                &v
            );
            prop_assert_eq!(
                &s.split(v.par_iter()).fold(Vec::new, push).collect::<Vec<_>>().concat(),
                &v
            );
            prop_assert_eq!(
                s.split(v.par_iter()).fold(|| 0i64, |a, x| a + x).sum::<i64>(),
                v.iter().sum::<i64>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .filter(|x| **x > 0)
                    .fold(String::new, |acc, x| acc + &x.to_string() + ",")
                    .collect::<String>(),
                v.iter().filter(|x| **x > 0).map(|x| format!("{x},")).collect::<String>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .map(|&x| mat_of(x))
                    .fold(|| IDENTITY, mat_mul)
                    .reduce(|| IDENTITY, mat_mul),
                v.iter().map(|&x| mat_of(x)).fold(IDENTITY, mat_mul)
            );
            Ok(())
        })?;
    }

    #[test]
    fn min_and_max_with_ties(v in values(0..20), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(s.split(v.par_iter()).min(), v.iter().min());
            prop_assert_eq!(s.split(v.par_iter()).max(), v.iter().max());
            let keyed = || v.iter().enumerate().map(|(at, &key)| Keyed { key, at });
            let par = || s.split(v.par_iter()).enumerate().map(|(at, &key)| Keyed { key, at });
            // ties: the first of the smallest, the last of the largest, as std
            prop_assert_eq!(par().min().map(|k| k.at), keyed().min().map(|k| k.at));
            prop_assert_eq!(par().max().map(|k| k.at), keyed().max().map(|k| k.at));
            let cmp = |a: &Keyed, b: &Keyed| a.key.cmp(&b.key);
            prop_assert_eq!(par().min_by(cmp).map(|k| k.at), keyed().min_by(cmp).map(|k| k.at));
            prop_assert_eq!(par().max_by(cmp).map(|k| k.at), keyed().max_by(cmp).map(|k| k.at));
            let key = |k: &Keyed| k.key % 7;
            prop_assert_eq!(
                par().min_by_key(key).map(|k| k.at),
                keyed().min_by_key(key).map(|k| k.at)
            );
            prop_assert_eq!(
                par().max_by_key(key).map(|k| k.at),
                keyed().max_by_key(key).map(|k| k.at)
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate()).min_by_key(|p| *p.1),
                v.iter().enumerate().min_by_key(|p| *p.1)
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate()).max_by_key(|p| *p.1),
                v.iter().enumerate().max_by_key(|p| *p.1)
            );
            // after a filter (not indexed)
            prop_assert_eq!(
                par().filter(|k| k.key > 3).max_by_key(key).map(|k| k.at),
                keyed().filter(|k| k.key > 3).max_by_key(key).map(|k| k.at)
            );
            Ok(())
        })?;
    }

    #[test]
    fn counts_and_searches(v in values(0..50), target in 0i64..60, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let is = |x: &i64| *x == target;
            prop_assert_eq!(s.split(v.par_iter()).count(), v.len());
            prop_assert_eq!(
                s.split(v.par_iter()).filter(|x| is(x)).count(),
                v.iter().filter(|x| is(x)).count()
            );
            prop_assert_eq!(s.split(v.par_iter()).any(is), v.iter().any(is));
            prop_assert_eq!(s.split(v.par_iter()).all(|x| !is(x)), v.iter().all(|x| !is(x)));
            prop_assert!(s.split(v.par_iter()).all(|x| *x < 50));
            let exists = v.contains(&target);
            let found = s.split(v.par_iter().enumerate()).find_any(|(_, x)| **x == target);
            prop_assert_eq!(found.is_some(), exists);
            if let Some((i, x)) = found {
                prop_assert!(is(x) && v[i] == *x, "found {} at {}", x, i);
            }
            let found = s.split(v.par_iter()).filter(|x| *x % 2 == 0).find_any(|x| is(x));
            prop_assert_eq!(found.is_some(), exists && target % 2 == 0);
            prop_assert!(found.is_none_or(is));
            prop_assert_eq!(
                s.split(v.par_iter().enumerate()).find_first(|(_, x)| **x == target),
                v.iter().enumerate().find(|(_, x)| **x == target)
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate()).find_last(|(_, x)| **x == target),
                v.iter().enumerate().rfind(|(_, x)| **x == target)
            );
            prop_assert_eq!(
                s.split(v.par_iter().enumerate())
                    .filter(|(i, _)| i % 3 != 0)
                    .find_first(|(_, x)| **x > target),
                v.iter().enumerate().filter(|(i, _)| i % 3 != 0).find(|(_, x)| **x > target)
            );
            let pos = s.split(v.par_iter()).position_any(is);
            prop_assert_eq!(pos.is_some(), exists);
            prop_assert!(pos.is_none_or(|i| is(&v[i])));
            prop_assert_eq!(s.split(v.par_iter()).position_first(is), v.iter().position(is));
            Ok(())
        })?;
    }

    #[test]
    fn collects(v in values(-1000..1000), limit in -1000i64..1100, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(v.par_iter()).map(|x| x * 2).collect::<Vec<_>>(),
                v.iter().map(|x| x * 2).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).filter(|x| **x < limit).collect::<Vec<_>>(),
                v.iter().filter(|x| **x < limit).collect::<Vec<_>>()
            );
            let letter = |x: &i64| char::from(b'a' + x.rem_euclid(26) as u8);
            prop_assert_eq!(
                s.split(v.par_iter()).map(letter).collect::<String>(),
                v.iter().map(letter).collect::<String>()
            );
            let words: Vec<String> = v.iter().map(|x| format!("{x};")).collect();
            prop_assert_eq!(
                s.split(words.par_iter()).map(String::as_str).collect::<String>(),
                words.concat()
            );
            prop_assert_eq!(
                s.split(words.clone().into_par_iter()).collect::<String>(),
                words.concat()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().collect::<HashMap<_, _>>(),
                v.iter().enumerate().collect::<HashMap<_, _>>()
            );
            // repeated keys: the last value wins, as in std
            let pair = |(i, x): (usize, &i64)| (x.rem_euclid(17), i);
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().map(pair).collect::<BTreeMap<_, _>>(),
                v.iter().enumerate().map(pair).collect::<BTreeMap<_, _>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().map(pair).collect::<HashMap<_, _>>(),
                v.iter().enumerate().map(pair).collect::<HashMap<_, _>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).copied().collect::<BTreeSet<_>>(),
                v.iter().copied().collect::<BTreeSet<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter()).collect::<VecDeque<_>>(),
                v.iter().collect::<VecDeque<_>>()
            );
            // the first error in order
            let check = |(i, x): (usize, &i64)| if *x > limit { Err((i, *x)) } else { Ok(*x) };
            prop_assert_eq!(
                s.split(v.par_iter()).enumerate().map(check).collect::<Result<Vec<_>, _>>(),
                v.iter().enumerate().map(check).collect::<Result<Vec<_>, _>>()
            );
            prop_assert_eq!(
                s.split(v.par_iter())
                    .map(|x| (*x <= limit).then_some(x))
                    .collect::<Option<Vec<_>>>(),
                v.iter().map(|x| (*x <= limit).then_some(x)).collect::<Option<Vec<_>>>()
            );
            let mut target = vec![-1i64; 5];
            s.split(v.par_iter()).map(|x| x + 1).collect_into_vec(&mut target);
            prop_assert_eq!(target, v.iter().map(|x| x + 1).collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn team_size_changes_between_calls(
        sizes in proptest::collection::vec(1usize..=4, 1..6),
        v in values(-1000..1000),
        s in setup(),
    ) {
        // a runtime of its own, so that its regions can be counted
        let rt = Runtime::builder()
            .max_threads(4)
            .policy(Cycling::new(sizes.clone()))
            .build()
            .unwrap();
        // After each call: at most one region more, and one more region ran with the team
        // size the policy gave it.
        let mut regions = 0;
        let mut ran = |what: &str| -> Result<(), TestCaseError> {
            let st = rt.stats();
            prop_assert!(
                st.regions <= regions + 1,
                "{}: {} regions after {}",
                what,
                st.regions,
                regions
            );
            if st.regions > regions {
                regions = st.regions;
                let want = sizes[(regions as usize - 1) % sizes.len()];
                prop_assert_eq!(st.last_team, want, "{}", what);
            }
            Ok(())
        };
        rt.install(|| -> Result<(), TestCaseError> {
            for _ in 0..3 {
                prop_assert_eq!(s.split(v.par_iter()).sum::<i64>(), v.iter().sum::<i64>());
                ran("sum")?;
                prop_assert_eq!(
                    s.split(v.par_iter()).map(|&x| mat_of(x)).reduce(|| IDENTITY, mat_mul),
                    v.iter().map(|&x| mat_of(x)).fold(IDENTITY, mat_mul)
                );
                ran("reduce")?;
                prop_assert_eq!(
                    s.split(v.par_iter()).filter(|x| **x % 3 == 0).collect::<Vec<_>>(),
                    v.iter().filter(|x| **x % 3 == 0).collect::<Vec<_>>()
                );
                ran("filtered collect")?;
                prop_assert_eq!(
                    s.split(v.par_iter()).map(|x| x - 1).collect::<Vec<_>>(),
                    v.iter().map(|x| x - 1).collect::<Vec<_>>()
                );
                ran("collect")?;
                let mut w = v.clone();
                s.split(w.par_iter_mut()).for_each(|x| *x = -*x);
                prop_assert!(w.iter().zip(&v).all(|(a, b)| *a == -b));
                ran("par_iter_mut")?;
            }
            Ok(())
        })?;
        // Calls with more than one block ran as regions.
        let blocks = v.len().div_ceil(s.split.min_len.max(1));
        prop_assert_eq!(regions, if blocks > 1 { 15 } else { 0 });
    }

    #[test]
    fn owned_items_are_dropped_once(
        n in 0usize..500,
        k in 0usize..600,
        step in 1usize..5,
        panic_at in 0usize..500,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let (v, drops) = tracked(n);
            prop_assert_eq!(
                s.split(v.into_par_iter()).map(|t| t.id).collect::<Vec<_>>(),
                (0..n).collect::<Vec<_>>()
            );
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            let (v, drops) = tracked(n);
            let ids = s.split(v.into_par_iter()).collect::<Vec<_>>();
            prop_assert!(ids.iter().map(|t| t.id).eq(0..n));
            prop_assert!(drops.iter().all(|d| d.load(Ordering::SeqCst) == 0));
            drop(ids);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            let (v, drops) = tracked(n);
            drop(s.split(v.into_par_iter()));
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            let (v, drops) = tracked(n);
            let seen = AtomicUsize::new(0);
            s.split(v.into_par_iter()).take(k).for_each(|t| {
                assert!(t.id < k);
                seen.fetch_add(1, Ordering::Relaxed);
            });
            prop_assert_eq!(seen.load(Ordering::Relaxed), n.min(k));
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            let (v, drops) = tracked(n);
            prop_assert_eq!(
                s.split(v.into_par_iter()).skip(k).step_by(step).map(|t| t.id).collect::<Vec<_>>(),
                (0..n).skip(k).step_by(step).collect::<Vec<_>>()
            );
            prop_assert_eq!(not_dropped_once(&drops), vec![]);

            // zipped with a shorter iterator, and two owning sources of different lengths
            let (v, drops) = tracked(n);
            prop_assert_eq!(
                s.split(v.into_par_iter()).zip(0..k).filter(|(t, j)| t.id == *j).count(),
                n.min(k)
            );
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            let (v, drops) = tracked(n);
            let (w, wdrops) = tracked(k);
            prop_assert_eq!(
                (s.split(v.into_par_iter()), w)
                    .into_par_iter()
                    .map(|(a, b)| a.id + b.id)
                    .sum::<usize>(),
                (0..n.min(k)).map(|i| 2 * i).sum::<usize>()
            );
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            prop_assert_eq!(not_dropped_once(&wdrops), vec![]);

            // a panicking closure
            let (v, drops) = tracked(n);
            let r = catch_unwind(AssertUnwindSafe(|| {
                s.split(v.into_par_iter()).for_each(|t| assert!(t.id != panic_at, "boom"));
            }));
            prop_assert_eq!(r.is_err(), panic_at < n);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            let (v, drops) = tracked(n);
            let r = catch_unwind(AssertUnwindSafe(|| {
                s.split(v.into_par_iter())
                    .filter(|t| {
                        assert!(t.id != panic_at, "boom");
                        t.id % 2 == 0
                    })
                    .collect::<Vec<_>>()
            }));
            prop_assert_eq!(r.is_err(), panic_at < n);
            drop(r);
            prop_assert_eq!(not_dropped_once(&drops), vec![]);
            // A panic while an indexed collect has written some of the items in place: none
            // is dropped twice. (That each is dropped once is `collect_panic_drops_written_items`.)
            let (v, drops) = tracked(n);
            let r = catch_unwind(AssertUnwindSafe(|| {
                s.split(v.into_par_iter())
                    .map(|t| {
                        assert!(t.id != panic_at, "boom");
                        t
                    })
                    .collect::<Vec<_>>()
            }));
            prop_assert_eq!(r.is_err(), panic_at < n);
            drop(r);
            let wrong = not_dropped_once(&drops);
            prop_assert!(wrong.iter().all(|&(_, d)| d == 0), "{:?}", wrong);
            Ok(())
        })?;
    }

    #[test]
    fn panics_reach_the_caller(
        n in 1usize..2000,
        at in any::<prop::sample::Index>(),
        s in setup(),
    ) {
        let at = at.index(n);
        let boom = |i: usize| {
            if i == at {
                panic!("boom at {i}");
            }
        };
        let expect_boom = |r: std::thread::Result<()>| -> Result<(), TestCaseError> {
            let p = r.err().ok_or_else(|| TestCaseError::fail("the panic was lost"))?;
            prop_assert_eq!(message(&*p), format!("boom at {at}"));
            Ok(())
        };
        s.run(|| -> Result<(), TestCaseError> {
            let items = || s.split((0..n).into_par_iter());
            let all: Vec<usize> = (0..n).collect();
            let concat = |mut a: Vec<usize>, b: Vec<usize>| {
                if let Some(&i) = b.first() {
                    boom(i);
                }
                a.extend(b);
                a
            };
            expect_boom(catch_unwind(AssertUnwindSafe(|| items().for_each(boom))))?;
            prop_assert_eq!(items().sum::<usize>(), all.iter().sum::<usize>());
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items()
                    .map(|i| {
                        boom(i);
                        i
                    })
                    .sum::<usize>();
            })))?;
            prop_assert_eq!(&items().collect::<Vec<_>>(), &all);
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items().map(|i| vec![i]).reduce(Vec::new, concat);
            })))?;
            prop_assert_eq!(
                items().map(|i| vec![i]).reduce_with(|mut a, b| {
                    a.extend(b);
                    a
                }),
                Some(all.clone())
            );
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items()
                    .map(|i| {
                        boom(i);
                        i.to_string()
                    })
                    .collect::<Vec<_>>();
            })))?;
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items()
                    .filter(|&i| {
                        boom(i);
                        i % 2 == 0
                    })
                    .collect::<Vec<_>>();
            })))?;
            prop_assert_eq!(
                items().filter(|i| i % 2 == 0).collect::<Vec<_>>(),
                (0..n).filter(|i| i % 2 == 0).collect::<Vec<_>>()
            );
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items().find_first(|&i| {
                    boom(i);
                    false
                });
            })))?;
            expect_boom(catch_unwind(AssertUnwindSafe(|| {
                items().max_by_key(|&i| {
                    boom(i);
                    i
                });
            })))?;
            prop_assert_eq!(items().max_by_key(|&i| i % 5), (0..n).max_by_key(|&i| i % 5));
            Ok(())
        })?;
    }
}

/// One runtime used by many threads at once, each installing it: calls are regions of it,
/// serialized, and each gets its own result.
#[test]
fn one_runtime_many_callers() {
    for i in 0..RUNTIMES {
        let rt = runtime(i);
        let total = AtomicU64::new(0);
        std::thread::scope(|scope| {
            for t in 0..3u64 {
                let total = &total;
                scope.spawn(move || {
                    rt.install(|| {
                        for _ in 0..20 {
                            let s: u64 = (0..1000u64).into_par_iter().map(|x| x * t).sum();
                            assert_eq!(s, 499_500 * t);
                            total.fetch_add(s, Ordering::Relaxed);
                        }
                    });
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 20 * 499_500 * 3);
    }
}

/// A panic in an indexed `collect` into a `Vec`: the items written in place before it are
/// dropped, as rayon's collect drops them (none leaks).
#[test]
fn collect_panic_drops_written_items() {
    for i in 0..RUNTIMES {
        let (v, drops) = tracked(100);
        let r = catch_unwind(AssertUnwindSafe(|| {
            runtime(i).install(|| {
                v.into_par_iter()
                    .map(|t| {
                        assert!(t.id != 99, "boom");
                        t
                    })
                    .collect::<Vec<_>>()
            })
        }));
        assert!(r.is_err());
        assert_eq!(not_dropped_once(&drops), vec![], "runtime {i}");
    }
}
