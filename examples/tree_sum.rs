//! Divide-and-conquer workloads on asat's `join` beside rayon's and chili's.
//!
//! ```text
//! cargo run --release --example tree_sum -- tree --levels 10            # 1023 nodes
//! cargo run --release --example tree_sum -- tree --levels 24 --inner 1  # 16.7M nodes
//! cargo run --release --example tree_sum -- sleepy --depth 6 --threads 8 --leaf-ms 2
//! cargo run --release --example tree_sum -- sleepy --spawn   # the same tree of scope spawns
//! cargo run --release --example tree_sum -- callers --callers 4 --threads 8 --items 64
//! cargo run --release --example tree_sum -- nested --outer 2 --threads 8 --items 32
//! ```
//!
//! - `tree`: the sum of a balanced tree of `--levels` levels with one `join` per node (chili's
//!   published benchmark) on each runtime: `serial` (no joins), `inline` (the joins' recursion
//!   with a join that only calls both closures: what the recursion costs before any runtime's
//!   join adds its own), `rayon` (`rayon::join` inside
//!   `pool.install`), `chili` (`Scope::join` on a scope of the chili pool), `asat`
//!   (`asat::join` inside `pool.install`) and `asat-here` (the same inside
//!   `pool.install_here`, on the calling thread). Each round times `--inner` sums per runtime
//!   (one `install`, or one chili scope, per round), the runtimes taking turns within the
//!   round so that noise hits all alike; a runtime's time per sum is its best round. Every
//!   sum is checked against the serial one (exit status 1 on a mismatch).
//! - `sleepy`: a recursive `join` of `--depth` levels whose `2^depth` leaves each sleep
//!   `--leaf-ms`, inside `pool.install` of a rayon and an asat pool: the wall time beside the
//!   ideal `2^depth * leaf / threads`, and how many distinct threads ran leaves. With
//!   `--spawn`, the same tree is made of scope spawns (each node spawns its two children into
//!   one `pool.scope`), on both runtimes.
//! - `callers`: `--callers` threads each run one parallel loop of `--items` items that sleep
//!   `--item-ms` (`into_par_iter().for_each`) inside `pool.install` of ONE shared pool: the
//!   wall time until all callers are done beside the ideal `callers * items * item / threads`.
//! - `nested`: a parallel loop of `--outer` items, each a parallel loop of `--items` items
//!   that sleep `--item-ms`, inside `pool.install`: the wall time beside the ideal
//!   `outer * items * item / threads`, and how many distinct threads ran inner items.
//! - `idle`: the CPU time the process spends over `--window-ms`, `--after-ms` after a pool's
//!   last call (tree sums), for a rayon and an asat pool in turn.
//!
//! `sleepy`, `callers` and `nested` print medians of `--runs` runs, the runtimes taking turns.

use std::collections::HashSet;
use std::hint::black_box;
use std::num::NonZero;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use asat_peers::stats::{median, process_cpu};
use asat_peers::tree::{self, format_seconds, InlineJoin, Node, RayonJoin};
use clap::{Parser, Subcommand};

#[path = "common/asat_join.rs"]
mod asat_join;
use asat_join::AsatJoin;
#[path = "common/two_pools.rs"]
mod two_pools;
use two_pools::two_pools;

#[derive(Parser)]
#[command(about = "Divide-and-conquer joins on asat, rayon and chili")]
struct Args {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Sum a balanced binary tree with one join per node (best of --reps rounds).
    Tree {
        /// Levels of the tree (2^levels - 1 nodes; 24 levels take about 0.5 GB).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=26))]
        levels: u32,
        /// Threads of each pool [default: the machine's CPUs].
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: Option<u32>,
        /// Rounds; each runtime's time is that of its best round.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
        reps: u32,
        /// Sums per runtime and round [default: about 2 million nodes' worth, 2000 sums of
        /// a 10-level tree, 1 from 21 levels on].
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        inner: Option<u32>,
    },
    /// A recursive join whose leaves sleep: wall time against the ideal, threads used.
    Sleepy {
        /// Levels of joins (2^depth leaves).
        #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(0..=16))]
        depth: u32,
        /// Threads of each pool.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: u32,
        /// Milliseconds each leaf sleeps.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1000))]
        leaf_ms: u64,
        /// Runs per runtime (the median is printed).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
        /// Spawn the tree's nodes into one scope instead of joining them.
        #[arg(long)]
        spawn: bool,
    },
    /// The CPU an idle pool uses: tree sums on the pool, then --after-ms of nothing, then the
    /// process's CPU time over the next --window-ms (each runtime in turn).
    Idle {
        /// Threads of each pool.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: u32,
        /// Milliseconds between the last call and the window.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(0..=60_000))]
        after_ms: u64,
        /// Milliseconds of the window.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
        window_ms: u64,
    },
    /// Several threads each run a parallel loop on one shared pool.
    Callers {
        /// Threads that each run one parallel loop.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
        callers: u32,
        /// Threads of each pool.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: u32,
        /// Items of each loop.
        #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        items: u32,
        /// Milliseconds each item sleeps.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
        item_ms: u64,
        /// Runs per runtime (the median is printed).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
    },
    /// A parallel loop whose items each run a parallel loop of sleeping items.
    Nested {
        /// Items of the outer loop.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1024))]
        outer: u32,
        /// Threads of each pool.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
        threads: u32,
        /// Items of each inner loop.
        #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        items: u32,
        /// Milliseconds each inner item sleeps.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1000))]
        item_ms: u64,
        /// Runs per runtime (the median is printed).
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
        runs: u32,
    },
}

