//! rayon's custom thread spawning: [`ThreadPoolBuilder::spawn_handler`] and
//! [`ThreadPoolBuilder::build_scoped`], with the [`ThreadBuilder`] a handler is given and the
//! builder's type parameter ([`DefaultSpawn`], [`CustomSpawn`]).
//!
//! Without a handler a pool starts its workers itself, lazily, as regions need them. With one,
//! it starts them all at build through the handler (workers `1..num_threads`: the thread that
//! starts a parallel call is member 0 of its team, so the handler is called `num_threads - 1`
//! times where rayon calls it `num_threads` times), and never calls it again. What a worker
//! that is slow to call [`ThreadBuilder::run`], or never calls it, does to the pool's calls is
//! on [`ThreadBuilder`]; the protocol is in the [`Runtime`](crate::Runtime) module's docs.
//!
//! The threads that run detached jobs ([`spawn`](crate::spawn)) and the closures of
//! [`install`](crate::Runtime::install) are started from whichever thread spawns a job or
//! installs, at any time, which a handler (called during the build only, and neither `Send`
//! nor `'static`) cannot serve: they stay the pool's own threads, handler or not, so
//! thread-locals the handler sets around [`ThreadBuilder::run`] are seen by the members of
//! the pool's calls but not by an `install`'s closure (rayon runs that on one of the handler's
//! threads).

use std::fmt;
use std::io;
use std::thread;

use crate::{Error, Runtime, ThreadBuilder, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

/// The pool starts its threads itself, lazily (the type parameter of a plain
/// [`ThreadPoolBuilder`], as rayon's `DefaultSpawn`).
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultSpawn;

/// The pool's threads are started by a user's handler at build (the type parameter of a
/// [`ThreadPoolBuilder`] given a [`spawn_handler`](ThreadPoolBuilder::spawn_handler), as
/// rayon's `CustomSpawn`).
pub struct CustomSpawn<F>(F);

impl<F> fmt::Debug for CustomSpawn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomSpawn")
    }
}

/// What starts a pool's threads: implemented by [`DefaultSpawn`] and [`CustomSpawn`] only.
/// Public in a private module: nameable by no one outside, so no one implements it.
pub trait ThreadSpawn {
    /// Starts the workers of `rt`, just built, that must exist before it is used.
    #[doc(hidden)]
    fn start(&mut self, rt: &Runtime) -> Result<(), Error>;
}

impl ThreadSpawn for DefaultSpawn {
    fn start(&mut self, _rt: &Runtime) -> Result<(), Error> {
        // Workers start lazily, with the regions that need them.
        Ok(())
    }
}

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn start(&mut self, rt: &Runtime) -> Result<(), Error> {
        rt.start_workers_with(&mut self.0)
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// Starts the pool's threads with `spawn` instead of `std::thread` (rayon's
    /// `spawn_handler`): at build, `spawn` is called once per worker, in index order
    /// (`1..num_threads`: `num_threads - 1` calls, since the thread that starts a parallel call
    /// is member 0 of its team), with a [`ThreadBuilder`] that tells the worker's index, name
    /// and stack size. It must start a thread that calls [`ThreadBuilder::run`] and return
    /// `Ok`; an error ends the build with an error naming the worker and carrying `spawn`'s
    /// error as its [`source`](std::error::Error::source), and a panic propagates from
    /// `build`; either way the threads already started stop. The handler does not name the
    /// threads or size their stacks unless it applies [`ThreadBuilder::name`] and
    /// [`ThreadBuilder::stack_size`] itself.
    ///
    /// The pool does not join these threads: dropping it makes every `run` return, and the
    /// threads then do whatever follows. Detached jobs ([`spawn`](crate::spawn)) and the
    /// closures of [`install`](crate::Runtime::install) still run on threads the pool starts
    /// itself, which a handler called only at build could not serve.
    /// With [`build_global`](ThreadPoolBuilder::build_global), the threads serve the global
    /// runtime for the rest of the process. See [`ThreadBuilder`] for a thread that is slow
    /// to call `run`, or never calls it.
    ///
    /// ```
    /// use std::sync::Mutex;
    ///
    /// let handles = Mutex::new(Vec::new());
    /// let pool = asat_core::ThreadPoolBuilder::new()
    ///     .num_threads(4)
    ///     .spawn_handler(|thread| {
    ///         let index = thread.index();
    ///         let handle = std::thread::spawn(move || thread.run());
    ///         handles.lock().unwrap().push((index, handle));
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// let indices: Vec<usize> = handles.lock().unwrap().iter().map(|(i, _)| *i).collect();
    /// assert_eq!(indices, [1, 2, 3]);
    /// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2, 3]);
    /// drop(pool);
    /// for (_, handle) in handles.into_inner().unwrap() {
    ///     handle.join().unwrap(); // `run` has returned
    /// }
    ///
    /// let err = asat_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(|_| Err(std::io::Error::other("no threads today")))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.to_string().starts_with("spawn_handler failed to start pool thread 1"));
    /// assert!(err.to_string().ends_with("no threads today"));
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        self.with_spawn(CustomSpawn(spawn))
    }
}

impl ThreadPoolBuilder {
    /// Builds a pool whose threads are scoped threads ([`std::thread::scope`]) that each run
    /// `wrapper(thread)`, calls `with_pool` with it, then drops the pool and returns what
    /// `with_pool` returned once every one of its threads has exited (rayon's `build_scoped`).
    /// `wrapper` must call [`thread.run()`](ThreadBuilder::run), typically with something set
    /// up around it (a scoped thread-local); the threads get the builder's names and stack
    /// size. So the pool's workers may borrow from the caller's stack, and what `wrapper`
    /// sets up is seen by region members `1..` (member 0 is the thread that starts the
    /// region: inside `with_pool`, the caller).
    ///
    /// A build error (a thread the system refused to start) is returned, after the threads
    /// already started have exited. A panic in `with_pool` propagates, after the same. Jobs
    /// [spawned](crate::spawn) on the pool and still pending when `with_pool` returns keep its
    /// workers, and so this call, until the last of them ends (see [`spawn`](crate::spawn)).
    ///
    /// ```
    /// use std::cell::Cell;
    ///
    /// thread_local!(static SETUP: Cell<bool> = const { Cell::new(false) });
    ///
    /// let seen = asat_core::ThreadPoolBuilder::new()
    ///     .num_threads(3)
    ///     .build_scoped(
    ///         |thread| {
    ///             SETUP.with(|s| s.set(true));
    ///             thread.run();
    ///         },
    ///         |pool| pool.broadcast(|_| SETUP.with(Cell::get)),
    ///     )?;
    /// assert_eq!(seen, [false, true, true]); // member 0 is this thread
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        let wrapper = &wrapper;
        thread::scope(|scope| {
            let pool = self
                .spawn_handler(|thread| {
                    let mut b = thread::Builder::new();
                    if let Some(name) = thread.name() {
                        // std refuses names with a NUL byte (as the pool's own threads do).
                        b = b.name(name.replace('\0', ""));
                    }
                    if let Some(bytes) = thread.stack_size() {
                        b = b.stack_size(bytes);
                    }
                    b.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            // On a panic, `pool` is dropped while unwinding: the workers stop, and the scope
            // waits for their threads before it re-raises the panic.
            let result = with_pool(&pool);
            drop(pool);
            Ok(result)
        })
    }
}
