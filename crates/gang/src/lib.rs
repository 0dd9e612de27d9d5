//! asat-gang: gang scheduling of thread teams (Feitelson and Rudolph, 1992), with
//! signal-driven coordinated switching, as an asat-core policy.
//!
//! Fine-grain parallel code synchronizes every few microseconds. On a shared machine the OS
//! schedules each thread on its own, so a thread spins for a partner that is not running, or
//! blocks and pays a context switch per barrier. Gang scheduling runs all threads of a team at
//! the same time and switches whole teams together; busy-waiting is then as good as on a
//! dedicated machine.
//!
//! - [`Matrix`]: Ousterhout's matrix as pure logic: one column per CPU of the gang domain,
//!   one row per time slot, first-fit placement with per-slot free counts.
//! - [`GangScheduler`]: the matrix plus a scheduler thread that rotates the used slots every
//!   quantum. It stops a slot's threads with a real-time signal whose handler parks them on a
//!   futex (protocol and signal safety: the [`switch`] module), or at cooperative
//!   [`safe_point`]s; [`preempt_off`] defers stops; [`blocking`] marks a thread blocked.
//! - [`Gang`] / [`Member`]: a gang placed in the matrix and a thread's membership in it.
//! - [`GangPolicy`]: makes an asat-core [`Runtime`](asat_core::Runtime)'s team one gang;
//!   several runtimes are several gangs of one scheduler.
//! - [`Model`]: the paper's equations (6), (8), (12) and (13).
//! - Across processes: a scheduler built with
//!   [`shared(true)`](GangSchedulerBuilder::shared) (or `ASAT_GANG=shared`) keeps its matrix in
//!   the user's shared domain for its CPUs, a file that the shared schedulers of all of that
//!   user's processes join; one of them, elected, rotates the rows, and each process stops and
//!   resumes only its own threads ([`domain`]: file, protocol, election, take-over).
//!
//! ```no_run
//! use asat_core::Runtime;
//! use asat_gang::GangScheduler;
//!
//! let sched = GangScheduler::builder().build()?;
//! let rt = Runtime::builder().policy(sched.policy()).build()?;
//! rt.region(|team| {
//!     for _ in 0..10_000 {
//!         // fine-grain work ...
//!         team.barrier(); // busy-waits: the whole team runs at once
//!     }
//! });
//! println!("{} switches", sched.stats().switches);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The scheduler
//!
//! A gang of `n` threads is placed in the [`Matrix`] when it is created: one slot, one
//! column (CPU) per thread, first fit; a gang wider than the domain is an error (`a gang of 5
//! threads does not fit 4 processors: ...`). The scheduler thread runs the used slots
//! round-robin, one quantum each (default 20 ms). At a switch every thread of the outgoing slot
//! stops before any thread of the incoming slot resumes. Threads are stopped by a real-time
//! signal (`SIGRTMIN + 6` by default) whose handler parks them on a futex until their slot runs
//! again, or stop themselves at a [`safe_point`]. A slot whose threads are all idle or blocked
//! is left early (after a grace of at most 1 ms) and skipped while another slot has work. Each
//! gang thread is pinned to its column's CPU. The scheduler thread asks for `SCHED_FIFO` and
//! runs as a normal thread without the privilege ([`GangScheduler::is_realtime`] says which);
//! without it, when every CPU is busy with gang threads, the kernel lets the running thread
//! finish its slice (1-3 ms) before the scheduler runs, which stretches quanta and switches
//! by that much. The [`switch`] module has the protocol, the handler's async-signal safety,
//! and why a thread stopped inside `malloc` cannot deadlock the process.
//!
//! [`GangStats`] counts switches and early switches, the time per switch (from the broadcast
//! of the stop signals to the last thread stopped: mean and max), signals, stops by signal and
//! at safe points, deferred stops and late stops, signals of the stop signal's number that
//! asat-gang did not send (ignored), and switches that found another handler installed for it.
//!
//! With asat-core, `Runtime::builder().policy(sched.policy())` makes the runtime's team one
//! gang of the shared scheduler (several runtimes are several gangs). Workers are members
//! `1..n` for their whole life; member 0 is the user thread that starts a region, which joins
//! the gang for the region only. Inside a gang, barriers and joins busy-wait.
//!
//! # Without asat-core
//!
//! `let gang = sched.gang(n)?;` places a gang; then on each of `n` threads
//! `let _me = gang.join(i)?;` pins the thread and makes it member `i` until `_me` is dropped.
//! Call [`safe_point`] in loops to be stopped at clean points, wrap sections that must not be
//! stopped in [`preempt_off`], and blocking calls in [`blocking`] (the thread then counts as
//! not runnable and is not signalled).
//!
//! # Blocking calls
//!
//! A gang thread is stopped by a signal whose handler is installed with `SA_RESTART`, so the
//! kernel restarts most interrupted system calls (`read` and `write` on pipes, terminals and
//! sockets without timeouts, `wait`, `open` on a FIFO, `flock`, `fcntl(F_SETLKW)`, ...), and
//! the thread resumes them when its slot runs again. Some calls are never restarted after a
//! signal handler, whatever `SA_RESTART` says (signal(7)); in a gang thread they return `EINTR`
//! (`-1` with `errno` `EINTR`) whenever a switch stops the thread inside them:
//!
//! - waiting on file descriptors: `poll`, `ppoll`, `select`, `pselect`, `epoll_wait`,
//!   `epoll_pwait`;
//! - sleeping: `nanosleep`, `clock_nanosleep`, `usleep`;
//! - waiting for signals: `pause`, `sigsuspend`, `sigtimedwait`, `sigwaitinfo`;
//! - System V IPC: `semop`, `semtimedop`, `msgrcv`, `msgsnd`;
//! - socket calls on a socket with a timeout (`SO_RCVTIMEO`, `SO_SNDTIMEO`): `accept`,
//!   `connect`, `recv`, `recvfrom`, `recvmsg`, `recvmmsg`, `send`, `sendto`, `sendmsg`;
//! - `io_getevents`, and `read` from an inotify descriptor before Linux 3.8.
//!
//! Wrap such calls in [`blocking`] (`blocking(|| unsafe { libc::poll(..) })`): the thread is
//! then not signalled (it counts as stopped, so no switch waits for it, and a switch that
//! stops its slot meanwhile is taken when the call returns), and the stop signal is blocked
//! in it for the call, so the call is not interrupted by asat-gang (nor by a foreign signal
//! of that number). Or retry on `EINTR`, as Rust's std does in `thread::sleep`, `Condvar`,
//! `Mutex` and its file and socket I/O. The waits of asat-gang and asat-core themselves
//! (futexes, parking, the runtime's barriers and idle sleep) all re-check their condition in a
//! loop, so an interrupted wait just waits again. The price of `blocking`: the call runs outside
//! the gang's discipline (if it computes rather than blocks, it runs beside other slots'
//! threads on its CPU), and two `sigprocmask` calls.
//!
//! # Signals from elsewhere, replaced handlers, fork
//!
//! The handler acts only on stop signals the gang scheduler sent (checked by sender and a
//! random token); others of that number are ignored and counted
//! ([`GangStats::ignored_signals`]). A handler installed for the stop signal after the
//! scheduler was built is detected at the next switch (no signal is sent to it,
//! [`GangStats::handler_replaced`] counts it) and at the next [`GangScheduler::gang`] or
//! [`Gang::join`], which fail with an error naming the signal. A child made by `fork()` from a
//! gang thread runs as an ordinary process: its thread is no gang member, and the parent's
//! schedulers are inert copies in it (no gangs created or joined; dropping them does nothing).
//! Details: the [`switch`] module docs.
//!
//! # Limits
//!
//! A gang may not be wider than the domain; at most `max_slots` (default 64) slots; member 0
//! of a runtime is gang-scheduled only inside regions; a thread belongs to one gang at a time.
//! A `preempt_off` section must not block, lock or allocate: the switch waits for it, and
//! `stop_timeout` (default 500 ms) turns a mistake into a counted late stop rather than a hang.
//!
//! Environment variables give defaults for options the program did not set; a
//! [`GangSchedulerBuilder`] setter wins, and a bad value is an error from `build()`:
//!
//! | variable | meaning | values |
//! |---|---|---|
//! | `ASAT_GANG_QUANTUM_US` | [`GangSchedulerBuilder::quantum`] in microseconds | 100 ..= 10 000 000 |
//! | `ASAT_GANG_SIGNAL` | [`GangSchedulerBuilder::signal_offset`]: the stop signal is `SIGRTMIN` + this | 0 ..= SIGRTMAX - SIGRTMIN |
//! | `ASAT_GANG` | [`GangSchedulerBuilder::shared`]: `shared` joins the user's shared domain ([`domain`]) | `shared`, `process` |
//!
//! # Experiment and benchmark
//!
//! ```text
//! cargo run --release -p asat-lab --bin gang_sync -- --load 1,2,3,4 \
//!     --grains-us 1,2,5,10,20,50,100,200,500,1000 --var-equal-grain --out out/gang
//! cargo bench --bench gang_switch
//! ```
//!
//! `gang_sync` reproduces the paper's experiments 2 and 4: gangs of `n` threads (default: the
//! CPUs) loop `GRAIN + U(0, VAR)` us of work and a barrier, `--load` gangs at once, under
//! `gang-spin` (runtimes with the gang policy), `os-spin` (the same threads pinned the same
//! way, a pure busy-wait barrier, OS scheduling) and `os-block` (std's blocking `Barrier`).
//! Options besides those above: `--iterations` (per gang per cell, default 50 000),
//! `--max-seconds` (per cell, default 0.8), `--reps` (median of repetitions),
//! `--baseline-reps` (runs of the load-1 gang-spin baseline per repetition, default 3),
//! `--threads`, `--quantum-ms`, `--methods`, `--var-us` (VAR when `--var-equal-grain` is not
//! given, default 0), `--processes` (every gang a process of its own: gang-spin gangs then
//! meet in a shared domain made for the run, and the switch time is the elected process's
//! domain stop time). It prints progress with the share of the CPUs the process got in each
//! cell (busy-waiting methods should get all of them; a cell where they did not is flagged as
//! disturbed by outside load) and a table, and writes `gang.csv`, `gang_model.csv` (the
//! model's prediction and error at every load and grain, with the inputs each used, none from
//! the load it predicts) and `gang.svg` (the paper's Figures 5, 6 and 8). Defaults take about
//! two minutes. `gang_switch` times one coordinated switch and barrier loops under load.
//! Figures: the repository's `BENCHMARKS.md`.
//!
//! Linux only (futexes, real-time signals, `sched_setaffinity`).

mod binding;
mod builder;
pub mod domain;
mod entry;
mod error;
mod gang;
#[cfg(asat_inject)]
#[doc(hidden)]
pub mod inject;
mod matrix;
mod model;
mod policy;
mod rotation;
mod scheduler;
mod sections;
mod shared;
mod stats;
pub mod switch;
mod sys;
mod thread;

pub use builder::GangSchedulerBuilder;
pub use error::{Error, MAX_QUANTUM, MAX_SLOTS_LIMIT, MIN_QUANTUM};
pub use gang::{Gang, Member};
pub use matrix::{Allocation, GangId, Matrix};
pub use model::Model;
pub use policy::{GangPolicy, GangWait};
pub use scheduler::GangScheduler;
pub use sections::{blocking, in_gang, preempt_off, safe_point, PreemptGuard};
pub use stats::GangStats;
