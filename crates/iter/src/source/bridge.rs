//! `par_bridge`: a sequential iterator's items shared out to a team.
//!
//! The iterator is kept behind a mutex. A terminal call on the bridge is one region, as any
//! other: its index space has one index per thread of the current runtime, and the range a
//! member is handed yields whatever that member pulls from the shared iterator until it runs
//! dry (one lock per item). So every item is yielded once, by whichever member pulled it, and
//! **no order is promised**, as in rayon: `collect` gathers the items in an unspecified order.
//! Use it for sources that cannot be split (a channel's receiver, lines of a reader) whose items
//! take long enough to process that the lock does not matter.
//!
//! The iterator is fused: once it has returned `None` it is not called again. If it panics, the
//! panic reaches the terminal call, and the other members stop pulling (the mutex is poisoned).

use std::iter::Fuse;
use std::ops::Range;
use std::sync::Mutex;

use crate::internal::plumbing::Producer;
use crate::source::sources::clone_of;

/// Makes a parallel iterator of a sequential one (`par_bridge`), as rayon's `ParallelBridge`.
///
/// ```
/// use asat_iter::prelude::*;
/// use std::sync::mpsc;
///
/// let (tx, rx) = mpsc::channel();
/// for i in 0..100u64 {
///     tx.send(i).unwrap();
/// }
/// drop(tx);
/// let mut squares: Vec<u64> = rx.into_iter().par_bridge().map(|i| i * i).collect();
/// squares.sort_unstable(); // no order is promised
/// assert_eq!(squares, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
/// ```
pub trait ParallelBridge: Sized {
    /// A parallel iterator over `self`'s items, pulled by the team's members as they go.
    fn par_bridge(self) -> IterBridge<Self>;
}

impl<T: Iterator + Send> ParallelBridge for T
where
    T::Item: Send,
{
    fn par_bridge(self) -> IterBridge<Self> {
        IterBridge {
            iter: Mutex::new(self.fuse()),
        }
    }
}

/// A sequential iterator shared out to a team (`par_bridge`); see the [module docs](self).
#[derive(Debug)]
#[must_use = "parallel iterators do nothing until a terminal call"]
pub struct IterBridge<I> {
    iter: Mutex<Fuse<I>>,
}

/// A clone of the iterator, taken under its lock (as rayon's bridge, `Clone` when the
/// iterator is).
impl<I: Clone> Clone for IterBridge<I> {
    fn clone(&self) -> Self {
        IterBridge {
            iter: Mutex::new(clone_of(&self.iter)),
        }
    }
}

impl<I> Producer for IterBridge<I>
where
    I: Iterator + Send,
    I::Item: Send,
{
    type Item = I::Item;
    type Seq<'a>
        = Pull<'a, I>
    where
        Self: 'a;

    /// One index per thread of the current runtime, so that each member of a full team is
    /// handed a range to pull with.
    fn base_len(&self) -> usize {
        crate::current_num_threads()
    }

    #[inline]
    unsafe fn seq(&self, _range: Range<usize>) -> Pull<'_, I> {
        Pull { iter: &self.iter }
    }
}

/// The sequential side of [`IterBridge`]: pulls items from the shared iterator.
#[derive(Debug)]
pub struct Pull<'a, I> {
    iter: &'a Mutex<Fuse<I>>,
}

impl<I: Iterator> Iterator for Pull<'_, I> {
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        // A poisoned lock: the iterator panicked on another member, whose panic the terminal
        // call re-raises; stop pulling.
        self.iter.lock().ok()?.next()
    }
}

#[cfg(test)]
mod tests {
    use crate::internal::testing::on_every_team;
    use crate::prelude::*;

    #[test]
    fn every_item_is_yielded_once() {
        on_every_team(|k| {
            for n in [0u64, 1, 5, 3000] {
                let mut got: Vec<u64> = (0..n).par_bridge().map(|i| i * 2).collect();
                got.sort_unstable();
                assert_eq!(got, (0..n).map(|i| i * 2).collect::<Vec<_>>(), "team {k}");
                let sum: u64 = (0..n).filter(|i| i % 3 == 0).par_bridge().sum();
                assert_eq!(sum, (0..n).filter(|i| i % 3 == 0).sum::<u64>());
            }
        });
    }

    #[test]
    fn a_panicking_source_reaches_the_caller() {
        on_every_team(|k| {
            let r = std::panic::catch_unwind(|| {
                (0..100u32)
                    .map(|i| if i == 50 { panic!("item 50") } else { i })
                    .par_bridge()
                    .count()
            });
            assert_eq!(
                *r.unwrap_err().downcast_ref::<&str>().unwrap(),
                "item 50",
                "team {k}"
            );
            assert_eq!((0..100u32).par_bridge().count(), 100);
        });
    }
}
