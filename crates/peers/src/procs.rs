//! Child processes of the comparison programs (copies of a job), watched together: each
//! child's stdout is read by a thread as it comes (a long output never fills the pipe), and
//! children still running at a deadline are killed. A [`Talker`] is a child spoken to in
//! lines (commands on its stdin, answers awaited with a deadline), killed when dropped. A
//! [`Relaunch`] starts a program again in its child mode, or, in the program's tests, the test
//! that stands for it. A job started with others at once says it is ready and waits for
//! the line that starts it ([`ready_then_wait`]); its driver awaits that ([`await_ready`]),
//! then starts them all ([`start_together`]).

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Starts jobs that each wait for a `GO` line on their stdin (after saying they are ready),
/// all at once, and closes their stdins. A write that fails (a job that already exited) is
/// ignored: the job's outcome says why.
pub fn start_together(stdins: Vec<ChildStdin>) {
    for mut s in stdins {
        let _ = s.write_all(b"GO\n");
        let _ = s.flush();
    }
}

/// Reads a job's stdout `out` up to its line `READY` ([`ready_then_wait`]; the lines before it
/// are skipped). An error says how the job did not get there: its output ended (it exited:
/// its error, if any, is on its stderr) or could not be read.
pub fn await_ready(out: &mut impl BufRead) -> Result<(), String> {
    let mut line = String::new();
    loop {
        line.clear();
        match out.read_line(&mut line) {
            Ok(0) => return Err("it ended (its error, if any, is above)".into()),
            Ok(_) if line.trim() == "READY" => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(format!("reading it: {e}")),
        }
    }
}

/// In a job that [`start_together`] starts: says `READY` on stdout, then waits for the line
/// that starts it. `false` when the driver is gone (stdin ended or failed before a `GO`).
pub fn ready_then_wait() -> bool {
    println!("READY");
    let _ = io::stdout().flush();
    let mut line = String::new();
    io::stdin().read_line(&mut line).is_ok() && line.trim() == "GO"
}

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

/// How a program starts itself again in a child mode (a job, a gang): its own executable with
/// the child's arguments, or, in the program's unit tests, the test binary running one test
/// (normally ignored) that stands for the child mode, the arguments passed in an environment
/// variable, one per line (so an argument must not hold a newline), which that test reads
/// with [`Relaunch::test_args`].
#[derive(Clone, Debug)]
pub struct Relaunch {
    exe: PathBuf,
    /// The test's full name and the variable.
    test: Option<(String, String)>,
}

impl Relaunch {
    /// This program (`current_exe`).
    pub fn this_program() -> io::Result<Self> {
        Ok(Self {
            exe: std::env::current_exe()?,
            test: None,
        })
    }

    /// The running test binary, running only the test `name` (its full path, such as
    /// `procs::tests::child`, ignored or not) with the child's arguments in `env`.
    pub fn test(name: &str, env: &str) -> io::Result<Self> {
        Ok(Self {
            exe: std::env::current_exe()?,
            test: Some((name.to_string(), env.to_string())),
        })
    }

    /// A command that starts the child with `args`.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(&self.exe);
        match &self.test {
            None => {
                cmd.args(args);
            }
            Some((name, env)) => {
                let lines: Vec<String> = args
                    .into_iter()
                    .map(|a| a.as_ref().to_string_lossy().into_owned())
                    .collect();
                cmd.args([
                    name.as_str(),
                    "--exact",
                    "--include-ignored",
                    "--nocapture",
                    "-q",
                ])
                .env(env, lines.join("\n"));
            }
        }
        cmd
    }

    /// In the test that stands for the child mode: the arguments in `env`, after `program`
    /// (as `std::env::args` would give them); `None` when the test was not started by a
    /// [`Relaunch`].
    pub fn test_args(env: &str, program: &str) -> Option<Vec<String>> {
        let v = std::env::var(env).ok()?;
        let args = (!v.is_empty()).then(|| v.split('\n').map(str::to_string));
        Some(
            std::iter::once(program.to_string())
                .chain(args.into_iter().flatten())
                .collect(),
        )
    }
}

