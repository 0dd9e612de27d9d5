//! [`Waiter`]: two-phase waiting for MPI requests and collectives, with asat-implicit's
//! strategies and statistics.
//!
//! # The protocol
//!
//! A wait first tests its requests once (`MPI_Test`); requests that are done cost nothing
//! more. Otherwise it has two phases:
//!
//! 1. **Spin**: test the requests for the strategy's spin time, yielding the CPU between
//!    tests (`sched_yield`). On a CPU that no other thread wants the yield returns at once, so
//!    this is a busy spin that answers a running partner within a test or two; on a CPU that
//!    threads of other jobs want, they run first, in turn, so a rank whose partner is off its
//!    CPU does not keep a ready rank of another job off this one.
//! 2. **Block**: until the requests are done, in two stages:
//!    - *yield* (for the *yield time*, default 1 ms, [`Waiter::with_yield_time`],
//!      `ASAT_MPI_YIELD_US`; 0 skips it): the same test-and-yield loop, now counted as
//!      blocking (in [`WaitStats::yields`] and, for the strategies that learn, as a wait that
//!      blocked);
//!    - *nap*: sleep, test, and sleep again, with naps of 50 µs, 100 µs, 200 µs, ... doubling
//!      up to the *sleep cap* (default 1 ms, [`Waiter::with_sleep_cap`],
//!      `ASAT_MPI_SLEEP_CAP_US`), so that a long wait stops using the CPU altogether.
//!
//! So a wait polls, yielding, for the spin time plus the yield time and naps after that: the
//! strategy's spin time decides which waits count as spin successes (and what `local` and
//! `global` learn), the yield time when a wait stops competing for the CPU.
//!
//! Why yielding and sleeping and not a blocking call: Open MPI's default progress has no wait
//! that gives up the CPU. `MPI_Wait` polls the transports in a loop (with
//! `mpi_yield_when_idle` it calls `sched_yield` between polls, this protocol's spin without an
//! end). Nothing wakes a sleeping rank when a message arrives, so naps poll at a falling rate
//! instead. Their costs: the completion is seen up to one nap late, so at most about the time
//! already waited (naps double) and never more than the cap plus the kernel's timer slack (50
//! µs by default); and one `MPI_Test` and two context switches per nap, about a thousand a
//! second at a 1 ms cap, which is well under 1% of a CPU. A shorter cap answers sooner and
//! wakes more often.
//!
//! Why the yields (`BENCHMARKS.md` has the runs): with three 2-rank jobs on this
//! project's 2-CPU machine and steps of a few microseconds, a spin that did not yield and naps
//! right after it ran 1.2-1.6x slower than `mpi-yield` with the learning strategies and 3.5-5.9x
//! with `block` (a nap's 50 µs and the wake-up are long against such steps); spinning without
//! yielding before a yield stage was worse still (up to 2.9x), since spinning ranks kept the
//! ranks their partners waited for off the CPUs. With both yields the strategies are on a par
//! with `mpi-yield`.
//!
//! # Which spin time, and what is learned
//!
//! - [`Waiter::wait`] (one request) is the paper's *read*: it spins the strategy's
//!   [`read_spin`](TwoPhase::read_spin) (`S`, twice the context-switch cost) and learns
//!   nothing, as asat-implicit's [`Flag`](asat_implicit::Flag) does.
//! - [`Waiter::wait_all`] completes an exchange (the sends and receives of a step), which
//!   holds a rank until its partners reach the same step, as a barrier does: it spins the
//!   strategy's [`barrier_spin`](TwoPhase::barrier_spin) and records its wait
//!   ([`record_wait`](TwoPhase::record_wait), or
//!   [`record_short_wait`](TwoPhase::record_short_wait) when the requests were done at the
//!   first test), from which [`AdaptiveLocal`](asat_implicit::AdaptiveLocal) learns.
//! - [`Waiter::barrier`] does the same as `wait_all`. Its collective is `MPI_Ibarrier`,
//!   except where a strategy learns from each episode's **imbalance**, as
//!   [`AdaptiveGlobal`](asat_implicit::AdaptiveGlobal) does
//!   ([`wants_imbalance`](TwoPhase::wants_imbalance)). Across ranks no one sees every
//!   arrival, so the barrier carries the times: it is a non-blocking all-reduce
//!   (`MPI_Iallreduce`, maximum) of this rank's time from its previous barrier to its arrival
//!   `t`, `-t`, a flag for "no previous barrier" and a flag for "my strategy wants the
//!   imbalance". Every rank gets the largest and smallest `t`, whose difference is the spread
//!   of the arrivals when the ranks left the previous barrier together, with no clock compared
//!   across ranks (they may be on other nodes), and records it
//!   ([`record_imbalance`](TwoPhase::record_imbalance)): every rank's `global` estimator learns
//!   from the same episodes. A reduction cannot complete on any rank before every rank has
//!   contributed, so it is a barrier. Its price: on this project's 2-CPU machine (shared and
//!   noisy), 2 ranks
//!   bound to a core each, an `MPI_Iallreduce` took about 2 µs more than an `MPI_Ibarrier`
//!   (2.4-5 µs against 0.7-3.4 µs, tested in a loop); with 3 ranks on the 2 CPUs the two
//!   were equal (7-8 µs). So only strategies that learn from it pay it.
//! - [`Waiter::all_reduce_into`] (`MPI_Iallreduce`, a program's own reduction, such as a
//!   solver's convergence check) holds a rank until every rank has contributed, as a barrier
//!   does: the same spin and record as `wait_all`, and no imbalance learned (the
//!   program's data is all it carries).
//!
//! How the ranks agree on the collective (they must: mismatched collectives are erroneous MPI
//! and may hang): a waiter's **first** barrier is always the all-reduce, and its flags tell
//! every rank whether any rank's strategy wants the imbalance. If none does, all ranks' later
//! barriers on that waiter use `MPI_Ibarrier`; if any does, all use the all-reduce (and every
//! rank, whatever its strategy, gets the imbalance in its statistics). Ranks may thus mix
//! strategies. The first barrier returns no imbalance (no rank had a previous one).
//!
//! A waiter's first barrier settles its collective for every communicator it is used with,
//! and `t` is measured from its previous barrier on whatever communicator: give each
//! communicator its own waiter, or use a waiter first on the widest communicator it serves
//! (world), so that all ranks settle the same way.
//!
//! # Threads
//!
//! A waiter calls MPI on the calling thread. Under `MPI_THREAD_FUNNELED` (what
//! [`Hybrid`](crate::Hybrid) requests by default) that must be the thread that initialised MPI:
//! call the waiter outside parallel regions, or in a region only from member 0, the thread that
//! started it. Its statistics are atomics, so its waits and reductions may come from several
//! threads where the threading level allows MPI calls from several threads; its **barriers**
//! come from one thread, the one that made its first barrier, and from any other are refused
//! with an error (before any MPI call): the collective its barriers use is settled by the
//! first, and two threads could see it settled at different moments on different ranks,
//! which would mismatch the collectives. A waiter may move to another thread before its first
//! barrier.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use asat_implicit::{AnyStrategy, TwoPhase};
use mpi::collective::{Operation, SystemOperation};
use mpi::datatype::{Buffer, BufferMut};
use mpi::point_to_point::Status;
use mpi::raw::AsRaw;
use mpi::request::{Request, Scope};
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::error::{MAX_SLEEP_CAP, MAX_YIELD_TIME, MIN_SLEEP_CAP};
use crate::Error;

