//! `scope`, `scope_fifo`, `in_place_scope`, `in_place_scope_fifo` and their spawns: rayon's
//! scoped tasks, from asat-core ([`asat_core::Scope`] tells how they run: spawned jobs are
//! tasks of the work-stealing engine, stolen by any thread of the pool, also from inside
//! another job), with rayon's `ThreadPool` methods for them as [`ThreadPoolScopes`].

use asat_core::Runtime;

pub use asat_core::{
    current_thread_has_pending_tasks, in_place_scope, in_place_scope_fifo, scope, scope_fifo,
    Scope, ScopeFifo,
};

/// rayon's `ThreadPool` scope methods on a [`Runtime`] (asat's `ThreadPool`), in the prelude:
/// each is the runtime's own method of the same name ([`Runtime::scope`] and the others),
/// kept as a trait so that code written against it goes on compiling.
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

    /// [`current_thread_has_pending_tasks`], `None` unless the calling thread runs this
    /// runtime's tasks (rayon's `ThreadPool::current_thread_has_pending_tasks`).
    fn current_thread_has_pending_tasks(&self) -> Option<bool>;
}

impl ThreadPoolScopes for Runtime {
    fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        Runtime::scope(self, op)
    }

    fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        Runtime::scope_fifo(self, op)
    }

    fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        Runtime::in_place_scope(self, op)
    }

    fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        Runtime::in_place_scope_fifo(self, op)
    }

    fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        Runtime::current_thread_has_pending_tasks(self)
    }
}

#[cfg(test)]
mod tests;
