//! Peers that asat is measured against, kept out of the published crates: the Jacobi kernel
//! asat's examples and benches run, the same kernel as C OpenMP code built with gcc
//! `-fopenmp`, a rayon variant, and co-located CPU load ([`load::CpuHogs`]).

pub mod kernel;
pub mod load;
pub mod omp;
pub mod rayon_peer;