fn main() {
    match Args::parse().mode {
        Mode::Tree {
            levels,
            threads,
            reps,
            inner,
        } => {
            let threads = threads.map_or_else(
                || std::thread::available_parallelism().map_or(1, NonZero::get),
                |t| t as usize,
            );
            let inner = inner.map_or_else(|| (2_046_000 / Node::count(levels)).max(1), u64::from);
            tree_mode(levels, threads, reps as usize, inner as usize);
        }
        Mode::Sleepy {
            depth,
            threads,
            leaf_ms,
            runs,
            spawn,
        } => sleepy_mode(depth, threads as usize, leaf_ms, runs as usize, spawn),
        Mode::Idle {
            threads,
            after_ms,
            window_ms,
        } => idle_mode(threads as usize, after_ms, window_ms),
        Mode::Callers {
            callers,
            threads,
            items,
            item_ms,
            runs,
        } => callers_mode(
            callers as usize,
            threads as usize,
            items as usize,
            item_ms,
            runs as usize,
        ),
        Mode::Nested {
            outer,
            threads,
            items,
            item_ms,
            runs,
        } => nested_mode(
            outer as usize,
            threads as usize,
            items as usize,
            item_ms,
            runs as usize,
        ),
    }
}

/// The pools of the parallel runtimes, `threads` each.
fn pools(threads: usize) -> (rayon::ThreadPool, asat::ThreadPool) {
    two_pools(threads).unwrap_or_else(|e| fail(2, &e))
}

fn fail(code: i32, message: &str) -> ! {
    eprintln!("tree_sum: {message}");
    std::process::exit(code)
}

const TREE_RUNTIMES: [&str; 6] = ["serial", "inline", "rayon", "chili", "asat", "asat-here"];

/// `k` sums by `sum`: how many differed from `expected`, and the first that did.
fn sums(k: usize, expected: u64, mut sum: impl FnMut() -> u64) -> (usize, Option<u64>) {
    let (mut wrong, mut first) = (0, None);
    for _ in 0..k {
        let s = black_box(sum());
        if s != expected {
            wrong += 1;
            first.get_or_insert(s);
        }
    }
    (wrong, first)
}

fn tree_mode(levels: u32, threads: usize, reps: usize, inner: usize) {
    let t = Instant::now();
    let root = Node::tree(levels);
    let built = t.elapsed().as_secs_f64();
    let expected = tree::sum_serial(&root);
    if expected != Node::expected_sum(levels) {
        fail(1, "the serial sum is not n (n + 1) / 2");
    }
    let (rayon, asat) = pools(threads);
    let chili = tree::chili_pool(threads);
    println!(
        "tree of {levels} levels ({} nodes, built in {}), {threads} threads, best of {reps} \
         rounds of {inner} sums",
        Node::count(levels),
        format_seconds(built)
    );
    let tree = &root;
    let mut best = [f64::INFINITY; TREE_RUNTIMES.len()];
    let mut mismatches = Vec::new();
    for round in 0..reps {
        for (r, name) in TREE_RUNTIMES.iter().enumerate() {
            let t = Instant::now();
            let (wrong, first) = match *name {
                "serial" => sums(inner, expected, || tree::sum_serial(black_box(tree))),
                "inline" => sums(inner, expected, || {
                    tree::sum_join::<InlineJoin>(black_box(tree))
                }),
                "rayon" => rayon.install(|| sums(inner, expected, || tree::sum_rayon(tree))),
                "chili" => {
                    let mut scope = chili.scope();
                    sums(inner, expected, || tree::sum_chili(tree, &mut scope))
                }
                "asat" => {
                    asat.install(|| sums(inner, expected, || tree::sum_join::<AsatJoin>(tree)))
                }
                _ => {
                    asat.install_here(|| sums(inner, expected, || tree::sum_join::<AsatJoin>(tree)))
                }
            };
            let per_sum = t.elapsed().as_secs_f64() / inner as f64;
            best[r] = best[r].min(per_sum);
            if let Some(got) = first {
                mismatches.push(format!(
                    "{name}, round {}: {wrong} of {inner} sums wrong (e.g. {got}, not {expected})",
                    round + 1
                ));
            }
        }
    }
    println!(
        "{:<10} {:>12} {:>10} {:>9}",
        "runtime", "per sum", "per node", "/serial"
    );
    for (name, &b) in TREE_RUNTIMES.iter().zip(&best) {
        println!(
            "{name:<10} {:>12} {:>10} {:>8.2}x",
            format_seconds(b),
            format_seconds(b / Node::count(levels) as f64),
            b / best[0]
        );
    }
    if !mismatches.is_empty() {
        fail(1, &format!("wrong sums:\n  {}", mismatches.join("\n  ")));
    }
}

