//! A hybrid MPI + asat Jacobi solver: the rows of a 2-D grid are split among the ranks, each
//! rank updates its rows with a parallel loop of its own runtime (within its share of the
//! node), and neighbouring ranks exchange boundary rows with MPI, waited for with each way of
//! waiting in turn.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_jacobi
//! mpirun -np 2 target/release/examples/mpi_jacobi --n 512 --iters 500 \
//!     --strategies block,spin,fixed,local,global,mpi --verify --out out/mpi_jacobi
//! ```
//!
//! The grid is `n x n`, its top edge held at 1 and the other edges at 0 (Laplace's equation).
//! Rank `r` owns a contiguous block of the interior rows, with one halo row above and below.
//! Each iteration: send the first and last owned rows to the neighbours and receive the halos
//! (one [`Waiter::wait_all`](asat::mpi::Waiter::wait_all), or Open MPI's own `MPI_Waitall` for
//! `mpi`), then update every owned point from its four neighbours with
//! `Runtime::parallel_slice_mut` (the runtime from `Hybrid::runtime_builder`: its
//! `max_threads` is the rank's share of the node; `ASAT_POLICY` chooses the policy). Every
//! `--check` iterations the largest change is combined over the ranks (an all-reduce, waited
//! for as the halos are: `Waiter::all_reduce_into`, or Open MPI's `MPI_Allreduce` for `mpi`),
//! and the solve stops below `--tolerance`. The solve ends with a barrier (the waiter's, or
//! `MPI_Barrier`), inside the timed part.
//!
//! MPI is called only outside the parallel loops, from the thread that initialised it:
//! funneled, `Hybrid`'s default. `--verify` also runs the same iterations serially on the
//! whole grid in every rank and checks that the rank's rows are bitwise the same.
//!
//! `--threads` sets the threads per rank: `fixed` (a fixed team of the whole node's CPUs in
//! every rank, as an OpenMP program does with its default `OMP_NUM_THREADS`), `share` (a fixed
//! team of the rank's share of the node, `Hybrid`'s bound) or `asat` (the ASAT policy,
//! `ASAT_*` settings from the environment, bounded by the whole node, so that it can grow to
//! the node when the other jobs leave it and has to find its share by itself while they run;
//! bounded by the share, it could do no more than `share` where a rank's share is one CPU, as
//! on a 2-CPU machine with two ranks). Without `--threads`, `Hybrid::runtime_builder` as it
//! is (the share, the policy from `ASAT_POLICY`). `examples/mpi_hybrid.rs` runs two jobs at
//! once under each of the three.
//!
//! Rank 0 prints a table (per strategy: seconds, iterations, last change, blocks and
//! successful spins summed over the ranks) and writes `DIR/mpi_jacobi.csv` and
//! `DIR/mpi_jacobi.svg` (seconds per strategy).

use std::path::PathBuf;
use std::time::Instant;

use asat::implicit::{AnyStrategy, Config};
use asat::mpi::mpi::collective::SystemOperation;
use asat::mpi::mpi::topology::SimpleCommunicator;
use asat::mpi::mpi::traits::*;
use asat::mpi::{Hybrid, Waiter};
use asat::{Asat, Fixed, Runtime, Schedule};
use clap::builder::{PossibleValuesParser, RangedU64ValueParser};
use clap::Parser;
use plotters::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "Hybrid MPI + asat Jacobi solver, under each way of waiting for MPI")]
struct Args {
    /// Grid size (points per side, 3 ..= 20000).
    #[arg(long, default_value_t = 512, value_parser = RangedU64ValueParser::<usize>::new().range(3..=20_000))]
    n: usize,
    /// Most iterations (1 ..= 1000000).
    #[arg(long, default_value_t = 500, value_parser = RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    iters: usize,
    /// Iterations between two checks of the change (1 ..= 10000).
    #[arg(long, default_value_t = 10, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000))]
    check: usize,
    /// Stop when no point changed by more than this in an iteration.
    #[arg(long, default_value_t = 1e-6)]
    tolerance: f64,
    /// Ways of waiting, each a full solve: block, spin, fixed, local, global (asat-mpi),
    /// mpi (Open MPI's own waits).
    #[arg(long, value_delimiter = ',', default_value = "block,spin,fixed,local,global,mpi",
          value_parser = PossibleValuesParser::new(["block", "spin", "fixed", "local", "global", "mpi"]))]
    strategies: Vec<String>,
    /// Check every rank's rows against a serial solve of the whole grid.
    #[arg(long)]
    verify: bool,
    /// Threads per rank: fixed (the whole node, as OpenMP does), share (the rank's share of
    /// the node), asat (ASAT, bounded by the node); default: Hybrid's runtime builder as is
    /// (the share, ASAT_POLICY's policy).
    #[arg(long, value_parser = PossibleValuesParser::new(THREADS))]
    threads: Option<String>,
    /// Internal (mpi_hybrid): rank 0 says READY and waits for a line on its standard input
    /// before the first solve, and prints a RESULT line per solve.
    #[arg(long, hide = true)]
    go: bool,
    /// Output folder (written by rank 0).
    #[arg(long, default_value = "out/mpi_jacobi")]
    out: PathBuf,
}

