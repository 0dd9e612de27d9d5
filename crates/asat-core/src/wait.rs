//! How a thread waits: the [`WaitStrategy`] trait, the default [`SpinThenPark`], and the
//! event primitive every wait in the runtime goes through.
//!
//! # Protocol
//!
//! Every place where a thread of a runtime waits (the caller at a region's join, a member at a
//! team barrier or at the probe barrier, an idle worker between regions) waits for an
//! [`Event`]'s sequence number to move past a value it read earlier. A waiter
//!
//! 1. returns at once if its condition already holds (no strategy call, no clock read);
//! 2. otherwise asks the strategy for a spin limit ([`WaitStrategy::spin_limit`]) and spins,
//!    re-checking, until the condition holds or the limit passes. A strategy that does not
//!    want to hear how waits went ([`WaitStrategy::wants_outcomes`]) and spins for at least
//!    [`CLOCK_FREE_MIN_SPIN`] is first polled [`CLOCK_FREE_POLLS`] times without reading the
//!    clock (a microsecond or two, on top of the limit): most waits at a join or barrier of
//!    short loops end there, and a clock read costs 25-50 ns on a virtual machine;
//! 3. then blocks: it announces itself in the event's sleeper count (`SeqCst`), and in a loop
//!    reads the sequence, re-checks the condition (`SeqCst`) and sleeps on the futex while the
//!    sequence still has the value it read;
//! 4. reports the wait to the strategy ([`WaitStrategy::waited`]), when it wants outcomes.
//!
//! The condition is either "the sequence moved" ([`Event::wait`]; the notifier increments it)
//! or another word the notifier writes ([`Event::wait_until`]; the notifier then increments the
//! sequence only when the sleeper count is non-zero). Both sides use `SeqCst` for "write mine,
//! read theirs", so either the notifier sees the sleeper or the sleeper sees the condition: no
//! wake-up is lost, and a wait that ends in the spin phase costs no system call on either
//! side.
//!
//! Idle workers wait with [`WaitSite::Idle`]; the runtime caps their spin at
//! [`IDLE_SPIN_CAP`] whatever the strategy returns, so an idle runtime never burns a CPU.

use std::fmt;
use std::time::{Duration, Instant};

use crate::payload::catch;
use crate::sync::{dekker_fence, AtomicU32, FutexWord, Ordering};

/// The longest an idle worker spins before it blocks, whatever its strategy says.
pub const IDLE_SPIN_CAP: Duration = Duration::from_millis(1);

/// Where a thread is waiting.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitSite {
    /// The thread that started a region, waiting for the team at the region's end.
    Join,
    /// A team member at [`Team::barrier`](crate::Team::barrier) or at the implicit barrier that
    /// ends a work-shared loop inside a region.
    Barrier,
    /// A team member at the timed barrier of a probe (see [`Plan::Probe`](crate::Plan::Probe)).
    Probe,
    /// A worker between regions, waiting to be given work.
    Idle,
}

/// What a strategy is told about a wait that is about to start or has ended.
#[non_exhaustive]
#[derive(Clone, Copy, Debug)]
pub struct WaitInfo {
    /// Where the wait happens.
    pub site: WaitSite,
    /// The waiting thread's member index in its team (0 is the thread that started the region;
    /// for [`WaitSite::Idle`] it is the worker's index, starting at 1).
    pub member: usize,
    /// The size of the team (for [`WaitSite::Idle`], the runtime's `max_threads`).
    pub team_size: usize,
}

/// How a wait went.
#[non_exhaustive]
#[derive(Clone, Copy, Debug)]
pub struct WaitOutcome {
    /// From the start of the wait to its end (spinning and blocking together).
    pub waited: Duration,
    /// Whether the thread gave up spinning and blocked in the kernel.
    pub blocked: bool,
}

