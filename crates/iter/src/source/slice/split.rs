//! `par_split`, `par_split_inclusive` and `par_chunk_by` on slices, and their `_mut` forms.
//!
//! The shared forms are unindexed: each range of element indices yields the pieces that start
//! in it, as [`splitter`](crate::splitter) says (the predicate may be called more than once for
//! an element).
//!
//! The `_mut` forms cannot let a range read past its end (another thread may hold those
//! elements mutably), so they find their pieces first: on the first call that needs them (the
//! terminal call asking for the length), one parallel pass over the slice, each thread
//! testing the elements it holds, lists the separators (or the ends of runs); the pieces
//! between them are then handed out by index, as an indexed iterator. The pass is a parallel
//! call of its own (on tasks when nested in another), and its list costs a `Range` per piece.

use std::fmt::Debug;
use std::ops::Range;
use std::sync::OnceLock;

use super::chunks::ChunksMut;
use crate::internal::fmt::debug_fields;
use crate::internal::plumbing::{DoubleEndedProducer, Producer};
use crate::internal::raw::RawSlice;
use crate::internal::splitter::{SliceHay, SplitSeq};
use crate::{IndexedParallelIterator, IntoParallelRefMutIterator, ParallelIterator};

/// `par_split(sep)` (`INCLUSIVE = false`) and `par_split_inclusive(sep)`: the subslices
/// between the elements `sep` holds for (with the separator at their end, inclusive).
#[derive(Clone)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct SplitBy<'data, T, P, const INCLUSIVE: bool> {
    pub(crate) slice: &'data [T],
    pub(crate) sep: P,
}

debug_fields!(
    impl['data, T: Debug, P, const INCLUSIVE: bool] SplitBy<'data, T, P, INCLUSIVE> { slice }
);

/// `par_split(sep)`: the subslices between separators, as std's `split`.
pub type Split<'data, T, P> = SplitBy<'data, T, P, false>;

/// `par_split_inclusive(sep)`: the subslices ending with a separator (the last one may end
/// without), as std's `split_inclusive`.
pub type SplitInclusive<'data, T, P> = SplitBy<'data, T, P, true>;

impl<'data, T, P, const INCLUSIVE: bool> Producer for SplitBy<'data, T, P, INCLUSIVE>
where
    T: Sync,
    P: Fn(&T) -> bool + Send + Sync,
{
    type Item = &'data [T];
    type Seq<'a>
        = SplitSeq<SliceHay<'a, 'data, T, P>>
    where
        Self: 'a;

    /// One index per element, and one more for `split` (the empty piece after a separator at
    /// the end, or the one piece of an empty slice).
    fn base_len(&self) -> usize {
        self.slice.len() + usize::from(!INCLUSIVE)
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let hay = SliceHay {
            slice: self.slice,
            sep: &self.sep,
        };
        SplitSeq::new(hay, range, INCLUSIVE)
    }
}

/// `par_chunk_by(pred)`: the runs of consecutive elements for which `pred(a, b)` holds for
/// each pair of neighbours `a`, `b`, as std's `chunk_by`.
#[derive(Clone)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct ChunkBy<'data, T, P> {
    pub(crate) slice: &'data [T],
    pub(crate) pred: P,
}

debug_fields!(impl['data, T: Debug, P] ChunkBy<'data, T, P> { slice });

impl<'data, T, P> Producer for ChunkBy<'data, T, P>
where
    T: Sync,
    P: Fn(&T, &T) -> bool + Send + Sync,
{
    type Item = &'data [T];
    type Seq<'a>
        = ChunkBySeq<'a, 'data, T, P>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.slice.len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        let seq = |start| ChunkBySeq {
            slice: self.slice,
            pred: &self.pred,
            start,
            end: range.end,
        };
        let first = if range.start == 0 {
            (!range.is_empty()).then_some(0)
        } else {
            seq(None).run_start(range.start)
        };
        seq(first)
    }
}

/// The sequential side of [`ChunkBy`]: the runs that start in one range.
pub struct ChunkBySeq<'a, 'data, T, P> {
    slice: &'data [T],
    pred: &'a P,
    start: Option<usize>,
    end: usize,
}