/// The default [sleep cap](Waiter::with_sleep_cap).
pub const DEFAULT_SLEEP_CAP: Duration = Duration::from_millis(1);

/// The default [yield time](Waiter::yield_time).
pub const DEFAULT_YIELD_TIME: Duration = Duration::from_millis(1);

/// The first nap of the block phase (Linux's default timer slack: a shorter sleep does not
/// wake sooner).
pub const FIRST_NAP: Duration = Duration::from_micros(50);

const NONE: u64 = u64::MAX;

/// A waiter's first barrier: an all-reduce that also settles the mode.
const MODE_FIRST: u8 = 0;
/// No rank's strategy wants the imbalance: `MPI_Ibarrier`.
const MODE_IBARRIER: u8 = 1;
/// Some rank's does: `MPI_Iallreduce` of the times.
const MODE_IALLREDUCE: u8 = 2;

/// What a [`Waiter`] has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitStats {
    /// Calls of `wait`, `wait_all`, `barrier` and `all_reduce_into`:
    /// `immediate + spin_successes + blocks`.
    pub waits: u64,
    /// Of which `barrier` calls.
    pub barriers: u64,
    /// Of which `all_reduce_into` calls.
    pub reductions: u64,
    /// Waits whose requests were done at the first test.
    pub immediate: u64,
    /// Waits that ended in the spin phase.
    pub spin_successes: u64,
    /// Waits that reached the block phase.
    pub blocks: u64,
    /// Naps taken in block phases.
    pub naps: u64,
    /// Yields (`sched_yield`) in block phases (those of spin phases are not counted).
    pub yields: u64,
    /// Time spent in waits that did not end at once (spinning and napping).
    pub waited: Duration,
    /// Barriers whose imbalance was learned (when some rank's strategy wants it: all but the
    /// waiter's first barrier).
    pub imbalances: u64,
    /// The imbalance of the last barrier that learned one.
    pub last_imbalance: Option<Duration>,
    /// The spin time a barrier or `wait_all` would use now.
    pub spin: Duration,
    /// The strategy's imbalance estimate, if it keeps one.
    pub imbalance: Option<Duration>,
}

