//! [`SharedTable`]: the pools' load table in a shared-memory file, so that jobs in different
//! processes see each other's load.
//!
//! # Layout
//!
//! One file per user and pool layout: `/dev/shm/asat-pools-u{uid}-{fingerprint:016x}`
//! (the fingerprint is [`Pools::fingerprint`]; the folder can be changed with
//! `ASAT_POOLS_SHM_DIR` or [`SharedTable::open_in`]). The file is an array of 64-bit words,
//! all accessed atomically:
//!
//! | words | content |
//! |---|---|
//! | 0 | magic and layout version |
//! | 1, 2 | number of pools, number of slots |
//! | 3 | generation counter (for owner tags) |
//! | 4 | high-water mark: one more than the highest slot ever claimed |
//! | 8 + s*(1+P) | slot `s`: owner tag (`generation << 32 | pid`, 0 = free) |
//! | 8 + s*(1+P) + 1 + i | slot `s`: threads the owner runs in pool `i` |
//!
//! A zero-filled file is a valid empty table, so a creator needs no initialization step: every
//! opener grows the file to the layout's size if it is smaller and sets the header words with
//! compare-and-swap from 0 (all openers write the same values).
//!
//! # Protocol
//!
//! - Each process claims one slot (all its jobs share it). It first takes the
//!   open-file-description lock (`F_OFD_SETLK`) on byte `s` of the file: the kernel drops it
//!   when the process dies, however it dies. A slot's owner word is only ever written by a
//!   process holding the slot's lock, so holding it, the claimer owns the slot whatever the
//!   word says (free, a dead owner's tag, or `RECLAIMING` left by a process that died while
//!   reclaiming): it zeroes the loads, then publishes its own tag.
//! - A pool's load is the sum over live slots. Only the owner changes its slot's loads.
//! - Reclaiming: a process that can take the lock of a slot whose word holds a tag knows its
//!   owner is dead; holding the lock, it sets the word to `RECLAIMING` (readers stop counting
//!   the slot), zeroes the loads, frees the slot and releases the lock. Since reclaimers and
//!   claimers both hold the lock, a reclaimer, however slow, can never free a slot that a live
//!   process has claimed. Readers reclaim at most every 10 ms; [`SharedTable::reclaim_dead`]
//!   does it at once. (An earlier version decided without the lock and could, when stalled
//!   after deciding, free a slot that a new process had claimed meanwhile: `tests/inject.rs`
//!   is its regression test, which widens that window with a pause injected at its place,
//!   compiled only under `--cfg asat_inject`.)
//! - Reclaiming within a process: the locks belong to the open file description, which all
//!   threads of the process share, so they do not keep two threads of one process from
//!   reclaiming the same slot at once: one could free it, a new process claim it, and the
//!   other, stalled after marking it, free the new process's slot. So a table's reclaimers are
//!   also serialised by a mutex of the table, held across the whole pass:
//!   [`reclaim_dead`](SharedTable::reclaim_dead) waits for it, and a reader's periodic reclaim
//!   is skipped while another thread is at it (`tests/inject.rs` has this race too).
//! - Forks: the file is opened with `O_CLOEXEC`, so a program started with `exec` never holds
//!   it. A child `fork`ed without `exec` shares its parent's mapping and open file description,
//!   and with them the parent's locks: its copies of the parent's table add to the parent's
//!   slot, but never free it and never reclaim (the table records the process that opened it
//!   and compares it with the caller's pid: a reclaim in the child would pass the locks that
//!   the parent holds, and the parent's mutex does not serialise it). A child that opens the
//!   table itself gets a slot, and an open file description, of its own.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};
use std::time::Instant;

use crate::sys::SharedWords;
use crate::{Error, LoadTable, Pools};

const MAGIC: u64 = 0x4153_4154_504f_0001; // "ASATPO", layout version 1
const HEADER: usize = 8;
const W_MAGIC: usize = 0;
const W_POOLS: usize = 1;
const W_SLOTS: usize = 2;
const W_GENERATION: usize = 3;
const W_HIGH: usize = 4;
const RECLAIMING: u64 = u64::MAX;
const RECLAIM_INTERVAL_NS: u64 = 10_000_000;

/// The number of processes a table can hold at once.
pub const SLOTS: usize = 256;

