//! The engine under [`Scope`](crate::Scope) and [`ScopeFifo`](crate::ScopeFifo): spawned
//! closures as heap tasks on the work-stealing queues, counted by a latch their scope's
//! owner waits on.
//!
//! # Protocol
//!
//! A scope's [`Core`] lives on its owner's stack. Its [`CountLatch`] starts at 1 for `op`;
//! each spawn adds one before its task is queued, and each task takes one away as its last
//! access to the scope (after its closure has run and its panic, if any, is recorded). The
//! owner runs `op`, takes `op`'s one away, and waits for zero, so the scope outlives every
//! task spawned into it, and a task's closure may borrow what outlives the scope.
//!
//! Where a task goes depends on where the scope's owner is ([`Owner`]):
//! - **Tasks**: the owner runs tasks of the runtime (a worker, or a caller holding index 0)
//!   or waits outside it for them. A spawn from a thread that runs tasks of this runtime goes
//!   on its deque, stealable by the others (the spawner runs its own newest first); from any
//!   other thread into the injector, which every worker takes from. The owner waits by
//!   running tasks ([`Ctx::run_until`]), or, outside the pool, asleep on its own event.
//! - **Serial**: no other thread of the runtime may run the tasks (a region's member while
//!   index 0 is taken, a `fork`ed child, a one-thread runtime whose index 0 is taken): they
//!   queue in the scope and the owner runs them, newest first, once `op` has returned.
//!
//! A FIFO scope's spawn puts its task in the scope's own queue and queues, where the task
//! would have gone, a *token* that runs the oldest task of that queue: as many tokens as
//! tasks, each queued after its task, so a token always finds one, and tasks start in the
//! order they were spawned whichever thread runs the tokens.
//!
//! A broadcast from a scope called from outside the pool's calls (*outer*) is one task per
//! thread that runs the runtime's tasks, each in that thread's mail ([`Inner::mail`]), which
//! a thread reads before any other work: every worker thread that has started, and index 0
//! when the owner holds it (its caller is then one of the threads of the call). A thread
//! takes its part when it next looks for work, also while it waits in a `join`. A scope
//! nested in a task or a region's member runs its broadcasts once, as one task, as a nested
//! [`Runtime::broadcast`] does: those threads may be members of a region that waits for the
//! owner at a barrier. Serial scopes run them once too.

use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;

use parking_lot::Mutex;

use super::deque::Injector;
use super::job::{HeapJob, TaskRef};
use super::join::{own_event, seat, start_call};
use super::latch::CountLatch;
use super::run::take;
use super::{ctx, Ctx};
use crate::payload::{drop_payload, Payload};
use crate::wait::{WaitInfo, WaitSite};
use crate::{BroadcastContext, Runtime};

/// Where a scope's owner is, which decides where its tasks and broadcasts go (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// A thread that runs the runtime's tasks, at `index`; `outer`: the scope was called from
    /// outside the pool's calls.
    Thread { index: usize, outer: bool },
    /// A thread outside the pool, asleep while the workers run the tasks (an outer scope).
    Outside,
    /// The only thread that may run the tasks, after `op`.
    Serial,
}

/// What every scope handle holds: the count its owner waits on and where its tasks go.
pub(crate) struct Core<'scope> {
    rt: Runtime,
    owner: Owner,
    count: CountLatch,
    /// The first panic of `op` or a task.
    panic: Mutex<Option<Payload>>,
    /// A FIFO scope's tasks, oldest first (see the module docs); `None` for a LIFO scope.
    fifo: Option<Injector<TaskRef>>,
    /// A serial scope's tasks.
    serial: Mutex<Vec<TaskRef>>,
    /// Invariant in `'scope`, as rayon's scopes are: a task may borrow for exactly `'scope`.
    _scope: PhantomData<fn(&'scope ()) -> &'scope ()>,
}

