//! A program's own parallel iterators, written as `asat::iter::plumbing` documents them: the
//! rows of a sparse matrix in compressed-row form, shared (`Rows`) and with mutable values
//! (`RowsMut`, a raw pointer and the protocol's disjoint-ranges rule), give what sequential loops
//! give under every team size and splitting hint; a producer that records the ranges asked of it
//! sees each index once, whatever adapters and schedule stand between it and the call; and a
//! producer that breaks its promise of one item per index (safe code can) makes `collect` panic
//! or drop the extra items, never expose memory it did not write, and one whose length changes
//! during a call makes it panic.

mod iter_support;

use asat::iter::plumbing::{DoubleEndedProducer, Producer};
use asat::prelude::*;
use asat::Schedule;
use iter_support::*;
use proptest::prelude::*;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Row `i`'s entries are at `ptr[i]..ptr[i + 1]`.
#[derive(Clone, Debug)]
struct Csr {
    ptr: Vec<usize>,
    col: Vec<usize>,
    val: Vec<f64>,
}

impl Csr {
    fn rows(&self) -> impl Iterator<Item = (&[usize], &[f64])> {
        self.ptr
            .windows(2)
            .map(|w| (&self.col[w[0]..w[1]], &self.val[w[0]..w[1]]))
    }
}

fn csr(cols: usize) -> impl Strategy<Value = Csr> {
    let row = proptest::collection::vec((0..cols, -100i32..100), 0..6);
    let n = prop_oneof![0usize..4, 0usize..400];
    n.prop_flat_map(move |n| proptest::collection::vec(row.clone(), n))
        .prop_map(|rows| {
            let mut m = Csr {
                ptr: vec![0],
                col: vec![],
                val: vec![],
            };
            for row in rows {
                for (j, a) in row {
                    m.col.push(j);
                    m.val.push(f64::from(a));
                }
                m.ptr.push(m.col.len());
            }
            m
        })
}

struct Rows<'a>(&'a Csr);

struct RowsSeq<'a> {
    m: &'a Csr,
    at: Range<usize>,
}

impl<'a> RowsSeq<'a> {
    fn row(&self, i: usize) -> (&'a [usize], &'a [f64]) {
        let r = self.m.ptr[i]..self.m.ptr[i + 1];
        (&self.m.col[r.clone()], &self.m.val[r])
    }
}

impl<'a> Iterator for RowsSeq<'a> {
    type Item = (&'a [usize], &'a [f64]);
    fn next(&mut self) -> Option<Self::Item> {
        self.at.next().map(|i| self.row(i))
    }
}

impl DoubleEndedIterator for RowsSeq<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.at.next_back().map(|i| self.row(i))
    }
}

impl<'a> Producer for Rows<'a> {
    type Item = (&'a [usize], &'a [f64]);
    type Seq<'s>
        = RowsSeq<'a>
    where
        Self: 's;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        self.0.ptr.len() - 1
    }

    unsafe fn seq(&self, range: Range<usize>) -> RowsSeq<'a> {
        RowsSeq {
            m: self.0,
            at: range,
        }
    }
}

impl<'a> DoubleEndedProducer for Rows<'a> {
    type SeqRev<'s>
        = std::iter::Rev<RowsSeq<'a>>
    where
        Self: 's;

    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        RowsSeq {
            m: self.0,
            at: range,
        }
        .rev()
    }
}

impl IndexedParallelIterator for Rows<'_> {}

/// The rows with their values mutable: `(columns, &mut values)`.
struct RowsMut<'a> {
    ptr: &'a [usize],
    col: &'a [usize],
    val: *mut f64,
    _values: PhantomData<&'a mut [f64]>,
}

impl<'a> RowsMut<'a> {
    fn new(m: &'a mut Csr) -> Self {
        RowsMut {
            ptr: &m.ptr,
            col: &m.col,
            val: m.val.as_mut_ptr(),
            _values: PhantomData,
        }
    }
}

