//! The global runtime and rayon's names for it: [`ThreadPoolBuilder`], [`ThreadPool`],
//! [`Runtime::install`], [`current_num_threads`], [`current_thread_index`], [`join`],
//! [`join_context`] and [`max_num_threads`]. (rayon's `broadcast` is in the
//! [`broadcast`](crate::broadcast()) function's module, its `spawn` family and `yield_now` with
//! [`spawn`](crate::spawn), its pools on the user's threads with
//! [`ThreadPoolBuilder::spawn_handler`] and [`ThreadBuilder`](crate::ThreadBuilder).)
//!
//! # Which runtime a call runs on
//!
//! Clients that do not hold a [`Runtime`] (the parallel iterators, [`join`]) run on the
//! *current* runtime ([`Runtime::with_current`]): the one installed on the calling thread, or
//! else the global one. A runtime's workers have it installed for life; a
//! [spawned](crate::spawn) job, and the closure of [`Runtime::install`] (which runs on one of
//! the runtime's spawn threads, as rayon's runs on a pool thread), have it installed while they
//! run; [`Runtime::install_here`] installs it on the calling thread itself. (A region's member
//! 0 is the thread that started it, with whatever that thread had installed.) The global
//! runtime is built on first use from the
//! `ASAT_*` environment variables, as rayon's global pool and OpenMP's defaults are, unless
//! [`ThreadPoolBuilder::build_global`] built it first. Its workers live until the process
//! exits.
//!
//! A parallel loop or region started inside a region or a task (on a member of any runtime)
//! runs inline on that member, as a nested region does. [`join`] is different: it is a task of
//! the thread that calls it, whose second half the pool's other threads may take (work
//! stealing, with the policy's [`task_workers`](crate::Policy::task_workers) threads).
//!
//! rayon's `scope` family and `current_thread_has_pending_tasks` are here too ([`Scope`](crate::Scope)):
//! spawned jobs are tasks of the same engine.
//!
//! ```
//! let pool = asat_core::ThreadPoolBuilder::new().num_threads(2).build()?;
//! pool.install(|| {
//!     assert_eq!(asat_core::current_num_threads(), 2);
//!     assert_eq!(asat_core::current_thread_index(), None); // not inside a parallel call
//! });
//! let (a, b) = pool.install(|| asat_core::join(|| 1 + 1, || asat_core::current_thread_index()));
//! assert_eq!(a, 2);
//! assert!(b.is_some());
//! # Ok::<(), asat_core::Error>(())
//! ```

use std::any::Any;
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::sync::OnceLock;
use std::thread::{self, ThreadId};

use crate::runtime::current::{self, Member};
use crate::spawn_handler::{CustomSpawn, ThreadSpawn};
use crate::{Builder, DefaultSpawn, Error, Policy, Runtime, ThreadBuilder, WaitStrategy};

/// rayon's name for a runtime: `ThreadPoolBuilder::build` returns one.
pub type ThreadPool = Runtime;

/// rayon's name for the error of [`ThreadPoolBuilder::build`] and
/// [`build_global`](ThreadPoolBuilder::build_global).
pub type ThreadPoolBuildError = Error;

static GLOBAL: OnceLock<Runtime> = OnceLock::new();

/// Builds a runtime under rayon's names, for programs moved from rayon by changing their `use`
/// lines. Options not set here come from the `ASAT_*` environment variables (see
/// [`Builder`]); [`policy`](ThreadPoolBuilder::policy) and
/// [`wait`](ThreadPoolBuilder::wait) give asat's own choices.
///
/// `S` says who starts the pool's threads, as in rayon: [`DefaultSpawn`] (the type
/// `ThreadPoolBuilder` names by itself), the pool, lazily; or a
/// [`spawn_handler`](ThreadPoolBuilder::spawn_handler) ([`CustomSpawn`](crate::CustomSpawn)),
/// at build.
///
/// ```
/// use asat_core::ThreadPoolBuilder;
/// let pool = ThreadPoolBuilder::new().num_threads(3).build()?;
/// assert_eq!(pool.current_num_threads(), 3);
/// // 0: the default, as in rayon (here ASAT_MAX_THREADS, else RAYON_NUM_THREADS, else the CPUs).
/// let auto = ThreadPoolBuilder::new().num_threads(0).build()?;
/// assert_eq!(auto.current_num_threads(), asat_core::Builder::new().build()?.max_threads());
/// let err = ThreadPoolBuilder::new().num_threads(5000).build().unwrap_err();
/// assert!(err.to_string().starts_with("num_threads 5000: must be at most 4096"));
/// # Ok::<(), asat_core::Error>(())
/// ```
#[derive(Debug)]
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    builder: Builder,
    num_threads: Option<usize>,
    names: Option<NameFn>,
    use_current_thread: bool,
    spawn: S,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            builder: Builder::default(),
            num_threads: None,
            names: None,
            use_current_thread: false,
            spawn: DefaultSpawn,
        }
    }
}

