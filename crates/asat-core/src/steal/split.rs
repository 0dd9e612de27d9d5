//! Loops on the work-stealing engine: a range folded in pieces that splits its rest in two
//! when a thread of the runtime looks for work (lazy binary splitting, on the heartbeat).
//!
//! # Protocol
//!
//! A thread folds its range one piece after another, in order, and reads the clock after each
//! piece. A piece's length adapts to the items' cost so that a piece takes about
//! [`PIECE_TIME`]: it starts at the call's minimum and doubles while pieces take less than half
//! of that, halves while they take more than twice (never below the minimum nor above the
//! maximum), so a clock read costs well under 1% of a piece and a thief never waits long for
//! one to end.
//!
//! Before each piece the thread asks its beat, as a `join` does (see the module docs of
//! `steal`): when the beat is due (a thread searches, or sleepers wait a heartbeat), the
//! thread shares its oldest private frame if it has one (an enclosing join's `b`, which holds
//! more work than this loop's rest), and otherwise splits the rest in two halves: a `join`
//! whose `b`, the second half folded from `identity()`, is shared at once. The thief of a
//! half starts with its beat due, so it passes half of its half on at once while others
//! search: a loop spreads from its largest untaken rest, in as many steps as doublings of
//! the threads. The halves' results are combined in index order, so a fold need only be
//! associative.
//!
//! A thread whose last piece was coarse, a quarter heartbeat or more an item
//! (`beat::coarse`), splits the loop it is in, or starts next, before each piece, beat or
//! not, down to single pieces, as rayon's loops split: a split costs a frame and a push,
//! nothing beside such items, where waiting for the beat left the other threads idle for a
//! whole item at each inner loop's start (loops of loops of 2 ms items on 8 threads: 1.18-1.23x
//! the ideal time, 1.05-1.06x so). The first piece of a thread's first coarse loop still runs
//! before it knows.
//!
//! A loop nobody asks work from, on a thread whose last piece was fine, is one sequential
//! fold in pieces: no frame, no wake-up.
//!
//! A panic in a piece ends that piece only: the fold goes on from `identity()`, every other
//! piece runs, and the first panic is raised again once they have (as rayon runs every piece
//! of a loop but the panicking one). A panic of `identity` or `combine` is `join`'s.

use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::{beat, ctx, join, Ctx};
use crate::payload::{drop_payload, Payload};
use crate::{Runtime, Schedule};

/// How long a loop's piece takes, about, between two looks at the thread's beat.
pub(crate) const PIECE_TIME: Duration = Duration::from_micros(4);

/// The shortest and longest piece of a loop on tasks ([`Runtime::fold_adaptive`]), in indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceLen {
    /// No piece is shorter (but the whole range when it is), and a range shorter than twice
    /// this is not split (rayon's `with_min_len`); 0 counts as 1.
    pub min: usize,
    /// No piece is longer (rayon's `with_max_len`); 0 or `usize::MAX`: no maximum. A minimum
    /// above it wins.
    pub max: usize,
}

impl PieceLen {
    /// Pieces of any length.
    pub const ANY: PieceLen = PieceLen { min: 1, max: 0 };

    /// The pieces of a loop on tasks under `schedule`: at most its chunk, for a schedule of
    /// chunks of one length (`Dynamic`, `StaticChunked`), else of any length.
    pub fn of(schedule: Schedule) -> PieceLen {
        let max = match schedule {
            Schedule::Dynamic { chunk } | Schedule::StaticChunked { chunk } => chunk,
            _ => 0,
        };
        PieceLen { min: 1, max }
    }

    fn min(self) -> usize {
        self.min.max(1)
    }

    fn max(self) -> usize {
        match self.max {
            0 => usize::MAX,
            m => m.max(self.min()),
        }
    }
}

/// The length of the next piece after one of `piece` indices that took `took`: see the
/// module docs.
pub(crate) fn next_piece(piece: usize, took: Duration, len: PieceLen) -> usize {
    let next = if took < PIECE_TIME / 2 {
        piece.saturating_mul(2)
    } else if took > PIECE_TIME * 2 {
        piece / 2
    } else {
        piece
    };
    next.clamp(len.min(), len.max())
}