#[derive(Debug, Default)]
struct Counters {
    waits: AtomicU64,
    barriers: AtomicU64,
    reductions: AtomicU64,
    immediate: AtomicU64,
    spun: AtomicU64,
    blocks: AtomicU64,
    naps: AtomicU64,
    yields: AtomicU64,
    waited_ns: AtomicU64,
    imbalances: AtomicU64,
    last_imbalance_ns: AtomicU64,
}

/// How one wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Immediate,
    Spun(Duration),
    Blocked {
        waited: Duration,
        naps: u64,
        yields: u64,
    },
}

/// Waits for MPI requests and barriers: test and yield for the strategy's spin time, then for
/// the yield time, then sleep with a bounded back-off while testing (the module docs give the
/// protocol).
///
/// ```no_run
/// use asat_implicit::AdaptiveGlobal;
/// use asat_mpi::Waiter;
/// use asat_mpi::mpi::traits::*;
///
/// let universe = asat_mpi::mpi::initialize().unwrap();
/// let world = universe.world();
/// let waiter = Waiter::new(AdaptiveGlobal::new());
/// let (rank, size) = (world.rank(), world.size());
/// let send = [rank as u64; 4];
/// let mut recv = [0u64; 4];
/// asat_mpi::mpi::request::scope(|scope| {
///     let to = world.process_at_rank((rank + 1) % size);
///     let from = world.process_at_rank((rank + size - 1) % size);
///     let r = from.immediate_receive_into(scope, &mut recv[..]);
///     let s = to.immediate_send(scope, &send[..]);
///     waiter.wait_all(vec![r, s]);
/// });
/// waiter.barrier(&world)?;
/// println!("{:?}", waiter.stats());
/// # Ok::<(), asat_mpi::Error>(())
/// ```
#[derive(Debug)]
pub struct Waiter<S = AnyStrategy> {
    strategy: S,
    sleep_cap: Duration,
    yield_time: Duration,
    epoch: Instant,
    /// When this waiter's last barrier completed, in nanoseconds since `epoch` (`NONE`: never).
    last_barrier_ns: AtomicU64,
    /// Which collective its barriers use (`MODE_*`), settled by its first barrier.
    mode: AtomicU8,
    /// The thread of its first barrier, the only one its barriers may come from.
    barrier_thread: OnceLock<ThreadId>,
    counters: Counters,
}

impl<S: TwoPhase> Waiter<S> {
    /// A waiter with `strategy` and the default sleep cap (1 ms).
    pub fn new(strategy: S) -> Self {
        Self {
            strategy,
            sleep_cap: DEFAULT_SLEEP_CAP,
            yield_time: DEFAULT_YIELD_TIME,
            epoch: Instant::now(),
            last_barrier_ns: AtomicU64::new(NONE),
            mode: AtomicU8::new(MODE_FIRST),
            barrier_thread: OnceLock::new(),
            counters: Counters::default(),
        }
    }

    /// A waiter whose block phase naps at most `cap` between tests (between 1 µs and 1 s).
    ///
    /// ```
    /// use asat_implicit::Block;
    /// use asat_mpi::Waiter;
    /// use std::time::Duration;
    /// let w = Waiter::with_sleep_cap(Block, Duration::from_micros(200))?;
    /// assert_eq!(w.sleep_cap(), Duration::from_micros(200));
    /// let e = Waiter::with_sleep_cap(Block, Duration::ZERO).unwrap_err();
    /// assert_eq!(e.to_string(), "sleep cap 0ns: must be between 1µs and 1s");
    /// # Ok::<(), asat_mpi::Error>(())
    /// ```
    pub fn with_sleep_cap(strategy: S, cap: Duration) -> Result<Self, Error> {
        if !(MIN_SLEEP_CAP..=MAX_SLEEP_CAP).contains(&cap) {
            return Err(Error::sleep_cap(cap));
        }
        let mut w = Self::new(strategy);
        w.sleep_cap = cap;
        Ok(w)
    }

