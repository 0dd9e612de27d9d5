//! The terminal calls: the methods that run a chain, and how a call runs.
//!
//! - `methods.rs`: the terminal methods of [`ParallelIterator`](crate::ParallelIterator)
//!   (`for_each`, the reductions, the searches, `collect`, ...), each a short body that calls
//!   one of the modules below.
//! - `drive/`: how a call splits its index space and runs it, as one region of the current
//!   runtime or as tasks, and the reductions every call is made of.
//! - One module per family of calls: `collect.rs` (`collect`, `collect_into_vec`),
//!   `extend.rs` (`par_extend`), `find.rs` (`any`, `all`, the `find_` and `position_` forms),
//!   `cmp.rs` (`cmp`, `eq`, `lt`, ... of two indexed iterators), `unzip.rs` (`unzip`,
//!   `partition`, `partition_map`), `try_ops.rs` (the fallible forms: `try_for_each`,
//!   `try_reduce`, `try_fold`, ...).

pub mod cmp;
pub(crate) mod collect;
pub mod drive;
pub(crate) mod extend;
pub(crate) mod find;
pub(crate) mod methods;
pub mod try_ops;
pub mod unzip;
