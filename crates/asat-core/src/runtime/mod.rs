//! [`Runtime`]: a job's team of persistent worker threads, and how a region runs on it.
//! (Detached jobs, [`Runtime::spawn`], run on threads of their own: see the `spawn` module.)
//!
//! # Region protocol
//!
//! Regions of one runtime are serialized by the region lock; a region started from inside a
//! region (on any runtime) runs inline on the calling thread with a team of one.
//!
//! In a child made by `fork` (without `exec`) from a process that has a runtime, the runtime's
//! workers do not exist: every region of that runtime runs inline on the calling thread, and
//! dropping it leaks its state instead of joining threads that are not there.
//!
//! A region started while another thread's region holds the lock waits for it at most
//! [`REGION_LOCK_WAIT`], then also runs inline on the calling thread with a team of one
//! ([`RuntimeStats::inline_busy`] counts these). The other region may be one whose body waits
//! for the calling thread (a helper thread the body started and joins), which no wait would
//! end; and a thread that comes while the team is busy loses nothing by running its region
//! itself: the workers are taken.
//!
//! 1. The starting thread (member 0) takes the region lock and asks the policy for a
//!    [`Plan`]. A [`Plan::Probe`] runs a timed barrier as a region of its own (steps 2-5), after
//!    which the policy is asked again. A region whose size the caller chose
//!    ([`Runtime::region_of`]) skips the policy here and in step 5.
//!    It then sets its own time slice for a team of one or gives it back for a larger team
//!    (the `solo` module's protocol).
//! 2. It spawns missing workers (lazily, up to `max_threads - 1`; a runtime built with a spawn
//!    handler has them all from its build) and resets the shared [`RegionState`] for a team
//!    of `n`.
//! 3. It posts the region to the mailboxes of workers `1..n` (writing the body's two words,
//!    the team size and the region's number into the worker's mailbox line, which the worker
//!    then reads in one cache transfer, setting its state to `POSTED` and moving its event,
//!    `SeqCst`). Workers `n..` are not woken.
//! 4. Each worker claims its post (CAS `POSTED -> RUNNING`; a post of an SPMD region, which is
//!    never revoked, is taken without the CAS), applies its placement, runs the body under
//!    `catch_unwind`, records its arrival time (when timing is on), and sets its state to
//!    `FINISHED` (`SeqCst`); after that store it touches nothing of the region (only the
//!    runtime's long-lived join event, to wake a sleeping starter).
//! 5. Member 0 runs its own part. In a parallel loop (not in an SPMD region) it then revokes
//!    every post no worker has claimed yet (CAS `POSTED -> FINISHED`) and runs those members
//!    itself, so a worker that is not on a CPU never holds a loop up. It waits until every
//!    mailbox is `FINISHED`, calls [`Policy::region_end`], releases the lock and re-raises the
//!    first panic, if any.
//!
//! A post is never overwritten before it is `FINISHED`, so a worker that lost its post to a
//! revocation, or wakes late, finds either a fresh `POSTED` region or nothing to do.
//!
//! # Workers from a spawn handler
//!
//! A runtime built with a spawn handler gets all its workers at build, on the handler's
//! threads, and never starts one itself (step 2 starts none). A worker whose thread has not
//! called [`ThreadBuilder::run`] yet is one not on a CPU: loops revoke its post, SPMD regions
//! wait for it. Its shutdown does not join it. Details in the `custom` module.