// SAFETY: the values are reached only through `seq`/`seq_rev`, whose callers never ask for an
// index twice, so the rows' value slices handed to different threads never overlap; the
// `&mut [f64]` this stands for is `Send` and `Sync`.
unsafe impl Send for RowsMut<'_> {}
// SAFETY: as for `Send`: sharing `&RowsMut` gives out only disjoint rows.
unsafe impl Sync for RowsMut<'_> {}

struct RowsMutSeq<'a> {
    ptr: &'a [usize],
    col: &'a [usize],
    val: *mut f64,
    at: Range<usize>,
    _values: PhantomData<&'a mut [f64]>,
}

impl<'a> RowsMutSeq<'a> {
    fn row(&self, i: usize) -> (&'a [usize], &'a mut [f64]) {
        let (a, b) = (self.ptr[i], self.ptr[i + 1]);
        // SAFETY: `a..b` lies within the values (`ptr` is the matrix's), row `i` is in a range
        // its producer was asked for once, and this iterator yields each of its rows once.
        let val = unsafe { std::slice::from_raw_parts_mut(self.val.add(a), b - a) };
        (&self.col[a..b], val)
    }
}

impl<'a> Iterator for RowsMutSeq<'a> {
    type Item = (&'a [usize], &'a mut [f64]);
    fn next(&mut self) -> Option<Self::Item> {
        self.at.next().map(|i| self.row(i))
    }
}

impl DoubleEndedIterator for RowsMutSeq<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.at.next_back().map(|i| self.row(i))
    }
}

impl<'a> RowsMut<'a> {
    fn at(&self, at: Range<usize>) -> RowsMutSeq<'a> {
        RowsMutSeq {
            ptr: self.ptr,
            col: self.col,
            val: self.val,
            at,
            _values: PhantomData,
        }
    }
}

impl<'a> Producer for RowsMut<'a> {
    type Item = (&'a [usize], &'a mut [f64]);
    type Seq<'s>
        = RowsMutSeq<'a>
    where
        Self: 's;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        self.ptr.len() - 1
    }

    unsafe fn seq(&self, range: Range<usize>) -> RowsMutSeq<'a> {
        self.at(range)
    }
}

impl<'a> DoubleEndedProducer for RowsMut<'a> {
    type SeqRev<'s>
        = std::iter::Rev<RowsMutSeq<'a>>
    where
        Self: 's;

    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        self.at(range).rev()
    }
}

impl IndexedParallelIterator for RowsMut<'_> {}

/// Indices `0..n` as items, recording every range asked for.
struct Recorder {
    n: usize,
    asked: Mutex<Vec<Range<usize>>>,
}

impl Recorder {
    fn new(n: usize) -> Self {
        Recorder {
            n,
            asked: Mutex::new(vec![]),
        }
    }

    /// How many times each index was asked for.
    fn counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.n];
        for r in self.asked.lock().unwrap().iter() {
            for i in r.clone() {
                counts[i] += 1;
            }
        }
        counts
    }
}

impl Producer for &Recorder {
    type Item = usize;
    type Seq<'s>
        = Range<usize>
    where
        Self: 's;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        self.n
    }

    unsafe fn seq(&self, range: Range<usize>) -> Range<usize> {
        self.asked.lock().unwrap().push(range.clone());
        range
    }
}

impl DoubleEndedProducer for &Recorder {
    type SeqRev<'s>
        = std::iter::Rev<Range<usize>>
    where
        Self: 's;

    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        self.asked.lock().unwrap().push(range.clone());
        range.rev()
    }
}

