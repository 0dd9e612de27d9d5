//! The [`Policy`] trait: how a scheduling mechanism plugs into the runtime.
//!
//! The policy decides, the runtime acts. Hooks get read-only views and return small decisions;
//! the runtime owns threads, queues and state changes. Only [`Policy::name`] and
//! [`Policy::plan`] are required.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{CpuSet, Error, ThreadHandle, WaitStrategy};

/// A scheduling policy.
///
/// # When each hook runs
///
/// | hook | thread | when |
/// |---|---|---|
/// | [`attach`](Policy::attach) | the thread calling [`Builder::build`](crate::Builder::build) | once, before any worker exists |
/// | [`thread_start`](Policy::thread_start) / [`thread_stop`](Policy::thread_stop) | the worker itself | when a worker starts / before it exits |
/// | [`plan`](Policy::plan) | the thread starting a region | at each region start, before any worker is woken; again after each probe |
/// | [`task_workers`](Policy::task_workers) | a thread calling into the pool from outside | at each such call (`join`, a loop on tasks), before any task is shared |
/// | [`task_call_end`](Policy::task_call_end) | the same thread | when that call returns or unwinds |
/// | [`task_refresh`](Policy::task_refresh) | a thread running a call's tasks | at a heartbeat, at most once per [`TASK_REFRESH`](crate::TASK_REFRESH) for the runtime, while calls run |
/// | [`placement`](Policy::placement) | each member (the starting thread too); each thread that runs tasks | as it joins a team, before user code runs; as it starts a call's tasks, and as a worker takes a task after being idle or serving a region |
/// | [`safe_point`](Policy::safe_point) | each member; each thread that runs tasks | at chunk boundaries of loops and before each barrier wait; before each task it takes from a queue |
/// | [`region_end`](Policy::region_end) | the thread that started the region | after the whole team has joined |
///
/// Region starts on one runtime are serialized, so `plan` and `region_end` never run
/// concurrently with themselves for one runtime; the same policy object shared by several
/// runtimes does see concurrent calls. No hook should panic. If one does, the runtime stays
/// sound and usable, and the policy's own state is the policy's business: a panic in `plan`,
/// `placement`, `safe_point` or `region_end` is re-raised by the call that started the region
/// (after the team has joined; a member's own panic takes precedence), and one in
/// `thread_start` or `thread_stop` is caught (the panic hook has reported it) so that the
/// worker goes on. A region started from inside a hook runs inline, with a team of one.
pub trait Policy: Send + Sync + fmt::Debug {
    /// A short name for messages and reports (`"fixed"`, `"asat"`).
    fn name(&self) -> &str;

    /// Decide the team for a region that is starting.
    ///
    /// Called by the thread that starts the region, before any worker is woken. Returning
    /// [`Plan::Probe`] asks the runtime to run a timed barrier first; `plan` is then called again
    /// with [`RegionStart::probe`] set. Must not block; should return within microseconds. A
    /// team size above `max_threads` is clamped to it and 0 is raised to 1.
    fn plan(&self, start: &RegionStart) -> Plan;

    /// How many of the pool's threads may run tasks now (the work-stealing engine behind
    /// [`join`](crate::join)): the thread calling into the pool and workers `1..n` take part,
    /// the others stay parked (they keep serving regions). Called by a thread that calls into
    /// the runtime from outside its pool, at each such call; must not block, and should return
    /// within a few tens of nanoseconds (it sits on every outside call's path; a policy that
    /// measures, as ASAT does, does so at most once per interval). The answer is clamped to
    /// `1..=max_threads`. The default is `max_threads`.
    ///
    /// The threads that then run the call's tasks are placed as region members are
    /// ([`placement`](Policy::placement) with [`MemberInfo::tasks`] set): a policy that places
    /// threads decides here where the call's threads go, and holds whatever it counts for them
    /// until [`task_call_end`](Policy::task_call_end).
    fn task_workers(&self, max_threads: usize) -> usize {
        max_threads
    }

