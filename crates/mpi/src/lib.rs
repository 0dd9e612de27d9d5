//! asat-mpi: hybrid MPI + asat programs, beyond one node.
//!
//! A client of asat-core and asat-implicit on the [`mpi`] crate (rsmpi, re-exported here so
//! that programs use the same version) and an MPI library (Open MPI on Debian:
//! `libopenmpi-dev`, `openmpi-bin`; bindgen needs `libclang-dev`):
//!
//! - [`Hybrid`]: start-up. Initialises MPI at the threading level asat needs (funneled by
//!   default: regions run their member 0 on the calling thread, so a program that calls MPI
//!   outside regions, or only from that thread, needs no more), finds the ranks that share
//!   this node, and gives this rank its [`NodeShare`] of the node (the CPU mask mpirun bound
//!   it to, else an even split of the node's CPUs among the node-local ranks) as the bound
//!   of its runtime ([`Hybrid::runtime_builder`]), so that the ranks of a job never
//!   oversubscribe their node by themselves.
//! - [`Waiter`]: two-phase waiting for MPI requests ([`Waiter::wait`], [`Waiter::wait_all`]),
//!   barriers ([`Waiter::barrier`]) and all-reductions ([`Waiter::all_reduce_into`]): test,
//!   yielding the CPU between tests, for the strategy's spin time and a yield time more, then
//!   sleep with a bounded back-off between tests (Open MPI's default progress has no blocking
//!   wait, and its own waits and collectives poll without giving the CPU away), with
//!   asat-implicit's strategies (`block`, `spin`, `fixed`, `local`, `global`, ...) and
//!   [statistics](WaitStats). The protocol, its costs and what each strategy learns from are in
//!   the [`wait`] module's docs.
//!
//! ```no_run
//! use asat_core::Schedule;
//! use asat_mpi::mpi::collective::SystemOperation;
//! use asat_mpi::mpi::traits::*;
//! use asat_mpi::Hybrid;
//!
//! // mpirun -np 4 ./prog: each rank runs a runtime within its share of the node
//! let hybrid = Hybrid::builder().build()?;
//! let rt = hybrid.runtime_builder().build()?;
//! let world = hybrid.world();
//! let (rank, size) = (world.rank(), world.size());
//! let mut halo = [0.0f64; 2];
//! let edge = [rank as f64; 1];
//! for _step in 0..10 {
//!     rt.parallel_for(0..100_000, Schedule::Static, |i| { std::hint::black_box(i); });
//!     asat_mpi::mpi::request::scope(|scope| {
//!         let left = world.process_at_rank((rank + size - 1) % size);
//!         let right = world.process_at_rank((rank + 1) % size);
//!         let (lo, hi) = halo.split_at_mut(1);
//!         let exchange = vec![
//!             left.immediate_receive_into(scope, lo),
//!             right.immediate_receive_into(scope, hi),
//!             left.immediate_send(scope, &edge[..]),
//!             right.immediate_send(scope, &edge[..]),
//!         ];
//!         hybrid.waiter().wait_all(exchange); // spin, then yield, then sleep between tests
//!     });
//!     let mut largest = 0.0f64; // a reduction between steps, waited for the same way
//!     hybrid.waiter().all_reduce_into(world, &halo[0], &mut largest, SystemOperation::max())?;
//! }
//! println!("{:?}", hybrid.waiter().stats());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The `ASAT_MPI_*` environment variables are listed in the [`hybrid`] module's docs.
//!
//! Tests: `cargo test -p asat-mpi` runs the pure logic, and launches `mpirun -np 2` and
//! `-np 3` on its own test binary for the tests that need ranks (`tests/mpirun/`; each run is
//! bounded in time).

mod error;
pub mod hybrid;
pub mod launch;
pub mod node;
pub mod wait;

pub use error::{Error, MAX_SLEEP_CAP, MAX_YIELD_TIME, MIN_SLEEP_CAP};
pub use hybrid::{Hybrid, HybridBuilder, DEFAULT_STRATEGY};
pub use mpi;
pub use mpi::Threading;
pub use node::{NodeShare, ShareKind};
pub use wait::{WaitStats, Waiter, DEFAULT_SLEEP_CAP, DEFAULT_YIELD_TIME, FIRST_NAP};
