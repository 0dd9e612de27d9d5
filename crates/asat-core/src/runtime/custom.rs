//! Workers on threads the user starts: [`ThreadBuilder`], which a
//! [spawn handler](crate::ThreadPoolBuilder::spawn_handler) is given once per worker at build,
//! and the build step that hands them out.
//!
//! # Protocol
//!
//! A runtime built by [`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder) (or
//! `build_scoped`) does not start threads itself: at build it hands the handler one
//! [`ThreadBuilder`] per worker, `1..max_threads` in order, and the handler's thread runs the
//! worker by calling [`ThreadBuilder::run`]. So every worker exists from the build, step 2 of the
//! [region protocol](super) starts none, and the handler is never called again. Until its thread
//! calls `run`, a worker is one that is not on a CPU yet: a post to it waits in its mailbox, loops
//! revoke it (step 5) and run that member on the starting thread, and an SPMD region, which never
//! revokes, waits for the thread to call `run`. A [`ThreadBuilder`] dropped without `run` (a
//! handler that gave up on it) is a worker that never comes: later regions' teams stop below it, as
//! they do below a worker the system refused to start (only a region posted before the drop could
//! still wait for it). At shutdown the workers are told to stop as any are, but not joined: there
//! is no handle to join. `run` returns once the shutdown is seen, at once on a thread that calls it
//! only after the shutdown. In a `fork`ed child these workers do not exist either, and regions run
//! inline, as for every runtime.
//!
//! A handler-spawned worker runs `Inner::worker_main` as any worker does, so steps
//! 3-5 of the region protocol are unchanged: a late `run` finds its mailbox's event moved and
//! claims the post, if it is still `POSTED`, or finds the shutdown flag.

use std::io;

use super::*;
use crate::Error;

/// One worker of a pool, handed to a [spawn handler](crate::ThreadPoolBuilder::spawn_handler)
/// at build (rayon's `ThreadBuilder`): the handler starts a thread that calls
/// [`run`](ThreadBuilder::run), which runs the worker until the pool shuts down.
///
/// A pool of `num_threads` threads has workers `1..num_threads`: the thread that starts a
/// parallel call is its member 0 (see [`ThreadPoolBuilder`](crate::ThreadPoolBuilder)), so the
/// handler is called `num_threads - 1` times, where rayon calls it `num_threads` times.
///
/// - **Not yet running.** Until its thread calls `run`, the worker is one that is not on a
///   CPU yet: parallel loops and iterators run its share on the calling thread instead, but
///   an SPMD region ([`Runtime::region`], [`Runtime::region_of`],
///   [`broadcast`](crate::broadcast())), whose members may wait for each other, waits for
///   every member of its team, this one included.
/// - **Never running.** A `ThreadBuilder` dropped without `run` (the handler, or its thread,
///   gave up) is a worker that never comes: regions started after the drop have teams of the
///   workers below its index only, as when the system refuses to start a thread (counted in
///   [`RuntimeStats::spawn_failures`]). One kept without ever calling `run` keeps SPMD regions
///   waiting, as a rayon pool waits for its threads.
/// - **Shutdown.** Dropping the pool (its last job, when [spawned](crate::spawn) jobs are
///   still pending: see [`spawn`](crate::spawn)) makes `run` return, at once on a thread that
///   calls it only after that; the pool does not join the handler's threads. Detached jobs
///   ([`spawn`](crate::spawn)) and the closures of [`install`](Runtime::install) do not run on
///   these threads: they run on threads the pool starts itself, as without a handler.
/// - `run` must be called on a thread of its own: called on the thread that builds the pool,
///   it would never return (the build waits for the handler).
///
/// ```
/// use std::sync::Mutex;
/// use std::thread;
///
/// let threads = Mutex::new(Vec::new());
/// let pool = asat_core::ThreadPoolBuilder::new()
///     .num_threads(3)
///     .thread_name(|i| format!("mine-{i}"))
///     .spawn_handler(|thread| {
///         assert_eq!(thread.name(), Some(format!("mine-{}", thread.index()).as_str()));
///         let mut b = thread::Builder::new();
///         if let Some(name) = thread.name() {
///             b = b.name(name.to_owned());
///         }
///         threads.lock().unwrap().push(b.spawn(move || thread.run())?);
///         Ok(())
///     })
///     .build()?;
/// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
/// drop(pool); // every `run` returns
/// for t in threads.into_inner().unwrap() {
///     t.join().unwrap();
/// }
/// # Ok::<(), asat_core::Error>(())
/// ```
pub struct ThreadBuilder {
    inner: Arc<Inner>,
    index: usize,
    name: Option<String>,
    stack_size: Option<usize>,
    /// Whether [`run`](ThreadBuilder::run) was called (else the drop loses the worker).
    ran: bool,
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("index", &self.index)
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish_non_exhaustive()
    }
}

