//! [`Team`]: what user code sees inside a region, and the per-region state its members share.
//!
//! # Team barrier
//!
//! A centralized barrier. Its event's sequence (the word the waiters watch) holds the
//! generation, a poison flag and, in a team of fewer than [`SPLIT_FROM`] members, the arrival
//! count in its low 16 bits; a larger team counts in a word of its own, `arrived`, on another
//! cache line.
//!
//! - **Small teams, one word.** A member arrives by adding 1 to the sequence (`AcqRel`), which
//!   also tells it the generation it waits to see pass. The member that brings the count to
//!   the team size runs the barrier's completion action (resetting the work-sharing counter at
//!   the end of a work-shared loop; handing the arrival times to the wait strategy), then, in
//!   one more addition, resets the count to 0, moves the generation on and wakes the sleepers:
//!   that releases the others. Arrival and release touch one cache line: the last arrival
//!   costs one transfer of it to the arriving CPU and one back to each waiter.
//! - **Larger teams, two words.** A member reads the generation (it cannot move before this
//!   member arrives), then adds 1 to `arrived`. The last one runs the completion action, sets
//!   `arrived` back to 0 and then moves the generation on (`SeqCst`) and wakes the sleepers.
//!   Arrivals write only the count's line and waiters read only the sequence's: on one word,
//!   each arrival took the line away from every member already spinning on it, and at 16
//!   members a barrier cost twice libgomp's (which keeps its count and generation apart too);
//!   two words halve it from 8 members on, gain about 20% at 4 and lose about 30% at 2
//!   (BENCHMARKS.md, "On 16 CPUs").
//!
//! Either way a released member has seen the count's reset, so one that hurries on to the next
//! barrier counts into the fresh count.
//!
//! # Panics and poisoning
//!
//! A member whose closure panics marks the region poisoned and notifies the barrier event.
//! Members waiting at a barrier, and members arriving at one later, then unwind with a private
//! marker payload instead of waiting for a member that will never come; work-shared loops stop
//! handing out chunks. Every member still arrives at the join, and the thread that started the
//! region re-raises the first real panic payload there.

use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::Range;
use std::time::Instant;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use crate::schedule::{dealt_chunks, static_chunk, take_chunk};
use crate::sync::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use crate::wait::{Event, WaitInfo, WaitSite};
use crate::{MemberInfo, Policy, Schedule, ThreadHandle, WaitStrategy};

/// Bits of the barrier event that count the members arrived in a team of fewer than
/// [`SPLIT_FROM`] (the team size is at most 4096).
const ARRIVALS: u32 = 0xffff;
/// The barrier event's poison flag: set when a member panicked.
const POISON: u32 = 1 << 16;
/// One generation of the barrier event; the generation wraps around in the bits above.
pub(crate) const GENERATION_ONE: u32 = 1 << 17;
/// Bits of the barrier event that hold the generation.
const GENERATION: u32 = !(ARRIVALS | POISON);
const _: () = assert!(crate::error::MAX_THREADS_LIMIT < ARRIVALS as usize);
/// Teams of at least this many members count barrier arrivals in a word of their own (see
/// the module docs).
#[cfg(not(loom))]
pub(crate) const SPLIT_FROM: usize = 4;
/// Under loom, 3: the models' two-member teams check the one-word protocol and their
/// three-member team the two-word one.
#[cfg(loom)]
pub(crate) const SPLIT_FROM: usize = 3;

/// Whether a team of `size` counts barrier arrivals in `arrived` (see the module docs).
#[inline]
fn counts_apart(size: usize) -> bool {
    size >= SPLIT_FROM
}

/// The payload a member unwinds with when the region was poisoned by another member's panic.
pub(crate) struct TeamAborted;

