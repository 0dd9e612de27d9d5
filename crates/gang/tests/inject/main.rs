//! Regression tests for the races of coordinated switching that were found in review (see the
//! `switch` module docs for the protocol). Each window is nanoseconds wide, so each test widens
//! it with a pause injected at that place (`asat_gang::inject`, compiled only under
//! `--cfg asat_inject`), drives the scheduler into the interleaving that broke with
//! `switch_now`, and then checks what the fix guarantees:
//!
//! 1. a thread woken from its park after its slot was stopped again parks again;
//! 2. a gang placed in a slot whose gangs were gone is stopped with the slot;
//! 3. a stop deferred as a thread goes idle does not park it;
//! 4. a stop signal that failed to be sent does not keep later switches from signalling the
//!    thread;
//! 5. a thread parked when its gang is dropped (its `Member` forgotten) runs on, even when the
//!    wake-up of the drop comes before it sleeps;
//! 6. a thread leaving a blocking call as its gang is dropped stays idle (never signalled);
//! 7. a stop signal whose switch decided to send it before the thread entered a blocking call
//!    does not interrupt the call.
//!
//! Races 1-5 are in `races.rs`, 6 and 7 (about blocking calls) in `blocking.rs`; this file has
//! the helpers.
//!
//! Run with `RUSTFLAGS="--cfg asat_inject" cargo test -p asat-gang --release --test inject`
//! (`scripts/test` does, with a target directory of its own). The gang domain is one CPU, so
//! the gangs of a test take turns on it; the schedulers have long quanta, so that the test's
//! `switch_now` calls are what moves them. Each test runs under a watchdog: a regression that hangs
//! shows as a failure. The tests install the stop signal's handler and share the injection
//! state, so they run one at a time, in a test process of their own.
#![cfg(asat_inject)]

use std::panic;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use asat_core::CpuSet;
use asat_gang::inject;
use asat_gang::{Gang, GangScheduler};

mod blocking;
mod races;

/// How long a test may take before the watchdog calls it hung.
pub(crate) const WATCHDOG: Duration = Duration::from_secs(120);
/// How long a step may take to happen (generous: the machine may be loaded).
pub(crate) const STEP: Duration = Duration::from_secs(20);
/// How long a test watches for a thread that runs when it must not.
pub(crate) const WATCH: Duration = Duration::from_millis(300);

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `body` on a thread of its own, after the other tests of this file (they share the
/// injection state) and with the injection state reset before and after. Fails if `body`
/// panics or has not returned within `limit` (the thread of a hung body is left behind).
pub(crate) fn bounded(limit: Duration, body: impl FnOnce() + Send + 'static) {
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    inject::reset();
    let (tx, rx) = mpsc::channel();
    let handle = thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    let outcome = rx.recv_timeout(limit);
    inject::reset();
    match outcome {
        Ok(()) => handle.join().unwrap(),
        Err(RecvTimeoutError::Disconnected) => {
            if let Err(p) = handle.join() {
                panic::resume_unwind(p);
            }
        }
        Err(RecvTimeoutError::Timeout) => {
            panic!("watchdog: the test did not finish within {limit:?} (hung)")
        }
    }
}

/// Waits until `cond` holds; panics with `what` if it does not within [`STEP`].
pub(crate) fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + STEP;
    while !cond() {
        assert!(Instant::now() < deadline, "not within {STEP:?}: {what}");
        thread::sleep(Duration::from_micros(200));
    }
}

/// A scheduler whose gang domain is one CPU (the first one this thread may run on), with a
/// quantum as long as the stop timeout (the longest it may be): with 10 s, it never ends
/// during a test, and only the test's `switch_now` calls switch.
pub(crate) fn scheduler(
    stop_timeout: Duration,
    idle_grace: Option<Duration>,
) -> Arc<GangScheduler> {
    let cpu = CpuSet::of_current_thread().unwrap().iter().next().unwrap();
    let mut b = GangScheduler::builder()
        .cpus(std::iter::once(cpu).collect())
        .quantum(stop_timeout)
        .stop_timeout(stop_timeout);
    if let Some(g) = idle_grace {
        b = b.idle_grace(g);
    }
    Arc::new(b.build().unwrap())
}

/// A scheduler like [`scheduler`] over the first `n` CPUs this thread may run on; None if it
/// may run on fewer.
pub(crate) fn scheduler_on(n: usize, stop_timeout: Duration) -> Option<Arc<GangScheduler>> {
    let cpus: CpuSet = CpuSet::of_current_thread()
        .unwrap()
        .iter()
        .take(n)
        .collect();
    (cpus.iter().count() == n).then(|| {
        Arc::new(
            GangScheduler::builder()
                .cpus(cpus)
                .quantum(stop_timeout)
                .stop_timeout(stop_timeout)
                .build()
                .unwrap(),
        )
    })
}

