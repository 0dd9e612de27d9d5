//! asat's lab: the simulators and the programs that run the experiments, kept apart from the
//! library crates users link (as rayon keeps `rayon-demo` apart from rayon). Nothing here is
//! published; everything is a client of asat's public API.
//!
//! The library holds what the programs share:
//!
//! - [`asat_sim`]: `k` ASAT jobs (and CPU hogs) on a model of a time-sharing machine of `P`
//!   CPUs, driving asat-core's own decision logic ([`asat_core::adaptive::AsatLogic`],
//!   [`asat_core::adaptive::rule`], [`asat_core::adaptive::pressure`]);
//! - [`pools_sim`]: Zhou and Brecht's simulation model of processor pools, placing jobs with
//!   asat-pools' own placement functions ([`asat_pools::placement`]);
//! - [`bsp`]: the cells, command lines, job results, table rows, CSV, table and plot of the
//!   bulk-synchronous experiments (`implicit_bsp`, `mpi_bsp`), and their calibrated busy work;
//! - [`files`]: the files the programs write, with errors that name the path;
//! - [`rayon_port`]: rayon source rewritten for asat (`npb`, `rayon_tests`);
//! - [`Error`]: a simulator's configuration it cannot run.
//!
//! The peers asat is measured against, and the statistics, plotting, process watching and
//! argument checks that the lab shares with the benches, are `asat-peers`' (`crates/peers`).
//!
//! # Programs
//!
//! Each prints a table and writes its results to `--out` (CSV, and an SVG plot where the
//! experiment has a figure; `epcc` and `rayon_tests` write their reports); `--help` lists its
//! options, and each program's own docs (`src/bin/NAME/main.rs`) say what it measures. Build
//! them all with `cargo build --release -p asat-lab` (into `target/release/`).
//!
//! ```text
//! # copies of a fine-grain fork-join job under each policy: the ASAT paper's experiment
//! # (`bash scripts/demo` runs it)
//! cargo run --release -p asat-lab --bin compare -- --copies 1,2,3,4 --out out/compare
//!
//! # ASAT jobs on simulated machines of 2 to 256 CPUs, the paper's rule and asat's
//! cargo run --release -p asat-lab --bin asat_sim -- --processors 2,64,256 --out out/asat_sim
//!
//! # Figure 3 of Zhou and Brecht from the simulator of processor pools
//! cargo run --release -p asat-lab --bin pools_sim -- --processors 60 --out out/pools_sim
//!
//! # Feitelson and Rudolph's experiments 2 and 4: gang scheduling against the OS's
//! cargo run --release -p asat-lab --bin gang_sync -- --load 1,2,3,4 --out out/gang
//!
//! # the implicit-coscheduling paper's Figure 13: bulk-synchronous jobs, each waiting strategy
//! cargo run --release -p asat-lab --bin implicit_bsp -- --jobs 3 --out out/implicit
//!
//! # the same with MPI ranks (asat-mpi; needs Open MPI)
//! cargo run --release -p asat-lab --features mpi --bin mpi_bsp -- --jobs 3 --out out/mpi_bsp
//!
//! # the EPCC method on asat beside EPCC's own suite under libgomp (an EPCC checkout)
//! cargo run --release -p asat-lab --bin epcc -- --epcc ~/src/epcc --out out/epcc
//!
//! # NAS Parallel Benchmarks: NPB-Rust, NPB-CPP, NPB-RAYON on asat (checkouts of both)
//! cargo run --release -p asat-lab --bin npb -- --npb-rust ~/src/NPB-Rust \
//!     --npb-cpp ~/src/NPB-CPP --out out/npb
//!
//! # rayon's own test suite against asat, each outcome judged (a rayon checkout)
//! cargo run --release -p asat-lab --bin rayon_tests -- --rayon ~/src/rayon
//! ```
//!
//! Their own tests (statistics, output parsing, the copies' rewrites, jobs started as
//! processes) run with `cargo test -p asat-lab` (`--features mpi` adds `mpi_bsp`'s).

pub mod asat_sim;
pub mod bsp;
mod error;
pub mod files;
pub mod pools_sim;
pub mod rayon_port;

pub use error::Error;
