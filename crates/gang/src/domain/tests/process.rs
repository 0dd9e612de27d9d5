//! The shared domain with real processes and real gang threads: the test binary runs itself as
//! gang processes (each a shared [`GangScheduler`] with one gang as wide as the domain, so
//! each process has a row of its own), which record when their threads run; the tests read
//! the records. Exclusivity: threads of different processes never run at the same time.
//! SIGKILL of the scheduling process: the others go on, and its cells are freed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use asat_core::CpuSet;

use crate::domain::table::{Domain, SLOTS};
use crate::{sys, GangScheduler};

const DIR_ENV: &str = "ASAT_GANG_TEST_PROCESS_DIR";
const RUN_ENV: &str = "ASAT_GANG_TEST_PROCESS_RUN_MS";
const QUANTUM: Duration = Duration::from_millis(10);
/// A gap in a thread's clock readings longer than this ends one of its run intervals.
const GAP_NS: u64 = 100_000;
/// The thread's stops are deferred for this long at a time (a `preempt_off` section).
const SECTION_NS: u64 = 1_000_000;
/// Failure deadline of each wait (a hang guard, not a timing target).
const DEADLINE: Duration = Duration::from_secs(60);

/// The domain's CPUs: the first two this thread may use (one if it has one).
fn domain_cpus() -> Vec<usize> {
    CpuSet::of_current_thread()
        .unwrap()
        .iter()
        .take(2)
        .collect()
}

/// A gang process: joins the shared domain in `$DIR_ENV` with a gang of the domain's width
/// whose threads spin, reading the clock, for `$RUN_ENV` ms, in `preempt_off` sections of 1 ms
/// (so that a stop takes up to 1 ms, which a switch must wait for); each thread appends its
/// run intervals (`start end` in ns of `CLOCK_MONOTONIC`) to `DIR/trace-{pid}`.
#[test]
#[ignore = "a child process of the domain process tests"]
fn gang_process() {
    let dir = PathBuf::from(std::env::var_os(DIR_ENV).expect("run by a process test"));
    let run_ms: u64 = std::env::var(RUN_ENV).unwrap().parse().unwrap();
    let cpus = domain_cpus();
    let sched = GangScheduler::builder()
        .shared_dir(&dir)
        .cpus(cpus.iter().copied().collect())
        .quantum(QUANTUM)
        .stop_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let gang = sched.gang(cpus.len()).unwrap();
    let trace = dir.join(format!("trace-{}", std::process::id()));
    let end = sys::now_ns() + run_ms * 1_000_000;
    std::thread::scope(|s| {
        for i in 0..gang.size() {
            let (gang, trace) = (&gang, &trace);
            s.spawn(move || {
                let mut out = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(trace)
                    .unwrap();
                let _me = gang.join(i).unwrap();
                let (mut start, mut last) = (sys::now_ns(), sys::now_ns());
                let mut ended = Vec::with_capacity(1024);
                while last < end {
                    {
                        // A stop that arrives in here waits until the section ends (1 ms
                        // later): a switch that started the next row before this thread has
                        // stopped would be seen as an overlap.
                        let _p = crate::preempt_off();
                        let until = last + SECTION_NS;
                        while last < until && ended.len() < ended.capacity() {
                            let t = sys::now_ns();
                            if t - last > GAP_NS {
                                ended.push((start, last));
                                start = t;
                            }
                            last = t;
                        }
                    }
                    for (a, b) in ended.drain(..) {
                        // One write per line: the gang's threads append to one file.
                        out.write_all(format!("{a} {b}\n").as_bytes()).unwrap();
                    }
                }
                out.write_all(format!("{start} {last}\n").as_bytes())
                    .unwrap();
            });
        }
    });
    let st = sched.stats();
    eprintln!(
        "process {}: {} switches led, mean {:?}, late stops {}, {} stops seen while polling",
        std::process::id(),
        st.domain_switches,
        st.mean_domain_stop_time(),
        st.late_stops,
        st.polled_stops
    );
    let stats = dir.join(format!("stats-{}", std::process::id()));
    std::fs::write(stats, format!("{} {}\n", st.polled_stops, st.switches)).unwrap();
}

fn spawn_gang_process(dir: &Path, run: Duration) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "domain::tests::process::gang_process",
            "--ignored",
            "--nocapture",
        ])
        .env(DIR_ENV, dir)
        .env(RUN_ENV, run.as_millis().to_string())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

/// A child process killed (if still running) and reaped on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A fresh folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("asat-gang-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The run intervals process `pid` has recorded so far.
fn intervals(dir: &Path, pid: u32) -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(dir.join(format!("trace-{pid}"))).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (a, b) = l.split_once(' ')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

