//! [`Gang`] and [`Member`]: a gang placed in the matrix, and a thread's membership in it.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use asat_core::CpuSet;

use crate::switch::{self, Shared};
use crate::thread;
use crate::{Error, GangId};

/// A gang of threads placed in one slot of a [`GangScheduler`](crate::GangScheduler)'s matrix,
/// one member per column. Its members run together, and only while their slot runs.
///
/// A thread becomes member `i` with [`join`](Gang::join) (pinned to member `i`'s CPU); it
/// stops being one when the returned [`Member`] is dropped. Dropping the gang frees its cells.
///
/// ```no_run
/// use asat_gang::GangScheduler;
///
/// let sched = GangScheduler::builder().build()?;
/// let gang = sched.gang(2)?;
/// std::thread::scope(|s| {
///     for i in 0..2 {
///         let gang = &gang;
///         s.spawn(move || {
///             let _me = gang.join(i).unwrap();
///             for _ in 0..1000 {
///                 asat_gang::safe_point(); // a clean place to be stopped
///                 // ... fine-grain work with busy-waiting on the other member ...
///             }
///         });
///     }
/// });
/// # Ok::<(), asat_gang::Error>(())
/// ```
pub struct Gang {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: GangId,
    pub(crate) slot: usize,
    pub(crate) columns: Box<[usize]>,
}

impl fmt::Debug for Gang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gang")
            .field("id", &self.id)
            .field("slot", &self.slot)
            .field("columns", &self.columns)
            .finish()
    }
}

impl Gang {
    pub(crate) fn create(shared: &Arc<Shared>, n: usize) -> Result<Gang, Error> {
        shared.usable(true)?;
        if let Some(d) = &shared.domain {
            let number = shared.next_gang.fetch_add(1, Ordering::Relaxed);
            let (slot, columns) = d.allocate(n, number)?;
            return Ok(Self::placed(shared, GangId::new(number), slot, columns));
        }
        let alloc = {
            let mut m = shared
                .matrix
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            m.allocate(n)?
        };
        Ok(Self::placed(shared, alloc.gang, alloc.slot, alloc.columns))
    }

    /// The gang placed in `slot`, `columns`: counted in the slot's mirror for the scheduler,
    /// which is told.
    fn placed(shared: &Arc<Shared>, id: GangId, slot: usize, columns: Vec<usize>) -> Gang {
        shared.slots[slot].gangs.fetch_add(1, Ordering::SeqCst);
        shared.high.fetch_max(slot + 1, Ordering::SeqCst);
        shared.notify();
        Gang {
            shared: Arc::clone(shared),
            id,
            slot,
            columns: columns.into_boxed_slice(),
        }
    }

    /// The gang's id in the matrix.
    pub fn id(&self) -> GangId {
        self.id
    }

    /// The number of members.
    pub fn size(&self) -> usize {
        self.columns.len()
    }

    /// The slot (row of the matrix) the gang runs in.
    pub fn slot(&self) -> usize {
        self.slot
    }

    /// The column of each member.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// The CPU member `member` runs on.
    pub fn cpu(&self, member: usize) -> Option<usize> {
        self.columns.get(member).map(|&c| self.shared.cpus[c])
    }

    /// Makes the calling thread member `member` of the gang: pins it to the member's CPU,
    /// unblocks the stop signal for it (a thread created with it blocked could not be stopped)
    /// and, if the gang's slot is not running now, waits until it does.
    ///
    /// Errors: `member >= size()`; the member is already joined by a thread; the calling
    /// thread already belongs to a gang; the CPU cannot be set; another handler was installed
    /// for the stop signal; the scheduler is a forked child's copy of its parent's (see the
    /// [`crate::switch`] module docs).
    pub fn join(&self, member: usize) -> Result<Member<'_>, Error> {
        let col = *self
            .columns
            .get(member)
            .ok_or_else(|| Error::member(member, self.size()))?;
        self.shared.usable(true)?;
        let old = CpuSet::of_current_thread().ok();
        let cpu: CpuSet = std::iter::once(self.shared.cpus[col]).collect();
        cpu.bind_current_thread()
            .map_err(|e| Error::os("pinning a gang thread", e))?;
        if let Err(e) = thread::join(&self.shared, self.slot, col, member) {
            if let Some(old) = old {
                let _ = old.bind_current_thread();
            }
            return Err(e);
        }
        Ok(Member {
            gang: self,
            member,
            old_mask: old,
            _not_send: PhantomData,
        })
    }

    /// The binding for a runtime's thread (used by the policy): no pinning here, the runtime
    /// applies the placement. It queries the stop signal's action only once a check found it
    /// replaced (member 0 joins at every region).
    pub(crate) fn join_unpinned(&self, member: usize) -> Result<(), Error> {
        let col = *self
            .columns
            .get(member)
            .ok_or_else(|| Error::member(member, self.size()))?;
        self.shared.usable(false)?;
        thread::join(&self.shared, self.slot, col, member)
    }
}

impl Drop for Gang {
    fn drop(&mut self) {
        if self.shared.forked() {
            // A forked child's copy: nothing runs in it, and its lock may be held by a thread
            // the child does not have.
            return;
        }
        if let Some(d) = &self.shared.domain {
            // As below; a kept cell is freed in the domain by its thread when it leaves (a
            // compare-and-swap of its own cell, so the order of the two does not matter).
            let kept = switch::orphan(&self.shared, self.slot, &self.columns);
            let keep: Vec<_> = kept.iter().map(|&c| (self.slot, c)).collect();
            // An error (the cross-process lock failed) leaves the cells to the reclaim when
            // this process leaves the domain or dies.
            let _ = d.free(self.id.get(), &keep);
        } else {
            let mut m = self
                .shared
                .matrix
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // Threads still bound (a Member was forgotten) must not stay parked on a slot that
            // will never run for them again, and their cells stay reserved until they leave:
            // a new gang's member placed there would run outside any gang. Marked under the
            // lock, so that such a thread frees its cell after the reservation is made.
            let kept = switch::orphan(&self.shared, self.slot, &self.columns);
            m.release_keeping(self.id, &kept);
        }
        self.shared.slots[self.slot]
            .gangs
            .fetch_sub(1, Ordering::SeqCst);
        self.shared.notify();
    }
}

/// A thread's membership in a [`Gang`]: while it lives, the thread runs only when the gang's
/// slot runs, pinned to its column's CPU. Dropping it leaves the gang and restores the thread's
/// previous CPU mask. Not `Send`: it belongs to the thread that joined.
pub struct Member<'g> {
    gang: &'g Gang,
    member: usize,
    old_mask: Option<CpuSet>,
    _not_send: PhantomData<*const ()>,
}

impl fmt::Debug for Member<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Member")
            .field("gang", &self.gang.id)
            .field("member", &self.member)
            .finish()
    }
}

impl Member<'_> {
    /// This thread's member index.
    pub fn index(&self) -> usize {
        self.member
    }

    /// The CPU this thread is pinned to.
    pub fn cpu(&self) -> usize {
        self.gang.shared.cpus[self.gang.columns[self.member]]
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        thread::leave();
        if let Some(old) = &self.old_mask {
            // Best effort: the old mask was valid when read.
            let _ = old.bind_current_thread();
        }
    }
}
