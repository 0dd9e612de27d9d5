//! The thread-local pointer to the [`Ctx`] of the thread running tasks of a runtime: a worker
//! for its whole life, a thread that calls into the runtime from outside for the length of its
//! call. Set for the length of a closure, as `sys::scoped` keeps the installed runtime: a guard
//! puts back what was there before when the closure returns or unwinds, so a non-null pointer
//! always points at a `Ctx` borrowed by an [`enter`] still running on this thread, and calls
//! nest (a worker of one runtime calling into another).

use std::cell::Cell;
use std::ptr;

use super::Ctx;

#[cfg(not(loom))]
thread_local! {
    static CTX: Cell<*const ()> = const { Cell::new(ptr::null()) };
}
#[cfg(loom)]
loom::thread_local! {
    static CTX: Cell<*const ()> = Cell::new(ptr::null());
}

/// Puts back the pointer an [`enter`] replaced.
struct Restore(*const ());

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        CTX.with(|c| c.set(self.0));
    }
}

/// Runs `f` with `ctx` as the calling thread's; what was there before is put back when `f`
/// returns or unwinds.
pub(super) fn enter<R>(ctx: &Ctx<'_>, f: impl FnOnce() -> R) -> R {
    let p = ctx as *const Ctx<'_> as *const ();
    let _restore = Restore(CTX.with(|c| c.replace(p)));
    f()
}

/// Runs `f` with no `Ctx` on the calling thread; what was there before is put back when `f`
/// returns or unwinds.
pub(crate) fn hide<R>(f: impl FnOnce() -> R) -> R {
    let _restore = Restore(CTX.with(|c| c.replace(ptr::null())));
    f()
}

/// Calls `f` with the calling thread's `Ctx`, or `None`.
#[inline]
pub(super) fn with<R>(f: impl FnOnce(Option<&Ctx<'_>>) -> R) -> R {
    let p = CTX.with(Cell::get) as *const Ctx<'_>;
    // SAFETY: a non-null pointer was stored by an `enter` still running on this thread (its
    // guard puts the previous pointer back before `enter` returns, unwinding included; the
    // thread-local is this thread's only), from a reference `enter` borrows for that whole
    // time: the `Ctx` is alive, and only shared references to it exist, while `f` runs.
    f(unsafe { p.as_ref() })
}