/// The total time during which intervals of `a` and of `b` overlap.
fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    a.iter()
        .flat_map(|x| b.iter().map(move |y| (x, y)))
        .map(|(x, y)| x.1.min(y.1).saturating_sub(x.0.max(y.0)))
        .sum()
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
    start.elapsed()
}

fn wait_exit(p: &mut Proc, what: &str) {
    wait_for(what, || p.0.try_wait().unwrap().is_some());
    assert!(p.0.wait().unwrap().success(), "{what}: the process failed");
}

#[test]
fn threads_of_different_processes_never_run_together() {
    let dir = TempDir::new("domain-exclusive");
    let mut procs: Vec<Proc> = (0..3)
        .map(|_| Proc(spawn_gang_process(&dir.0, Duration::from_millis(1500))))
        .collect();
    for p in &mut procs {
        wait_exit(p, "a gang process ends");
    }
    let traces: Vec<Vec<(u64, u64)>> = procs.iter().map(|p| intervals(&dir.0, p.0.id())).collect();
    for (i, t) in traces.iter().enumerate() {
        let ran: u64 = t.iter().map(|(a, b)| b - a).sum();
        assert!(
            ran > 10 * GAP_NS,
            "process {i} made progress: its threads ran {ran} ns"
        );
    }
    for i in 0..traces.len() {
        for j in i + 1..traces.len() {
            let both = overlap(&traces[i], &traces[j]);
            assert_eq!(
                both, 0,
                "threads of processes {i} and {j} ran at the same time for {both} ns"
            );
        }
    }
    // The leader publishes each slice's end and the watchers of the ending row poll for the
    // stop: over some hundred quantum-driven switches, some stops reach a watcher that way
    // (a loaded machine may delay a watcher past the window now and then, never always).
    let (polled, stopped) = procs
        .iter()
        .map(|p| std::fs::read_to_string(dir.0.join(format!("stats-{}", p.0.id()))).unwrap())
        .map(|l| {
            let mut w = l.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            (w.next().unwrap(), w.next().unwrap())
        })
        .fold((0, 0), |(a, b), (p, s)| (a + p, b + s));
    assert!(
        polled > 0,
        "no stop of {stopped} was seen by a polling watcher"
    );
}

#[test]
fn a_killed_scheduling_process_is_replaced_and_its_cells_freed() {
    let dir = TempDir::new("domain-sigkill");
    let cpus = domain_cpus();
    let mut procs: Vec<Proc> = (0..3)
        .map(|_| Proc(spawn_gang_process(&dir.0, Duration::from_secs(30))))
        .collect();
    let pids: Vec<u32> = procs.iter().map(|p| p.0.id()).collect();
    wait_for("every process has run", || {
        pids.iter().all(|&p| !intervals(&dir.0, p).is_empty())
    });
    let observer = Domain::observe(&dir.0, &cpus).unwrap();
    let mut leader = None;
    wait_for("a process leads the domain", || {
        leader = observer.scheduler().and_then(|p| {
            pids.iter()
                .position(|&pid| observer.participant_of(pid) == Some(p))
        });
        leader.is_some()
    });
    let leader = leader.unwrap();
    let dead = observer.participant_of(pids[leader]).unwrap();
    let killed_at = sys::now_ns();
    drop(procs.remove(leader)); // SIGKILL, then reaped
    let survivors: Vec<u32> = procs.iter().map(|p| p.0.id()).collect();
    let took_over = wait_for("a live process leads the domain", || {
        observer.scheduler().is_some_and(|p| p != dead)
    });
    let went_on = wait_for("both other processes run again, in turn", || {
        survivors.iter().all(|&pid| {
            intervals(&dir.0, pid)
                .iter()
                .filter(|(a, _)| *a > killed_at)
                .count()
                >= 2
        })
    });
    wait_for(
        "the dead process's participant slot and cells are freed",
        || {
            observer.participant_of(pids[leader]).is_none()
                && (0..SLOTS)
                    .flat_map(|s| (0..cpus.len()).map(move |c| (s, c)))
                    .all(|(s, c)| observer.cell(s, c).is_none_or(|(p, _)| p != dead))
        },
    );
    // When each survivor first ran after the kill (0 if it was running then).
    let resumed: Vec<Duration> = survivors
        .iter()
        .map(|&pid| {
            let first = intervals(&dir.0, pid)
                .iter()
                .filter(|(_, b)| *b > killed_at)
                .map(|(a, _)| a.saturating_sub(killed_at))
                .min()
                .unwrap();
            Duration::from_nanos(first)
        })
        .collect();
    eprintln!(
        "take-over {took_over:?} after the kill; the survivors ran again {resumed:?} after \
         it; both had run twice after {went_on:?} (quantum {QUANTUM:?})"
    );
    let traces: Vec<_> = survivors.iter().map(|&p| intervals(&dir.0, p)).collect();
    assert_eq!(overlap(&traces[0], &traces[1]), 0, "still exclusive");
}
