//! `scope`, `scope_fifo`, `in_place_scope`, `in_place_scope_fifo` and their spawns: rayon's
//! scoped tasks, on one region of the current runtime.
//!
//! # Design
//!
//! A call to [`scope`] is **one region**. Member 0 (the calling thread) runs `op`; every member,
//! member 0 once `op` has returned, then runs spawned jobs taken from one queue shared by the
//! scope, first in first out, until the queue is empty, `op` has returned and no job is running
//! (a running job may still spawn). A member with nothing to take waits on a condition variable
//! that a spawn and the last job's end signal. So every spawned job runs, on some member of the
//! team, before `scope` returns, and a job may spawn more jobs into the same scope from any
//! member; with a team of one (a policy's choice, or a one-thread runtime) member 0 runs them
//! all after `op`.
//!
//! Jobs and `op` may borrow anything that outlives the scope (`'scope`), as in rayon: they all
//! end before `scope` returns, and a job never run (none is: see panics) would be dropped with
//! the scope. The queue holds boxed `FnOnce` jobs behind a mutex.
//!
//! [`Scope::spawn_broadcast`] (and [`ScopeFifo::spawn_broadcast`]) queues one shared `Fn` job
//! on a list of each member's own, beside the shared queue, when the scope's team is known
//! (the first member to arrive makes one list per member; a spawn can only come from `op` or a
//! job, so after that). A member runs the jobs of its own list, oldest first, before taking
//! from the shared queue; a broadcast counts once per member in the jobs the scope waits for.
//! So every member of the team runs the job exactly once, with a
//! [`BroadcastContext`] giving its index in the team and the
//! team's size, before `scope` returns; member 0 runs its part after `op` has returned.
//!
//! # The variants
//!
//! - [`scope_fifo`] and [`ScopeFifo::spawn_fifo`]: rayon runs a FIFO scope's jobs in the order
//!   each thread spawned them. Here every scope's jobs **start in the order they were
//!   spawned**, over the whole scope (so per spawner too): `scope_fifo` is `scope` with rayon's
//!   names and types.
//! - [`in_place_scope`] and [`in_place_scope_fifo`]: rayon runs `op` on the calling thread
//!   instead of in the pool. Here `op` always runs on the calling thread (member 0), so they are
//!   `scope` and `scope_fifo` without the `Send` bounds on `op` and its result, as in rayon:
//!   `op` may use what cannot leave the thread (an `Rc`), which is kept on the caller (checked
//!   at run time) while the members share the scope.
//! - [`ThreadPoolScopes`] (in the prelude) gives a `Runtime` (rayon's `ThreadPool`) the methods
//!   `scope`, `scope_fifo`, `in_place_scope` and `in_place_scope_fifo`: each installs the
//!   runtime and calls the function of the same name.
//!
//! # Panics
//!
//! `op` and each job run under `catch_unwind`: a panic is recorded (the first one wins) and the
//! members go on running the remaining jobs, so the region always ends; then `scope` re-raises
//! the first panic, as rayon does once all jobs are done. The runtime stays usable.
//!
//! # Limits
//!
//! - A `scope` called inside a region (from a job, a parallel iterator's closure, or a team
//!   member) runs inline on that member: `op`, then its own jobs, one after the other.
//!   Parallel iterators and `join` called from a job run as tasks of the job's thread, which
//!   threads of the pool outside the scope's team, or done with their jobs, may take.
//! - The members that run jobs are the region's team, which the runtime's policy sizes when the
//!   scope starts; they are not lent to other calls meanwhile, and while `op` runs the others
//!   wait for its spawns.
//! - `op` or a job that *blocks until another job has run* (a spin on a flag, a channel receive)
//!   hangs when no other member is free to run that job: with a team of one always (as in rayon
//!   with one thread). Let jobs hand results over through the scope's end instead.
//! - A scope's broadcast reaches the members of the scope's team, which the policy sized
//!   (rayon's reaches every thread of the pool): [`BroadcastContext::num_threads`] is the
//!   team's size, 1 for a scope run inline. A broadcast job that waits for the other members
//!   (a `std::sync::Barrier` of `num_threads`) needs them all free to reach it: member 0 only
//!   once `op` has returned, the others once their running job has. A
//!   [`broadcast`](asat_core::broadcast()) called from a job runs inline as a team of one, as
//!   nested calls do.
//! - Detached jobs (`spawn`, `spawn_fifo`, `spawn_broadcast` outside a scope, and their
//!   `ThreadPool` methods) are asat-core's: they run on threads of the runtime's own, not on a
//!   region's team (see [`asat_core::spawn`]).

