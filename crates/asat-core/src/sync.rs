//! The atomics, threads and futex the runtime's protocols are built on, switched to loom's
//! under `--cfg loom`, so that `tests/loom.rs` can check the region start, the join, the team
//! barrier and worker shutdown on a whole runtime.
//!
//! Under loom the futex is emulated with a mutex and a condition variable: the value check and
//! the sleep happen under the mutex, and a wake takes the mutex, which gives `futex_wait`'s
//! atomicity (a wake cannot fall between the check and the sleep).

use std::fmt;
use std::ops::Deref;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};
pub(crate) use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize};

#[cfg(loom)]
pub(crate) use loom::{hint::spin_loop, thread};
#[cfg(not(loom))]
pub(crate) use std::{hint::spin_loop, thread};

/// Between a `SeqCst` write and a `SeqCst` read of another word, where the protocol needs
/// the two sides' write-then-read to be ordered (a sleeper announcing itself, then checking
/// its condition; a notifier writing the condition, then checking for sleepers). `SeqCst`
/// accesses give that, but loom treats them as `AcqRel` (a documented limitation that reports
/// lost wake-ups that cannot happen), so under loom this is a `SeqCst` fence, which loom
/// models; otherwise it is nothing.
#[inline(always)]
pub(crate) fn dekker_fence() {
    #[cfg(loom)]
    loom::sync::atomic::fence(Ordering::SeqCst);
}

/// A `SeqCst` fence (loom's under loom, which models it): between a thread's write of one word
/// and its read of another where the two sides of a protocol must see at least one of each
/// other's writes, and the words' own accesses are not all `SeqCst` (a work-stealing deque's).
#[inline(always)]
pub(crate) fn fence_seq_cst() {
    #[cfg(loom)]
    loom::sync::atomic::fence(Ordering::SeqCst);
    #[cfg(not(loom))]
    std::sync::atomic::fence(Ordering::SeqCst);
}

/// A 32-bit word threads can sleep on until it changes (a futex). Dereferences to the word.
///
/// Not part of the API: public (hidden) only so that asat-implicit's futex is the same one,
/// loom model included.
#[doc(hidden)]
#[derive(Default)]
pub struct FutexWord {
    word: AtomicU32,
    #[cfg(loom)]
    lock: loom::sync::Mutex<()>,
    #[cfg(loom)]
    cv: loom::sync::Condvar,
}

impl fmt::Debug for FutexWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FutexWord")
            .field(&self.word.load(Ordering::Relaxed))
            .finish()
    }
}

impl Deref for FutexWord {
    type Target = AtomicU32;
    #[inline]
    fn deref(&self) -> &AtomicU32 {
        &self.word
    }
}

impl FutexWord {
    /// A word holding `v`.
    pub fn new(v: u32) -> Self {
        Self {
            word: AtomicU32::new(v),
            #[cfg(loom)]
            lock: loom::sync::Mutex::new(()),
            #[cfg(loom)]
            cv: loom::sync::Condvar::new(),
        }
    }

    /// Sleeps while the word holds `expected` (checked atomically with going to sleep); may
    /// return spuriously, so callers re-check their condition.
    #[cfg(not(loom))]
    #[inline]
    pub fn sleep(&self, expected: u32) {
        crate::sys::futex::wait(&self.word, expected);
    }

    /// Wakes every thread asleep on the word.
    #[cfg(not(loom))]
    #[inline]
    pub fn wake_all(&self) {
        crate::sys::futex::wake(&self.word, i32::MAX);
    }

    /// Wakes one thread asleep on the word.
    #[cfg(not(loom))]
    #[inline]
    pub fn wake_one(&self) {
        crate::sys::futex::wake(&self.word, 1);
    }

    /// Sleeps while the word holds `expected` (checked atomically with going to sleep); may
    /// return spuriously, so callers re-check their condition.
    #[cfg(loom)]
    pub fn sleep(&self, expected: u32) {
        let g = self.lock.lock().unwrap();
        if self.word.load(Ordering::SeqCst) == expected {
            drop(self.cv.wait(g).unwrap());
        }
    }

    /// Wakes every thread asleep on the word.
    #[cfg(loom)]
    pub fn wake_all(&self) {
        let _g = self.lock.lock().unwrap();
        self.cv.notify_all();
    }

    /// Wakes one thread asleep on the word.
    #[cfg(loom)]
    pub fn wake_one(&self) {
        let _g = self.lock.lock().unwrap();
        self.cv.notify_one();
    }
}
