//! Adapters that stop or skip by what the whole call has seen, through a counter or a flag
//! shared by the members: `take_any`, `skip_any`, `while_some` (and, in a module of their own,
//! [`take_any_while`](crate::take_any_while) and `skip_any_while`).
//!
//! Each keeps its shared state in the adapter, which one terminal call drives (the call takes
//! it by value). Items keep their relative order in `collect` and `reduce`, as in rayon,
//! because each range yields its items in order and ranges are combined in order.
//!
//! - `take_any(n)` and `skip_any(n)` on an iterator whose items stand one for one at its
//!   indices (an indexed one, or one mapped from it) take or skip the **first** `n` items: a
//!   valid choice of "any `n`", and free. On other iterators (after `filter`, say), each member
//!   claims a number from a shared counter for each item it makes: `take_any` yields the items
//!   that got the numbers below `n` and stops each member once `n` were claimed; `skip_any`
//!   drops them and yields the rest. Which items those are depends on timing, as in rayon; how
//!   many does not: `min(n, len)` taken, or skipped.
//! - `while_some` yields the values of the `Some` items and stops every member once one has
//!   met a `None` (a flag checked before each item). With no `None`, every value is yielded;
//!   with one, the values yielded are some of those before or beside it, as in rayon (which
//!   ones depends on timing), never one of those after it in its own member's range.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::internal::plumbing::{seq_under, Hints, Producer, Stop};

/// `min(n, len)` items from anywhere in the iterator (`take_any`); see the
/// [module docs](self).
#[derive(Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct TakeAny<I> {
    base: I,
    n: usize,
    claimed: AtomicUsize,
}

/// All but `min(n, len)` items from anywhere in the iterator (`skip_any`); see the
/// [module docs](self).
#[derive(Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct SkipAny<I> {
    base: I,
    n: usize,
    claimed: AtomicUsize,
}

/// The values of the `Some` items, until a `None` is seen (`while_some`); see the
/// [module docs](self).
#[derive(Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct WhileSome<I> {
    base: I,
    stopped: AtomicBool,
}

// A clone starts with a fresh counter (or flag): a terminal call takes the adapter by value,
// so until one runs the state is as `new` set it.
impl<I: Clone> Clone for TakeAny<I> {
    fn clone(&self) -> Self {
        Self::new(self.base.clone(), self.n)
    }
}

impl<I: Clone> Clone for SkipAny<I> {
    fn clone(&self) -> Self {
        Self::new(self.base.clone(), self.n)
    }
}

impl<I: Clone> Clone for WhileSome<I> {
    fn clone(&self) -> Self {
        Self::new(self.base.clone())
    }
}

impl<I> TakeAny<I> {
    pub(crate) fn new(base: I, n: usize) -> Self {
        Self {
            base,
            n,
            claimed: AtomicUsize::new(0),
        }
    }
}

impl<I> SkipAny<I> {
    pub(crate) fn new(base: I, n: usize) -> Self {
        Self {
            base,
            n,
            claimed: AtomicUsize::new(0),
        }
    }
}

impl<I: Producer> TakeAny<I> {
    /// The items of `range`, under `stop` when a call may end early (passed to the base).
    ///
    /// # Safety
    ///
    /// As for [`Producer::seq`].
    #[inline]
    unsafe fn read<'a>(
        &'a self,
        range: Range<usize>,
        stop: Option<Stop<'a>>,
    ) -> Claiming<'a, I::Seq<'a>, true> {
        Claiming {
            // SAFETY: the caller's range goes to the base unchanged (within the first `n`
            // indices when exact).
            items: unsafe { seq_under(&self.base, range, stop) },
            claimed: (!I::EXACT).then_some(&self.claimed),
            n: self.n,
            stop,
        }
    }
}

