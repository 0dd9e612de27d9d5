//! The latches a `join` waits on while another thread runs its second closure ([`Latch`]),
//! and a scope's owner while its spawned jobs run ([`CountLatch`]).
//!
//! The owner waits on an [`Event`] it sleeps on: a worker's is its mailbox's (in the runtime's
//! shared state, which outlives every task), a thread outside the pool's is a thread-local one
//! the latch holds a count of. The thread that sets the latch reads the event's address first,
//! stores `SET` (`SeqCst`), and then wakes the event's sleepers: from the store on, the latch
//! may be gone, since the owner returns as soon as it sees the store. The owner checks the
//! latch with `SeqCst` loads inside [`Event::wait_until`], whose sleeper count makes the wake
//! a no-op while nobody sleeps.

use std::sync::Arc;

use crate::sync::{AtomicU32, AtomicUsize, Ordering};
use crate::wait::Event;

const UNSET: u32 = 0;
const SET: u32 = 1;

/// Set once, by the thread that ran a job, when the job's result is written.
pub(crate) struct Latch {
    state: AtomicU32,
    /// The event the owner sleeps on: alive while any thread may set the latch (see the
    /// module docs), and kept alive by `keep` when it is a thread's own.
    event: *const Event,
    keep: Option<Arc<Event>>,
}

impl Latch {
    /// A latch whose owner sleeps on `event`, which lives in the runtime's shared state.
    #[inline]
    pub(crate) fn on(event: &Event) -> Self {
        Self {
            state: AtomicU32::new(UNSET),
            event,
            keep: None,
        }
    }

    /// A latch whose owner, a thread outside the pool, sleeps on `event`.
    pub(crate) fn on_own(event: Arc<Event>) -> Self {
        Self {
            state: AtomicU32::new(UNSET),
            event: Arc::as_ptr(&event),
            keep: Some(event),
        }
    }

    /// Whether the latch keeps no event alive (one made by [`Latch::on`]).
    pub(crate) fn holds_nothing(&self) -> bool {
        self.keep.is_none()
    }

    /// Whether the latch is set (`SeqCst`: see [`Event::wait_until`]).
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.state.load(Ordering::SeqCst) == SET
    }

    /// Sets the latch and wakes its owner.
    ///
    /// # Safety
    /// `this` points to a live latch that nobody else sets. It may be freed as soon as the
    /// store of `SET` is visible, so nothing of it is touched after that store.
    pub(crate) unsafe fn set(this: *const Latch) {
        // SAFETY: the latch is alive until the store below (this function's contract).
        let (event, keep) = unsafe { ((*this).event, (*this).keep.clone()) };
        // SAFETY: as above; the store is the last access.
        unsafe { (*this).state.store(SET, Ordering::SeqCst) };
        // SAFETY: `event` is in the runtime's shared state, which the thread running the job
        // holds (a worker, or a caller inside a call on the runtime), or in `keep`.
        unsafe { (*event).notify_sleepers() };
        drop(keep);
    }
}

/// Counts what a scope waits for (its `op` and the jobs spawned into it, not yet finished);
/// the owner waits until it is zero. Set from 1 (`op`) by [`CountLatch::on`]; whoever takes
/// the count to zero wakes the owner as [`Latch::set`] does, touching nothing of the latch
/// after its decrement.
pub(crate) struct CountLatch {
    count: AtomicUsize,
    /// As in [`Latch`].
    event: *const Event,
    keep: Option<Arc<Event>>,
}

// SAFETY: `event` is only read, and points to an `Event` (which is `Sync`) that outlives every
// thread that may take the count to zero (see the module docs); the rest is atomics and an
// `Arc`.
unsafe impl Sync for CountLatch {}
// SAFETY: as above; a latch moved to another thread keeps the same event.
unsafe impl Send for CountLatch {}

impl CountLatch {
    /// A count of 1 whose owner sleeps on `event`, in the runtime's shared state.
    pub(crate) fn on(event: &Event) -> Self {
        Self {
            count: AtomicUsize::new(1),
            event,
            keep: None,
        }
    }

    /// A count of 1 whose owner, a thread outside the pool, sleeps on `event`.
    pub(crate) fn on_own(event: Arc<Event>) -> Self {
        Self {
            count: AtomicUsize::new(1),
            event: Arc::as_ptr(&event),
            keep: Some(event),
        }
    }

    /// Counts one more: only by a holder of a count (the count is not zero).
    #[inline]
    pub(crate) fn increment(&self) {
        let was = self.count.fetch_add(1, Ordering::Relaxed);
        debug_assert!(was > 0, "a count is added only by a holder of one");
    }

    /// Whether the count is zero (`SeqCst`: see [`Event::wait_until`]).
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.count.load(Ordering::SeqCst) == 0
    }

    /// Takes one from the count and wakes the owner if it reached zero.
    ///
    /// # Safety
    /// `this` points to a live latch whose count the caller holds one of. It may be freed as
    /// soon as the count reaches zero, so nothing of it is touched after the decrement.
    pub(crate) unsafe fn decrement(this: *const CountLatch) {
        // SAFETY: the latch is alive until the decrement below (this function's contract).
        let (event, keep) = unsafe { ((*this).event, (*this).keep.clone()) };
        // SAFETY: as above; the decrement is the last access.
        let was = unsafe { (*this).count.fetch_sub(1, Ordering::SeqCst) };
        if was == 1 {
            // SAFETY: as in `Latch::set`.
            unsafe { (*event).notify_sleepers() };
        }
        drop(keep);
    }
}
