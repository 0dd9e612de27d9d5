//! Running copies of one NPB program at once, as separate processes, and what each did.
//!
//! Each copy's wall time runs from just before its spawn to its exit; its CPU time is the user
//! and system time `wait4` reports for it. A thread per copy waits for its exit with
//! `waitid(WNOWAIT)`, which notes the time but leaves the process a zombie; the calling thread
//! then reaps it with `wait4` (for its resource usage). Until the calling thread has reaped a
//! copy, its process id cannot be reused, so a kill at the deadline never hits another process.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What one copy did.
#[derive(Debug, Clone)]
pub struct Copy {
    /// Seconds from its spawn to its exit.
    pub wall_s: f64,
    /// User + system CPU seconds.
    pub cpu_s: f64,
    /// The `Time in seconds` it printed, if any.
    pub npb_s: Option<f64>,
}

/// One run: every copy, and the seconds from the first spawn to the last exit.
#[derive(Debug, Clone)]
pub struct Run {
    /// The copies, in spawn order.
    pub copies: Vec<Copy>,
    /// Seconds until the last copy finished (or was killed).
    pub max_s: f64,
    /// Whether copies were killed at the timeout: the times are then lower bounds, and the
    /// killed copies did not verify.
    pub timed_out: bool,
}

impl Run {
    /// The mean wall time of the copies.
    pub fn mean_s(&self) -> f64 {
        self.copies.iter().map(|c| c.wall_s).sum::<f64>() / self.copies.len() as f64
    }

    /// The mean of the copies' own `Time in seconds` (NPB's timed section), when every copy
    /// printed one.
    pub fn npb_s(&self) -> Option<f64> {
        let times: Option<Vec<f64>> = self.copies.iter().map(|c| c.npb_s).collect();
        times.map(|t| t.iter().sum::<f64>() / t.len().max(1) as f64)
    }

    /// The CPU seconds of all copies together.
    pub fn cpu_s(&self) -> f64 {
        self.copies.iter().map(|c| c.cpu_s).sum()
    }
}

/// A started copy.
struct Started {
    child: Child,
    spawned: Instant,
    out: JoinHandle<Vec<String>>,
    err: JoinHandle<Vec<String>>,
}

/// A finished copy before its output is judged.
struct Ended {
    spawned: Instant,
    exited: Instant,
    status: ExitStatus,
    cpu_s: f64,
    killed: bool,
    out: Vec<String>,
    err: Vec<String>,
}

/// Runs `copies` copies of the command `make` builds, all started at once; a copy still running
/// `timeout` after the first spawn is killed (the run is then marked [`Run::timed_out`]). Fails
/// (with the copy's last output lines) when a copy that was not killed did not exit with 0 or
/// did not print `Verification = SUCCESSFUL`.
pub fn run(make: &dyn Fn() -> Command, copies: usize, timeout: Duration) -> Result<Run, String> {
    let (tx, rx) = mpsc::channel();
    let mut started: Vec<Started> = Vec::with_capacity(copies);
    for i in 0..copies {
        match start(make(), i, tx.clone()) {
            Ok(s) => started.push(s),
            Err(e) => {
                kill_and_reap(&mut started, &rx);
                return Err(e);
            }
        }
    }
    drop(tx);
    let ended = wait(started, &rx, timeout)?;
    judge(ended)
}

/// Spawns one copy, its output readers and its exit watcher (which sends `i` and the exit time).
fn start(
    mut cmd: Command,
    i: usize,
    tx: mpsc::Sender<(usize, Instant)>,
) -> Result<Started, String> {
    let spawned = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {:?}: {e}", cmd.get_program()))?;
    let out = reader(child.stdout.take().expect("piped"));
    let err = reader(child.stderr.take().expect("piped"));
    let pid = child.id() as libc::id_t;
    std::thread::spawn(move || {
        wait_exit(pid);
        let _ = tx.send((i, Instant::now()));
    });
    Ok(Started {
        child,
        spawned,
        out,
        err,
    })
}

fn reader(pipe: impl Read + Send + 'static) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || BufReader::new(pipe).lines().map_while(Result::ok).collect())
}

/// Blocks until the child `pid` has exited, leaving it unreaped.
fn wait_exit(pid: libc::id_t) {
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value of this plain C struct.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid siginfo_t to write into; WNOWAIT leaves the child for
        // the caller of `run` to reap, so its pid stays ours.
        let r = unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

/// Reaps the exited child `pid`: its exit status and user + system CPU seconds.
fn reap(pid: u32) -> Result<(ExitStatus, f64), String> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid places to write; `pid` is our unreaped child.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r == pid as libc::pid_t {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(format!("wait4 of copy {pid}: {e}"));
        }
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok((
        ExitStatus::from_raw(status),
        secs(usage.ru_utime) + secs(usage.ru_stime),
    ))
}