impl<I: Producer> SkipAny<I> {
    /// The items of `range`, under `stop` when a call may end early (passed to the base, and
    /// asked before each item dropped).
    ///
    /// # Safety
    ///
    /// As for [`Producer::seq`].
    #[inline]
    unsafe fn read<'a>(
        &'a self,
        range: Range<usize>,
        stop: Option<Stop<'a>>,
    ) -> Claiming<'a, I::Seq<'a>, false> {
        let (range, claimed) = if I::EXACT {
            (range.start + self.n..range.end + self.n, None)
        } else {
            (range, Some(&self.claimed))
        };
        Claiming {
            // SAFETY: a shift of the caller's disjoint ranges stays disjoint, and within the
            // base (exact: its length less `n` is this producer's).
            items: unsafe { seq_under(&self.base, range, stop) },
            claimed,
            n: self.n,
            stop,
        }
    }
}

impl<I> WhileSome<I> {
    pub(crate) fn new(base: I) -> Self {
        Self {
            base,
            stopped: AtomicBool::new(false),
        }
    }
}

impl<I: Producer> Producer for TakeAny<I> {
    type Item = I::Item;
    type Seq<'a>
        = Claiming<'a, I::Seq<'a>, true>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;

    fn base_len(&self) -> usize {
        let len = self.base.base_len();
        if I::EXACT {
            len.min(self.n)
        } else {
            len
        }
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller keeps `seq`'s rule.
        unsafe { self.read(range, None) }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        // SAFETY: the caller keeps `seq`'s rule.
        unsafe { self.read(range, Some(stop)) }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

impl<I: Producer> Producer for SkipAny<I> {
    type Item = I::Item;
    type Seq<'a>
        = Claiming<'a, I::Seq<'a>, false>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;

    fn base_len(&self) -> usize {
        let len = self.base.base_len();
        if I::EXACT {
            len.saturating_sub(self.n)
        } else {
            len
        }
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // SAFETY: the caller keeps `seq`'s rule.
        unsafe { self.read(range, None) }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        // SAFETY: the caller keeps `seq`'s rule.
        unsafe { self.read(range, Some(stop)) }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

/// The sequential side of [`TakeAny`] (`TAKE`) and [`SkipAny`]: with a counter, each item
/// claims a number; without one, the items pass through.
#[derive(Debug)]
pub struct Claiming<'a, J, const TAKE: bool> {
    items: J,
    claimed: Option<&'a AtomicUsize>,
    n: usize,
    /// The call's stop, asked before each item `skip_any` drops.
    stop: Option<Stop<'a>>,
}

impl<J: Iterator, const TAKE: bool> Iterator for Claiming<'_, J, TAKE> {
    type Item = J::Item;

    #[inline]
    fn next(&mut self) -> Option<J::Item> {
        let Some(claimed) = self.claimed else {
            return self.items.next();
        };
        loop {
            // Every number below `n` claimed: `take_any` is done, `skip_any` yields the rest
            // without touching the counter.
            if claimed.load(Ordering::Relaxed) >= self.n {
                return if TAKE { None } else { self.items.next() };
            }
            let item = self.items.next()?;
            let below = claimed.fetch_add(1, Ordering::Relaxed) < self.n;
            if below == TAKE {
                return Some(item);
            }
            if TAKE {
                // Made, but `n` items were claimed first: dropped, and this range is done.
                return None;
            }
            if self.stop.is_some_and(Stop::now) {
                return None;
            }
        }
    }
}

impl<T: Send, I: Producer<Item = Option<T>>> Producer for WhileSome<I> {
    type Item = T;
    type Seq<'a>
        = WhileSomeSeq<'a, I::Seq<'a>>
    where
        Self: 'a;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        WhileSomeSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { self.base.seq(range) },
            stopped: &self.stopped,
        }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        WhileSomeSeq {
            // SAFETY: the caller's range goes to the base unchanged.
            items: unsafe { self.base.seq_until(range, stop) },
            stopped: &self.stopped,
        }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
}

/// The sequential side of [`WhileSome`].
#[derive(Debug)]
pub struct WhileSomeSeq<'a, J> {
    items: J,
    stopped: &'a AtomicBool,
}

impl<T, J: Iterator<Item = Option<T>>> Iterator for WhileSomeSeq<'_, J> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.stopped.load(Ordering::Relaxed) {
            return None;
        }
        match self.items.next()? {
            Some(x) => Some(x),
            None => {
                self.stopped.store(true, Ordering::Relaxed);
                None
            }
        }
    }
}
