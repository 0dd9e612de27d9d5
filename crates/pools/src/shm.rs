//! [`SharedTable`]: the pools' load table in a shared-memory file, so that jobs in different
//! processes see each other's load.
//!
//! # The file
//!
//! One file per pool layout, in a folder only the user can use. Folder and file are opened and
//! checked by [`asat_core::private_file`]: neither may be a symbolic link, both must be the
//! user's with no permissions for the group or others, the file must have one link and its
//! exact size, and its space is reserved when it is created (a full `/dev/shm` is an error at
//! open, never a `SIGBUS` later). Anything else is refused with an error, never changed.
//!
//! - [`SharedTable::open`]: the machine-wide table, for [machine-wide](Pools::is_machine_wide)
//!   pools only (those of the detected machine; others are refused), named
//!   `asat-pools-{fingerprint:016x}`, in the folder that `ASAT_POOLS_SHM_DIR` names (an
//!   absolute path; a relative or empty one is refused), else in the user's own folder
//!   ([`PrivateDir::user`]: `$XDG_RUNTIME_DIR`, else `/dev/shm/asat-u{uid}`).
//! - [`SharedTable::open_in`]: a table in a folder the caller names (an absolute path), for
//!   any pools. Pools that are not machine-wide (a synthetic or XML topology's) get the name
//!   `asat-pools-model-{fingerprint:016x}`: even in the machine-wide table's folder, with the
//!   real pools' CPU numbers, they never share that table.
//!
//! The fingerprint is [`Pools::fingerprint`]. A missing folder is made with mode 0700 (not its
//! parents, and never `$XDG_RUNTIME_DIR`).
//!
//! Files nobody uses are removed ([`private_file`'s removal](asat_core::private_file#removal)):
//! a process that creates a table removes the other tables (`asat-pools-*`) of the folder
//! that no process holds open, and the last process of a table removes it when it drops it.
//!
//! # Layout
//!
//! The file is an array of 64-bit words, all accessed atomically:
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
//! A zero-filled file is a valid empty table, so a creator needs no initialization step: the
//! file is created zero-filled at its full size (concurrent creators follow
//! [`private_file`'s protocol](asat_core::private_file#concurrent-creators)), and every opener
//! sets the header words with compare-and-swap from 0 (all openers write the same values). A
//! file whose header holds other values is refused.
//!
//! Only the user's own processes can write the file, but a faulty one can write anything: no
//! content harms a reader. Loads are summed as signed numbers, saturating, and clamped to
//! `[0, u32::MAX]`; the high-water mark is capped at [`SLOTS`]; an owner tag that is not a live
//! process's (no one holds the slot's lock) is reclaimed; a slot held by a live process that
//! writes nonsense only skews decisions, which stay within the pools.
//!
//! # Protocol
//!
//! - Each process claims one slot (all its jobs share it: a process has one open table per
//!   file, found by the file's identity). It first takes the open-file-description lock
//!   (`F_OFD_SETLK`) on byte `s` of the file: the kernel drops it when the process dies,
//!   however it dies. A slot's owner word is only ever written by a holder of the slot's lock,
//!   so holding it, the claimer owns the slot whatever the word says (free, a dead owner's
//!   tag, or `RECLAIMING` left by a process that died while reclaiming): it zeroes the loads,
//!   then publishes its own tag.
//! - A pool's load is the sum over live slots. Only the owner changes its slot's loads.
//! - Reclaiming: a process that can take the lock of a slot whose word holds a tag knows its
//!   owner is dead; holding the lock, it sets the word to `RECLAIMING` (readers stop counting
//!   the slot), zeroes the loads, frees the slot and releases the lock. Since reclaimers and
//!   claimers both hold the lock, a reclaimer, however slow, can never free a slot that a live
//!   process has claimed. Readers reclaim at most every 10 ms; [`SharedTable::reclaim_dead`]
//!   does it at once. (An earlier version decided without the lock and could, when stalled
//!   after deciding, free a slot that a new process had claimed meanwhile.)
//! - Reclaiming within a process: the locks belong to the open file description, which all
//!   threads of the process share, so they do not keep two threads of one process from
//!   reclaiming the same slot at once: one could free it, a new process claim it, and the
//!   other, stalled after marking it, free the new process's slot. So a table's reclaimers are
//!   also serialised by a mutex of the table, held across the whole pass:
//!   [`reclaim_dead`](SharedTable::reclaim_dead) waits for it, and a reader's periodic reclaim
//!   is skipped while another thread is at it. (`tests/inject.rs` is the regression test of
//!   both races: it widens each window with a pause injected at its place, compiled only
//!   under `--cfg asat_inject`.)
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

use asat_core::private_file::{FileId, PrivateDir, PrivateFile};

use crate::error::Folder;
use crate::sys::SharedWords;
use crate::{Error, LoadTable, Pools};

const MAGIC: u64 = 0x4153_4154_504f_0001; // "ASATPO", layout version 1
/// The start of every table's file name.
const FILE_PREFIX: &str = "asat-pools-";
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

/// The environment variable naming the folder of the machine-wide table.
const DIR_ENV: &str = "ASAT_POOLS_SHM_DIR";

