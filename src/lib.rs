//! asat: user-space thread scheduling with pluggable policies.
//!
//! This facade re-exports the workspace's crates:
//! - [`core`] (`asat-core`): the fork-join runtime, the [`Policy`] trait, the
//!   [`Fixed`], [`Single`] and ASAT policies, the global runtime under rayon's names
//!   ([`ThreadPoolBuilder`], [`current_num_threads`], [`current_thread_index`], [`join`],
//!   [`broadcast()`], [`spawn`]).
//! - [`iter`] (`asat-iter`): parallel iterators with rayon's names ([`prelude`],
//!   [`slice`](mod@slice), [`str`](mod@str)), parallel sorts, [`scope()`]: a rayon program
//!   moves to asat by changing its `use rayon::...` lines and `rayon::` paths.
//! - [`pools`] (`asat-pools`): processor pools for NUMA machines.
//! - [`gang`] (`asat-gang`): gang scheduling with coordinated switching.
//! - [`implicit`] (`asat-implicit`): two-phase adaptive barriers.
//! - `mpi` (`asat-mpi`, with the `mpi` feature): hybrid MPI + asat programs, each rank's
//!   runtime within its share of the node, two-phase waiting for MPI requests and barriers.
//!
//! ```
//! use asat::prelude::*;
//! let v: Vec<u64> = (0..1000).collect();
//! assert_eq!(v.par_iter().map(|x| x * 2).sum::<u64>(), 999_000);
//! ```
//!
//! ```
//! use asat::{Runtime, Schedule};
//! let rt = Runtime::builder().max_threads(2).build().unwrap();
//! let total = rt.parallel_reduce(0..1000, Schedule::Static, || 0u64,
//!     |acc, r| acc + r.map(|i| i as u64).sum::<u64>(), |a, b| a + b);
//! assert_eq!(total, 499_500);
//! ```

pub use asat_core::*;
pub use asat_gang as gang;
pub use asat_implicit as implicit;
pub use asat_iter as iter;
pub use asat_iter::{
    array, collections, current_thread_has_pending_tasks, in_place_scope, in_place_scope_fifo,
    option, prelude, range, range_inclusive, result, scope, scope_fifo, slice, str, string, vec,
    Scope, ScopeFifo,
};
#[cfg(feature = "mpi")]
pub use asat_mpi as mpi;
pub use asat_pools as pools;
