//! `--processes`: every gang of a cell is a process of its own, this program started again in
//! its hidden child mode (`--child`), one process per gang.
//!
//! # The gang processes
//!
//! Each child is told its method, its gang number (which seeds its members' draws, as in one
//! process), its threads, GRAIN and VAR, the CPUs, the quantum, the work rate calibrated by
//! the parent (so that every gang computes the same amount per microsecond) and the run's
//! folder ([`RunDir`]: made for the run under the temporary folder, mode 0700, a name no
//! other run uses, removed at the end). A `gang-spin` child builds a `GangScheduler` on those
//! CPUs with [`shared_dir`](asat::gang::GangSchedulerBuilder::shared_dir) set to that folder
//! and one runtime with the gang policy, as the one-process gang-spin builds one runtime per
//! gang: the cell's gang processes meet in the domain file of the folder (so no process from
//! elsewhere, live or stale, takes part), one of them is elected and rotates the rows, each
//! stops and resumes its own threads. `os-spin` and `os-block` children run their gang's
//! threads pinned as in one process (the same code: [`OneGang`]).
//!
//! # Counting
//!
//! Each gang's member 0 counts its iterations in a word of a file of the run's folder that
//! every child and the parent map ([`Counters`]: `asat::private_file`, one 64-byte line per
//! gang), so the parent reads the counts as it reads them in one process: one window for all
//! gangs, from the count after the warm-up until the gangs have done `--iterations` on
//! average or `--max-seconds` have passed.
//!
//! # The protocol
//!
//! Lines on each child's stdin and stdout (other stdout lines are skipped; a child's stderr is
//! the parent's):
//!
//! | parent to child | child to parent | meaning |
//! |---|---|---|
//! | | `READY` | set up (scheduler, runtime, counter); the gang's threads not started |
//! | `GO` | | start the gang's threads: the warm-up begins |
//! | `MARK` | | the window begins: note the time, the process's CPU time, the scheduler's counters |
//! | `END` | `RESULT k=v ...` | the window ends: note them again, stop the gang, report the differences, exit |
//!
//! The parent sends `GO` once every child is `READY`, `MARK` after the warm-up, just before
//! it reads the counts, and `END` as soon as it has read them at the end of the window. A
//! child whose stdin closes stops its gang and exits (its parent is gone). A child that has
//! not answered by the cell's deadline (warm-up + window + 60 s) is killed, as is every child
//! of a cell that fails; the run then stops with an error naming the gang process.
//!
//! # What a cell reports
//!
//! Time per iteration and censoring as in one process (the parent's window, the shared
//! counts). CPU share: the children's CPU time between `MARK` and `END`, each over its own
//! time between them, summed, over the CPUs. Switch time (gang-spin): the domain stop time of
//! the process(es) that led (their `domain_stop_time_total` over `domain_switches` between
//! `MARK` and `END`: from a stop's announcement to the last process's acknowledgement); the
//! longest is over the schedulers' life (warm-up included); besides it, each process's own
//! part of a stop (its signals to its last thread parked).