use std::cell::Cell;
use std::fmt;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use crate::builder::Hooks;
use crate::job::JobRef;
use crate::slots::Slots;
use crate::sync::{thread, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use crate::sys::affinity;
use crate::team::RegionState;
use crate::wait::{Event, WaitInfo, WaitSite};
mod custom;
mod execute;
mod loops;
mod probe;
// Under loom (one OS thread for all model threads) solo slices are off: see `on_region`.
#[cfg_attr(loom, allow(dead_code, unused_imports))]
mod solo;
mod spawn;
mod worker;

pub use custom::ThreadBuilder;
use execute::worker_thread;
use spawn::Spawner;
pub use spawn::{spawn, spawn_fifo, yield_local, yield_now, Yield, SPAWN_IDLE_EXIT};
use worker::Mailbox;

use crate::{
    Builder, CpuSet, Placement, Plan, Policy, ProbeResult, RegionReport, RegionStart, RegionTiming,
    Schedule, SpinThenPark, Team, ThreadHandle, ThreadInfo, WaitStrategy,
};

/// How often the starting thread of a probe that may give up reads the clock while it waits for
/// the workers to start (every this many spins; under loom every spin, so that the model
/// reaches the give-up).
const PROBE_SPINS_PER_CLOCK_READ: u32 = if cfg!(loom) { 1 } else { 32 };

/// How long a region start waits for the region lock while another thread's region holds it,
/// before running inline on the calling thread (see the region protocol).
pub const REGION_LOCK_WAIT: Duration = Duration::from_millis(10);

/// How long after a failed worker start the runtime tries again.
const SPAWN_RETRY: Duration = Duration::from_secs(1);

/// How many probes one region start may run before the runtime stops asking.
pub const MAX_PROBES_PER_REGION: u32 = 4;

#[cfg(not(loom))]
thread_local! {
    static IN_REGION: Cell<bool> = const { Cell::new(false) };
    /// The mask this thread was last pinned to by a placement.
    static PINNED: Cell<Option<CpuSet>> = const { Cell::new(None) };
}
// loom runs its threads on one OS thread: they need its thread-locals.
#[cfg(loom)]
loom::thread_local! {
    static IN_REGION: Cell<bool> = Cell::new(false);
    static PINNED: Cell<Option<CpuSet>> = Cell::new(None);
}

/// A fork-join runtime: one job's worker threads and its scheduling policy.
///
/// Workers are created lazily, up to `max_threads - 1` (the thread that starts a region is
/// member 0 of its team), and joined when the runtime is dropped (or, when
/// [spawned](Runtime::spawn) jobs are still pending then, after the last of them: see
/// [`spawn`](crate::spawn)). A runtime built with a
/// [spawn handler](crate::ThreadPoolBuilder::spawn_handler) has all its workers from its build
/// instead, on the handler's threads, which its drop stops without joining them (see
/// [`ThreadBuilder`]). Any number of runtimes may
/// live in one process. A runtime is `Sync`: regions started from several threads at once run
/// one after another, except that a region whose start finds another thread's region holding
/// the runtime for more than [`REGION_LOCK_WAIT`] runs inline on its calling thread (see the
/// region protocol in the module docs).
///
/// ```
/// use asat_core::{Runtime, Schedule};
///
/// let rt = Runtime::builder().max_threads(2).build().unwrap();
/// let mut v = vec![0u64; 1000];
/// rt.parallel_slice_mut(&mut v, Schedule::Static, |start, chunk| {
///     for (j, x) in chunk.iter_mut().enumerate() {
///         *x = (start + j) as u64 * 2;
///     }
/// });
/// let sum = rt.parallel_reduce(0..1000, Schedule::dynamic(64), || 0u64,
///     |acc, r| acc + r.map(|i| v[i]).sum::<u64>(), |a, b| a + b);
/// assert_eq!(sum, 999 * 1000);
/// ```
pub struct Runtime {
    inner: Arc<Inner>,
    /// Whether this is the user's handle, whose drop shuts the runtime down; the runtime's own
    /// threads hold handles that are not (see the spawn module docs).
    owner: bool,
}

#[cfg(test)]
impl Runtime {
    /// The state its regions' members share (tests).
    pub(crate) fn region_state(&self) -> &RegionState {
        &self.inner.region
    }
}

pub(crate) struct Inner {
    pub(crate) max_threads: usize,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) wait: Arc<dyn WaitStrategy>,
    timing: bool,
    /// Locked and written by the starting thread at every region: on lines of its own, so
    /// that the read-mostly fields here (which workers read at every region) stay in their
    /// caches.
    region_lock: CachePadded<Mutex<Control>>,
    region: RegionState,
    /// Index = worker index; entry 0 is unused.
    mailboxes: Box<[CachePadded<Mailbox>]>,
    /// Used by the region lock's holder only (see the slots module docs).
    reduce_slots: Slots,
    /// The fork generation the runtime was built in ([`sys::fork`](crate::sys::fork)).
    fork_generation: u64,
    join_event: CachePadded<Event>,
    shutdown: AtomicBool,
    /// Worker threads started (read without the region lock, which a region holds).
    workers_started: AtomicUsize,
    /// The lowest index of a worker that will never run: its [`ThreadBuilder`] was dropped
    /// without [`run`](ThreadBuilder::run) (`usize::MAX`: none). Teams stop below it.
    lost_from: AtomicUsize,
    /// Written at every region, like `region_lock`.
    stats: CachePadded<Counters>,
    hooks: Hooks,
    /// Detached jobs ([`Runtime::spawn`]) and the threads that run them: on lines of their
    /// own, as `region_lock`, since spawns write them while regions run.
    spawner: CachePadded<Spawner>,
}

