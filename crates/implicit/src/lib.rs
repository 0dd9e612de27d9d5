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