debug_fields!(impl['a, 'data, T: Debug, P] ChunkBySeq<'a, 'data, T, P> { slice, start, end });

impl<T, P: Fn(&T, &T) -> bool> ChunkBySeq<'_, '_, T, P> {
    /// The first index at or after `from` and before `end` where a run starts.
    fn run_start(&self, from: usize) -> Option<usize> {
        (from.max(1)..self.end).find(|&i| !(self.pred)(&self.slice[i - 1], &self.slice[i]))
    }
}

impl<'data, T, P: Fn(&T, &T) -> bool> Iterator for ChunkBySeq<'_, 'data, T, P> {
    type Item = &'data [T];

    #[inline]
    fn next(&mut self) -> Option<&'data [T]> {
        let start = self.start?;
        let len = self.slice.len();
        let end = (start + 1..len)
            .find(|&i| !(self.pred)(&self.slice[i - 1], &self.slice[i]))
            .unwrap_or(len);
        self.start = (end < self.end).then_some(end);
        Some(&self.slice[start..end])
    }
}

/// How a `_mut` split finds its pieces: see the [module docs](self).
pub trait FindPieces<T>: Send + Sync {
    /// The pieces of `slice`, in order, disjoint.
    fn pieces(&self, slice: &mut [T]) -> Vec<Range<usize>>;
}

/// The separators of `par_split_mut` and `par_split_inclusive_mut`.
#[derive(Clone)]
pub struct Separators<P, const INCLUSIVE: bool>(pub(crate) P);

debug_fields!(impl[P, const INCLUSIVE: bool] Separators<P, INCLUSIVE> (..));

impl<T: Send, P, const INCLUSIVE: bool> FindPieces<T> for Separators<P, INCLUSIVE>
where
    P: Fn(&T) -> bool + Send + Sync,
{
    fn pieces(&self, slice: &mut [T]) -> Vec<Range<usize>> {
        let len = slice.len();
        let seps: Vec<usize> = slice.par_iter_mut().positions(|x| (self.0)(&*x)).collect();
        let mut start = 0;
        let mut pieces = Vec::with_capacity(seps.len() + 1);
        for sep in seps {
            pieces.push(start..sep + usize::from(INCLUSIVE));
            start = sep + 1;
        }
        // The piece after the last separator: `split_inclusive` has none when it is empty.
        if !INCLUSIVE || start < len {
            pieces.push(start..len);
        }
        pieces
    }
}

/// The run test of `par_chunk_by_mut`.
#[derive(Clone)]
pub struct Runs<P>(pub(crate) P);

debug_fields!(impl[P] Runs<P> (..));

/// The elements each member of `par_chunk_by_mut`'s pass tests at a time.
const RUN_BLOCK: usize = 1024;

impl<T: Send, P> FindPieces<T> for Runs<P>
where
    P: Fn(&T, &T) -> bool + Send + Sync,
{
    fn pieces(&self, slice: &mut [T]) -> Vec<Range<usize>> {
        let len = slice.len();
        if len == 0 {
            return Vec::new();
        }
        // Run starts within blocks, found in parallel; then those at the blocks' edges.
        let blocks = ChunksMut {
            raw: RawSlice::new(slice),
            size: RUN_BLOCK,
        };
        let within: Vec<usize> = blocks
            .enumerate()
            .flat_map_iter(|(b, block)| {
                let breaks: Vec<usize> = (1..block.len())
                    .filter(|&i| !(self.0)(&block[i - 1], &block[i]))
                    .map(|i| b * RUN_BLOCK + i)
                    .collect();
                breaks
            })
            .collect();
        let mut edges = (RUN_BLOCK..len)
            .step_by(RUN_BLOCK)
            .filter(|&i| !(self.0)(&slice[i - 1], &slice[i]))
            .peekable();
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut within = within.into_iter().peekable();
        // Merge the two sorted lists of run starts.
        loop {
            let next = match (within.peek(), edges.peek()) {
                (Some(&a), Some(&b)) if a < b => within.next(),
                (_, Some(_)) => edges.next(),
                (Some(_), None) => within.next(),
                (None, None) => None,
            };
            let Some(next) = next else { break };
            pieces.push(start..next);
            start = next;
        }
        pieces.push(start..len);
        pieces
    }
}

