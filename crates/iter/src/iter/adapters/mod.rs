//! Adapters that change items but not how the index space is split: `map`, `filter`,
//! `filter_map`, `flat_map_iter`, `inspect`, `copied`, `cloned`, `map_init`, `map_with`,
//! `update`, `fold`, `fold_with`, `positions`. Each one's sequential side is the std adapter
//! of the same name over its base's range (or a small iterator of its own), so a chain
//! compiles to the loop a sequential chain would.

mod closure;
mod copied_cloned;
mod fold;
mod map_state;
mod positions;
mod update;

pub use closure::{Filter, FilterMap, FlatMapIter, FlattenIter, Inspect, Map};
pub use copied_cloned::{Cloned, Copied};
pub use fold::{Fold, FoldSeq, FoldWith};
pub use map_state::{CloneOf, InitFn, MapInit, MapState, MapStateSeq, MapWith, StateInit};
pub use positions::{Positions, PositionsSeq};
pub use update::{Update, UpdateSeq};
