//! The synchronization primitives the barrier and the flags are built on, switched to loom's
//! under `--cfg loom` so that `tests/loom.rs` can check the protocols, and the two-phase wait
//! loop itself.
//!
//! [`Futex`] is a 32-bit word threads wait on, whose bit 1 ([`SLEEP`]) says that a thread
//! may be asleep on it, so that a notifier makes no system call while nobody sleeps:
//!
//! - a waiter spins (re-reading the word) for its spin limit; then, while its condition does
//!   not hold, it sets `SLEEP` with a compare-exchange on the value it read (re-reading if the
//!   word changed meanwhile) and sleeps in `futex_wait` on the value with `SLEEP` set (the
//!   kernel re-checks that value atomically);
//! - every notifier changes the word with a read-modify-write that clears `SLEEP`, and calls
//!   `futex_wake` when the old value it read had `SLEEP` set.
//!
//! All of these are read-modify-writes of one word, so they are totally ordered. If the
//! notifier's comes first, the waiter's compare-exchange fails (the value changed) and its
//! re-read sees the condition; if the waiter's comes first, the notifier reads `SLEEP` and
//! wakes it (a wake that comes before the waiter sleeps finds the word changed, so
//! `futex_wait` returns at once). No wake-up is lost, and the argument needs nothing but the
//! coherence of one word, which loom models exactly. Changes that do not complete a wait (a
//! barrier arrival that is not the last) keep `SLEEP` and wake nobody.
//!
//! The word is asat-core's `FutexWord`, which under loom emulates the futex with a mutex and
//! a condition variable.

use std::time::{Duration, Instant};

use asat_core::FutexWord;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64};
pub(crate) use std::sync::atomic::Ordering;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64};

/// Keeps a value on its own cache line (two lines: adjacent-line prefetching pairs them).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Bit 1 of a [`Futex`] word: a waiter may be asleep on it.
pub(crate) const SLEEP: u32 = 2;

/// A word to wait on; see the module docs.
#[derive(Debug)]
pub(crate) struct Futex {
    word: FutexWord,
}

/// How a wait ended.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Waited {
    /// The waiter gave up spinning and slept in the kernel.
    pub(crate) blocked: bool,
    /// When the timed part of the spin started (the clock is first read after
    /// [`FREE_SPINS`] spins); `None` when the wait ended before (a short wait) or never read
    /// the clock (a spin limit of zero or [`Duration::MAX`]).
    pub(crate) timed_from: Option<Instant>,
}

impl Futex {
    pub(crate) fn new(v: u32) -> Self {
        Self {
            word: FutexWord::new(v),
        }
    }

    #[inline]
    pub(crate) fn load(&self, o: Ordering) -> u32 {
        self.word.load(o)
    }

