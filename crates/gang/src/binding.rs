//! The thread-local binding of a gang thread to its cell (scheduler, slot, column), which the
//! stop signal's handler reads: a const-initialized thread-local without destructor, so that
//! reading it is a plain thread-local load, async-signal-safe.

use std::cell::Cell;

use crate::switch::Shared;

/// Which cell of which scheduler the calling thread is bound to.
#[derive(Clone, Copy)]
struct Binding {
    shared: *const Shared,
    slot: u32,
    col: u32,
}

impl Binding {
    const NONE: Binding = Binding {
        shared: std::ptr::null(),
        slot: 0,
        col: 0,
    };
}

thread_local! {
    // Const-initialized and without destructor: reading it is a plain thread-local load, with
    // no lazy initialization, so the signal handler may read it.
    static BINDING: Cell<Binding> = const { Cell::new(Binding::NONE) };
}

/// The calling thread's binding: its scheduler, slot and column.
///
/// The returned reference is valid while the thread stays bound: [`bind`] requires the
/// caller to keep the `Shared` alive (an `Arc`) until [`unbind`], and a thread only reads its
/// own binding. Callers use it within one call and never keep it.
#[inline]
pub(crate) fn binding<'a>() -> Option<(&'a Shared, usize, usize)> {
    let b = BINDING.with(Cell::get);
    if b.shared.is_null() {
        return None;
    }
    // SAFETY: a non-null pointer was stored by `bind`, whose caller keeps the `Shared` alive
    // until it calls `unbind` on this same thread (see `bind`'s contract); the pointer is only
    // written with the stop signal blocked, so the handler never sees a torn value.
    Some((unsafe { &*b.shared }, b.slot as usize, b.col as usize))
}

/// Records the calling thread's binding.
///
/// # Safety
/// `shared` must stay alive until [`unbind`] is called on this thread, and the stop signal
/// must be blocked during the call.
pub(crate) unsafe fn bind(shared: &Shared, slot: usize, col: usize) {
    BINDING.with(|b| {
        b.set(Binding {
            shared,
            slot: slot as u32,
            col: col as u32,
        })
    });
}

/// Clears the calling thread's binding (the stop signal must be blocked).
pub(crate) fn unbind() {
    BINDING.with(|b| b.set(Binding::NONE));
}
