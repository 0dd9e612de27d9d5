//! `panic_fuse` (rayon's): once a panic has unwound through a member's items, the other members
//! stop taking items, so that a failing call ends soon instead of running to the end of every
//! member's share.
//!
//! A terminal call re-raises a member's panic only once the whole team is done, and a member's
//! share under the static schedule is a single range, so without the fuse the other members
//! run all of theirs first; under the schedules that deal pieces, the pieces left go on being
//! handed out and run (rayon's behaviour: every piece but the panicking one). The fuse is a
//! flag in the adapter, which one terminal call drives, as [`take_any`](crate::take_any)'s
//! are:
//!
//! - A guard made with each range's items (before the base makes them) sets the flag when it
//!   is dropped by an unwinding panic: a panic in any closure that runs while the range's
//!   items are made and taken, below the fuse in the chain (a `map` before it, the `init` of a
//!   `map_init` before it), above it, or in the terminal call's own closure (`for_each`'s
//!   `op`, `reduce`'s `op`). A guard made while its thread was already unwinding (a call
//!   inside a `Drop` run by an unwinding panic) does not set it.
//! - Each member reads the flag before it takes each item and ends its range once it is set.
//!   The panic still reaches the caller, as it does without the fuse.
//!
//! Otherwise the items pass through unchanged, and an indexed iterator stays indexed. A fused
//! range can end short of its indices only in a call that then re-raises a panic, so no
//! complete result is ever built from short ranges (an in-place `collect` drops exactly the
//! items it wrote).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::internal::plumbing::{DoubleEndedProducer, Hints, Producer, Stop};
use crate::IndexedParallelIterator;

/// The items, with the other members stopping soon after a panic in one (`panic_fuse`); see
/// the [module docs](self).
#[derive(Debug)]
#[must_use = "parallel iterator adapters do nothing until a terminal call"]
pub struct PanicFuse<I> {
    base: I,
    panicked: AtomicBool,
}

// A clone starts with a fresh flag: a terminal call takes the adapter by value, so until one
// runs the flag is as `new` set it.
impl<I: Clone> Clone for PanicFuse<I> {
    fn clone(&self) -> Self {
        Self::new(self.base.clone())
    }
}

impl<I> PanicFuse<I> {
    pub(crate) fn new(base: I) -> Self {
        Self {
            base,
            panicked: AtomicBool::new(false),
        }
    }

    /// The guard for a range about to be made.
    #[inline]
    fn fuse(&self) -> Fuse<'_> {
        Fuse {
            panicked: &self.panicked,
            armed: !std::thread::panicking(),
        }
    }
}

/// Sets the flag if dropped by an unwinding panic that began after it was made.
#[derive(Debug)]
struct Fuse<'a> {
    panicked: &'a AtomicBool,
    armed: bool,
}

impl Fuse<'_> {
    #[inline]
    fn blown(&self) -> bool {
        self.panicked.load(Ordering::Relaxed)
    }
}

impl Drop for Fuse<'_> {
    fn drop(&mut self) {
        if self.armed && std::thread::panicking() {
            self.panicked.store(true, Ordering::Relaxed);
        }
    }
}

impl<I: Producer> Producer for PanicFuse<I> {
    type Item = I::Item;
    type Seq<'a>
        = PanicFuseSeq<'a, I::Seq<'a>>
    where
        Self: 'a;
    const EXACT: bool = I::EXACT;

    fn base_len(&self) -> usize {
        self.base.base_len()
    }

    #[inline]
    unsafe fn seq(&self, range: Range<usize>) -> Self::Seq<'_> {
        // Made first, so that a panic while the base makes the range blows it too.
        let fuse = self.fuse();
        // SAFETY: the caller's range goes to the base unchanged.
        let items = unsafe { self.base.seq(range) };
        PanicFuseSeq { fuse, items }
    }

    #[inline]
    unsafe fn seq_until<'a>(&'a self, range: Range<usize>, stop: Stop<'a>) -> Self::Seq<'a> {
        let fuse = self.fuse();
        // SAFETY: the caller's range goes to the base unchanged.
        let items = unsafe { self.base.seq_until(range, stop) };
        PanicFuseSeq { fuse, items }
    }

    fn hints(&self) -> Hints {
        self.base.hints()
    }
    fn known_len(&self) -> Option<usize> {
        self.base.known_len()
    }
}

impl<I: IndexedParallelIterator> IndexedParallelIterator for PanicFuse<I> {}

impl<I: IndexedParallelIterator> DoubleEndedProducer for PanicFuse<I> {
    type SeqRev<'a>
        = PanicFuseSeq<'a, I::SeqRev<'a>>
    where
        Self: 'a;

    #[inline]
    unsafe fn seq_rev(&self, range: Range<usize>) -> Self::SeqRev<'_> {
        let fuse = self.fuse();
        // SAFETY: the caller's range goes to the base unchanged.
        let items = unsafe { self.base.seq_rev(range) };
        PanicFuseSeq { fuse, items }
    }
}

/// The sequential side of [`PanicFuse`].
#[derive(Debug)]
pub struct PanicFuseSeq<'a, J> {
    /// Declared first, so dropped first: the flag is set before the base's items (and any state
    /// they hold) are dropped.
    fuse: Fuse<'a>,
    items: J,
}

