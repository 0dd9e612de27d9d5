//! rayon's `range_inclusive` module: the parallel iterator of `(a..=b).into_par_iter()`,
//! [`range::IterInclusive`](crate::range::IterInclusive) under rayon's name.

#[doc(no_inline)]
pub use crate::range::IterInclusive as Iter;
