//! The machinery the sources, the adapters and the terminal calls share.
//!
//! - `plumbing.rs`: the [`Producer`](crate::plumbing::Producer) protocol every parallel
//!   iterator implements and every terminal call drives (public, for a program's own sources).
//! - `stop.rs`: the stop of a call that may end early, and the iterator that reads a base
//!   under it.
//! - `raw.rs`: the unsafe core of the mutable and owning sources (a slice's base pointer shared
//!   among a call's members).
//! - `splitter.rs`: the sequential side of the `par_split` sources of slices and strings.
//! - `deferred.rs`: sources whose items are made at the first terminal call.
//! - `fmt.rs`: `Debug` for the types that hold a program's closures.
//! - `testing.rs`: the unit tests' runtimes.

pub(crate) mod deferred;
pub(crate) mod fmt;
pub mod plumbing;
pub(crate) mod raw;
pub mod splitter;
pub(crate) mod stop;
#[cfg(test)]
pub(crate) mod testing;