    /// This waiter with a block phase that yields between tests for `t` before its first nap
    /// (at most 1 s; 0: it naps at once).
    ///
    /// ```
    /// use asat_implicit::Block;
    /// use asat_mpi::Waiter;
    /// use std::time::Duration;
    /// let w = Waiter::new(Block).with_yield_time(Duration::ZERO)?;
    /// assert_eq!(w.yield_time(), Duration::ZERO);
    /// let e = Waiter::new(Block).with_yield_time(Duration::from_secs(2)).unwrap_err();
    /// assert_eq!(e.to_string(), "yield time 2s: must be at most 1s (0: no yielding)");
    /// # Ok::<(), asat_mpi::Error>(())
    /// ```
    pub fn with_yield_time(mut self, t: Duration) -> Result<Self, Error> {
        if t > MAX_YIELD_TIME {
            return Err(Error::yield_time(t));
        }
        self.yield_time = t;
        Ok(self)
    }

    /// How long the block phase yields before its first nap.
    pub fn yield_time(&self) -> Duration {
        self.yield_time
    }

    /// The strategy.
    pub fn strategy(&self) -> &S {
        &self.strategy
    }

    /// The longest nap of the block phase.
    pub fn sleep_cap(&self) -> Duration {
        self.sleep_cap
    }

    /// Waits for one request (a read: spins `S`, learns nothing) and returns its status.
    pub fn wait<'a, D: ?Sized, Sc: Scope<'a>>(&self, request: Request<'a, D, Sc>) -> Status {
        let mut pending = Some(request);
        let mut status = None;
        let phase = self.two_phase(self.strategy.read_spin(), || {
            test_one(&mut pending, &mut status)
        });
        self.count(phase);
        status.expect("a completed wait has its status")
    }

    /// Waits for all `requests` (an exchange: spins the barrier spin time and records the
    /// wait) and returns their statuses in the same order.
    pub fn wait_all<'a, D: ?Sized, Sc: Scope<'a>>(
        &self,
        requests: Vec<Request<'a, D, Sc>>,
    ) -> Vec<Status> {
        let mut statuses: Vec<Option<Status>> = requests.iter().map(|_| None).collect();
        let mut pending: Vec<Option<Request<'a, D, Sc>>> = requests.into_iter().map(Some).collect();
        let mut left = pending.len();
        let phase = self.two_phase(self.strategy.barrier_spin(), || {
            for (req, status) in pending.iter_mut().zip(statuses.iter_mut()) {
                if req.is_some() && test_one(req, status) {
                    left -= 1;
                }
            }
            left == 0
        });
        self.count(phase);
        self.learn_wait(phase);
        statuses
            .into_iter()
            .map(|s| s.expect("a completed wait has every status"))
            .collect()
    }

    /// A barrier of every rank of `comm`, waited for two-phase; returns the episode's
    /// imbalance when this waiter's barriers learn it (the module docs say when and how).
    ///
    /// Every rank of `comm` must call it, as any collective; ranks may use different
    /// strategies.
    ///
    /// # Errors
    ///
    /// A call from another thread than this waiter's first barrier's (see
    /// [Threads](crate::wait#threads)): refused before any MPI call, so the calling rank has not
    /// joined the barrier.
    pub fn barrier<C: Communicator + ?Sized>(&self, comm: &C) -> Result<Option<Duration>, Error> {
        self.on_barrier_thread()?;
        Ok(self.barrier_here(comm))
    }

    /// Whether the calling thread may make this waiter's barriers: the first to ask may, and
    /// only it after (see [Threads](crate::wait#threads)).
    fn on_barrier_thread(&self) -> Result<(), Error> {
        let me = std::thread::current().id();
        if *self.barrier_thread.get_or_init(|| me) == me {
            Ok(())
        } else {
            Err(Error::barrier_thread())
        }
    }