/// The scheduling state of thread `tid` of this process (`R` running, `S` sleeping, ...).
pub(crate) fn thread_state(tid: libc::pid_t) -> char {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    // The state follows the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.trim_start().chars().next().unwrap()
}

/// Waits until the thread of `r` sleeps (parked: its slot is not running).
pub(crate) fn wait_parked(r: &Runner) {
    wait_for("a gang thread parks", || {
        let tid = r.probe.tid.load(Ordering::SeqCst);
        tid != 0 && thread_state(tid) == 'S'
    });
}

/// A gang of one, in slot `slot`.
pub(crate) fn gang(sched: &GangScheduler, slot: usize) -> Arc<Gang> {
    let g = sched.gang(1).unwrap();
    assert_eq!(g.slot(), slot, "test set-up: gang in an unexpected slot");
    Arc::new(g)
}

#[derive(Default)]
pub(crate) struct Probe {
    /// Loop iterations done.
    pub(crate) iterations: AtomicU64,
    /// Iterations that found another slot (or none) running.
    pub(crate) violations: AtomicU64,
    pub(crate) stop: AtomicBool,
    /// The thread's kernel thread id, once it has started (before it joins).
    pub(crate) tid: AtomicI32,
}

impl Probe {
    pub(crate) fn iterations(&self) -> u64 {
        self.iterations.load(Ordering::SeqCst)
    }
    pub(crate) fn violations(&self) -> u64 {
        self.violations.load(Ordering::SeqCst)
    }
}

pub(crate) struct Runner {
    pub(crate) probe: Arc<Probe>,
    pub(crate) handle: Option<JoinHandle<()>>,
}

impl Runner {
    pub(crate) fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

impl Drop for Runner {
    /// A test that failed leaves no thread spinning on the CPU the next test uses (one that
    /// is parked stays so, and costs nothing).
    fn drop(&mut self) {
        self.probe.stop.store(true, Ordering::SeqCst);
    }
}

/// A thread that joins `gang` as its only member and then checks, over and over until told to
/// stop, that the scheduler's current slot is its own, each time inside a `preempt_off`
/// section: a stop is deferred to the section's end, and the scheduler resumes no other slot
/// before it, so a check that fails means the thread runs while another slot does. It has no
/// safe points: only signals stop it. With `target`, it is the injection target.
pub(crate) fn checker(sched: &Arc<GangScheduler>, gang: &Arc<Gang>, target: bool) -> Runner {
    let probe = Arc::new(Probe::default());
    let (sched, gang, p) = (Arc::clone(sched), Arc::clone(gang), Arc::clone(&probe));
    let handle = thread::spawn(move || {
        if target {
            inject::target_this_thread();
        }
        // SAFETY: gettid takes no arguments and cannot fail.
        p.tid.store(unsafe { libc::gettid() }, Ordering::SeqCst);
        let _me = gang.join(0).unwrap();
        while !p.stop.load(Ordering::SeqCst) {
            {
                let _section = asat_gang::preempt_off();
                if sched.current_slot() != Some(gang.slot()) {
                    p.violations.fetch_add(1, Ordering::SeqCst);
                }
            }
            p.iterations.fetch_add(1, Ordering::SeqCst);
        }
    });
    Runner {
        probe,
        handle: Some(handle),
    }
}

/// Tells the runners to stop and lets their slots run until they have all left.
pub(crate) fn finish(sched: &GangScheduler, runners: Vec<Runner>) {
    for r in &runners {
        r.probe.stop.store(true, Ordering::SeqCst);
    }
    wait_for("the gang threads leave", || {
        sched.switch_now();
        runners.iter().all(Runner::is_finished)
    });
    for mut r in runners {
        r.handle.take().unwrap().join().unwrap();
    }
}

/// Switches until `slot` runs (it must have a runnable thread, or get one soon). One request
/// at a time: a request still pending would switch again after `slot` runs.
pub(crate) fn switch_to(sched: &GangScheduler, slot: usize) {
    wait_for(&format!("slot {slot} runs"), || {
        if sched.current_slot() == Some(slot) {
            return true;
        }
        let switches = sched.stats().switches;
        sched.switch_now();
        // Served when a switch is counted; a request that found no other runnable slot is
        // served without one, so give up waiting after a while and ask again.
        let t = Instant::now();
        while sched.stats().switches == switches && t.elapsed() < Duration::from_millis(200) {
            thread::sleep(Duration::from_micros(200));
        }
        sched.current_slot() == Some(slot)
    });
}