const POOL_RUNTIMES: [&str; 2] = ["rayon", "asat"];

/// Prints the medians of each runtime's `walls` (seconds) beside `ideal`, and of `threads` (the
/// threads that ran leaves) where there are some.
fn pool_table(walls: &[Vec<f64>], threads: Option<&[Vec<f64>]>, ideal: f64) {
    print!(
        "{:<8} {:>12} {:>12} {:>8}",
        "runtime", "wall", "ideal", "/ideal"
    );
    println!("{}", if threads.is_some() { "  threads" } else { "" });
    for (r, name) in POOL_RUNTIMES.iter().enumerate() {
        let wall = median(walls[r].clone());
        print!(
            "{name:<8} {:>12} {:>12} {:>7.2}x",
            format_seconds(wall),
            format_seconds(ideal),
            wall / ideal
        );
        match threads {
            Some(t) => println!("  {:>7}", median(t[r].clone())),
            None => println!(),
        }
    }
}

fn idle_mode(threads: usize, after_ms: u64, window_ms: u64) {
    let (rayon, asat) = pools(threads);
    let tree = Node::tree(16);
    let want = Node::expected_sum(16);
    println!(
        "CPU of an idle pool of {threads}: {window_ms} ms window, {after_ms} ms after its last call"
    );
    println!("{:<8} {:>10} {:>8}", "runtime", "cpu", "share");
    for (r, name) in POOL_RUNTIMES.iter().enumerate() {
        for _ in 0..20 {
            let got = match r {
                0 => rayon.install(|| tree::sum_rayon(&tree)),
                _ => asat.install(|| tree::sum_join::<AsatJoin>(&tree)),
            };
            if got != want {
                fail(1, &format!("{name}'s sum {got} is not {want}"));
            }
        }
        std::thread::sleep(Duration::from_millis(after_ms));
        let before = process_cpu();
        std::thread::sleep(Duration::from_millis(window_ms));
        let cpu = process_cpu() - before;
        let share = cpu.as_secs_f64() / (window_ms as f64 / 1e3);
        println!(
            "{name:<8} {:>10} {:>7.2}%",
            format_seconds(cpu.as_secs_f64()),
            share * 100.0
        );
    }
}

/// A node of a tree of `depth` levels of rayon scope spawns, calling `leaf` at each leaf.
fn rayon_spawns<'s>(s: &rayon::Scope<'s>, depth: u32, leaf: &'s (dyn Fn() + Sync)) {
    if depth == 0 {
        return leaf();
    }
    for _ in 0..2 {
        s.spawn(move |s| rayon_spawns(s, depth - 1, leaf));
    }
}

/// [`rayon_spawns`] on asat.
fn asat_spawns<'s>(s: &asat::Scope<'s>, depth: u32, leaf: &'s (dyn Fn() + Sync)) {
    if depth == 0 {
        return leaf();
    }
    for _ in 0..2 {
        s.spawn(move |s| asat_spawns(s, depth - 1, leaf));
    }
}

