//! Helpers shared by asat-gang's integration tests (each test file is a process of its own:
//! they install the stop signal's handler).
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use asat_core::CpuSet;
use asat_gang::{Gang, GangScheduler, GangSchedulerBuilder};

/// How long a test may take before its watchdog calls it hung (generous: the machine may be
/// loaded).
pub const WATCHDOG: Duration = Duration::from_secs(120);
/// How long a step may take to happen.
pub const STEP: Duration = Duration::from_secs(20);

/// The stop signal of a scheduler built with the default offset.
pub fn default_signal() -> libc::c_int {
    libc::SIGRTMIN() + GangSchedulerBuilder::DEFAULT_SIGNAL_OFFSET as libc::c_int
}

/// Runs `body` on a thread of its own; fails if it panics or has not returned within `limit`
/// (the thread of a hung body is left behind), so that a regression that hangs is a failure.
pub fn bounded(limit: Duration, body: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    let handle = thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(limit) {
        Ok(()) => handle.join().unwrap(),
        Err(RecvTimeoutError::Disconnected) => {
            if let Err(p) = handle.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(RecvTimeoutError::Timeout) => {
            panic!("watchdog: the test did not finish within {limit:?} (hung)")
        }
    }
}

/// Waits until `cond` holds; panics with `what` if it does not within [`STEP`].
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + STEP;
    while !cond() {
        assert!(Instant::now() < deadline, "not within {STEP:?}: {what}");
        thread::sleep(Duration::from_micros(200));
    }
}

/// A scheduler whose gang domain is one CPU (the first this thread may run on), with a quantum
/// of 10 s: only the test's `switch_now` calls switch.
pub fn one_cpu_scheduler() -> Arc<GangScheduler> {
    let cpu = CpuSet::of_current_thread().unwrap().iter().next().unwrap();
    Arc::new(
        GangScheduler::builder()
            .cpus(std::iter::once(cpu).collect())
            .quantum(Duration::from_secs(10))
            .build()
            .unwrap(),
    )
}

/// A gang of one, in slot `slot`.
pub fn gang(sched: &GangScheduler, slot: usize) -> Arc<Gang> {
    let g = sched.gang(1).unwrap();
    assert_eq!(g.slot(), slot, "test set-up: gang in an unexpected slot");
    Arc::new(g)
}

/// Switches until `slot` runs (it must have a runnable thread). One request at a time: a
/// request still pending would switch again after `slot` runs.
pub fn switch_to(sched: &GangScheduler, slot: usize) {
    wait_for(&format!("slot {slot} runs"), || {
        if sched.current_slot() == Some(slot) {
            return true;
        }
        let switches = sched.stats().switches;
        sched.switch_now();
        let t = Instant::now();
        while sched.stats().switches == switches && t.elapsed() < Duration::from_millis(200) {
            thread::sleep(Duration::from_micros(200));
        }
        sched.current_slot() == Some(slot)
    });
}

/// A thread that is the only member of a gang and loops calling `safe_point`, counting its
/// turns, until dropped.
pub struct Looper {
    pub turns: Arc<AtomicU64>,
    /// The thread's kernel thread id and `pthread_t`, once it runs (before it joins).
    pub tid: Arc<AtomicI32>,
    pub pthread: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Looper {
    /// Starts the thread; with `unblock`, it first unblocks the default stop signal (which
    /// its creator may have blocked).
    pub fn start(gang: &Arc<Gang>, unblock: bool) -> Looper {
        let turns = Arc::new(AtomicU64::new(0));
        let tid = Arc::new(AtomicI32::new(0));
        let pthread = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (g, t, id, pt, s) = (
            Arc::clone(gang),
            Arc::clone(&turns),
            Arc::clone(&tid),
            Arc::clone(&pthread),
            Arc::clone(&stop),
        );
        let handle = thread::spawn(move || {
            if unblock {
                set_blocked(default_signal(), false);
            }
            // SAFETY: gettid and pthread_self take no arguments and cannot fail.
            unsafe {
                pt.store(libc::pthread_self() as u64, Ordering::SeqCst);
                id.store(libc::gettid(), Ordering::SeqCst);
            }
            let _me = g.join(0).unwrap();
            while !s.load(Ordering::SeqCst) {
                asat_gang::safe_point();
                t.fetch_add(1, Ordering::SeqCst);
            }
        });
        Looper {
            turns,
            tid,
            pthread,
            stop,
            handle: Some(handle),
        }
    }

    pub fn turns(&self) -> u64 {
        self.turns.load(Ordering::SeqCst)
    }

    /// Stops the thread and waits for it; its slot must run (or get to run) for it to leave.
    pub fn finish(mut self, sched: &GangScheduler) {
        self.stop.store(true, Ordering::SeqCst);
        let h = self.handle.take().unwrap();
        wait_for("a gang thread leaves", || {
            sched.switch_now();
            h.is_finished()
        });
        h.join().unwrap();
    }
}

impl Drop for Looper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Blocks or unblocks `sig` in the calling thread.
pub fn set_blocked(sig: libc::c_int, blocked: bool) {
    // SAFETY: `set` is a valid sigset_t, initialized by sigemptyset before use; the signal
    // is a valid real-time signal.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        let how = if blocked {
            libc::SIG_BLOCK
        } else {
            libc::SIG_UNBLOCK
        };
        assert_eq!(libc::pthread_sigmask(how, &set, std::ptr::null_mut()), 0);
    }
}

/// `errno` of the last failed call.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The scheduling state of thread `tid` of this process (`R` running, `S` sleeping, ...), from
/// `/proc`.
pub fn thread_state(tid: libc::pid_t) -> char {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    // The state follows the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.trim_start().chars().next().unwrap()
}

/// The voluntary context switches of thread `tid` of this process so far (each time it went to
/// sleep), from `/proc`.
pub fn voluntary_switches(tid: libc::pid_t) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