use std::fmt;
use std::sync::Arc;

use asat_core::{BroadcastContext, Runtime};

mod pending;
mod queue;

pub use pending::current_thread_has_pending_tasks;
use queue::{Handle, Queue};

/// Runs `op` with a [`Scope`] whose spawned jobs run on the team of one region; returns what
/// `op` returns once every job has finished (rayon's `scope`). See the [module docs](self) for
/// how and where jobs run.
///
/// # Panics
///
/// If `op` or a job panics: the first panic is re-raised once every job has finished.
///
/// ```
/// let mut a = vec![0u64; 1000];
/// let mut b = vec![0u64; 1000];
/// let total = std::sync::atomic::AtomicU64::new(0);
/// asat_iter::scope(|s| {
///     s.spawn(|_| a.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64));
///     s.spawn(|s| {
///         b.iter_mut().for_each(|x| *x = 2);
///         // a job may spawn more jobs into the same scope
///         s.spawn(|_| {
///             total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         });
///     });
/// });
/// assert_eq!(a[999], 999);
/// assert_eq!(b[0], 2);
/// assert_eq!(total.into_inner(), 1);
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    in_place_scope(op)
}

/// [`scope`] with rayon's FIFO names: jobs spawned with [`ScopeFifo::spawn_fifo`] start in the
/// order they were spawned (as every scope's jobs do here: see the [module docs](self)).
///
/// ```
/// use std::sync::Mutex;
///
/// let order = Mutex::new(Vec::new());
/// asat_iter::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| {
///     asat_iter::scope_fifo(|s| {
///         for i in 0..5 {
///             let order = &order;
///             s.spawn_fifo(move |_| order.lock().unwrap().push(i));
///         }
///     });
/// });
/// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3, 4]);
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    in_place_scope_fifo(op)
}

/// [`scope`] whose `op` and result need not be `Send` (rayon's `in_place_scope`): `op` runs on
/// the calling thread, as every scope's does here.
///
/// ```
/// use std::rc::Rc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let local = Rc::new(5); // not Send
/// let total = AtomicUsize::new(0);
/// let r = asat_iter::in_place_scope(|s| {
///     for i in 0..*local {
///         let total = &total;
///         s.spawn(move |_| {
///             total.fetch_add(i, Ordering::Relaxed);
///         });
///     }
///     Rc::clone(&local)
/// });
/// assert_eq!((*r, total.into_inner()), (5, 10));
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    queue::run(
        Scope {
            queue: Queue::new(),
        },
        op,
    )
}

/// [`scope_fifo`] whose `op` and result need not be `Send` (rayon's `in_place_scope_fifo`).
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    queue::run(
        ScopeFifo {
            queue: Queue::new(),
        },
        op,
    )
}

/// A scope of spawned jobs, made by [`scope`] or [`in_place_scope`]: every job spawned into it
/// finishes before the call returns.
pub struct Scope<'scope> {
    queue: Queue<'scope, Scope<'scope>>,
}

/// A scope of jobs spawned in FIFO order, made by [`scope_fifo`] or [`in_place_scope_fifo`].
pub struct ScopeFifo<'scope> {
    queue: Queue<'scope, ScopeFifo<'scope>>,
}

impl<'scope> Handle<'scope> for Scope<'scope> {
    fn queue(&self) -> &Queue<'scope, Self> {
        &self.queue
    }
}

