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
//! Linux only (futexes, real-time signals, `sched_setaffinity`).

mod error;
mod gang;
#[cfg(asat_inject)]
#[doc(hidden)]
pub mod inject;
mod matrix;
mod model;
mod policy;
mod scheduler;
mod stats;
pub mod switch;
mod sys;

pub use error::{Error, MAX_QUANTUM, MAX_SLOTS_LIMIT, MIN_QUANTUM};
pub use gang::{Gang, Member};
pub use matrix::{Allocation, GangId, Matrix};
pub use model::Model;
pub use policy::{GangPolicy, GangWait};
pub use scheduler::{GangScheduler, GangSchedulerBuilder};
pub use stats::GangStats;
pub use switch::{blocking, in_gang, preempt_off, safe_point, PreemptGuard};