/// A scope handle ([`Scope`](crate::Scope), [`ScopeFifo`](crate::ScopeFifo)): made around a
/// [`Core`], and given to the tasks spawned into it.
pub(crate) trait Handle<'scope>: Sync + Sized {
    fn wrap(core: Core<'scope>) -> Self;
    fn core(&self) -> &Core<'scope>;
}

/// A pointer to a scope handle, sent to the thread that runs one of its tasks.
struct HandlePtr<H>(*const H);

// SAFETY: the handle is `Sync` (the `Handle` bound), and it is alive while the task that
// holds this pointer runs (the module docs' count).
unsafe impl<H: Sync> Send for HandlePtr<H> {}

impl<H> HandlePtr<H> {
    /// The pointer (a method, so that a closure captures the whole `Send` wrapper).
    fn get(&self) -> *const H {
        self.0
    }
}

impl<'scope> Core<'scope> {
    fn new(rt: &Runtime, owner: Owner, count: CountLatch) -> Self {
        Core {
            rt: rt.weak_handle(),
            owner,
            count,
            panic: Mutex::new(None),
            fifo: None,
            serial: Mutex::new(Vec::new()),
            _scope: PhantomData,
        }
    }

    /// A FIFO scope's core, when `fifo`.
    fn fifo(mut self, fifo: bool) -> Self {
        if fifo {
            self.fifo = Some(Injector::new());
        }
        self
    }

    /// Keeps the first panic; drops later ones.
    fn record(&self, p: Payload) {
        let mut first = self.panic.lock();
        if first.is_none() {
            *first = Some(p);
        } else {
            drop(first);
            drop_payload(p);
        }
    }

    /// Spawns `body`, to run once with `handle` (whose core this is) on a thread of the runtime
    /// before the scope ends; FIFO scopes start their tasks in spawn order.
    pub(crate) fn spawn<H, F>(&self, handle: &H, body: F)
    where
        H: Handle<'scope>,
        F: FnOnce(&H) + Send + 'scope,
    {
        let task = self.task(handle, body);
        match &self.fifo {
            None => self.queue(task),
            Some(fifo) => {
                fifo.push(task);
                // SAFETY: the token runs once, while the task it starts holds a count of the
                // scope, which keeps `self` alive (module docs).
                self.queue(unsafe { TaskRef::new(self as *const Self as *const (), Self::token) });
            }
        }
    }

    /// Runs `body` once on each thread that runs the runtime's tasks (see the module docs),
    /// with that thread's index among them and their number.
    pub(crate) fn spawn_broadcast<H, F>(&self, handle: &H, body: F)
    where
        H: Handle<'scope>,
        F: Fn(&H, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let with_owner = match self.owner {
            Owner::Serial | Owner::Thread { outer: false, .. } => {
                let once = move |h: &H| body(h, BroadcastContext::new(0, 1));
                return self.queue(self.task(handle, once));
            }
            Owner::Thread { index, .. } => index == 0,
            Owner::Outside => false,
        };
        let workers = self.rt.task_threads();
        let threads: Vec<usize> = (usize::from(!with_owner)..workers).collect();
        let body = Arc::new(body);
        let n = threads.len();
        for (k, &thread) in threads.iter().enumerate() {
            let body = Arc::clone(&body);
            let task = self.task(handle, move |h| body(h, BroadcastContext::new(k, n)));
            self.rt.inner().mail(thread, task);
        }
    }

