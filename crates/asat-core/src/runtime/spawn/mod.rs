//! Detached jobs: [`Runtime::spawn`] and [`Runtime::spawn_fifo`] (rayon's `spawn` and
//! `spawn_fifo`), the threads that run them, [`yield_now`] / [`yield_local`], and
//! [`Runtime::install`], whose closure is a job of the same queue that its caller waits for
//! (the `install` module).
//!
//! What a user sees (order, what a job sees, panics, drop, limits) is documented on the
//! public [`spawn`] function; this is the protocol behind it.
//!
//! # The spawn pool
//!
//! A runtime's workers only ever run members of its regions, so detached jobs get threads of
//! their own: each runtime has a **spawn pool**, one mutex over a FIFO queue of boxed jobs and
//! the counts below, and a condition variable idle threads wait on.
//!
//! - `threads`: spawn threads alive or being started (at most `max_threads`); each holds a
//!   *slot* in `0..max_threads` that no other one holds (its index for names and handlers)
//!   from its start until it decides to exit; its exit handler runs after that, so it may
//!   overlap the start of the next thread given the slot. `idle`: those waiting. `running`:
//!   jobs running (on spawn threads, in a [`yield_now`], or on a spawner when no thread could
//!   start).
//! - **Push.** The job goes to the back. If the queue holds no more jobs than there are idle
//!   threads, one is notified (each queued job then has a waiting thread to take it; a thread
//!   only waits when it found the queue empty under the lock). Otherwise, below `max_threads`,
//!   a slot is reserved under the lock and the thread started outside it (the name function is
//!   user code); at `max_threads`, a thread that ends its job takes it.
//! - **Take.** A spawn thread pops from the front, counts the job as running, runs it with the
//!   lock released, and loops. With the queue empty it waits up to [`SPAWN_IDLE_EXIT`]; after
//!   a wait that timed out with the queue still empty it exits, giving back its slot and
//!   `threads` in the critical section where it decided to, so that a later push starts
//!   another thread.
//! - **Owner's drop.** Runtime handles carry an `owner` flag: the user's handle has it; the
//!   handles spawn threads and workers install on themselves do not (their drop does nothing).
//!   The owner's drop sets `owner_dropped` under the lock. With nothing queued or running it
//!   also sets `closed`, wakes the idle threads, joins every spawn thread and then stops the
//!   workers. Otherwise it returns at once, and the spawn thread that finds the queue empty
//!   and nothing running after `owner_dropped` (it ended the last job) sets `closed`, wakes the
//!   others, which exit, and stops the workers itself; nobody joins the spawn threads then.
//!   `closed` is set once, under the lock, so exactly one thread stops the workers. The state
//!   lives until the last handle (a spawn thread's, or a worker's) is dropped.
//! - **Failures.** A spawn thread the system refuses to start gives its slot back; no start is
//!   tried again for a second; with no spawn thread alive, the spawner runs the queued jobs.
//! - **Fork.** In a `fork`ed child the parent's spawn threads do not exist and its lock may be
//!   held: a job there runs on a thread of its own, and the pool is never touched.

use std::any::Any;
use std::collections::VecDeque;

use parking_lot::{Condvar, MutexGuard};

use super::*;
use crate::payload::{catch, drop_payload};
use crate::runtime::current;

mod install;

/// How long a spawn thread waits for a job before it exits.
pub const SPAWN_IDLE_EXIT: Duration = Duration::from_secs(1);

/// A detached job.
type Job = crate::sys::handoff::Job;

thread_local! {
    /// The runtime ([`Inner::id`]) whose spawn thread this thread is; 0 on other threads.
    static SPAWN_THREAD_OF: Cell<usize> = const { Cell::new(0) };
}

/// A runtime's spawn pool (see the module docs).
#[derive(Default)]
pub(super) struct Spawner {
    state: Mutex<State>,
    /// Signalled when a job is queued for an idle thread, and when the pool closes.
    ready: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    /// `slots[s]`: a live spawn thread has slot `s` (grown to `max_threads` on first use).
    slots: Vec<bool>,
    /// Spawn threads alive or being started.
    threads: usize,
    /// Spawn threads waiting for a job.
    idle: usize,
    /// Jobs running.
    running: usize,
    /// The owner's handle was dropped: the thread that ends the last job closes the pool.
    owner_dropped: bool,
    /// No job will be queued any more; spawn threads exit.
    closed: bool,
    /// Of the spawn threads started (finished ones are pruned when a thread starts).
    handles: Vec<std::thread::JoinHandle<()>>,
    /// When a spawn thread last failed to start (no new attempt for [`SPAWN_RETRY`]).
    failed_at: Option<Instant>,
    /// A failure to start a spawn thread was reported on standard error.
    reported: bool,
}