/// How many of `left` indices the next piece of `piece` (within `len`) takes: `piece`, or when
/// that would leave fewer than the minimum, all of them if that is within the maximum, else
/// all but the minimum.
pub(crate) fn cut(left: usize, piece: usize, len: PieceLen) -> usize {
    if left <= piece {
        left
    } else if left - piece >= len.min() {
        piece
    } else if left <= len.max() {
        left
    } else {
        left - len.min()
    }
}

/// A fold's parts, shared by the threads that run its halves.
pub(crate) struct Fold<'f, T> {
    pub(crate) identity: &'f (dyn Fn() -> T + Sync),
    pub(crate) fold: &'f (dyn Fn(T, Range<usize>) -> T + Sync),
    pub(crate) combine: &'f (dyn Fn(T, T) -> T + Sync),
    pub(crate) done: &'f (dyn Fn(usize) -> bool + Sync),
    pub(crate) len: PieceLen,
    /// The first panic of a piece, raised again once the fold is over.
    pub(crate) panic: Mutex<Option<Payload>>,
}

impl<T: Send> Fold<'_, T> {
    /// Folds `r` into `acc` on the thread of `c`, splitting as the module docs say.
    fn here(&self, c: &Ctx<'_>, mut r: Range<usize>, mut acc: T) -> T {
        let min = self.len.min();
        let mut piece = min;
        let mut last = Instant::now();
        loop {
            if r.is_empty() || (self.done)(r.start) {
                return acc;
            }
            if r.len() >= min.saturating_mul(2) && c.split_now(last) {
                let mid = r.start + r.len() / 2;
                let (left, right) = (r.start..mid, mid..r.end);
                let (a, b) = join::join_here::<true, _, _, _, _>(
                    c,
                    move || self.on_this_thread(left, acc),
                    move || self.on_this_thread(right, (self.identity)()),
                );
                return (self.combine)(a, b);
            }
            let n = cut(r.len(), piece, self.len);
            acc = self.piece(acc, r.start..r.start + n);
            r.start += n;
            let now = Instant::now();
            let coarse = beat::coarse(u32::try_from(n).unwrap_or(u32::MAX), now - last);
            c.coarse_items.set(coarse);
            piece = next_piece(piece, now - last, self.len);
            last = now;
        }
    }

    /// Folds one piece into `acc`; after a panic, which it keeps if it is the fold's first,
    /// `identity()` instead.
    fn piece(&self, acc: T, r: Range<usize>) -> T {
        match catch_unwind(AssertUnwindSafe(|| (self.fold)(acc, r))) {
            Ok(acc) => acc,
            Err(p) => {
                let mut first = self.panic.lock();
                match *first {
                    None => *first = Some(p),
                    Some(_) => drop_payload(p),
                }
                drop(first);
                (self.identity)()
            }
        }
    }

    /// [`Fold::here`] on the `Ctx` of the thread that runs it (a half may be stolen).
    fn on_this_thread(&self, r: Range<usize>, acc: T) -> T {
        ctx::with(|c| match c {
            Some(c) => self.here(c, r, acc),
            // A half runs only as a task, on a thread with a `Ctx`.
            None => self.serial(r, acc),
        })
    }

    /// Folds `r` into `acc` on the calling thread alone, in pieces of at most the maximum.
    fn serial(&self, mut r: Range<usize>, mut acc: T) -> T {
        while !r.is_empty() && !(self.done)(r.start) {
            let n = cut(r.len(), self.len.max(), self.len);
            acc = self.piece(acc, r.start..r.start + n);
            r.start += n;
        }
        acc
    }
}

