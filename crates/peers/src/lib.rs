//! Peers that asat is measured against, kept out of the published crates: the Jacobi kernel
//! asat's examples, benches and lab (`crates/lab`) run, the same kernel as C OpenMP code built
//! with gcc `-fopenmp`, a rayon variant, co-located CPU load ([`load::CpuHogs`]), the watching
//! of child processes ([`procs`]), a pure spin barrier ([`spin::SpinBarrier`]), and the one
//! piece of plotting they share ([`plot::series`], [`plot::legend`]), [`stats::median`], the
//! argument checks of their command lines ([`cli`]), and the divide-and-conquer workloads
//! `join`s are compared on ([`tree`]: a tree sum serially, on rayon and on chili).

pub mod cli;
pub mod grid;
pub mod kernel;
pub mod load;
pub mod omp;
pub mod plot;
pub mod procs;
pub mod rayon_peer;
pub mod spin;
pub mod stats;
pub mod tree;