    /// While calls from outside run on the pool's tasks: how many threads may take tasks now,
    /// or `None` to keep the number. A long call (one `join` at the root of a recursion that
    /// runs for seconds, one loop over a large range) asks [`task_workers`](Policy::task_workers)
    /// only as it starts; this lets its number follow the machine while it runs. Called by a
    /// thread running tasks, at its heartbeat (when it reads its clock to share work), at most
    /// once per [`TASK_REFRESH`](crate::TASK_REFRESH) for the runtime; not paired with
    /// [`task_call_end`](Policy::task_call_end), and a policy that counts calls must not count
    /// these. Must not block; it sits on a busy thread's path, as `task_workers` does. The
    /// answer is clamped to `1..=max_threads`: a lower number parks the threads above it at
    /// their next task boundary, a higher one wakes those that may now take tasks. The
    /// default is `None`.
    fn task_refresh(&self, max_threads: usize) -> Option<usize> {
        let _ = max_threads;
        None
    }

    /// A call that asked [`task_workers`](Policy::task_workers) has ended (returned or
    /// unwound): called once per such call, on the thread that made it, after the call's tasks
    /// are done. Calls from several threads overlap: a policy counts them. Must not block.
    fn task_call_end(&self) {}

    /// Check the policy against the runtime it is being attached to (for example, a fixed team
    /// larger than `max_threads` is an error). Called once by the thread calling
    /// [`Builder::build`](crate::Builder::build).
    fn attach(&self, runtime: &RuntimeInfo) -> Result<(), Error> {
        let _ = runtime;
        Ok(())
    }

    /// Where a member runs. Called by each member (the region's starting thread included) as
    /// it joins a team, before user code runs, and by the threads that run tasks for calls
    /// from outside the pool ([`MemberInfo::tasks`]): the calling thread as its call's tasks
    /// start, a worker as it takes a task after being idle or serving a region. The runtime
    /// applies a [`Placement::Cpus`] with one `sched_setaffinity` call when it differs from the
    /// one the thread already has; the starting thread of a region, and the calling thread of
    /// a call, get their own mask back when it ends. Must not block.
    fn placement(&self, member: &MemberInfo) -> Placement {
        let _ = member;
        Placement::Keep
    }

    /// A point where a member may be held back: called by each member at every chunk boundary
    /// of a work-shared loop and before every barrier wait. It may block (that is its
    /// purpose: gang scheduling stops a team here) but must return eventually, and it is on
    /// the hot path: return at once when there is nothing to do.
    fn safe_point(&self, member: &MemberInfo) {
        let _ = member;
    }

    /// Feedback once the whole team has joined. Called by the thread that started the region,
    /// before the region call returns (also when user code panicked). Must not block.
    fn region_end(&self, report: &RegionReport<'_>) {
        let _ = report;
    }

    /// A worker thread has started (called on that thread, before it takes any work).
    fn thread_start(&self, thread: &ThreadInfo) {
        let _ = thread;
    }

    /// A worker thread is about to exit (called on that thread, when the runtime is dropped).
    fn thread_stop(&self, thread: &ThreadInfo) {
        let _ = thread;
    }

    /// The wait strategy this policy needs, used when the builder was given none (gang
    /// scheduling, for example, wants members to busy-wait). Called once, at build.
    fn wait_strategy(&self) -> Option<Arc<dyn WaitStrategy>> {
        None
    }

    /// Whether [`region_end`](Policy::region_end) should carry per-member timing
    /// ([`RegionReport::timing`]). Timing costs a clock read per member per region. Called
    /// once, at build.
    fn wants_timing(&self) -> bool {
        false
    }
}

/// What a policy learns about the runtime it is attached to.
#[non_exhaustive]
#[derive(Clone, Debug)]
pub struct RuntimeInfo {
    /// The most threads a team may have (the calling thread included).
    pub max_threads: usize,
}

