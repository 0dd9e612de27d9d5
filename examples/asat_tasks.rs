//! How many threads the ASAT policy lets take tasks in a program of joins, with the machine
//! to itself and beside CPU hogs (processes this example starts).
//!
//! ```text
//! cargo run --release --example asat_tasks -- --hogs 3
//! ```
//!
//! A runtime of `--threads` threads (default: the CPUs) with the `asat` policy runs rounds of
//! 300 ms of serial work (which lets an evaluation fall due) and then a recursive join of 64
//! leaves of 2 ms of work; each round prints how many threads ran leaves. First alone, then
//! with `--hogs` processes spinning beside it.

use std::collections::HashSet;
use std::hint::black_box;
use std::num::NonZero;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Parser;

#[derive(Parser)]
#[command(about = "Threads ASAT lets take tasks, alone and beside CPU hogs")]
struct Args {
    /// Hog processes beside the second half of the rounds.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=256))]
    hogs: u32,
    /// Threads of the runtime [default: the machine's CPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Rounds alone and beside the hogs, each.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    /// Internal: spin for this many milliseconds.
    #[arg(long, hide = true)]
    hog: Option<u64>,
}

/// Spins for `d`.
fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        black_box(0);
    }
}

fn fork(depth: u32, leaf: &(dyn Fn() + Sync)) {
    if depth == 0 {
        leaf();
    } else {
        asat::join(|| fork(depth - 1, leaf), || fork(depth - 1, leaf));
    }
}

fn main() {
    let args = Args::parse();
    if let Some(ms) = args.hog {
        return spin(Duration::from_millis(ms));
    }
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, NonZero::get),
        |t| t as usize,
    );
    let policy = asat::parse_policy("asat").expect("asat is a policy");
    let rt = asat::Runtime::builder()
        .max_threads(threads)
        .shared_policy(policy)
        .build()
        .unwrap_or_else(|e| fail(&e.to_string()));
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(&format!("own path: {e}")));
    for hogs in [0, args.hogs] {
        let per_round = 300 + 64 * 2 * 2;
        let spinners: Vec<Child> = (0..hogs)
            .map(|_| {
                let ms = (per_round * args.rounds as u64 + 500).to_string();
                Command::new(&exe)
                    .args(["--hog", &ms])
                    .spawn()
                    .unwrap_or_else(|e| fail(&format!("start a hog: {e}")))
            })
            .collect();
        for round in 0..args.rounds {
            spin(Duration::from_millis(300));
            let seen = Mutex::new(HashSet::new());
            let leaf = || {
                spin(Duration::from_millis(2));
                seen.lock().unwrap().insert(std::thread::current().id());
            };
            rt.install_here(|| fork(6, &leaf));
            let n = seen.into_inner().unwrap().len();
            println!("{hogs} hogs, round {round}: {n} of {threads} threads ran leaves");
        }
        for mut s in spinners {
            _ = s.kill();
            _ = s.wait();
        }
    }
}

fn fail(message: &str) -> ! {
    eprintln!("asat_tasks: {message}");
    std::process::exit(1)
}
