//! Regression tests for the shared table's reclaim races found in review (see the `shm` module
//! docs for the protocol): a reclaimer decided that a slot's owner was dead, was delayed, a new
//! live process claimed the slot meanwhile, and the reclaimer then zeroed that process's load
//! and freed its slot; and, with the slot locks taken, two reclaimers of one process (which
//! share the locks of its open file description) could still do the same. The windows are
//! microseconds wide, so the tests widen them with a pause injected where the reclaimer has
//! marked the dead slot and not yet freed it (`asat_pools::inject`, compiled only under
//! `--cfg asat_inject`), start the new process (and the second reclaimer) during the pause, and
//! then check that the new process keeps its slot and its load.
//!
//! Run with `RUSTFLAGS="--cfg asat_inject" cargo test -p asat-pools --release --test inject`
//! (`scripts/test` does, with a target directory of its own).
//!
//! The other processes are this test binary run again (`current_exe`) with `ROLE_ENV` set:
//! the test `child_role` then plays the dead owner or the new claimer, talking to the test
//! over its stdin and stdout. Without the variable, `child_role` does nothing. Every wait is
//! bounded, and the test runs under a watchdog: a regression that hangs shows as a failure.
#![cfg(asat_inject)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use asat_pools::inject::{self, Point};
use asat_pools::{LoadTable, SharedTable};

mod common;
use common::{pools, temp_dir};

/// How long the test may take before the watchdog calls it hung.
const WATCHDOG: Duration = Duration::from_secs(90);
/// How long a step may take to happen (generous: the machine may be loaded, and a step may
/// start a process).
const STEP: Duration = Duration::from_secs(20);

/// The role of a child process (`dead` or `claimer`); unset in the test process itself.
const ROLE_ENV: &str = "ASAT_POOLS_INJECT_ROLE";
/// The folder of the table, for a child process.
const DIR_ENV: &str = "ASAT_POOLS_INJECT_DIR";

/// The threads the dead owner counted in pool 0.
const DEAD_LOAD: u32 = 7;
/// The threads the claimer counts in pool 1.
const CLAIMER_LOAD: u32 = 5;

/// The other processes of the test.
///
/// - `dead`: opens the table, counts [`DEAD_LOAD`] threads in pool 0, prints `SLOT <slot>` and
///   ends without dropping the table: its tag stays in the slot, and the kernel drops the
///   slot's lock with the process, as for a process killed while it ran a job.
/// - `claimer`: opens the table, counts [`CLAIMER_LOAD`] threads in pool 1, prints
///   `CLAIMED <slot>`, then waits for a line on stdin (or its end) and prints `VIEW ok` if it
///   still sees its slot and its load, `VIEW <what is wrong>` otherwise.
#[test]
fn child_role() {
    let Some(role) = std::env::var_os(ROLE_ENV) else {
        return;
    };
    let dir = PathBuf::from(std::env::var_os(DIR_ENV).expect("the table's folder"));
    let table = SharedTable::open_in(&dir, &pools()).unwrap();
    match role.to_str() {
        Some("dead") => {
            table.add(0, DEAD_LOAD);
            println!("SLOT {}", table.slot());
            std::mem::forget(table);
        }
        Some("claimer") => {
            table.add(1, CLAIMER_LOAD);
            println!("CLAIMED {}", table.slot());
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
            let me = std::process::id();
            let (own, owners, loads) = (table.own_loads(), table.owners(), table.loads());
            if own == [0, CLAIMER_LOAD] && owners.contains(&me) && loads == [0, CLAIMER_LOAD] {
                println!("VIEW ok");
            } else {
                println!(
                    "VIEW slot {}: own loads {own:?}, owners {owners:?} (me: {me}), \
                     loads {loads:?}",
                    table.slot()
                );
            }
        }
        _ => panic!("unknown role {role:?}"),
    }
}

/// A child process in a role, killed (if still running) when dropped.
struct Child {
    process: std::process::Child,
    lines: Receiver<String>,
}

