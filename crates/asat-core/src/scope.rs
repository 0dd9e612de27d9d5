//! rayon's scoped tasks: [`scope`], [`scope_fifo`], [`in_place_scope`],
//! [`in_place_scope_fifo`], the same on a [`Runtime`], and [`current_thread_has_pending_tasks`].
//!
//! How they run is on [`Scope`]; the engine is `steal::scope`.

use std::fmt;

use crate::steal::scope::{self as engine, Core, Handle};
use crate::{BroadcastContext, Runtime};

/// A scope made by [`scope`] or [`in_place_scope`]: every job spawned into it has finished
/// when the call returns, so jobs may borrow anything that outlives it (`'scope`).
///
/// A scope's spawned closures are tasks of the work-stealing engine, as `join`'s second
/// closures are: a spawn from a thread that runs the pool's tasks goes on that thread's
/// deque, where any other thread of the pool may steal it (also from inside another task,
/// at any depth), and the thread runs its own spawns newest first once it waits. The scope's
/// owner waits for every job by running tasks, so a scope's jobs, and the jobs they spawn,
/// spread over the threads that look for work, as [`Policy::task_workers`](crate::Policy)
/// allows. A FIFO scope's jobs start in the order they were spawned, whichever thread runs
/// them. A scope's broadcast reaches every thread that runs the pool's tasks.
///
/// Where the owner's `op` runs: on the calling thread when it runs the pool's tasks (inside
/// a task or a `join`) or when the pool's calling-thread slot (index 0) is free; otherwise
/// on a worker for [`scope`] (the caller sleeps), and on the calling thread, outside the
/// pool, for [`in_place_scope`] (whose `op` need not be `Send`). Inside a region's member,
/// while index 0 is taken, and in a child made by `fork`, no other thread may run the jobs:
/// the caller runs them itself once `op` has returned, newest first (FIFO scopes: oldest).
pub struct Scope<'scope> {
    core: Core<'scope>,
}

/// A scope made by [`scope_fifo`] or [`in_place_scope_fifo`], whose jobs start in the order
/// they were spawned.
pub struct ScopeFifo<'scope> {
    core: Core<'scope>,
}

impl<'scope> Handle<'scope> for Scope<'scope> {
    fn wrap(core: Core<'scope>) -> Self {
        Scope { core }
    }
    fn core(&self) -> &Core<'scope> {
        &self.core
    }
}

impl<'scope> Handle<'scope> for ScopeFifo<'scope> {
    fn wrap(core: Core<'scope>) -> Self {
        ScopeFifo { core }
    }
    fn core(&self) -> &Core<'scope> {
        &self.core
    }
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

impl fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeFifo").finish_non_exhaustive()
    }
}

impl<'scope> Scope<'scope> {
    /// Spawns `body` as a task of the scope's pool: it runs once, on whichever thread of the
    /// pool takes it, before the scope returns, and may spawn more jobs through the `&Scope`
    /// it is given. No order is promised between jobs; a thread runs its own spawns newest
    /// first, and other threads steal the oldest.
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.core.spawn(self, body);
    }

    /// Runs `body` once on every thread that runs the pool's tasks, before the scope returns
    /// (rayon's `Scope::spawn_broadcast`), with a [`BroadcastContext`] giving the thread's
    /// index among them and their number: every worker thread of the pool, and the scope's
    /// owner when it holds the pool's calling-thread slot (a scope called from outside on a
    /// free pool), so `num_threads` is the pool's size there. Each thread runs its part
    /// before any other work it has not started. A scope whose jobs only its owner runs (see
    /// [`Scope`]) runs `body` once, with index 0 of 1.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// let seen = AtomicUsize::new(0);
    /// pool.scope(|s| {
    ///     s.spawn_broadcast(|_, ctx| {
    ///         assert_eq!(ctx.num_threads(), 3);
    ///         seen.fetch_or(1 << ctx.index(), Ordering::Relaxed);
    ///     });
    /// });
    /// assert_eq!(seen.into_inner(), 0b111);
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.core.spawn_broadcast(self, body);
    }
}