/// The `--threads` modes.
const THREADS: [&str; 3] = ["fixed", "share", "asat"];

fn main() {
    if let Err(e) = run(&Args::parse()) {
        eprintln!("mpi_jacobi: {e}");
        std::process::exit(2);
    }
}

/// This rank's rows: interior rows `lo..hi` of the grid (row 0 and row `n - 1` are edges).
fn rows_of(n: usize, rank: usize, size: usize) -> (usize, usize) {
    let interior = n - 2;
    let base = interior / size;
    let extra = interior % size;
    let lo = 1 + rank * base + rank.min(extra);
    (lo, lo + base + usize::from(rank < extra))
}

/// The starting grid rows `lo - 1 ..= hi` (halos included): the top edge at 1, the rest 0.
fn initial(n: usize, lo: usize, hi: usize) -> Vec<f64> {
    let mut u = vec![0.0; (hi - lo + 2) * n];
    if lo == 1 {
        u[..n].fill(1.0);
    }
    u
}

/// One Jacobi sweep of rows `1..=rows` of `u` into `next` (halo rows and edge columns copied),
/// returning the largest change.
fn sweep(rt: &Runtime, n: usize, u: &[f64], next: &mut [f64]) -> f64 {
    let rows = u.len() / n - 2;
    next[..n].copy_from_slice(&u[..n]);
    next[(rows + 1) * n..].copy_from_slice(&u[(rows + 1) * n..]);
    rt.parallel_slice_mut(
        &mut next[n..(rows + 1) * n],
        Schedule::Static,
        |start, out| {
            for (j, x) in out.iter_mut().enumerate() {
                let k = n + start + j;
                let c = k % n;
                *x = if c == 0 || c == n - 1 {
                    u[k]
                } else {
                    0.25 * (u[k - n] + u[k + n] + u[k - 1] + u[k + 1])
                };
            }
        },
    );
    rt.parallel_reduce(
        n..(rows + 1) * n,
        Schedule::Static,
        || 0.0f64,
        |m, r| r.fold(m, |m, k| m.max((next[k] - u[k]).abs())),
        f64::max,
    )
}

/// Sends the first and last owned rows of `u` to the neighbours and receives its halo rows.
fn exchange(world: &SimpleCommunicator, waiter: Option<&Waiter>, n: usize, u: &mut [f64]) {
    let (rank, size) = (world.rank(), world.size());
    let rows = u.len() / n - 2;
    let (top, rest) = u.split_at_mut(n);
    let (middle, bottom) = rest.split_at_mut(rows * n);
    let (first, last) = (&middle[..n], &middle[(rows - 1) * n..]);
    asat::mpi::mpi::request::scope(|scope| {
        let mut reqs = Vec::new();
        if rank > 0 {
            let up = world.process_at_rank(rank - 1);
            reqs.push(up.immediate_receive_into(scope, &mut top[..]));
            reqs.push(up.immediate_send(scope, first));
        }
        if rank + 1 < size {
            let down = world.process_at_rank(rank + 1);
            reqs.push(down.immediate_receive_into(scope, &mut bottom[..]));
            reqs.push(down.immediate_send(scope, last));
        }
        match waiter {
            Some(w) => {
                w.wait_all(reqs);
            }
            None => reqs.into_iter().for_each(|r| r.wait_without_status()),
        }
    });
}