/// A thread-name closure as rayon takes it (called once per worker, at build).
struct NameFn(Box<dyn FnMut(usize) -> String>);

impl fmt::Debug for NameFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NameFn")
    }
}

impl ThreadPoolBuilder {
    /// A builder with nothing set.
    pub fn new() -> Self {
        Self::default()
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// The pool's threads, the thread that starts a parallel call included (asat's
    /// [`Builder::max_threads`]). Unset: `ASAT_MAX_THREADS`, else `RAYON_NUM_THREADS` (0:
    /// unset, as rayon reads it), or the CPUs this process may use. 0 means unset, as in
    /// rayon; more than [`MAX_THREADS_LIMIT`](crate::MAX_THREADS_LIMIT) is an error from
    /// `build`.
    pub fn num_threads(mut self, n: usize) -> Self {
        self.num_threads = (n != 0).then_some(n);
        self
    }

    /// Names the worker threads: `f(i)` for worker `i` (`1..num_threads`). Called at build, as
    /// rayon does, for every `i` in `0..num_threads`: the threads that run
    /// [spawned](crate::spawn) jobs are named `f(slot)`, with their slot in `0..num_threads`
    /// (so a worker and a spawn thread may share a name). A
    /// [spawn handler](ThreadPoolBuilder::spawn_handler) is told the name
    /// ([`ThreadBuilder::name`](crate::ThreadBuilder::name)) and names its threads itself.
    ///
    /// A pool with named threads runs every closure of its calls on them, as rayon's does:
    /// a call from a thread that is not one of its own (the global pool's from `main`, a
    /// pool's `join` or `broadcast`) runs on one of its spawn threads, which takes the
    /// caller's part ([`Runtime::hands_calls_over`]). Without names or a
    /// [`start_handler`](ThreadPoolBuilder::start_handler), the caller takes part itself.
    pub fn thread_name<F>(mut self, f: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.names = Some(NameFn(Box::new(f)));
        self
    }

    /// Stack size of worker threads, in bytes (told to a
    /// [spawn handler](ThreadPoolBuilder::spawn_handler), which applies it itself).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.builder = self.builder.stack_size(bytes);
        self
    }

