//! The work-stealing engine's jobs: a `join`'s second closure, kept on the stack of the call
//! that made it ([`StackJob`]), a scope's spawned closure, on the heap ([`HeapJob`]), and the
//! two-word reference to either ([`TaskRef`]) that a deque or the injector holds and any
//! thread of the runtime may run.
//!
//! # Lifetime
//!
//! A `StackJob` lives on the stack of the call that made it. Its `TaskRef` sits in at most one
//! queue at a time. The call neither returns nor unwinds before one of:
//! - it took the `TaskRef` back from its own deque (nobody else has it then), and runs or
//!   drops the closure itself;
//! - the job's latch is set, which the thread that ran it does as its last access to the job
//!   ([`Latch::set`]).
//!
//! So a thread that runs a `TaskRef` always finds the job alive, and the result it writes is
//! read only after the latch's `SeqCst` store, with which the owner's `Acquire` load pairs.
//!
//! A `HeapJob` is its own allocation, freed by the thread that runs it; what its closure
//! borrows is kept alive by the scope it was spawned into, which returns only once every job
//! spawned into it has run (see `scope`).

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::latch::Latch;
use crate::payload::{drop_payload, Payload};

/// A job in a queue: the address of a [`StackJob`] and the function that runs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskRef {
    data: *const (),
    run: unsafe fn(*const ()),
}

// SAFETY: a `TaskRef` is made only from a `StackJob` whose closure and result are `Send`, and
// the job is run at most once (it is taken from a queue by one thread, or taken back by its
// owner), so sending the reference to the thread that runs it sends the closure there once.
unsafe impl Send for TaskRef {}

impl TaskRef {
    /// A reference to `data`, run by `run(data)`.
    ///
    /// # Safety
    /// `run(data)` is sound to call once, on any thread of the runtime, whenever the
    /// reference is taken from a queue (the maker keeps `data` alive until then).
    pub(crate) unsafe fn new(data: *const (), run: unsafe fn(*const ())) -> Self {
        Self { data, run }
    }

    /// Whether both refer to the same job.
    #[inline]
    pub(crate) fn is(self, other: TaskRef) -> bool {
        std::ptr::eq(self.data, other.data)
    }

    /// Runs the job it refers to.
    ///
    /// # Safety
    /// The job must be alive and not run before: the caller took this `TaskRef` out of a queue,
    /// which holds each job once (see the module docs).
    #[inline]
    pub(crate) unsafe fn run(self) {
        // SAFETY: forwarded from this function's contract.
        unsafe { (self.run)(self.data) }
    }
}

/// A closure to run once, on whichever thread takes it, its result, and the latch its owner
/// waits on.
pub(crate) struct StackJob<F, R> {
    func: UnsafeCell<Option<F>>,
    result: UnsafeCell<Option<Result<R, Payload>>>,
    latch: Latch,
}

impl<F, R> StackJob<F, R>
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    pub(crate) fn new(func: F, latch: Latch) -> Self {
        Self {
            func: UnsafeCell::new(Some(func)),
            result: UnsafeCell::new(None),
            latch,
        }
    }

    /// The reference a queue holds. The job must not move while a queue or a thread has it.
    #[inline]
    pub(crate) fn as_task(&self) -> TaskRef {
        TaskRef {
            data: self as *const Self as *const (),
            run: Self::execute,
        }
    }

    /// The latch the owner waits on.
    #[inline]
    pub(crate) fn latch(&self) -> &Latch {
        &self.latch
    }

    unsafe fn execute(data: *const ()) {
        let this = data as *const Self;
        // SAFETY: `data` is a live `StackJob<F, R>` run for the first time (TaskRef::run's
        // contract); nobody else touches `func` or `result` until the latch is set.
        let func = unsafe { (*(*this).func.get()).take() };
        let func = func.expect("a job runs once");
        let result = catch_unwind(AssertUnwindSafe(func));
        // SAFETY: as above; the owner reads the result only after the latch is set below.
        unsafe { *(*this).result.get() = Some(result) };
        // SAFETY: the latch is alive until it is set; `set` touches nothing of it afterwards,
        // and neither does this function.
        unsafe { Latch::set(&raw const (*this).latch) };
    }

    /// The closure, for its owner to run itself, taken where it lies (no copy of the job), and
    /// the job given up without a drop: nothing is left in it (no result, and a latch that
    /// holds no event of its own, as a worker's latch does not).
    ///
    /// # Safety
    /// The job's `TaskRef` is out of every queue and was never run: the owner took it back, or
    /// never shared it.
    #[inline]
    pub(crate) unsafe fn take_func(self) -> F {
        debug_assert!(self.latch.holds_nothing());
        // SAFETY: nobody else has the job (this function's contract).
        let f = unsafe { (*self.func.get()).take() };
        // The result is `None` (never run) and the latch's event is not its own: dropping the
        // job would only test for that.
        std::mem::forget(self);
        f.expect("a job taken back was not run")
    }

    /// Drops what the thread that ran the job left (a panic through `drop_payload`), once the
    /// latch is set: for an owner that unwinds.
    pub(crate) fn discard_result(&self) {
        debug_assert!(self.latch.probe());
        // SAFETY: the latch is set, so the thread that ran the job touches it no more, and the
        // owner, the caller, is the only one left to.
        if let Some(Err(p)) = unsafe { (*self.result.get()).take() } {
            drop_payload(p);
        }
    }

    /// What the thread that ran the job left, once the latch is set.
    pub(crate) fn into_result(self) -> Result<R, Payload> {
        debug_assert!(self.latch.probe());
        self.result
            .into_inner()
            .expect("the result is written before the latch is set")
    }
}

/// A closure on the heap, run once by whichever thread takes its [`TaskRef`], which frees it.
pub(crate) struct HeapJob<F> {
    func: F,
}

impl<F> HeapJob<F>
where
    F: FnOnce() + Send,
{
    /// Boxes `func` and returns the reference a queue holds.
    ///
    /// # Safety
    /// The reference is put in one queue and run once, before anything `func` borrows ends
    /// (its scope waits for that); `func` must not unwind (a scope's job catches its panics).
    pub(crate) unsafe fn into_task(func: F) -> TaskRef {
        let data = Box::into_raw(Box::new(HeapJob { func }));
        TaskRef {
            data: data as *const (),
            run: Self::execute,
        }
    }

    unsafe fn execute(data: *const ()) {
        // SAFETY: `data` came from `Box::into_raw` in `into_task`, and is run once
        // (`TaskRef::run`'s contract), so the box is taken back once.
        let job = unsafe { Box::from_raw(data as *mut Self) };
        (job.func)();
    }
}
