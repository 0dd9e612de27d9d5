//! One test file's tests, from its plan to their outcomes: a file that is not applicable
//! reports its tests as such; a file to build is built, and while its build fails with errors
//! that all point into test functions, those tests are taken out of the copy (reported as not
//! compiled, with their first error) and the file is built again, so that a test that uses
//! what asat lacks hides no other test of its file (at most [`ROUNDS`] builds). An error
//! outside the tests makes every test left not compiled. The built file's tests are then run
//! one by one, ignored ones aside.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use asat_lab::files;

use crate::compile::{self, Built, CompileError};
use crate::known::{self, KNOWN};
use crate::port::{Plan, Planned};
use crate::run::{self, Outcome};
use crate::source::{declared_tests, remove_tests, top_level_tests};
use crate::Progress;

/// The most builds of one file.
pub const ROUNDS: usize = 10;

/// Where the harness writes.
#[derive(Debug)]
pub struct Dirs {
    /// The test crate.
    pub crate_dir: PathBuf,
    /// Its target folder.
    pub target: PathBuf,
    /// The tests' logs, one folder per file.
    pub logs: PathBuf,
}

/// The outcome of every test of one planned file (`timeout`: the default deadline, seconds).
pub fn test_file(
    p: &Planned,
    dirs: &Dirs,
    timeout: f64,
    progress: &Progress,
) -> Result<Vec<(String, Outcome)>, String> {
    let stem = &p.file.stem;
    let removed = match &p.plan {
        Plan::NotApplicable { tests, uses } => {
            progress.say(&format!(
                "{stem}: not built (rayon's plumbing: {})",
                uses.join(", ")
            ));
            let why =
                Outcome::NotApplicable(format!("rayon's plumbing traits ({})", uses.join(", ")));
            let mut rows: Vec<_> = tests.iter().map(|t| (t.clone(), why.clone())).collect();
            if rows.is_empty() {
                rows.push(("*".into(), why));
            }
            return Ok(rows);
        }
        Plan::Build { removed, .. } => removed,
    };
    let mut rows: Vec<(String, Outcome)> = removed
        .iter()
        .map(|r| {
            let why = format!("rayon's plumbing traits ({})", r.uses.join(", "));
            (r.name.clone(), Outcome::NotApplicable(why))
        })
        .collect();
    let Some(exe) = build(stem, dirs, &mut rows, progress)? else {
        return Ok(rows);
    };
    run_tests(stem, &exe, dirs, timeout, &mut rows, progress)?;
    Ok(rows)
}

/// Builds the copy of `stem`, taking out the tests that do not compile (rows added to
/// `rows`); its executable, or `None` when it does not build (every test left added as not
/// compiled).
fn build(
    stem: &str,
    dirs: &Dirs,
    rows: &mut Vec<(String, Outcome)>,
    progress: &Progress,
) -> Result<Option<PathBuf>, String> {
    let copy = dirs.crate_dir.join("tests").join(format!("{stem}.rs"));
    for round in 1..=ROUNDS {
        progress.say(&format!(
            "{stem}: building{}",
            if round > 1 { " again" } else { "" }
        ));
        let errors = match compile::build_test(&dirs.crate_dir, &dirs.target, stem)? {
            Built::Exe(exe) => return Ok(Some(exe)),
            Built::Failed(errors) => errors,
        };
        let text = fs::read_to_string(&copy).map_err(|e| format!("{}: {e}", copy.display()))?;
        let tests = top_level_tests(&text);
        let in_a_test = |e: &CompileError| {
            e.line
                .is_some_and(|l| tests.iter().any(|t| t.lines.contains(&(l - 1))))
        };
        if !errors.iter().all(in_a_test) || round == ROUNDS {
            let first = errors
                .first()
                .map(|e| e.message.clone())
                .unwrap_or_default();
            progress.say(&format!("{stem}: does not compile: {first}"));
            let names = declared_tests(&text);
            let names = if names.is_empty() {
                vec!["*".to_owned()]
            } else {
                names
            };
            rows.extend(
                names
                    .into_iter()
                    .map(|t| (t, Outcome::NotCompiled(first.clone()))),
            );
            return Ok(None);
        }
        let (reduced, removed) = take_out_failing(&text, &errors);
        for (name, message) in &removed {
            progress.say(&format!("  {stem} / {name}: not compiled: {message}"));
        }
        rows.extend(
            removed
                .into_iter()
                .map(|(n, m)| (n, Outcome::NotCompiled(m))),
        );
        files::write(&copy, reduced)?;
    }
    unreachable!("the last round returns")
}

/// `text` without the top-level tests that `errors` point into, and those tests with the
/// first error of each.
fn take_out_failing(text: &str, errors: &[CompileError]) -> (String, Vec<(String, String)>) {
    remove_tests(text, |t, _| {
        let first = errors
            .iter()
            .find(|e| e.line.is_some_and(|l| t.lines.contains(&(l - 1))))?;
        let why = "it does not compile against asat".to_owned();
        Some((first.message.clone(), why))
    })
}

/// Lists and runs the tests of `exe` (rows added to `rows`).
fn run_tests(
    stem: &str,
    exe: &Path,
    dirs: &Dirs,
    timeout: f64,
    rows: &mut Vec<(String, Outcome)>,
    progress: &Progress,
) -> Result<(), String> {
    let listed = run::list(exe)?;
    progress.say(&format!(
        "{stem}: running {} tests ({} ignored)",
        listed.tests.len() - listed.ignored.len(),
        listed.ignored.len()
    ));
    let logs = dirs.logs.join(stem);
    files::create_dir(&logs)?;
    for test in listed.tests {
        let outcome = if listed.ignored.contains(&test) {
            Outcome::Ignored
        } else {
            let secs = known::timeout_for(&KNOWN, stem, &test, timeout);
            let log = logs.join(format!("{}.log", test.replace("::", ".")));
            run::run_one(exe, &test, Duration::from_secs_f64(secs), &log)?
        };
        if !matches!(outcome, Outcome::Passed | Outcome::Ignored) {
            progress.say(&format!(
                "  {stem} / {test}: {} {}",
                outcome.name(),
                outcome.detail()
            ));
        }
        rows.push((test, outcome));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_with_errors_are_taken_out() {
        let src =
            "fn helper() {}\n\n#[test]\nfn a() {\n    x.clone();\n}\n\n#[test]\nfn b() {\n    \
                   ok();\n}\n";
        let errors = [CompileError {
            message: "error[E0599]: no method named `clone`".into(),
            line: Some(5),
        }];
        let (text, removed) = take_out_failing(src, &errors);
        assert_eq!(removed, [("a".to_owned(), errors[0].message.clone())]);
        assert!(!text.contains("fn a()") && text.contains("fn b()") && text.contains("fn helper"));
        assert!(
            text.contains("// rayon_tests: test `a` removed (it does not compile against asat)")
        );
    }
}