use std::io::{self, BufRead, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use asat::gang::{GangScheduler, GangStats};
use asat::private_file::{PrivateDir, SharedMap};
use asat::Runtime;
use asat_peers::procs::{Relaunch, Talker};
use asat_peers::spin::SpinBarrier;

use crate::cell::{warmup, CellResult};
use crate::work::{process_cpu_seconds, OneGang, Work};
use crate::{Args, Cell, MAX_LOAD};

/// How long past its warm-up and window a cell may take before its processes are killed.
const SLACK: Duration = Duration::from_secs(60);

/// The folder of a run in processes mode (its gang domain and its counters): made under the
/// temporary folder (`TMPDIR`) with a name no other run uses and mode 0700, removed with its
/// files when dropped.
pub struct RunDir {
    dir: tempfile::TempDir,
    counters: Counters,
    /// How the gang processes are started.
    relaunch: Relaunch,
}

impl RunDir {
    /// Makes the folder and its counters; gang processes will be started by `relaunch`.
    pub fn new(relaunch: Relaunch) -> Result<RunDir, String> {
        let base = std::env::temp_dir();
        let fail = |e: io::Error| {
            format!(
                "cannot make a folder for the gang processes in {}: {e} (set TMPDIR to a \
                 folder you may write to)",
                base.display()
            )
        };
        // asat takes an absolute path only; TMPDIR may be relative.
        let base = std::path::absolute(&base).map_err(fail)?;
        let dir = tempfile::Builder::new()
            .prefix("asat-gang_sync-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&base)
            .map_err(fail)?;
        let counters = Counters::open(dir.path())?;
        Ok(RunDir {
            dir,
            counters,
            relaunch,
        })
    }

    /// The folder's absolute path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// One iteration counter per gang, a 64-bit word at the start of the gang's 64-byte line of
/// the file `iterations` of the run's folder, mapped by the parent and every child.
pub struct Counters(SharedMap);

impl Counters {
    const FILE: &str = "iterations";
    const LINE: usize = 64;
    const LEN: usize = Self::LINE * MAX_LOAD as usize;

    /// Opens (creates, zero-filled) the counters of the folder `dir`.
    pub fn open(dir: &Path) -> Result<Counters, String> {
        let file = PrivateDir::named(dir)
            .and_then(|d| d.open_file(Self::FILE, Self::LEN as u64))
            .map_err(|e| format!("the iteration counters: {e}"))?;
        SharedMap::map(file.into_file(), Self::LEN)
            .map(Counters)
            .map_err(|e| format!("mapping the iteration counters: {e}"))
    }

    /// Gang `g`'s counter (`g` below [`MAX_LOAD`]).
    pub fn gang(&self, g: usize) -> &AtomicU64 {
        &self.0.u64s(g * Self::LINE, 1)[0]
    }
}

/// The command line of gang `g`'s process.
fn child_args(
    args: &Args,
    cpus: &[usize],
    work: Work,
    c: &Cell<'_>,
    g: usize,
    dir: &Path,
) -> Vec<String> {
    let cpus: Vec<String> = cpus.iter().map(usize::to_string).collect();
    let mut v: Vec<String> = [
        "--child",
        "--child-method",
        c.method,
        "--child-gang",
        &g.to_string(),
        "--threads",
        &c.n.to_string(),
        "--grains-us",
        &c.grain.to_string(),
        "--var-us",
        &c.var.to_string(),
        "--quantum-ms",
        &args.quantum_ms.to_string(),
        "--child-cpus",
        &cpus.join(","),
        "--child-loops-per-us",
        &work.loops_per_us.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push("--child-dir".into());
    v.push(dir.display().to_string());
    v
}

/// Runs one cell with every gang in a process of its own.
pub fn run_cell(
    args: &Args,
    cpus: &[usize],
    work: Work,
    c: &Cell<'_>,
    run: &RunDir,
) -> Result<CellResult, String> {
    let warmup = warmup(args, c.load);
    let window = Duration::from_secs_f64(args.max_seconds);
    let deadline = Instant::now() + warmup + window + SLACK;
    let what = |g: usize| {
        format!(
            "gang process {} of {} ({} load {} grain {} us)",
            g + 1,
            c.load,
            c.method,
            c.load,
            c.grain
        )
    };
    let counters: Vec<&AtomicU64> = (0..c.load).map(|g| run.counters.gang(g)).collect();
    for n in &counters {
        n.store(0, Ordering::Relaxed);
    }
    // Dropped on any error below: every child is then killed and reaped.
    let mut gangs: Vec<Talker> = Vec::with_capacity(c.load);
    for g in 0..c.load {
        let mut cmd = run
            .relaunch
            .command(child_args(args, cpus, work, c, g, run.path()));
        cmd.stderr(Stdio::inherit());
        gangs.push(Talker::spawn(&mut cmd).map_err(|e| format!("cannot start {}: {e}", what(g)))?);
    }
    let send_all = |gangs: &mut [Talker], line: &str| -> Result<(), String> {
        for (g, t) in gangs.iter_mut().enumerate() {
            t.send(line)
                .map_err(|e| format!("{}: sending {line}: {e}", what(g)))?;
        }
        Ok(())
    };
    let answers = |gangs: &mut [Talker], prefix: &str| -> Result<Vec<String>, String> {
        gangs
            .iter_mut()
            .enumerate()
            .map(|(g, t)| {
                t.expect(prefix, deadline)
                    .map_err(|e| format!("{}: {e}", what(g)))
            })
            .collect()
    };
    answers(&mut gangs, "READY")?;
    send_all(&mut gangs, "GO")?;
    std::thread::sleep(warmup);
    // From here as in one process, with the counts in the shared file.
    let count = || {
        counters
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .sum::<u64>()
    };
    send_all(&mut gangs, "MARK")?;
    let c0 = count();
    let t0 = Instant::now();
    let target = args.iterations.saturating_mul(c.load as u64);
    while t0.elapsed() < window && count() - c0 < target {
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = t0.elapsed();
    let done = count() - c0;
    send_all(&mut gangs, "END")?;
    let results = answers(&mut gangs, "RESULT ")?
        .iter()
        .enumerate()
        .map(|(g, line)| {
            ChildResult::parse(line).ok_or_else(|| format!("{}: bad result {line:?}", what(g)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (g, t) in gangs.into_iter().enumerate() {
        match t.finish(Instant::now() + Duration::from_secs(10)) {
            Ok(Some(status)) if status.success() => {}
            Ok(Some(status)) => return Err(format!("{} failed: {status}", what(g))),
            Ok(None) => return Err(format!("{} did not exit after its result", what(g))),
            Err(e) => return Err(format!("{}: {e}", what(g))),
        }
    }
    let mean_iters = done as f64 / c.load as f64;
    Ok(combine(
        elapsed.as_secs_f64() * 1e6 / mean_iters.max(1.0),
        mean_iters == 0.0,
        &results,
        cpus.len(),
    ))
}

/// The cell's result from the time per iteration and its gangs' reports (see the module
/// docs).
fn combine(time_us: f64, censored: bool, r: &[ChildResult], cpus: usize) -> CellResult {
    let sum = |f: fn(&ChildResult) -> f64| r.iter().map(f).sum::<f64>();
    let per = |total: f64, n: f64| (n > 0.0).then(|| total / n);
    let switch_us = per(
        sum(|x| x.domain_total_us),
        sum(|x| x.domain_switches as f64),
    );
    CellResult {
        time_us,
        censored,
        switch_us,
        switch_max_us: switch_us.map(|_| {
            r.iter()
                .filter(|x| x.domain_switches > 0)
                .map(|x| x.domain_max_us)
                .fold(0.0, f64::max)
        }),
        own_stop_us: per(sum(|x| x.stop_total_us), sum(|x| x.timed_switches as f64)),
        cpu_share: sum(|x| x.cpu_s / x.secs.max(1e-9)) / cpus as f64,
    }
}

/// What a gang process reports for the window.
#[derive(Clone, Debug, Default, PartialEq)]
struct ChildResult {
    /// From `MARK` to `END`: seconds and the process's CPU seconds.
    secs: f64,
    cpu_s: f64,
    /// Stops of this process's own threads and their total time, us.
    timed_switches: u64,
    stop_total_us: f64,
    /// Switches it led as the domain's scheduler, their total and (over its life) longest
    /// stop time, us.
    domain_switches: u64,
    domain_total_us: f64,
    domain_max_us: f64,
}

impl ChildResult {
    fn line(&self) -> String {
        format!(
            "RESULT secs={} cpu_s={} timed_switches={} stop_total_us={} \
             domain_switches={} domain_total_us={} domain_max_us={}",
            self.secs,
            self.cpu_s,
            self.timed_switches,
            self.stop_total_us,
            self.domain_switches,
            self.domain_total_us,
            self.domain_max_us
        )
    }

    /// The fields after `RESULT `; every one must be there.
    fn parse(rest: &str) -> Option<ChildResult> {
        let mut r = ChildResult::default();
        let mut seen = 0;
        for kv in rest.split_whitespace() {
            let (k, v) = kv.split_once('=')?;
            match k {
                "secs" => r.secs = v.parse().ok()?,
                "cpu_s" => r.cpu_s = v.parse().ok()?,
                "timed_switches" => r.timed_switches = v.parse().ok()?,
                "stop_total_us" => r.stop_total_us = v.parse().ok()?,
                "domain_switches" => r.domain_switches = v.parse().ok()?,
                "domain_total_us" => r.domain_total_us = v.parse().ok()?,
                "domain_max_us" => r.domain_max_us = v.parse().ok()?,
                _ => continue,
            }
            seen += 1;
        }
        (seen == 7).then_some(r)
    }
}

/// What a gang process notes at `MARK` and at `END`.
struct Snapshot {
    at: Instant,
    cpu_s: f64,
    stats: GangStats,
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The child mode: one gang, spoken to on stdin and stdout (see the module docs).
pub fn child(args: &Args) -> Result<(), String> {
    let method = args.child_method.as_str();
    let n = args
        .threads
        .ok_or("--threads is needed in the child mode")?;
    let cpus = &args.child_cpus;
    let grain = *args.grains_us.first().ok_or("--grains-us is needed")?;
    if cpus.is_empty() || n == 0 || args.child_gang >= MAX_LOAD as usize {
        return Err(format!(
            "--child-cpus and --threads must not be empty or 0, --child-gang below {MAX_LOAD}"
        ));
    }
    let dir = args.child_dir.as_deref().ok_or("--child-dir is needed")?;
    let counters = Counters::open(dir)?;
    let work = Work {
        loops_per_us: args.child_loops_per_us,
    };
    let sched = match method {
        "gang-spin" => Some(
            GangScheduler::builder()
                .quantum(Duration::from_secs_f64(args.quantum_ms / 1e3))
                .cpus(cpus.iter().copied().collect())
                .shared(true)
                .shared_dir(dir)
                .build()
                .map_err(|e| format!("gang scheduler: {e}"))?,
        ),
        _ => None,
    };
    let runtime = sched
        .as_ref()
        .map(|s| Runtime::builder().max_threads(n).policy(s.policy()).build())
        .transpose()
        .map_err(|e| format!("gang runtime: {e}"))?;
    let (quit_at, stop) = (AtomicU64::new(u64::MAX), AtomicBool::new(false));
    let (spin, block) = (SpinBarrier::new(n), Barrier::new(n));
    let mut out = io::stdout().lock();
    let mut say = |line: &str| -> Result<(), String> {
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|e| format!("writing to the parent: {e}"))
    };
    say("READY")?;
    let mut input = io::stdin().lock().lines();
    if !matches!(input.next(), Some(Ok(l)) if l.trim() == "GO") {
        return Ok(()); // the parent is gone or gave up
    }
    let snap = || Snapshot {
        at: Instant::now(),
        cpu_s: process_cpu_seconds(),
        stats: sched.as_ref().map(GangScheduler::stats).unwrap_or_default(),
    };
    let result = std::thread::scope(|s| {
        OneGang {
            g: args.child_gang,
            n,
            method,
            runtime: runtime.as_ref(),
            cpus,
            work,
            grain,
            var: args.var_us,
            iters: counters.gang(args.child_gang),
            quit_at: &quit_at,
            stop: &stop,
            spin: &spin,
            block: &block,
        }
        .spawn(s);
        let mut mark: Option<Snapshot> = None;
        let mut result = Ok(None);
        for line in input.by_ref() {
            let Ok(line) = line else { break };
            match (line.trim(), &mark) {
                ("MARK", _) => mark = Some(snap()),
                ("END", Some(m)) => {
                    result = Ok(Some(window(m, &snap())));
                    break;
                }
                ("END", None) => {
                    result = Err("END before MARK".to_string());
                    break;
                }
                (other, _) => {
                    result = Err(format!("unexpected line {other:?} from the parent"));
                    break;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        result
    });
    match result? {
        Some(r) => say(&r.line()),
        None => Ok(()), // stdin closed: the parent is gone
    }
}

/// The differences from `MARK` to `END`.
fn window(a: &Snapshot, b: &Snapshot) -> ChildResult {
    let (sa, sb) = (&a.stats, &b.stats);
    ChildResult {
        secs: (b.at - a.at).as_secs_f64(),
        cpu_s: b.cpu_s - a.cpu_s,
        timed_switches: sb.timed_switches - sa.timed_switches,
        stop_total_us: us(sb.stop_time_total - sa.stop_time_total),
        domain_switches: sb.domain_switches - sa.domain_switches,
        domain_total_us: us(sb.domain_stop_time_total - sa.domain_stop_time_total),
        domain_max_us: us(sb.domain_stop_time_max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    const CHILD_ENV: &str = "GANG_SYNC_TEST_CHILD_ARGS";

    /// Stands for the child mode in the test below.
    #[test]
    #[ignore = "a gang process of processes_mode_runs_each_gang_in_a_process"]
    fn gang_process() {
        let Some(argv) = Relaunch::test_args(CHILD_ENV, "gang_sync") else {
            return;
        };
        child(&Args::try_parse_from(argv).unwrap()).unwrap();
    }

    #[test]
    fn processes_mode_runs_each_gang_in_a_process() {
        // A 2 ms quantum: the gang-spin cell switches many times in its window.
        let args = Args::try_parse_from([
            "gang_sync",
            "--processes",
            "--quantum-ms",
            "2",
            "--max-seconds",
            "0.3",
            "--iterations",
            "1000000000",
        ])
        .unwrap();
        let cpus: Vec<usize> = GangScheduler::builder()
            .build()
            .unwrap()
            .cpus()
            .iter()
            .copied()
            .take(2)
            .collect();
        let relaunch = Relaunch::test("processes::tests::gang_process", CHILD_ENV).unwrap();
        let run = RunDir::new(relaunch).unwrap();
        let work = Work::calibrate();
        for method in crate::METHODS {
            let c = Cell {
                method,
                load: 2,
                n: cpus.len(),
                grain: 5.0,
                var: 5.0,
            };
            let r = run_cell(&args, &cpus, work, &c, &run).unwrap();
            assert!(!r.censored && r.time_us > 0.0, "{method}: {r:?}");
            // Only gang-spin gangs meet in the domain; there, one process leads the
            // switches between the two gangs' rows.
            assert_eq!(
                r.switch_us.is_some(),
                method == "gang-spin",
                "{method}: {r:?}"
            );
            assert_eq!(
                r.own_stop_us.is_some(),
                method == "gang-spin",
                "{method}: {r:?}"
            );
        }
        let dir = run.path().to_path_buf();
        assert!(dir.join(Counters::FILE).exists());
        drop(run);
        assert!(!dir.exists(), "the run's folder is removed with it");
    }

    #[test]
    fn results_round_trip_and_combine() {
        let r = ChildResult {
            secs: 0.5,
            cpu_s: 0.9,
            timed_switches: 10,
            stop_total_us: 400.0,
            domain_switches: 20,
            domain_total_us: 1000.0,
            domain_max_us: 90.0,
        };
        let line = r.line();
        let parsed = ChildResult::parse(line.strip_prefix("RESULT ").unwrap()).unwrap();
        assert_eq!(parsed, r);
        assert_eq!(ChildResult::parse("secs=1 cpu_s=2"), None, "fields missing");
        let other = ChildResult {
            domain_switches: 0,
            domain_total_us: 0.0,
            domain_max_us: 0.0,
            ..r.clone()
        };
        let c = combine(7.0, false, &[r, other], 2);
        assert_eq!(c.time_us, 7.0);
        assert_eq!(c.switch_us, Some(50.0), "the leader's switches only");
        assert_eq!(c.switch_max_us, Some(90.0));
        assert_eq!(c.own_stop_us, Some(40.0), "800 us over 20 stops");
        assert!((c.cpu_share - 1.8).abs() < 1e-9, "{}", c.cpu_share);
    }
}