/// A load table shared by all processes of a user that use the same pools (see the
/// [module docs](crate::shm) for the file, its layout and the protocol).
///
/// [`SharedTable::open`] returns the same table to every caller in a process.
///
/// ```
/// # use asat_pools::{LoadTable, Pools, SharedTable};
/// // A folder of one's own (absolute; made with mode 0700 when missing).
/// let dir = std::env::temp_dir().join(format!("asat-pools-doc-{}", std::process::id()));
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
    /// The folder and the file's name in it, to remove the file when this process is its last
    /// user (`asat_core::private_file`'s removal).
    dir: PrivateDir,
    name: String,
    path: PathBuf,
    id: FileId,
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
            .field("id", &self.id)
            .field("slot", &self.slot)
            .field("loads", &self.loads())
            .finish_non_exhaustive()
    }
}

/// The tables open in this process, by file (the creator tells a parent's, inherited through
/// `fork`, from this process's own).
static OPEN: Mutex<Vec<(FileId, Weak<SharedTable>)>> = Mutex::new(Vec::new());

impl SharedTable {
    /// The folder of the machine-wide tables: `ASAT_POOLS_SHM_DIR` (which must be an absolute
    /// path), else the user's own folder (`$XDG_RUNTIME_DIR`, else `/dev/shm/asat-u{uid}`,
    /// made when missing). Checked as the [module docs](crate::shm#the-file) say.
    pub fn default_dir() -> Result<PathBuf, Error> {
        Ok(Self::default_private_dir()?.path().to_owned())
    }

    fn default_private_dir() -> Result<PrivateDir, Error> {
        match std::env::var_os(DIR_ENV) {
            Some(v) => PrivateDir::named(&v).map_err(|e| Error::shared_file(Folder::Env(v), e)),
            None => PrivateDir::user().map_err(|e| Error::shared_file(Folder::Default, e)),
        }
    }

    /// The machine-wide table of this user for `pools`, in
    /// [`default_dir`](Self::default_dir).
    ///
    /// Errors: pools that are not [machine-wide](Pools::is_machine_wide) (a synthetic or XML
    /// topology's); a folder or file refused (see the [module docs](crate::shm#the-file)); a
    /// file of another layout; all [`SLOTS`] slots held by live processes.
    pub fn open(pools: &Pools) -> Result<Arc<SharedTable>, Error> {
        if !pools.is_machine_wide() {
            return Err(Error::not_machine_wide());
        }
        Self::open_private(Self::default_private_dir()?, pools)
    }

    /// The table of this user for `pools`, in `dir` (an absolute path, made with mode 0700
    /// when missing). Callers in one process get the same table while any of them holds it.
    ///
    /// Errors: as [`open`](Self::open), but any pools may have a table here.
    pub fn open_in(dir: &Path, pools: &Pools) -> Result<Arc<SharedTable>, Error> {
        let dir = PrivateDir::named(dir).map_err(|e| Error::shared_file(Folder::Other, e))?;
        Self::open_private(dir, pools)
    }

    fn open_private(dir: PrivateDir, pools: &Pools) -> Result<Arc<SharedTable>, Error> {
        let name = format!(
            "{FILE_PREFIX}{}{:016x}",
            if pools.is_machine_wide() {
                ""
            } else {
                "model-"
            },
            pools.fingerprint()
        );
        let words = HEADER + SLOTS * (1 + pools.len());
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        let file = dir
            .open_file(&name, (words * 8) as u64)
            .map_err(|e| Error::shared_file(Folder::Other, e))?;
        open.retain(|(_, w)| w.strong_count() > 0);
        // A table inherited through `fork` is the parent's: a child opens its own.
        let pid = std::process::id();
        if let Some(t) = open
            .iter()
            .filter(|(id, _)| *id == file.id())
            .filter_map(|(_, w)| w.upgrade())
            .find(|t| t.creator == pid)
        {
            return Ok(t);
        }
        if file.created() {
            // Tables of other pools that no process uses any more (left by dead processes).
            dir.remove_unused(|n| n.starts_with(FILE_PREFIX) && n != name);
        }
        let id = file.id();
        let t = Arc::new(Self::create(dir, name, file, words, pools.len())?);
        open.push((id, Arc::downgrade(&t)));
        Ok(t)
    }

    fn create(
        dir: PrivateDir,
        name: String,
        file: PrivateFile,
        words: usize,
        pools: usize,
    ) -> Result<Self, Error> {
        let path = file.path().to_owned();
        let id = file.id();
        let map = SharedWords::map(file.into_file(), words)
            .map_err(|e| Error::table(&path, "cannot map the file", Some(e)))?;
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
        // (Wrapping: the counter is only ever read modulo 2^32, and a file may hold anything.)
        let generation = w[W_GENERATION]
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1);
        let tag = ((generation & 0xffff_ffff).max(1) << 32) | std::process::id() as u64;
        let mut table = Self {
            dir,
            name,
            path,
            id,
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
                "all {SLOTS} slots are held by live processes: at most {SLOTS} processes can \
                 share a table; end some, or give these jobs a table of their own \
                 (ASAT_POOLS_SHM_DIR, SharedTable::open_in)"
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
        if self.slot >= SLOTS {
            // Its claim failed (all slots held): it has no slot to free. (This used to zero
            // the loads of slot `usize::MAX`, an arithmetic overflow.)
            return;
        }
        self.zero_loads(self.slot);
        self.map.words()[self.base(self.slot)].store(0, Ordering::Release);
        let _ = self.map.unlock(self.slot);
        // The last user removes the file (an error leaves it for the next creator).
        let _ = self.dir.remove_if_last(&self.name, self.map.file());
    }
}
