//! [`PoolPolicyBuilder`]: a job's settings, checked, and its registration in the load table.

use std::fmt;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use asat_core::CpuSet;

use super::state::{end_expired_holds, Shared, State};
use super::PoolPolicy;
use crate::placement::{home_pool, Params};
use crate::{Error, LoadTable, Pools, SharedTable};

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
}
