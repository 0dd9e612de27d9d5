//! The engine under [`Scope`](super::Scope) and [`ScopeFifo`](super::ScopeFifo): one queue of
//! spawned jobs shared by a region's members, a list of broadcast jobs per member, and the
//! region that runs `op` and the jobs (see the [module docs](super) for the protocol).

use std::any::Any;
use std::cell::Cell;
use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};

use asat_core::{BroadcastContext, Runtime, Team};

use super::pending::{Member, Pending};

/// A spawned job, given the handle of its scope.
type Job<'scope, H> = Box<dyn FnOnce(&H) + Send + 'scope>;

/// The locked state of a scope.
type Guard<'a, 'scope, H> = MutexGuard<'a, State<'scope, H>>;

/// A broadcast job, run once by every member of the scope's team.
pub(super) type Broadcast<'scope, H> = Arc<dyn Fn(&H, BroadcastContext<'_>) + Send + Sync + 'scope>;

/// What a scope handle ([`Scope`](super::Scope), [`ScopeFifo`](super::ScopeFifo)) holds.
pub(super) struct Queue<'scope, H> {
    state: Mutex<State<'scope, H>>,
    /// Signalled when a job is queued and when the scope may be over.
    ready: Condvar,
    /// The first panic of `op` or a job.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Counts of the queued jobs, for `current_thread_has_pending_tasks`.
    pending: Arc<Pending>,
}

/// What the members of a scope share.
struct State<'scope, H> {
    queue: VecDeque<Job<'scope, H>>,
    /// The broadcast jobs member `i` has not run yet, at `i` (one list per member of the team,
    /// made when the first member arrives).
    broadcasts: Vec<VecDeque<Broadcast<'scope, H>>>,
    /// Jobs queued or running, each broadcast counting once per member.
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
                broadcasts: Vec::new(),
                pending: 0,
                op_done: false,
            }),
            ready: Condvar::new(),
            panic: Mutex::new(None),
            pending: Arc::default(),
        }
    }

    /// Queues `job` behind those queued before it.
    pub(super) fn push(&self, job: Job<'scope, H>) {
        let mut state = lock(&self.state);
        state.queue.push_back(job);
        state.pending += 1;
        self.pending.queued(1);
        drop(state);
        self.ready.notify_one();
    }

    /// Queues `job` once for every member of the team, behind the broadcasts queued before it.
    pub(super) fn push_broadcast(&self, job: Broadcast<'scope, H>) {
        let mut state = lock(&self.state);
        // A handle is reached only from `op` or a job, which run on members of the scope's
        // region: the lists exist.
        assert!(
            !state.broadcasts.is_empty(),
            "scope: spawn_broadcast before the scope's team started"
        );
        for list in &mut state.broadcasts {
            list.push_back(Arc::clone(&job));
        }
        state.pending += state.broadcasts.len();
        self.pending.broadcast(None, 1);
        drop(state);
        self.ready.notify_all();
    }

    /// Makes the broadcast lists of a team of `size` (the first member to arrive does).
    fn join_team(&self, size: usize) {
        let mut state = lock(&self.state);
        if state.broadcasts.is_empty() {
            state.broadcasts.resize_with(size, VecDeque::new);
            self.pending.team(size);
        }
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

    /// A member's part: runs its broadcast jobs and the queued jobs, oldest first (its own
    /// broadcasts before the shared queue), until `op` has returned and no job is queued or
    /// running. Never unwinds (jobs run under `catching`).
    fn work(&self, handle: &H, team: &Team<'_>) {
        let me = team.index();
        let mut state = lock(&self.state);
        loop {
            if let Some(job) = state.broadcasts[me].pop_front() {
                self.pending.broadcast(Some(me), -1);
                drop(state);
                self.catching(|| job(handle, BroadcastContext::of(team)));
                state = self.finished(lock(&self.state));
            } else if let Some(job) = state.queue.pop_front() {
                self.pending.queued(-1);
                drop(state);
                self.catching(|| job(handle));
                state = self.finished(lock(&self.state));
            } else if state.pending == 0 && state.op_done {
                return;
            } else {
                state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
            }
        }
    }

    /// Counts a job as finished, waking the waiting members when it was the last one.
    fn finished<'a>(&self, mut state: Guard<'a, 'scope, H>) -> Guard<'a, 'scope, H> {
        state.pending -= 1;
        if state.pending == 0 && state.op_done {
            self.ready.notify_all();
        }
        state
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
    let member = |team: &Team<'_>| {
        let _member = Member::enter(&queue.pending, team.index());
        queue.join_team(team.size());
        if team.index() == 0 {
            run_op();
        }
        queue.work(&handle, team);
    };
    Runtime::with_current(|rt| {
        if rt.max_threads() == 1 || asat_core::current_thread_index().is_some() {
            // Inline: `op`, then the jobs, on this thread, as a team of one (as a nested
            // region runs).
            rt.region_of(1, member);
        } else {
            rt.region(member);
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
