//! Adapters that need items one for one with indices, or that change how the index space is
//! split: `enumerate`, `zip` (and tuples of sources), `step_by`, `take`, `skip`, `chunks`,
//! `with_min_len`, `with_max_len`, `with_schedule`.

mod chunks;
mod enumerate;
mod hinted;
mod step_by;
mod take_skip;
mod zip;

pub(crate) use chunks::{check_size, group_items};
pub use chunks::{Chunks, ChunksSeq};
pub use enumerate::Enumerate;
pub use hinted::{Hinted, MaxLen, MinLen};
pub use step_by::StepBy;
pub use take_skip::{Skip, Slice, Take};
pub use zip::{MultiZip, Zip, ZipEq};
