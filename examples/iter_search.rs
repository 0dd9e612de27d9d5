//! Searches that stop early: `position_first` over `0..n` whose one hit is at index `at`, on
//! asat and on rayon (each a pool of `--threads`), plainly and after `by_exponential_blocks`,
//! against std's sequential `position`; with `--last`, `position_last` whose one hit is `at`
//! items before the end, against std's `rposition`; with `--any`, `position_any` (any hit:
//! there is one), against std's `position`; with `--max-len k`, the parallel searches go
//! through `with_max_len(k)` (pieces of at most `k` items, dealt as members free up).
//!
//! ```text
//! cargo run --release --example iter_search -- --n 100000000 --at 10,1000,1000000,50000000
//! cargo run --release --example iter_search -- --last --at 0,1000,1000000,50000000
//! cargo run --release --example iter_search -- --max-len 1 --at 10,1000 --forms asat,rayon
//! cargo run --release --example iter_search -- --any --max-len 1000 --at 10,75000000
//! ```
//!
//! Prints, per hit index, the median time per call of `--reps` calls of each form (the forms
//! alternate within each repetition) and its ratio over the sequential search.

use std::hint::black_box;
use std::time::Instant;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Early-stopping searches (position_first) on asat, rayon and std")]
struct Args {
    /// Length of the searched range.
    #[arg(long, default_value_t = 100_000_000)]
    n: usize,
    /// Indices of the hit, one table row each.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "10,1000,1000000,50000000"
    )]
    at: Vec<usize>,
    /// Threads of each pool.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Repetitions per form and row.
    #[arg(long, default_value_t = 11)]
    reps: usize,
    /// Forms to run, of: std, asat, asat-blocks, rayon, rayon-blocks.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "std,asat,asat-blocks,rayon,rayon-blocks"
    )]
    forms: Vec<String>,
    /// Search for the last hit (`position_last`), `at` items before the end.
    #[arg(long, conflicts_with = "any")]
    last: bool,
    /// Search for any hit (`position_any`).
    #[arg(long)]
    any: bool,
    /// Parallel searches after `with_max_len(k)`.
    #[arg(long, value_name = "k", value_parser = clap::value_parser!(u64).range(1..))]
    max_len: Option<u64>,
}

const FORMS: [&str; 5] = ["std", "asat", "asat-blocks", "rayon", "rayon-blocks"];

/// Whether item `i` is the hit (opaque to the optimiser, so every item is looked at).
#[inline]
fn hit(i: usize, at: usize) -> bool {
    black_box(i) == at
}

fn main() {
    let args = Args::parse();
    if let Some(bad) = args.forms.iter().find(|f| !FORMS.contains(&f.as_str())) {
        eprintln!(
            "iter_search: unknown form {bad:?}; the forms are {}",
            FORMS.join(", ")
        );
        std::process::exit(2);
    }
    if args.threads == 0 || args.reps == 0 {
        eprintln!("iter_search: --threads and --reps must be at least 1");
        std::process::exit(2);
    }
    if let Some(at) = args.at.iter().find(|&&at| at >= args.n) {
        eprintln!("iter_search: --at {at} is not below --n {}", args.n);
        std::process::exit(2);
    }
    let asat = asat::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .unwrap_or_else(|e| panic!("asat pool: {e}"));
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .unwrap_or_else(|e| panic!("rayon pool: {e}"));
    let (n, last) = (args.n, args.last);
    let which = match (args.last, args.any) {
        (true, _) => Which::Last,
        (_, true) => Which::Any,
        _ => Which::First,
    };
    let max = args.max_len.map_or(usize::MAX, |k| k as usize);
    let search = match which {
        Which::First => "position_first",
        Which::Last => "position_last",
        Which::Any => "position_any",
    };
    let pieces = args
        .max_len
        .map_or(String::new(), |k| format!(", with_max_len({k})"));
    println!(
        "{search} over 0..{n}{pieces}, {} threads, median of {} calls, ms (ratio over std)",
        args.threads, args.reps
    );
    print!("{:>10}", if last { "hit n-1-" } else { "hit at" });
    for f in &args.forms {
        print!("  {f:>20}");
    }
    println!();
    for &row in &args.at {
        let at = if last { n - 1 - row } else { row };
        let run = |form: &str| match form {
            "std" if last => (0..n).rposition(|i| hit(i, at)),
            "std" => (0..n).position(|i| hit(i, at)),
            "asat" => asat.install_here(|| on_asat(n, at, max, false, which)),
            "asat-blocks" => asat.install_here(|| on_asat(n, at, max, true, which)),
            "rayon" => rayon.install(|| on_rayon(n, at, max, false, which)),
            _ => rayon.install(|| on_rayon(n, at, max, true, which)),
        };
        let mut times = vec![Vec::new(); args.forms.len()];
        for _ in 0..args.reps {
            for (f, form) in args.forms.iter().enumerate() {
                let t = Instant::now();
                let got = run(form);
                times[f].push(t.elapsed().as_secs_f64() * 1e3);
                assert_eq!(got, Some(at), "{form}: wrong position");
            }
        }
        let medians: Vec<f64> = times.iter_mut().map(|t| median(t)).collect();
        let base = args
            .forms
            .iter()
            .position(|f| f == "std")
            .map(|i| medians[i]);
        print!("{row:>10}");
        for m in &medians {
            match base {
                Some(b) => print!("  {:>11.3} ({:>5.2}x)", m, m / b),
                None => print!("  {m:>20.3}"),
            }
        }
        println!();
    }
}

/// Which hit a search asks for.
#[derive(Clone, Copy)]
enum Which {
    First,
    Last,
    Any,
}

/// Defines `$name`, the search on the installed pool of `$krate` (asat or rayon: the same
/// calls through each crate's traits), in pieces of at most `max` items, after
/// `by_exponential_blocks` when `blocks`, for the hit `which` asks for.
macro_rules! search_on {
    ($name:ident, $krate:ident) => {
        fn $name(n: usize, at: usize, max: usize, blocks: bool, which: Which) -> Option<usize> {
            use $krate::prelude::*;
            let items = (0..n).into_par_iter().with_max_len(max);
            let found = |(k, i): (usize, usize)| hit(i, at).then_some(k);
            let is_hit = |i| hit(i, at);
            match (blocks, which) {
                (true, Which::First) => items
                    .enumerate()
                    .by_exponential_blocks()
                    .find_map_first(found),
                (true, Which::Last) => items
                    .enumerate()
                    .by_exponential_blocks()
                    .find_map_last(found),
                (true, Which::Any) => items
                    .enumerate()
                    .by_exponential_blocks()
                    .find_map_any(found),
                (false, Which::First) => items.position_first(is_hit),
                (false, Which::Last) => items.position_last(is_hit),
                (false, Which::Any) => items.position_any(is_hit),
            }
        }
    };
}

search_on!(on_asat, asat);
search_on!(on_rayon, rayon);

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