impl ThreadBuilder {
    /// The worker's index in the pool, `1..num_threads` (rayon's
    /// `current_thread_index` on a pool thread; here, the member index it has in teams that
    /// include it).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The name the pool's builder gives this worker's thread
    /// ([`thread_name`](crate::ThreadPoolBuilder::thread_name)), if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The stack size the pool's builder asks for
    /// ([`stack_size`](crate::ThreadPoolBuilder::stack_size)), if it was set.
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// Runs the worker on the calling thread until the pool shuts down: the builder's start
    /// handler, then the members of the regions posted to it, then the exit handler, as on
    /// the threads a pool starts itself. While it runs, the pool is installed on the thread
    /// (as by [`install_here`](Runtime::install_here)); afterwards the thread is as it was (no
    /// runtime installed by this, no CPU placement left by the policy), and may go on.
    pub fn run(mut self) {
        self.ran = true;
        let inner = Arc::clone(&self.inner);
        let index = self.index;
        drop(self);
        // A policy's placement pins a worker for its life; this thread outlives the worker.
        let mask = affinity::get().ok();
        // Regions this thread starts while it is a worker run inline (set by `worker_main`);
        // afterwards it starts them as any thread does.
        let in_region = InRegion::enter();
        worker_thread(inner, index);
        drop(in_region);
        if PINNED.with(|p| p.take()).is_some() {
            if let Some(mask) = mask {
                // Best effort, as for a region's starting thread.
                let _ = affinity::set(&mask);
            }
        }
    }
}

impl Drop for ThreadBuilder {
    fn drop(&mut self) {
        if !self.ran {
            self.inner.lose_worker(self.index);
        }
    }
}

impl Inner {
    /// Worker `index` will never run: later teams stop below it.
    fn lose_worker(&self, index: usize) {
        self.lost_from.fetch_min(index, Ordering::Relaxed);
        self.stats.spawn_failures.fetch_add(1, Ordering::Relaxed);
    }
}

impl Runtime {
    /// Starts every worker (`1..max_threads`, in order) through `spawn`, on a runtime just
    /// built, before any region. An error names the first worker the handler failed to start;
    /// the workers started before it stop once the caller drops the runtime.
    pub(crate) fn start_workers_with(
        &self,
        spawn: &mut dyn FnMut(ThreadBuilder) -> io::Result<()>,
    ) -> Result<(), Error> {
        let inner = &self.inner;
        for index in 1..inner.max_threads {
            let thread = ThreadBuilder {
                inner: Arc::clone(inner),
                index,
                name: inner.hooks.user_thread_name(index),
                stack_size: inner.hooks.stack_size,
                ran: false,
            };
            // The region lock is not held while the handler (user code) runs.
            spawn(thread).map_err(|e| Error::spawn_handler(index, inner.max_threads, e))?;
            let mut threads = inner.threads.lock();
            threads.workers.push(None);
            inner
                .workers_started
                .store(threads.workers.len(), Ordering::Relaxed);
        }
        Ok(())
    }
}
