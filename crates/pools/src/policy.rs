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

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use asat_core::{
    CpuSet, MemberInfo, Placement, Plan, Policy, RegionReport, RegionStart, RuntimeInfo,
};

use crate::placement::{home_pool, place, Params};
use crate::{Error, LoadTable, Pools, SharedTable};

/// Where one region's team went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionPlacement {
    /// The region's sequence number.
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

#[derive(Debug, Default)]
struct State {
    held: Vec<(usize, usize)>,
    master_in_home: bool,
    placed_at: Option<Instant>,
    last: Option<RegionPlacement>,
    regions: u64,
    /// A region of the job is running (between `plan` and `region_end`).
    in_region: bool,
    /// The policy is being dropped: the releaser thread ends.
    stop: bool,
    /// The releaser is in its untimed wait: no deadline is being timed, so a region that ends
    /// within its hold must wake it (once: it then sleeps until the hold's deadline, which
    /// later regions of the same placement do not move).
    releaser_idle: bool,
    /// How many times the releaser came back from a wait.
    #[cfg(test)]
    releaser_wakes: u64,
}

/// The job's placement state, shared with the thread that ends an expired hold.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the releaser: a region ended within its hold while the releaser was idle, or the
    /// policy is dropped.
    wake: Condvar,
    table: Arc<dyn LoadTable>,
    home: usize,
    hold: Duration,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the held threads off the table.
    fn release(&self, st: &mut State) {
        for (pool, n) in st.held.drain(..) {
            self.table.sub(pool, n as u32);
        }
    }

    /// Before a new placement, or at the end: the held threads leave the table, and so does the
    /// master's count in its home pool.
    fn release_all(&self, st: &mut State) {
        self.release(st);
        if st.master_in_home {
            self.table.sub(self.home, 1);
            st.master_in_home = false;
        }
    }

    /// Between regions: the held threads leave the table and the master counts in its home
    /// pool again.
    fn release_to_home(&self, st: &mut State) {
        self.release(st);
        if !st.master_in_home {
            self.table.add(self.home, 1);
            st.master_in_home = true;
        }
    }

    /// When the hold of the held placement ends, whether or not a region runs on it now
    /// (`None`: nothing held, or a hold too long to end).
    fn hold_deadline(&self, st: &State) -> Option<Instant> {
        if st.held.is_empty() {
            return None;
        }
        st.placed_at?.checked_add(self.hold)
    }

    /// Whether threads are held and their hold is not over at `now` (a hold too long to end
    /// never is).
    fn held_at(&self, st: &State, now: Instant) -> bool {
        !st.held.is_empty()
            && st
                .placed_at
                .is_some_and(|at| now.saturating_duration_since(at) < self.hold)
    }
}