impl<'scope> Handle<'scope> for ScopeFifo<'scope> {
    fn queue(&self) -> &Queue<'scope, Self> {
        &self.queue
    }
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.queue.fmt(f)
    }
}

impl fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.queue.fmt(f)
    }
}

impl<'scope> Scope<'scope> {
    /// Queues `body` to run on a member of the scope's team before [`scope`] returns. It may
    /// borrow anything that outlives the scope, and spawn more jobs through the `&Scope` it is
    /// given. Jobs start in the order they were spawned (no order of completion is promised).
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.queue.push(Box::new(body));
    }

    /// Queues `body` to run once on every member of the scope's team before [`scope`]
    /// returns (rayon's `Scope::spawn_broadcast`), each time with a [`BroadcastContext`]
    /// giving the member's index in the team and the team's size. Each member runs the
    /// broadcasts queued for it in the order they were spawned, before other jobs it has not
    /// started; member 0 (the calling thread) once `op` has returned. See the
    /// [module docs](self) for which threads receive it.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// let pool = asat_iter::ThreadPoolBuilder::new()
    ///     .num_threads(3)
    ///     .policy(asat_core::Fixed::new(3))
    ///     .build()
    ///     .unwrap();
    /// let seen = AtomicUsize::new(0);
    /// pool.install(|| {
    ///     asat_iter::scope(|s| {
    ///         s.spawn_broadcast(|_, ctx| {
    ///             assert_eq!(ctx.num_threads(), 3);
    ///             seen.fetch_or(1 << ctx.index(), Ordering::Relaxed);
    ///         });
    ///     })
    /// });
    /// assert_eq!(seen.into_inner(), 0b111);
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.queue.push_broadcast(Arc::new(body));
    }
}

impl<'scope> ScopeFifo<'scope> {
    /// Queues `body` to run on a member of the scope's team before [`scope_fifo`] returns, as
    /// [`Scope::spawn`]: jobs start in the order they were spawned.
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        self.queue.push(Box::new(body));
    }

    /// [`Scope::spawn_broadcast`] in a FIFO scope: `body` runs once on every member of the
    /// scope's team, each member running its broadcasts in spawn order.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.queue.push_broadcast(Arc::new(body));
    }
}

/// rayon's `ThreadPool` scope methods on a [`Runtime`] (asat's `ThreadPool`), in the prelude:
/// each runs the function of the same name on the runtime, so its region is the runtime's:
/// `scope` and `scope_fifo` on a thread of the runtime ([`Runtime::install`]), the
/// `in_place_` ones on the calling thread ([`Runtime::install_here`]), as rayon's; and
/// `current_thread_has_pending_tasks`, about this runtime's scopes.
///
/// ```
/// use asat_iter::prelude::*;
///
/// let pool = asat_iter::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// let mut v = vec![0; 4];
/// pool.scope(|s| {
///     for (i, x) in v.iter_mut().enumerate() {
///         s.spawn(move |_| *x = i);
///     }
/// });
/// assert_eq!(v, [0, 1, 2, 3]);
/// ```
pub trait ThreadPoolScopes {
    /// [`scope`] on this runtime.
    fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send;

    /// [`scope_fifo`] on this runtime.
    fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send;

    /// [`in_place_scope`] on this runtime.
    fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R;

    /// [`in_place_scope_fifo`] on this runtime.
    fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R;

    /// [`current_thread_has_pending_tasks`], `None` unless the calling thread runs a member
    /// of one of this runtime's calls (rayon's `ThreadPool::current_thread_has_pending_tasks`).
    fn current_thread_has_pending_tasks(&self) -> Option<bool>;
}

impl ThreadPoolScopes for Runtime {
    fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| scope(op))
    }

    fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.install(|| scope_fifo(op))
    }

    fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        self.install_here(|| in_place_scope(op))
    }

    fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        self.install_here(|| in_place_scope_fifo(op))
    }

    fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        pending::on(self)
    }
}

#[cfg(test)]
mod tests;
