//! [`Barrier`]: a centralized barrier whose waiters spin, then block, as a [`TwoPhase`]
//! strategy says.
//!
//! # Protocol
//!
//! One 32-bit futex word, on its own cache line, holds the whole state:
//! `episode (13 bits) << 19 | STAMPED << 18 | arrived (16 bits) << 2 | SLEEP << 1 | POISON`.
//!
//! An arriving thread reads the word and, with a compare-exchange (`AcqRel`), either adds one
//! to `arrived` or, if it is the last of the `n` participants, sets `arrived` to 0, adds one to
//! `episode` and clears `SLEEP` and `STAMPED`, in one step: that step is the release. The last
//! arriver wakes sleepers if the value it replaced had `SLEEP` set. Every other thread waits
//! until the episode differs from the one it arrived in: it spins for the strategy's
//! [`barrier_spin`](TwoPhase::barrier_spin), then sets `SLEEP` and blocks on the futex (the
//! `sync` module explains why no wake-up is lost). A release is thus a single
//! read-modify-write of one cache line that the waiters spin on, and an arrival is one more
//! (plus, in a long episode, the first arriver's setting of `STAMPED`, below).
//!
//! Everything a participant wrote before arriving happens before every other participant's
//! return: the arrivals form one chain of read-modify-writes ending in the release, which the
//! waiters read with `Acquire`. Only the last arriver can change the episode, and it cannot
//! change it again before every participant has arrived again, so a waiter sees the episode
//! change exactly once (no ABA in spite of 13 bits), and the generation a participant observes
//! increases by exactly one per episode: generations never go backwards. The 64-bit generation
//! is the word's episode plus, in its high bits, how many times the episode wrapped (a
//! read-mostly counter the last arriver increments before a release that wraps).
//!
//! # Learning
//!
//! A waiter first spins [`FREE_SPINS`](crate::sync::FREE_SPINS) times without reading the
//! clock (about a microsecond); a wait that ends there is *short* and costs no clock read.
//! Otherwise it reads the clock and spins until the strategy's spin limit, measured from that
//! reading.
//!
//! For a strategy that [wants the imbalance](TwoPhase::wants_imbalance), the first arriver of
//! an episode stores that clock reading, tagged with the episode, on a line of its own, then
//! sets `STAMPED` in the futex word while the episode lasts. The last arriver sees `STAMPED` in
//! the value its release replaced, so only then does it read the stamp; it then reads the
//! clock and reports `now - first arrival` to
//! [`record_imbalance`](TwoPhase::record_imbalance), and the strategy publishes the next spin
//! time in a word waiters read when they start waiting. An episode without a stamp had a short
//! imbalance (the first arriver was released within its free spins, or between its stamp and
//! its setting of `STAMPED`), and costs its last arriver one bit test: any work between a
//! release and the leader's next arrival is on a quiet barrier's critical path. The first
//! arriver of every 32nd episode, which waits anyway, reports the last window's short ones
//! (none at episode 0) at once with
//! [`record_short_imbalances`](TwoPhase::record_short_imbalances) (32 less the long ones,
//! which leaders count next to the stamp), so a barrier whose threads keep arriving together
//! neither reads the clock, nor writes a shared word, nor touches the estimator every episode;
//! and a batch of zeros into an estimator sample of zeros costs O(1). Doing all this after the
//! release keeps the estimator off the release's critical path; a waiter of the next episode
//! that starts before the update uses the previous spin time. Measured waits and imbalances
//! leave out the free spins (about a microsecond) and, every 32nd episode, the first arriver's
//! report (nothing when the sample is all zeros, a few microseconds at most otherwise).
//!
//! Waiters report their own wait (from the start of the timed spin to the release) to
//! [`record_wait`](TwoPhase::record_wait), or a short wait to
//! [`record_short_wait`](TwoPhase::record_short_wait).
//!
//! # Poisoning
//!
//! A participant that panics while holding a [`PoisonGuard`] (or calls [`Barrier::poison`])
//! sets `POISON` (`fetch_or`) and wakes every sleeper: threads waiting for the episode, and threads
//! that arrive later, get [`Error`] (with [`Error::is_poisoned`]) instead of waiting for a
//! participant that will never come. A waiter whose episode completed before the poisoning
//! still returns `Ok` for it. Poisoning is permanent.

mod learning;
#[cfg(all(test, not(loom)))]
mod tests;

use std::time::{Duration, Instant};

use crate::strategy::SHORT_BATCH;
use crate::sync::{AtomicU32, AtomicU64, Futex, Ordering, Padded};
use crate::{Error, TwoPhase};

/// The most participants a [`Barrier`] accepts.
pub const MAX_PARTICIPANTS: usize = 65_535;

const POISON: u32 = 1;
const COUNT_SHIFT: u32 = 2;
const COUNT_MASK: u32 = 0xffff;
/// The episode's first arriver stored its arrival time in `Stamps::first`.
const STAMPED: u32 = 1 << 18;
const EPISODE_SHIFT: u32 = 19;
/// Bits of the episode count in the futex word.
const EPISODE_BITS: u32 = 13;
const EPISODE_MASK: u32 = (1 << EPISODE_BITS) - 1;
const TIME_BITS: u32 = 48;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;