/// The `_mut` splits: `&mut [T]` pieces found by `F` on first use, handed out by index.
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct PiecesMut<'data, T, F> {
    pub(crate) raw: RawSlice<'data, T>,
    pub(crate) find: F,
    pub(crate) pieces: OnceLock<Vec<Range<usize>>>,
}

/// `par_split_mut(sep)`: the mutable subslices between separators.
pub type SplitMut<'data, T, P> = PiecesMut<'data, T, Separators<P, false>>;

/// `par_split_inclusive_mut(sep)`: the mutable subslices ending with a separator.
pub type SplitInclusiveMut<'data, T, P> = PiecesMut<'data, T, Separators<P, true>>;

/// `par_chunk_by_mut(pred)`: the mutable runs of elements whose neighbours `pred` holds for.
pub type ChunkByMut<'data, T, P> = PiecesMut<'data, T, Runs<P>>;

impl<T, F> std::fmt::Debug for PiecesMut<'_, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PiecesMut")
            .field("len", &self.raw.len())
            .field("pieces", &self.pieces.get().map(Vec::len))
            .finish_non_exhaustive()
    }
}

impl<'data, T: Send, F: FindPieces<T>> PiecesMut<'data, T, F> {
    pub(crate) fn new(slice: &'data mut [T], find: F) -> Self {
        Self {
            raw: RawSlice::new(slice),
            find,
            pieces: OnceLock::new(),
        }
    }

    /// The pieces, found on the first call.
    fn pieces(&self) -> &[Range<usize>] {
        self.pieces.get_or_init(|| {
            // SAFETY: no element has been handed out yet: `seq` gets its pieces from here
            // first, and `OnceLock` runs this once, to its end, before it lets any caller see
            // the pieces. So this is the only reference to the elements while it lives.
            let all = unsafe { self.raw.slice_mut(0..self.raw.len()) };
            self.find.pieces(all)
        })
    }
}

impl<'data, T: Send + 'data, F: FindPieces<T>> Producer for PiecesMut<'data, T, F> {
    type Item = &'data mut [T];
    type Seq<'a>
        = PiecesSeq<'a, 'data, T, std::slice::Iter<'a, Range<usize>>>
    where
        Self: 'a;
    const EXACT: bool = true;

    fn base_len(&self) -> usize {
        self.pieces().len()
    }

    #[inline]
    unsafe fn seq(&self, r: Range<usize>) -> Self::Seq<'_> {
        PiecesSeq {
            raw: &self.raw,
            pieces: self.pieces()[r].iter(),
        }
    }
}

impl<'data, T: Send + 'data, F: FindPieces<T>> IndexedParallelIterator for PiecesMut<'data, T, F> {}

impl<'data, T: Send + 'data, F: FindPieces<T>> DoubleEndedProducer for PiecesMut<'data, T, F> {
    type SeqRev<'a>
        = PiecesSeq<'a, 'data, T, std::iter::Rev<std::slice::Iter<'a, Range<usize>>>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, r: Range<usize>) -> Self::SeqRev<'_> {
        PiecesSeq {
            raw: &self.raw,
            pieces: self.pieces()[r].iter().rev(),
        }
    }
}

/// The sequential side of [`PiecesMut`].
#[derive(Debug)]
pub struct PiecesSeq<'a, 'data, T, J> {
    raw: &'a RawSlice<'data, T>,
    pieces: J,
}

impl<'a, 'data, T, J: Iterator<Item = &'a Range<usize>>> Iterator for PiecesSeq<'a, 'data, T, J> {
    type Item = &'data mut [T];

    #[inline]
    fn next(&mut self) -> Option<&'data mut [T]> {
        let piece = self.pieces.next()?.clone();
        // SAFETY: the pieces are disjoint ranges of the slice, and each is handed out once:
        // by the range that holds its index (Producer rule: no index twice).
        Some(unsafe { self.raw.slice_mut(piece) })
    }
}
