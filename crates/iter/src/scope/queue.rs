//! The engine under [`Scope`](super::Scope) and [`ScopeFifo`](super::ScopeFifo): one queue of
//! spawned jobs shared by a region's members, and the region that runs `op` and the jobs (see
//! the [module docs](super) for the protocol).

use std::any::Any;
use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};

use asat_core::Runtime;

/// A spawned job, given the handle of its scope.
type Job<'scope, H> = Box<dyn FnOnce(&H) + Send + 'scope>;

/// What a scope handle ([`Scope`](super::Scope), [`ScopeFifo`](super::ScopeFifo)) holds.
pub(super) struct Queue<'scope, H> {
    state: Mutex<State<'scope, H>>,
    /// Signalled when a job is queued and when the scope may be over.
    ready: Condvar,
    /// The first panic of `op` or a job.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// What the members of a scope share.
struct State<'scope, H> {
    queue: VecDeque<Job<'scope, H>>,
    /// Jobs queued or running.
    pending: usize,
    /// Whether `op` has returned (or panicked).
    op_done: bool,
}

/// A scope handle: the queue it owns.
pub(super) trait Handle<'scope>: Sized + Sync {
    fn queue(&self) -> &Queue<'scope, Self>;
}

impl<H> fmt::Debug for Queue<'_, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("Scope")
            .field("queued", &state.queue.len())
            .field("pending", &state.pending)
            .field("op_done", &state.op_done)
            .finish()
    }
}

impl<'scope, H: Handle<'scope>> Queue<'scope, H> {
    pub(super) fn new() -> Self {
        Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                pending: 0,
                op_done: false,
            }),
            ready: Condvar::new(),
            panic: Mutex::new(None),
        }
    }

    /// Queues `job` behind those queued before it.
    pub(super) fn push(&self, job: Job<'scope, H>) {
        let mut state = lock(&self.state);
        state.queue.push_back(job);
        state.pending += 1;
        drop(state);
        self.ready.notify_one();
    }

    /// Runs `f`, recording its panic (the first one wins) instead of unwinding.
    fn catching<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => Some(r),
            Err(p) => {
                lock(&self.panic).get_or_insert(p);
                None
            }
        }
    }

    /// Marks `op` as returned: members waiting for work may now be able to leave.
    fn op_done(&self) {
        lock(&self.state).op_done = true;
        self.ready.notify_all();
    }

    /// A member's part: runs queued jobs, oldest first, until `op` has returned and no job is
    /// queued or running. Never unwinds (jobs run under `catching`).
    fn work(&self, handle: &H) {
        let mut state = lock(&self.state);
        loop {
            if let Some(job) = state.queue.pop_front() {
                drop(state);
                self.catching(|| job(handle));
                state = lock(&self.state);
                state.pending -= 1;
                if state.pending == 0 && state.op_done {
                    self.ready.notify_all();
                }
            } else if state.pending == 0 && state.op_done {
                return;
            } else {
                state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
            }
        }
    }
}

/// Runs `op` with `handle` on the calling thread as member 0 of one region of the current
/// runtime, whose members (the caller too, once `op` has returned) run the jobs spawned into
/// it; returns `op`'s result once every job has finished, or re-raises the first panic.
///
/// `op` and its result need not be `Send`: they stay on the calling thread (checked at run
/// time by [`CallerOnly`]).
pub(super) fn run<'scope, H, OP, R>(handle: H, op: OP) -> R
where
    H: Handle<'scope>,
    OP: FnOnce(&H) -> R,
{
    let op = CallerOnly::new(Cell::new(Some(op)));
    let result = CallerOnly::new(Cell::new(None));
    let queue = handle.queue();
    let run_op = || {
        if let Some(op) = op.get().take() {
            if let Some(r) = queue.catching(|| op(&handle)) {
                result.get().set(Some(r));
            }
        }
        queue.op_done();
    };
    Runtime::with_current(|rt| {
        if rt.max_threads() == 1 || asat_core::current_thread_index().is_some() {
            // Inline: `op`, then the jobs, on this thread (as a member, when it is not one).
            rt.alone(|| {
                run_op();
                queue.work(&handle);
            });
        } else {
            rt.region(|team| {
                if team.index() == 0 {
                    run_op();
                }
                queue.work(&handle);
            });
        }
    });
    if let Some(p) = lock(&queue.panic).take() {
        resume_unwind(p);
    }
    match result.get().take() {
        Some(r) => r,
        None => unreachable!("scope: `op` returned without a panic, so its result is kept"),
    }
}

/// A value that only the thread that made it may reach: a scope's `op` and result, shared
/// with the region's members so that member 0, which is the calling thread, can run `op`.
struct CallerOnly<T> {
    owner: ThreadId,
    value: T,
}

// SAFETY: a shared `CallerOnly` gives access to its value only on the thread that made it
// (`get` checks, and the field is private), so other threads holding a reference can do
// nothing with the value: it is as if it stayed on the owner's stack. `CallerOnly` is `Send`
// only when `T` is, so a value that is not `Send` is also dropped on its owner.
unsafe impl<T> Sync for CallerOnly<T> {}

impl<T> CallerOnly<T> {
    fn new(value: T) -> Self {
        Self {
            owner: thread::current().id(),
            value,
        }
    }

    /// The value.
    ///
    /// # Panics
    ///
    /// On any thread but the one that made it (never in a scope: member 0 of a region is the
    /// thread that started it, and a scope run inline stays on it).
    fn get(&self) -> &T {
        assert_eq!(
            thread::current().id(),
            self.owner,
            "scope: `op` reached from a thread other than the caller's"
        );
        &self.value
    }
}

/// Locks `m`, also when a panic poisoned it (every panic here is caught and re-raised by
/// `scope`; the data stays consistent).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