    /// Runs `f(i)` on worker `i` when it starts, and `f(slot)` on each thread that runs
    /// [spawned](crate::spawn) jobs (`slot < num_threads`, unique among the spawn threads
    /// running jobs, but a worker may have the same number: see [`spawn`](crate::spawn)). As
    /// with [`thread_name`](ThreadPoolBuilder::thread_name), the pool's calls then run every
    /// closure on threads `f` has set up ([`Runtime::hands_calls_over`]).
    pub fn start_handler<F>(mut self, f: F) -> Self
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        self.builder = self.builder.on_thread_start(f);
        self
    }

    /// Runs `f(i)` on worker `i` before it exits, and `f(slot)` on each spawn thread (as
    /// [`start_handler`](ThreadPoolBuilder::start_handler)).
    pub fn exit_handler<F>(mut self, f: F) -> Self
    where
        F: Fn(usize) + Send + Sync + 'static,
    {
        self.builder = self.builder.on_thread_stop(f);
        self
    }

    /// Handles the panics of [spawned](crate::spawn) jobs (asat's
    /// [`Builder::panic_handler`]). Unset, a job's panic is reported and counted, and the pool
    /// goes on; rayon would abort the process.
    pub fn panic_handler<H>(mut self, handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.builder = self.builder.panic_handler(handler);
        self
    }

    /// Makes the building thread the pool's index 0 for the pool's life, as rayon's option
    /// does: [`current_thread_index`](crate::current_thread_index) is `Some(0)` there, also
    /// outside parallel calls, and only that thread's calls run as index 0 (its own thread runs
    /// their tasks); other threads' calls go to the `num_threads - 1` workers. Without it,
    /// index 0 belongs to whichever thread calls in while nobody else holds it. As with
    /// rayon's, the thread runs the pool's work only inside its own calls, and `build` fails
    /// where the thread is index 0 of another live pool already.
    ///
    /// ```
    /// let pool = asat_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .use_current_thread()
    ///     .build()?;
    /// assert_eq!(pool.current_thread_index(), Some(0));
    /// let another = asat_core::ThreadPoolBuilder::new().use_current_thread().build();
    /// assert!(another.unwrap_err().to_string().starts_with("use_current_thread:"));
    /// // Another thread's call runs on a worker.
    /// let other = std::thread::scope(|s| {
    ///     s.spawn(|| pool.join(|| pool.current_thread_index(), || ()).0).join()
    /// });
    /// assert_eq!(other.unwrap(), Some(1));
    /// drop(pool);
    /// assert_eq!(asat_core::current_thread_index(), None);
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// rayon's (deprecated) request that spawned jobs run breadth-first, oldest first, rather
    /// than each thread's newest first. Detached jobs ([`spawn`](crate::spawn)) always start
    /// in the order they were spawned; a [`Scope`](crate::Scope)'s run as rayon's without
    /// this option (a thread's own newest first), and a [`ScopeFifo`](crate::ScopeFifo)'s in
    /// spawn order. So this changes nothing; as rayon's, it is deprecated in favour of the
    /// FIFO forms.
    ///
    /// ```
    /// #![allow(deprecated)]
    /// use std::sync::mpsc;
    ///
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(1).breadth_first().build()?;
    /// let (tx, rx) = mpsc::channel();
    /// for i in 0..5 {
    ///     let tx = tx.clone();
    ///     pool.spawn(move || tx.send(i).unwrap());
    /// }
    /// drop(tx);
    /// assert_eq!(rx.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 4]); // oldest first
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(self) -> Self {
        self
    }

    /// The scheduling policy (asat's own option; unset: `ASAT_POLICY`, or [`Fixed`](crate::Fixed)).
    pub fn policy(mut self, policy: impl Policy + 'static) -> Self {
        self.builder = self.builder.policy(policy);
        self
    }

    /// How threads wait (asat's own option; unset: `ASAT_WAIT`, else the policy's, else
    /// [`SpinThenPark`](crate::SpinThenPark)).
    pub fn wait(mut self, wait: impl WaitStrategy + 'static) -> Self {
        self.builder = self.builder.wait(wait);
        self
    }

    /// The time slice a thread asks for while its region's team is of one thread (asat's own
    /// option: [`Builder::solo_slice`]; unset: `ASAT_SOLO_SLICE`, else 100 ms).
    ///
    /// ```
    /// use std::time::Duration;
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(2).solo_slice(None).build()?;
    /// assert_eq!(pool.solo_slice(), None);
    /// let too_long = Some(Duration::from_millis(200));
    /// assert!(asat_core::ThreadPoolBuilder::new().solo_slice(too_long).build().is_err());
    /// # Ok::<(), asat_core::ThreadPoolBuildError>(())
    /// ```
    pub fn solo_slice(mut self, slice: Option<std::time::Duration>) -> Self {
        self.builder = self.builder.solo_slice(slice);
        self
    }

    /// This builder with `spawn` as what starts the pool's threads.
    pub(crate) fn with_spawn<T>(self, spawn: T) -> ThreadPoolBuilder<T> {
        ThreadPoolBuilder {
            builder: self.builder,
            num_threads: self.num_threads,
            names: self.names,
            use_current_thread: self.use_current_thread,
            spawn,
        }
    }

    /// asat's builder for the options set, and what starts the threads.
    fn into_parts(self) -> Result<(Builder, S), Error> {
        let mut b = self.builder;
        if let Some(n) = self.num_threads {
            if n > crate::MAX_THREADS_LIMIT {
                return Err(Error::num_threads(n));
            }
            b = b.max_threads(n);
        }
        if let Some(NameFn(mut f)) = self.names {
            let n = match self.num_threads {
                Some(n) => n,
                None => b.resolved_max_threads()?,
            };
            let names: Vec<String> = (0..n).map(&mut f).collect();
            b = b.thread_name(move |i| names.get(i).cloned().unwrap_or_default());
        }
        Ok((b, self.spawn))
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Builds a pool of its own. With a [spawn handler](ThreadPoolBuilder::spawn_handler),
    /// starts its threads through the handler first; a handler's error is returned (and the
    /// threads it started before stop).
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        let resident = self.use_current_thread;
        if resident {
            crate::runtime::resident::check_free()?;
        }
        let (builder, mut spawn) = self.into_parts()?;
        let rt = builder.build()?;
        spawn.start(&rt)?;
        if resident {
            crate::runtime::resident::enter(&rt);
        }
        Ok(rt)
    }

    /// Builds the global runtime, the one parallel calls run on when no pool is installed.
    /// An error if it exists already (built by an earlier `build_global`, or on the first
    /// parallel call). With a [spawn handler](ThreadPoolBuilder::spawn_handler), the threads
    /// it starts run the global runtime's workers for the rest of the process.
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        if GLOBAL.get().is_some() {
            return Err(Error::global_exists());
        }
        let rt = self.build()?;
        GLOBAL.set(rt).map_err(|_| Error::global_exists())
    }
}