#[inline]
fn episode(w: u32) -> u32 {
    w >> EPISODE_SHIFT
}

#[inline]
fn count(w: u32) -> u32 {
    (w >> COUNT_SHIFT) & COUNT_MASK
}

/// How a [`Barrier::wait`] went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierWaitResult {
    /// This thread arrived last and released the others.
    pub leader: bool,
    /// The episode this wait completed: 1 for the barrier's first, then 2, 3, ...
    pub generation: u64,
    /// This thread gave up spinning and blocked in the kernel.
    pub blocked: bool,
}

/// A barrier's counters (see [`Barrier::stats`]).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarrierStats {
    /// Completed episodes.
    pub generation: u64,
    /// Arrivals, those of the current (incomplete) episode included.
    pub arrivals: u64,
    /// Waits of completed episodes that ended without blocking (released during the spin
    /// phase, or before the waiter started spinning): `generation x (n - 1) - blocks`.
    pub spin_successes: u64,
    /// Waits that blocked in the kernel.
    pub blocks: u64,
    /// The spin time a waiter would use now (for [`AdaptiveLocal`](crate::AdaptiveLocal), the
    /// calling thread's).
    pub spin: Duration,
    /// The strategy's current imbalance estimate, if it keeps one.
    pub imbalance: Option<Duration>,
    /// Whether the barrier is poisoned.
    pub poisoned: bool,
}

/// What the learning shares, on a line of its own: written and read only in long episodes
/// (and read once per window of short ones).
#[derive(Debug)]
struct Stamps {
    /// The first arrival's clock reading, tagged with its episode.
    first: AtomicU64,
    /// Long episodes (with a first-arrival stamp) counted since the last report of short ones.
    longs: AtomicU32,
}