/// A child spoken to in lines: commands are written to its stdin, its stdout lines are read
/// by a thread as they come and awaited with a deadline. Dropped, it is killed (if still
/// running) and reaped, so an error on any path leaves no child behind.
#[derive(Debug)]
pub struct Talker {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Talker {
    /// Starts `cmd` with its stdin and stdout piped (its stderr as `cmd` says).
    pub fn spawn(cmd: &mut Command) -> io::Result<Self> {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().expect("the child's stdout is piped"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            child,
            stdin,
            lines,
        })
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Writes `line` and a newline to the child's stdin.
    pub fn send(&mut self, line: &str) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin already closed"))?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// Waits until `deadline` for a stdout line that starts with `prefix` and returns the rest
    /// of it; lines before it are skipped. Errors: `TimedOut` at the deadline, `UnexpectedEof`
    /// when the child closed its stdout first (its exit status in the message when it has
    /// exited).
    pub fn expect(&mut self, prefix: &str, deadline: Instant) -> io::Result<String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return Ok(rest.to_string());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no line starting with {prefix:?} in time"),
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self
                        .wait_until(Instant::now() + Duration::from_millis(200))
                        .ok()
                        .flatten();
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        match status {
                            Some(s) => {
                                format!("it ended ({s}) before a line starting with {prefix:?}")
                            }
                            None => format!(
                                "it closed its output before a line starting with {prefix:?}"
                            ),
                        },
                    ));
                }
            }
        }
    }

    /// Closes the child's stdin and waits until `deadline` for it to exit; kills it then.
    /// Returns its exit status, `None` when it had to be killed.
    pub fn finish(mut self, deadline: Instant) -> io::Result<Option<ExitStatus>> {
        self.stdin = None;
        self.wait_until(deadline)
    }

    fn wait_until(&mut self, deadline: Instant) -> io::Result<Option<ExitStatus>> {
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                self.child.kill()?;
                self.child.wait()?;
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Talker {
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
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

    #[test]
    fn ready_lines_are_awaited_past_other_output() {
        let mut out = io::Cursor::new("noise\nREADY\nlater\n");
        assert_eq!(await_ready(&mut out), Ok(()));
        let mut out = io::Cursor::new("noise\n");
        let e = await_ready(&mut out).unwrap_err();
        assert!(e.starts_with("it ended"), "{e}");
    }

    fn talker(script: &str) -> Talker {
        Talker::spawn(Command::new("sh").args(["-c", script])).unwrap()
    }

    #[test]
    fn talker_answers_skips_and_times_out() {
        let soon = || Instant::now() + Duration::from_secs(20);
        let mut t = talker("echo noise; echo READY; read a; echo \"GOT $a\"; read b; exit 4");
        assert_eq!(t.expect("READY", soon()).unwrap(), "");
        t.send("ping").unwrap();
        assert_eq!(t.expect("GOT ", soon()).unwrap(), "ping");
        let e = t
            .expect("NEVER", Instant::now() + Duration::from_millis(50))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        let status = t.finish(soon()).unwrap().unwrap();
        assert_eq!(status.code(), Some(4));

        let mut t = talker("exit 3");
        let e = t.expect("READY", soon()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(e.to_string().contains("exit status: 3"), "{e}");

        // A child that ignores its stdin is killed at the deadline of `finish`.
        let t = talker("exec sleep 30");
        assert_eq!(
            t.finish(Instant::now() + Duration::from_millis(50))
                .unwrap(),
            None
        );
    }

    const CHILD_ENV: &str = "ASAT_PEERS_TEST_CHILD_ARGS";

    /// Stands for a child mode: echoes its arguments, then the first line of its stdin.
    #[test]
    #[ignore = "the child of relaunch_runs_the_test_that_stands_for_the_child"]
    fn relaunched_child() {
        let Some(args) = Relaunch::test_args(CHILD_ENV, "prog") else {
            return;
        };
        println!("ARGS {}", args.join("|"));
        let mut line = String::new();
        io::stdin().read_line(&mut line).unwrap();
        println!("GOT {}", line.trim());
    }

    #[test]
    fn relaunch_runs_the_test_that_stands_for_the_child() {
        let soon = || Instant::now() + Duration::from_secs(60);
        let r = Relaunch::test("procs::tests::relaunched_child", CHILD_ENV).unwrap();
        let mut t = Talker::spawn(&mut r.command(["--a", "b c", ""])).unwrap();
        assert_eq!(t.expect("ARGS ", soon()).unwrap(), "prog|--a|b c|");
        t.send("hello").unwrap();
        assert_eq!(t.expect("GOT ", soon()).unwrap(), "hello");
        assert!(t.finish(soon()).unwrap().unwrap().success());
    }

    #[test]
    fn a_dropped_talker_kills_its_child() {
        let t = talker("exec sleep 30");
        let pid = t.id() as i32;
        drop(t);
        // Reaped by the drop: the pid no longer names our child.
        let alive = std::path::Path::new(&format!("/proc/{pid}")).exists()
            && std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.starts_with("sleep"));
        assert!(!alive);
    }
}
