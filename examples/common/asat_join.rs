//! `asat::join` as a [`Join`](asat_peers::tree::Join), for the examples that run the tree
//! sums of `asat_peers::tree` on asat (`tree_sum`, `tree_copies`; each includes this file with
//! `#[path]`).

use asat_peers::tree::Join;

/// `asat::join`: on the asat runtime the caller runs in.
pub struct AsatJoin;

impl Join for AsatJoin {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        asat::join(a, b)
    }
}