/// State shared by the members of the running region. One per runtime, reused region after
/// region (regions of a runtime are serialized); written by the starting thread only while no
/// worker is in a region.
#[derive(Debug)]
pub(crate) struct RegionState {
    /// Region start, in nanoseconds since the runtime's epoch (with timing). On a line of its
    /// own: the starting thread writes it at every region start, and members read it only for
    /// barrier arrival times, so the words they read on every region stay in their caches.
    start_ns: CachePadded<AtomicU64>,
    /// The barrier's arrival count in teams of [`SPLIT_FROM`] or more (see the module docs).
    arrived: CachePadded<AtomicU32>,
    /// The barrier event: generation, poison flag, and the arrival count of smaller teams.
    barrier: CachePadded<Event>,
    ws_next: CachePadded<AtomicUsize>,
    pub(crate) poisoned: AtomicBool,
    pub(crate) panic: Mutex<Option<Box<dyn Any + Send>>>,
    pub(crate) blocks: AtomicU32,
    /// Barrier arrival times for strategies that want them.
    barrier_arrivals: Box<[AtomicU64]>,
    pub(crate) probe_enter: Box<[AtomicU64]>,
    pub(crate) probe_leave: Box<[AtomicU64]>,
    pub(crate) epoch: Instant,
}

fn zeros(n: usize) -> Box<[AtomicU64]> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

impl RegionState {
    pub(crate) fn new(max_threads: usize, epoch: Instant) -> Self {
        Self {
            start_ns: CachePadded::new(AtomicU64::new(0)),
            arrived: CachePadded::new(AtomicU32::new(0)),
            barrier: CachePadded::new(Event::default()),
            ws_next: CachePadded::new(AtomicUsize::new(0)),
            poisoned: AtomicBool::new(false),
            panic: Mutex::new(None),
            blocks: AtomicU32::new(0),
            barrier_arrivals: zeros(max_threads),
            probe_enter: zeros(max_threads),
            probe_leave: zeros(max_threads),
            epoch,
        }
    }

    /// Prepares the state for a region. Called by the starting thread while no worker is in a
    /// region; the mailbox notifications that follow publish it. The protocol leaves the words
    /// at their initial value after a region, except after a panic (the poison flag, a barrier
    /// count left short, the loop counter) or a wait that blocked (the block count): only then
    /// (`dirty`) are they looked at and reset, so that a region start reads no line a worker
    /// wrote last (a cache transfer before the region is even posted).
    pub(crate) fn reset(&self, timed_start: Option<Instant>, dirty: bool) {
        if dirty {
            self.barrier.retain(GENERATION);
            if self.arrived.load(Ordering::Relaxed) != 0 {
                self.arrived.store(0, Ordering::Relaxed);
            }
            if self.ws_next.load(Ordering::Relaxed) != 0 {
                self.ws_next.store(0, Ordering::Relaxed);
            }
            if self.poisoned.load(Ordering::Relaxed) {
                self.poisoned.store(false, Ordering::Relaxed);
            }
            if self.blocks.load(Ordering::Relaxed) != 0 {
                self.blocks.store(0, Ordering::Relaxed);
            }
        }
        if let Some(t) = timed_start {
            self.start_ns.store(self.ns_at(t), Ordering::Relaxed);
        }
    }

