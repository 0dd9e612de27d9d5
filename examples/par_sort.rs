//! `par_sort` and `par_sort_unstable` on asat beside rayon's and std's sorts.
//!
//! ```text
//! cargo run --release --example par_sort -- --len 4000000 --threads 2 --rounds 5
//! ```
//!
//! Sorts `--len` pseudo-random `u64`s (the same data each time, copied before the clock
//! starts), stably and unstably, three ways per runtime:
//! - `serial`: std's `sort` / `sort_unstable` on the calling thread;
//! - `alone`: `par_sort*` inside `pool.install` of a rayon and an asat pool of `--threads`;
//! - `in a join`: the same sort as the first half of a `join` whose second half is empty,
//!   inside `pool.install`: a sort nested in another parallel call.
//!
//! Each round runs every runtime once per row, the runtimes taking turns so that noise hits
//! all alike; the table shows medians of `--rounds` rounds and each time beside serial's. Every
//! result is checked against std's (exit status 1 on a mismatch).

use std::hint::black_box;
use std::time::Instant;

use asat_peers::stats::median;
use asat_peers::tree::format_seconds;
use clap::Parser;

#[path = "common/two_pools.rs"]
mod two_pools;
use two_pools::two_pools;

#[derive(Parser)]
#[command(about = "par_sort on asat beside rayon and std")]
struct Args {
    /// Elements to sort.
    #[arg(long, default_value_t = 4_000_000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    len: u64,
    /// Threads of each pool [default: the machine's CPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Rounds; the table shows medians.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Stable,
    Unstable,
}

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Alone,
    InJoin,
}

const RUNTIMES: [&str; 3] = ["serial", "rayon", "asat"];

fn main() {
    let args = Args::parse();
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let data = data(args.len as usize);
    let mut want = data.clone();
    want.sort_unstable();
    let (rayon, asat) = two_pools(threads).unwrap_or_else(|e| fail(2, &e));
    println!(
        "{} u64s, {threads} threads, medians of {} rounds",
        data.len(),
        args.rounds
    );
    println!(
        "{:<10} {:<10} {:>10} {:>16} {:>16}",
        "sort", "how", "serial", "rayon", "asat"
    );
    for kind in [Kind::Stable, Kind::Unstable] {
        for way in [Way::Alone, Way::InJoin] {
            let mut times = vec![Vec::new(); RUNTIMES.len()];
            for _ in 0..args.rounds {
                for (r, name) in RUNTIMES.iter().enumerate() {
                    let mut v = data.clone();
                    let t = Instant::now();
                    match *name {
                        "serial" => sort_serial(&mut v, kind),
                        "rayon" => rayon.install(|| sort_rayon(&mut v, kind, way)),
                        _ => asat.install(|| sort_asat(&mut v, kind, way)),
                    }
                    times[r].push(t.elapsed().as_secs_f64());
                    if v != want {
                        fail(1, &format!("{name} did not sort"));
                    }
                    drop(black_box(v));
                }
            }
            let m: Vec<f64> = times.into_iter().map(median).collect();
            println!(
                "{:<10} {:<10} {:>10} {:>9} {:>5.2}x {:>9} {:>5.2}x",
                if kind == Kind::Stable {
                    "stable"
                } else {
                    "unstable"
                },
                if way == Way::Alone {
                    "alone"
                } else {
                    "in a join"
                },
                format_seconds(m[0]),
                format_seconds(m[1]),
                m[1] / m[0],
                format_seconds(m[2]),
                m[2] / m[0],
            );
        }
    }
}

/// `n` pseudo-random `u64`s (xorshift), the same every run.
fn data(n: usize) -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

fn sort_serial(v: &mut [u64], kind: Kind) {
    match kind {
        Kind::Stable => v.sort(),
        Kind::Unstable => v.sort_unstable(),
    }
}

fn sort_rayon(v: &mut [u64], kind: Kind, way: Way) {
    use rayon::slice::ParallelSliceMut;
    let sort = |v: &mut [u64]| match kind {
        Kind::Stable => v.par_sort(),
        Kind::Unstable => v.par_sort_unstable(),
    };
    match way {
        Way::Alone => sort(v),
        Way::InJoin => {
            rayon::join(|| sort(v), || ());
        }
    }
}

fn sort_asat(v: &mut [u64], kind: Kind, way: Way) {
    use asat::slice::ParallelSliceMut;
    let sort = |v: &mut [u64]| match kind {
        Kind::Stable => v.par_sort(),
        Kind::Unstable => v.par_sort_unstable(),
    };
    match way {
        Way::Alone => sort(v),
        Way::InJoin => {
            asat::join(|| sort(v), || ());
        }
    }
}

fn fail(code: i32, message: &str) -> ! {
    eprintln!("par_sort: {message}");
    std::process::exit(code)
}