impl<'scope> ScopeFifo<'scope> {
    /// [`Scope::spawn`] in a FIFO scope: jobs start in the order they were spawned into the
    /// scope, whichever threads run them.
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        self.core.spawn(self, body);
    }

    /// [`Scope::spawn_broadcast`] in a FIFO scope.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.core.spawn_broadcast(self, body);
    }
}

impl Runtime {
    /// rayon's `ThreadPool::scope`: runs `op` with a [`Scope`] whose jobs run on this pool,
    /// and returns what `op` returns once every job has finished (see [`Scope`] for where
    /// `op` and the jobs run).
    ///
    /// # Panics
    ///
    /// If `op` or a job panics: the first panic is raised once every job has finished.
    ///
    /// ```
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    /// let mut parts = vec![0u64; 8];
    /// pool.scope(|s| {
    ///     for (i, p) in parts.iter_mut().enumerate() {
    ///         s.spawn(move |_| *p = (i as u64) * 10);
    ///     }
    /// });
    /// assert_eq!(parts.iter().sum::<u64>(), 280);
    /// ```
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        engine::scope(self, false, op)
    }

    /// [`Runtime::scope`] with a [`ScopeFifo`]: jobs start in the order they were spawned.
    ///
    /// ```
    /// use std::sync::Mutex;
    ///
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    /// let order = Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..5 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3, 4]);
    /// ```
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        engine::scope(self, true, op)
    }

    /// [`Runtime::scope`] whose `op` runs on the calling thread, so that neither it nor its
    /// result need be `Send` (rayon's `ThreadPool::in_place_scope`).
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        engine::in_place_scope(self, false, op)
    }

    /// [`Runtime::in_place_scope`] with a [`ScopeFifo`].
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        engine::in_place_scope(self, true, op)
    }

    /// [`current_thread_has_pending_tasks`] for this pool: `None` unless the calling thread
    /// runs this pool's tasks.
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        engine::pending(Some(self))
    }
}

/// [`Runtime::scope`] on the current runtime (rayon's `scope`).
///
/// ```
/// let mut a = vec![0u64; 100];
/// let mut b = vec![0u64; 100];
/// asat_core::scope(|s| {
///     s.spawn(|_| a.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64));
///     s.spawn(|s| {
///         b.iter_mut().for_each(|x| *x = 2);
///         s.spawn(|_| assert_eq!(1 + 1, 2)); // a job may spawn more
///     });
/// });
/// assert_eq!((a[99], b[0]), (99, 2));
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    crate::steal::on_current(|rt| rt.scope(op))
}

/// [`Runtime::scope_fifo`] on the current runtime (rayon's `scope_fifo`).
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    crate::steal::on_current(|rt| rt.scope_fifo(op))
}

/// [`Runtime::in_place_scope`] on the current runtime (rayon's `in_place_scope`).
///
/// ```
/// use std::rc::Rc;
///
/// let local = Rc::new(5); // not Send
/// let r = asat_core::in_place_scope(|s| {
///     s.spawn(|_| {});
///     Rc::clone(&local)
/// });
/// assert_eq!(*r, 5);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    crate::steal::on_current(|rt| rt.in_place_scope(op))
}

/// [`Runtime::in_place_scope_fifo`] on the current runtime (rayon's `in_place_scope_fifo`).
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    crate::steal::on_current(|rt| rt.in_place_scope_fifo(op))
}

/// rayon's `current_thread_has_pending_tasks`: `None` when the calling thread runs no task of
/// a pool; otherwise whether it has work queued that no other thread has taken yet (spawned
/// jobs and shared `join` halves on its deque, a broadcast's part in its mail). A snapshot:
/// other threads may steal the work meanwhile. On a pool's
/// [`use_current_thread`](crate::ThreadPoolBuilder::use_current_thread) thread outside its
/// calls, `Some(false)`.
///
/// ```
/// assert_eq!(asat_core::current_thread_has_pending_tasks(), None);
/// let pool = asat_core::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// pool.scope(|s| {
///     assert_eq!(asat_core::current_thread_has_pending_tasks(), Some(false));
///     s.spawn(|_| {});
///     // on one thread, the job waits for `op` to return
///     assert_eq!(asat_core::current_thread_has_pending_tasks(), Some(true));
/// });
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    engine::pending(None)
}
