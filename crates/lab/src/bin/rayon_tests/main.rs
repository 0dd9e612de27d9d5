//! rayon's own test suite run against asat: rayon's tests of its public API, rewritten as a
//! rayon program is moved to asat, built against this workspace's `asat` and run one by one.
//! Each test is reported as passed, failed (with the first line of its panic message), timed
//! out, not compiled, not applicable or ignored, and each outcome that is not rayon's as a
//! known difference (listed below with its reason) or as unexpected.
//!
//! ```text
//! cargo run --release -p asat-lab --bin rayon_tests -- --rayon ~/src/rayon \
//!     [--out out/rayon_tests] [--timeout 60] [--files octillion,unit_iter]
//! ```
//!
//! rayon is not part of this repository, nor is any of its code; get it with
//! `git clone https://github.com/rayon-rs/rayon DIR` (MIT or Apache-2.0) and pass the folder
//! with `--rayon`. The harness copies its test files into a crate of its own,
//! `<out>/crate` (`rayon-tests-on-asat`, see `port.rs` and `manifest.rs`), and builds there
//! with the target folder `<out>/target`; a second run rebuilds only what changed (and the
//! files that lost tests that did not compile, which are copied whole again).
//!
//! # What is copied, and how it is rewritten
//!
//! - `tests/*.rs` of rayon, as `tests/<name>.rs`; `rayon-core/tests/*.rs`, as
//!   `tests/core_<name>.rs`; rayon's unit tests of its public API, `src/iter/test.rs` as
//!   `tests/unit_iter.rs` and `src/slice/test.rs` as `tests/unit_slice.rs`.
//! - In every file, each path that starts with `rayon::` or `rayon_core::` starts with
//!   `asat::` instead (`use rayon_core::*;` becomes `use asat::*;`).
//! - In the unit-test files, which were modules inside rayon, `use super::*;` becomes
//!   `use asat::iter::*;` (`asat::slice::*` for the slice tests) and
//!   `use std::collections::LinkedList;` (which rayon's parent module imported privately),
//!   and each `crate::` path becomes an `asat::` path. Their `#![cfg(test)]` line is kept: an
//!   integration test is compiled with `cfg(test)`.
//! - A test whose code (comments and literals aside) names rayon's plumbing, which asat does
//!   not have (`Producer`, `ProducerCallback`, `with_producer` ...: `source::PLUMBING`), is
//!   taken out of the copy and reported as "not applicable: rayon's plumbing traits". A file
//!   that names them outside its tests even then (`tests/producer_split_at.rs`) is not
//!   copied; its tests are reported as not applicable.
//! - A copy that still names `rayon` or `rayon_core` in its code stops the harness.
//!
//! Each file is built alone (`cargo test --release --no-run --test NAME`), so one that does
//! not compile hides no other. When every error of a failed build points into test
//! functions, those tests are taken out of the copy (reported as not compiled, with their
//! first error line) and the file is built again (`suite.rs`); an error elsewhere makes every
//! test of the file not compiled. Each test of a built file runs alone
//! (`EXE --exact NAME --test-threads 1`), killed with its process group at `--timeout` (or
//! its known difference's shorter deadline); a failure's detail is the first line of the last
//! panic message (earlier panics may have been caught by the test). Tests rayon marks
//! `#[ignore]` are listed as ignored and not run.
//!
//! # Known differences
//!
//! (`known.rs`; file / tests: reason)
//! - `octillion` / `find_last_octillion_flat`, `fold_find_any_octillion_flat`: time out
//!   (after 10 s): `flat_map`'s inner parallel iterators run sequentially on the member that
//!   made their item, where rayon splits them, so `find_last` reads the last item's 10^18
//!   inner items forward and a `fold` folds them whole.
//! - `unit_iter` / `count_repeat_n_clones`: `repeat_n` moves its element into an item and
//!   clones it for the others, as rayon's, but how many clones a `step_by` over it costs
//!   follows the split: 2 for `step_by(50)` over 100 repeats, where the test counts the 3 of
//!   rayon's splits.
//! - `unit_slice` / `slice_chunk_by`: the predicate is called once more per range boundary
//!   than rayon's `len - 1`.
//! - rayon-core's: `core_double_init_fail` (asat's own message for a second `build_global`),
//!   `core_scoped_threadpool` (`spawn_scoped_tls_threadpool`,
//!   `build_scoped_tls_threadpool`): asat's `install` runs `op` on a thread the pool starts
//!   itself, not on one of the spawn handler's, so the thread-locals the handler sets are not
//!   there.
//!
//! A known difference whose test passes is reported as "known difference now passes" (the
//! entry can go); one whose outcome differs from the listed one is unexpected.
//!
//! # Output
//!
//! A table on stdout (file, test, outcome, known difference or UNEXPECTED, detail) with
//! counts per file and in total, also written to `<out>/rayon_tests.txt`, and
//! `<out>/rayon_tests.csv` (`file,test,outcome,known,detail`); each test's output is kept in
//! `<out>/logs/<file>/<test>.log`. Progress goes to stderr. The exit status is 1 when an
//! outcome is unexpected, 2 when the harness could not run (no checkout, a build of cargo's
//! own that failed), 0 otherwise.

