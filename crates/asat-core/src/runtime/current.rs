//! What the calling thread belongs to: the region member it is running, if any, and the runtime
//! [installed](crate::Runtime::install) on it. These answer rayon's questions
//! ([`current_thread_index`](crate::current_thread_index),
//! [`current_num_threads`](crate::current_num_threads)) and tell clients such as the
//! parallel-iterator layer which runtime a call should run on.
//!
//! The work-stealing engine (`steal`) sits above this module: it sets and reads the member
//! here, and installing a runtime, which also hides the engine's context, is its own
//! (`steal::install`).

use std::cell::Cell;
use std::ptr::NonNull;

use crate::runtime::Inner;
use crate::Runtime;

/// The member a thread is running: its index in the team, the size of the pool it belongs to
/// (the runtime's `max_threads`), and which runtime that is (for
/// [`Runtime::current_thread_index`]).
///
/// Two words with a niche (`Option<Member>` is as small): it is written on every region a
/// thread runs a member of. The runtime is kept as the address of its shared state, an
/// identity that is compared and never dereferenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Member {
    index: u32,
    pool: u32,
    runtime: NonNull<Inner>,
}

impl Member {
    /// Member `index` of a region of `runtime`, whose pool has `pool` threads (both at most
    /// [`MAX_THREADS_LIMIT`](crate::MAX_THREADS_LIMIT), so they fit in 32 bits).
    #[inline]
    pub(crate) fn new(index: usize, pool: usize, runtime: &Inner) -> Member {
        debug_assert!(index < pool && pool <= crate::MAX_THREADS_LIMIT);
        Member {
            index: index as u32,
            pool: pool as u32,
            runtime: NonNull::from(runtime),
        }
    }

    /// The member's index in its team.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index as usize
    }

    /// The size of the pool (the runtime's `max_threads`).
    #[inline]
    pub(crate) fn pool(&self) -> usize {
        self.pool as usize
    }

    /// Whether the member is of a region of `runtime`.
    #[inline]
    pub(crate) fn of(&self, runtime: &Inner) -> bool {
        self.runtime == NonNull::from(runtime)
    }
}

#[cfg(not(loom))]
thread_local! {
    static MEMBER: Cell<Option<Member>> = const { Cell::new(None) };
}
#[cfg(loom)]
loom::thread_local! {
    static MEMBER: Cell<Option<Member>> = Cell::new(None);
}

/// The member the calling thread runs, if it runs one.
#[inline]
pub(crate) fn member() -> Option<Member> {
    MEMBER.with(Cell::get)
}

/// Marks the calling thread as running `m` until the guard is dropped (unwinding included),
/// then restores what it ran before.
#[inline]
pub(crate) fn enter(m: Member) -> MemberGuard {
    MemberGuard(MEMBER.with(|c| c.replace(Some(m))))
}

/// Restores the member a thread ran before [`enter`].
#[must_use]
pub(crate) struct MemberGuard(Option<Member>);

impl Drop for MemberGuard {
    #[inline]
    fn drop(&mut self) {
        MEMBER.with(|c| c.set(self.0));
    }
}

/// Calls `f` with the runtime installed on the calling thread, or `None`.
#[inline]
pub(crate) fn with_installed<R>(f: impl FnOnce(Option<&Runtime>) -> R) -> R {
    crate::sys::scoped::with(f)
}