/// Owned by whoever holds the region lock.
struct Control {
    /// Worker `i` is entry `i - 1`: the handle of a thread the runtime started, or `None` for
    /// one a spawn handler started (not joined: see [`ThreadBuilder`]).
    workers: Vec<Option<thread::JoinHandle<()>>>,
    seq: u64,
    last_team: usize,
    /// The last region left the region state dirty (a panic, or a wait that blocked), so the
    /// next one must reset it.
    dirty: bool,
    /// Buffers for the timing of the region that ends (`max_threads` long, reused).
    arrivals: Vec<u64>,
    departures: Vec<u64>,
    /// When a worker last failed to start (no new attempt for [`SPAWN_RETRY`]).
    spawn_failed_at: Option<Instant>,
}

#[derive(Default)]
struct Counters {
    regions: AtomicU64,
    probes: AtomicU64,
    probe_ns: AtomicU64,
    last_team: AtomicU64,
    blocks: AtomicU64,
    revoked: AtomicU64,
    join_wait_ns: AtomicU64,
    member_ns: AtomicU64,
    wall_ns: AtomicU64,
    inline_busy: AtomicU64,
    spawn_failures: AtomicU64,
    spawn_panics: AtomicU64,
}

/// Counters of a runtime since it was built. Times are only gathered when timing is on
/// ([`Builder::timing`] or a policy that [wants it](Policy::wants_timing)); otherwise they stay 0.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeStats {
    /// Regions run (probes not included; nested inline regions not included).
    pub regions: u64,
    /// Probes (timed barriers) run.
    pub probes: u64,
    /// Wall time the starting thread spent in probes, summed (always measured: two clock
    /// reads per probe).
    pub probe_time: Duration,
    /// The team size of the last region.
    pub last_team: usize,
    /// Times a member blocked in the kernel at a join or barrier.
    pub blocks: u64,
    /// Loop members run by the starting thread because their worker had not started them
    /// (see [`RegionReport::revoked`]).
    pub revoked: u64,
    /// Time members spent waiting at joins, summed over members.
    pub join_wait: Duration,
    /// Team size times wall time, summed over regions: the thread time regions occupied.
    pub member_time: Duration,
    /// Wall time of regions, summed.
    pub wall: Duration,
    /// Regions run inline on their calling thread because another thread's region held the
    /// runtime for longer than [`REGION_LOCK_WAIT`] (not counted in `regions`).
    pub inline_busy: u64,
    /// Threads the system refused to start: workers (teams are then limited to the workers
    /// that did start) and threads for [spawned](Runtime::spawn) jobs. The first failure of
    /// each kind is reported on standard error, and a start is tried again at most once a
    /// second. Also counted, without a report: workers whose [`ThreadBuilder`] a spawn
    /// handler dropped without running it (teams stop below them too).
    pub spawn_failures: u64,
    /// Jobs started by [`Runtime::spawn`] (and its relatives) that panicked (see the panic
    /// rules in [`spawn`](crate::spawn)).
    pub spawn_panics: u64,
}

impl RuntimeStats {
    /// The share of thread time in regions spent waiting at joins, in percent (0 when no timing
    /// was gathered).
    pub fn join_wait_pct(&self) -> f64 {
        if self.member_time.is_zero() {
            0.0
        } else {
            100.0 * self.join_wait.as_secs_f64() / self.member_time.as_secs_f64()
        }
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("max_threads", &self.inner.max_threads)
            .field("policy", &self.inner.policy.name())
            .field("wait", &self.inner.wait)
            .finish()
    }
}

impl Runtime {
    /// A [`Builder`] with default settings (overridden by the `ASAT_*` environment variables).
    pub fn builder() -> Builder {
        Builder::new()
    }