impl Runtime {
    /// The global runtime, built from the `ASAT_*` environment variables on first use unless
    /// [`ThreadPoolBuilder::build_global`] built it first.
    ///
    /// An environment variable set to a value it does not allow cannot be returned as an
    /// error here (the first use may be any parallel call): its error, which names what is
    /// allowed, is printed to stderr and the global runtime is built with the defaults
    /// instead, as libgomp does with a bad `OMP_*` variable. Call
    /// [`ThreadPoolBuilder::build_global`] first to get that error as a value.
    pub fn global() -> &'static Runtime {
        GLOBAL.get_or_init(|| {
            Builder::new().build().unwrap_or_else(|e| {
                eprintln!("asat: {e}; the global runtime ignores the ASAT_* variables");
                Builder::new().build_defaults()
            })
        })
    }

    /// Calls `f` with the current runtime: the one installed on this thread, else the pool
    /// this thread was built on with
    /// [`use_current_thread`](ThreadPoolBuilder::use_current_thread), else the global one.
    #[inline]
    pub fn with_current<R>(f: impl FnOnce(&Runtime) -> R) -> R {
        // One call of `f` (one copy of it to inline), on whichever runtime applies.
        current::with_installed(|rt| {
            let resident;
            let rt = match rt {
                Some(rt) => rt,
                None => match crate::runtime::resident::pool() {
                    Some(handle) => {
                        resident = handle;
                        &resident
                    }
                    None => Runtime::global(),
                },
            };
            f(rt)
        })
    }

    /// The pool's size, [`max_threads`](Runtime::max_threads) (rayon's
    /// `ThreadPool::current_num_threads`).
    pub fn current_num_threads(&self) -> usize {
        self.max_threads()
    }

    /// The calling thread's member index when it runs a member of one of this runtime's calls
    /// or regions, else `None` (rayon's `ThreadPool::current_thread_index`). As
    /// [`current_thread_index`], but `None` on members of other runtimes, and on this
    /// runtime's [spawn](crate::spawn) threads outside the calls their jobs make; `Some(0)` on
    /// the thread it was built on with
    /// [`use_current_thread`](ThreadPoolBuilder::use_current_thread).
    ///
    /// ```
    /// let a = asat_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let b = asat_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// a.region(|team| {
    ///     assert_eq!(a.current_thread_index(), Some(team.index()));
    ///     assert_eq!(b.current_thread_index(), None);
    /// });
    /// assert_eq!(a.current_thread_index(), None);
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn current_thread_index(&self) -> Option<usize> {
        current::member()
            .filter(|m| m.of(self.inner()))
            .map(|m| m.index())
            .or_else(|| crate::runtime::resident::index(Some(self.inner())))
    }

    /// Runs `f` on the calling thread as a team of one, without waking a worker or asking the
    /// policy: for a parallel call with too little work to share. Inside `f`,
    /// [`current_thread_index`] is `Some(0)`; on a thread already running a member, nothing
    /// changes (its index stays).
    pub fn alone<R>(&self, f: impl FnOnce() -> R) -> R {
        if current::member().is_some() {
            return f();
        }
        let _member = current::enter(Member::new(0, self.max_threads(), self.inner()));
        f()
    }

    /// Runs `a` and `b`, potentially in parallel (rayon's `join`), and returns both results.
    /// The calling thread runs `a`; `b` waits in a frame that another thread of the pool may
    /// take, and the caller runs it itself when nobody did. A call from a thread outside the
    /// pool runs on it as the pool's thread 0 while no other outside call does, and is handed
    /// to the workers otherwise; joins nested in `a` or `b` are tasks of the thread that runs
    /// them. How `b` gets shared (only when a thread of the pool looks for work, or after a
    /// heartbeat while workers sleep) is in the work-stealing docs of the crate's source:
    /// a short join wakes nobody and costs little more than calling both closures.
    ///
    /// A panic in either is re-raised here once the other side is done or skipped: `a` always
    /// runs, `b` is skipped if `a` panics before anyone took it (as in rayon). How many of the
    /// pool's threads take part is [`Policy::task_workers`](crate::Policy::task_workers)'s
    /// answer.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        crate::steal::join(self, a, b)
    }
}

