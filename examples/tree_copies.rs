//! Copies of the tree sum at once on one machine: the shared-machine case of `join`.
//!
//! ```text
//! cargo run --release --example tree_copies -- --copies 2,3,4 --levels 24 --sums 3
//! ```
//!
//! For each number of copies and each runtime in turn (`serial`; `rayon`, a pool of the
//! machine's CPUs; `asat-fixed`, an asat pool of that size with the `fixed` policy; `asat`, the
//! same with the `asat` policy; `--runtimes` takes a subset), this starts that many processes
//! of itself. Each builds a tree of `--levels` levels, reports ready, and once every copy is
//! ready (so that building is not timed) sums its tree `--sums` times with a `join` per node
//! (checking each sum) and prints its wall and CPU seconds (`--sums 10,3`: copies of unequal
//! work, some of which leave while others run). The table gives, per runtime, the time until
//! the last copy finished and the copies' CPU time, in seconds and beside the best of serial,
//! rayon and `asat-fixed` (time) and serial (CPU), and how long the first copy took (copies of
//! equal work that end far apart had unequal shares of the machine). The runtimes take turns,
//! `--runs` times; medians.

use std::io::{BufRead, BufReader, Write};
use std::num::NonZero;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use asat_peers::stats::{median, process_cpu};
use asat_peers::tree::{self, Node};
use clap::builder::PossibleValuesParser;
use clap::Parser;

#[path = "common/asat_join.rs"]
mod asat_join;
use asat_join::AsatJoin;

#[derive(Parser)]
#[command(about = "Copies of the tree sum at once: time to the last copy and CPU time")]
struct Args {
    /// Numbers of copies to run at once, comma-separated.
    #[arg(long, default_value = "2,3,4", value_delimiter = ',')]
    copies: Vec<u32>,
    /// Levels of each copy's tree (2^levels - 1 nodes; 24 levels take about 0.5 GB a copy).
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..=26))]
    levels: u32,
    /// Sums each copy times; a list gives the copies their numbers in turn (`10,3`: the
    /// first copy 10, the second 3, the third 10, ...), so that copies leave while others run.
    #[arg(long, default_value = "3", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    sums: Vec<u32>,
    /// Threads of each copy's pool [default: the machine's CPUs].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Runtimes to run, comma-separated (the time is set against the best of those of
    /// serial, rayon and asat-fixed that run, the CPU against serial's when it runs).
    #[arg(long, default_value = "serial,rayon,asat-fixed,asat", value_delimiter = ',', value_parser = PossibleValuesParser::new(RUNTIMES))]
    runtimes: Vec<String>,
    /// Rounds (the runtimes take turns in each); medians are printed.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Internal: run as one copy with this runtime.
    #[arg(long, hide = true)]
    copy: Option<String>,
}

const RUNTIMES: [&str; 4] = ["serial", "rayon", "asat-fixed", "asat"];

fn main() {
    let args = Args::parse();
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, NonZero::get),
        |t| t as usize,
    );
    if let Some(runtime) = &args.copy {
        return copy(runtime, args.levels, args.sums[0], threads);
    }
    if args.copies.contains(&0) {
        fail("--copies takes numbers from 1 up");
    }
    println!(
        "tree of {} levels, {} sums a copy, pools of {threads} threads, median of {} runs",
        args.levels,
        args.sums
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" or "),
        args.runs
    );
    println!(
        "{:>6} {:<11} {:>10} {:>9} {:>10} {:>9} {:>11}",
        "copies", "runtime", "last done", "/best", "CPU", "/serial", "first done"
    );
    let runtimes: Vec<&str> = RUNTIMES
        .into_iter()
        .filter(|r| args.runtimes.iter().any(|a| a == r))
        .collect();
    for &k in &args.copies {
        let mut walls = vec![Vec::new(); runtimes.len()];
        let mut cpus = vec![Vec::new(); runtimes.len()];
        let mut firsts = vec![Vec::new(); runtimes.len()];
        for _ in 0..args.runs {
            for (r, name) in runtimes.iter().enumerate() {
                let done = run_copies(name, k as usize, &args, threads);
                walls[r].push(done.last);
                cpus[r].push(done.cpu);
                firsts[r].push(done.first);
            }
        }
        let walls: Vec<f64> = walls.into_iter().map(median).collect();
        let cpus: Vec<f64> = cpus.into_iter().map(median).collect();
        let firsts: Vec<f64> = firsts.into_iter().map(median).collect();
        let of = |name: &str, v: &[f64]| runtimes.iter().position(|&r| r == name).map(|r| v[r]);
        let best = ["serial", "rayon", "asat-fixed"]
            .iter()
            .filter_map(|name| of(name, &walls))
            .reduce(f64::min);
        let serial_cpu = of("serial", &cpus);
        let ratio =
            |x: f64, base: Option<f64>| base.map_or("-".into(), |b| format!("{:.2}x", x / b));
        for (r, name) in runtimes.iter().enumerate() {
            println!(
                "{k:>6} {name:<11} {:>9.3}s {:>9} {:>9.3}s {:>9} {:>10.3}s",
                walls[r],
                ratio(walls[r], best),
                cpus[r],
                ratio(cpus[r], serial_cpu),
                firsts[r]
            );
        }
    }
}