    pub(crate) fn from_parts(
        max_threads: usize,
        policy: Arc<dyn Policy>,
        wait: Arc<dyn WaitStrategy>,
        timing: bool,
        hooks: Hooks,
    ) -> Runtime {
        let epoch = Instant::now();
        let timing = timing || policy.wants_timing();
        Runtime {
            inner: Arc::new(Inner {
                max_threads,
                policy,
                wait,
                timing,
                region_lock: CachePadded::new(Mutex::new(Control {
                    workers: Vec::new(),
                    seq: 0,
                    last_team: 0,
                    dirty: false,
                    arrivals: vec![0; max_threads],
                    departures: vec![0; max_threads],
                    spawn_failed_at: None,
                })),
                region: RegionState::new(max_threads, epoch),
                mailboxes: (0..max_threads)
                    .map(|_| CachePadded::new(Mailbox::default()))
                    .collect(),
                reduce_slots: Slots::new(max_threads),
                fork_generation: crate::sys::fork::generation(),
                join_event: CachePadded::new(Event::default()),
                shutdown: AtomicBool::new(false),
                workers_started: AtomicUsize::new(0),
                lost_from: AtomicUsize::new(usize::MAX),
                stats: CachePadded::default(),
                hooks,
                spawner: CachePadded::default(),
            }),
            owner: true,
        }
    }

    /// A handle on `inner` that does not shut the runtime down when dropped: for the runtime's
    /// own threads, which install it (see the spawn module docs).
    fn handle(inner: Arc<Inner>) -> Runtime {
        Runtime {
            inner,
            owner: false,
        }
    }