impl Child {
    fn spawn(role: &str, dir: &Path) -> Self {
        let mut process = Command::new(std::env::current_exe().unwrap())
            .args(["child_role", "--exact", "--nocapture", "--test-threads=1"])
            .env(ROLE_ENV, role)
            .env(DIR_ENV, dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let out = BufReader::new(process.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { process, lines }
    }

    fn pid(&self) -> u32 {
        self.process.id()
    }

    /// The rest of the next output line that holds `marker` (the test harness may print on the
    /// same line before it); panics if none comes within [`STEP`].
    fn expect(&self, marker: &str) -> String {
        let deadline = Instant::now() + STEP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some((_, rest)) = line.split_once(marker) {
                        return rest.trim().to_owned();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("the child process printed no {marker:?} within {STEP:?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the child process ended without printing {marker:?}")
                }
            }
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.process.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Waits (at most [`STEP`]) for the process to end, and checks that it succeeded.
    fn wait_success(&mut self) {
        let deadline = Instant::now() + STEP;
        loop {
            if let Some(status) = self.process.try_wait().unwrap() {
                assert!(status.success(), "the child process failed: {status}");
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the child process did not end within {STEP:?}"
            );
            thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Ok(None) = self.process.try_wait() {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

/// Runs `body` on a thread of its own, with the injection state reset before and after, one
/// test at a time. Fails if `body` panics or has not returned within `limit` (the thread of a
/// hung body is left behind; its child processes end with the test process, when their stdin
/// closes).
fn bounded(limit: Duration, body: impl FnOnce() + Send + 'static) {
    // The injection state is process-wide: one test at a time.
    static SERIAL: Mutex<()> = Mutex::new(());
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    inject::reset();
    let handle = thread::spawn(body);
    let deadline = Instant::now() + limit;
    while !handle.is_finished() {
        if Instant::now() > deadline {
            inject::reset();
            panic!("watchdog: the test did not finish within {limit:?} (hung)");
        }
        thread::sleep(Duration::from_millis(1));
    }
    inject::reset();
    if let Err(p) = handle.join() {
        std::panic::resume_unwind(p);
    }
}

/// A reclaimer of this process finds a dead process's slot and stalls after marking it; a new
/// process opens the table during the stall. When the reclaimer goes on, it must free the dead
/// process's slot and load, and leave the new process its slot and its load, wherever the new
/// process got one. (Before the reclaimer took the slot's lock, the new process claimed the
/// dead slot, waited out the mark and took it over; the reclaimer then zeroed its load and
/// freed its slot.)
#[test]
fn a_slow_reclaimer_never_frees_a_live_process_slot() {
    bounded(WATCHDOG, || {
        let dir = temp_dir("reclaim");
        let table = SharedTable::open_in(dir.path(), &pools()).unwrap();
        let me = std::process::id();

        // A process takes a slot, counts threads and dies. (`owners` does not reclaim, unlike
        // `loads`: nothing here reclaims before the reclaimer below.)
        let mut dead = Child::spawn("dead", dir.path());
        let dead_slot: usize = dead.expect("SLOT ").parse().unwrap();
        let dead_pid = dead.pid();
        dead.wait_success();
        assert_eq!(
            table.owners(),
            vec![me, dead_pid],
            "test set-up: the dead process's tag is not in its slot"
        );

        // The reclaimer stalls after marking the dead slot.
        inject::arm(Point::Reclaiming);
        let reclaimer = {
            let table = table.clone();
            thread::spawn(move || table.reclaim_dead())
        };
        assert!(
            inject::wait_hits(Point::Reclaiming, 1, STEP),
            "the reclaimer never reached the dead process's slot"
        );

        // A new process opens the table during the stall and counts its threads.
        let mut claimer = Child::spawn("claimer", dir.path());
        let claimer_slot: usize = claimer.expect("CLAIMED ").parse().unwrap();
        let claimer_pid = claimer.pid();

        // The reclaimer goes on.
        inject::release(Point::Reclaiming);
        let deadline = Instant::now() + STEP;
        while !reclaimer.is_finished() {
            assert!(
                Instant::now() < deadline,
                "the reclaimer did not finish within {STEP:?} of its release"
            );
            thread::sleep(Duration::from_millis(1));
        }
        let freed = reclaimer.join().unwrap();
        assert_eq!(
            inject::expired(Point::Reclaiming),
            0,
            "the pause ran out before the test released it: the interleaving was not the one \
             tested"
        );
        assert_eq!(
            freed, 1,
            "the reclaimer did not free the dead process's slot"
        );

        let owners = table.owners();
        assert!(
            owners.contains(&claimer_pid),
            "the stalled reclaimer freed the slot of a live process: owners {owners:?}, the new \
             process {claimer_pid} in slot {claimer_slot} (the dead one's was {dead_slot})"
        );
        assert!(!owners.contains(&dead_pid), "owners {owners:?}");
        assert_eq!(
            table.loads(),
            vec![0, CLAIMER_LOAD],
            "the dead process's load must be gone and the new process's load counted (new \
             process in slot {claimer_slot}, the dead one's was {dead_slot})"
        );
        claimer.send("CHECK");
        assert_eq!(
            claimer.expect("VIEW "),
            "ok",
            "the new process's own view of the table is wrong"
        );
        claimer.wait_success();

        // The new process freed its slot as it ended.
        assert_eq!(table.owners(), vec![me]);
        assert_eq!(table.loads(), vec![0, 0]);
        assert_eq!(table.reclaim_dead(), 0);
    });
}

/// Two reclaimers of this process: the first finds a dead process's slot and stalls after
/// marking it; the second starts during the stall; then a new process opens the table. When
/// both have gone on, the dead process's slot must be freed once, and the new process must
/// keep its slot and its load. (The slot locks belong to the open file description, which the
/// two reclaimers share, so both passed the dead slot's lock: the second freed the slot, the
/// new process claimed it, and the first, going on, zeroed the new process's load and freed
/// its slot. The table's reclaim mutex now holds the second back until the first is done.)
#[test]
fn two_reclaimers_of_one_process_never_free_a_live_process_slot() {
    bounded(WATCHDOG, || {
        let dir = temp_dir("reclaim2");
        let table = SharedTable::open_in(dir.path(), &pools()).unwrap();
        let me = std::process::id();

        let mut dead = Child::spawn("dead", dir.path());
        let dead_slot: usize = dead.expect("SLOT ").parse().unwrap();
        let dead_pid = dead.pid();
        dead.wait_success();
        assert_eq!(
            table.owners(),
            vec![me, dead_pid],
            "test set-up: the dead process's tag is not in its slot"
        );

        // The first reclaimer stalls after marking the dead slot.
        inject::arm(Point::Reclaiming);
        let first = {
            let table = table.clone();
            thread::spawn(move || table.reclaim_dead())
        };
        assert!(
            inject::wait_hits(Point::Reclaiming, 1, STEP),
            "the first reclaimer never reached the dead process's slot"
        );

        // The second reclaimer runs meanwhile: it either finishes (it passed the first) or is
        // seen waiting for the first.
        inject::arm(Point::ReclaimWaits);
        let second = {
            let table = table.clone();
            thread::spawn(move || table.reclaim_dead())
        };
        let deadline = Instant::now() + STEP;
        while !second.is_finished() && inject::hits(Point::ReclaimWaits) == 0 {
            assert!(
                Instant::now() < deadline,
                "the second reclaimer neither finished nor waited within {STEP:?}"
            );
            thread::sleep(Duration::from_millis(1));
        }

        // A new process opens the table and counts its threads.
        let mut claimer = Child::spawn("claimer", dir.path());
        let claimer_slot: usize = claimer.expect("CLAIMED ").parse().unwrap();
        let claimer_pid = claimer.pid();

        // Both reclaimers go on.
        inject::release(Point::Reclaiming);
        inject::release(Point::ReclaimWaits);
        let deadline = Instant::now() + STEP;
        while !(first.is_finished() && second.is_finished()) {
            assert!(
                Instant::now() < deadline,
                "the reclaimers did not finish within {STEP:?} of their release"
            );
            thread::sleep(Duration::from_millis(1));
        }
        let freed = first.join().unwrap() + second.join().unwrap();
        assert_eq!(
            inject::expired(Point::Reclaiming) + inject::expired(Point::ReclaimWaits),
            0,
            "a pause ran out before the test released it: the interleaving was not the one \
             tested"
        );

        let owners = table.owners();
        assert!(
            owners.contains(&claimer_pid),
            "a reclaimer freed the slot of a live process: owners {owners:?}, the new process \
             {claimer_pid} in slot {claimer_slot} (the dead one's was {dead_slot})"
        );
        assert_eq!(
            freed, 1,
            "the reclaimers freed {freed} slots; only the dead process's was to be freed"
        );
        assert!(!owners.contains(&dead_pid), "owners {owners:?}");
        assert_eq!(
            table.loads(),
            vec![0, CLAIMER_LOAD],
            "the dead process's load must be gone and the new process's load counted (new \
             process in slot {claimer_slot}, the dead one's was {dead_slot})"
        );
        claimer.send("CHECK");
        assert_eq!(
            claimer.expect("VIEW "),
            "ok",
            "the new process's own view of the table is wrong"
        );
        claimer.wait_success();
        assert_eq!(table.owners(), vec![me]);
        assert_eq!(table.loads(), vec![0, 0]);
    });
}
