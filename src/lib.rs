//! asat: user-space thread scheduling with pluggable policies.
//!
//! This facade re-exports the workspace's crates:
//! - [`core`] (`asat-core`): the fork-join runtime, the [`Policy`] trait, the
//!   [`Fixed`], [`Single`] and ASAT policies.
//! - [`pools`] (`asat-pools`): processor pools for NUMA machines.
//! - [`gang`] (`asat-gang`): gang scheduling with coordinated switching.
//! - [`implicit`] (`asat-implicit`): two-phase adaptive barriers.
//!
//! ```
//! use asat::{Runtime, Schedule};
//! let rt = Runtime::builder().max_threads(2).build().unwrap();
//! let total = rt.parallel_reduce(0..1000, Schedule::Static, || 0u64,
//!     |acc, r| acc + r.map(|i| i as u64).sum::<u64>(), |a, b| a + b);
//! assert_eq!(total, 499_500);
//! ```

pub use asat_core as core;
pub use asat_core::*;
pub use asat_gang as gang;
pub use asat_implicit as implicit;
pub use asat_pools as pools;
