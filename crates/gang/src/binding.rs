//! The thread-local words of a gang thread that the stop signal's handler reads: its binding
//! to its cell (scheduler, slot, column) and its [`preempt_off`](crate::preempt_off) state.
//! Each is a const-initialized thread-local without destructor, so that reading it is a plain
//! thread-local load, async-signal-safe.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::shared::Shared;

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

thread_local! {
    // Const-initialized atomics without destructors: plain thread-local words the signal
    // handler may touch.
    static PREEMPT: AtomicU32 = const { AtomicU32::new(0) };
    static PENDING: AtomicBool = const { AtomicBool::new(false) };
}

/// Whether the calling thread is inside a `preempt_off` section. Async-signal-safe.
pub(crate) fn preempted() -> bool {
    PREEMPT.with(|p| p.load(Ordering::Relaxed)) > 0
}

/// Enters a `preempt_off` section (sections nest).
pub(crate) fn preempt_enter() {
    PREEMPT.with(|p| p.fetch_add(1, Ordering::Relaxed));
}

/// Leaves a `preempt_off` section; true when it was the outermost one and a stop was recorded
/// meanwhile (the record is dropped: the caller takes the stop).
pub(crate) fn preempt_leave() -> bool {
    PREEMPT.with(|p| p.fetch_sub(1, Ordering::Relaxed)) == 1
        && PENDING.with(|p| p.swap(false, Ordering::Relaxed))
}

/// Records a stop for the end of the calling thread's `preempt_off` section.
/// Async-signal-safe.
pub(crate) fn defer_stop() {
    PENDING.with(|p| p.store(true, Ordering::Relaxed));
}

/// Drops a recorded stop (a forked child's thread: its stop was the parent's).
pub(crate) fn forget_pending_stop() {
    PENDING.with(|p| p.store(false, Ordering::Relaxed));
}