    /// Sets the work-sharing counter back to 0 after a loop that used it, once every member
    /// is done with it.
    pub(crate) fn clear_counter(&self) {
        self.ws_next.store(0, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Counts `k` members of a team of `size` as arrived at the current barrier without them
    /// running: members of a probe that were revoked before their worker started them. Must
    /// be called by a member that has not arrived yet (it arrives after), so the last arrival
    /// still releases.
    pub(crate) fn arrive_for(&self, k: usize, size: usize) {
        if counts_apart(size) {
            self.arrived.fetch_add(k as u32, Ordering::AcqRel);
        } else {
            self.barrier.add(k as u32);
        }
    }

    /// Nanoseconds since the region started.
    #[inline]
    pub(crate) fn since_start_ns(&self) -> u64 {
        self.now_ns()
            .saturating_sub(self.start_ns.load(Ordering::Relaxed))
    }

    /// `t` in nanoseconds since the runtime's epoch.
    #[inline]
    pub(crate) fn ns_at(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// Records a panic of a member and releases everyone waiting at a barrier.
    pub(crate) fn poison(&self, payload: Box<dyn Any + Send>) {
        // Only the first user payload is kept; the others are dropped, outside the lock (a
        // payload's destructor is user code, and may panic: see the payload module).
        let extra = if payload.is::<TeamAborted>() {
            Some(payload)
        } else {
            let mut slot = self.panic.lock();
            if slot.is_none() {
                *slot = Some(payload);
                None
            } else {
                Some(payload)
            }
        };
        if let Some(p) = extra {
            crate::payload::drop_payload(p);
        }
        self.poisoned.store(true, Ordering::Release);
        self.barrier.set_notify(POISON);
    }

    /// Moves the barrier's generation on by `n` (tests: a generation close to its wrap).
    #[cfg(test)]
    pub(crate) fn skip_generations(&self, n: u32) {
        self.barrier.add_notify(n.wrapping_mul(GENERATION_ONE));
    }

    #[inline]
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }
}

#[cfg(not(loom))]
thread_local! {
    static ARRIVALS_BUF: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}
#[cfg(loom)]
loom::thread_local! {
    static ARRIVALS_BUF: RefCell<Vec<u64>> = RefCell::new(Vec::new());
}

/// A member's handle on its team, passed to the closure of
/// [`Runtime::region`](crate::Runtime::region).
///
/// A `Team` belongs to one member on one thread: it is neither `Send` nor `Sync`.
///
/// ```
/// use asat_core::{Runtime, Schedule};
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let rt = Runtime::builder().max_threads(2).build().unwrap();
/// let sum = AtomicUsize::new(0);
/// rt.region(|team| {
///     // every member runs this; the loop's iterations are shared among them
///     team.for_each(0..100, Schedule::dynamic(8), |i| {
///         sum.fetch_add(i, Ordering::Relaxed);
///     });
///     // for_each ends with a barrier, so every iteration is done here
///     assert_eq!(sum.load(Ordering::Relaxed), 4950);
/// });
/// ```
pub struct Team<'a> {
    pub(crate) state: &'a RegionState,
    pub(crate) policy: Option<&'a dyn Policy>,
    pub(crate) wait: &'a dyn WaitStrategy,
    pub(crate) member: usize,
    pub(crate) size: usize,
    pub(crate) region: u64,
    pub(crate) thread: ThreadHandle,
    pub(crate) _not_send: PhantomData<*const ()>,
}

impl std::fmt::Debug for Team<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("index", &self.member)
            .field("size", &self.size)
            .finish()
    }
}

impl<'a> Team<'a> {
    /// This member's index, `0..size()`. Member 0 is the thread that started the region.
    #[inline]
    pub fn index(&self) -> usize {
        self.member
    }

    /// The number of members.
    #[inline]
    pub fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn info(&self) -> MemberInfo {
        MemberInfo {
            member: self.member,
            team_size: self.size,
            region: self.region,
            thread: self.thread,
            tasks: false,
        }
    }

    #[inline]
    fn safe_point(&self) {
        if let Some(p) = self.policy {
            p.safe_point(&self.info());
        }
    }

    /// Waits until every member of the team has called `barrier`.
    ///
    /// If another member panicked, this unwinds instead (the region then re-raises that
    /// member's panic at the call that started it).
    pub fn barrier(&self) {
        self.barrier_with(WaitSite::Barrier, || {});
    }

