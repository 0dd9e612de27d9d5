//! asat-pools: processor pools for NUMA machines (Zhou and Brecht, "Processor Pool-Based
//! Scheduling for Large-Scale NUMA Multiprocessors", SIGMETRICS 1991).
//!
//! The CPUs are divided into pools, natural clusters of the machine (NUMA nodes, L3 domains,
//! packages, or a fixed size). Each job has a home pool, the least loaded when it starts; at
//! each parallel region it spans a limited number of pools and restricts its parallelism to
//! what those pools have idle (section 3 of the paper). Jobs in different processes see each
//! other's load through a shared-memory table.
//!
//! - [`Topology`]: the machine (detected through hwloc, synthetic, or XML) and its usable
//!   CPUs (the process's affinity mask); [`Topology::pools`] forms [`Pools`] by
//!   [`PoolKind`].
//! - [`placement`]: the paper's placement rules as pure functions.
//! - [`PoolPolicy`]: a [`Policy`](asat_core::Policy) for asat-core: team size `a`, members
//!   pinned to their pool's CPUs.
//! - [`LoadTable`]: [`SharedTable`] (a file under `/dev/shm`, shared by processes, dead
//!   processes' load reclaimed) or [`LocalLoads`] (one process).
//! - [`sim`]: the paper's simulation model, with the same placement functions.
//!
//! ```no_run
//! use std::sync::Arc;
//! use asat_core::{Runtime, Schedule};
//! use asat_pools::{PoolKind, PoolPolicy, Topology};
//!
//! let pools = Topology::detect()?.pools(PoolKind::Numa)?;
//! let policy = PoolPolicy::builder(pools).build()?; // shared table, pinning on
//! let rt = Runtime::builder().policy(policy).build()?;
//! rt.parallel_for(0..1_000, Schedule::Static, |i| { std::hint::black_box(i); });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Linux only (shared memory, `F_OFD_SETLK` locks, `sched_getaffinity`).

mod error;
#[cfg(asat_inject)]
#[doc(hidden)]
pub mod inject;
mod load;
pub mod placement;
pub mod policy;
pub mod shm;
pub mod sim;
mod sys;
mod topology;

pub use error::Error;
pub use load::{LoadTable, LocalLoads};
pub use placement::{Assignment, Params};
pub use policy::{PoolPolicy, PoolPolicyBuilder, RegionPlacement};
pub use shm::{SharedTable, SLOTS};
pub use topology::{PoolKind, Pools, Topology};