impl fmt::Debug for Spawner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state.lock();
        f.debug_struct("Spawner")
            .field("queued", &st.queue.len())
            .field("threads", &st.threads)
            .field("running", &st.running)
            .finish_non_exhaustive()
    }
}

impl Spawner {
    /// The owner's handle is being dropped: closes the pool and joins its (idle) threads when
    /// no job is queued or running, and returns `true` (the caller then stops the workers);
    /// otherwise returns `false`, and the thread that ends the last job will.
    pub(super) fn release_owner(&self) -> bool {
        let mut st = self.state.lock();
        st.owner_dropped = true;
        if !st.queue.is_empty() || st.running > 0 {
            return false;
        }
        st.closed = true;
        let handles = std::mem::take(&mut st.handles);
        drop(st);
        self.ready.notify_all();
        for h in handles {
            let _ = h.join();
        }
        true
    }
}

/// What [`yield_now`] and [`yield_local`] did (rayon's `Yield`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yield {
    /// A queued job was run.
    Executed,
    /// There was nothing to run.
    Idle,
}

impl Runtime {
    /// Queues `op` to run asynchronously on one of the runtime's spawn threads (rayon's
    /// `ThreadPool::spawn`) and returns at once. Jobs start in the order they were spawned;
    /// at most `max_threads` run at once; each runs with this runtime installed. See the
    /// [`spawn`](crate::spawn) function for what a job sees, and what happens to its panic
    /// and to jobs still queued when the runtime is dropped.
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let (tx, rx) = mpsc::channel();
    /// for i in 0..4u64 {
    ///     let tx = tx.clone();
    ///     pool.spawn(move || tx.send(i * i).unwrap());
    /// }
    /// let wait = std::time::Duration::from_secs(60);
    /// let mut got: Vec<u64> = (0..4).map(|_| rx.recv_timeout(wait).unwrap()).collect();
    /// got.sort();
    /// assert_eq!(got, [0, 1, 4, 9]);
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.push_job(Box::new(op));
    }

    /// [`spawn`](Runtime::spawn) under rayon's FIFO name (`ThreadPool::spawn_fifo`): jobs start
    /// in the order they were spawned, as every spawned job's does here.
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.push_job(Box::new(op));
    }

    /// Rayon's `ThreadPool::yield_now`: on a spawn thread of this runtime (inside a job, not
    /// inside a parallel call), runs the oldest queued job, if any, before returning. `None`
    /// when the calling thread belongs to neither this runtime's teams nor its spawn threads;
    /// `Some(Yield::Idle)` on a member of one of its calls (members have no queue: they do not
    /// take detached jobs).
    pub fn yield_now(&self) -> Option<Yield> {
        let member = current::member();
        if member.is_some_and(|m| m.of(&self.inner)) {
            return Some(Yield::Idle);
        }
        if SPAWN_THREAD_OF.with(Cell::get) != self.id() {
            return None;
        }
        Some(match member {
            Some(_) => Yield::Idle,
            None => self.run_one_job(),
        })
    }

    /// Rayon's `ThreadPool::yield_local`: asat has no per-thread queues, so there is never
    /// local work: `Some(Yield::Idle)` on this runtime's members and spawn threads, `None`
    /// elsewhere.
    pub fn yield_local(&self) -> Option<Yield> {
        self.runs_on_this_thread().then_some(Yield::Idle)
    }

    /// Whether the calling thread belongs to this runtime: a member of one of its calls, or
    /// one of its spawn threads.
    pub(crate) fn runs_on_this_thread(&self) -> bool {
        current::member().is_some_and(|m| m.of(&self.inner))
            || SPAWN_THREAD_OF.with(Cell::get) == self.id()
            || crate::runtime::resident::is_of(&self.inner)
    }

    fn push_job(&self, job: Job) {
        if self.forked() {
            return self.run_on_own_thread(job);
        }
        let inner = &*self.inner;
        let mut st = inner.spawner.state.lock();
        if st.closed {
            // The runtime is shutting down (only the owner's drop and the end of the last job
            // after it close the pool): a spawn now comes from a thread's exit handler. Run it
            // here rather than lose it.
            drop(st);
            return self.run_job(job);
        }
        st.queue.push_back(job);
        if st.queue.len() <= st.idle {
            // Every queued job has a waiting thread to take it.
            drop(st);
            inner.spawner.ready.notify_one();
            return;
        }
        if st.threads >= inner.max_threads {
            // A running thread takes it when its job ends.
            return;
        }
        if let Some(at) = st.failed_at {
            if at.elapsed() < SPAWN_RETRY {
                self.run_if_no_thread(st);
                return;
            }
        }
        // Reserve a slot, then start the thread outside the lock (its name is user code).
        if st.slots.len() < inner.max_threads {
            st.slots.resize(inner.max_threads, false);
        }
        let Some(slot) = st.slots.iter().position(|used| !used) else {
            unreachable!("fewer spawn threads than max_threads, so a slot is free")
        };
        st.slots[slot] = true;
        st.threads += 1;
        st.handles.retain(|h| !h.is_finished());
        drop(st);
        let started = self.start_spawn_thread(slot);
        let mut st = inner.spawner.state.lock();
        match started {
            Ok(h) => st.handles.push(h),
            Err(e) => {
                st.slots[slot] = false;
                st.threads -= 1;
                st.failed_at = Some(Instant::now());
                inner.stats.spawn_failures.fetch_add(1, Ordering::Relaxed);
                if !std::mem::replace(&mut st.reported, true) {
                    eprintln!(
                        "asat-core: the system refused to start a thread for spawned jobs \
                         ({e}); they wait for the spawn threads that did start, or run on the \
                         thread that spawns them when none did (see \
                         RuntimeStats::spawn_failures)"
                    );
                }
                self.run_if_no_thread(st);
            }
        }
    }

    /// With no spawn thread alive, runs every queued job on the calling thread, oldest first
    /// (a spawn thread could not be started: see the module docs).
    fn run_if_no_thread(&self, mut st: MutexGuard<'_, State>) {
        while st.threads == 0 {
            let Some(job) = st.queue.pop_front() else {
                break;
            };
            st.running += 1;
            MutexGuard::unlocked(&mut st, || self.run_job(job));
            st.running -= 1;
        }
    }

    /// Starts the spawn thread of `slot`.
    fn start_spawn_thread(&self, slot: usize) -> std::io::Result<std::thread::JoinHandle<()>> {
        let hooks = &self.inner.hooks;
        // A name function that panics gives an unnamed thread; std refuses a NUL byte.
        let mut name = catch(|| hooks.spawn_thread_name(slot)).unwrap_or_default();
        name.retain(|c| c != '\0');
        let mut b = std::thread::Builder::new().name(name);
        if let Some(s) = hooks.stack_size {
            b = b.stack_size(s);
        }
        let rt = Runtime::handle(Arc::clone(&self.inner));
        b.spawn(move || rt.serve(slot))
    }

    /// A spawn thread's life: start handler, jobs until idle for [`SPAWN_IDLE_EXIT`] or the
    /// pool closes, then (when it ended the last job after the owner's drop) the workers'
    /// shutdown, and the exit handler.
    fn serve(&self, slot: usize) {
        SPAWN_THREAD_OF.with(|s| s.set(self.id()));
        let hooks = &self.inner.hooks;
        if let Some(h) = &hooks.on_start {
            let _ = catch(|| h(slot));
        }
        if self.take_jobs(slot) {
            self.inner.shutdown_workers();
        }
        if let Some(h) = &hooks.on_stop {
            let _ = catch(|| h(slot));
        }
    }

    /// Runs queued jobs until the thread should exit; gives its slot back. Returns whether this
    /// thread closed the pool after the owner's drop (it must then stop the workers).
    fn take_jobs(&self, slot: usize) -> bool {
        let sp = &self.inner.spawner;
        let mut st = sp.state.lock();
        let mut timed_out = false;
        let last = loop {
            if let Some(job) = st.queue.pop_front() {
                st.running += 1;
                MutexGuard::unlocked(&mut st, || self.run_job(job));
                st.running -= 1;
                timed_out = false;
                continue;
            }
            if st.closed {
                break false;
            }
            if st.owner_dropped && st.running == 0 {
                st.closed = true;
                sp.ready.notify_all();
                break true;
            }
            if timed_out {
                break false;
            }
            st.idle += 1;
            timed_out = sp.ready.wait_for(&mut st, SPAWN_IDLE_EXIT).timed_out();
            st.idle -= 1;
        };
        // In the same critical section as the decision to exit: a spawn that comes after it
        // sees one thread fewer and starts another if needed.
        st.threads -= 1;
        st.slots[slot] = false;
        last
    }

    /// Runs the oldest queued job on the calling thread ([`Runtime::yield_now`]).
    fn run_one_job(&self) -> Yield {
        if self.forked() {
            return Yield::Idle;
        }
        let mut st = self.inner.spawner.state.lock();
        let Some(job) = st.queue.pop_front() else {
            return Yield::Idle;
        };
        st.running += 1;
        MutexGuard::unlocked(&mut st, || self.run_job(job));
        st.running -= 1;
        Yield::Executed
    }

    /// Runs `job` with this runtime installed; hands its panic to the panic handler.
    fn run_job(&self, job: Job) {
        // As a spawn thread of this runtime, also on a thread that queued the job and runs it
        // itself (no spawn thread could start, or the pool closed): the calls it makes then
        // stay here instead of being handed to the spawn pool again (`hands_calls_over`),
        // which would run them here again, without end.
        let was = SPAWN_THREAD_OF.with(|s| s.replace(self.id()));
        let ran = catch_unwind(AssertUnwindSafe(|| self.install_here(job)));
        SPAWN_THREAD_OF.with(|s| s.set(was));
        if let Err(payload) = ran {
            self.inner.job_panicked(payload);
        }
    }

    /// In a `fork`ed child: runs `job` on a thread of its own, or here if none can start.
    fn run_on_own_thread(&self, job: Job) {
        let cell = Arc::new(Mutex::new(Some(job)));
        let theirs = Arc::clone(&cell);
        let rt = Runtime::handle(Arc::clone(&self.inner));
        let run = move || {
            if let Some(job) = theirs.lock().take() {
                rt.run_job(job);
            }
        };
        if std::thread::Builder::new().spawn(run).is_err() {
            let job = cell.lock().take();
            if let Some(job) = job {
                self.run_job(job);
            }
        }
    }
}