/// How a thread waits at a join, a barrier, or while idle: spin for a while, then block.
///
/// The runtime owns the waiting loop and the futex; a strategy only chooses the spin limit and
/// may learn from how waits went. One strategy object serves every thread of a runtime, so its
/// methods take `&self` and are called concurrently.
///
/// All methods are called by the waiting thread itself (or, for
/// [`all_arrived`](WaitStrategy::all_arrived), by the last thread to arrive at a barrier, just
/// before it releases the others). They must not block, must not panic, and should be cheap:
/// they sit on the barrier's critical path. A panic in [`spin_limit`](WaitStrategy::spin_limit)
/// or [`waited`](WaitStrategy::waited) is caught (after the panic hook has reported it): the
/// wait then blocks at once, or its report is dropped. A panic in
/// [`wants_arrivals`](WaitStrategy::wants_arrivals) or
/// [`all_arrived`](WaitStrategy::all_arrived) poisons the region, as a panic of its body does.
pub trait WaitStrategy: Send + Sync + fmt::Debug {
    /// How long to spin before blocking. [`Duration::MAX`] spins until released (for
    /// [`WaitSite::Idle`] the runtime caps it at [`IDLE_SPIN_CAP`]); [`Duration::ZERO`] blocks at
    /// once.
    fn spin_limit(&self, info: &WaitInfo) -> Duration;

    /// Called when a wait that did not end at once has ended (only when
    /// [`wants_outcomes`](WaitStrategy::wants_outcomes) is true).
    fn waited(&self, info: &WaitInfo, outcome: &WaitOutcome) {
        let _ = (info, outcome);
    }

    /// Whether the strategy wants [`waited`](WaitStrategy::waited) calls. When it returns
    /// `false`, waits read the clock only to enforce the spin limit, and a wait that ends
    /// within its first [`CLOCK_FREE_POLLS`] polls reads it not at all (see the module docs).
    /// Defaults to `true`; a strategy that learns from waits must keep it.
    fn wants_outcomes(&self) -> bool {
        true
    }

    /// Whether the strategy wants [`all_arrived`](WaitStrategy::all_arrived) calls. When it
    /// returns `true`, every member reads the clock as it arrives at a team barrier.
    fn wants_arrivals(&self) -> bool {
        false
    }

    /// Called by the last thread to arrive at a team barrier, before it releases the others,
    /// with each member's arrival time in nanoseconds since the region started (index =
    /// member index). Only called when [`wants_arrivals`](WaitStrategy::wants_arrivals) is true.
    fn all_arrived(&self, info: &WaitInfo, arrivals_ns: &[u64]) {
        let _ = (info, arrivals_ns);
    }
}

/// The default strategy: spin for a bounded time, then block.
///
/// The default spin is 50 µs: about twice the cost of a cross-CPU futex wake on a virtual
/// machine (~30 µs), so a wait that ends within two context switches never blocks, and a wait
/// for a thread that is not running (an oversubscribed machine) gives the CPU away soon.
#[derive(Clone, Copy, Debug)]
pub struct SpinThenPark {
    spin: Duration,
}

impl SpinThenPark {
    /// The default spin limit.
    pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);

    /// A strategy that spins for `spin`, then blocks.
    pub const fn new(spin: Duration) -> Self {
        Self { spin }
    }

    /// The spin limit.
    pub const fn spin(&self) -> Duration {
        self.spin
    }
}

impl Default for SpinThenPark {
    fn default() -> Self {
        Self::new(Self::DEFAULT_SPIN)
    }
}

impl WaitStrategy for SpinThenPark {
    fn spin_limit(&self, _info: &WaitInfo) -> Duration {
        self.spin
    }

    fn wants_outcomes(&self) -> bool {
        false
    }
}

/// A sequence number threads wait on, with a sleeper count so that notifying costs no system
/// call while nobody sleeps. See the module docs for the protocol.
#[derive(Debug, Default)]
pub(crate) struct Event {
    seq: FutexWord,
    sleepers: AtomicU32,
}

impl Event {
    /// The current sequence number (`Acquire`: what the notifier wrote before notifying is
    /// visible once a changed value is seen).
    #[inline]
    pub(crate) fn current(&self) -> u32 {
        self.seq.load(Ordering::Acquire)
    }

    /// Move the sequence on and wake every sleeper.
    #[inline]
    pub(crate) fn notify(&self) {
        self.add_notify(1);
    }

    /// Adds `delta` to the sequence (wrapping) without waking anyone; returns the previous
    /// value (`AcqRel`). For a sequence used as a word whose waiters wait, with
    /// [`wait_until`](Event::wait_until), for a change in some of its bits only (the team
    /// barrier's arrival count and generation): the changes they do not wait for need no wake.
    #[inline]
    pub(crate) fn add(&self, delta: u32) -> u32 {
        self.seq.fetch_add(delta, Ordering::AcqRel)
    }

