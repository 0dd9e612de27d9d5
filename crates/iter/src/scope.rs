//! `scope` and [`Scope::spawn`]: rayon's scoped tasks, on one region of the current runtime.
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
//! the scope. Everything is safe code: the queue holds boxed `FnOnce` jobs behind a mutex.
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
//!   member) runs inline on that member: `op`, then its own jobs, one after the other, as
//!   nested calls of this crate do. So do parallel iterators and `join` called from a job.
//! - The members that run jobs are the region's team, which the runtime's policy sizes when the
//!   scope starts; they are not lent to other calls meanwhile, and while `op` runs the others
//!   wait for its spawns.
//! - `op` or a job that *blocks until another job has run* (a spin on a flag, a channel receive)
//!   hangs when no other member is free to run that job: with a team of one always (as in rayon
//!   with one thread). Let jobs hand results over through the scope's end instead.
//! - Not here: rayon's `scope_fifo`, `in_place_scope`, `spawn_broadcast` and the
//!   `ThreadPool::scope` method (use `pool.install(|| scope(...))`).

use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard};

use asat_core::Runtime;

/// A spawned job.
type Job<'scope> = Box<dyn FnOnce(&Scope<'scope>) + Send + 'scope>;

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
    let scope = Scope::new();
    let op = Mutex::new(Some(op));
    let result = Mutex::new(None);
    let run_op = || {
        if let Some(op) = lock(&op).take() {
            if let Some(r) = scope.catching(|| op(&scope)) {
                *lock(&result) = Some(r);
            }
        }
        lock(&scope.state).op_done = true;
        // Members waiting for work may now be able to leave.
        scope.ready.notify_all();
    };
    Runtime::with_current(|rt| {
        if rt.max_threads() == 1 || asat_core::current_thread_index().is_some() {
            // Inline: `op`, then the jobs, on this thread (as a member, when it is not one).
            rt.alone(|| {
                run_op();
                scope.work();
            });
        } else {
            rt.region(|team| {
                if team.index() == 0 {
                    run_op();
                }
                scope.work();
            });
        }
    });
    if let Some(p) = scope.panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
        resume_unwind(p);
    }
    match result.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(r) => r,
        None => unreachable!("scope: `op` returned without a panic, so its result is kept"),
    }
}

/// A scope of spawned jobs, made by [`scope`]: every job spawned into it finishes before
/// `scope` returns.
pub struct Scope<'scope> {
    state: Mutex<State<'scope>>,
    /// Signalled when a job is queued and when the scope may be over.
    ready: Condvar,
    /// The first panic of `op` or a job.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// What the members of a scope share.
struct State<'scope> {
    queue: VecDeque<Job<'scope>>,
    /// Jobs queued or running.
    pending: usize,
    /// Whether `op` has returned (or panicked).
    op_done: bool,
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("Scope")
            .field("queued", &state.queue.len())
            .field("pending", &state.pending)
            .field("op_done", &state.op_done)
            .finish()
    }
}

impl<'scope> Scope<'scope> {
    fn new() -> Self {
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

    /// Queues `body` to run on a member of the scope's team before [`scope`] returns. It may
    /// borrow anything that outlives the scope, and spawn more jobs through the `&Scope` it is
    /// given. Jobs start in the order they were spawned (no order of completion is promised).
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        let mut state = lock(&self.state);
        state.queue.push_back(Box::new(body));
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

    /// A member's part: runs queued jobs until `op` has returned and no job is queued or
    /// running. Never unwinds (jobs run under `catching`).
    fn work(&self) {
        let mut state = lock(&self.state);
        loop {
            if let Some(job) = state.queue.pop_front() {
                drop(state);
                self.catching(|| job(self));
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

/// Locks `m`, also when a panic poisoned it (every panic here is caught and re-raised by
/// `scope`; the data stays consistent).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::prelude::*;
    use crate::testing::on_every_team;

    /// Spawns a binary tree of jobs `depth` deep below each call, counting the leaves.
    fn tree<'s>(s: &Scope<'s>, depth: u32, leaves: &'s AtomicUsize) {
        if depth == 0 {
            leaves.fetch_add(1, Ordering::Relaxed);
            return;
        }
        for _ in 0..2 {
            s.spawn(move |s| tree(s, depth - 1, leaves));
        }
    }

    #[test]
    fn every_job_runs_before_scope_returns() {
        on_every_team(|k| {
            let leaves = AtomicUsize::new(0);
            let mut parts = vec![Vec::new(); 8];
            let r = scope(|s| {
                tree(s, 6, &leaves);
                for (i, part) in parts.iter_mut().enumerate() {
                    s.spawn(move |_| part.extend(0..i));
                }
                "op's result"
            });
            assert_eq!(r, "op's result");
            assert_eq!(leaves.load(Ordering::Relaxed), 64, "team {k}");
            assert!(parts
                .iter()
                .enumerate()
                .all(|(i, p)| *p == (0..i).collect::<Vec<_>>()));
        });
    }

    #[test]
    fn nested_scopes_and_calls_run_inline() {
        on_every_team(|k| {
            let total = AtomicUsize::new(0);
            scope(|s| {
                for i in 0..4usize {
                    let total = &total;
                    s.spawn(move |_| {
                        // a nested scope, and a parallel iterator, inside a job
                        scope(|inner| {
                            for j in 0..3 {
                                inner.spawn(move |_| {
                                    total.fetch_add(i * 10 + j, Ordering::Relaxed);
                                });
                            }
                        });
                        let sum: usize = (0..100usize).into_par_iter().sum();
                        total.fetch_add(sum, Ordering::Relaxed);
                    });
                }
            });
            let want = (0..4).map(|i| 3 * i * 10 + 3).sum::<usize>() + 4 * 4950;
            assert_eq!(total.load(Ordering::Relaxed), want, "team {k}");
            // a scope inside a parallel iterator's closure
            let n: usize = (0..8usize)
                .into_par_iter()
                .map(|i| {
                    let c = AtomicUsize::new(0);
                    scope(|s| {
                        (0..i).for_each(|_| {
                            s.spawn(|_| {
                                c.fetch_add(1, Ordering::Relaxed);
                            })
                        })
                    });
                    c.into_inner()
                })
                .sum();
            assert_eq!(n, 28);
        });
    }

    #[test]
    fn panics_propagate_after_every_job_has_run() {
        on_every_team(|k| {
            let ran = AtomicUsize::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                scope(|s| {
                    for i in 0..20 {
                        let ran = &ran;
                        s.spawn(move |_| {
                            ran.fetch_add(1, Ordering::Relaxed);
                            if i == 5 {
                                panic!("job 5");
                            }
                        });
                    }
                })
            }));
            assert_eq!(
                *r.unwrap_err().downcast_ref::<&str>().unwrap(),
                "job 5",
                "team {k}"
            );
            assert_eq!(ran.load(Ordering::Relaxed), 20);
            // a panic in `op` still lets its spawned jobs run
            let ran = AtomicUsize::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                scope(|s| {
                    s.spawn(|_| {
                        ran.fetch_add(1, Ordering::Relaxed);
                    });
                    panic!("op");
                })
            }));
            assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "op");
            assert_eq!(ran.load(Ordering::Relaxed), 1);
            // still usable
            assert_eq!(
                scope(|s| {
                    s.spawn(|_| {});
                    3
                }),
                3
            );
        });
    }
}