impl Inner {
    /// A spawned job panicked with `payload` (see the module docs).
    fn job_panicked(&self, payload: Box<dyn Any + Send>) {
        self.stats.spawn_panics.fetch_add(1, Ordering::Relaxed);
        match &self.hooks.panic_handler {
            Some(h) => {
                let _ = catch(|| h(payload));
            }
            None => drop_payload(payload),
        }
    }
}

/// Queues `op` to run asynchronously on a thread of the current runtime (rayon's `spawn`):
/// the runtime [installed](Runtime::install) on the calling thread (a job's own runtime inside
/// a job, the region's on a worker), else the global one. Returns at once; `op` runs later,
/// exactly once. [`Runtime::spawn`] queues on a given runtime.
///
/// # How jobs run
///
/// A runtime's workers only run members of its regions, so detached jobs run on **spawn
/// threads** of the runtime's own: up to `max_threads` of them, started when a job finds no
/// idle one, and exiting after [`SPAWN_IDLE_EXIT`] without work (an idle runtime keeps none,
/// and nothing waits for them at process exit).
///
/// - Jobs **start in the order they were spawned**, for `spawn` as for [`spawn_fifo`] (rayon
///   allows `spawn` any order); at most `max_threads` run at once, as in a rayon pool of that
///   size.
/// - A job runs with its runtime installed: the parallel calls it makes (iterators, `join`,
///   regions, [`broadcast`](crate::broadcast()), `spawn`) run on that runtime. They start
///   regions like any other thread, competing for the team with the runtime's other callers: a
///   region that finds another thread's region running waits at most
///   [`REGION_LOCK_WAIT`] and then runs inline on the job's thread
///   ([`RuntimeStats::inline_busy`]).
///
/// # What a job sees
///
/// - [`current_thread_index`](crate::current_thread_index) is `None`, outside the parallel
///   calls the job makes: a spawn thread is not a member of a team, and an index it held could
///   be held at the same moment by the team's member of that index. Inside a call it starts it
///   is member 0 of that call, as any thread starting a call is.
/// - [`current_num_threads`](crate::current_num_threads) is the runtime's `max_threads`.
/// - The builder's thread name, stack size and start/exit handlers apply to spawn threads,
///   with the thread's *slot* as index: a number in `0..max_threads` that no other spawn
///   thread of the runtime running jobs has (the exit handler of one that is leaving may
///   overlap the start of the next one given its slot), but that a worker may have (workers
///   are `1..max_threads`). The default name is `asat-spawn-{slot}`. The policy's thread
///   hooks and placements are for team members only and are not called.
///
/// # Panics
///
/// A job runs under `catch_unwind`. Its panic goes to the builder's
/// [`panic_handler`](crate::Builder::panic_handler) when there is one; otherwise it has been
/// reported by the panic hook (as any thread's panic is) and is only counted in
/// [`RuntimeStats::spawn_panics`]. Either way the spawn thread and the runtime go on. (rayon
/// aborts the process when a spawned job panics and no handler is set: a port that relied on
/// that should set a handler that aborts.)
///
/// # Dropping the runtime
///
/// Jobs spawned before the runtime is dropped still run, and may spawn more. The drop does
/// not wait for them: with no job queued or running it joins the spawn threads and the
/// workers, as before; otherwise the thread that ends the last job stops the workers and the
/// spawn threads exit by themselves.
///
/// # Limits
///
/// - Spawn threads come on top of the workers: a runtime whose regions and spawned jobs run
///   at once runs up to `2 * max_threads - 1` threads of its own, and its policy sizes teams
///   without counting the jobs (ASAT sees their load as any other load on the machine).
/// - A job that blocks until another job has run (a channel receive) is fine as long as fewer
///   than `max_threads` jobs block at once; with `max_threads` of them blocked the others stay
///   queued, as in a rayon pool of that size. [`yield_now`] in a job runs a queued job.
/// - When the system refuses to start a spawn thread (counted in
///   [`RuntimeStats::spawn_failures`], reported once on standard error), queued jobs wait for
///   the spawn threads that did start; with none, the caller of `spawn` runs the queued jobs
///   itself before returning.
/// - In a child made by `fork` (without `exec`) each job runs on a thread of its own; a job
///   spawned while the runtime shuts down (from a thread's exit handler) runs on the spawning
///   thread.
///
/// ```
/// use std::sync::mpsc;
///
/// let (tx, rx) = mpsc::channel();
/// asat_core::spawn(move || {
///     // a job may spawn more jobs
///     asat_core::spawn(move || tx.send("done").unwrap());
/// });
/// let got = rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap();
/// assert_eq!(got, "done");
/// ```
pub fn spawn<OP>(op: OP)
where
    OP: FnOnce() + Send + 'static,
{
    Runtime::with_current(|rt| rt.spawn(op));
}