fn sleepy_mode(depth: u32, threads: usize, leaf_ms: u64, runs: usize, spawn: bool) {
    let (rayon, asat) = pools(threads);
    let leaf = Duration::from_millis(leaf_ms);
    let leaves = 1usize << depth;
    let ideal = leaves as f64 * leaf.as_secs_f64() / threads as f64;
    let what = if spawn {
        "tree of scope spawns"
    } else {
        "recursive join"
    };
    println!(
        "{what} of depth {depth} ({leaves} leaves of {leaf_ms} ms), {threads} threads, \
         median of {runs} runs"
    );
    let mut walls = vec![Vec::new(); POOL_RUNTIMES.len()];
    let mut used = vec![Vec::new(); POOL_RUNTIMES.len()];
    for _ in 0..runs {
        for (r, name) in POOL_RUNTIMES.iter().enumerate() {
            let ids = Mutex::new(HashSet::new());
            let ran = AtomicUsize::new(0);
            let sleep = || {
                ids.lock().unwrap().insert(std::thread::current().id());
                ran.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(leaf);
            };
            let t = Instant::now();
            match (*name, spawn) {
                ("rayon", false) => {
                    rayon.install(|| tree::fork_leaves::<RayonJoin, _>(depth, &sleep))
                }
                ("rayon", true) => rayon.scope(|s| rayon_spawns(s, depth, &sleep)),
                (_, false) => asat.install(|| tree::fork_leaves::<AsatJoin, _>(depth, &sleep)),
                (_, true) => asat.scope(|s| asat_spawns(s, depth, &sleep)),
            }
            walls[r].push(t.elapsed().as_secs_f64());
            let ran = ran.into_inner();
            if ran != leaves {
                fail(1, &format!("{name}: {ran} leaves ran, not {leaves}"));
            }
            used[r].push(ids.into_inner().unwrap().len() as f64);
        }
    }
    pool_table(&walls, Some(&used), ideal);
}

/// One caller's loop on rayon: `n` items that sleep `item`, each counted in `done`.
fn rayon_loop(pool: &rayon::ThreadPool, n: usize, item: Duration, done: &AtomicUsize) {
    use rayon::prelude::*;
    pool.install(|| {
        (0..n).into_par_iter().for_each(|_| {
            std::thread::sleep(item);
            done.fetch_add(1, Ordering::Relaxed);
        })
    });
}

/// [`rayon_loop`] on asat.
fn asat_loop(pool: &asat::ThreadPool, n: usize, item: Duration, done: &AtomicUsize) {
    use asat::prelude::*;
    pool.install(|| {
        (0..n).into_par_iter().for_each(|_| {
            std::thread::sleep(item);
            done.fetch_add(1, Ordering::Relaxed);
        })
    });
}

fn callers_mode(callers: usize, threads: usize, items: usize, item_ms: u64, runs: usize) {
    let (rayon, asat) = pools(threads);
    let item = Duration::from_millis(item_ms);
    let ideal = (callers * items) as f64 * item.as_secs_f64() / threads as f64;
    println!(
        "{callers} callers, each a loop of {items} items of {item_ms} ms, on one pool of \
         {threads} threads, median of {runs} runs"
    );
    let mut walls = vec![Vec::new(); POOL_RUNTIMES.len()];
    for _ in 0..runs {
        for (r, name) in POOL_RUNTIMES.iter().enumerate() {
            let done = AtomicUsize::new(0);
            let t = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..callers {
                    s.spawn(|| match *name {
                        "rayon" => rayon_loop(&rayon, items, item, &done),
                        _ => asat_loop(&asat, items, item, &done),
                    });
                }
            });
            walls[r].push(t.elapsed().as_secs_f64());
            let done = done.into_inner();
            if done != callers * items {
                fail(
                    1,
                    &format!("{name}: {done} items ran, not {}", callers * items),
                );
            }
        }
    }
    pool_table(&walls, None, ideal);
}

fn nested_mode(outer: usize, threads: usize, items: usize, item_ms: u64, runs: usize) {
    let (rayon, asat) = pools(threads);
    let item = Duration::from_millis(item_ms);
    let ideal = (outer * items) as f64 * item.as_secs_f64() / threads as f64;
    println!(
        "a loop of {outer} items, each a loop of {items} items of {item_ms} ms, on a pool of \
         {threads} threads, median of {runs} runs"
    );
    let mut walls = vec![Vec::new(); POOL_RUNTIMES.len()];
    let mut used = vec![Vec::new(); POOL_RUNTIMES.len()];
    for _ in 0..runs {
        for (r, name) in POOL_RUNTIMES.iter().enumerate() {
            let ids = Mutex::new(HashSet::new());
            let ran = AtomicUsize::new(0);
            let sleep = || {
                ids.lock().unwrap().insert(std::thread::current().id());
                ran.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(item);
            };
            let t = Instant::now();
            match *name {
                "rayon" => rayon.install(|| {
                    use rayon::prelude::*;
                    (0..outer)
                        .into_par_iter()
                        .for_each(|_| (0..items).into_par_iter().for_each(|_| sleep()))
                }),
                _ => asat.install(|| {
                    use asat::prelude::*;
                    (0..outer)
                        .into_par_iter()
                        .for_each(|_| (0..items).into_par_iter().for_each(|_| sleep()))
                }),
            }
            walls[r].push(t.elapsed().as_secs_f64());
            let ran = ran.into_inner();
            if ran != outer * items {
                fail(
                    1,
                    &format!("{name}: {ran} items ran, not {}", outer * items),
                );
            }
            used[r].push(ids.into_inner().unwrap().len() as f64);
        }
    }
    pool_table(&walls, Some(&used), ideal);
}