/// The view a policy gets at a region's start.
#[non_exhaustive]
#[derive(Clone, Debug)]
pub struct RegionStart {
    /// The region's sequence number in its runtime (0, 1, 2, ...; probes do not count).
    pub seq: u64,
    /// The runtime's `max_threads`.
    pub max_threads: usize,
    /// The team size of the previous region (0 before the first).
    pub last_team: usize,
    /// Read on demand by [`now`](RegionStart::now).
    pub(crate) now: Cell<Option<Instant>>,
    /// The result of the probe this policy asked for, when `plan` is called after one.
    pub probe: Option<ProbeResult>,
    /// How many more probes the runtime will run for this region start (after that, a
    /// [`Plan::Probe`] is treated as [`Plan::Run`] with the same size).
    pub probes_left: u32,
}

impl RegionStart {
    /// When the region was asked for (or the last probe ended): read from the clock at the
    /// first call, the same instant afterwards. It is then also the start of the region's
    /// [`wall`](RegionReport::wall) time. A policy that never calls it saves the region two
    /// clock reads (25-50 ns each on a virtual machine).
    pub fn now(&self) -> Instant {
        match self.now.get() {
            Some(t) => t,
            None => {
                let t = Instant::now();
                self.now.set(Some(t));
                t
            }
        }
    }

    /// The CPUs this process may really use now: the calling thread's affinity mask, further
    /// limited by the cgroup CPU quota (`cpu.max`, rounded up), at least 1. Reads the system on
    /// each call (the affinity mask, `/proc/self/cgroup` and the quota files of the process's
    /// cgroup and its ancestors; the mounts are parsed once), so call it only when deciding.
    pub fn cpu_budget(&self) -> usize {
        crate::sys::affinity::cpu_budget()
    }
}

/// A policy's decision at a region start.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Run the region with a team of this many threads (the starting thread included).
    Run {
        /// Team size.
        threads: usize,
    },
    /// Before deciding, run a timed barrier with this many threads and report the passage
    /// time (first thread in to last thread out) through [`RegionStart::probe`].
    #[non_exhaustive]
    Probe {
        /// Number of threads in the timed barrier.
        threads: usize,
        /// Give up on members whose worker has not started the barrier this long after the
        /// starting thread entered it (they are revoked, as in a loop, and the passage is
        /// reported as at least this long). `None` waits for every member. A policy that only
        /// needs to know whether the passage exceeds a threshold passes the threshold, so a
        /// probe on an oversubscribed machine costs at most that long instead of a time slice.
        give_up_after: Option<Duration>,
    },
}

impl Plan {
    /// [`Plan::Run`] with `threads`.
    pub const fn run(threads: usize) -> Plan {
        Plan::Run { threads }
    }

    /// [`Plan::Probe`] with `threads`, waiting for every member.
    pub const fn probe(threads: usize) -> Plan {
        Plan::Probe {
            threads,
            give_up_after: None,
        }
    }

    /// [`Plan::Probe`] with `threads`, giving up on members not started within `limit`.
    pub const fn probe_within(threads: usize, limit: Duration) -> Plan {
        Plan::Probe {
            threads,
            give_up_after: Some(limit),
        }
    }
}

/// The outcome of a timed barrier.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    /// The number of threads that took part.
    pub threads: usize,
    /// From the first thread entering the barrier to the last thread leaving it.
    pub passage: Duration,
    /// How many threads blocked in the kernel while waiting in it.
    pub blocked: u32,
    /// How many members were given up on because their worker had not started within the
    /// probe's `give_up_after` (the passage is then at least that long).
    pub given_up: u32,
    /// How many members entered the barrier within `give_up_after` of the first one (every
    /// member when the probe had no limit): how many of the team's threads the machine ran
    /// promptly, the starting thread included.
    pub prompt: usize,
}

impl ProbeResult {
    /// A probe result (for tests of policy logic).
    pub const fn new(threads: usize, passage: Duration, blocked: u32) -> Self {
        Self {
            threads,
            passage,
            blocked,
            given_up: 0,
            prompt: threads,
        }
    }