    /// [`barrier`](Self::barrier) on its thread.
    fn barrier_here<C: Communicator + ?Sized>(&self, comm: &C) -> Option<Duration> {
        let spin = self.strategy.barrier_spin();
        if self.mode.load(Ordering::Relaxed) == MODE_IBARRIER {
            let mut pending = Some(comm.immediate_barrier());
            let mut status = None;
            let phase = self.two_phase(spin, || test_one(&mut pending, &mut status));
            self.barrier_done(phase);
            return None;
        }
        let arrived = self.now_ns();
        let last = self.last_barrier_ns.load(Ordering::Relaxed);
        let (since, unknown) = if last == NONE {
            (0, 1)
        } else {
            (to_i64(arrived.saturating_sub(last)), 0)
        };
        let wants = i64::from(self.strategy.wants_imbalance());
        let send = [since, -since, unknown, wants];
        let mut recv = [0i64; 4];
        let phase = mpi::request::scope(|scope| {
            let req = comm.immediate_all_reduce_into(
                scope,
                &send[..],
                &mut recv[..],
                SystemOperation::max(),
            );
            let mut pending = Some(req);
            let mut status = None;
            self.two_phase(spin, || test_one(&mut pending, &mut status))
        });
        self.barrier_done(phase);
        // every rank saw the same flags: all settle on the same collective
        let mode = if recv[3] != 0 {
            MODE_IALLREDUCE
        } else {
            MODE_IBARRIER
        };
        self.mode.store(mode, Ordering::Relaxed);
        let imbalance = spread([recv[0], recv[1], recv[2]])?;
        self.counters.imbalances.fetch_add(1, Ordering::Relaxed);
        self.counters
            .last_imbalance_ns
            .store(nanos(imbalance), Ordering::Relaxed);
        if self.strategy.wants_imbalance() {
            self.strategy.record_imbalance(imbalance);
        }
        Some(imbalance)
    }

    /// `MPI_Allreduce` of `send` into `recv` with `op` over every rank of `comm` (as rsmpi's
    /// `all_reduce_into`), waited for two-phase: a non-blocking all-reduce
    /// (`MPI_Iallreduce`) tested as a barrier is, with the strategy's barrier spin, its wait
    /// recorded as an exchange's is. Use it for what a program reduces between steps (a
    /// solver's convergence check): Open MPI's own `MPI_Allreduce` polls without giving the
    /// CPU away, so on a shared node a rank that reaches it first keeps the CPU from the ranks
    /// it waits for (what `examples/mpi_hybrid.rs`'s solver did before it used this).
    ///
    /// Every rank of `comm` must call it, with buffers of the same length, as any collective.
    /// It is not one of this waiter's [barriers](Self::barrier): no imbalance is learned, and
    /// barriers measure their `t` from the last barrier as before.
    ///
    /// # Errors
    ///
    /// `recv` not of `send`'s length and MPI datatype (MPI would write past `recv`'s end or
    /// misread it): checked on this rank before the reduction starts, so a rank that gets the
    /// error has not joined it, and nothing was counted.
    ///
    /// ```no_run
    /// use asat_implicit::AdaptiveLocal;
    /// use asat_mpi::mpi::collective::SystemOperation;
    /// use asat_mpi::Waiter;
    ///
    /// let universe = asat_mpi::mpi::initialize().unwrap();
    /// let world = universe.world();
    /// let waiter = Waiter::new(AdaptiveLocal::new());
    /// let local_change = 0.25f64;
    /// let mut change = 0.0f64;
    /// waiter.all_reduce_into(&world, &local_change, &mut change, SystemOperation::max())?;
    /// # Ok::<(), asat_mpi::Error>(())
    /// ```
    pub fn all_reduce_into<C, B, R, O>(
        &self,
        comm: &C,
        send: &B,
        recv: &mut R,
        op: O,
    ) -> Result<(), Error>
    where
        C: Communicator + ?Sized,
        B: Buffer + ?Sized,
        R: BufferMut + ?Sized,
        O: Operation,
    {
        let same_type = send.as_datatype().as_raw() == recv.as_datatype().as_raw();
        if send.count() != recv.count() || !same_type {
            return Err(Error::reduce_buffers(send.count(), recv.count(), same_type));
        }
        let spin = self.strategy.barrier_spin();
        let phase = mpi::request::scope(|scope| {
            let mut pending = Some(comm.immediate_all_reduce_into(scope, send, recv, op));
            let mut status = None;
            self.two_phase(spin, || test_one(&mut pending, &mut status))
        });
        self.counters.reductions.fetch_add(1, Ordering::Relaxed);
        self.count(phase);
        self.learn_wait(phase);
        Ok(())
    }

    fn barrier_done(&self, phase: Phase) {
        self.last_barrier_ns.store(self.now_ns(), Ordering::Relaxed);
        self.counters.barriers.fetch_add(1, Ordering::Relaxed);
        self.count(phase);
        self.learn_wait(phase);
    }