    /// Adds `delta` to the sequence (wrapping) and wakes every sleeper.
    #[inline]
    pub(crate) fn add_notify(&self, delta: u32) {
        self.seq.fetch_add(delta, Ordering::SeqCst);
        self.wake_sleepers();
    }

    /// Sets `bits` in the sequence and wakes every sleeper.
    #[inline]
    pub(crate) fn set_notify(&self, bits: u32) {
        self.seq.fetch_or(bits, Ordering::SeqCst);
        self.wake_sleepers();
    }

    /// Keeps only the bits of `keep` in the sequence. Only while nobody waits on the event.
    #[inline]
    pub(crate) fn retain(&self, keep: u32) {
        let v = self.seq.load(Ordering::Relaxed);
        if v & !keep != 0 {
            self.seq.store(v & keep, Ordering::Relaxed);
        }
    }

    #[inline]
    fn wake_sleepers(&self) {
        dekker_fence();
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            self.seq.wake_all();
        }
    }

    /// Wake the sleepers of [`wait_until`](Event::wait_until), if there are any. The caller
    /// must have made the waiters' condition true with a `SeqCst` write first.
    #[inline]
    pub(crate) fn notify_sleepers(&self) {
        dekker_fence();
        if self.sleepers.load(Ordering::SeqCst) != 0 {
            self.seq.fetch_add(1, Ordering::SeqCst);
            self.seq.wake_all();
        }
    }

    /// Wait until the sequence differs from `seen` or `cancel()` returns true. Whoever makes
    /// `cancel()` true must call [`notify`](Event::notify) afterwards, or a blocked waiter
    /// would not see it. Returns whether the wait blocked in the kernel.
    #[cfg(test)]
    pub(crate) fn wait(
        &self,
        seen: u32,
        strategy: &dyn WaitStrategy,
        info: &WaitInfo,
        cancel: impl Fn() -> bool,
    ) -> bool {
        self.wait_until(|| self.current() != seen || cancel(), strategy, info)
    }

    /// Wait until `done()` is true. Whoever makes it true does so with a `SeqCst` write and
    /// then calls [`notify_sleepers`](Event::notify_sleepers) (or [`notify`](Event::notify)).
    /// Returns whether the wait blocked in the kernel.
    #[inline]
    pub(crate) fn wait_until(
        &self,
        done: impl Fn() -> bool,
        strategy: &dyn WaitStrategy,
        info: &WaitInfo,
    ) -> bool {
        if done() {
            return false;
        }
        self.wait_slow(&done, strategy, info)
    }

    /// Sleeps until `done()`, without spinning first: the second half of
    /// [`wait_until`](Event::wait_until), with the same contract for whoever makes `done()`
    /// true. Returns whether it blocked in the kernel.
    pub(crate) fn sleep_until(&self, done: &dyn Fn() -> bool) -> bool {
        let mut blocked = false;
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        dekker_fence();
        loop {
            let seen = self.seq.load(Ordering::SeqCst);
            if done() {
                break;
            }
            blocked = true;
            self.seq.sleep(seen);
        }
        self.sleepers.fetch_sub(1, Ordering::Release);
        blocked
    }

    /// Whether a thread sleeps on the event (or is about to check its condition and sleep).
    #[inline]
    pub(crate) fn has_sleepers(&self) -> bool {
        self.sleepers.load(Ordering::SeqCst) != 0
    }

    #[cold]
    fn wait_slow(
        &self,
        done: &dyn Fn() -> bool,
        strategy: &dyn WaitStrategy,
        info: &WaitInfo,
    ) -> bool {
        // A strategy is user code; a panic in it (the panic hook has reported it) must not
        // unwind out of a wait: the thread at a join holds the region's body on its stack while
        // workers run it, and an idle worker that unwound would never run a region again.
        let mut limit = catch(|| strategy.spin_limit(info)).unwrap_or(Duration::ZERO);
        if info.site == WaitSite::Idle {
            limit = limit.min(IDLE_SPIN_CAP);
        }
        let report = catch(|| strategy.wants_outcomes()).unwrap_or(false);
        if !report && limit >= CLOCK_FREE_MIN_SPIN && poll_clock_free(done) {
            return false;
        }
        let start = Instant::now();
        let blocked = spin_until(start, limit, done) && self.sleep_until(done);
        if report {
            let outcome = WaitOutcome {
                waited: start.elapsed(),
                blocked,
            };
            let _ = catch(|| strategy.waited(info, &outcome));
        }
        blocked
    }
}