/// A load table shared by all processes of a user that use the same pools (see the
/// [module docs](crate::shm) for the layout and protocol).
///
/// [`SharedTable::open`] returns the same table to every caller in a process.
///
/// ```
/// # use asat_pools::{LoadTable, Pools, SharedTable};
/// # let dir = std::env::temp_dir().join(format!("asat-pools-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let pools = Pools::new(vec![[0].into_iter().collect(), [1].into_iter().collect()], false)?;
/// let table = SharedTable::open_in(&dir, &pools)?;
/// table.add(1, 2);
/// assert_eq!(table.loads(), vec![0, 2]);
/// assert_eq!(table.owners(), vec![std::process::id()]);
/// table.sub(1, 2);
/// # drop(table);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), asat_pools::Error>(())
/// ```
pub struct SharedTable {
    path: PathBuf,
    map: SharedWords,
    pools: usize,
    slot: usize,
    tag: u64,
    epoch: Instant,
    last_reclaim: AtomicU64,
    /// Serialises this process's reclaimers of the table (the slot locks do not: they belong
    /// to the open file description, which the process's threads share).
    reclaiming: Mutex<()>,
    /// The process that opened the table and owns the slot (a child forked without `exec`
    /// holds a copy it must neither free the slot nor reclaim through).
    creator: u32,
}

impl fmt::Debug for SharedTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedTable")
            .field("path", &self.path)
            .field("slot", &self.slot)
            .field("loads", &self.loads())
            .finish_non_exhaustive()
    }
}

static OPEN: Mutex<Vec<(PathBuf, Weak<SharedTable>)>> = Mutex::new(Vec::new());

impl SharedTable {
    /// The folder of the table files: `ASAT_POOLS_SHM_DIR`, else `/dev/shm`.
    pub fn default_dir() -> PathBuf {
        std::env::var_os("ASAT_POOLS_SHM_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/dev/shm"))
    }

    /// The table of this user for `pools`, in [`default_dir`](Self::default_dir).
    pub fn open(pools: &Pools) -> Result<Arc<SharedTable>, Error> {
        Self::open_in(&Self::default_dir(), pools)
    }

    /// The table of this user for `pools`, in `dir`. Callers in one process get the same
    /// table while any of them holds it.
    pub fn open_in(dir: &Path, pools: &Pools) -> Result<Arc<SharedTable>, Error> {
        let path = dir.join(format!(
            "asat-pools-u{}-{:016x}",
            crate::sys::uid(),
            pools.fingerprint()
        ));
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|(_, w)| w.strong_count() > 0);
        // A table inherited through `fork` is the parent's: a child opens its own.
        let pid = std::process::id();
        if let Some(t) = open
            .iter()
            .filter(|(p, _)| *p == path)
            .filter_map(|(_, w)| w.upgrade())
            .find(|t| t.creator == pid)
        {
            return Ok(t);
        }
        let t = Arc::new(Self::create(path.clone(), pools.len())?);
        open.push((path, Arc::downgrade(&t)));
        Ok(t)
    }

    fn create(path: PathBuf, pools: usize) -> Result<Self, Error> {
        let stride = 1 + pools;
        let words = HEADER + SLOTS * stride;
        let (map, before) = SharedWords::open(&path, words)
            .map_err(|e| Error::table(&path, "cannot open or map the file", Some(e)))?;
        let incompatible = || {
            Error::table(
                &path,
                format!(
                    "the file has another layout (not asat-pools version 1 with {pools} pools \
                     and {SLOTS} slots): remove it when no process uses it",
                ),
                None,
            )
        };
        if before > (words * 8) as u64 {
            return Err(incompatible());
        }
        let w = map.words();
        for (i, v) in [
            (W_MAGIC, MAGIC),
            (W_POOLS, pools as u64),
            (W_SLOTS, SLOTS as u64),
        ] {
            match w[i].compare_exchange(0, v, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {}
                Err(old) if old == v => {}
                Err(_) => return Err(incompatible()),
            }
        }
        let generation = w[W_GENERATION].fetch_add(1, Ordering::AcqRel) + 1;
        let tag = ((generation & 0xffff_ffff).max(1) << 32) | std::process::id() as u64;
        let mut table = Self {
            path,
            map,
            pools,
            slot: usize::MAX,
            tag,
            epoch: Instant::now(),
            last_reclaim: AtomicU64::new(0),
            reclaiming: Mutex::new(()),
            creator: std::process::id(),
        };
        table.slot = table.claim()?;
        Ok(table)
    }

    fn base(&self, slot: usize) -> usize {
        HEADER + slot * (1 + self.pools)
    }

    fn zero_loads(&self, slot: usize) {
        let b = self.base(slot);
        for l in &self.map.words()[b + 1..b + 1 + self.pools] {
            l.store(0, Ordering::Release);
        }
    }

    fn claim(&self) -> Result<usize, Error> {
        let w = self.map.words();
        for s in 0..SLOTS {
            let locked = self
                .map
                .try_lock(s)
                .map_err(|e| Error::table(&self.path, "cannot lock a slot", Some(e)))?;
            if !locked {
                continue;
            }
            // We hold the slot's lock, and nobody writes the owner word without it: whoever
            // owned the slot, or was reclaiming it, is gone.
            self.zero_loads(s);
            w[self.base(s)].store(self.tag, Ordering::Release);
            w[W_HIGH].fetch_max(s as u64 + 1, Ordering::AcqRel);
            return Ok(s);
        }
        Err(Error::table(
            &self.path,
            format!(
                "all {SLOTS} slots are held by live processes: at most {SLOTS} processes can share a table"
            ),
            None,
        ))
    }

    /// The file of this table.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// This process's slot.
    pub fn slot(&self) -> usize {
        self.slot
    }

    fn high(&self) -> usize {
        (self.map.words()[W_HIGH].load(Ordering::Acquire) as usize).min(SLOTS)
    }

    /// Frees the slots of dead processes (their load with them). Returns how many it freed.
    ///
    /// Waits while another thread of this process reclaims this table. In a child forked
    /// without `exec` from the process that opened the table, it does nothing and returns 0
    /// (see the [module docs](crate::shm#protocol)).
    pub fn reclaim_dead(&self) -> usize {
        if std::process::id() != self.creator {
            return 0;
        }
        let guard = match self.reclaiming.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                #[cfg(asat_inject)]
                crate::inject::pause(crate::inject::Point::ReclaimWaits);
                self.reclaiming.lock().unwrap_or_else(|e| e.into_inner())
            }
        };
        self.reclaim_holding(&guard)
    }

    /// One reclaim pass, by the thread holding the table's reclaim mutex.
    fn reclaim_holding(&self, _reclaiming: &MutexGuard<'_, ()>) -> usize {
        let w = self.map.words();
        let mut freed = 0;
        for s in 0..self.high() {
            if s == self.slot {
                continue;
            }
            let owner = &w[self.base(s)];
            if owner.load(Ordering::Acquire) == 0 {
                continue;
            }
            // Holding the lock, we own the word (see the module docs); a live owner holds it.
            if !matches!(self.map.try_lock(s), Ok(true)) {
                continue;
            }
            if owner.load(Ordering::Acquire) != 0 {
                owner.store(RECLAIMING, Ordering::Release);
                #[cfg(asat_inject)]
                crate::inject::pause(crate::inject::Point::Reclaiming);
                self.zero_loads(s);
                owner.store(0, Ordering::Release);
                freed += 1;
            }
            let _ = self.map.unlock(s);
        }
        self.last_reclaim
            .store(self.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
        freed
    }

    /// The pids of the processes holding slots (this one included), by slot.
    pub fn owners(&self) -> Vec<u32> {
        let w = self.map.words();
        (0..self.high())
            .filter_map(|s| {
                let t = w[self.base(s)].load(Ordering::Acquire);
                (t != 0 && t != RECLAIMING).then_some(t as u32)
            })
            .collect()
    }

    /// This process's own contribution to each pool.
    pub fn own_loads(&self) -> Vec<u32> {
        let b = self.base(self.slot);
        self.map.words()[b + 1..b + 1 + self.pools]
            .iter()
            .map(|l| l.load(Ordering::Acquire) as u32)
            .collect()
    }
}