mod checkout;
mod compile;
mod known;
mod manifest;
mod port;
mod report;
mod run;
mod source;
mod suite;

use std::path::PathBuf;
use std::time::Instant;

use asat_peers::cli::{dedup_in_order, seconds_up_to_a_day};
use clap::Parser;

use checkout::Checkout;
use known::KNOWN;
use port::Planned;
use report::Row;
use suite::Dirs;

#[derive(Parser, Debug)]
#[command(about = "rayon's own tests (from a rayon checkout) run against asat")]
struct Args {
    /// A checkout of <https://github.com/rayon-rs/rayon>.
    #[arg(long, value_name = "DIR")]
    rayon: Option<PathBuf>,
    /// Output folder (the test crate, its builds, the logs and the report).
    #[arg(long, default_value = "out/rayon_tests")]
    out: PathBuf,
    /// Seconds after which a test is killed and reported as timed out.
    #[arg(long, default_value_t = 60.0, value_parser = seconds_up_to_a_day)]
    timeout: f64,
    /// Only these copied files (by stem: `octillion`, `core_scope_join`, `unit_iter` ...).
    #[arg(long, value_delimiter = ',', value_name = "STEMS")]
    files: Vec<String>,
}

/// Progress lines on stderr, with the seconds since the start.
#[derive(Debug)]
pub struct Progress {
    start: Instant,
}

impl Progress {
    /// Prints `msg`.
    pub fn say(&self, msg: &str) {
        eprintln!(
            "rayon_tests [{:>7.1} s] {msg}",
            self.start.elapsed().as_secs_f64()
        );
    }
}

fn main() {
    let mut args = Args::parse();
    dedup_in_order(&mut args.files);
    match run(&args) {
        Ok(false) => {}
        Ok(true) => std::process::exit(1),
        Err(e) => {
            eprintln!("rayon_tests: {e}");
            std::process::exit(2);
        }
    }
}

/// Runs the harness; whether an outcome was unexpected.
fn run(args: &Args) -> Result<bool, String> {
    let progress = Progress {
        start: Instant::now(),
    };
    let checkout = Checkout::open(args.rayon.as_deref())?;
    let out =
        std::path::absolute(&args.out).map_err(|e| format!("--out {}: {e}", args.out.display()))?;
    let dirs = Dirs {
        crate_dir: out.join("crate"),
        target: out.join("target"),
        logs: out.join("logs"),
    };
    progress.say(&format!(
        "copying the tests of {} to {}",
        checkout.root.display(),
        dirs.crate_dir.display()
    ));
    let (planned, missing) = port::write_crate(&checkout, &dirs.crate_dir)?;
    for m in missing {
        progress.say(&format!("{} is not in the checkout: skipped", m.display()));
    }
    let planned = selected(planned, &args.files)?;
    let mut rows = Vec::new();
    for p in &planned {
        for (test, outcome) in suite::test_file(p, &dirs, args.timeout, &progress)? {
            let verdict = known::judge(&KNOWN, &p.file.stem, &test, &outcome);
            rows.push(Row {
                file: p.file.stem.clone(),
                test,
                outcome,
                verdict,
            });
        }
    }
    let seen: Vec<(&str, &str)> = rows.iter().map(|r| (&r.file[..], &r.test[..])).collect();
    let unmatched: Vec<_> = known::unmatched(&KNOWN, &seen)
        .into_iter()
        .filter(|k| planned.iter().any(|p| p.file.stem == k.file))
        .collect();
    let table = report::table(&rows, &unmatched);
    print!("{table}");
    report::write(&out, &table, &rows)?;
    progress.say(&format!(
        "wrote {} and {}",
        out.join("rayon_tests.txt").display(),
        out.join("rayon_tests.csv").display()
    ));
    Ok(rows.iter().any(|r| r.verdict.is_unexpected()))
}

/// The planned files named by `--files` (all when it is empty).
fn selected(planned: Vec<Planned>, files: &[String]) -> Result<Vec<Planned>, String> {
    if files.is_empty() {
        return Ok(planned);
    }
    if let Some(f) = files
        .iter()
        .find(|f| !planned.iter().any(|p| p.file.stem == **f))
    {
        let stems: Vec<&str> = planned.iter().map(|p| p.file.stem.as_str()).collect();
        return Err(format!(
            "--files {f}: no such test file; the copied files are: {}",
            stems.join(", ")
        ));
    }
    Ok(planned
        .into_iter()
        .filter(|p| files.contains(&p.file.stem))
        .collect())
}