impl IndexedParallelIterator for &Recorder {}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn shared_rows_as_sequential_loops(m in csr(50), s in setup()) {
        let x: Vec<f64> = (0..50).map(|j| f64::from(j) - 20.0).collect();
        let seq_y: Vec<f64> = m
            .rows()
            .map(|(c, v)| c.iter().zip(v).map(|(&j, a)| a * x[j]).sum())
            .collect();
        let n = m.ptr.len() - 1;
        s.run(|| -> Result<(), TestCaseError> {
            let mut y = vec![f64::NAN; n];
            s.split(Rows(&m)).zip(&mut y).for_each(|((c, v), y)| {
                *y = c.iter().zip(v).map(|(&j, a)| a * x[j]).sum();
            });
            prop_assert_eq!(&y, &seq_y);
            let lens: Vec<usize> = s.split(Rows(&m)).map(|(c, _)| c.len()).collect();
            prop_assert_eq!(&lens, &m.rows().map(|(c, _)| c.len()).collect::<Vec<_>>());
            let rev: Vec<usize> = s.split(Rows(&m)).rev().map(|(c, _)| c.len()).collect();
            prop_assert_eq!(rev, lens.iter().rev().copied().collect::<Vec<_>>());
            let nonzeros: usize = s.split(Rows(&m)).map(|(c, _)| c.len()).sum();
            prop_assert_eq!(nonzeros, m.col.len());
            let empty = s.split(Rows(&m)).filter(|(c, _)| c.is_empty()).count();
            prop_assert_eq!(empty, m.rows().filter(|(c, _)| c.is_empty()).count());
            let every_3rd: Vec<usize> = s
                .split(Rows(&m))
                .skip(1)
                .step_by(3)
                .map(|(c, _)| c.len())
                .collect();
            prop_assert_eq!(every_3rd, lens.iter().skip(1).step_by(3).copied().collect::<Vec<_>>());
            Ok(())
        })?;
    }

    #[test]
    fn mutable_rows_as_sequential_loops(m in csr(50), s in setup()) {
        let mut want = m.clone();
        for (i, w) in want.ptr.windows(2).enumerate() {
            for (a, &j) in want.val[w[0]..w[1]].iter_mut().zip(&want.col[w[0]..w[1]]) {
                *a = *a * (i + 1) as f64 + j as f64;
            }
        }
        let mut got = m.clone();
        s.run(|| {
            s.split(RowsMut::new(&mut got)).enumerate().for_each(|(i, (c, v))| {
                for (a, &j) in v.iter_mut().zip(c) {
                    *a = *a * (i + 1) as f64 + j as f64;
                }
            });
        });
        prop_assert_eq!(&got.val, &want.val);
        // Rows back to front, with the values of each row reversed: every value once.
        s.run(|| {
            s.split(RowsMut::new(&mut got)).rev().for_each(|(_, v)| v.reverse());
        });
        for (w, v) in want.ptr.windows(2).zip(want.rows().map(|(_, v)| v.to_vec())) {
            let reversed: Vec<f64> = v.into_iter().rev().collect();
            prop_assert_eq!(&got.val[w[0]..w[1]], &reversed[..]);
        }
    }

    #[test]
    fn every_index_asked_for_once(n in len(), skip in 0usize..50, step in 1usize..5, s in setup()) {
        let whole = Recorder::new(n);
        let sum: usize = s.run(|| s.split(&whole).sum());
        prop_assert_eq!(sum, (0..n).sum::<usize>());
        prop_assert!(whole.counts().iter().all(|&c| c == 1), "{:?}", whole.counts());

        let part = Recorder::new(n);
        let want: Vec<usize> = (0..n).rev().skip(skip).step_by(step).collect();
        let got: Vec<usize> = s.run(|| s.split((&part).rev().skip(skip).step_by(step)).collect());
        prop_assert_eq!(got, want);
        prop_assert!(part.counts().iter().all(|&c| c <= 1), "{:?}", part.counts());
    }
}

