//! The sources: where a parallel iterator's items come from, each in a module of rayon's name
//! (re-exported at the crate's root, where their paths are).
//!
//! - Data a program holds: `range/` and `range_inclusive.rs` (`a..b`, `a..=b`), `slice/`
//!   (`par_iter`, `par_chunks`, `par_split`, ... on slices), `vec.rs` (a `Vec` by value, and
//!   its `par_drain`), `array.rs`, `str.rs` (`par_chars`, `par_split`, ... on strings),
//!   `collections.rs` (std's maps, sets, lists, `Option`, `Result`), `drain.rs` (the
//!   `par_drain` traits).
//! - Items made otherwise: `sources.rs` (`repeat`, `repeat_n`, `once`, `empty`), `bridge.rs`
//!   (`par_bridge` on a sequential iterator), `recursive/` (`split` and the tree walks, split by
//!   the program's own function).

pub mod array;
pub mod bridge;
pub mod collections;
pub mod drain;
pub mod range;
pub mod range_inclusive;
pub mod recursive;
pub mod slice;
pub mod sources;
pub mod str;
pub mod vec;
