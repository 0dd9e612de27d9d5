//! [`Domain`]: the shared domain file, mapped, its header checked, this scheduler's
//! participant slot claimed; placement of cells, reclaiming dead participants, and the
//! scheduler election. The protocol is in the [module docs](super).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use asat_core::private_file::{PrivateDir, PrivateFile};

use super::sys::SharedMap;
use crate::Error;

const MAGIC: u64 = 0x4153_4154_4741_0001; // "ASATGA", layout version 1
/// Rows of the shared matrix (a set of rows is one 64-bit mask).
pub(crate) const SLOTS: usize = 64;
/// The `running` word when no row runs.
pub(crate) const NO_ROW: u32 = u32::MAX;
/// Participant slots: shared-domain schedulers that can use one domain at once.
pub(crate) const PARTICIPANTS: usize = 64;
/// The most columns (CPUs) a domain may have.
pub(crate) const MAX_COLUMNS: usize = 4096;

const W_MAGIC: usize = 0;
const W_COLUMNS: usize = 1;
const W_SLOTS: usize = 2;
const W_PARTICIPANTS: usize = 3;
const W_FINGERPRINT: usize = 4;
const W_GENERATION: usize = 5;
const HEADER_WORDS: usize = 8;

const CONTROL_AT: usize = 64;
/// Control words (32-bit), see the module docs: `epoch` 0, `running` 1, `wake` 2, the
/// scheduler's participant number plus one (0: none) 3, switch requests 4, the end of the
/// running slice 5.
pub(crate) const C_EPOCH: usize = 0;
pub(crate) const C_RUNNING: usize = 1;
pub(crate) const C_WAKE: usize = 2;
const C_SCHEDULER: usize = 3;
pub(crate) const C_REQUESTS: usize = 4;
pub(crate) const C_SLICE_END: usize = 5;
const CONTROL_WORDS: usize = 16;

const RECORDS_AT: usize = 128;
const RECORD_WORDS: usize = 8;
const R_TAG: usize = 0;
pub(crate) const R_ACK: usize = 1;
/// The rows where the participant has a runnable thread (bit `s` for row `s`).
pub(crate) const R_RUNNABLE: usize = 2;
/// The rows where the participant has a cell.
pub(crate) const R_USED: usize = 3;
/// When the participant's last thread parked for the stop it acknowledged (`CLOCK_MONOTONIC`
/// ns; 0 if none had to).
pub(crate) const R_PARKED: usize = 4;

const CELLS_AT: usize = RECORDS_AT + PARTICIPANTS * RECORD_WORDS * 8;

/// The owner word of a participant being reclaimed.
const RECLAIMING: u64 = u64::MAX;
/// Gang numbers are the low 48 bits of a cell.
const GANG_BITS: u32 = 48;
const GANG_MASK: u64 = (1 << GANG_BITS) - 1;

const LOCK_SCHEDULER: usize = 0;
const LOCK_ALLOCATION: usize = 1;
const LOCK_PARTICIPANT: usize = 8;

/// The file's size for a domain of `columns` CPUs.
fn file_size(columns: usize) -> usize {
    CELLS_AT + SLOTS * columns * 8
}

