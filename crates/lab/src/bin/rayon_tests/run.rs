//! Running the tests of one test executable, each alone in a process of its own
//! (`EXE --exact NAME --test-threads 1`, `RUST_BACKTRACE=0`), with its output in a log file.
//! A test still running at its deadline is killed with its process group (the test's own
//! child processes too) before it is reaped, so the group's id cannot have been reused and
//! nothing is left running.

use std::fs::{self, File};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What became of one test.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It passed.
    Passed,
    /// It failed: the first line of its panic message, or what else went wrong.
    Failed(String),
    /// It was killed at its deadline (seconds).
    TimedOut(f64),
    /// Its file did not compile: the first error line.
    NotCompiled(String),
    /// It was not built: why.
    NotApplicable(String),
    /// rayon marks it `#[ignore]`: libtest skips it.
    Ignored,
}

impl Outcome {
    /// The outcome's name in the report (`passed`, `failed`, `timed out`, `not compiled`,
    /// `not applicable`, `ignored`).
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed(_) => "failed",
            Outcome::TimedOut(_) => "timed out",
            Outcome::NotCompiled(_) => "not compiled",
            Outcome::NotApplicable(_) => "not applicable",
            Outcome::Ignored => "ignored",
        }
    }

    /// What went wrong, empty when nothing did.
    pub fn detail(&self) -> String {
        match self {
            Outcome::Failed(s) | Outcome::NotCompiled(s) | Outcome::NotApplicable(s) => s.clone(),
            Outcome::TimedOut(s) => format!("killed after {s} s"),
            Outcome::Passed | Outcome::Ignored => String::new(),
        }
    }
}

/// The tests of a test executable, and which of them are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed {
    /// Every test, in libtest's order.
    pub tests: Vec<String>,
    /// The ignored ones.
    pub ignored: Vec<String>,
}

/// Lists the tests of `exe` (`--list` and `--list --ignored`, lines ending in `: test`).
pub fn list(exe: &Path) -> Result<Listed, String> {
    let names = |ignored: bool| -> Result<Vec<String>, String> {
        let mut cmd = Command::new(exe);
        cmd.arg("--list");
        if ignored {
            cmd.arg("--ignored");
        }
        let out = cmd
            .output()
            .map_err(|e| format!("{} --list: {e}", exe.display()))?;
        if !out.status.success() {
            return Err(format!("{} --list: {}", exe.display(), out.status));
        }
        Ok(test_names(&String::from_utf8_lossy(&out.stdout)))
    };
    Ok(Listed {
        tests: names(false)?,
        ignored: names(true)?,
    })
}

/// The names in libtest's `--list` output.
fn test_names(list: &str) -> Vec<String> {
    list.lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

/// Runs the test `name` of `exe` alone, killed after `timeout`, its output written to `log`.
pub fn run_one(exe: &Path, name: &str, timeout: Duration, log: &Path) -> Result<Outcome, String> {
    let file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let file2 = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = Command::new(exe)
        .args(["--exact", name, "--test-threads", "1"])
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(file2)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("{} --exact {name}: {e}", exe.display()))?;
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    let status = loop {
        let waited = child
            .try_wait()
            .map_err(|e| format!("waiting for {name}: {e}"))?;
        if let Some(status) = waited {
            break Some(status);
        }
        if start.elapsed() >= timeout {
            kill_group(&mut child);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(pause.min(timeout.saturating_sub(start.elapsed())));
        pause = (pause * 2).min(Duration::from_millis(50));
    };
    let text = String::from_utf8_lossy(&fs::read(log).unwrap_or_default()).into_owned();
    Ok(match status {
        None => Outcome::TimedOut(timeout.as_secs_f64()),
        Some(status) => judge(&text, status),
    })
}

/// Kills the process group of `child` (not yet reaped, so its id is still its own), or the
/// child alone when that fails.
fn kill_group(child: &mut std::process::Child) {
    let Ok(pgid) = libc::pid_t::try_from(child.id()) else {
        let _ = child.kill();
        return;
    };
    // SAFETY: kill(2) with a negative pid signals the process group `pgid`, which the child
    // leads (`process_group(0)`); the child is not reaped yet, so the id is not reused. No
    // memory is involved.
    let killed = unsafe { libc::kill(-pgid, libc::SIGKILL) } == 0;
    if !killed {
        let _ = child.kill();
    }
}

/// The outcome of a test that exited with `status` and printed `text`.
fn judge(text: &str, status: ExitStatus) -> Outcome {
    if status.success() {
        return if text.contains("test result: ok. 1 passed") {
            Outcome::Passed
        } else if text.contains(" 1 ignored") {
            Outcome::Ignored
        } else {
            Outcome::Failed("no test ran (`--exact NAME` matched none)".into())
        };
    }
    let panic = panic_message(text);
    let note = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("note: "))
        .find(|n| !n.starts_with("run with `RUST_BACKTRACE"));
    Outcome::Failed(match (panic, note) {
        (Some(p), Some(n)) => format!("{n}: {p}"),
        (Some(p), None) => p,
        (None, Some(n)) => n.to_owned(),
        (None, None) => format!("exited with {status}"),
    })
}

