//! The thread-local pointer to the [`Ctx`] of the thread running tasks of a runtime: a worker
//! for its whole life, a thread that calls into the runtime from outside for the length of its
//! call. Set for the length of a closure, as `sys::scoped` keeps the installed runtime: a guard
//! puts back what was there before when the closure returns or unwinds, so a non-null pointer
//! always points at a `Ctx` borrowed by an [`enter`] still running on this thread, and calls
//! nest (a worker of one runtime calling into another).
//!
//! Beside it, a pointer to that `Ctx`'s countdown word (see [`Ctx::offer`]), so that the
//! quickest join ([`quick`]) reads one thread-local and one word, where going through the
//! `Ctx` would read three. A thread that runs no tasks points at `NONE`, a countdown
//! flagged [`HELD`] that no join ever changes, so that the quickest join need not test for
//! null.

use std::cell::Cell;
use std::ptr;

use super::{Ctx, HELD};
use crate::sync::{AtomicU32, Ordering};

/// The countdown of a thread that runs no tasks: flagged [`HELD`], so every join there goes
/// the long way (to `with`, which finds no `Ctx`), and no join ever writes it.
#[cfg(not(loom))]
static NONE: AtomicU32 = AtomicU32::new(HELD);

#[cfg(not(loom))]
thread_local! {
    static CTX: Cell<*const ()> = const { Cell::new(ptr::null()) };
    static COUNTDOWN: Cell<*const AtomicU32> = const { Cell::new(&NONE) };
}

// loom's atomics are not `const`: each thread, and each `hide`, leaks one of its own.
#[cfg(loom)]
loom::thread_local! {
    static CTX: Cell<*const ()> = Cell::new(ptr::null());
    static COUNTDOWN: Cell<*const AtomicU32> = Cell::new(none());
}

/// The countdown pointer of a thread that runs no tasks.
#[cfg(not(loom))]
fn none() -> *const AtomicU32 {
    &NONE
}

#[cfg(loom)]
fn none() -> *const AtomicU32 {
    Box::leak(Box::new(AtomicU32::new(HELD)))
}

/// Puts back the pointers an [`enter`] replaced.
struct Restore(*const (), *const AtomicU32);

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        CTX.with(|c| c.set(self.0));
        COUNTDOWN.with(|c| c.set(self.1));
    }
}

/// Sets the calling thread's pointers, returning the guard that puts the old ones back.
fn set(ctx: *const (), countdown: *const AtomicU32) -> Restore {
    Restore(
        CTX.with(|c| c.replace(ctx)),
        COUNTDOWN.with(|c| c.replace(countdown)),
    )
}

/// Runs `f` with `ctx` as the calling thread's; what was there before is put back when `f`
/// returns or unwinds.
pub(super) fn enter<R>(ctx: &Ctx<'_>, f: impl FnOnce() -> R) -> R {
    let _restore = set(ctx as *const Ctx<'_> as *const (), ctx.countdown);
    f()
}

/// Runs `f` with no `Ctx` on the calling thread; what was there before is put back when `f`
/// returns or unwinds.
pub(crate) fn hide<R>(f: impl FnOnce() -> R) -> R {
    let _restore = set(ptr::null(), none());
    f()
}

/// Whether the calling thread's join may run its closures at once, with no frame, and counts
/// it: the thread runs tasks, keeps enough frames already, and its countdown is not due (see
/// [`Ctx::offer`], which this is when it returns true: a countdown of more than one, the
/// [`HELD`] flag clear). False changes nothing.
#[inline]
pub(super) fn quick() -> bool {
    let p = COUNTDOWN.with(Cell::get);
    // SAFETY: the pointer is `NONE`'s (a static, or under loom a leaked box), or was stored
    // by an `enter` still running on this thread (as for `CTX`, see `with`), from the `Ctx`
    // it borrows, whose countdown lives in the runtime's state, which that `Ctx` borrows too.
    let countdown = unsafe { &*p };
    let c = countdown.load(Ordering::Relaxed);
    if c & HELD != 0 || c <= 1 {
        return false;
    }
    countdown.store(c - 1, Ordering::Relaxed);
    true
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::frame::KEPT;
    use super::super::job::StackJob;
    use super::super::latch::Latch;
    use super::*;
    use crate::Runtime;

    /// Runs `inner` inside `n` more frames of `c`'s, linked as joins link them; checks that
    /// no join is quick until the thread keeps all its frames, and none again once it
    /// unlinked one.
    fn in_frames(c: &Ctx<'_>, n: u32, inner: &dyn Fn()) {
        if n == 0 {
            return inner();
        }
        assert!(!quick(), "{n} frames short");
        let job = StackJob::new(|| 1, Latch::on(c.event));
        let frame = c.frames.frame(job.as_task());
        // SAFETY: `frame` is unlinked below, before it goes, after the frames linked above it.
        unsafe { c.frames.push(&frame) };
        c.frames_changed();
        in_frames(c, n - 1, inner);
        c.frames.pop(&frame);
        c.frames_changed();
        assert!(!quick(), "a frame wanted again");
    }

    #[test]
    fn a_join_is_quick_only_inside_a_ctx_that_keeps_all_its_frames_and_has_joins_left() {
        assert!(!quick(), "no runtime's tasks on this thread");
        let rt = Runtime::builder().max_threads(1).build().unwrap();
        let mut local = rt.inner().tasks().locals[0].lock();
        let c = Ctx::new(&rt, 0, &mut local);
        enter(&c, || {
            // A start has no frames: every join keeps one, whatever its countdown says.
            c.set_countdown(100);
            in_frames(&c, KEPT, &|| {
                assert!(quick());
                assert_eq!(c.countdown.load(Ordering::Relaxed), 99);
                hide(|| assert!(!quick(), "hidden"));
                assert!(quick());
                // The last join of the countdown is the one that reads the clock.
                c.set_countdown(2);
                assert!(quick());
                assert!(!quick());
                // A poke: the next join reads the clock.
                c.set_countdown(100);
                c.countdown.store(0, Ordering::Relaxed);
                assert!(!quick());
            });
        });
        assert!(!quick(), "left");
    }
}