    /// The task that runs `body` with `handle`, counted.
    fn task<H, F>(&self, handle: &H, body: F) -> TaskRef
    where
        H: Handle<'scope>,
        F: FnOnce(&H) + Send + 'scope,
    {
        self.count.increment();
        let handle = HandlePtr(handle as *const H);
        let run = move || {
            // SAFETY: the scope, and `handle` with it, outlives the count this task holds
            // (module docs); only shared references to it are made.
            let h = unsafe { &*handle.get() };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| body(h))) {
                h.core().record(p);
            }
            // SAFETY: the count holds one for this task; nothing of the scope is touched
            // after the decrement.
            unsafe { CountLatch::decrement(&h.core().count) };
        };
        // SAFETY: the task is queued once and run once before the scope ends (module docs);
        // `run` catches `body`'s panics.
        unsafe { HeapJob::into_task(run) }
    }

    /// Queues a task where this scope's tasks go (module docs).
    fn queue(&self, t: TaskRef) {
        match self.owner {
            Owner::Serial => self.serial.lock().push(t),
            Owner::Thread { .. } | Owner::Outside => self.rt.inner().push_task(&self.rt, t),
        }
    }

    /// A FIFO scope's token: runs the oldest task of the scope's queue.
    unsafe fn token(data: *const ()) {
        // SAFETY: `data` is this scope's core, alive (see `spawn`).
        let core = unsafe { &*(data as *const Self) };
        let fifo = core.fifo.as_ref().expect("a token belongs to a FIFO scope");
        let task = take(fifo).expect("a token is queued after its task");
        // SAFETY: taken out of the queue, which held it once.
        unsafe { task.run() }
    }

    /// Runs `op` with `handle`, then `wait` until every task spawned has run; returns what
    /// `op` returned, or raises the first panic.
    fn complete<H, R>(handle: &H, op: impl FnOnce(&H) -> R, wait: impl FnOnce()) -> R
    where
        H: Handle<'scope>,
    {
        let core = handle.core();
        let r = match catch_unwind(AssertUnwindSafe(|| op(handle))) {
            Ok(r) => Some(r),
            Err(p) => {
                core.record(p);
                None
            }
        };
        // SAFETY: `op`'s count; the owner's handle outlives this call.
        unsafe { CountLatch::decrement(&core.count) };
        wait();
        if let Some(p) = core.panic.lock().take() {
            drop(r);
            resume_unwind(p);
        }
        r.expect("op returned")
    }
}

/// A scope owned by a thread that runs tasks of `c`'s runtime; `outer`: called from outside
/// the pool's calls.
fn on_ctx<'scope, H, R>(c: &Ctx<'_>, fifo: bool, outer: bool, op: impl FnOnce(&H) -> R) -> R
where
    H: Handle<'scope>,
{
    let count = CountLatch::on(c.event);
    let owner = Owner::Thread {
        index: c.index,
        outer,
    };
    let core = Core::new(c.rt, owner, count);
    let handle = H::wrap(core.fifo(fifo));
    Core::complete(&handle, op, || {
        c.run_until(&|| handle.core().count.probe(), WaitSite::Join)
    })
}

/// A scope whose tasks only its owner runs, after `op`.
fn serial<'scope, H, R>(rt: &Runtime, fifo: bool, op: impl FnOnce(&H) -> R) -> R
where
    H: Handle<'scope>,
{
    let count = CountLatch::on_own(own_event());
    let handle = H::wrap(Core::new(rt, Owner::Serial, count).fifo(fifo));
    let core = handle.core();
    Core::complete(&handle, op, || {
        // The list's lock is let go before a task runs: the task may spawn into it.
        while let Some(t) = {
            let next = core.serial.lock().pop();
            next
        } {
            // SAFETY: taken out of the scope's list, which held it once.
            unsafe { t.run() }
        }
        debug_assert!(core.count.probe());
    })
}

/// A scope whose owner, outside the pool, runs `op` itself and sleeps while the workers run
/// its tasks.
fn outside<'scope, H, R>(rt: &Runtime, fifo: bool, op: impl FnOnce(&H) -> R) -> R
where
    H: Handle<'scope>,
{
    let event = own_event();
    let count = CountLatch::on_own(Arc::clone(&event));
    let handle = H::wrap(Core::new(rt, Owner::Outside, count).fifo(fifo));
    let inner = rt.inner();
    let info = WaitInfo {
        site: WaitSite::Join,
        member: 0,
        team_size: inner.max_threads,
    };
    Core::complete(&handle, op, || {
        event.wait_until(|| handle.core().count.probe(), &*inner.wait, &info);
    })
}