impl LoadTable for SharedTable {
    fn pools(&self) -> usize {
        self.pools
    }

    fn add(&self, pool: usize, n: u32) {
        let i = self.base(self.slot) + 1 + pool;
        self.map.words()[i].fetch_add(n as u64, Ordering::AcqRel);
    }

    fn sub(&self, pool: usize, n: u32) {
        let i = self.base(self.slot) + 1 + pool;
        self.map.words()[i].fetch_sub(n as u64, Ordering::AcqRel);
    }

    fn loads(&self) -> Vec<u32> {
        let now = self.epoch.elapsed().as_nanos() as u64;
        if now.saturating_sub(self.last_reclaim.load(Ordering::Relaxed)) > RECLAIM_INTERVAL_NS
            && std::process::id() == self.creator
        {
            // Skipped while another thread reclaims: a reader need not wait for it.
            if let Ok(g) = self.reclaiming.try_lock() {
                self.reclaim_holding(&g);
            }
        }
        let w = self.map.words();
        // Signed sums clamped at 0: a count that reads as negative (only a corrupted file
        // holds one) must not wrap a pool's load around to a huge one, or overflow the sum.
        let mut out = vec![0i64; self.pools];
        for s in 0..self.high() {
            let b = self.base(s);
            let t = w[b].load(Ordering::Acquire);
            if t == 0 || t == RECLAIMING {
                continue;
            }
            for (o, l) in out.iter_mut().zip(&w[b + 1..b + 1 + self.pools]) {
                *o = o.saturating_add(l.load(Ordering::Acquire) as i64);
            }
        }
        out.into_iter()
            .map(|x| x.clamp(0, i64::from(u32::MAX)) as u32)
            .collect()
    }
}

impl Drop for SharedTable {
    fn drop(&mut self) {
        if std::process::id() != self.creator {
            // A child forked without `exec`: the slot, and the lock it shares, are the
            // parent's.
            return;
        }
        self.zero_loads(self.slot);
        self.map.words()[self.base(self.slot)].store(0, Ordering::Release);
        let _ = self.map.unlock(self.slot);
    }
}
