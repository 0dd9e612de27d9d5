//! The parallel-iterator traits and the adapters, as rayon's `iter` module holds them.
//!
//! - The traits: [`ParallelIterator`](crate::ParallelIterator) in `parallel_iterator.rs` (its
//!   adapters' methods; the terminal calls' are in [`terminal`](crate::terminal)'s
//!   `methods.rs`), [`IndexedParallelIterator`](crate::IndexedParallelIterator) in
//!   `indexed_parallel_iterator.rs`, and the conversions
//!   ([`IntoParallelIterator`](crate::IntoParallelIterator) and the `par_iter` forms) in
//!   `into_parallel_iterator.rs`.
//! - The adapters, a file or a folder for each one or each small family, named as rayon's
//!   modules are, or as the public module they are at the crate's root: `adapters/` (those that
//!   change items: `map`, `filter`, `fold`, ...), `indexed/` (those that need items one for one
//!   with indices or change the split: `enumerate`, `zip`, `take`, `with_min_len`, ...),
//!   `chain.rs`, `flat_map.rs`, `fold_chunks.rs`, `interleave.rs`, `intersperse.rs`,
//!   `panic_fuse.rs`, `take_any.rs`, `take_any_while.rs`, `blocks.rs` (a call run in rounds), and
//!   `either.rs` (an `Either` of two parallel iterators).

pub mod adapters;
pub mod blocks;
pub mod chain;
mod either;
pub mod flat_map;
pub mod fold_chunks;
pub mod indexed;
pub(crate) mod indexed_parallel_iterator;
pub mod interleave;
pub mod intersperse;
pub(crate) mod into_parallel_iterator;
pub mod panic_fuse;
pub(crate) mod parallel_iterator;
pub mod take_any;
pub mod take_any_while;