/// Whether no thread of `rt` but the caller may run a scope's tasks once index 0 is taken: a
/// one-thread runtime, or a region's member (the workers may all be members of its region,
/// waiting for it).
fn serial_only(rt: &Runtime) -> bool {
    rt.inner().max_threads == 1 || Runtime::in_region()
}

/// rayon's `scope` on `rt`: `op` on a thread that runs `rt`'s tasks (this one, when it does
/// or index 0 is free; else a worker, while this thread sleeps).
pub(crate) fn scope<'scope, H, R>(rt: &Runtime, fifo: bool, op: impl FnOnce(&H) -> R + Send) -> R
where
    H: Handle<'scope>,
    R: Send,
{
    enter(rt, fifo, op, |op| {
        if rt.hands_calls_over() {
            // On one of the runtime's own threads, which takes index 0 or hands in from there.
            return rt.install(|| scope(rt, fifo, op));
        }
        super::join::hand_in(rt, || ctx::with(|c| on_ctx(owner(c), fifo, true, op)))
    })
}

/// rayon's `in_place_scope` on `rt`: `op` on the calling thread, whatever it is.
pub(crate) fn in_place_scope<'scope, H, R>(rt: &Runtime, fifo: bool, op: impl FnOnce(&H) -> R) -> R
where
    H: Handle<'scope>,
{
    enter(rt, fifo, op, |op| {
        super::install(rt, || outside(rt, fifo, op))
    })
}

/// Runs a scope on `rt` as a thread that runs its tasks when this one does or index 0 is
/// free, serially where only this thread may run its tasks (a `fork`ed child, see
/// [`serial_only`]), and by `elsewhere` otherwise, also where this thread must not run the
/// runtime's closures ([`Runtime::hands_calls_over`]).
fn enter<'scope, H, R, OP>(rt: &Runtime, fifo: bool, op: OP, elsewhere: impl FnOnce(OP) -> R) -> R
where
    H: Handle<'scope>,
    OP: FnOnce(&H) -> R,
{
    // `op` and the tasks this thread runs see `rt` as the current runtime on every path.
    let here = |op| super::install(rt, || serial(rt, fifo, op));
    ctx::with(|c| match c {
        Some(c) if c.rt.id() == rt.id() => on_ctx(c, fifo, false, op),
        _ if rt.forked() => here(op),
        // Not index 0: the runtime's closures run on its own threads (`elsewhere` says where).
        _ if rt.hands_calls_over() => elsewhere(op),
        _ => {
            let outer = !Runtime::in_region();
            let _call = start_call(rt);
            match seat(rt, op, |op| {
                ctx::with(|c| on_ctx(owner(c), fifo, outer, op))
            }) {
                Ok(r) => r,
                Err(op) if serial_only(rt) => here(op),
                Err(op) => elsewhere(op),
            }
        }
    })
}

/// The `Ctx` a thread that runs tasks has (inside [`seat`] or a task handed in).
fn owner<'c, 'a>(c: Option<&'c Ctx<'a>>) -> &'c Ctx<'a> {
    c.expect("a thread that runs tasks has a Ctx")
}

/// The calling thread's own queued work, for rayon's `current_thread_has_pending_tasks`:
/// `Some` when it runs tasks of `rt` (of any runtime, for `None`), and `Some(false)` on the
/// pool's resident thread outside its calls (`runtime::resident`: index 0 is its own, and a
/// call leaves nothing queued there).
pub(crate) fn pending(rt: Option<&Runtime>) -> Option<bool> {
    ctx::with(
        |c| match c.filter(|c| rt.is_none_or(|rt| c.rt.id() == rt.id())) {
            Some(c) => Some(!c.deque.is_empty() || !c.inner().tasks().mail[c.index].is_empty()),
            None => crate::runtime::resident::index(rt.map(Runtime::inner)).map(|_| false),
        },
    )
}