impl<J: Iterator> Iterator for PanicFuseSeq<'_, J> {
    type Item = J::Item;

    #[inline]
    fn next(&mut self) -> Option<J::Item> {
        if self.fuse.blown() {
            return None;
        }
        self.items.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, self.items.size_hint().1)
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::PanicFuse;
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    #[test]
    fn the_items_pass_through_and_indexed_stays_indexed() {
        on_every_team(|k| {
            let v: Vec<u64> = (0..1000).collect();
            let got: Vec<u64> = v.par_iter().panic_fuse().map(|x| x * 2).collect();
            assert_eq!(
                got,
                v.iter().map(|x| x * 2).collect::<Vec<_>>(),
                "team of {k}"
            );
            let it = v.par_iter().copied().panic_fuse();
            assert_eq!(it.len(), 1000);
            let back: Vec<(usize, u64)> = it.rev().enumerate().with_max_len(7).collect();
            assert!(
                back.iter().all(|&(i, x)| x == 999 - i as u64),
                "team of {k}"
            );
            let z: Vec<(u64, char)> = v
                .par_iter()
                .copied()
                .panic_fuse()
                .zip(vec!['a', 'b'])
                .collect();
            assert_eq!(z, [(0, 'a'), (1, 'b')]);
            let odd = v.par_iter().filter(|x| *x % 2 == 1).panic_fuse().count();
            assert_eq!(odd, 500, "team of {k}");
        });
    }

    /// Where a test panics on member 0: in a closure below the fuse, above it, or in the
    /// terminal call's own closure; read forwards or (`rev`) backwards.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum At {
        Below,
        Above,
        Terminal,
        BelowRev,
    }

    /// Sets `unwound` if dropped while member 0 unwinds: it lives in the base's items, which
    /// the fuse's range drops after setting its flag.
    struct Signal<'a>(&'a AtomicBool);

    impl Drop for Signal<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() && crate::current_thread_index() == Some(0) {
                self.0.store(true, Ordering::Release);
            }
        }
    }

    /// Runs `(0..100).into_par_iter()` (statically split, one range per member) with member 0
    /// panicking at its first item and the other members waiting, at each item, until member
    /// 0 has unwound past the fuse. Returns how many items the other members took, and the
    /// panic. Only members 1.. wait, on member 0, which every call has.
    fn after_member_0_panics(at: At) -> (usize, String) {
        let unwound = AtomicBool::new(false);
        let taken = AtomicUsize::new(0);
        let step = |x: u32, here: At| {
            if at == here || (at, here) == (At::BelowRev, At::Below) {
                if crate::current_thread_index() == Some(0) {
                    panic!("member 0 fails");
                }
                while !unwound.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            }
            x
        };
        let count = |x: u32| {
            step(x, At::Terminal);
            taken.fetch_add(1, Ordering::Relaxed);
        };
        let r = catch_unwind(AssertUnwindSafe(|| {
            let base = (0..100u32)
                .into_par_iter()
                .map_init(|| Signal(&unwound), |_, x| step(x, At::Below));
            if at == At::BelowRev {
                base.panic_fuse().rev().for_each(count);
            } else {
                base.panic_fuse()
                    .map(|x| step(x, At::Above))
                    .for_each(count);
            }
        }));
        let e = r.expect_err("member 0's panic reaches the caller");
        let msg = e
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default();
        (taken.into_inner(), msg)
    }

    #[test]
    fn a_panic_stops_the_other_members_items() {
        for at in [At::Below, At::Above, At::Terminal, At::BelowRev] {
            on_every_team(|k| {
                let (taken, msg) = after_member_0_panics(at);
                assert_eq!(msg, "member 0 fails", "team of {k}, {at:?}");
                // Each other member takes at most the item it had when member 0 panicked
                // (none if it saw the fuse blown first); unfused, it would take its whole
                // range.
                assert!(taken < k, "team of {k}, {at:?}: {taken} taken");
                // the runtime is usable afterwards
                assert_eq!((0..100u64).into_par_iter().panic_fuse().sum::<u64>(), 4950);
            });
        }
    }

    /// Makes (and drops) a range's guard when dropped: inside a `Drop` that an unwinding panic
    /// runs, as a call made there would.
    struct GuardOnDrop<'a>(&'a PanicFuse<()>);

    impl Drop for GuardOnDrop<'_> {
        fn drop(&mut self) {
            drop(self.0.fuse());
        }
    }

    // On the guard itself, not through a call: asat-core aborts the process when a thread that
    // is unwinding starts a region (its guard for the region's stack cannot tell that panic
    // from one inside the region), so a call from such a `Drop` cannot be tested here.
    #[test]
    fn only_a_panic_that_began_after_the_range_was_made_blows_the_fuse() {
        let fused = PanicFuse::new(());
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _range = fused.fuse();
            panic!("in the range");
        }));
        assert!(r.is_err());
        assert!(fused.fuse().blown());
        let fused = PanicFuse::new(());
        drop(fused.fuse());
        assert!(!fused.fuse().blown(), "a range dropped normally");
        let r = catch_unwind(AssertUnwindSafe(|| {
            let _made_while_unwinding = GuardOnDrop(&fused);
            panic!("before the range");
        }));
        assert!(r.is_err());
        assert!(!fused.fuse().blown());
    }
}
