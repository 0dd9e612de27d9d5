//! Runs `mpirun -np N` on this test binary, bounded in time.
//!
//! Each rank runs the ignored test `rank` (with `--ignored --exact`), which reads its scenario
//! from `ASAT_MPI_TEST_SCENARIO` and writes its findings to `rank-<r>.txt` in the folder named
//! by `ASAT_MPI_TEST_OUT` (files, not stdout: mpirun may interleave the ranks' output).
//! A run that outlives its timeout is a failure: mpirun is sent SIGTERM (it forwards it to
//! the ranks), then mpirun and the ranks it started get SIGKILL, by process id.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One mpirun at a time: the ranks of two runs would share the machine's few CPUs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How long one mpirun may take: a hang guard, far above a normal run on a loaded 2-CPU
/// machine.
pub const TIMEOUT: Duration = Duration::from_secs(300);

/// What the ranks wrote: `rank -> (key -> value)` for lines `key=value`, and for repeated
/// groups (one per strategy) the lines `[name]` start a section, whose keys are `name.key`.
pub type Findings = BTreeMap<usize, BTreeMap<String, String>>;

/// Runs `scenario` on `np` ranks with extra mpirun arguments and environment variables;
/// panics with mpirun's output when it fails or times out.
pub fn mpirun(np: usize, args: &[&str], scenario: &str, env: &[(&str, &str)]) -> Findings {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = tempfile::tempdir().expect("a temporary folder for the ranks' findings");
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new("mpirun");
    cmd.arg("-np").arg(np.to_string()).arg("--oversubscribe");
    cmd.args(args);
    let mut vars = vec![
        ("ASAT_MPI_TEST_SCENARIO", scenario.to_owned()),
        ("ASAT_MPI_TEST_OUT", out.path().display().to_string()),
    ];
    vars.extend(env.iter().map(|(k, v)| (*k, (*v).to_owned())));
    for (k, v) in &vars {
        cmd.env(k, v).arg("-x").arg(k);
    }
    // Open MPI refuses to run as root without these (CI runs scripts/test as root)
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    cmd.arg(&exe).args([
        "rank",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let described = format!("mpirun -np {np} {} ({scenario})", args.join(" "));
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => panic!(
            "{described}: cannot start mpirun ({e}); install Open MPI (Debian: openmpi-bin \
             libopenmpi-dev; scripts/setup.sh does)"
        ),
    };
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => break None,
            Err(e) => panic!("{described}: waiting for mpirun failed: {e}"),
        }
    };
    if status.is_none() {
        stop(&mut child);
    }
    let output = format!(
        "--- stdout\n{}\n--- stderr\n{}",
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default()
    );
    match status {
        None => panic!("{described}: no result after {TIMEOUT:?} (a hang?); killed\n{output}"),
        Some(s) if !s.success() => panic!("{described}: mpirun failed ({s})\n{output}"),
        Some(_) => {}
    }
    let findings = read_findings(out.path(), np);
    for r in 0..np {
        assert!(
            findings.contains_key(&r),
            "{described}: rank {r} wrote no findings\n{output}"
        );
    }
    findings
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_string(&mut s);
        }
        s
    })
}

/// SIGTERM to mpirun, which forwards it to the ranks; after 10 s (or once mpirun is gone),
/// SIGKILL to mpirun and to the processes it had started that are still there (a rank stuck
/// in MPI may outlive mpirun).
fn stop(child: &mut Child) {
    let pid = child.id();
    let children = children_of(pid);
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    for (c, started) in children {
        // the same process (not a new one that reused the id)
        if start_time(c) == Some(started) {
            let _ = Command::new("kill")
                .args(["-KILL", &c.to_string()])
                .status();
        }
    }
}

/// Fields of /proc/<pid>/stat after the command name (which may hold spaces): the state is
/// the first, the parent the second, the start time the 20th.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

fn start_time(pid: u32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

/// The processes whose parent is `pid`, with their start times (from /proc).
fn children_of(pid: u32) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Some(fields) = stat_fields(p) else {
            continue;
        };
        let ppid = fields.get(1).and_then(|s| s.parse::<u32>().ok());
        let started = fields.get(19).and_then(|s| s.parse::<u64>().ok());
        if let (Some(pp), Some(t)) = (ppid, started) {
            if pp == pid {
                out.push((p, t));
            }
        }
    }
    out
}

fn read_findings(dir: &Path, np: usize) -> Findings {
    let mut all = Findings::new();
    for r in 0..np {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("rank-{r}.txt"))) else {
            continue;
        };
        let mut map = BTreeMap::new();
        let mut section = String::new();
        for line in text.lines() {
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = format!("{name}.");
            } else if let Some((k, v)) = line.split_once('=') {
                map.insert(format!("{section}{k}"), v.to_owned());
            }
        }
        all.insert(r, map);
    }
    all
}