/// The releaser thread of a job with a hold: a job that stops starting regions (a serial
/// phase, or the end of its parallel work) would otherwise stay counted with its held threads
/// until its next region or its drop. It ends the hold when it expires.
///
/// It sleeps until the deadline of the placement it saw held between regions; the job's later
/// regions within that hold do not wake it (a fine-grain job ends thousands of regions a
/// second, and a wake per region costs the job a context switch each time). At the deadline,
/// if a region is running, [`region_end`](Policy::region_end) will find the hold over and end
/// it, and the releaser waits, idle, for a region that ends within a newer hold.
fn end_expired_holds(shared: &Shared) {
    let mut st = shared.lock();
    while !st.stop {
        // The deadline of the held placement, whether or not a region runs on it now: the
        // job's regions come and go within the hold and need not wake this thread.
        let now = Instant::now();
        st = match shared.hold_deadline(&st) {
            Some(deadline) if now < deadline => {
                shared
                    .wake
                    .wait_timeout(st, deadline - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
            Some(_) if !st.in_region => {
                shared.release_to_home(&mut st);
                continue;
            }
            // Nothing held, a hold too long to end, or a hold that expired during a region
            // (whose end releases it): idle until a region ends within a newer hold.
            _ => {
                st.releaser_idle = true;
                let mut st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
                st.releaser_idle = false;
                st
            }
        };
        #[cfg(test)]
        {
            st.releaser_wakes += 1;
        }
    }
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

/// Builds a [`PoolPolicy`]; values are checked by [`build`](Self::build).
pub struct PoolPolicyBuilder {
    pools: Pools,
    table: Option<Arc<dyn LoadTable>>,
    params: Params,
    desired: Option<usize>,
    pin: bool,
    hold: Duration,
}

impl fmt::Debug for PoolPolicyBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolPolicyBuilder")
            .field("pools", &self.pools)
            .field("params", &self.params)
            .field("desired", &self.desired)
            .field("pin", &self.pin)
            .field("hold", &self.hold)
            .finish_non_exhaustive()
    }
}

impl PoolPolicyBuilder {
    /// `F`, the spanning control (default 0.8; 0 = never span; must be finite and >= 0).
    pub fn f(mut self, f: f64) -> Self {
        self.params.f = f;
        self
    }

    /// `G`, the least actual parallelism as a fraction of `d` (default 0.5; in `[0, 1]`).
    pub fn g(mut self, g: f64) -> Self {
        self.params.g = g;
        self
    }

    /// The job's desired parallelism `d` (default: the runtime's `max_threads`; above it, it
    /// is lowered to it).
    pub fn desired(mut self, d: usize) -> Self {
        self.desired = Some(d);
        self
    }

    /// Whether members are pinned to their pool's CPUs (default true; the pools must be this
    /// system's).
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// Keep a placement for this long: regions started within it reuse the team and pools,
    /// whose threads stay counted in the table between regions (default: zero, a decision at
    /// every region as in the paper). See the
    /// [module docs](crate::policy#holding-a-placement-fine-grain-jobs).
    pub fn hold(mut self, hold: Duration) -> Self {
        self.hold = hold;
        self
    }

    /// The load table. By default, for [machine-wide](Pools::is_machine_wide) pools (those of
    /// the detected machine), [`SharedTable::open`]: shared with every process of this user
    /// that uses the same pools. For other pools (a synthetic or XML topology's), a table in
    /// this process's memory that its jobs on the same pools share: a model machine's jobs
    /// never count in the real machine's table. (For a model machine's jobs in several
    /// processes, pass [`SharedTable::open_in`] a folder of your own.)
    pub fn table(mut self, table: Arc<dyn LoadTable>) -> Self {
        self.table = Some(table);
        self
    }

    /// Checks the settings, opens the table and registers the job: its home pool is the least
    /// loaded pool now.
    ///
    /// Errors: a setting out of range; pinning pools that are not this system's; the shared
    /// table's folder or file refused, or all its slots held (see [`SharedTable::open`]).
    pub fn build(self) -> Result<PoolPolicy, Error> {
        let Params { f, g } = self.params;
        if !(f >= 0.0 && f.is_finite()) {
            return Err(Error::policy(format!(
                "F = {f}: must be a finite number >= 0"
            )));
        }
        if !(0.0..=1.0).contains(&g) {
            return Err(Error::policy(format!("G = {g}: must be between 0 and 1")));
        }
        if self.desired == Some(0) {
            return Err(Error::policy(
                "desired parallelism 0: must be at least 1 thread",
            ));
        }
        if self.pin {
            if !self.pools.is_this_system() {
                return Err(Error::not_this_system());
            }
            if let Ok(mask) = CpuSet::of_current_thread() {
                let all = self.pools.all_cpus();
                if all.intersection(&mask) != all {
                    return Err(Error::policy(format!(
                        "the pools' CPUs {all} are not all in this thread's affinity mask \
                         {mask}: pools must be formed from usable CPUs"
                    )));
                }
            }
        }
        let table: Arc<dyn LoadTable> = match self.table {
            Some(t) => t,
            None if self.pools.is_machine_wide() => SharedTable::open(&self.pools)?,
            None => crate::load::process_table(&self.pools),
        };
        if table.pools() != self.pools.len() {
            return Err(Error::policy(format!(
                "the load table has {} pools but there are {}: it must be made for these pools",
                table.pools(),
                self.pools.len()
            )));
        }
        let sizes = self.pools.sizes();
        let home = home_pool(&table.loads(), &sizes);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                master_in_home: true,
                ..State::default()
            }),
            wake: Condvar::new(),
            table: Arc::clone(&table),
            home,
            hold: self.hold,
        });
        let releaser = if self.hold.is_zero() {
            None
        } else {
            let shared = Arc::clone(&shared);
            let h = std::thread::Builder::new()
                .name("asat-pools-hold".into())
                .spawn(move || end_expired_holds(&shared))
                .map_err(|e| {
                    Error::policy(format!("cannot start the thread that ends holds: {e}"))
                })?;
            Some(h)
        };
        table.add(home, 1);
        Ok(PoolPolicy {
            pools: self.pools,
            sizes,
            params: self.params,
            desired: self.desired,
            pin: self.pin,
            members: OnceLock::new(),
            shared,
            releaser,
            pid: std::process::id(),
        })
    }
}

impl PoolPolicy {
    /// A builder for a job on `pools`.
    pub fn builder(pools: Pools) -> PoolPolicyBuilder {
        PoolPolicyBuilder {
            pools,
            table: None,
            params: Params::DEFAULT,
            desired: None,
            pin: true,
            hold: Duration::ZERO,
        }
    }

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

