//! Building one test file of the test crate: `cargo test --release --no-run --test NAME` in the
//! crate, with its own target folder, so that a file that does not compile hides no other. The
//! test executable is found in cargo's `Executable tests/NAME.rs (PATH)` line on stderr.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The result of building a test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Built {
    /// The test executable.
    Exe(PathBuf),
    /// The build failed: its errors (`error[E...]: ...`, or cargo's own).
    Failed(Vec<CompileError>),
}

/// An error of a failed build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// Its first line (`error[E0599]: no method named ...`).
    pub message: String,
    /// The line of the test file it points at (1-based), when it points into the file.
    pub line: Option<usize>,
}

/// The cargo to run: the one that runs this harness (`$CARGO`), else `cargo` from `PATH`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Builds the test target `stem` of the crate at `crate_dir` into `target_dir` (absolute).
pub fn build_test(crate_dir: &Path, target_dir: &Path, stem: &str) -> Result<Built, String> {
    let out = Command::new(cargo())
        .args(["test", "--release", "--no-run", "--test", stem])
        .current_dir(crate_dir)
        .env("CARGO_TARGET_DIR", target_dir)
        .output()
        .map_err(|e| format!("cargo test --no-run --test {stem}: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Ok(Built::Failed(errors(&stderr, stem)));
    }
    executable(&stderr, stem)
        .map(|exe| Built::Exe(crate_dir.join(exe)))
        .ok_or_else(|| {
            format!(
                "cargo built tests/{stem}.rs but printed no `Executable tests/{stem}.rs (PATH)` \
                 line; its output ends with:\n{}",
                last_lines(&stderr, 10)
            )
        })
}

/// The path in cargo's `Executable tests/<stem>.rs (PATH)` line.
fn executable(stderr: &str, stem: &str) -> Option<PathBuf> {
    let wanted = format!("Executable tests/{stem}.rs (");
    stderr.lines().find_map(|l| {
        let rest = &l.trim()[l.trim().find(&wanted)? + wanted.len()..];
        Some(PathBuf::from(rest.strip_suffix(')')?))
    })
}

/// The errors of a failed build with the line of `tests/<stem>.rs` each points at (cargo's
/// summary `could not compile` aside), or one made of its last lines when it has none.
fn errors(stderr: &str, stem: &str) -> Vec<CompileError> {
    let file = format!("tests/{stem}.rs:");
    let mut errors: Vec<CompileError> = Vec::new();
    let mut in_error = false;
    for line in stderr.lines() {
        let t = line.trim();
        if t.starts_with("error") || t.starts_with("warning") {
            let summary =
                t.contains("could not compile") || t.starts_with("error: aborting due to");
            in_error = (t.starts_with("error[") || t.starts_with("error:")) && !summary;
            if in_error {
                errors.push(CompileError {
                    message: t.to_owned(),
                    line: None,
                });
            }
        } else if let (true, Some(at)) = (in_error, t.strip_prefix("--> ")) {
            let last = errors.last_mut().expect("an error header came first");
            if last.line.is_none() {
                last.line = at
                    .strip_prefix(&file)
                    .and_then(|rest| rest.split(':').next()?.parse().ok());
            }
            in_error = false;
        }
    }
    if errors.is_empty() {
        errors.push(CompileError {
            message: last_lines(stderr, 3).replace('\n', " | "),
            line: None,
        });
    }
    errors
}

/// The last `n` lines of `text`.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_output_is_read() {
        let ok = "   Compiling x v0.0.0\n    Finished `release` profile\n  Executable \
                  tests/a-b.rs (target/release/deps/a_b-0123)\n";
        assert_eq!(
            executable(ok, "a-b"),
            Some(PathBuf::from("target/release/deps/a_b-0123"))
        );
        assert_eq!(executable(ok, "a"), None);
        let failed = "warning: unused import\n --> tests/a.rs:1:5\nerror[E0433]: failed to \
                      resolve: x\n --> tests/a.rs:12:5\n  |\nerror[E0599]: no method\n --> \
                      src/m.rs:3:1\n --> tests/a.rs:20:1\nerror: aborting due to 2 previous \
                      errors\nerror: could not compile `x` (test \"a\")\n";
        let e = |message: &str, line| CompileError {
            message: message.into(),
            line,
        };
        assert_eq!(
            errors(failed, "a"),
            [
                e("error[E0433]: failed to resolve: x", Some(12)),
                e("error[E0599]: no method", None),
            ]
        );
        assert_eq!(errors("a\nb\nc\nd\n", "a"), [e("b | c | d", None)]);
    }
}