/// The first line of the last panic message in `text` (earlier panics may have been caught by
/// the test): the line after `panicked at FILE:` (or the rest of that line, as older Rust
/// printed it), with the two sides of a failed `assert_eq!`.
fn panic_message(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().rposition(|l| l.contains("panicked at"))?;
    let next = lines.get(at + 1).map(|l| l.trim()).unwrap_or("");
    let line = lines[at];
    let rest = line[line.find("panicked at").unwrap_or(0) + "panicked at".len()..].trim();
    if next.is_empty() {
        return Some(rest.to_owned());
    }
    // `assert_eq!` and `assert_ne!` print the two sides on the next lines: they say more.
    let side = |k: usize, name: &str| {
        let v = lines.get(at + k)?.trim().strip_prefix(name)?.trim();
        Some(v.chars().take(SIDE_CHARS).collect::<String>())
    };
    Some(match (side(2, "left:"), side(3, "right:")) {
        (Some(l), Some(r)) if next.starts_with("assertion `left") => {
            format!("{next} (left: {l}, right: {r})")
        }
        _ => next.to_owned(),
    })
}

/// How much of each side of a failed `assert_eq!` the detail keeps.
const SIDE_CHARS: usize = 80;

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn libtest_output_is_judged() {
        let ok = ExitStatus::from_raw(0);
        let failed = ExitStatus::from_raw(101 << 8);
        let passed = "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed;";
        assert_eq!(judge(passed, ok), Outcome::Passed);
        let ignored = "test a ... ignored\n\ntest result: ok. 0 passed; 0 failed; 1 ignored;";
        assert_eq!(judge(ignored, ok), Outcome::Ignored);
        let panicked = "---- a stdout ----\n\nthread 'a' (7) panicked at tests/a.rs:3:5:\n  \
                        assertion failed: x\nnote: run with `RUST_BACKTRACE=1` ...\n";
        assert_eq!(
            judge(panicked, failed),
            Outcome::Failed("assertion failed: x".into())
        );
        let eq = "thread 'a' panicked at a.rs:1:1:\ncaught\nthread 'a' panicked at a.rs:2:1:\n\
                  assertion `left == right` failed\n  left: 1\n right: 2\n";
        assert_eq!(
            judge(eq, failed),
            Outcome::Failed("assertion `left == right` failed (left: 1, right: 2)".into())
        );
        let should = "---- a stdout ----\nnote: test did not panic as expected\n";
        assert_eq!(
            judge(should, failed),
            Outcome::Failed("test did not panic as expected".into())
        );
        let signal = ExitStatus::from_raw(libc::SIGSEGV);
        assert!(matches!(judge("", signal), Outcome::Failed(s) if s.contains("SIGSEGV")));
        assert_eq!(
            test_names("a: test\nm::b: test\nc: bench\n\n2 tests\n"),
            ["a", "m::b"]
        );
    }

    #[test]
    fn a_test_past_its_deadline_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("t.sh");
        let pid_file = dir.path().join("child.pid");
        let body = format!(
            "#!/bin/sh\nsleep 30 &\necho $! > {}\nwait\n",
            pid_file.display()
        );
        fs::write(&script, body).unwrap();
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let start = Instant::now();
        let log = dir.path().join("log");
        let out = run_one(&script, "x", Duration::from_millis(500), &log).unwrap();
        assert_eq!(out, Outcome::TimedOut(0.5));
        assert!(start.elapsed() < Duration::from_secs(5));
        let pid: i32 = fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild (`sleep 30`) was killed with the group; it is gone once its parent
        // is reaped (it is re-parented to init, which reaps it soon after).
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !Path::new(&format!("/proc/{pid}")).exists()
                || fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
        });
        assert!(gone, "sleep {pid} still runs");
    }
}
