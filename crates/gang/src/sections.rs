//! What a gang thread calls around its own code: [`safe_point`], [`preempt_off`],
//! [`blocking`] and [`in_gang`], and the idle state that `blocking` and the policy's waits
//! put a thread in. How each interacts with a switch is in the [`crate::switch`] module docs.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{compiler_fence, Ordering};

use crate::shared::{IDLE, ORPHAN};
use crate::switch::{self, Cause};
use crate::{binding, sys};

thread_local! {
    // Whether the thread is inside `blocking` (the stop signal's handler does not read it).
    static BLOCKING: Cell<bool> = const { Cell::new(false) };
}

/// A cooperative stop point: if the calling thread is a gang member whose slot is stopped, it
/// waits here until the slot runs again. Costs a thread-local read and one load otherwise.
///
/// The asat-core runtime calls it (through [`GangPolicy`](crate::GangPolicy)) at chunk
/// boundaries and before barriers; code using [`Gang`](crate::Gang) directly may call it in
/// its loops so that switches find it at a clean point instead of signalling it. Inside a
/// [`preempt_off`] section it does nothing.
#[inline]
pub fn safe_point() {
    if let Some((shared, slot, col)) = binding::binding() {
        if shared.slots[slot].run.load(Ordering::Relaxed) == 0 && !binding::preempted() {
            switch::park_if_stopped(shared, slot, col, Cause::SafePoint);
        }
    }
}

/// Whether the calling thread is bound to a gang.
pub fn in_gang() -> bool {
    binding::binding().is_some()
}

/// Defers stops of the calling thread until the guard (the outermost one, when nested) is
/// dropped: a stop signal that arrives meanwhile is recorded, counted in
/// [`GangStats::deferred_stops`](crate::GangStats::deferred_stops), and taken at the drop.
///
/// The scheduler waits for the section to end before it resumes the next slot, so a section
/// must be short and must not wait for other threads: no blocking calls, no locks another
/// gang thread may hold, no allocation (the allocator's lock may be held by a stopped thread,
/// whose resumption would then wait for this section). Outside a gang it only counts nesting.
///
/// ```
/// let _g = asat_gang::preempt_off();
/// // short, non-blocking work that must not be interrupted by a gang switch
/// ```
pub fn preempt_off() -> PreemptGuard {
    binding::preempt_enter();
    compiler_fence(Ordering::SeqCst);
    PreemptGuard {
        _not_send: PhantomData,
    }
}

/// The guard of [`preempt_off`]; not `Send` (the section belongs to one thread).
#[derive(Debug)]
#[must_use = "the section ends when the guard is dropped"]
pub struct PreemptGuard {
    _not_send: PhantomData<*const ()>,
}

impl Drop for PreemptGuard {
    fn drop(&mut self) {
        compiler_fence(Ordering::SeqCst);
        if binding::preempt_leave() {
            if let Some((shared, slot, col)) = binding::binding() {
                switch::park_if_stopped(shared, slot, col, Cause::Deferred);
            }
        }
    }
}

/// Runs `f` with the calling thread marked as blocked, so that a gang switch neither waits for
/// it nor interrupts it: while `f` runs, the thread does not count as runnable (a slot whose
/// threads are all blocked is switched away from early, as the paper's bit mask does), it is
/// not signalled at switches, and the stop signal is blocked in it, so no system call inside
/// `f` returns `EINTR` because of asat-gang (nor because of anyone else's signal of that
/// number, which waits until `f` returns). If its slot was stopped meanwhile, the thread waits
/// for it after `f` returns.
///
/// Wrap calls that may block for long (`read` on a pipe, `accept`, a condition variable), and
/// every call that a signal handler interrupts with `EINTR` whatever `SA_RESTART` says, unless
/// the code retries on `EINTR` (the list is in the [crate docs](crate#blocking-calls)). Nested
/// calls act as the outermost one. Outside a gang it just runs `f`.
///
/// The price: `f` runs outside the gang's discipline. If it computes instead of blocking, it
/// runs beside other slots' threads on its CPU; and a thread that returns from `f` while its
/// slot is stopped waits for the slot. It costs two `sigprocmask` calls and a few atomic
/// operations.
///
/// ```
/// // A 10 ms wait that no gang switch cuts short (outside a gang, a plain call).
/// // SAFETY: poll with no descriptors only sleeps.
/// let n = asat_gang::blocking(|| unsafe { libc::poll(std::ptr::null_mut(), 0, 10) });
/// assert_eq!(n, 0);
/// ```
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    struct Unblock(Option<sys::SignalBlock>);
    impl Drop for Unblock {
        fn drop(&mut self) {
            BLOCKING.with(|b| b.set(false));
            // The signal first: one held back is handled now, while the thread is still
            // idle (the handler then does nothing); then the thread becomes runnable, and
            // parks if its slot is stopped.
            drop(self.0.take());
            set_idle(false);
        }
    }
    let Some((shared, ..)) = binding::binding() else {
        return f();
    };
    if BLOCKING.with(Cell::get) {
        return f();
    }
    BLOCKING.with(|b| b.set(true));
    set_idle(true);
    let _unblock = Unblock(Some(sys::SignalBlock::new(shared.signal)));
    f()
}

/// Marks the calling thread idle (not runnable, not signalled) or runnable again. Leaving the
/// idle state while the slot is stopped parks the thread. An orphaned thread stays idle: the
/// check of `ORPHAN` is part of each read-modify-write, so a gang dropped at the same moment
/// cannot have its mark undone.
pub(crate) fn set_idle(idle: bool) {
    let Some((shared, slot, col)) = binding::binding() else {
        return;
    };
    let cell = &shared.slots[slot].cells[col];
    if idle {
        let _p = preempt_off();
        #[cfg(asat_inject)]
        crate::inject::pause(crate::inject::Point::IdleEnter);
        if cell
            .state
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |st| {
                (st & (IDLE | ORPHAN) == 0).then_some(st | IDLE)
            })
            .is_ok()
        {
            shared.runnable_dec(slot);
        }
    } else {
        {
            let _p = preempt_off();
            #[cfg(asat_inject)]
            crate::inject::pause(crate::inject::Point::IdleLeave);
            if cell
                .state
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |st| {
                    (st & IDLE != 0 && st & ORPHAN == 0).then_some(st & !IDLE)
                })
                .is_ok()
            {
                shared.runnable_inc(slot);
            }
        }
        switch::park_if_stopped(shared, slot, col, Cause::Join);
    }
}
