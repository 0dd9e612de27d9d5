//! Child processes of the comparison examples (copies of a job), watched together: each
//! child's stdout is read by a thread as it comes (a long output never fills the pipe), and
//! children still running at a deadline are killed.

use std::io::{self, BufRead, BufReader};
use std::process::{Child, ExitStatus};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A child whose stdout lines are being collected.
#[derive(Debug)]
pub struct Watched {
    child: Child,
    lines: Option<JoinHandle<Vec<String>>>,
}

impl Watched {
    /// Watches `child`, whose stdout must be piped and not yet taken.
    pub fn new(mut child: Child) -> Self {
        let out = BufReader::new(child.stdout.take().expect("the child's stdout is piped"));
        Self::with_reader(child, out)
    }

    /// Watches `child` whose stdout the caller already took (and maybe began reading) as `out`.
    pub fn with_reader(child: Child, out: impl BufRead + Send + 'static) -> Self {
        let lines = std::thread::spawn(move || out.lines().map_while(Result::ok).collect());
        Self {
            child,
            lines: Some(lines),
        }
    }
}

/// How a watched child ended.
#[derive(Debug)]
pub enum Outcome {
    /// It exited by itself, with this status and these stdout lines.
    Exited {
        /// Its exit status.
        status: ExitStatus,
        /// Every line it wrote to stdout.
        lines: Vec<String>,
    },
    /// It was still running at the deadline and was killed.
    TimedOut,
}

/// Waits for every child, killing those still running `timeout` after the call (polling every
/// `poll`). Returns the outcomes in the order of `children`.
pub fn wait_all(
    children: Vec<Watched>,
    timeout: Duration,
    poll: Duration,
) -> io::Result<Vec<Outcome>> {
    let started = Instant::now();
    let mut children = children;
    let mut outcomes: Vec<Option<Outcome>> = children.iter().map(|_| None).collect();
    loop {
        let mut running = 0;
        for (w, slot) in children.iter_mut().zip(&mut outcomes) {
            if slot.is_some() {
                continue;
            }
            match w.child.try_wait()? {
                Some(status) => {
                    let lines = w
                        .lines
                        .take()
                        .map(|h| h.join().unwrap_or_default())
                        .unwrap_or_default();
                    *slot = Some(Outcome::Exited { status, lines });
                }
                None if started.elapsed() > timeout => {
                    let _ = w.child.kill();
                    let _ = w.child.wait();
                    if let Some(h) = w.lines.take() {
                        let _ = h.join();
                    }
                    *slot = Some(Outcome::TimedOut);
                }
                None => running += 1,
            }
        }
        if running == 0 {
            return Ok(outcomes.into_iter().flatten().collect());
        }
        std::thread::sleep(poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn sh(script: &str) -> Watched {
        Watched::new(
            Command::new("sh")
                .args(["-c", script])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap(),
        )
    }

    #[test]
    fn collects_lines_and_kills_at_the_deadline() {
        let out = wait_all(
            vec![sh("echo a; echo b"), sh("exec sleep 30"), sh("exit 3")],
            Duration::from_millis(500),
            Duration::from_millis(5),
        )
        .unwrap();
        match &out[0] {
            Outcome::Exited { status, lines } => {
                assert!(status.success());
                assert_eq!(lines, &["a", "b"]);
            }
            o => panic!("{o:?}"),
        }
        assert!(matches!(out[1], Outcome::TimedOut));
        assert!(matches!(&out[2], Outcome::Exited { status, .. } if status.code() == Some(3)));
    }
}
