//! [`PoolPolicy`]: processor pools as an asat-core [`Policy`].
//!
//! One `PoolPolicy` is one job (one [`Runtime`](asat_core::Runtime)); it is attached to one
//! runtime only.
//!
//! # Load accounting
//!
//! The load index is the number of active threads per pool, in a [`LoadTable`] that the jobs
//! share: by default the machine-wide [`SharedTable`], across processes, for pools of the
//! detected machine, and a table in this process's memory, shared by its jobs on the same
//! pools, for the pools of a synthetic or XML topology (a model machine never counts in the
//! real machine's table; see [`Pools::is_machine_wide`]). A job counts as follows, as the
//! paper's master thread does:
//!
//! - [`build`](PoolPolicyBuilder::build): the job picks its home pool (the least loaded) and
//!   adds 1 there: its master thread, the thread that runs the serial code between regions.
//! - [`plan`](Policy::plan) (a region starts): the master goes to sleep (its 1 leaves the home
//!   pool), then [`place`] decides the team size `a` and how many members go to each pool, from
//!   the loads at this moment; those threads are added to their pools.
//! - [`placement`](Policy::placement): each member is pinned to the CPUs of its pool
//!   (member 0, the caller, gets its own mask back when the region ends).
//! - [`region_end`](Policy::region_end): the region's threads leave their pools; the master's
//!   1 returns to the home pool.
//! - Drop: the master's 1 leaves.
//!
//! A call into the pool from outside that runs on tasks (`join`, scopes, loops on tasks) is
//! placed as a region is: [`task_workers`](Policy::task_workers) decides (or reuses) the
//! placement and answers its team size, the threads that run the call's tasks are pinned by
//! [`placement`](Policy::placement), and [`task_call_end`](Policy::task_call_end) ends it as
//! `region_end` does. Regions and calls that overlap (from several threads) share one
//! placement: it is released when the last of them ends.
//!
//! # Holding a placement (fine-grain jobs)
//!
//! The paper places a job's threads once per parallel phase. A fine-grain job starts thousands
//! of short regions a second; placing each one anew makes its threads hop between pools (a
//! `sched_setaffinity` and a migration each time) and makes the table flicker. With
//! [`hold`](PoolPolicyBuilder::hold) set, a placement is kept for that long: regions started
//! within it reuse the team and pools without a decision, and the threads stay counted in the
//! table between those regions (they are active in the sense of the load index: the job will
//! use them again within microseconds). The next region after the interval is placed anew.
//! When the hold expires between regions (the job went serial, or finished its parallel
//! work), a small thread of the policy takes the held threads off the table and counts the
//! master in its home pool again, so an idle job does not keep other jobs out of its pools.
//! That thread sleeps until the hold's deadline: it is woken at most once per placement, not
//! at every region held on it. The default, no hold, is the paper's rule.
//!
//! [`SharedTable`]: crate::SharedTable

mod builder;
mod entry;
mod state;
#[cfg(test)]
mod tests;

use std::cell::LazyCell;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;

use asat_core::{MemberInfo, Placement, Plan, Policy, RegionReport, RegionStart, RuntimeInfo};

use crate::placement::{place, Params};
use crate::{LoadTable, Pools};

pub use builder::PoolPolicyBuilder;
use state::{Shared, State};

/// Where one region's team went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionPlacement {
    /// The region's sequence number (for a call's tasks, the number of regions started
    /// before it).
    pub seq: u64,
    /// The desired parallelism `d`.
    pub desired: usize,
    /// The team size `a`.
    pub threads: usize,
    /// The pool loads the decision saw (the job's own master not counted).
    pub loads: Vec<u32>,
    /// The candidate pools, home first.
    pub candidates: Vec<usize>,
    /// `(pool, members)` for each pool that got members.
    pub per_pool: Vec<(usize, usize)>,
    /// The pool of each member (index = member).
    pub member_pools: Vec<usize>,
}

/// Processor-pool scheduling (Zhou and Brecht) for one job. See the [module docs](crate::policy).
///
/// ```
/// use std::sync::Arc;
/// use asat_core::Runtime;
/// use asat_pools::{LocalLoads, PoolKind, PoolPolicy, Topology};
///
/// let topo = Topology::synthetic("node:4 core:4 pu:1")?;
/// let pools = topo.pools(PoolKind::Numa)?;
/// let table = Arc::new(LocalLoads::new(pools.len()));
/// let policy = Arc::new(
///     PoolPolicy::builder(pools)
///         .table(table.clone())
///         .pin(false) // a synthetic machine cannot be pinned to
///         .desired(6)
///         .build()?,
/// );
/// let rt = Runtime::builder().max_threads(6).shared_policy(policy.clone()).build()?;
/// rt.region(|_team| {});
/// let last = policy.last_region().unwrap();
/// // 6 threads, F = 0.8: x = round(0.8*6/4) = 1 pool; 4 idle CPUs there, G*d = 3: a = 4.
/// assert_eq!(last.threads, 4);
/// assert_eq!(last.per_pool, vec![(policy.home(), 4)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PoolPolicy {
    pools: Pools,
    sizes: Vec<u32>,
    params: Params,
    desired: Option<usize>,
    pin: bool,
    members: OnceLock<Box<[AtomicU32]>>,
    shared: Arc<Shared>,
    /// Ends expired holds (only with a hold).
    releaser: Option<JoinHandle<()>>,
    /// The process that built the policy: a copy in a child forked without `exec` must not
    /// take the parent's threads off a table the two share.
    pid: u32,
}

impl fmt::Debug for PoolPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolPolicy")
            .field("pools", &self.pools)
            .field("params", &self.params)
            .field("desired", &self.desired)
            .field("pin", &self.pin)
            .field("hold", &self.shared.hold)
            .field("home", &self.shared.home)
            .field("table", &self.shared.table)
            .finish_non_exhaustive()
    }
}