    /// Where the last region's team went (None before the first region).
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
        let d = self
            .desired
            .unwrap_or(start.max_threads)
            .clamp(1, start.max_threads.max(1));
        if let Some(last) = &st.last {
            if last.desired == d && self.shared.held_at(&st, start.now()) {
                let a = last.threads;
                st.regions += 1;
                st.in_region = true;
                return Plan::run(a);
            }
        }
        // Threads still held (an earlier placement) leave before the new decision.
        self.shared.release_all(&mut st);
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
        st.regions += 1;
        st.in_region = true;
        st.placed_at = Some(start.now());
        st.last = Some(RegionPlacement {
            seq: start.seq,
            desired: d,
            threads: asg.threads,
            loads,
            candidates: asg.candidates,
            per_pool: asg.per_pool,
            member_pools,
        });
        Plan::run(asg.threads)
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
        let mut st = self.lock();
        st.in_region = false;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LocalLoads;
    use asat_core::Runtime;

    /// Two pools of two (made-up) CPUs; a job of 2 threads on them with this hold.
    fn job(hold: Duration) -> (Arc<LocalLoads>, Arc<PoolPolicy>, Runtime) {
        let a: CpuSet = [0, 1].into_iter().collect();
        let b: CpuSet = [2, 3].into_iter().collect();
        let pools = Pools::new(vec![a, b], false).unwrap();
        let table = Arc::new(LocalLoads::new(2));
        let policy = Arc::new(
            PoolPolicy::builder(pools)
                .table(table.clone())
                .pin(false)
                .hold(hold)
                .build()
                .unwrap(),
        );
        let rt = Runtime::builder()
            .max_threads(2)
            .shared_policy(policy.clone())
            .build()
            .unwrap();
        (table, policy, rt)
    }

    /// Waits (10 s at most) for the table to read `want`.
    fn wait_for_loads(table: &LocalLoads, want: &[u32]) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while table.loads() != want && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(table.loads(), want);
    }

    #[test]
    fn regions_within_a_hold_do_not_wake_the_releaser() {
        // A fine-grain job: many regions on one held placement. The releaser times the
        // hold's deadline once; it used to be woken at the end of every region.
        let (table, policy, rt) = job(Duration::from_secs(3600));
        for _ in 0..2000 {
            rt.region(|_| {});
        }
        assert_eq!(policy.regions(), 2000);
        assert_eq!(policy.last_region().unwrap().per_pool, vec![(0, 2)]);
        assert_eq!(table.loads(), vec![2, 0]);
        let wakes = policy.releaser_wakes();
        assert!(
            wakes <= 5,
            "the releaser woke {wakes} times for 2000 regions"
        );
        drop(rt);
        drop(policy);
        assert_eq!(table.loads(), vec![0, 0]);
    }

    #[test]
    fn a_hold_too_long_to_end_is_kept() {
        // Duration::MAX cannot be added to an Instant: such a hold never ends (it used to end
        // at every region's end).
        let (table, policy, rt) = job(Duration::MAX);
        rt.region(|_| {});
        let first = policy.last_region().unwrap();
        assert_eq!(table.loads(), vec![2, 0]);
        table.add(0, 2);
        rt.region(|_| {});
        assert_eq!(policy.last_region().unwrap(), first);
        assert_eq!(table.loads(), vec![4, 0]);
        assert!(policy.releaser_wakes() <= 2);
        table.sub(0, 2);
        drop(rt);
        drop(policy);
        assert_eq!(table.loads(), vec![0, 0]);
    }

    #[test]
    fn a_hold_placed_after_a_deadline_passed_in_a_region_still_ends() {
        let hold = Duration::from_millis(200);
        let (table, policy, rt) = job(hold);
        // A: the releaser times A's deadline.
        rt.region(|_| {});
        // B, on A's placement, runs past that deadline: the releaser finds a region running
        // and goes idle; B's end releases the threads itself.
        rt.region(|team| {
            if team.index() == 0 {
                std::thread::sleep(hold + Duration::from_millis(100));
            }
        });
        assert_eq!(table.loads(), vec![1, 0], "the master alone, at home");
        // C: a new placement; the releaser, idle, must be told, and end C's hold.
        rt.region(|_| {});
        assert_eq!(policy.regions(), 3);
        wait_for_loads(&table, &[1, 0]);
        // The job goes on as before.
        rt.region(|_| {});
        wait_for_loads(&table, &[1, 0]);
        drop(rt);
        drop(policy);
        assert_eq!(table.loads(), vec![0, 0]);
    }
}