/// FNV-1a over the CPU numbers: the same in every process and Rust version.
pub(crate) fn fingerprint(cpus: &[usize]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in cpus {
        for b in (c as u64).to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The start of every domain's file name.
const FILE_PREFIX: &str = "asat-gang-";

/// The file name of the domain of `cpus`.
pub(crate) fn file_name(cpus: &[usize]) -> String {
    format!("{FILE_PREFIX}{:016x}", fingerprint(cpus))
}

/// A shared gang domain, opened by one scheduler of this process, which owns one participant
/// slot in it until dropped.
#[derive(Debug)]
pub(crate) struct Domain {
    /// The folder and the file's name in it, to remove the file when this process is its last
    /// user (`asat_core::private_file`'s removal).
    dir: PrivateDir,
    name: String,
    path: PathBuf,
    map: SharedMap,
    columns: usize,
    participant: usize,
    tag: u64,
    /// The process that opened the domain: a child forked without `exec` shares its locks and
    /// must not act through this copy.
    creator: u32,
    /// Serialises this process's placements and reclaims (the OFD locks belong to the open
    /// file description, which the process's threads share, so they do not).
    ops: Mutex<()>,
    /// Set once the participant slot is given back ([`leave`](Self::leave)): from then on
    /// this copy places and frees nothing.
    left: AtomicBool,
}

impl Domain {
    /// Opens (creating when missing) the domain of `cpus` in `dir`, or in the user's own
    /// folder when `dir` is `None`, and claims a participant slot.
    pub(crate) fn open(dir: Option<&Path>, cpus: &[usize]) -> Result<Self, Error> {
        Self::open_as(dir, cpus, true)
    }

    /// An observer of the domain in `dir`: maps and checks it, claims no participant slot
    /// (so no stop waits for it), and changes nothing on drop.
    #[cfg(test)]
    pub(crate) fn observe(dir: &Path, cpus: &[usize]) -> Result<Self, Error> {
        Self::open_as(Some(dir), cpus, false)
    }

    fn open_as(dir: Option<&Path>, cpus: &[usize], claim: bool) -> Result<Self, Error> {
        let columns = cpus.len();
        if columns == 0 || columns > MAX_COLUMNS {
            return Err(Error::cpus(format!(
                "{columns} CPUs: a shared domain has 1 to {MAX_COLUMNS}"
            )));
        }
        let dir = match dir {
            Some(d) => PrivateDir::named(d),
            None => PrivateDir::user(),
        }
        .map_err(Error::domain_file)?;
        let name = file_name(cpus);
        let file = dir
            .open_file(&name, file_size(columns) as u64)
            .map_err(Error::domain_file)?;
        if file.created() {
            // Domains of other CPU sets that no process uses any more (left by dead ones).
            dir.remove_unused(|n| n.starts_with(FILE_PREFIX) && n != name);
        }
        Self::create(dir, name, file, columns, fingerprint(cpus), claim)
    }

    fn create(
        dir: PrivateDir,
        name: String,
        file: PrivateFile,
        columns: usize,
        fp: u64,
        claim: bool,
    ) -> Result<Self, Error> {
        let path = file.path().to_owned();
        let map = SharedMap::map(file.into_file(), file_size(columns))
            .map_err(|e| Error::domain(&path, "cannot map the file", Some(e)))?;
        let header = map.u64s(0, HEADER_WORDS);
        for (i, v) in [
            (W_MAGIC, MAGIC),
            (W_COLUMNS, columns as u64),
            (W_SLOTS, SLOTS as u64),
            (W_PARTICIPANTS, PARTICIPANTS as u64),
            (W_FINGERPRINT, fp),
        ] {
            match header[i].compare_exchange(0, v, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {}
                Err(old) if old == v => {}
                Err(_) => {
                    return Err(Error::domain(
                        &path,
                        format!(
                            "the file has another layout or domain (not asat-gang layout 1 \
                             for these {columns} CPUs, {SLOTS} slots, {PARTICIPANTS} \
                             participants): remove it when no process uses it"
                        ),
                        None,
                    ))
                }
            }
        }
        // (Wrapping: only the low 32 bits are used, and the file may hold anything.)
        let generation = header[W_GENERATION]
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1);
        let tag = ((generation & 0xffff_ffff).max(1) << 32) | u64::from(std::process::id());
        let mut d = Self {
            dir,
            name,
            path,
            map,
            columns,
            participant: usize::MAX,
            tag,
            creator: std::process::id(),
            ops: Mutex::new(()),
            left: AtomicBool::new(false),
        };
        if claim {
            d.participant = d.claim()?;
        }
        Ok(d)
    }

    fn ops(&self) -> MutexGuard<'_, ()> {
        self.ops.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn os_error(&self, what: &str, e: std::io::Error) -> Error {
        Error::domain(&self.path, what.to_owned(), Some(e))
    }

    /// The 32-bit control words.
    pub(crate) fn control(&self) -> &[AtomicU32] {
        self.map.u32s(CONTROL_AT, CONTROL_WORDS)
    }

    /// Participant `p`'s record.
    pub(crate) fn record(&self, p: usize) -> &[AtomicU64] {
        self.map
            .u64s(RECORDS_AT + p * RECORD_WORDS * 8, RECORD_WORDS)
    }

    fn cells(&self) -> &[AtomicU64] {
        self.map.u64s(CELLS_AT, SLOTS * self.columns)
    }

    /// The allocation lock, across processes, held while the guard lives.
    fn allocation_lock(&self) -> Result<AllocationLock<'_>, Error> {
        self.map
            .lock(LOCK_ALLOCATION)
            .map_err(|e| self.os_error("cannot lock the matrix", e))?;
        Ok(AllocationLock(&self.map))
    }

    /// The allocation lock if no one holds it now, without waiting.
    fn try_allocation_lock(&self) -> Result<Option<AllocationLock<'_>>, Error> {
        let got = self
            .map
            .try_lock(LOCK_ALLOCATION)
            .map_err(|e| self.os_error("cannot lock the matrix", e))?;
        Ok(got.then_some(AllocationLock(&self.map)))
    }

    /// Frees every cell owned by participant `p` (or by no valid participant). With the
    /// allocation lock held.
    fn free_cells_of(&self, p: usize, _lock: &AllocationLock<'_>) -> usize {
        let mut freed = 0;
        for cell in self.cells() {
            let v = cell.load(Ordering::Acquire);
            if v == 0 {
                continue;
            }
            let owner = (v >> GANG_BITS) as usize;
            let garbage = owner == 0
                || owner > PARTICIPANTS
                || matches!(
                    self.record(owner - 1)[R_TAG].load(Ordering::Acquire),
                    0 | RECLAIMING
                );
            if owner == p + 1 || garbage {
                cell.store(0, Ordering::Release);
                freed += 1;
            }
        }
        freed
    }

    fn clear_record(&self, p: usize) {
        for w in &self.record(p)[1..] {
            w.store(0, Ordering::Release);
        }
    }

    fn claim(&self) -> Result<usize, Error> {
        let _ops = self.ops();
        for p in 0..PARTICIPANTS {
            let locked = self
                .map
                .try_lock(LOCK_PARTICIPANT + p)
                .map_err(|e| self.os_error("cannot lock a participant slot", e))?;
            if !locked {
                continue;
            }
            // We hold the slot's lock and nobody writes its owner word without it: whoever
            // held the slot, or was reclaiming it, is dead. Free what it left.
            let rec = self.record(p);
            rec[R_TAG].store(RECLAIMING, Ordering::SeqCst);
            {
                let lock = self.allocation_lock()?;
                self.free_cells_of(p, &lock);
            }
            self.clear_record(p);
            rec[R_TAG].store(self.tag, Ordering::SeqCst);
            return Ok(p);
        }
        Err(Error::domain(
            &self.path,
            format!(
                "all {PARTICIPANTS} participant slots are held by live processes: at most \
                 {PARTICIPANTS} shared gang schedulers can use one domain at once"
            ),
            None,
        ))
    }

    /// This scheduler's participant slot.
    pub(crate) fn participant(&self) -> usize {
        self.participant
    }

    #[cfg(test)]
    /// The domain's columns (CPUs).
    pub(crate) fn columns(&self) -> usize {
        self.columns
    }

    #[cfg(test)]
    /// The file of the domain.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether participant `p`'s record holds a live tag (not free, not being reclaimed).
    pub(crate) fn is_listed(&self, p: usize) -> bool {
        !matches!(
            self.record(p)[R_TAG].load(Ordering::Acquire),
            0 | RECLAIMING
        )
    }

    #[cfg(test)]
    /// The process ids of the listed participants, by participant slot.
    pub(crate) fn owners(&self) -> Vec<u32> {
        (0..PARTICIPANTS)
            .filter(|&p| self.is_listed(p))
            .map(|p| self.record(p)[R_TAG].load(Ordering::Acquire) as u32)
            .collect()
    }

    #[cfg(test)]
    /// The owner of cell (`slot`, `column`): participant and gang number, or `None` if free.
    pub(crate) fn cell(&self, slot: usize, column: usize) -> Option<(usize, u64)> {
        let v = self.cells()[slot * self.columns + column].load(Ordering::Acquire);
        let owner = (v >> GANG_BITS) as usize;
        (v != 0 && owner >= 1).then(|| (owner - 1, v & GANG_MASK))
    }

    /// Places a gang of `n` threads numbered `gang` (this process's number for it): first fit,
    /// `n` free cells of one row. Returns the row and the columns.
    pub(crate) fn allocate(&self, n: usize, gang: u64) -> Result<(usize, Vec<usize>), Error> {
        if n == 0 || n > self.columns {
            return Err(Error::gang_too_wide(n, self.columns));
        }
        let value = self.value(gang);
        let _ops = self.ops();
        if self.has_left() {
            return Err(Error::domain(
                &self.path,
                "this scheduler has left the domain (it was dropped)",
                None,
            ));
        }
        let lock = self.allocation_lock()?;
        let cells = self.cells();
        for s in 0..SLOTS {
            let row = &cells[s * self.columns..(s + 1) * self.columns];
            let free: Vec<usize> = (0..self.columns)
                .filter(|&c| row[c].load(Ordering::Acquire) == 0)
                .take(n)
                .collect();
            if free.len() == n {
                for &c in &free {
                    row[c].store(value, Ordering::SeqCst);
                }
                self.publish_used(&lock);
                return Ok((s, free));
            }
        }
        Err(Error::slots_full(SLOTS))
    }

    /// The cell value of this participant's gang `gang`.
    fn value(&self, gang: u64) -> u64 {
        ((self.participant as u64 + 1) << GANG_BITS) | (gang & GANG_MASK)
    }

    /// Frees the cells of this process's gang `gang`, except those listed in `keep` (row,
    /// column): cells whose thread is still bound, which it frees itself with
    /// [`free_own_cell`](Self::free_own_cell) when it leaves. Returns how many it freed;
    /// nothing once the participant has left the domain (its cells were freed then, and its
    /// slot may be another's now).
    pub(crate) fn free(&self, gang: u64, keep: &[(usize, usize)]) -> Result<usize, Error> {
        let value = self.value(gang);
        let _ops = self.ops();
        if self.has_left() {
            return Ok(0);
        }
        let lock = self.allocation_lock()?;
        let mut freed = 0;
        for (i, cell) in self.cells().iter().enumerate() {
            if keep.contains(&(i / self.columns, i % self.columns)) {
                continue;
            }
            if cell
                .compare_exchange(value, 0, Ordering::SeqCst, Ordering::Acquire)
                .is_ok()
            {
                freed += 1;
            }
        }
        self.publish_used(&lock);
        Ok(freed)
    }

    /// Frees one cell of this participant's (a kept cell whose thread leaves); nothing if the
    /// cell is another's or the participant has left.
    pub(crate) fn free_own_cell(&self, row: usize, column: usize) -> Result<(), Error> {
        let _ops = self.ops();
        if self.has_left() || row >= SLOTS || column >= self.columns {
            return Ok(());
        }
        let lock = self.allocation_lock()?;
        let cell = &self.cells()[row * self.columns + column];
        let v = cell.load(Ordering::Acquire);
        if v >> GANG_BITS == self.participant as u64 + 1 {
            let _ = cell.compare_exchange(v, 0, Ordering::SeqCst, Ordering::Acquire);
        }
        self.publish_used(&lock);
        Ok(())
    }

    /// Writes this participant's used-rows mask from its cells. With the allocation lock
    /// (and the process's `ops`) held.
    fn publish_used(&self, _lock: &AllocationLock<'_>) {
        let me = self.participant as u64 + 1;
        let mut mask = 0u64;
        for (i, cell) in self.cells().iter().enumerate() {
            if cell.load(Ordering::Acquire) >> GANG_BITS == me {
                mask |= 1 << (i / self.columns);
            }
        }
        self.record(self.participant)[R_USED].store(mask, Ordering::SeqCst);
    }

    /// Whether this copy has given its participant slot back.
    pub(crate) fn has_left(&self) -> bool {
        self.left.load(Ordering::SeqCst)
    }

    /// Gives the participant slot back: stops being the scheduler, frees this participant's
    /// cells, clears its record and releases its lock. Idempotent; also done on drop. In a
    /// child forked without `exec` it does nothing (the slot is the parent's).
    pub(crate) fn leave(&self) {
        if std::process::id() != self.creator || self.participant >= PARTICIPANTS {
            return;
        }
        let _ops = self.ops();
        if self.left.swap(true, Ordering::SeqCst) {
            return;
        }
        self.resign();
        let p = self.participant;
        let rec = self.record(p);
        rec[R_TAG].store(RECLAIMING, Ordering::SeqCst);
        if let Ok(lock) = self.allocation_lock() {
            self.free_cells_of(p, &lock);
        }
        self.clear_record(p);
        rec[R_TAG].store(0, Ordering::SeqCst);
        let _ = self.map.unlock(LOCK_PARTICIPANT + p);
    }

    /// Frees the participant slots, and cells, of dead processes (see the module docs).
    /// Returns how many participants it reclaimed. In a child forked without `exec` it does
    /// nothing.
    ///
    /// It never waits for a lock: the scheduler thread calls it, and a gang thread stopped
    /// while placing a gang holds this process's `ops` and the domain's allocation lock until
    /// its row runs again, which only the scheduler thread can bring about. When either is
    /// held it does nothing this time (it is called again at the next quantum).
    pub(crate) fn reclaim_dead(&self) -> Result<usize, Error> {
        if std::process::id() != self.creator {
            return Ok(0);
        }
        let _ops = match self.ops.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Ok(0),
        };
        let mut reclaimed = 0;
        for p in 0..PARTICIPANTS {
            if p == self.participant || self.record(p)[R_TAG].load(Ordering::Acquire) == 0 {
                continue;
            }
            // Holding the lock we own the owner word; a live owner holds it.
            if !matches!(self.map.try_lock(LOCK_PARTICIPANT + p), Ok(true)) {
                continue;
            }
            let rec = self.record(p);
            let lock = match self.try_allocation_lock() {
                Ok(Some(lock)) => lock,
                other => {
                    // Held by a placement (perhaps stopped): next time.
                    let _ = self.map.unlock(LOCK_PARTICIPANT + p);
                    return other.map(|_| reclaimed);
                }
            };
            if rec[R_TAG].load(Ordering::Acquire) != 0 {
                rec[R_TAG].store(RECLAIMING, Ordering::SeqCst);
                self.free_cells_of(p, &lock);
                self.clear_record(p);
                rec[R_TAG].store(0, Ordering::SeqCst);
                reclaimed += 1;
            }
            drop(lock);
            let _ = self.map.unlock(LOCK_PARTICIPANT + p);
        }
        Ok(reclaimed)
    }

    /// Tries to become the domain's scheduler (the holder of lock byte 0). True if this
    /// participant is the scheduler now, having just become it or being it already; then the
    /// control word names it. Never in a child forked without `exec`.
    pub(crate) fn try_elect(&self) -> Result<bool, Error> {
        if std::process::id() != self.creator {
            return Ok(false);
        }
        let me = self.participant as u32 + 1;
        let sched = &self.control()[C_SCHEDULER];
        // (OFD locks are not re-entrant per holder: taking one held through this same open
        // file description succeeds again, so this is also the "still mine" check.)
        let won = self
            .map
            .try_lock(LOCK_SCHEDULER)
            .map_err(|e| self.os_error("cannot lock the scheduler byte", e))?;
        if won && sched.load(Ordering::Acquire) != me {
            sched.store(me, Ordering::SeqCst);
        }
        Ok(won)
    }

    /// One round of the election, as every participant's watcher runs it each quantum: try
    /// to be (or stay) the scheduler, and if it is, reclaim dead participants (a new
    /// scheduler thus frees a killed one's cells at once). True if it is the scheduler.
    pub(crate) fn campaign(&self) -> Result<bool, Error> {
        let elected = self.try_elect()?;
        if elected {
            self.reclaim_dead()?;
        }
        Ok(elected)
    }

    #[cfg(test)]
    /// The participant slot whose record names process `pid`, if any.
    pub(crate) fn participant_of(&self, pid: u32) -> Option<usize> {
        (0..PARTICIPANTS).find(|&p| {
            self.is_listed(p) && self.record(p)[R_TAG].load(Ordering::Acquire) as u32 == pid
        })
    }

    #[cfg(test)]
    /// The participant that last became the scheduler, as the control word says (advisory:
    /// the lock decides; a dead scheduler's number stays until another takes over).
    pub(crate) fn scheduler(&self) -> Option<usize> {
        let v = self.control()[C_SCHEDULER].load(Ordering::Acquire) as usize;
        (1..=PARTICIPANTS).contains(&v).then(|| v - 1)
    }

    /// Stops being the scheduler, if it is.
    fn resign(&self) {
        let me = self.participant as u32 + 1;
        let sched = &self.control()[C_SCHEDULER];
        let _ = sched.compare_exchange(me, 0, Ordering::SeqCst, Ordering::Relaxed);
        // (Releasing a lock this description does not hold is a no-op.)
        let _ = self.map.unlock(LOCK_SCHEDULER);
    }
}

#[cfg(test)]
impl Domain {
    /// Writes a cell directly, as a process (live, dead or faulty) may have.
    pub(crate) fn test_store_cell(&self, slot: usize, column: usize, value: u64) {
        self.cells()[slot * self.columns + column].store(value, Ordering::SeqCst);
    }
}

/// The cross-process allocation lock, released on drop.
struct AllocationLock<'a>(&'a SharedMap);

impl Drop for AllocationLock<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock(LOCK_ALLOCATION);
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        // (Nothing in a forked child's copy, whose slot and locks are the parent's, or after a
        // failed claim.)
        self.leave();
        if std::process::id() == self.creator {
            // The last user removes the file (an error leaves it for the next creator).
            let _ = self.dir.remove_if_last(&self.name, self.map.file());
        }
    }
}