    /// The team barrier with a completion action run by the last arriver before the release.
    pub(crate) fn barrier_with(&self, site: WaitSite, on_last: impl FnOnce()) {
        let st = self.state;
        if self.size == 1 {
            on_last();
            return;
        }
        self.safe_point();
        let wants = self.wait.wants_arrivals();
        if wants {
            st.barrier_arrivals[self.member].store(st.since_start_ns(), Ordering::Relaxed);
        }
        let info = WaitInfo {
            site,
            member: self.member,
            team_size: self.size,
        };
        let split = counts_apart(self.size);
        let (word, before) = if split {
            // The generation cannot move before this member arrives.
            let g = st.barrier.current();
            (g, st.arrived.fetch_add(1, Ordering::AcqRel))
        } else {
            let b = st.barrier.add(1);
            (b, b & ARRIVALS)
        };
        let generation = word & GENERATION;
        if word & POISON != 0 {
            // Nobody is released any more: everyone unwinds below.
        } else if before as usize + 1 == self.size {
            on_last();
            if wants {
                ARRIVALS_BUF.with(|b| {
                    let mut b = b.borrow_mut();
                    b.clear();
                    b.extend(
                        st.barrier_arrivals[..self.size]
                            .iter()
                            .map(|a| a.load(Ordering::Relaxed)),
                    );
                    self.wait.all_arrived(&info, &b);
                });
            }
            if split {
                // Seen by every member the release below lets go (it is ordered before it).
                st.arrived.store(0, Ordering::Relaxed);
                st.barrier.add_notify(GENERATION_ONE);
            } else {
                // count = size: adding GENERATION_ONE - size clears it and moves the generation.
                st.barrier
                    .add_notify(GENERATION_ONE.wrapping_sub(self.size as u32));
            }
        } else {
            let released = || {
                let w = st.barrier.current();
                w & GENERATION != generation || w & POISON != 0
            };
            if st.barrier.wait_until(released, self.wait, &info) {
                st.blocks.fetch_add(1, Ordering::Relaxed);
            }
        }
        if st.is_poisoned() {
            std::panic::resume_unwind(Box::new(TeamAborted));
        }
    }

    /// Runs `f` on every index of `range`, the indices shared among the members by `schedule`
    /// (the `omp for` of an `omp parallel` region). Every member must call it, with the same
    /// range and schedule; it ends with a team barrier.
    pub fn for_each(&self, range: Range<usize>, schedule: Schedule, f: impl Fn(usize)) {
        self.for_chunks(range, schedule, |r| r.for_each(&f));
    }

    /// Like [`for_each`](Team::for_each), but hands `f` whole chunks (sub-ranges), so that
    /// the loop body can be vectorized. Ends with a team barrier.
    pub fn for_chunks(&self, range: Range<usize>, schedule: Schedule, f: impl Fn(Range<usize>)) {
        self.share_then_barrier(range, schedule, &f, || false);
    }

    /// Like [`for_chunks`](Team::for_chunks), but a member takes no more chunks once `stop()`
    /// is true (OpenMP's `cancel for`): each member asks before each chunk it would take, so
    /// the chunks already taken run to their end and the others are not run at all. A search
    /// that has its answer stops the loop this way instead of being handed every chunk left.
    /// Ends with a team barrier; every member must call it with the same range and schedule.
    pub fn for_chunks_until(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        f: impl Fn(Range<usize>),
        stop: impl Fn() -> bool,
    ) {
        self.share_then_barrier(range, schedule, &f, &stop);
    }

    /// A work-shared loop and its closing barrier, `stop` by value: `for_chunks`'s, which
    /// never stops, is then no argument at all (as in the runtime's loops).
    fn share_then_barrier<S: Fn() -> bool + Copy>(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        f: &impl Fn(Range<usize>),
        stop: S,
    ) {
        self.share(range, schedule, f, stop);
        let next = &self.state.ws_next;
        self.barrier_with(WaitSite::Barrier, || next.store(0, Ordering::Relaxed));
    }

    /// The work-sharing part of a loop, without the closing barrier; no chunk is taken once
    /// `stop()` (asked before each). The shared counter must be 0 when the first member starts
    /// taking chunks.
    pub(crate) fn share(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        f: &impl Fn(Range<usize>),
        stop: impl Fn() -> bool,
    ) {
        let base = range.start;
        let len = range.end.saturating_sub(range.start);
        match schedule {
            Schedule::Static => {
                let r = static_chunk(len, self.member, self.size);
                if !r.is_empty() && !stop() {
                    self.safe_point();
                    f(base + r.start..base + r.end);
                }
            }
            Schedule::StaticChunked { chunk } => {
                for r in dealt_chunks(len, chunk, self.member, self.size) {
                    if self.state.is_poisoned() || stop() {
                        break;
                    }
                    self.safe_point();
                    f(base + r.start..base + r.end);
                }
            }
            _ => loop {
                if self.state.is_poisoned() || stop() {
                    break;
                }
                self.safe_point();
                match take_chunk(schedule, &self.state.ws_next, len, self.size) {
                    Some(r) => f(base + r.start..base + r.end),
                    None => break,
                }
            },
        }
    }
}
