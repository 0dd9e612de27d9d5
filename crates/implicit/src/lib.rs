//! asat-implicit: the two-phase adaptive barriers of implicit coscheduling (Dusseau, Arpaci and
//! Culler, 1996).
//!
//! Parallel jobs that share a machine coordinate without a global scheduler when their threads
//! wait the right way: a waiter spins for a while, so that a partner that is running can answer
//! without a context switch, then blocks, so that a partner that is not running gets the CPU.
//! The spin time adapts to the program's load imbalance (section 6 of the paper):
//!
//! - [`calibrate`]: the context-switch (block and wake) cost `cs`, measured once per process
//!   with a futex ping-pong (`ASAT_CONTEXT_SWITCH_US` overrides it);
//! - [`SpinRule`] and [`Estimator`]: spin at least `S = 2 cs`; spin only `S` when the imbalance
//!   exceeds `V = 10 cs`; otherwise spin the imbalance plus the release latency; the imbalance
//!   is the largest wait time once the top 10% are dropped, from a bounded sample with random
//!   replacement;
//! - strategies [`Block`], [`Spin`], [`FixedSpin`], [`Oracle`], [`AdaptiveLocal`] and
//!   [`AdaptiveGlobal`] ([`TwoPhase`], and asat-core's [`WaitStrategy`](asat_core::WaitStrategy));
//! - [`Barrier`] (generations, poisoning, statistics) and [`Flag`] (point-to-point waits).
//!
//! ```
//! use asat_core::Runtime;
//! use asat_implicit::AdaptiveGlobal;
//!
//! // every join and team barrier of this runtime spins, then blocks, adaptively
//! let rt = Runtime::builder().max_threads(2).wait(AdaptiveGlobal::new()).build()?;
//! rt.region(|team| {
//!     for _ in 0..10 {
//!         team.barrier();
//!     }
//! });
//! # Ok::<(), asat_core::Error>(())
//! ```
//!
//! A standalone barrier for a program's own threads; a participant that panics while holding
//! its [`guard`](Barrier::guard) poisons the barrier, and every waiting or later `wait()` then
//! returns an error instead of hanging:
//!
//! ```
//! use asat_implicit::{AdaptiveGlobal, Barrier};
//!
//! let barrier = Barrier::new(2, AdaptiveGlobal::new())?;
//! std::thread::scope(|s| {
//!     for _ in 0..2 {
//!         s.spawn(|| {
//!             let _poison_on_panic = barrier.guard();
//!             for _ in 0..100 {
//!                 barrier.wait().expect("a participant panicked");
//!             }
//!         });
//!     }
//! });
//! assert_eq!(barrier.stats().generation, 100);
//! # Ok::<(), asat_implicit::Error>(())
//! ```
//!
//! [`AnyStrategy::by_name`] chooses a strategy by name: `block`, `spin`, `fixed`,
//! `fixed:<us>`, `oracle:<us>`, `local`, `global`. [`AdaptiveLocal`] learns from each thread's
//! own waits; [`AdaptiveGlobal`] from each episode's imbalance, which the last arriver sees.
//!
//! `ASAT_CONTEXT_SWITCH_US` (microseconds, `0 < x <= 100000`) replaces the measured
//! context-switch cost. A malformed value is an error from [`calibrate::try_calibration`] and
//! from `Config::builder().build()`, and is ignored by the infallible constructors
//! (`AdaptiveGlobal::new()` and the like).
//!
//! # The experiment: the paper's Figure 13
//!
//! ```text
//! cargo run --release -p asat-lab --bin implicit_bsp -- --patterns barrier,news,transpose \
//!     --grains-us fine,medium,coarse --imbalance low,high \
//!     --strategies block,spin,fixed,local,global,std,gang,gang-procs --jobs 3 --out out/implicit
//! ```
//!
//! Bulk-synchronous jobs, one thread per CPU per job, 3 jobs at once as separate processes (the
//! program, asat-lab's `implicit_bsp`, re-runs itself with hidden `--worker` arguments). Thread `i`
//! of every job is pinned to the `i`-th CPU, as the paper's one process per processor per job
//! (`--no-pin` leaves them to the kernel; spinning then cannot coordinate). `std` is
//! `std::sync::Barrier`; `gang` and `gang-procs` are explicit coscheduling with asat-gang, the
//! paper's baseline: with `gang` the 3 jobs are runtimes of one process, gangs of one scheduler;
//! with `gang-procs` each job is a process whose scheduler joins a shared gang domain made for the
//! run, so the gangs are coordinated across processes. The program's own docs describe the
//! patterns, grains and imbalances. Other options: `--jobs` (default 3), `--threads` (per job,
//! default: the CPUs), `--work-s` (computation per job and thread, in seconds of a dedicated CPU:
//! it sets the phase count, default 0.25), `--reps` (median of repetitions, default 3), `--timeout`
//! (seconds after which a run's jobs are killed and the run is counted at that time, a lower bound;
//! default 12; not for `gang`, whose jobs share the process). The defaults (3 repetitions of 144
//! runs) take about 8.5 minutes on a 2-vCPU machine. `cargo bench --bench implicit_barrier` times
//! one barrier episode against spin barriers, `std::sync::Barrier` and OpenMP, and a BSP loop under
//! co-located jobs. Figures: the repository's `BENCHMARKS.md`.
//!
//! Linux only (futexes).

mod barrier;
pub mod calibrate;
mod error;
mod estimator;
mod flag;
mod strategy;
mod sync;
mod sys;

pub use barrier::{Barrier, BarrierStats, BarrierWaitResult, PoisonGuard, MAX_PARTICIPANTS};
pub use calibrate::{calibration, Calibration};
pub use error::Error;
pub use estimator::{Estimator, SpinRule, DEFAULT_SAMPLE, MAX_SAMPLE};
pub use flag::{Flag, FlagWait, FLAG_VALUE_MASK};
pub use strategy::{
    AdaptiveGlobal, AdaptiveLocal, AnyStrategy, Block, Config, ConfigBuilder, FixedSpin, Oracle,
    Spin, TwoPhase, LOCAL_SLOTS, STRATEGY_NAMES,
};