impl Runtime {
    /// Folds `range` on the runtime's work-stealing engine: `fold(acc, piece)` over pieces of
    /// the range in order, each half of a split starting from `identity()`, the halves'
    /// results combined in index order with `combine` (associative; `identity()` its
    /// identity). The range splits only when a thread of the pool looks for work, so a short
    /// fold runs on the calling thread alone; pieces adapt to the items' cost and stay within
    /// `len`. `done(start)` is asked before each piece with its first index: once it is true,
    /// that piece and the rest of its half are skipped (a search whose answer lies before).
    ///
    /// Called from a thread that runs the runtime's tasks (inside a `join`, a stolen task, a
    /// loop on tasks), the fold is a task of that thread; from outside, it runs as `join`'s
    /// calls from outside do (on the calling thread as the pool's index 0, or handed to the
    /// workers). This is how parallel iterators run a loop started inside a task or beside
    /// another thread's call; a region ([`Runtime::parallel_for_chunks`]) keeps the static
    /// split of HPC loops.
    ///
    /// ```
    /// use asat_core::PieceLen;
    ///
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let sum = pool.fold_adaptive(
    ///     0..1000,
    ///     PieceLen::ANY,
    ///     || 0u64,
    ///     |acc, r| acc + r.map(|i| i as u64).sum::<u64>(),
    ///     |a, b| a + b,
    ///     |_| false,
    /// );
    /// assert_eq!(sum, 499_500);
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn fold_adaptive<T, ID, F, C, D>(
        &self,
        range: Range<usize>,
        len: PieceLen,
        identity: ID,
        fold: F,
        combine: C,
        done: D,
    ) -> T
    where
        T: Send,
        ID: Fn() -> T + Sync,
        F: Fn(T, Range<usize>) -> T + Sync,
        C: Fn(T, T) -> T + Sync,
        D: Fn(usize) -> bool + Sync,
    {
        let f = Fold {
            identity: &identity,
            fold: &fold,
            combine: &combine,
            done: &done,
            len,
            panic: Mutex::new(None),
        };
        let acc = self.fold_on_tasks(range, &f);
        match f.panic.into_inner() {
            Some(p) => resume_unwind(p),
            None => acc,
        }
    }

    /// [`Runtime::fold_adaptive`], through references (one instance for every closure type).
    fn fold_on_tasks<T: Send>(&self, range: Range<usize>, f: &Fold<'_, T>) -> T {
        ctx::with(|c| match c {
            Some(c) if c.rt.id() == self.id() => f.here(c, range, (f.identity)()),
            _ => join::cold(
                self,
                range,
                |range| self.fold_on_tasks(range, f),
                |range| f.serial(range, (f.identity)()),
            ),
        })
    }

    /// Whether a parallel loop started now on the calling thread runs best as tasks
    /// ([`Runtime::fold_adaptive`]) rather than as a region: a call nested in another (made
    /// by a task of the runtime, or by a region's member, where a region would run inline),
    /// and, from a thread outside every region, a call made while other threads' calls run
    /// on the runtime's tasks or its region (a region would wait for its team, up to
    /// [`REGION_LOCK_WAIT`](crate::REGION_LOCK_WAIT), while tasks share the workers with the
    /// calls already running).
    pub fn loops_on_tasks(&self) -> bool {
        let mine = ctx::with(|c| c.is_some_and(|c| c.rt.id() == self.id()));
        if mine || crate::runtime::current::member().is_some() {
            return true;
        }
        !Runtime::in_region() && (self.inner().tasks().busy() || self.region_busy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn pieces_double_while_quick_and_halve_while_slow() {
        let any = PieceLen::ANY;
        assert_eq!(next_piece(1, Duration::ZERO, any), 2);
        assert_eq!(next_piece(8, PIECE_TIME, any), 8);
        assert_eq!(next_piece(8, MS, any), 4);
        assert_eq!(next_piece(1, MS, any), 1);
        assert_eq!(next_piece(usize::MAX, Duration::ZERO, any), usize::MAX);
    }

    #[test]
    fn pieces_stay_within_the_limits() {
        let len = PieceLen { min: 4, max: 16 };
        assert_eq!(next_piece(16, Duration::ZERO, len), 16);
        assert_eq!(next_piece(4, MS, len), 4);
        // A minimum above the maximum wins.
        let len = PieceLen { min: 8, max: 2 };
        assert_eq!(next_piece(8, Duration::ZERO, len), 8);
        assert_eq!(PieceLen { min: 0, max: 0 }.min(), 1);
    }

    #[test]
    fn no_piece_leaves_less_than_the_minimum() {
        let len = PieceLen { min: 4, max: 8 };
        assert_eq!(cut(10, 4, len), 4);
        assert_eq!(cut(7, 4, len), 7);
        assert_eq!(cut(3, 4, len), 3);
        assert_eq!(cut(5, 1, PieceLen::ANY), 1);
        // 8 would leave 2: 10 is above the maximum, so 6 and then 4.
        assert_eq!(cut(10, 8, len), 6);
    }

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use crate::ThreadPoolBuilder;

    /// Letters for `0..n`, folded on `pool`: concatenation is associative but not commutative,
    /// so a result combined out of order shows.
    fn letters(pool: &Runtime, n: usize, len: PieceLen) -> String {
        let fold = |mut s: String, r: Range<usize>| {
            s.extend(r.map(letter));
            s
        };
        pool.fold_adaptive(0..n, len, String::new, fold, |a, b| a + &b, |_| false)
    }

    fn letter(i: usize) -> char {
        char::from(b'a' + (i % 26) as u8)
    }

    #[test]
    fn a_fold_keeps_the_order_from_outside_and_inside_a_join() {
        let len = PieceLen { min: 3, max: 7 };
        for threads in [1, 2, 4] {
            let pool = ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            // (Miri runs some thousand times slower: a smaller last size there.)
            for n in [0, 1, 5, 300, if cfg!(miri) { 1000 } else { 100_000 }] {
                let want: String = (0..n).map(letter).collect();
                assert_eq!(letters(&pool, n, PieceLen::ANY), want, "{threads} threads");
                let (a, b) = pool.join(|| letters(&pool, n, len), || letters(&pool, n, len));
                assert_eq!((a == want, b == want), (true, true), "{threads} threads");
            }
        }
    }

    #[test]
    fn pieces_keep_their_limits_and_cover_the_range_once() {
        let pool = ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        for (n, len) in [
            (1000, PieceLen { min: 3, max: 7 }),
            (9, PieceLen { min: 3, max: 7 }),
        ] {
            let pieces = Mutex::new(Vec::new());
            let fold = |(), r: Range<usize>| pieces.lock().unwrap().push(r);
            pool.fold_adaptive(0..n, len, || (), fold, |(), ()| (), |_| false);
            let mut pieces = pieces.into_inner().unwrap();
            pieces.sort_by_key(|r| r.start);
            let mut at = 0;
            for r in pieces {
                assert_eq!(r.start, at, "{n} indices");
                assert!((3..=7).contains(&r.len()), "piece {r:?} of {n}");
                at = r.end;
            }
            assert_eq!(at, n);
        }
    }

    #[test]
    fn no_piece_starts_once_the_fold_is_done() {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let ran = AtomicUsize::new(0);
        let fold = |(), r: Range<usize>| {
            ran.fetch_add(r.len(), Ordering::Relaxed);
        };
        let done = |_| ran.load(Ordering::Relaxed) >= 10;
        pool.fold_adaptive(
            0..1_000_000,
            PieceLen { min: 1, max: 4 },
            || (),
            fold,
            |(), ()| (),
            done,
        );
        // Each thread may finish the piece it was in.
        assert!(ran.load(Ordering::Relaxed) < 10 + 2 * 4);
    }

    #[test]
    fn a_panicking_piece_leaves_the_others_to_run() {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let ran = AtomicUsize::new(0);
        let fold = |(), r: Range<usize>| {
            for i in r {
                assert!(i != 500, "boom");
                ran.fetch_add(1, Ordering::Relaxed);
            }
        };
        let one = PieceLen { min: 1, max: 1 };
        let call = || pool.fold_adaptive(0..1000, one, || (), fold, |(), ()| (), |_| false);
        let p = catch_unwind(AssertUnwindSafe(call)).expect_err("the panic was lost");
        assert_eq!(p.downcast_ref::<&str>(), Some(&"boom"));
        assert_eq!(ran.load(Ordering::Relaxed), 999);
    }
}
