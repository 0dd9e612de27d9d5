//! [`LoadTable`]: the pools' load index (active threads per pool), as jobs publish it to each
//! other, and [`LocalLoads`], a table for the jobs of one process.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::Pools;

/// Where jobs publish the threads they run in each pool and read everyone's.
///
/// Loads are counts of active threads. Each job adds what it places and subtracts the same
/// amounts later; a table never sees more subtracted than was added by the same job.
pub trait LoadTable: Send + Sync + fmt::Debug {
    /// The number of pools.
    fn pools(&self) -> usize;

    /// Adds `n` threads to `pool`.
    fn add(&self, pool: usize, n: u32);

    /// Removes `n` threads from `pool` (added before by the same job).
    fn sub(&self, pool: usize, n: u32);

    /// The current load of every pool (one entry per pool).
    fn loads(&self) -> Vec<u32>;
}

/// A load table in this process's memory: jobs in one process see each other, other
/// processes do not (see [`SharedTable`](crate::SharedTable) for that).
///
/// ```
/// use asat_pools::{LoadTable, LocalLoads};
/// let t = LocalLoads::new(2);
/// t.add(1, 3);
/// assert_eq!(t.loads(), vec![0, 3]);
/// t.sub(1, 3);
/// assert_eq!(t.loads(), vec![0, 0]);
/// ```
pub struct LocalLoads {
    loads: Box<[AtomicU32]>,
}

impl LocalLoads {
    /// A table of `pools` pools, all at load 0.
    pub fn new(pools: usize) -> Self {
        Self {
            loads: (0..pools).map(|_| AtomicU32::new(0)).collect(),
        }
    }
}

/// The table in this process's memory of the jobs on `pools` that are not
/// [machine-wide](Pools::is_machine_wide): the same table for all such jobs of the process on
/// equal pools while any of them holds it, as they would share the machine-wide table.
pub(crate) fn process_table(pools: &Pools) -> Arc<LocalLoads> {
    static TABLES: Mutex<Vec<(Pools, Weak<LocalLoads>)>> = Mutex::new(Vec::new());
    let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    tables.retain(|(_, w)| w.strong_count() > 0);
    if let Some(t) = tables
        .iter()
        .filter(|(p, _)| p == pools)
        .find_map(|(_, w)| w.upgrade())
    {
        return t;
    }
    let t = Arc::new(LocalLoads::new(pools.len()));
    tables.push((pools.clone(), Arc::downgrade(&t)));
    t
}

impl fmt::Debug for LocalLoads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalLoads")
            .field("loads", &self.loads())
            .finish()
    }
}

impl LoadTable for LocalLoads {
    fn pools(&self) -> usize {
        self.loads.len()
    }

    fn add(&self, pool: usize, n: u32) {
        self.loads[pool].fetch_add(n, Ordering::AcqRel);
    }

    fn sub(&self, pool: usize, n: u32) {
        self.loads[pool].fetch_sub(n, Ordering::AcqRel);
    }

    fn loads(&self) -> Vec<u32> {
        self.loads
            .iter()
            .map(|l| l.load(Ordering::Acquire))
            .collect()
    }
}
