//! Peers that asat is measured against, kept out of the published crates: the Jacobi kernel
//! asat's examples and benches run, the same kernel as C OpenMP code built with gcc
//! `-fopenmp`, and a rayon variant.

pub mod kernel;
pub mod omp;
pub mod rayon_peer;