/// The size of the current pool (rayon's `current_num_threads`): inside a parallel call, the
/// `max_threads` of the runtime running it; else that of the installed runtime, or of the
/// global one (built if it was not). Teams may be smaller: the policy decides each call's
/// team, but no member index reaches this number.
pub fn current_num_threads() -> usize {
    match current::member() {
        Some(m) => m.pool(),
        None => Runtime::with_current(Runtime::max_threads),
    }
}

/// The calling thread's member index inside a parallel call or region (rayon's
/// `current_thread_index`): `Some(i)` with `i < current_num_threads()`, and no two members
/// running at the same time share an index; `None` outside parallel calls, except on a thread
/// a pool was built on with [`use_current_thread`](ThreadPoolBuilder::use_current_thread):
/// `Some(0)` there.
#[inline]
pub fn current_thread_index() -> Option<usize> {
    current::member()
        .map(|m| m.index())
        .or_else(|| crate::runtime::resident::index(None))
}

/// Whether the calling thread runs a member of a parallel call or region (a task of one
/// included), so that a parallel call it makes now is nested in another. Unlike
/// [`current_thread_index`], false on a pool's
/// [`use_current_thread`](ThreadPoolBuilder::use_current_thread) thread outside its calls.
///
/// ```
/// assert!(!asat_core::in_parallel_call());
/// asat_core::join(|| assert!(asat_core::in_parallel_call()), || ());
/// ```
#[inline]
pub fn in_parallel_call() -> bool {
    current::member().is_some()
}

/// [`Runtime::join`] on the current runtime.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    crate::steal::join_current(a, b, crate::steal::Share::AtBeat)
}

/// [`join`] for halves that each take long (tens of microseconds or more, as the halves of a
/// sort of thousands of elements do): `b` is offered to the pool's other threads at once, and
/// a sleeping one woken for it, as rayon's `join` always does. [`join`] offers `b` only at the
/// calling thread's next *beat* (every 25-100 µs of its joins), so that a recursion of fine
/// joins costs little more than calling its closures; a recursion of long halves, whose
/// joins come seldom, can then leave threads idle for a half's time. Same results, panics
/// and threads as [`join`].
///
/// ```
/// let mut v: Vec<u32> = (0..10_000).rev().collect();
/// let (low, high) = v.split_at_mut(5_000);
/// asat_core::join_coarse(|| low.sort(), || high.sort());
/// assert!(v[..5_000].windows(2).all(|w| w[0] <= w[1]));
/// ```
pub fn join_coarse<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    crate::steal::join_current(a, b, crate::steal::Share::Now)
}

/// The largest pool a [`ThreadPoolBuilder`] builds (rayon's `max_num_threads`):
/// [`MAX_THREADS_LIMIT`](crate::MAX_THREADS_LIMIT).
pub fn max_num_threads() -> usize {
    crate::MAX_THREADS_LIMIT
}

/// [`join`] whose closures are told whether they run on a thread other than the caller's
/// (rayon's `join_context`).
///
/// ```
/// let pool = asat_core::ThreadPoolBuilder::new().num_threads(1).build()?;
/// let (a, b) = pool.install(|| {
///     asat_core::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated())
/// });
/// assert_eq!((a, b), (false, false)); // a team of one runs both on the caller
/// # Ok::<(), asat_core::Error>(())
/// ```
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    let caller = std::thread::current().id();
    join(
        move || a(FnContext::on(caller)),
        move || b(FnContext::on(caller)),
    )
}

/// What a closure of [`join_context`] is told (rayon's `FnContext`). Belongs to the thread
/// that runs the closure: neither `Send` nor `Sync`.
#[derive(Debug)]
pub struct FnContext {
    migrated: bool,
    _not_send: PhantomData<*mut ()>,
}

impl FnContext {
    /// The context of a closure of a `join_context` called on `caller`, run here.
    fn on(caller: ThreadId) -> Self {
        FnContext {
            migrated: std::thread::current().id() != caller,
            _not_send: PhantomData,
        }
    }

    /// Whether the closure runs on a thread other than the one that called `join_context`
    /// (here: a worker of the call's team rather than the caller, member 0, which runs `a`
    /// unless another member took it first).
    #[inline]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

// rayon's custom thread spawning (the protocol is in `spawn_handler`'s docs).
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
