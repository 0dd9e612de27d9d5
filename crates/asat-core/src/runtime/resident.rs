//! A pool's *resident* thread: the thread a pool was built on with rayon's
//! `use_current_thread`, which is the pool's index 0 for the pool's life.
//!
//! Without one, index 0 belongs to whichever thread calls into the pool from outside while
//! nobody else holds it (see `steal`'s module docs). With one, only the resident thread takes
//! it: its calls run as index 0 (its own thread runs their tasks, as any caller's does), other
//! threads' calls go to the workers through the injector (or run alone where the pool has no
//! worker). As on a rayon worker, the pool is the resident thread's current runtime where no
//! other is installed, its `install` runs `op` right there, and outside its calls its
//! [`current_thread_index`](crate::current_thread_index) is `Some(0)`. Like rayon's, the
//! resident thread runs the pool's work only inside its own calls.
//!
//! The pool records the thread ([`Resident`]); the thread records the pool, as a weak
//! reference in a thread-local, so that a thread is resident in one live pool at most. Both
//! end when the pool's owner drops it.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use super::Inner;
use crate::{Error, Runtime};

/// The pool's side: whether it has a resident thread (which the thread's side names), until
/// the pool is dropped.
#[derive(Debug, Default)]
pub(crate) struct Resident {
    set: AtomicBool,
    dropped: AtomicBool,
}

impl Resident {
    /// Whether the pool has a resident thread now.
    #[inline]
    fn live(&self) -> bool {
        self.set.load(Ordering::Relaxed) && !self.dropped.load(Ordering::Relaxed)
    }

    /// The pool's owner dropped it: its resident thread is resident no more.
    pub(crate) fn release(&self) {
        self.dropped.store(true, Ordering::Relaxed);
    }
}

thread_local! {
    /// The pool this thread is resident in (a weak reference: the pool may be dropped on
    /// another thread).
    static POOL: RefCell<Weak<Inner>> = const { RefCell::new(Weak::new()) };
}

/// The live pool the calling thread is resident in, if any: a handle that does not shut it
/// down when dropped.
#[inline]
pub(crate) fn pool() -> Option<Runtime> {
    live().map(Runtime::handle)
}

/// [`pool`]'s state (none on a thread whose thread-locals are gone: a destructor's call).
#[inline]
fn live() -> Option<Arc<Inner>> {
    POOL.try_with(|p| {
        let p = p.borrow();
        // A load where the thread was never resident (every thread but a few).
        if p.strong_count() == 0 {
            return None;
        }
        p.upgrade().filter(|inner| inner.resident.live())
    })
    .ok()
    .flatten()
}

/// An error unless the calling thread may become a pool's resident thread: it must not be
/// one of a live pool already.
pub(crate) fn check_free() -> Result<(), Error> {
    match live() {
        Some(_) => Err(Error::current_thread_in_pool()),
        None => Ok(()),
    }
}

/// Makes the calling thread `rt`'s resident thread (after [`check_free`]), as `rt` is built.
pub(crate) fn enter(rt: &Runtime) {
    let inner = &rt.inner;
    POOL.with(|p| *p.borrow_mut() = Arc::downgrade(inner));
    let was = inner.resident.set.swap(true, Ordering::Relaxed);
    debug_assert!(!was, "a pool gets its resident thread once, as it is built");
}

/// Whether the calling thread may take index 0 of `inner`'s pool: every thread where the pool
/// has no resident thread, else that thread alone.
#[inline]
pub(crate) fn seats_here(inner: &Inner) -> bool {
    !inner.resident.live() || is_of(inner)
}

/// Whether the calling thread is the resident thread of `inner`'s pool, which is live.
#[inline]
pub(crate) fn is_of(inner: &Inner) -> bool {
    // A thread whose thread-locals are gone (a destructor's call) is not the resident one.
    inner.resident.live()
        && POOL
            .try_with(|p| std::ptr::eq(p.borrow().as_ptr(), inner))
            .unwrap_or(false)
}

/// `Some(0)` where the calling thread is resident in a live pool (`of`: that pool, when
/// given), outside the calls it makes.
pub(crate) fn index(of: Option<&Inner>) -> Option<usize> {
    let resident = match of {
        Some(of) => is_of(of),
        None => live().is_some(),
    };
    resident.then_some(0)
}