    /// One compare-exchange (`AcqRel` on success).
    #[inline]
    pub(crate) fn compare_exchange_weak(&self, old: u32, new: u32) -> Result<u32, u32> {
        self.word
            .compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Relaxed)
    }

    /// Wakes every sleeper if `old`, the value a notifier's read-modify-write replaced, had
    /// [`SLEEP`] set.
    #[inline]
    pub(crate) fn wake_if_slept(&self, old: u32) {
        if old & SLEEP != 0 {
            self.word.wake_all();
        }
    }

    /// Sets `bits` in the word (`AcqRel`) as long as `cond` holds for its value; wakes nobody.
    #[inline]
    pub(crate) fn set_while(&self, bits: u32, cond: impl Fn(u32) -> bool) {
        let mut v = self.word.load(Ordering::Relaxed);
        while cond(v) && v & bits != bits {
            match self.compare_exchange_weak(v, v | bits) {
                Ok(_) => return,
                Err(now) => v = now,
            }
        }
    }

    /// Sets bits of the word (`AcqRel`) and wakes every sleeper. Returns the previous value.
    #[inline]
    pub(crate) fn or_and_wake(&self, v: u32) -> u32 {
        let old = self.word.fetch_or(v, Ordering::AcqRel);
        self.wake_if_slept(old);
        old
    }

    /// Replaces the word with `f(old)` with [`SLEEP`] cleared (`AcqRel`) and wakes every
    /// sleeper. Returns the previous value.
    #[inline]
    pub(crate) fn update_and_wake(&self, f: impl Fn(u32) -> u32) -> u32 {
        let mut old = self.word.load(Ordering::Relaxed);
        loop {
            match self.compare_exchange_weak(old, f(old) & !SLEEP) {
                Ok(_) => break,
                Err(v) => old = v,
            }
        }
        self.wake_if_slept(old);
        old
    }

    /// Two-phase wait until `done(word)` holds: spin for `spin`, then block. `done` must
    /// become true only through a change of the word by a notifier that then calls one of the
    /// `*_and_wake` methods. `on_timed` is called with the clock reading that starts the timed
    /// part of the spin, if the wait gets that far.
    #[inline]
    pub(crate) fn wait(
        &self,
        spin: Duration,
        done: impl Fn(u32) -> bool,
        on_timed: impl FnOnce(Instant),
    ) -> Waited {
        let mut w = Waited::default();
        if done(self.word.load(Ordering::Acquire)) {
            return w;
        }
        match spin_phase(&self.word, spin, &done, on_timed) {
            SpinEnd::Done(t) => {
                w.timed_from = t;
                return w;
            }
            SpinEnd::Expired(t) => w.timed_from = t,
        }
        let mut v = self.word.load(Ordering::Acquire);
        while !done(v) {
            if v & SLEEP == 0 {
                if let Err(now) = self.compare_exchange_weak(v, v | SLEEP) {
                    v = now;
                    continue;
                }
            }
            self.word.sleep(v | SLEEP);
            w.blocked = true;
            v = self.word.load(Ordering::Acquire);
        }
        w
    }
}

enum SpinEnd {
    /// The condition held within the spin (with the start of its timed part, if reached).
    Done(Option<Instant>),
    /// The spin limit passed.
    Expired(Option<Instant>),
}

/// Spins the waiter does before it first reads the clock: a wait that ends within them (a
/// partner that arrives within about a microsecond) costs no clock read. (Under loom there are
/// none.)
#[cfg(not(loom))]
pub(crate) const FREE_SPINS: u32 = 64;

/// Spin limits below this skip the free spins (they could overshoot the limit).
#[cfg(not(loom))]
const FREE_SPIN_MIN: Duration = Duration::from_micros(4);

/// How many spins pass between clock reads.
#[cfg(not(loom))]
const SPINS_PER_CLOCK_READ: u32 = 64;

/// Spins until `done(word)` or until `spin` has passed since the timed part started. A pure
/// spin, with the CPU's pause hint: the paper's spin phase keeps the processor.
#[cfg(not(loom))]
#[inline]
fn spin_phase(
    word: &AtomicU32,
    spin: Duration,
    done: &impl Fn(u32) -> bool,
    on_timed: impl FnOnce(Instant),
) -> SpinEnd {
    if spin.is_zero() {
        return SpinEnd::Expired(None);
    }
    if spin == Duration::MAX {
        loop {
            if done(word.load(Ordering::Acquire)) {
                return SpinEnd::Done(None);
            }
            std::hint::spin_loop();
        }
    }
    if spin >= FREE_SPIN_MIN {
        for _ in 0..FREE_SPINS {
            if done(word.load(Ordering::Acquire)) {
                return SpinEnd::Done(None);
            }
            std::hint::spin_loop();
        }
    }
    let start = Instant::now();
    on_timed(start);
    loop {
        for _ in 0..SPINS_PER_CLOCK_READ {
            if done(word.load(Ordering::Acquire)) {
                return SpinEnd::Done(Some(start));
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= spin {
            return SpinEnd::Expired(Some(start));
        }
    }
}

/// Under loom a non-zero spin is one more look at the word after a yield: the model then
/// covers both a spin that succeeds and one that gives up.
#[cfg(loom)]
fn spin_phase(
    word: &AtomicU32,
    spin: Duration,
    done: &impl Fn(u32) -> bool,
    on_timed: impl FnOnce(Instant),
) -> SpinEnd {
    if spin.is_zero() {
        return SpinEnd::Expired(None);
    }
    let start = Instant::now();
    on_timed(start);
    loom::thread::yield_now();
    if done(word.load(Ordering::Acquire)) {
        SpinEnd::Done(Some(start))
    } else {
        SpinEnd::Expired(Some(start))
    }
}
