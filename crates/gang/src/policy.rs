//! [`GangPolicy`]: an asat-core runtime whose team is one gang of a [`GangScheduler`].
//!
//! # Membership
//!
//! The gang is created, `max_threads` wide, when the runtime is built
//! ([`Policy::attach`]); building fails if it is wider than the gang domain. Workers are
//! members `1..max_threads`: each joins the gang when it starts ([`Policy::thread_start`]) and
//! leaves before it exits. Member 0 is the user thread that starts a region, which may be a
//! different thread each region: it joins the gang as member 0 when it enters the region
//! ([`Policy::placement`], which may therefore wait for the gang's slot) and leaves at the
//! region's end ([`Policy::region_end`]); between regions it runs unscheduled. Every member is
//! pinned to its column's CPU while in a region.
//!
//! Tasks (`join`, scopes, loops on tasks) run on the same gang: a worker is pinned to its
//! column's CPU as it takes tasks, and a thread calling into the pool from outside that runs
//! its call's tasks (the pool's index 0) joins the gang as member 0 for the call, as a
//! region's starting thread does for the region, and leaves it when the call ends
//! ([`Policy::task_call_end`]). While member 0 is taken (by a region's starting thread, or
//! another call's), a caller runs its tasks unscheduled. Every thread stops at its gang's
//! switches by signal, and also cooperatively before each task it takes
//! ([`Policy::safe_point`]).
//!
//! # Waiting
//!
//! Inside a gang, barriers and joins busy-wait ([`GangWait`]): the partner a thread waits for
//! is running on its own CPU at the same time, which is the point of gang scheduling. Idle
//! workers spin briefly and then sleep; while idle they count as not runnable, so a gang whose
//! threads are all idle is switched away from early and skipped, and they are not signalled at
//! switches. A worker woken with work while its slot is stopped waits for the slot first.
//!
//! [`GangScheduler`]: crate::GangScheduler

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use asat_core::{
    CpuSet, MemberInfo, Placement, Plan, Policy, RegionReport, RegionStart, RuntimeInfo,
    ThreadInfo, WaitInfo, WaitOutcome, WaitSite, WaitStrategy,
};

use crate::switch::Shared;
use crate::{sections, thread, Gang};

/// The gang-scheduling policy for one asat-core runtime; take it from
/// [`GangScheduler::policy`](crate::GangScheduler::policy). See the module docs.
#[derive(Debug)]
pub struct GangPolicy {
    shared: Arc<Shared>,
    gang: OnceLock<Gang>,
    member0: AtomicBool,
}

impl GangPolicy {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            gang: OnceLock::new(),
            member0: AtomicBool::new(false),
        }
    }

    /// The runtime's gang, once the policy is attached to a runtime.
    pub fn gang(&self) -> Option<&Gang> {
        self.gang.get()
    }

    /// This policy's identity in [`TASK_CALLER`] (never 0).
    fn key(&self) -> usize {
        self as *const Self as usize
    }
}

thread_local! {
    /// The policy (its [`GangPolicy::key`]) whose gang the calling thread joined as member 0
    /// for a call's tasks, or 0.
    static TASK_CALLER: Cell<usize> = const { Cell::new(0) };
}

impl Policy for GangPolicy {
    fn name(&self) -> &str {
        "gang"
    }

    /// Called by the thread building the runtime: places a gang of `max_threads`.
    fn attach(&self, runtime: &RuntimeInfo) -> Result<(), asat_core::Error> {
        if self.gang.get().is_some() {
            return Err(asat_core::Error::policy(
                "gang",
                crate::Error::already_attached().to_string(),
            ));
        }
        let g = Gang::create(&self.shared, runtime.max_threads)
            .map_err(|e| asat_core::Error::policy("gang", e.to_string()))?;
        self.gang.set(g).map_err(|_| {
            asat_core::Error::policy("gang", crate::Error::already_attached().to_string())
        })
    }

    /// The whole gang runs every region.
    fn plan(&self, _start: &RegionStart) -> Plan {
        Plan::run(self.gang.get().map_or(1, Gang::size))
    }

    /// Pins each member to its column's CPU. For member 0 (the region's starting thread) it
    /// first joins the gang, waiting for the gang's slot if it is not running. A starting
    /// thread that cannot join (it is a member of another gang or of this one, another handler
    /// was found installed for the stop signal, or this is a forked child's copy of the
    /// runtime) is left where it is, so the region is correct but not coscheduled.
    fn placement(&self, member: &MemberInfo) -> Placement {
        let Some(g) = self.gang.get() else {
            return Placement::Keep;
        };
        if member.member == 0 && member.tasks {
            // A call's thread: member 0 for the call when the place is free (module docs).
            if g.join_unpinned(0).is_err() {
                return Placement::Keep;
            }
            TASK_CALLER.set(self.key());
        } else if member.member == 0 && !self.member0.load(Ordering::Relaxed) {
            if g.join_unpinned(0).is_err() {
                return Placement::Keep;
            }
            self.member0.store(true, Ordering::Relaxed);
        }
        match g.cpu(member.member) {
            Some(cpu) => Placement::Cpus(std::iter::once(cpu).collect::<CpuSet>()),
            None => Placement::Keep,
        }
    }

    /// A cooperative stop: waits here while the gang's slot is stopped.
    fn safe_point(&self, _member: &MemberInfo) {
        sections::safe_point();
    }

    /// Member 0 leaves the gang (called on that thread).
    fn region_end(&self, _report: &RegionReport<'_>) {
        if self.member0.swap(false, Ordering::Relaxed) {
            thread::leave();
        }
    }

    /// A call's thread that joined as member 0 for its tasks leaves the gang.
    fn task_call_end(&self) {
        if TASK_CALLER.get() == self.key() {
            TASK_CALLER.set(0);
            thread::leave();
        }
    }

    /// The worker joins the gang as member `index` (waiting for the gang's slot).
    fn thread_start(&self, thread: &ThreadInfo) {
        if let Some(g) = self.gang.get() {
            // A worker is a fresh thread, bound nowhere, its index is below the gang's size, and
            // its cell is its own (a dropped gang's orphaned cells are never given to another
            // gang). Joining fails only once another handler was found installed for the stop
            // signal (building the runtime then failed too, unless that happened later); the
            // worker then runs outside the gang (correct, not coscheduled).
            let _ = g.join_unpinned(thread.index);
        }
    }

    fn thread_stop(&self, _thread: &ThreadInfo) {
        thread::leave();
    }

    fn wait_strategy(&self) -> Option<Arc<dyn WaitStrategy>> {
        Some(Arc::new(GangWait))
    }
}

/// How gang members wait: busy-wait at barriers and joins; an idle worker spins
/// [`GangWait::IDLE_SPIN`] then sleeps, counted as not runnable meanwhile.
///
/// [`waited`](WaitStrategy::waited) for an idle wait may block: a worker given work while its
/// gang's slot is stopped waits there for the slot (gang scheduling's purpose).
#[derive(Clone, Copy, Debug, Default)]
pub struct GangWait;

impl GangWait {
    /// How long an idle worker spins before it sleeps.
    pub const IDLE_SPIN: Duration = Duration::from_micros(100);
}

impl WaitStrategy for GangWait {
    fn spin_limit(&self, info: &WaitInfo) -> Duration {
        match info.site {
            WaitSite::Idle => {
                sections::set_idle(true);
                Self::IDLE_SPIN
            }
            _ => Duration::MAX,
        }
    }

    fn waited(&self, info: &WaitInfo, _outcome: &WaitOutcome) {
        if info.site == WaitSite::Idle {
            sections::set_idle(false);
        }
    }
}
