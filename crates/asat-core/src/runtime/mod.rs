//! [`Runtime`]: a job's team of persistent worker threads, and how a region runs on it.
//! (Detached jobs, [`Runtime::spawn`], run on threads of their own: see the `spawn` module.)
//!
//! # Region protocol
//!
//! Regions of one runtime are serialized by the region lock; a region started from inside a
//! region (on any runtime) runs inline on the calling thread with a team of one. (Loops are
//! the exception: nested, or started while the lock is taken, they run on the work-stealing
//! engine instead of inline or waiting; see the `loops` module.)
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
//!    For a team of one it may then ask for a long time slice until the region ends (the
//!    `solo` module's protocol).
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
//! Between regions, workers run the runtime's tasks (the work-stealing `join`: the `steal`
//! module): a worker takes a post only between tasks, so a loop revokes the post of a worker
//! busy with a task, and an SPMD region waits for it to finish its task.
//!
//! The runtime's state ([`Inner`]) sits below the engine, which works on it and adds its
//! methods to it: this module and `current` name nothing of `steal` but the queues the state
//! holds (`steal::tasks`, below both). Installing a runtime hides the engine's context, so
//! [`Runtime::install_here`] calls the engine's `steal::install`.
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

use crate::job::JobRef;
use crate::slots::Slots;
use crate::steal::tasks::Tasks;
use crate::sync::{thread, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use crate::sys::affinity;
use crate::team::RegionState;
use crate::wait::{Event, WaitInfo, WaitSite};
use hooks::Hooks;
pub(crate) mod current;
mod custom;
mod execute;
pub(crate) mod hooks;
mod loops;
mod probe;
mod region;
pub(crate) mod resident;
// Under loom (one OS thread for all model threads) solo slices are off: see `on_region`.
#[cfg_attr(loom, allow(dead_code, unused_imports))]
mod solo;
mod spawn;
mod stats;
mod worker;

#[cfg(test)]
mod tests;

pub use custom::ThreadBuilder;
use execute::worker_thread;
pub(crate) use region::InRegion;
use region::Shape;
use spawn::Spawner;
pub use spawn::{spawn, spawn_fifo, yield_local, yield_now, Yield, SPAWN_IDLE_EXIT};
pub use stats::RuntimeStats;
pub(crate) use worker::unplace;
use worker::Mailbox;

use crate::{
    CpuSet, MemberInfo, Placement, Plan, Policy, ProbeResult, RegionReport, RegionStart,
    RegionTiming, Schedule, SpinThenPark, Team, ThreadHandle, ThreadInfo, WaitStrategy,
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
/// region protocol in the module docs); loops started meanwhile run on the workers' tasks
/// beside it ([`Runtime::loops_on_tasks`]).
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
    threads: Mutex<Threads>,
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
    /// Work stealing's queues and sleep counts (`steal::tasks`; the `steal` module runs them).
    tasks: Tasks,
    /// The thread that alone takes index 0, where the pool was built on it with
    /// `use_current_thread` (the `resident` module).
    pub(crate) resident: resident::Resident,
}

/// The worker threads started so far: locked by whoever starts one (a region's starting thread,
/// which holds the region lock first, or a call that runs tasks) and by the shutdown.
#[derive(Default)]
struct Threads {
    /// Worker `i` is entry `i - 1`: the handle of a thread the runtime started, or `None` for
    /// one a spawn handler started (not joined: see [`ThreadBuilder`]).
    workers: Vec<Option<thread::JoinHandle<()>>>,
    /// When a worker last failed to start (no new attempt for [`SPAWN_RETRY`]).
    spawn_failed_at: Option<Instant>,
}

/// Owned by whoever holds the region lock.
struct Control {
    seq: u64,
    last_team: usize,
    /// The last region left the region state dirty (a panic, or a wait that blocked), so the
    /// next one must reset it.
    dirty: bool,
    /// Buffers for the timing of the region that ends (`max_threads` long, reused).
    arrivals: Vec<u64>,
    departures: Vec<u64>,
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
                    seq: 0,
                    last_team: 0,
                    dirty: false,
                    arrivals: vec![0; max_threads],
                    departures: vec![0; max_threads],
                })),
                threads: Mutex::new(Threads::default()),
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
                tasks: Tasks::new(max_threads),
                resident: resident::Resident::default(),
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

    /// Another handle on this runtime that does not shut it down when dropped: for what a
    /// call keeps beyond a borrow of the caller's handle (a scope's jobs).
    pub(crate) fn weak_handle(&self) -> Runtime {
        Runtime::handle(Arc::clone(&self.inner))
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
    /// one ([`Builder::solo_slice`](crate::Builder::solo_slice); `None`: slices are left alone).
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
}

impl Inner {
    /// Work stealing's queues (the `steal` module).
    #[inline]
    pub(crate) fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    /// The event thread `index` of the runtime sleeps on when it has nothing to do: a
    /// worker's mailbox event; index 0's is the unused mailbox's, for a thread calling in from
    /// outside while it holds index 0.
    #[inline]
    pub(crate) fn idle_event(&self, index: usize) -> &Event {
        &self.mailboxes[index].event
    }

    /// How many regions the runtime has run (probes and inline regions not counted).
    pub(crate) fn regions_run(&self) -> u64 {
        self.stats.regions.load(Ordering::Relaxed)
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