/// [`spawn`] under rayon's FIFO name: jobs start in the order they were spawned, as every
/// spawned job's does here.
pub fn spawn_fifo<OP>(op: OP)
where
    OP: FnOnce() + Send + 'static,
{
    Runtime::with_current(|rt| rt.spawn_fifo(op));
}

/// Rayon's `yield_now`: on a spawn thread, inside a job, runs the oldest job queued on that
/// runtime, if any (for a job that polls for something another job does). `Some(Yield::Idle)`
/// on a member of a parallel call or region (members take no detached jobs) and when nothing
/// is queued; `None` on other threads (a thread that only installed a runtime on itself,
/// [`Runtime::install_here`], is not part of it here: it is member 0 of its calls, not a pool
/// thread between them; the closure of [`Runtime::install`] runs on a spawn thread, and may).
pub fn yield_now() -> Option<Yield> {
    if current::member().is_some() {
        return Some(Yield::Idle);
    }
    let id = SPAWN_THREAD_OF.with(Cell::get);
    if id == 0 {
        return None;
    }
    Some(current::with_installed(|rt| match rt {
        Some(rt) if rt.id() == id => rt.run_one_job(),
        _ => Yield::Idle,
    }))
}

/// Rayon's `yield_local`: asat has no per-thread queues, so there is never local work:
/// `Some(Yield::Idle)` on members of parallel calls and on spawn threads, `None` elsewhere.
pub fn yield_local() -> Option<Yield> {
    let pool_thread = current::member().is_some() || SPAWN_THREAD_OF.with(Cell::get) != 0;
    pool_thread.then_some(Yield::Idle)
}

#[cfg(test)]
mod tests;
