//! OS identities of threads.

use std::cell::Cell;

/// The OS identities of a thread, as policies need them to signal or account for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ThreadHandle {
    /// The kernel thread id (`gettid`).
    pub tid: libc::pid_t,
    /// The POSIX thread (`pthread_self`), a target for `pthread_kill`.
    pub pthread: libc::pthread_t,
}

thread_local! {
    static CURRENT: Cell<Option<ThreadHandle>> = const { Cell::new(None) };
}

impl ThreadHandle {
    /// The handle of the calling thread (cached after the first call).
    pub fn current() -> ThreadHandle {
        CURRENT.with(|c| {
            if let Some(h) = c.get() {
                return h;
            }
            // SAFETY: gettid and pthread_self take no arguments and cannot fail.
            let h = unsafe {
                ThreadHandle {
                    tid: libc::gettid(),
                    pthread: libc::pthread_self(),
                }
            };
            c.set(Some(h));
            h
        })
    }
}