/// What one solve gave.
struct Solve {
    seconds: f64,
    iterations: usize,
    change: f64,
    u: Vec<f64>,
}

fn solve(args: &Args, rt: &Runtime, world: &SimpleCommunicator, waiter: Option<&Waiter>) -> Solve {
    let n = args.n;
    let (lo, hi) = rows_of(n, world.rank() as usize, world.size() as usize);
    let mut u = initial(n, lo, hi);
    let mut next = u.clone();
    world.barrier();
    let t = Instant::now();
    let (mut iterations, mut change) = (0, f64::INFINITY);
    while iterations < args.iters {
        exchange(world, waiter, n, &mut u);
        let local = sweep(rt, n, &u, &mut next);
        std::mem::swap(&mut u, &mut next);
        iterations += 1;
        if iterations % args.check == 0 || iterations == args.iters {
            match waiter {
                // one f64 into one f64: the buffers always match
                Some(w) => w
                    .all_reduce_into(world, &local, &mut change, SystemOperation::max())
                    .expect("the buffers are one f64 each"),
                None => world.all_reduce_into(&local, &mut change, SystemOperation::max()),
            }
            if change < args.tolerance {
                break;
            }
        }
    }
    match waiter {
        Some(w) => {
            if let Err(e) = w.barrier(world) {
                eprintln!("mpi_jacobi: {e}");
                world.abort(2);
            }
        }
        None => world.barrier(),
    }
    Solve {
        seconds: t.elapsed().as_secs_f64(),
        iterations,
        change,
        u,
    }
}

/// The same iterations on the whole grid, one thread; rows `lo..hi` compared with `mine`.
fn verify(
    args: &Args,
    iterations: usize,
    lo: usize,
    hi: usize,
    mine: &[f64],
) -> Result<(), String> {
    let n = args.n;
    let single = Runtime::builder()
        .max_threads(1)
        .build()
        .map_err(|e| e.to_string())?;
    let mut u = initial(n, 1, n - 1);
    let mut next = u.clone();
    for _ in 0..iterations {
        sweep(&single, n, &u, &mut next);
        std::mem::swap(&mut u, &mut next);
    }
    let want = &u[lo * n..hi * n];
    let got = &mine[n..(hi - lo + 1) * n];
    match want
        .iter()
        .zip(got)
        .position(|(a, b)| a.to_bits() != b.to_bits())
    {
        None => Ok(()),
        Some(k) => Err(format!(
            "rows {lo}..{hi}: point {k} is {} where the serial solve has {}",
            got[k], want[k]
        )),
    }
}

/// The rank's runtime for a `--threads` mode (`None`: `Hybrid::runtime_builder` as it is).
fn runtime(hybrid: &Hybrid, threads: Option<&str>) -> Result<Runtime, String> {
    let node = hybrid.share().node_cpus.len().max(1);
    let builder = match threads {
        None => hybrid.runtime_builder(),
        Some("fixed") => Runtime::builder().max_threads(node).policy(Fixed::all()),
        Some("share") => hybrid.runtime_builder().policy(Fixed::all()),
        Some("asat") => Runtime::builder()
            .max_threads(node)
            .policy(Asat::from_env().map_err(|e| e.to_string())?),
        Some(t) => return Err(format!("--threads {t}: must be one of {THREADS:?}")),
    };
    builder.build().map_err(|e| e.to_string())
}

