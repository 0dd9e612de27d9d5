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
//! `episode` and clears `SLEEP` and `STAMPED`, in one step: that step is the release. The last arriver wakes
//! sleepers if the value it replaced had `SLEEP` set. Every other thread waits until the
//! episode differs from the one it arrived in: it spins for the strategy's
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
            return Err(Error::participants(n));
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

    /// The last arriver's learning after the release of episode `ep`, when there is any: its
    /// first arriver stamped its arrival (`stamped`), or the barrier has one participant (who
    /// then also reports the windows of short episodes).
    #[cold]
    fn after_release(&self, ep: u32, stamped: bool) {
        if stamped {
            self.record_stamp(ep);
        }
        if self.n == 1 && ep % SHORT_BATCH == SHORT_BATCH - 1 {
            self.report_window();
        }
    }

    /// Reports the short episodes of the last window of [`SHORT_BATCH`]: those whose first
    /// arriver did not stamp. The first arriver of every `SHORT_BATCH`-th episode reports
    /// them at once, before it starts spinning, so that a barrier whose threads keep arriving
    /// together neither reads the clock nor writes a shared word nor touches the estimator
    /// every episode, and its last arriver does no more than a bit test. A long episode whose
    /// leader counts it only after the window was reported makes that window report one short
    /// too many, and the next one short fewer: over two windows the totals are right.
    fn report_window(&self) {
        // Up to one window's worth of longs; any more (a long counted late by the last
        // window's leader, already reported there as short) stay for the next window, whose
        // shorts they then take back.
        let longs = match self.stamps.longs.load(Ordering::Relaxed) {
            0 => 0,
            _ => self
                .stamps
                .longs
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                    Some(l.saturating_sub(SHORT_BATCH))
                })
                .map_or(0, |l| l.min(SHORT_BATCH)),
        };
        let shorts = SHORT_BATCH - longs;
        if shorts > 0 {
            self.strategy.record_short_imbalances(shorts);
        }
    }

    /// A long episode: `now - first arrival` to the strategy.
    fn record_stamp(&self, ep: u32) {
        let first = self.stamps.first.load(Ordering::Relaxed);
        // The tag tells this episode's stamp from the next one's, should that episode's first
        // arriver already have overwritten it (this leader was preempted): that episode is then
        // counted as short.
        if first & !TIME_MASK == Self::tag(ep) {
            let now = self.now_ns(Instant::now());
            self.strategy
                .record_imbalance(Duration::from_nanos(now.saturating_sub(first & TIME_MASK)));
            self.stamps.longs.fetch_add(1, Ordering::Relaxed);
        }
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{AdaptiveGlobal, Block, Config, FixedSpin, Spin};
    use std::sync::atomic::AtomicUsize;

    fn cfg() -> Config {
        Config::builder()
            .context_switch(Duration::from_micros(30))
            .release_latency(Duration::from_micros(1))
            .build()
            .unwrap()
    }

    #[test]
    fn generation_carries_past_the_episode_wrap() {
        let b = Barrier::new(1, Block).unwrap();
        for g in 1..=(1u64 << EPISODE_BITS) + 5 {
            assert_eq!(b.wait().unwrap().generation, g);
        }
        assert_eq!(b.stats().generation, (1 << EPISODE_BITS) + 5);
    }

    #[test]
    fn participants_are_checked() {
        let e = Barrier::new(0, Block).unwrap_err();
        assert_eq!(
            e.to_string(),
            "barrier of 0 participants: must be between 1 and 65535"
        );
        assert!(Barrier::new(MAX_PARTICIPANTS + 1, Block).is_err());
    }

    #[test]
    fn single_participant_never_waits() {
        let b = Barrier::new(1, AdaptiveGlobal::with_config(&cfg())).unwrap();
        for g in 1..=40 {
            let r = b.wait().unwrap();
            assert!(r.leader);
            assert_eq!(r.generation, g);
        }
        // every episode had no imbalance; they are reported in batches
        assert_eq!(b.stats().imbalance, Some(Duration::ZERO));
    }

    fn run<S: TwoPhase>(b: &Barrier<S>, threads: usize, episodes: u64) {
        let leaders = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    let _g = b.guard();
                    for e in 1..=episodes {
                        let r = b.wait().unwrap();
                        assert_eq!(r.generation, e);
                        if r.leader {
                            leaders.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(leaders.load(Ordering::Relaxed) as u64, episodes);
        let st = b.stats();
        assert_eq!(st.generation, episodes);
        assert_eq!(st.arrivals, episodes * threads as u64);
        assert_eq!(
            st.spin_successes + st.blocks,
            episodes * (threads as u64 - 1)
        );
    }

    #[test]
    fn every_strategy_completes_episodes_in_order() {
        run(&Barrier::new(3, Block).unwrap(), 3, 200);
        run(&Barrier::new(3, Spin).unwrap(), 3, 200);
        run(
            &Barrier::new(3, FixedSpin::new(Duration::from_micros(20))).unwrap(),
            3,
            200,
        );
        run(
            &Barrier::new(4, AdaptiveGlobal::with_config(&cfg())).unwrap(),
            4,
            200,
        );
        run(
            &Barrier::new(2, crate::AdaptiveLocal::with_config(&cfg())).unwrap(),
            2,
            200,
        );
    }

    #[test]
    fn block_strategy_blocks_when_released_late() {
        let b = Barrier::new(2, Block).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| b.wait().unwrap());
            std::thread::sleep(Duration::from_millis(30));
            b.wait().unwrap();
        });
        assert_eq!(b.stats().blocks, 1);
    }

    #[test]
    fn panic_poisons_waiters_and_later_arrivals() {
        let b = Barrier::new(3, FixedSpin::new(Duration::from_micros(50))).unwrap();
        std::thread::scope(|s| {
            let w = s.spawn(|| b.wait());
            let p = s.spawn(|| {
                let _g = b.guard();
                std::thread::sleep(Duration::from_millis(20));
                panic!("participant fails");
            });
            assert!(p.join().is_err());
            let e = w.join().unwrap().unwrap_err();
            assert!(e.is_poisoned(), "{e}");
        });
        assert!(b.is_poisoned());
        assert!(b.wait().unwrap_err().is_poisoned());
        assert!(b.stats().poisoned);
    }

    #[test]
    fn global_estimates_the_imbalance_of_sleepy_partner() {
        let b = Barrier::new(2, AdaptiveGlobal::with_config(&cfg())).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..20 {
                    b.wait().unwrap();
                }
            });
            for _ in 0..20 {
                std::thread::sleep(Duration::from_millis(2));
                b.wait().unwrap();
            }
        });
        let st = b.stats();
        let v = st.imbalance.expect("an estimate");
        // Each episode the other thread waits ~2 ms; a loaded machine only makes it longer.
        assert!(v >= Duration::from_millis(1), "{v:?}");
        // 2 ms is more than V = 300 µs: spin only S.
        assert_eq!(st.spin, Duration::from_micros(60));
    }

    /// Counts what the barrier reports, for the window tests.
    #[derive(Debug, Default)]
    struct Reports {
        longs: AtomicU64,
        shorts: AtomicU64,
    }

    impl TwoPhase for Reports {
        fn name(&self) -> &'static str {
            "reports"
        }
        fn barrier_spin(&self) -> Duration {
            Duration::from_secs(5)
        }
        fn read_spin(&self) -> Duration {
            Duration::from_secs(5)
        }
        fn wants_imbalance(&self) -> bool {
            true
        }
        fn record_imbalance(&self, _: Duration) {
            self.longs.fetch_add(1, Ordering::Relaxed);
        }
        fn record_short_imbalances(&self, count: u32) {
            self.shorts.fetch_add(u64::from(count), Ordering::Relaxed);
        }
    }

    fn shorts_of_one_report(b: &Barrier<Reports>) -> u64 {
        let before = b.strategy.shorts.load(Ordering::Relaxed);
        b.report_window();
        b.strategy.shorts.load(Ordering::Relaxed) - before
    }

    #[test]
    fn windows_report_shorts_as_32_less_the_longs_with_a_carry() {
        let b = Barrier::new(2, Reports::default()).unwrap();
        // episode 0's first arriver reports a window that never happened: nothing
        assert_eq!(shorts_of_one_report(&b), 0);
        assert_eq!(shorts_of_one_report(&b), 32);
        b.stamps.longs.store(5, Ordering::Relaxed);
        assert_eq!(shorts_of_one_report(&b), 27);
        // a window's last long counted after its report: 33 longs in the next one, the extra
        // one taking back the short the late window reported too many
        b.stamps.longs.store(33, Ordering::Relaxed);
        assert_eq!(shorts_of_one_report(&b), 0);
        assert_eq!(shorts_of_one_report(&b), 31);
        assert_eq!(shorts_of_one_report(&b), 32);
        // one participant: the leader reports, from the first real window on
        let one = Barrier::new(1, Reports::default()).unwrap();
        assert_eq!(shorts_of_one_report(&one), 32);
    }

    #[test]
    fn every_episode_is_reported_once_short_or_long() {
        // 97 episodes: the windows of episodes 0-31, 32-63 and 64-95 are reported (at the
        // arrivals of episodes 32, 64 and 96), each episode in them as long or short. Episode
        // 96 may have been long too, and episode 95's leader may count its long only after the
        // last report (which then counts it as short as well): 96 to 98. A partner that arrives
        // 300 µs late makes most episodes long; a loaded machine may turn some short, which
        // changes nothing here. (A window reported for nothing at episode 0 would make 128.)
        let b = Barrier::new(2, Reports::default()).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..97 {
                    b.wait().unwrap();
                }
            });
            for _ in 0..97 {
                std::thread::sleep(Duration::from_micros(300));
                b.wait().unwrap();
            }
        });
        let r = &b.strategy;
        let (longs, shorts) = (
            r.longs.load(Ordering::Relaxed),
            r.shorts.load(Ordering::Relaxed),
        );
        assert!(
            (96..=98).contains(&(longs + shorts)),
            "{longs} long and {shorts} short episodes reported for 96 (to 98)"
        );
    }

    #[test]
    fn a_strategy_shared_by_short_lived_barriers_learns_their_imbalance() {
        // One strategy for many barriers of two episodes each (a barrier per job), every
        // episode about 1 ms imbalanced: no barrier completes a window, so only the long
        // episodes are reported, and the estimate is about 1 ms (not zeros for windows that
        // never were).
        let cfg = Config::builder()
            .context_switch(Duration::from_micros(300))
            .release_latency(Duration::from_micros(1))
            .build()
            .unwrap();
        let g = std::sync::Arc::new(AdaptiveGlobal::with_config(&cfg));
        for _ in 0..30 {
            let b = Barrier::new(2, std::sync::Arc::clone(&g)).unwrap();
            std::thread::scope(|s| {
                s.spawn(|| {
                    for _ in 0..2 {
                        b.wait().unwrap();
                    }
                });
                for _ in 0..2 {
                    std::thread::sleep(Duration::from_millis(1));
                    b.wait().unwrap();
                }
            });
        }
        let est = g.imbalance_estimate().expect("an estimate");
        assert!(est >= Duration::from_micros(500), "{est:?}");
    }
}
