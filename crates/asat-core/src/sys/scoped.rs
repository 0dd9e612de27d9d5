//! The runtime installed on a thread ([`Runtime::install_here`](crate::Runtime::install_here),
//! and on the thread that runs an `install`'s closure): a thread-local pointer set for the
//! length of a call, as the `scoped-tls` crate keeps one.
//!
//! Written here rather than taken from `scoped-tls` for its cost: every parallel-iterator call
//! asks for the installed runtime, and `scoped-tls` keeps its thread-local behind a reference
//! in a static of this crate, which another crate's inlined code reaches through two loads and
//! an indirect call per access (two accesses per call: about 35 instructions of a 750-instruction
//! tiny loop, measured with callgrind). A `thread_local!` of this module is one `%fs` load for
//! the caller, in any crate.
//!
//! The protocol: [`set`] stores the reference for the length of its closure and a guard puts
//! back what was there before when the closure returns or unwinds; [`with`] reads it. So a
//! non-null pointer always points at a runtime borrowed by a `set` still running on this
//! thread, and calls nest.

use std::cell::Cell;
use std::ptr;

use crate::Runtime;

thread_local! {
    static INSTALLED: Cell<*const Runtime> = const { Cell::new(ptr::null()) };
}

/// Puts back the pointer a [`set`] replaced.
struct Restore(*const Runtime);

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        INSTALLED.with(|c| c.set(self.0));
    }
}

/// Runs `f` with `rt` installed on the calling thread; what was installed before is installed
/// again when `f` returns or unwinds.
pub(crate) fn set<R>(rt: &Runtime, f: impl FnOnce() -> R) -> R {
    let _restore = Restore(INSTALLED.with(|c| c.replace(rt)));
    f()
}

/// Calls `f` with the runtime installed on the calling thread, or `None`.
#[inline]
pub(crate) fn with<R>(f: impl FnOnce(Option<&Runtime>) -> R) -> R {
    let p = INSTALLED.with(Cell::get);
    // SAFETY: a non-null pointer was stored by a `set` that is still running on this thread
    // (its guard puts the previous pointer back before `set` returns, unwinding included, and
    // the thread-local is not shared with other threads), from a reference that `set` borrows
    // for that whole time: the runtime is alive and not mutably borrowed while `f` runs, which
    // is within `set`'s call.
    f(unsafe { p.as_ref() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn installed() -> Option<usize> {
        with(|rt| rt.map(Runtime::max_threads))
    }

    #[test]
    fn set_installs_for_the_call_and_nests() {
        let a = Runtime::builder().max_threads(2).build().unwrap();
        let b = Runtime::builder().max_threads(3).build().unwrap();
        assert_eq!(installed(), None);
        set(&a, || {
            assert_eq!(installed(), Some(2));
            set(&b, || assert_eq!(installed(), Some(3)));
            assert_eq!(installed(), Some(2));
        });
        assert_eq!(installed(), None);
    }

    #[test]
    fn an_unwinding_call_puts_back_what_was_there() {
        let a = Runtime::builder().max_threads(2).build().unwrap();
        let b = Runtime::builder().max_threads(3).build().unwrap();
        set(&a, || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                set(&b, || panic!("inside"));
            }));
            assert!(r.is_err());
            assert_eq!(installed(), Some(2));
        });
        assert_eq!(installed(), None);
    }

    #[test]
    fn other_threads_see_nothing() {
        let a = Runtime::builder().max_threads(2).build().unwrap();
        set(&a, || {
            let seen = std::thread::scope(|s| s.spawn(installed).join().unwrap());
            assert_eq!(seen, None);
        });
    }
}