/// What [`run_copies`] measured, in seconds.
struct Done {
    /// From the go until the last copy finished.
    last: f64,
    /// The quickest copy's own time for its sums.
    first: f64,
    /// The copies' CPU time (their own, over their sums).
    cpu: f64,
}

/// Runs `k` copies with runtime `name` at once.
fn run_copies(name: &str, k: usize, args: &Args, threads: usize) -> Done {
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(&format!("own path: {e}")));
    let mut children: Vec<Child> = (0..k)
        .map(|i| {
            let sums = args.sums[i % args.sums.len()];
            Command::new(&exe)
                .args(["--copy", name, "--levels", &args.levels.to_string()])
                .args(["--sums", &sums.to_string()])
                .args(["--threads", &threads.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| fail(&format!("start a copy: {e}")))
        })
        .collect();
    let mut outputs: Vec<_> = children
        .iter_mut()
        .map(|c| BufReader::new(c.stdout.take().expect("piped")))
        .collect();
    for out in &mut outputs {
        if line(out) != "ready" {
            fail(&format!("{name}: a copy did not get ready"));
        }
    }
    let go = Instant::now();
    for c in &mut children {
        let stdin = c.stdin.as_mut().expect("piped");
        _ = stdin.write_all(b"go\n").and_then(|()| stdin.flush());
    }
    let mut cpu = 0.0;
    let mut first = f64::INFINITY;
    for out in &mut outputs {
        let report = line(out);
        let mut fields = report.split_whitespace().map(str::parse::<f64>);
        match (fields.next(), fields.next()) {
            (Some(Ok(wall)), Some(Ok(c))) => {
                cpu += c;
                first = first.min(wall);
            }
            _ => fail(&format!("{name}: a copy reported {report:?}")),
        }
    }
    let last = go.elapsed().as_secs_f64();
    for mut c in children {
        match c.wait() {
            Ok(s) if s.success() => {}
            s => fail(&format!("{name}: a copy ended with {s:?}")),
        }
    }
    Done { last, first, cpu }
}

/// The next line of a copy's output, without its end.
fn line(out: &mut impl BufRead) -> String {
    let mut s = String::new();
    _ = out.read_line(&mut s);
    s.trim_end().to_owned()
}

/// One copy: builds its tree, says `ready`, waits for `go`, sums, prints wall and CPU seconds
/// and exits.
fn copy(runtime: &str, levels: u32, sums: u32, threads: usize) {
    let root = Node::tree(levels);
    let expected = Node::expected_sum(levels);
    let rayon = (runtime == "rayon").then(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap_or_else(|e| fail(&format!("rayon pool: {e}")))
    });
    let asat = runtime.strip_prefix("asat").map(|policy| {
        let policy = if policy.is_empty() { "asat" } else { "fixed" };
        asat::Runtime::builder()
            .max_threads(threads)
            .shared_policy(asat::parse_policy(policy).unwrap_or_else(|e| fail(&e.to_string())))
            .build()
            .unwrap_or_else(|e| fail(&format!("asat pool: {e}")))
    });
    println!("ready");
    let mut go = String::new();
    _ = std::io::stdin().read_line(&mut go);
    let (t, cpu) = (Instant::now(), process_cpu());
    for _ in 0..sums {
        let sum = match (&rayon, &asat) {
            (Some(pool), _) => pool.install(|| tree::sum_rayon(&root)),
            (_, Some(pool)) => pool.install(|| tree::sum_join::<AsatJoin>(&root)),
            _ => tree::sum_serial(&root),
        };
        if sum != expected {
            fail(&format!("{runtime}: sum {sum}, not {expected}"));
        }
    }
    let wall = t.elapsed().as_secs_f64();
    let cpu = (process_cpu() - cpu).as_secs_f64();
    println!("{wall} {cpu}");
    // Ends without freeing the tree: its millions of allocations would keep a CPU busy for a
    // tenth of a second while the other copies still sum.
    _ = std::io::stdout().flush();
    std::process::exit(0);
}

fn fail(message: &str) -> ! {
    eprintln!("tree_copies: {message}");
    std::process::exit(1)
}