    /// The state the runtime's handles share.
    #[inline]
    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }

    /// The runtime's identity (shared by its handles): see [`Inner::id`].
    #[inline]
    pub(crate) fn id(&self) -> usize {
        self.inner.id()
    }

    /// The most threads a team may have.
    pub fn max_threads(&self) -> usize {
        self.inner.max_threads
    }

    /// The runtime's policy.
    pub fn policy(&self) -> &Arc<dyn Policy> {
        &self.inner.policy
    }

    /// The runtime's wait strategy.
    pub fn wait_strategy(&self) -> &Arc<dyn WaitStrategy> {
        &self.inner.wait
    }

    /// The time slice a thread asks for while it runs this runtime's regions with a team of
    /// one ([`Builder::solo_slice`]; `None`: slices are left alone).
    pub fn solo_slice(&self) -> Option<Duration> {
        self.inner.hooks.solo_slice
    }

    /// The number of worker threads started so far. (Callable from inside a region.) For a
    /// runtime built with a [spawn handler](crate::ThreadPoolBuilder::spawn_handler), the
    /// workers the handler was given at build (`max_threads - 1`), whether their threads have
    /// called [`ThreadBuilder::run`] yet or not.
    pub fn workers_started(&self) -> usize {
        self.inner.workers_started.load(Ordering::Relaxed)
    }

    /// Counters since the runtime was built.
    pub fn stats(&self) -> RuntimeStats {
        let s = &self.inner.stats;
        RuntimeStats {
            regions: s.regions.load(Ordering::Relaxed),
            probes: s.probes.load(Ordering::Relaxed),
            probe_time: Duration::from_nanos(s.probe_ns.load(Ordering::Relaxed)),
            last_team: s.last_team.load(Ordering::Relaxed) as usize,
            blocks: s.blocks.load(Ordering::Relaxed),
            revoked: s.revoked.load(Ordering::Relaxed),
            join_wait: Duration::from_nanos(s.join_wait_ns.load(Ordering::Relaxed)),
            member_time: Duration::from_nanos(s.member_ns.load(Ordering::Relaxed)),
            wall: Duration::from_nanos(s.wall_ns.load(Ordering::Relaxed)),
            inline_busy: s.inline_busy.load(Ordering::Relaxed),
            spawn_failures: s.spawn_failures.load(Ordering::Relaxed),
            spawn_panics: s.spawn_panics.load(Ordering::Relaxed),
        }
    }

    /// Runs `f` on every member of a team (an SPMD region, like `omp parallel`). The team size
    /// is the policy's decision. Returns when every member has returned.
    ///
    /// A panic in `f` on any member is re-raised here, after the whole team has joined; the
    /// runtime stays usable. A region started from inside a region runs inline on the calling
    /// thread, with a team of one.
    pub fn region<F>(&self, f: F)
    where
        F: Fn(&Team<'_>) + Sync,
    {
        self.run_region(&f, Shape::Spmd);
    }

    /// Runs `f` on every member of a team of `threads` (at least 1, at most
    /// [`max_threads`](Runtime::max_threads)), whatever the policy would choose: OpenMP's
    /// `num_threads` clause. For code whose members must all run at once because they wait for
    /// each other (a `std::sync::Barrier` of `threads`, flags one member sets for another),
    /// which a smaller team would deadlock; everything else should let the policy choose, with
    /// [`region`](Runtime::region).
    ///
    /// The policy is neither asked nor told: [`Policy::plan`] and [`Policy::region_end`] are not
    /// called for it, so a policy that measures its own teams (ASAT) measures only regions it
    /// chose. Placements and the wait strategy apply as in any region, and it counts in
    /// [`RuntimeStats`] (`regions`, `last_team`). Like every region, it runs inline on the
    /// calling thread with a team of one when started inside a region, in a `fork`ed child, or
    /// after another thread's region held the runtime for [`REGION_LOCK_WAIT`]
    /// ([`Team::size`] says so), and it has fewer members only when the system refuses to
    /// start more threads.
    ///
    /// ```
    /// use asat_core::{Runtime, Single};
    /// use std::sync::Barrier;
    ///
    /// // Single gives every region a team of one; this one has three, all at once.
    /// let rt = Runtime::builder().max_threads(3).policy(Single).build()?;
    /// let met = Barrier::new(3);
    /// rt.region_of(3, |team| {
    ///     assert_eq!(team.size(), 3);
    ///     met.wait();
    /// });
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn region_of<F>(&self, threads: usize, f: F)
    where
        F: Fn(&Team<'_>) + Sync,
    {
        self.run_region(
            &f,
            Shape::Sized {
                threads,
                revocable: false,
            },
        );
    }

    /// Runs `f(i)` for every `i` in `0..n`, each on a member of its own: a parallel loop on a
    /// team of `n` (at least 1, at most [`max_threads`](Runtime::max_threads)) whatever the
    /// policy would choose, item `i` on member `i`. For rayon's one-item-per-thread idiom,
    /// `(0..current_num_threads()).into_par_iter()`, whose items may wait for each other (the
    /// parallel iterators run such calls with it).
    ///
    /// As in every parallel loop, the calling thread, once done with item 0, runs the items
    /// whose worker has not started them yet, so a worker that is not on a CPU does not hold
    /// the loop up; it takes them one at a time, each only after the one before has returned.
    /// Items may therefore wait for each other: an item the caller runs can only wait for items
    /// that have returned, run on their workers, or are still offered to workers woken for
    /// them, so none waits forever.
    ///
    /// As for [`region_of`](Runtime::region_of), the policy is neither asked nor told, and where
    /// every region runs inline (inside a region, in a `fork`ed child, after another thread's
    /// region held the runtime for [`REGION_LOCK_WAIT`]) the calling thread runs the items one
    /// after another, so items that wait for each other would wait forever; so would `n`
    /// above `max_threads`, where a member runs several (as it does when the system refuses to
    /// start threads).
    ///
    /// ```
    /// use asat_core::{Runtime, Single};
    /// use std::sync::Barrier;
    ///
    /// let rt = Runtime::builder().max_threads(4).policy(Single).build()?;
    /// let met = Barrier::new(4);
    /// rt.for_each_member(4, |_| {
    ///     met.wait();
    /// });
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn for_each_member<F>(&self, n: usize, f: F)
    where
        F: Fn(usize) + Sync,
    {
        if n == 0 {
            return;
        }
        self.run_region(
            &move |team: &Team<'_>| (team.index()..n).step_by(team.size()).for_each(&f),
            Shape::Sized {
                threads: n,
                revocable: true,
            },
        );
    }

    fn run_region<F>(&self, f: &F, shape: Shape)
    where
        F: Fn(&Team<'_>) + Sync,
    {
        if self.inline_only() || self.run_region_then(f, shape, |_| ()).is_none() {
            self.run_inline(f);
        }
    }

    /// Whether regions must run inline on the calling thread: it runs a region already, or
    /// this process is a `fork`ed child of the one that built the runtime (no workers here).
    #[inline]
    fn inline_only(&self) -> bool {
        IN_REGION.with(Cell::get) || self.forked()
    }

    /// Whether this process was `fork`ed from the one that built the runtime.
    #[inline]
    fn forked(&self) -> bool {
        crate::sys::fork::generation() != self.inner.fork_generation
    }

    /// Runs a region (not inline: the caller is not in one), then `after(panicked)` while this
    /// thread still holds the region lock, so that state the members left for the starting
    /// thread (the reduction slots) is read before another region can start; then re-raises
    /// the team's panic, if any. `None`, having run nothing, when another thread's region held
    /// the lock for [`REGION_LOCK_WAIT`]: the caller then runs the region inline.
    fn run_region_then<F, R>(&self, f: &F, shape: Shape, after: impl FnOnce(bool) -> R) -> Option<R>
    where
        F: Fn(&Team<'_>) + Sync,
    {
        let inner = &*self.inner;
        let Some(mut ctl) = inner.region_lock.try_lock_for(REGION_LOCK_WAIT) else {
            inner.stats.inline_busy.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        // While this thread holds the region lock, a region it starts from a callback (the
        // policy's, the wait strategy's, a placement, `after`) runs inline instead of
        // deadlocking.
        let _in_region = InRegion::enter();
        let (team, mut started) = match shape {
            Shape::Sized { threads, .. } => (threads.clamp(1, inner.max_threads), None),
            _ => self.decide(&mut ctl),
        };
        solo::on_region(team, inner.hooks.solo_slice);
        let spawned = ctl.workers.len();
        let team = self.ensure_workers(&mut ctl, team);
        if ctl.workers.len() != spawned && started.is_some() {
            // Starting threads is not part of the region's time.
            started = Some(Instant::now());
        }
        let panic = self.execute(&mut ctl, team, f, shape, started);
        let result = after(panic.is_some());
        drop(ctl);
        if let Some(p) = panic {
            resume_unwind(p);
        }
        Some(result)
    }

    fn run_inline<F: Fn(&Team<'_>) + Sync>(&self, f: &F) {
        let state = RegionState::new(1, Instant::now());
        let wait = SpinThenPark::default();
        let team = Team {
            state: &state,
            policy: None,
            wait: &wait,
            member: 0,
            size: 1,
            region: 0,
            thread: ThreadHandle::current(),
            _not_send: std::marker::PhantomData,
        };
        f(&team);
    }
}

/// Marks the calling thread as inside a region until dropped (unwinding included), then
/// restores what it was.
struct InRegion(bool);

impl InRegion {
    fn enter() -> Self {
        Self(IN_REGION.with(|r| r.replace(true)))
    }
}

impl Drop for InRegion {
    fn drop(&mut self) {
        IN_REGION.with(|r| r.set(self.0));
    }
}

/// What a member needs to know of the region it runs.
#[derive(Clone, Copy)]
struct Work<'a> {
    job: &'a JobRef,
    size: usize,
    region: u64,
    timing: bool,
}

/// What kind of region runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// A user SPMD region: every member must run on its own thread (members meet at barriers).
    Spmd,
    /// A region whose team the caller chose: the policy is neither asked nor told (its
    /// decisions and measurements stay its own). An SPMD region ([`Runtime::region_of`]), or
    /// `revocable`, a loop whose unstarted members the caller runs
    /// ([`Runtime::for_each_member`]).
    Sized { threads: usize, revocable: bool },
    /// A work-shared loop without barriers: members that have not started may be run by the
    /// starting thread (revoked). `counter`: its schedule hands out chunks from the shared
    /// counter, which the loop leaves non-zero.
    Loop { counter: bool },
    /// A timed barrier.
    Probe,
}

impl Shape {
    /// Whether members whose worker has not claimed them may be run by the starting thread:
    /// not in SPMD regions, whose members may wait for each other.
    fn revocable(self) -> bool {
        matches!(
            self,
            Shape::Loop { .. }
                | Shape::Probe
                | Shape::Sized {
                    revocable: true,
                    ..
                }
        )
    }

    /// Whether the starting thread runs the members no worker has claimed once its own part is
    /// done (loops; probes are posted revocable but only ever revoked by a give-up).
    fn revokes(self) -> bool {
        matches!(
            self,
            Shape::Loop { .. }
                | Shape::Sized {
                    revocable: true,
                    ..
                }
        )
    }

    fn loop_with(schedule: Schedule) -> Shape {
        Shape::Loop {
            counter: schedule.uses_counter(),
        }
    }
}