#[test]
fn a_panic_in_a_custom_source_call_leaves_the_runtime_usable() {
    let mut m = Csr {
        ptr: (0..=1000).collect(),
        col: vec![0; 1000],
        val: vec![1.0; 1000],
    };
    for rt in 0..RUNTIMES {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runtime(rt).install(|| {
                RowsMut::new(&mut m).enumerate().for_each(|(i, (_, v))| {
                    assert!(i != 700, "row 700");
                    v[0] += 1.0;
                })
            })
        }));
        assert_eq!(message(&*caught.unwrap_err()), "row 700");
        let nonzeros: usize = runtime(rt).install(|| Rows(&m).map(|(c, _)| c.len()).sum());
        assert_eq!(nonzeros, 1000, "runtime {rt}");
    }
}

/// How [`Faulty`] breaks its promises.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    /// One item fewer than each non-empty range has indices.
    Short,
    /// One item more.
    Long,
    /// A length that grows by `n` at every reading after the first.
    Grows,
}

/// Indices as items, from a producer that says it is indexed and breaks its word.
struct Faulty {
    n: usize,
    fault: Fault,
    reads: AtomicUsize,
}

impl Faulty {
    fn new(n: usize, fault: Fault) -> Self {
        Faulty {
            n,
            fault,
            reads: AtomicUsize::new(0),
        }
    }
}

impl Producer for Faulty {
    type Item = usize;
    type Seq<'s>
        = Range<usize>
    where
        Self: 's;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        match self.fault {
            Fault::Grows => self.n * (1 + self.reads.fetch_add(1, Ordering::Relaxed)),
            _ => self.n,
        }
    }

    unsafe fn seq(&self, r: Range<usize>) -> Range<usize> {
        match (r.is_empty(), self.fault) {
            (false, Fault::Short) => r.start..r.end - 1,
            (false, Fault::Long) => r.start..r.end + 1,
            _ => r,
        }
    }
}

#[test]
fn a_producer_that_miscounts_its_items_never_exposes_unwritten_memory() {
    let n = 1000;
    for rt in 0..RUNTIMES {
        for schedule in [Schedule::Static, Schedule::dynamic(7)] {
            let (items, drops) = tracked(n);
            let items: Vec<Mutex<Option<Tracked>>> =
                items.into_iter().map(|t| Mutex::new(Some(t))).collect();
            let mut target: Vec<Tracked> = vec![];
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                runtime(rt).install(|| {
                    let short = Faulty::new(n, Fault::Short).with_schedule(schedule);
                    target.par_extend(short.map(|i| items[i].lock().unwrap().take().unwrap()));
                })
            }));
            let msg = message(&*caught.unwrap_err());
            assert!(
                msg.contains("an indexed producer yielded"),
                "runtime {rt}: {msg}"
            );
            assert!(target.is_empty(), "runtime {rt}: {} items", target.len());
            drop(items);
            let twice: Vec<usize> = (0..n)
                .filter(|&i| drops[i].load(Ordering::SeqCst) > 1)
                .collect();
            assert!(twice.is_empty(), "runtime {rt}: dropped twice: {twice:?}");

            let long = Faulty::new(n, Fault::Long).with_schedule(schedule);
            let got: Vec<usize> = runtime(rt).install(|| long.collect());
            assert_eq!(got, (0..n).collect::<Vec<_>>(), "runtime {rt}");
        }
    }
}

#[test]
fn a_producer_whose_length_changes_makes_collect_panic() {
    for rt in 0..RUNTIMES {
        let mut target = vec![7usize; 3];
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runtime(rt).install(|| {
                target.par_extend(Faulty::new(1000, Fault::Grows));
            })
        }));
        let msg = message(&*caught.unwrap_err());
        assert!(
            msg.contains("length changed during a call"),
            "runtime {rt}: {msg}"
        );
        assert_eq!(target, [7, 7, 7], "runtime {rt}");
        let after: usize = runtime(rt).install(|| (0..1000usize).into_par_iter().sum());
        assert_eq!(after, 499_500, "runtime {rt}");
    }
}
