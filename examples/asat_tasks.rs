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
//! with `--hogs` processes spinning beside it. Last, one long call (`--long-ms` of leaves on
//! one thread) beside hogs that start 0.6 s into it and stop 0.8 s later: each 0.2 s of it
//! prints how many threads ran leaves, as the policy's number follows the machine while the
//! call runs. A rise shows at once; a fall only as the threads above the number finish the
//! tasks they hold (a thread leaves no task half done), and in a recursion a thief holds the
//! half of it that it stole at the start, so there the threads stay until the call ends.

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
    /// Milliseconds of leaves (on one thread) in the long call; 0 skips it.
    #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(0..=600_000))]
    long_ms: u64,
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
    if args.long_ms > 0 {
        long_call(&rt, &exe, &args, threads);
    }
}

/// One call of `--long-ms` of 2 ms leaves, hogs beside it from 0.6 s to 1.4 s; prints the
/// threads that ran leaves in each 0.2 s.
fn long_call(rt: &asat::Runtime, exe: &std::path::Path, args: &Args, threads: usize) {
    const WINDOW: Duration = Duration::from_millis(200);
    let leaves = (args.long_ms / 2).max(1);
    let depth = u64::BITS - leaves.leading_zeros() - 1;
    let start = Instant::now();
    let windows: Mutex<Vec<HashSet<std::thread::ThreadId>>> = Mutex::new(Vec::new());
    let leaf = || {
        spin(Duration::from_millis(2));
        let w = (start.elapsed().as_nanos() / WINDOW.as_nanos()) as usize;
        let mut ws = windows.lock().unwrap();
        if ws.len() <= w {
            ws.resize_with(w + 1, HashSet::new);
        }
        ws[w].insert(std::thread::current().id());
    };
    let hogs = std::thread::scope(|s| {
        let hogs = s.spawn(|| {
            std::thread::sleep(Duration::from_millis(600));
            (0..args.hogs)
                .map(|_| {
                    Command::new(exe)
                        .args(["--hog", "800"])
                        .spawn()
                        .unwrap_or_else(|e| fail(&format!("start a hog: {e}")))
                })
                .collect::<Vec<Child>>()
        });
        rt.install_here(|| fork(depth, &leaf));
        hogs.join().expect("the hogs' starter")
    });
    for mut h in hogs {
        _ = h.wait();
    }
    for (w, seen) in windows.into_inner().unwrap().iter().enumerate() {
        let from = w as f64 * WINDOW.as_secs_f64();
        let beside = if (0.6..1.4).contains(&from) {
            args.hogs
        } else {
            0
        };
        println!(
            "long call, {from:.1}-{:.1} s, {beside} hogs: {} of {threads} threads ran leaves",
            from + WINDOW.as_secs_f64(),
            seen.len()
        );
    }
}

fn fail(message: &str) -> ! {
    eprintln!("asat_tasks: {message}");
    std::process::exit(1)
}