/// How many times a wait polls its condition before its first clock read, for strategies that
/// do not want outcomes (see the module docs): about 1.6 µs at the 25 ns of a `pause` on this
/// project's machines.
pub const CLOCK_FREE_POLLS: u32 = 64;

/// The shortest spin limit for which a wait polls [`CLOCK_FREE_POLLS`] times first; below it a
/// wait reads the clock at once, so that a short limit stays short.
pub const CLOCK_FREE_MIN_SPIN: Duration = Duration::from_micros(10);

/// Polls `done()` up to [`CLOCK_FREE_POLLS`] times with the CPU's pause instruction in between;
/// true when it became true.
#[cfg(not(loom))]
#[inline]
fn poll_clock_free(done: &dyn Fn() -> bool) -> bool {
    for _ in 0..CLOCK_FREE_POLLS {
        std::hint::spin_loop();
        if done() {
            return true;
        }
    }
    false
}

/// Under loom the clock-free polls are part of the spin, which the model already covers with
/// one look (see [`spin_until`]).
#[cfg(loom)]
fn poll_clock_free(_done: &dyn Fn() -> bool) -> bool {
    false
}

/// How long a waiter spins on the CPU before it starts yielding it between checks.
pub const PURE_SPIN: Duration = Duration::from_micros(4);

/// Spin until `done()` or until `limit` has passed since `start`. Returns true when the limit
/// passed first. The first [`PURE_SPIN`] spins with the CPU's pause instruction; after that the
/// waiter yields the CPU (`sched_yield`) between checks, so that on an oversubscribed machine the
/// thread it waits for, if it is queued on the same CPU, can run.
#[cfg(not(loom))]
#[inline]
pub(crate) fn spin_until(start: Instant, limit: Duration, done: impl Fn() -> bool) -> bool {
    let mut spins = 0u32;
    loop {
        if done() {
            return false;
        }
        spins = spins.wrapping_add(1);
        if spins % 32 == 0 {
            let waited = start.elapsed();
            if waited >= limit {
                return true;
            }
            if waited >= PURE_SPIN {
                crate::sync::thread::yield_now();
                continue;
            }
        }
        std::hint::spin_loop();
    }
}

/// Under loom a non-zero spin is one more look at the condition after a yield: the model then
/// covers both a spin that succeeds and one that gives up.
#[cfg(loom)]
pub(crate) fn spin_until(_start: Instant, limit: Duration, done: impl Fn() -> bool) -> bool {
    if limit.is_zero() {
        return !done();
    }
    loom::thread::yield_now();
    !done()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Debug)]
    struct Block;
    impl WaitStrategy for Block {
        fn spin_limit(&self, _: &WaitInfo) -> Duration {
            Duration::ZERO
        }
    }

    fn info() -> WaitInfo {
        WaitInfo {
            site: WaitSite::Barrier,
            member: 1,
            team_size: 2,
        }
    }

    #[test]
    fn wait_returns_at_once_when_already_moved() {
        let e = Event::default();
        let seen = e.current();
        e.notify();
        assert!(!e.wait(seen, &Block, &info(), || false));
    }

    #[test]
    fn blocked_waiter_is_woken() {
        let e = Arc::new(Event::default());
        let seen = e.current();
        let e2 = Arc::clone(&e);
        let h = std::thread::spawn(move || e2.wait(seen, &Block, &info(), || false));
        std::thread::sleep(Duration::from_millis(50));
        e.notify();
        assert!(h.join().unwrap(), "a zero spin limit must block");
    }

    #[test]
    fn spin_only_waiter_does_not_block() {
        let e = Arc::new(Event::default());
        let seen = e.current();
        let e2 = Arc::clone(&e);
        let spin = SpinThenPark::new(Duration::MAX);
        let h = std::thread::spawn(move || e2.wait(seen, &spin, &info(), || false));
        std::thread::sleep(Duration::from_millis(20));
        e.notify();
        assert!(!h.join().unwrap());
    }
}