    /// The same result with `prompt` members on time (for tests of policy logic; at most
    /// `threads`).
    pub const fn with_prompt(mut self, prompt: usize) -> Self {
        self.prompt = if prompt < self.threads {
            prompt
        } else {
            self.threads
        };
        self
    }
}

/// Where a member should run.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Leave the thread's CPU affinity as it is.
    Keep,
    /// Restrict the thread to these CPUs.
    Cpus(CpuSet),
}

/// A member of a team, as hooks see it.
#[non_exhaustive]
#[derive(Clone, Copy, Debug)]
pub struct MemberInfo {
    /// Index in the team: 0 is the thread that started the region; worker `i` is member `i`.
    pub member: usize,
    /// The team size.
    pub team_size: usize,
    /// The region's sequence number.
    pub region: u64,
    /// The member's OS thread.
    pub thread: ThreadHandle,
    /// Whether the thread runs tasks for calls from outside the pool (`join`, scopes, loops on
    /// tasks) rather than a region: `member` is then its index in the pool (0: the calling
    /// thread), `team_size` the number of threads that may take tasks (the policy's last
    /// [`task_workers`](Policy::task_workers) answer), and `region` the number of regions
    /// the runtime had run when the thread was placed.
    pub tasks: bool,
}

impl MemberInfo {
    /// Whether this member is the thread that started the region (a user thread, not a worker).
    pub fn is_caller(&self) -> bool {
        self.member == 0
    }
}

/// A worker thread, as [`Policy::thread_start`] and [`Policy::thread_stop`] see it.
#[non_exhaustive]
#[derive(Clone, Copy, Debug)]
pub struct ThreadInfo {
    /// The worker's index (1 ..= max_threads - 1); it is always member `index` of a team.
    pub index: usize,
    /// The worker's OS thread.
    pub thread: ThreadHandle,
}

/// What a policy learns when a region has ended.
#[non_exhaustive]
#[derive(Clone, Debug)]
pub struct RegionReport<'a> {
    /// The region's sequence number.
    pub seq: u64,
    /// The team size it ran with.
    pub team_size: usize,
    /// From the region's start (the policy's decision) to the starting thread's return from the
    /// join; measured only when the policy read the start ([`RegionStart::now`]) or timing is on
    /// ([`Policy::wants_timing`], [`Builder::timing`](crate::Builder::timing)), else `None`.
    pub wall: Option<Duration>,
    /// How many times a member blocked in the kernel while waiting at the join or at a barrier.
    pub blocks: u32,
    /// How many members of a parallel loop the starting thread ran itself, one after another,
    /// because their worker had not started them when it finished its own share. A loop's
    /// members only share work, so this never changes the result; it keeps a worker that is not
    /// on a CPU (an oversubscribed machine) from holding the loop up. SPMD regions
    /// ([`Runtime::region`](crate::Runtime::region)) are never revoked: each member runs on its
    /// own thread.
    pub revoked: u32,
    /// Whether user code panicked (the panic is re-raised after this call).
    pub panicked: bool,
    /// Per-member timing, when the policy [wants it](Policy::wants_timing) or the runtime was
    /// built with [`Builder::timing`](crate::Builder::timing).
    pub timing: Option<RegionTiming<'a>>,
}

/// Per-member times at a region's join, in nanoseconds since the region started.
#[non_exhaustive]
#[derive(Clone, Debug)]
pub struct RegionTiming<'a> {
    /// When each member arrived at the join (index = member index).
    pub arrivals_ns: &'a [u64],
    /// When the join completed: the last arrival.
    pub release_ns: u64,
    /// When each member left the join. Workers are not held at the join (they go back to idle
    /// waiting at once), so their departure is the release; the starting thread departs when it
    /// observed the release.
    pub departures_ns: &'a [u64],
}

impl RegionTiming<'_> {
    /// The time members spent waiting at the join, summed over the team.
    pub fn join_wait(&self) -> Duration {
        let ns: u64 = self
            .arrivals_ns
            .iter()
            .zip(self.departures_ns)
            .map(|(a, d)| d.saturating_sub(*a))
            .sum();
        Duration::from_nanos(ns)
    }
}