    /// What this waiter has done so far.
    pub fn stats(&self) -> WaitStats {
        let c = &self.counters;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let imbalances = load(&c.imbalances);
        WaitStats {
            waits: load(&c.waits),
            barriers: load(&c.barriers),
            reductions: load(&c.reductions),
            immediate: load(&c.immediate),
            spin_successes: load(&c.spun),
            blocks: load(&c.blocks),
            naps: load(&c.naps),
            yields: load(&c.yields),
            waited: Duration::from_nanos(load(&c.waited_ns)),
            imbalances,
            last_imbalance: (imbalances > 0)
                .then(|| Duration::from_nanos(load(&c.last_imbalance_ns))),
            spin: self.strategy.barrier_spin(),
            imbalance: self.strategy.imbalance_estimate(),
        }
    }

    fn now_ns(&self) -> u64 {
        nanos(self.epoch.elapsed())
    }

    /// Tests with `done` until it returns true: once, then between yields for `spin` and for
    /// the yield time, then between naps.
    fn two_phase(&self, spin: Duration, mut done: impl FnMut() -> bool) -> Phase {
        if done() {
            return Phase::Immediate;
        }
        let start = Instant::now();
        if !spin.is_zero() {
            loop {
                if done() {
                    return Phase::Spun(start.elapsed());
                }
                if start.elapsed() >= spin {
                    break;
                }
                std::thread::yield_now();
            }
        }
        // Yield between tests, for up to the yield time of the block phase.
        let block = Instant::now();
        let mut yields = 0;
        while block.elapsed() < self.yield_time {
            std::thread::yield_now();
            yields += 1;
            if done() {
                return Phase::Blocked {
                    waited: start.elapsed(),
                    naps: 0,
                    yields,
                };
            }
        }
        let mut nap = FIRST_NAP.min(self.sleep_cap);
        let mut naps = 0;
        loop {
            std::thread::sleep(nap);
            naps += 1;
            if done() {
                return Phase::Blocked {
                    waited: start.elapsed(),
                    naps,
                    yields,
                };
            }
            nap = next_nap(nap, self.sleep_cap);
        }
    }

    fn count(&self, phase: Phase) {
        let c = &self.counters;
        c.waits.fetch_add(1, Ordering::Relaxed);
        match phase {
            Phase::Immediate => {
                c.immediate.fetch_add(1, Ordering::Relaxed);
            }
            Phase::Spun(waited) => {
                c.spun.fetch_add(1, Ordering::Relaxed);
                c.waited_ns.fetch_add(nanos(waited), Ordering::Relaxed);
            }
            Phase::Blocked {
                waited,
                naps,
                yields,
            } => {
                c.blocks.fetch_add(1, Ordering::Relaxed);
                c.naps.fetch_add(naps, Ordering::Relaxed);
                c.yields.fetch_add(yields, Ordering::Relaxed);
                c.waited_ns.fetch_add(nanos(waited), Ordering::Relaxed);
            }
        }
    }

    fn learn_wait(&self, phase: Phase) {
        match phase {
            Phase::Immediate => self.strategy.record_short_wait(),
            Phase::Spun(waited) => self.strategy.record_wait(waited, false),
            Phase::Blocked { waited, .. } => self.strategy.record_wait(waited, true),
        }
    }
}

/// Tests the request in `pending`, if any; when it is done, stores its status and returns
/// true.
fn test_one<'a, D: ?Sized, Sc: Scope<'a>>(
    pending: &mut Option<Request<'a, D, Sc>>,
    status: &mut Option<Status>,
) -> bool {
    let Some(req) = pending.take() else {
        return true;
    };
    match req.test() {
        Ok(s) => {
            *status = Some(s);
            true
        }
        Err(req) => {
            *pending = Some(req);
            false
        }
    }
}

/// The nap after `nap`: twice as long, at most `cap`.
fn next_nap(nap: Duration, cap: Duration) -> Duration {
    nap.saturating_mul(2).min(cap)
}

/// The barrier's reduced `[max t, -min t, any unknown]` as the imbalance `max t - min t`.
fn spread(recv: [i64; 3]) -> Option<Duration> {
    if recv[2] != 0 {
        return None;
    }
    let v = recv[0].saturating_add(recv[1]);
    Some(Duration::from_nanos(u64::try_from(v).unwrap_or(0)))
}

fn to_i64(ns: u64) -> i64 {
    i64::try_from(ns).unwrap_or(i64::MAX)
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX - 1)
}

#[cfg(test)]
mod tests;
