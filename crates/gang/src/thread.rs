//! A thread's side of gang membership: binding itself to a cell, leaving it, and what a forked
//! child forgets (going idle is in [`sections`](crate::sections)). The protocol is in the
//! [`crate::switch`] module docs.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use crate::shared::{Shared, BOUND, CLAIMING, GENERATION, IDLE, KILLING, ORPHAN};
use crate::switch::{self, Cause};
use crate::{binding, sys, Error};

/// The `pthread_atfork` child handler: the forking thread, the child's only thread, is no
/// longer bound to the parent's schedulers, and those schedulers see they are copies.
extern "C" fn after_fork_in_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
    binding::unbind();
    binding::forget_pending_stop();
}

/// Makes forked children forget their gangs (registered once per process). Called before a
/// scheduler is built, so that it records the generation it belongs to.
pub(crate) fn watch_forks() {
    sys::on_fork_in_child(after_fork_in_child);
}

/// Keeps the scheduler's shared state alive while the thread is bound (the binding holds a raw
/// pointer to it), and unbinds a thread that exits while still bound (a `Member` that was
/// forgotten), before it is gone: the scheduler never signals a thread that has exited.
struct Owner(Option<Arc<Shared>>);

impl Drop for Owner {
    fn drop(&mut self) {
        if self.0.is_some() {
            leave();
        }
    }
}

thread_local! {
    static OWNER: std::cell::RefCell<Owner> = const { std::cell::RefCell::new(Owner(None)) };
}

/// Binds the calling thread to a cell, then parks it if its slot is stopped. The thread holds
/// a reference to `shared` until it leaves (or exits). The caller has checked that the
/// scheduler is usable.
pub(crate) fn join(
    shared: &Arc<Shared>,
    slot: usize,
    col: usize,
    member: usize,
) -> Result<(), Error> {
    if binding::binding().is_some() {
        return Err(Error::already_bound());
    }
    let cell = &shared.slots[slot].cells[col];
    OWNER.with(|o| o.borrow_mut().0 = Some(Arc::clone(shared)));
    {
        let _blocked = sys::SignalBlock::new(shared.signal);
        if cell
            .state
            .compare_exchange(0, CLAIMING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // Orphaned cells are reserved in the matrix, so no other gang's member gets here:
            // the cell is this member's, joined by another thread.
            OWNER.with(|o| o.borrow_mut().0 = None);
            return Err(Error::member_taken(member));
        }
        cell.tid.store(sys::gettid(), Ordering::Relaxed);
        // SAFETY: the stop signal is blocked (above), and OWNER keeps `shared` alive until
        // `leave` runs on this thread (explicitly or when the thread exits).
        unsafe { binding::bind(shared, slot, col) };
        cell.state.store(BOUND, Ordering::SeqCst);
        shared.runnable_inc(slot);
    }
    // A thread that inherited a mask with the stop signal blocked (a mask is inherited from
    // the creating thread) could never be stopped: every switch would wait `stop_timeout` for
    // it. A member takes the signal.
    sys::unblock_signal(shared.signal);
    switch::park_if_stopped(shared, slot, col, Cause::Join);
    Ok(())
}

/// Unbinds the calling thread from its cell (no-op if it is not bound). An orphaned cell (its
/// gang was dropped meanwhile) is freed in the matrix here.
pub(crate) fn leave() {
    let Some((shared, slot, col)) = binding::binding() else {
        return;
    };
    let cell = &shared.slots[slot].cells[col];
    let blocked = sys::SignalBlock::new(shared.signal);
    binding::unbind();
    let st = loop {
        let st = cell.state.load(Ordering::SeqCst);
        if st & KILLING != 0 {
            std::hint::spin_loop();
            continue;
        }
        if cell
            .state
            .compare_exchange(st, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            break st;
        }
    };
    if st & IDLE == 0 {
        shared.runnable_dec(slot);
    }
    shared.ack.fetch_add(1, Ordering::SeqCst);
    sys::futex_wake(&shared.ack, 1);
    drop(blocked);
    // A stop signal still pending was delivered when `blocked` dropped; the handler found no
    // binding and returned.
    if st & ORPHAN != 0 {
        // The gang was dropped while this thread was bound, and kept the cell reserved for it
        // (`Gang::drop` marks ORPHAN and reserves the cell under the matrix lock, so the
        // reservation is there by the time this lock is taken). The state is 0 already: the
        // next gang placed here finds the cell free. With a shared domain the cell is freed in
        // the domain (an error leaves it to the reclaim when the process leaves or dies).
        match &shared.domain {
            Some(d) => {
                let _ = d.free_own_cell(slot, col);
            }
            None => {
                shared
                    .matrix
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .unreserve(slot, col);
            }
        }
    }
    // Only now may `shared` go (this may be the last reference). During thread exit OWNER is
    // being destroyed and drops its Arc itself.
    let owner = OWNER.try_with(|o| o.try_borrow_mut().ok().and_then(|mut o| o.0.take()));
    drop(owner);
}