/// A barrier for a fixed number of threads, waiting with a [`TwoPhase`] strategy.
///
/// ```
/// use asat_implicit::{AdaptiveGlobal, Barrier, Config};
/// use std::time::Duration;
///
/// let cfg = Config::builder().context_switch(Duration::from_micros(30)).build()?;
/// let barrier = Barrier::new(2, AdaptiveGlobal::with_config(&cfg))?;
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| {
///             let _guard = barrier.guard(); // a panic here poisons the barrier
///             for _ in 0..100 {
///                 barrier.wait().expect("not poisoned");
///             }
///         });
///     }
/// });
/// let st = barrier.stats();
/// assert_eq!(st.generation, 100);
/// assert_eq!(st.arrivals, 200);
/// assert_eq!(st.spin_successes + st.blocks, 100); // one waiter per episode
/// # Ok::<(), asat_implicit::Error>(())
/// ```
#[derive(Debug)]
pub struct Barrier<S> {
    futex: Padded<Futex>,
    stamps: Padded<Stamps>,
    blocks: Padded<AtomicU64>,
    /// How many times the episode count in the futex word wrapped (the generation's high
    /// bits; incremented before the release that wraps, so read-mostly).
    wraps: AtomicU64,
    n: u32,
    epoch: Instant,
    strategy: S,
}

impl<S: TwoPhase> Barrier<S> {
    /// A barrier for `n` threads (`1..=`[`MAX_PARTICIPANTS`]).
    pub fn new(n: usize, strategy: S) -> Result<Self, Error> {
        if n == 0 || n > MAX_PARTICIPANTS {
            return Err(Error::participants(n, MAX_PARTICIPANTS));
        }
        Ok(Self {
            futex: Padded(Futex::new(0)),
            stamps: Padded(Stamps {
                first: AtomicU64::new(u64::MAX),
                // With several participants the first window is reported at episode 0, when
                // there has been none: counting it as all long reports nothing for it.
                longs: AtomicU32::new(if n > 1 { SHORT_BATCH } else { 0 }),
            }),
            blocks: Padded(AtomicU64::new(0)),
            wraps: AtomicU64::new(0),
            n: n as u32,
            epoch: Instant::now(),
            strategy,
        })
    }

    /// The number of participants.
    pub fn participants(&self) -> usize {
        self.n as usize
    }

    /// The strategy (also the one to use for this job's [`Flag`](crate::Flag) waits).
    pub fn strategy(&self) -> &S {
        &self.strategy
    }

    /// The generation a futex word shows, with the wraps of its episode count. A participant
    /// reads it after a release it waited for (or made), and the count cannot wrap again before
    /// that participant arrives again.
    fn generation_of(&self, word: u32) -> u64 {
        (self.wraps.load(Ordering::Acquire) << EPISODE_BITS) | u64::from(episode(word))
    }

    fn now_ns(&self, now: Instant) -> u64 {
        now.duration_since(self.epoch).as_nanos() as u64 & TIME_MASK
    }

    fn tag(ep: u32) -> u64 {
        u64::from(ep) << TIME_BITS
    }

    /// Waits until all participants have called `wait` in this episode.
    ///
    /// Returns the poisoning error if a participant panicked (or [`poison`](Barrier::poison)
    /// was called) before this episode completed.
    pub fn wait(&self) -> Result<BarrierWaitResult, Error> {
        let futex = &self.futex.0;
        let mut old = futex.load(Ordering::Relaxed);
        let mut carried = false;
        let last = loop {
            if old & POISON != 0 {
                if carried {
                    // The release that carried never happened.
                    self.wraps.fetch_sub(1, Ordering::Release);
                }
                return Err(Error::poisoned());
            }
            let last = count(old) + 1 == self.n;
            let new = if last {
                let ep = (episode(old) + 1) & EPISODE_MASK;
                if ep == 0 && !carried {
                    // This release wraps the episode count: carry into the high bits first.
                    self.wraps.fetch_add(1, Ordering::Release);
                    carried = true;
                }
                ep << EPISODE_SHIFT
            } else {
                old + (1 << COUNT_SHIFT)
            };
            match futex.compare_exchange_weak(old, new) {
                Ok(_) => break last,
                Err(v) => old = v,
            }
        };
        let ep = episode(old);
        if last {
            futex.wake_if_slept(old);
            if self.strategy.wants_imbalance() && (old & STAMPED != 0 || self.n == 1) {
                self.after_release(ep, old & STAMPED != 0);
            }
            return Ok(BarrierWaitResult {
                leader: true,
                generation: self.generation_of(((ep + 1) & EPISODE_MASK) << EPISODE_SHIFT),
                blocked: false,
            });
        }
        let stamp_first = count(old) == 0 && self.strategy.wants_imbalance();
        if stamp_first && ep % SHORT_BATCH == 0 {
            // This thread waits anyway: the previous window's short episodes.
            self.report_window();
        }
        let w = futex.wait(
            self.strategy.barrier_spin(),
            |v| episode(v) != ep || v & POISON != 0,
            |t| {
                if stamp_first {
                    self.stamps
                        .first
                        .store(Self::tag(ep) | self.now_ns(t), Ordering::Relaxed);
                    // (Release: the leader that sees the bit sees the stamp.)
                    futex.set_while(STAMPED, |v| episode(v) == ep && v & POISON == 0);
                }
            },
        );
        let now = futex.load(Ordering::Acquire);
        if episode(now) == ep {
            // Woken by the poisoning, not by a release.
            return Err(Error::poisoned());
        }
        if w.blocked {
            self.blocks.fetch_add(1, Ordering::Relaxed);
        }
        match w.timed_from {
            Some(t) => self.strategy.record_wait(t.elapsed(), w.blocked),
            None if !w.blocked => self.strategy.record_short_wait(),
            None => {}
        }
        Ok(BarrierWaitResult {
            leader: false,
            generation: self.generation_of(now),
            blocked: w.blocked,
        })
    }

    /// Poisons the barrier: every waiting and every later [`wait`](Barrier::wait) returns the
    /// poisoning error.
    pub fn poison(&self) {
        self.futex.0.or_and_wake(POISON);
    }

    /// Whether the barrier is poisoned.
    pub fn is_poisoned(&self) -> bool {
        self.futex.0.load(Ordering::Acquire) & POISON != 0
    }

    /// A guard that poisons the barrier if this thread panics while holding it. Each
    /// participant takes one before its first `wait`.
    pub fn guard(&self) -> PoisonGuard<'_, S> {
        PoisonGuard { barrier: self }
    }

    /// The barrier's counters and its strategy's current spin time and estimate.
    ///
    /// A snapshot for monitoring: during the release that wraps the word's 13-bit episode
    /// count (once every 8192 episodes) its `generation` can read 8192 ahead for that instant.
    /// The generations [`wait`](Barrier::wait) returns are exact.
    pub fn stats(&self) -> BarrierStats {
        let word = self.futex.0.load(Ordering::Acquire);
        let generation = self.generation_of(word);
        let blocks = self.blocks.load(Ordering::Relaxed);
        BarrierStats {
            generation,
            arrivals: generation * u64::from(self.n) + u64::from(count(word)),
            // every completed episode had n - 1 waits; those that did not block spun
            spin_successes: (generation * u64::from(self.n - 1)).saturating_sub(blocks),
            blocks,
            spin: self.strategy.barrier_spin(),
            imbalance: self.strategy.imbalance_estimate(),
            poisoned: self.is_poisoned(),
        }
    }
}

/// Poisons its barrier when dropped during a panic (see [`Barrier::guard`]).
#[derive(Debug)]
#[must_use = "the guard poisons the barrier only while it is alive"]
pub struct PoisonGuard<'a, S: TwoPhase> {
    barrier: &'a Barrier<S>,
}

impl<S: TwoPhase> Drop for PoisonGuard<'_, S> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.barrier.poison();
        }
    }
}
