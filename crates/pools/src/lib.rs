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
//! - [`LoadTable`]: [`SharedTable`] (a file in a folder only the user can use, shared by the
//!   user's processes, dead processes' load reclaimed) or [`LocalLoads`] (one process).
//! - The paper's simulation model, with the same placement functions, is asat-lab's
//!   `asat_lab::pools_sim` (in the repository's `crates/lab`).
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
//! # Pools
//!
//! [`Topology::detect`] reads this machine (through hwlocality); its usable CPUs are the
//! process's affinity mask. [`Topology::synthetic`] (`"pack:2 node:2 core:4 pu:2"`) and
//! [`Topology::from_xml_file`] describe another machine, whose jobs can be placed but not
//! pinned. [`PoolKind`] chooses the pools: `Numa` (the default), `L3`, `Package`, or `Size(p)`,
//! pools of `p` CPUs contiguous in topology order, where `p` must divide the usable CPUs.
//! Errors say what is allowed: `pool size 5 does not divide the 32 usable CPUs into equal
//! pools: must be a divisor of 32`, `the topology has no L3 cache objects: use pools by NUMA node,
//! package or a fixed size instead`.
//!
//! # The policy and its options
//!
//! At each region a [`PoolPolicy`] asks [`placement::place`] for the team size `a` and the
//! members per pool, from the loads in the table at that moment; each member then runs on its
//! pool's CPUs (member 0, the caller, gets its own mask back when the region ends). How a job
//! counts in the table, and what holding a placement does, is in the [`policy`] module.
//! [`PoolPolicyBuilder`] options: `f` (F, default 0.8), `g` (G, default 0.5), `desired` (the
//! desired parallelism `d`, default the runtime's `max_threads`), `pin` (default true; refused
//! with an error for a synthetic or foreign topology), `table` (default: for pools of the
//! detected machine, the machine-wide [`SharedTable`], in `$XDG_RUNTIME_DIR` or else
//! `/dev/shm/asat-u{uid}`, a folder that `ASAT_POOLS_SHM_DIR` (an absolute path) overrides; for
//! pools of a synthetic or XML topology, a table in the process's memory, so that a model
//! machine never counts in the real one's table; the file, its checks and its protocol: the
//! [`shm`] module), `hold` (keep a placement for that long: for fine-grain jobs that start thousands of
//! regions a second). One policy serves one runtime.
//!
//! # Examples and benchmark
//!
//! ```text
//! # Figure 3 of the paper from the simulator (CSV + SVG in out/pools_sim, about a minute)
//! cargo run --release -p asat-lab --bin pools_sim -- --processors 60 --parallelism 10,20 \
//!     --load 0.6 --pool-sizes 1,2,3,4,5,6,10,12,15,20,30,60 --F 0.8 --G 0.5 --reps 10 \
//!     --out out/pools_sim
//!
//! # real threads: 3 jobs as processes sharing one table, each printing its pools and CPUs
//! cargo run --release --example pools_demo                          # this machine, NUMA pools
//! cargo run --release --example pools_demo -- --pools 1             # one pool per CPU, pinned
//! cargo run --release --example pools_demo -- --topology "node:4 core:4 pu:1" --jobs 3
//!
//! # 3 co-located fine-grain jobs: pinned to pools against unpinned
//! cargo bench --bench pools_colocated
//! ```
//!
//! `pools_demo` on a 2-CPU machine with `--pools 1` (excerpt):
//!
//! ```text
//! topology: this machine; usable CPUs 0-1; 2 pools (Size(1)): Pools[0 | 1]
//! job 0 region 0: loads seen [0, 0], candidates [0, 1], a = 2 of d = 2: pool 0 (CPUs 0) x1, pool 1 (CPUs 1) x1 [159 ms]; masks m0:0 m1:1 (= pools)
//! job 1 region 0: loads seen [1, 1], candidates [0, 1], a = 1 of d = 2: pool 0 (CPUs 0) x1 [308 ms]; masks m0:0 (= pools)
//! job 2 region 0: loads seen [2, 1], candidates [1, 0], a = 1 of d = 2: pool 1 (CPUs 1) x1 [305 ms]; masks m0:1 (= pools)
//! ```
//!
//! The simulator reproduces the paper's Figure 3 within 2%; on a single-node 2-CPU machine the
//! pinned policy loses to leaving placement to the kernel (no locality to win, only pinning
//! costs). Figures, commands and the reasons: the repository's `BENCHMARKS.md`.
//!
//! Linux only (shared memory, `F_OFD_SETLK` locks, `sched_getaffinity`). Not done: binding a
//! job's memory to its home node.

mod error;
#[cfg(asat_inject)]
#[doc(hidden)]
pub mod inject;
mod load;
pub mod placement;
pub mod policy;
pub mod shm;
mod sys;
mod topology;

pub use error::Error;
pub use load::{LoadTable, LocalLoads};
pub use placement::{Assignment, Params};
pub use policy::{PoolPolicy, PoolPolicyBuilder, RegionPlacement};
pub use shm::{SharedTable, SLOTS};
pub use topology::{PoolKind, Pools, Topology};