impl PoolPolicy {
    /// The job's home pool.
    pub fn home(&self) -> usize {
        self.shared.home
    }

    /// The pools.
    pub fn pools(&self) -> &Pools {
        &self.pools
    }

    /// The load table.
    pub fn table(&self) -> &Arc<dyn LoadTable> {
        &self.shared.table
    }

    /// `F` and `G`.
    pub fn params(&self) -> Params {
        self.params
    }

    /// The last placement: where the last region's team, or the threads of a call's tasks,
    /// went (None before the first).
    pub fn last_region(&self) -> Option<RegionPlacement> {
        self.lock().last.clone()
    }

    /// The number of regions started so far (those that reused a held placement included).
    pub fn regions(&self) -> u64 {
        self.lock().regions
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.lock()
    }

    /// How many times the releaser thread came back from a wait.
    #[cfg(test)]
    fn releaser_wakes(&self) -> u64 {
        self.lock().releaser_wakes
    }
}

impl Policy for PoolPolicy {
    fn name(&self) -> &str {
        "pools"
    }

    fn attach(&self, rt: &RuntimeInfo) -> Result<(), asat_core::Error> {
        let members = (0..rt.max_threads).map(|_| AtomicU32::new(0)).collect();
        self.members.set(members).map_err(|_| {
            asat_core::Error::policy(
                self.name(),
                "this PoolPolicy is already attached to a runtime: each job (runtime) needs its \
                 own",
            )
        })
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        let mut st = self.lock();
        let a = self.decide(&mut st, start.max_threads, || start.now(), start.seq);
        st.regions += 1;
        Plan::run(a)
    }

    /// A call's tasks use the job's placement as a region does (module docs).
    fn task_workers(&self, max_threads: usize) -> usize {
        let mut st = self.lock();
        let seq = st.regions;
        self.decide(&mut st, max_threads, Instant::now, seq)
    }

    fn placement(&self, member: &MemberInfo) -> Placement {
        if !self.pin {
            return Placement::Keep;
        }
        // Written by `plan` before the runtime wakes any member (the wake orders it).
        match self.members.get().and_then(|m| m.get(member.member)) {
            Some(pool) => Placement::Cpus(self.pools.cpus(pool.load(Ordering::Relaxed) as usize)),
            None => Placement::Keep,
        }
    }

    fn region_end(&self, _report: &RegionReport<'_>) {
        self.end();
    }

    fn task_call_end(&self) {
        self.end();
    }
}

impl PoolPolicy {
    /// The team of a region or a call's tasks that starts now (`now`, read at most once;
    /// `seq`: the region's number, or for a call the number of regions started before it):
    /// the placement in use while a region or call runs on it or its hold lasts, else a new
    /// one. The region or call runs on it until [`end`](Self::end).
    fn decide(
        &self,
        st: &mut State,
        max_threads: usize,
        now: impl FnOnce() -> Instant,
        seq: u64,
    ) -> usize {
        let d = self
            .desired
            .unwrap_or(max_threads)
            .clamp(1, max_threads.max(1));
        let now = LazyCell::new(now);
        if let Some(last) = &st.last {
            // (A placement in use is kept whatever its hold: its threads run on it.)
            if last.desired == d && (st.running > 0 || self.shared.held_at(st, *now)) {
                st.running += 1;
                return last.threads;
            }
        }
        // Threads still held (an earlier placement) leave before the new decision.
        self.shared.release_all(st);
        let loads = self.shared.table.loads();
        let asg = place(d, self.shared.home, &loads, &self.sizes, self.params);
        for &(pool, n) in &asg.per_pool {
            self.shared.table.add(pool, n as u32);
        }
        st.held.clone_from(&asg.per_pool);
        let member_pools: Vec<usize> = asg.thread_pools().collect();
        if let Some(m) = self.members.get() {
            for (slot, &pool) in m.iter().zip(&member_pools) {
                slot.store(pool as u32, Ordering::Relaxed);
            }
        }
        st.running += 1;
        st.placed_at = Some(*now);
        st.last = Some(RegionPlacement {
            seq,
            desired: d,
            threads: asg.threads,
            loads,
            candidates: asg.candidates,
            per_pool: asg.per_pool,
            member_pools,
        });
        asg.threads
    }

    /// A region or a call that ran on the placement has ended: the last one out releases the
    /// threads, or leaves them held until the hold ends.
    fn end(&self) {
        let mut st = self.lock();
        st.running = st.running.saturating_sub(1);
        if st.running > 0 {
            return;
        }
        // (Without a hold nothing is ever held on: no clock read.)
        if !self.shared.hold.is_zero() && self.shared.held_at(&st, Instant::now()) {
            // Within the hold the threads stay counted: the next region reuses them, or the
            // releaser takes them off when the hold ends. Only an idle releaser needs to be
            // told, and only of a hold that can end; one that is timing a deadline already
            // times this hold's (the deadline moves only with a new placement, and only later).
            if st.releaser_idle && self.shared.hold_deadline(&st).is_some() {
                st.releaser_idle = false;
                self.shared.wake.notify_one();
            }
        } else {
            self.shared.release_to_home(&mut st);
        }
    }
}

impl Drop for PoolPolicy {
    fn drop(&mut self) {
        if std::process::id() != self.pid {
            // A child forked without exec: the parent's releaser thread does not exist here.
            if let Some(h) = self.releaser.take() {
                std::mem::forget(h);
            }
            return;
        }
        if let Some(h) = self.releaser.take() {
            self.lock().stop = true;
            self.shared.wake.notify_one();
            let _ = h.join();
        }
        let mut st = self.lock();
        self.shared.release_all(&mut st);
    }
}