fn run(args: &Args) -> Result<(), String> {
    let hybrid = Hybrid::builder().build().map_err(|e| e.to_string())?;
    let rt = runtime(&hybrid, args.threads.as_deref())?;
    let world = hybrid.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    if args.n - 2 < size {
        return Err(format!(
            "a grid of {0}x{0} has {1} interior rows for {size} ranks: --n must be at least \
             {2} (one row per rank)",
            args.n,
            args.n - 2,
            size + 2
        ));
    }
    if rank == 0 {
        let s = hybrid.share();
        println!(
            "mpi_jacobi: {size} ranks, {}x{} grid; rank 0: {:?} share of CPUs {} on a node of {} \
             ranks, runtime of at most {} threads",
            args.n,
            args.n,
            s.kind,
            s.cpus,
            s.local_size,
            rt.max_threads()
        );
        println!(
            "{:<7} {:>9} {:>6} {:>11} {:>8} {:>8}",
            "wait", "seconds", "iters", "change", "blocks", "spins"
        );
    }
    let (lo, hi) = rows_of(args.n, rank, size);
    if args.go && rank == 0 {
        println!("READY");
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
    let mut rows = Vec::new();
    for name in &args.strategies {
        let waiter = match name.as_str() {
            "mpi" => None,
            s => Some(Waiter::new(
                AnyStrategy::by_name(s, &Config::calibrated()).map_err(|e| e.to_string())?,
            )),
        };
        let s = solve(args, &rt, world, waiter.as_ref());
        if args.verify {
            verify(args, s.iterations, lo, hi, &s.u)
                .map_err(|e| format!("rank {rank}, {name}: {e}"))?;
        }
        let st = waiter.as_ref().map(|w| w.stats()).unwrap_or_default();
        let mut sums = [0u64; 2];
        world.all_reduce_into(
            &[st.blocks, st.spin_successes][..],
            &mut sums[..],
            SystemOperation::sum(),
        );
        if rank == 0 {
            println!(
                "{name:<7} {:>9.4} {:>6} {:>11.3e} {:>8} {:>8}",
                s.seconds, s.iterations, s.change, sums[0], sums[1]
            );
            if args.go {
                println!(
                    "RESULT strategy={name} seconds={} iterations={}",
                    s.seconds, s.iterations
                );
            }
        }
        rows.push((name.clone(), s.seconds, s.iterations, s.change, sums));
    }
    if args.verify && rank == 0 {
        println!("verified: every rank's rows equal the serial solve's, for every strategy");
    }
    if rank == 0 {
        write_out(args, &rows).map_err(|e| format!("{}: {e}", args.out.display()))?;
        println!(
            "wrote {0}/mpi_jacobi.csv and {0}/mpi_jacobi.svg",
            args.out.display()
        );
    }
    Ok(())
}

type Row = (String, f64, usize, f64, [u64; 2]);

fn write_out(args: &Args, rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&args.out)?;
    let mut csv = String::from("strategy,seconds,iterations,change,blocks,spin_successes\n");
    for (name, secs, iters, change, [b, s]) in rows {
        csv.push_str(&format!("{name},{secs:.6},{iters},{change:e},{b},{s}\n"));
    }
    std::fs::write(args.out.join("mpi_jacobi.csv"), csv)?;
    let path = args.out.join("mpi_jacobi.svg");
    let root = SVGBackend::new(&path, (520, 340)).into_drawing_area();
    root.fill(&WHITE)?;
    let ymax = rows.iter().map(|r| r.1).fold(0.0, f64::max) * 1.15 + 1e-9;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("Jacobi {}x{}: seconds per way of waiting", args.n, args.n),
            ("sans-serif", 17),
        )
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(52)
        .build_cartesian_2d(-0.5f64..rows.len() as f64 - 0.5, 0.0..ymax)?;
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    chart
        .configure_mesh()
        .y_desc("seconds")
        .x_labels(rows.len())
        .x_label_formatter(&|x| {
            let i = x.round();
            let ok = (x - i).abs() < 0.01 && i >= 0.0 && (i as usize) < names.len();
            if ok {
                names[i as usize].to_owned()
            } else {
                String::new()
            }
        })
        .draw()?;
    chart.draw_series(rows.iter().enumerate().map(|(i, r)| {
        Rectangle::new(
            [(i as f64 - 0.3, 0.0), (i as f64 + 0.3, r.1)],
            Palette99::pick(i).filled(),
        )
    }))?;
    root.present()?;
    Ok(())
}
