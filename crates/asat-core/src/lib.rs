//! asat-core: a fork-join runtime on native threads whose every scheduling decision (team
//! size, placement, how threads wait) is made by a pluggable [`Policy`].
//!
//! - [`Runtime`] runs parallel loops ([`Runtime::parallel_for`], [`Runtime::parallel_reduce`],
//!   ...) with [`Schedule::Static`], [`Schedule::StaticChunked`], [`Schedule::Dynamic`] or
//!   [`Schedule::Guided`] chunking (loops that a search ends early stop handing out chunks:
//!   [`Runtime::parallel_for_chunks_until`], OpenMP's `cancel for`), and SPMD regions
//!   ([`Runtime::region`]) whose members share loops and meet at [`Team::barrier`].
//! - [`Policy`] decides each region's team (and may first [probe](Plan::Probe) the machine with
//!   a timed barrier), where members run, and learns how the region went.
//! - rayon's thread-pool API on a runtime ([`ThreadPoolBuilder`], [`join`], [`broadcast()`],
//!   [`spawn`], [`ThreadPoolBuilder::spawn_handler`], ... : see the [`ThreadPool`] alias), for
//!   programs moved from rayon.
//! - [`join`] is work stealing (per-thread deques, an injector for calls from outside the
//!   pool, latches): a join shares its second half only when another thread of the pool looks
//!   for work, or after a heartbeat while workers sleep, so a short recursion wakes nobody and
//!   a long one spreads over the [`Policy::task_workers`] threads the policy allows.
//! - [`WaitStrategy`] decides how threads wait: spin, then block.
//! - A thread whose region gets a team of one asks the kernel for long time slices while it
//!   stays alone ([`Builder::solo_slice`], `ASAT_SOLO_SLICE`): on a crowded machine a job that
//!   cannot shrink further then keeps its cache for longer turns.
//! - Policies here: [`Fixed`], [`Single`], and [`Asat`] (jobs that size themselves to the
//!   machine's load).
//! - [`private_file`]: files only the user's own processes can open, for state that policies
//!   share between processes (asat-pools' load table).
//!
//! ```
//! use asat_core::{Runtime, Schedule};
//!
//! let rt = Runtime::builder().max_threads(2).build()?;
//! let a: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
//! let mut b = vec![0.0; a.len()];
//! rt.parallel_slice_mut(&mut b[1..9_999], Schedule::Static, |start, out| {
//!     for (j, x) in out.iter_mut().enumerate() {
//!         let i = start + j + 1;
//!         *x = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
//!     }
//! });
//! assert_eq!(b[5], 5.0);
//! # Ok::<(), asat_core::Error>(())
//! ```
//!
//! Linux only: the runtime uses futexes, `sched_setaffinity`, `sched_setattr` and thread ids.

pub mod adaptive;
mod broadcast;
mod builder;
mod cpuset;
mod env;
mod error;
mod fixed;
mod global;
mod job;
mod payload;
mod policy;
pub mod private_file;
mod registry;
mod runtime;
mod schedule;
mod scope;
mod slots;
mod spawn_handler;
mod steal;
mod sync;
mod sys;
mod team;
mod wait;

pub use adaptive::{Asat, AsatConfig, AsatLogic, Decision, Evaluation, Rule};
pub use broadcast::{broadcast, spawn_broadcast, BroadcastContext};
pub use builder::{parse_solo_slice, parse_wait, Builder, DEFAULT_SOLO_SLICE, SOLO_SLICE_RANGE};
pub use cpuset::CpuSet;
pub use error::{Error, MAX_THREADS_LIMIT};
pub use fixed::{Fixed, Single};
pub use global::{
    current_num_threads, current_thread_index, in_parallel_call, join, join_coarse, join_context,
    max_num_threads, FnContext, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder,
};
/// The distributed slices of [`POLICIES`] (other crates' entries name it as
/// `#[linkme(crate = asat_core::linkme)]`).
pub use linkme;
pub use policy::{
    MemberInfo, Placement, Plan, Policy, ProbeResult, RegionReport, RegionStart, RegionTiming,
    RuntimeInfo, ThreadInfo,
};
pub use registry::{parse_policy, policies, BuildFn, Env, PolicyEntry, CORE, POLICIES};
pub use runtime::{
    spawn, spawn_fifo, yield_local, yield_now, Runtime, RuntimeStats, ThreadBuilder, Yield,
    MAX_PROBES_PER_REGION, REGION_LOCK_WAIT, SPAWN_IDLE_EXIT,
};
pub use schedule::Schedule;
pub use scope::{
    current_thread_has_pending_tasks, in_place_scope, in_place_scope_fifo, scope, scope_fifo,
    Scope, ScopeFifo,
};
pub use spawn_handler::{CustomSpawn, DefaultSpawn};
pub use steal::{PieceLen, TASK_REFRESH};
#[doc(hidden)]
pub use sync::FutexWord;
pub use sys::thread::ThreadHandle;
pub use team::Team;
pub use wait::{
    SpinThenPark, WaitInfo, WaitOutcome, WaitSite, WaitStrategy, CLOCK_FREE_MIN_SPIN,
    CLOCK_FREE_POLLS, IDLE_SPIN_CAP, PURE_SPIN,
};