/// Waits for every copy (killing those still running at the deadline) and reaps them.
fn wait(
    mut started: Vec<Started>,
    rx: &mpsc::Receiver<(usize, Instant)>,
    timeout: Duration,
) -> Result<Vec<Ended>, String> {
    let deadline = started.first().map(|s| s.spawned + timeout);
    let mut exited: Vec<Option<(Instant, ExitStatus, f64)>> =
        started.iter().map(|_| None).collect();
    let mut killed = false;
    while exited.iter().any(Option::is_none) {
        let left = deadline.map_or(Duration::ZERO, |d| {
            d.saturating_duration_since(Instant::now())
        });
        let msg = if killed {
            rx.recv().ok()
        } else {
            rx.recv_timeout(left).ok()
        };
        match msg {
            Some((i, at)) => {
                let (status, cpu) = reap(started[i].child.id())?;
                exited[i] = Some((at, status, cpu));
            }
            None if !killed => {
                killed = true;
                for (s, e) in started.iter_mut().zip(&exited) {
                    if e.is_none() {
                        // Not reaped yet (a zombie at worst), so the pid is still this copy's.
                        let _ = s.child.kill();
                    }
                }
            }
            None => return Err("lost track of a copy (its watcher thread ended)".into()),
        }
    }
    let mut ended = Vec::with_capacity(started.len());
    for (s, e) in started.into_iter().zip(exited) {
        let (exited, status, cpu_s) = e.expect("every copy exited");
        ended.push(Ended {
            spawned: s.spawned,
            exited,
            status,
            cpu_s,
            killed: killed && status.signal() == Some(libc::SIGKILL),
            out: s.out.join().unwrap_or_default(),
            err: s.err.join().unwrap_or_default(),
        });
    }
    Ok(ended)
}

/// Kills and reaps copies started before a later one failed to start.
fn kill_and_reap(started: &mut [Started], rx: &mpsc::Receiver<(usize, Instant)>) {
    for s in started.iter_mut() {
        let _ = s.child.kill();
    }
    for _ in 0..started.len() {
        if let Ok((i, _)) = rx.recv() {
            let _ = reap(started[i].child.id());
        }
    }
}

/// The run's figures, or an error for the first copy that failed.
fn judge(ended: Vec<Ended>) -> Result<Run, String> {
    for (i, e) in ended.iter().enumerate() {
        let what = if e.killed {
            // A collapse (libgomp's spinning copies, say) is a measurement: kept, marked.
            None
        } else if !e.status.success() {
            Some(format!("failed ({})", e.status))
        } else if !verified(&e.out) {
            let line = e
                .out
                .iter()
                .find(|l| l.trim_start().starts_with("Verification"));
            Some(match line {
                Some(l) => format!("did not verify: `{}`", l.trim()),
                None => "printed no `Verification = ...` line".to_owned(),
            })
        } else {
            None
        };
        if let Some(what) = what {
            return Err(format!(
                "copy {} of {} {what}; its last output lines:\n{}{}",
                i + 1,
                ended.len(),
                last_lines(&e.out, 20),
                if e.err.is_empty() {
                    String::new()
                } else {
                    format!("\nits last error lines:\n{}", last_lines(&e.err, 20))
                }
            ));
        }
    }
    let first = ended.iter().map(|e| e.spawned).min();
    let last = ended.iter().map(|e| e.exited).max();
    let max_s = match (first, last) {
        (Some(f), Some(l)) => (l - f).as_secs_f64(),
        _ => 0.0,
    };
    let copies = ended
        .iter()
        .map(|e| Copy {
            wall_s: (e.exited - e.spawned).as_secs_f64(),
            cpu_s: e.cpu_s,
            npb_s: npb_time(&e.out),
        })
        .collect();
    Ok(Run {
        copies,
        max_s,
        timed_out: ended.iter().any(|e| e.killed),
    })
}

/// Whether `lines` hold NPB's `Verification = SUCCESSFUL` (any whitespace around the words).
pub fn verified(lines: &[String]) -> bool {
    lines.iter().any(|l| {
        let squeezed: String = l.split_whitespace().collect();
        squeezed == "Verification=SUCCESSFUL"
    })
}

/// The seconds of NPB's `Time in seconds = ...` line.
fn npb_time(lines: &[String]) -> Option<f64> {
    lines.iter().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        let key: Vec<&str> = key.split_whitespace().collect();
        (key == ["Time", "in", "seconds"])
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

/// The last `n` of `lines`, each indented, joined by newlines (or a note that there were none).
pub fn last_lines(lines: &[String], n: usize) -> String {
    if lines.is_empty() {
        return "    (none)".to_owned();
    }
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &'static str) -> impl Fn() -> Command {
        move || {
            let mut c = Command::new("sh");
            c.args(["-c", script]);
            c
        }
    }

    #[test]
    fn verification_and_time_lines() {
        let l = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(verified(&l(&[" Verification    =    SUCCESSFUL"])));
        assert!(verified(&l(&["Verification=SUCCESSFUL  "])));
        assert!(!verified(&l(&[" Verification    =    UNSUCCESSFUL"])));
        assert!(!verified(&l(&[" Verification    =    NOT PERFORMED"])));
        assert_eq!(npb_time(&l(&[" Time in seconds =    1.2500"])), Some(1.25));
    }

    #[test]
    fn copies_are_timed_judged_and_killed() {
        let ok = sh(
            "echo ' Verification = SUCCESSFUL'; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
        );
        let r = run(&ok, 2, Duration::from_secs(30)).unwrap();
        assert_eq!(r.copies.len(), 2);
        assert!(r.copies.iter().all(|c| c.cpu_s > 0.0 && c.wall_s > 0.0));
        assert!(r.max_s >= r.mean_s());
        let bad = run(
            &sh("echo ' Verification = UNSUCCESSFUL'"),
            1,
            Duration::from_secs(30),
        );
        assert!(bad.unwrap_err().contains("did not verify"));
        let slow = run(&sh("exec sleep 30"), 2, Duration::from_millis(300)).unwrap();
        assert!(slow.timed_out && slow.max_s < 10.0, "{slow:?}");
        assert!(!r.timed_out);
        let crash = run(&sh("echo oops >&2; exit 3"), 1, Duration::from_secs(30));
        assert!(crash.unwrap_err().contains("oops"));
    }
}
