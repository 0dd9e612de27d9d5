//! A region's body, erased to a thin pointer so that workers can find it.
//!
//! The thread that starts a region keeps the body closure and a [`JobRef`] to it on its stack,
//! publishes a pointer to the `JobRef` in the region state, and does not return (nor unwind)
//! before every member has arrived at the join, after which no member touches either again.
//! That is the whole lifetime argument for the two `unsafe` blocks below.

use crate::Team;

/// A type-erased `&F` where `F: Fn(&Team) + Sync`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JobRef {
    data: *const (),
    call: unsafe fn(*const (), &Team<'_>),
}

unsafe fn call_erased<F: Fn(&Team<'_>) + Sync>(data: *const (), team: &Team<'_>) {
    // SAFETY: `data` was made from a `&F` in `JobRef::new`, and the caller of `JobRef::run`
    // guarantees that the `F` is still alive.
    let f = unsafe { &*(data as *const F) };
    f(team);
}

impl JobRef {
    /// Erases `f`. The result must not be run after `f` is dropped (see the module docs).
    pub(crate) fn new<F: Fn(&Team<'_>) + Sync>(f: &F) -> JobRef {
        JobRef {
            data: f as *const F as *const (),
            call: call_erased::<F>,
        }
    }

    /// The two words of the reference, for a mailbox to publish through atomics (so that a
    /// worker reads them from the mailbox's line rather than chasing a pointer to the starting
    /// thread's stack, one cache transfer fewer before the member starts).
    ///
    /// Both are pointers, so that the function pointer keeps its provenance on the way (one
    /// made from an integer would have none, and calling it would be undefined behaviour).
    pub(crate) fn to_words(self) -> (*mut (), *mut ()) {
        (self.data as *mut (), self.call as *mut ())
    }

    /// The reference back from [`to_words`](JobRef::to_words).
    ///
    /// # Safety
    /// `words` must have been returned by `to_words` (the second word is a function pointer of
    /// this module's erased signature).
    pub(crate) unsafe fn from_words(words: (*mut (), *mut ())) -> JobRef {
        type Call = unsafe fn(*const (), &Team<'_>);
        JobRef {
            data: words.0 as *const (),
            // SAFETY: the caller guarantees `words.1` is a `Call` turned into a data pointer
            // by `to_words`; function and data pointers have the same size here, and the
            // pointer keeps the function's provenance.
            call: unsafe { std::mem::transmute::<*mut (), Call>(words.1) },
        }
    }

    /// Runs the closure on `team`.
    ///
    /// # Safety
    /// The closure this `JobRef` was made from must still be alive; the region protocol
    /// guarantees it for every member between the region's start and its arrival at the join.
    pub(crate) unsafe fn run(&self, team: &Team<'_>) {
        // SAFETY: forwarded from this function's contract; `F: Sync` makes the shared call from
        // several threads sound.
        unsafe { (self.call)(self.data, team) }
    }
}
