//! Regression tests for the races of coordinated switching that were found in review (see the
//! `switch` module docs for the protocol). Each window is nanoseconds wide, so each test widens
//! it with a pause injected at that place (`asat_gang::inject`, compiled only under
//! `--cfg asat_inject`), drives the scheduler into the interleaving that broke with
//! `switch_now`, and then checks what the fix guarantees:
//!
//! 1. a thread woken from its park after its slot was stopped again parks again;
//! 2. a gang placed in a slot whose gangs were gone is stopped with the slot;
//! 3. a stop deferred as a thread goes idle does not park it;
//! 4. a failed `pthread_kill` does not keep later switches from signalling the thread;
//! 5. a thread parked when its gang is dropped (its `Member` forgotten) runs on, even when the
//!    wake-up of the drop comes before it sleeps.
//!
//! Run with `RUSTFLAGS="--cfg asat_inject" cargo test -p asat-gang --release --test inject`
//! (`scripts/test` does, with a target directory of its own). The gang domain is one CPU, so
//! the gangs of a test take turns on it; the schedulers have long quanta, so that the test's
//! `switch_now` calls are what moves them. Each test runs under a watchdog: a regression that hangs
//! shows as a failure. The tests install the stop signal's handler and share the injection
//! state, so they run one at a time, in a test process of their own.
#![cfg(asat_inject)]

use std::panic;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use asat_core::CpuSet;
use asat_gang::inject::{self, Point};
use asat_gang::{Gang, GangScheduler};

/// How long a test may take before the watchdog calls it hung.
const WATCHDOG: Duration = Duration::from_secs(30);
/// How long a step may take to happen (generous: the machine may be loaded).
const STEP: Duration = Duration::from_secs(5);
/// How long a test watches for a thread that runs when it must not.
const WATCH: Duration = Duration::from_millis(300);

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `body` on a thread of its own, after the other tests of this file (they share the
/// injection state) and with the injection state reset before and after. Fails if `body`
/// panics or has not returned within `limit` (the thread of a hung body is left behind).
fn bounded(limit: Duration, body: impl FnOnce() + Send + 'static) {
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
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + STEP;
    while !cond() {
        assert!(Instant::now() < deadline, "not within {STEP:?}: {what}");
        thread::sleep(Duration::from_micros(200));
    }
}

/// A scheduler whose gang domain is one CPU (the first one this thread may run on), with a
/// quantum as long as the stop timeout (the longest it may be): with 10 s, it never ends
/// during a test, and only the test's `switch_now` calls switch.
fn scheduler(stop_timeout: Duration, idle_grace: Option<Duration>) -> Arc<GangScheduler> {
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

/// A gang of one, in slot `slot`.
fn gang(sched: &GangScheduler, slot: usize) -> Arc<Gang> {
    let g = sched.gang(1).unwrap();
    assert_eq!(g.slot(), slot, "test set-up: gang in an unexpected slot");
    Arc::new(g)
}

#[derive(Default)]
struct Probe {
    /// Loop iterations done.
    iterations: AtomicU64,
    /// Iterations that found another slot (or none) running.
    violations: AtomicU64,
    stop: AtomicBool,
}

impl Probe {
    fn iterations(&self) -> u64 {
        self.iterations.load(Ordering::SeqCst)
    }
    fn violations(&self) -> u64 {
        self.violations.load(Ordering::SeqCst)
    }
}

struct Runner {
    probe: Arc<Probe>,
    handle: Option<JoinHandle<()>>,
}

impl Runner {
    fn is_finished(&self) -> bool {
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
fn checker(sched: &Arc<GangScheduler>, gang: &Arc<Gang>, target: bool) -> Runner {
    let probe = Arc::new(Probe::default());
    let (sched, gang, p) = (Arc::clone(sched), Arc::clone(gang), Arc::clone(&probe));
    let handle = thread::spawn(move || {
        if target {
            inject::target_this_thread();
        }
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
fn finish(sched: &GangScheduler, runners: Vec<Runner>) {
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
fn switch_to(sched: &GangScheduler, slot: usize) {
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

/// Race 1: a thread woken because its slot runs again is slow to clear `PARKED`, and its slot
/// is stopped again meanwhile. That stop sees the thread parked and sends it no signal; the
/// thread must see the stop after clearing `PARKED` and park again, not run beside the next
/// slot.
#[test]
fn a_woken_thread_whose_slot_was_stopped_again_parks_again() {
    bounded(WATCHDOG, || {
        let sched = scheduler(Duration::from_secs(10), None);
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let ta = checker(&sched, &a, true);
        wait_for("the thread of slot 0 runs", || ta.probe.iterations() > 0);
        let tb = checker(&sched, &b, false);
        switch_to(&sched, 1);
        wait_for("the thread of slot 1 runs", || tb.probe.iterations() > 0);
        // Slot 0 runs again: its thread wakes and pauses before clearing PARKED.
        inject::arm(Point::ParkWoken);
        switch_to(&sched, 0);
        assert!(
            inject::wait_hits(Point::ParkWoken, 1, STEP),
            "the thread of slot 0 never woke"
        );
        // Slot 0 is stopped again while its thread still looks parked.
        switch_to(&sched, 1);
        let before = ta.probe.iterations();
        inject::release(Point::ParkWoken);
        thread::sleep(WATCH);
        let ran_while_stopped = ta.probe.iterations() - before;
        // The thread runs when its slot does (the checks were live).
        switch_to(&sched, 0);
        wait_for("the thread of slot 0 runs again", || {
            ta.probe.iterations() > before
        });
        assert_eq!(
            ta.probe.violations(),
            0,
            "the thread of slot 0 ran while slot 1 did ({ran_while_stopped} iterations after \
             its slot was stopped): it did not park again; {:?}",
            sched.stats()
        );
        assert_eq!(tb.probe.violations(), 0, "{:?}", sched.stats());
        finish(&sched, vec![ta, tb]);
    });
}

/// Race 2: the running slot's gangs are gone, and before the scheduler stops the slot a new
/// gang is placed there, whose thread sees the slot running and runs. The scheduler must stop
/// that thread with the full protocol (a bare `run = 0` sends it no signal), before the next
/// slot runs.
#[test]
fn a_gang_placed_in_a_slot_whose_gangs_were_gone_is_stopped_with_it() {
    bounded(WATCHDOG, || {
        // A long idle grace: slot 1 without a runnable thread must not be switched away from
        // before its gang is dropped.
        let sched = scheduler(Duration::from_secs(10), Some(Duration::from_secs(10)));
        let (b, g1) = (gang(&sched, 0), gang(&sched, 1));
        let tb = checker(&sched, &b, false);
        wait_for("the thread of slot 0 runs", || tb.probe.iterations() > 0);
        let mut t1 = checker(&sched, &g1, false);
        switch_to(&sched, 1);
        wait_for("the thread of slot 1 runs", || t1.probe.iterations() > 0);
        // Slot 1's gang goes; the scheduler pauses as it finds the slot empty.
        inject::arm(Point::GangsGone);
        // It leaves while its slot runs (no switch: the slot must stay the current one).
        t1.probe.stop.store(true, Ordering::SeqCst);
        wait_for("the thread of slot 1 leaves", || t1.is_finished());
        t1.handle.take().unwrap().join().unwrap();
        assert_eq!(t1.probe.violations(), 0);
        drop(g1);
        assert!(
            inject::wait_hits(Point::GangsGone, 1, STEP),
            "the scheduler never found slot 1's gangs gone"
        );
        // A new gang gets the slot, and its thread runs: the slot still runs.
        let g2 = gang(&sched, 1);
        let t2 = checker(&sched, &g2, false);
        wait_for("the thread of the new gang runs", || {
            t2.probe.iterations() > 0
        });
        inject::release(Point::GangsGone);
        // The scheduler stops slot 1 and runs slot 0, the only other one with a runnable
        // thread.
        wait_for("slot 0 runs", || sched.current_slot() == Some(0));
        thread::sleep(WATCH);
        assert_eq!(
            t2.probe.violations(),
            0,
            "the new gang's thread ran on after its slot was stopped: it was not signalled; \
             {:?}",
            sched.stats()
        );
        assert_eq!(tb.probe.violations(), 0, "{:?}", sched.stats());
        // It runs when its slot does.
        let before = t2.probe.iterations();
        switch_to(&sched, 1);
        wait_for("the new gang's thread runs again", || {
            t2.probe.iterations() > before
        });
        finish(&sched, vec![tb, t2]);
    });
}

/// Race 3: a stop signal arrives while a thread goes idle (`blocking`), inside the section that
/// defers it, and is taken at the section's end, when the thread is already idle. It must not
/// park: its slot has no runnable thread left, so the scheduler need not run it again soon,
/// and the thread would never reach the blocking call (a runtime worker going idle would hang
/// `Runtime::drop` the same way).
#[test]
fn a_stop_deferred_as_a_thread_goes_idle_does_not_park_it() {
    bounded(WATCHDOG, || {
        let sched = scheduler(Duration::from_secs(10), None);
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let ready = Arc::new(AtomicBool::new(false));
        let go = Arc::new(AtomicBool::new(false));
        let blocked = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let ta = {
            let (a, ready, go, blocked, stop) = (
                Arc::clone(&a),
                Arc::clone(&ready),
                Arc::clone(&go),
                Arc::clone(&blocked),
                Arc::clone(&stop),
            );
            thread::spawn(move || {
                inject::target_this_thread();
                let _me = a.join(0).unwrap();
                ready.store(true, Ordering::SeqCst);
                while !go.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                asat_gang::blocking(|| blocked.store(true, Ordering::SeqCst));
                while !stop.load(Ordering::SeqCst) {
                    asat_gang::safe_point();
                }
            })
        };
        // Slot 0 runs (with a runnable thread, so it is not switched away from early).
        wait_for("the thread of slot 0 runs", || ready.load(Ordering::SeqCst));
        let tb = checker(&sched, &b, false);
        // Its thread pauses on its way into the idle state.
        inject::arm(Point::IdleEnter);
        go.store(true, Ordering::SeqCst);
        assert!(
            inject::wait_hits(Point::IdleEnter, 1, STEP),
            "the thread of slot 0 never went idle"
        );
        // Slot 0 is stopped now (as soon as slot 1's thread has joined): its thread is
        // signalled and defers the stop.
        let st = sched.stats();
        let (signals, deferred) = (st.signals, st.deferred_stops);
        wait_for("the thread of slot 0 is signalled", || {
            sched.switch_now();
            let t = Instant::now();
            while sched.stats().signals == signals && t.elapsed() < Duration::from_millis(200) {
                thread::sleep(Duration::from_micros(200));
            }
            sched.stats().signals > signals
        });
        wait_for("the stop is deferred", || {
            sched.stats().deferred_stops > deferred
        });
        inject::release(Point::IdleEnter);
        // The thread is idle when it takes the stop: it must go on into the blocking call.
        let t = Instant::now();
        while !blocked.load(Ordering::SeqCst) && t.elapsed() < STEP {
            thread::sleep(Duration::from_millis(1));
        }
        assert!(
            blocked.load(Ordering::SeqCst),
            "blocking() never ran its call: the stop deferred as the thread went idle parked \
             it; {:?}",
            sched.stats()
        );
        wait_for("slot 1 runs", || sched.current_slot() == Some(1));
        stop.store(true, Ordering::SeqCst);
        wait_for("the thread of slot 0 leaves", || {
            sched.switch_now();
            ta.is_finished()
        });
        ta.join().unwrap();
        assert_eq!(tb.probe.violations(), 0, "{:?}", sched.stats());
        finish(&sched, vec![tb]);
    });
}

/// Race 4: `pthread_kill` fails (a full queue of real-time signals). No signal is on its way,
/// so that switch waits out its stop timeout (a late stop); but later switches must signal the
/// thread again (a `SIGNALED` flag left set kept them from it: every one was late).
#[test]
fn a_failed_kill_does_not_keep_later_switches_from_signalling_the_thread() {
    bounded(WATCHDOG, || {
        // The stop timeout (and quantum) is short enough for the failed kill's late stop to be
        // quick and long enough for a loaded machine never to make a real stop that late.
        let sched = scheduler(Duration::from_millis(500), None);
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let ta = checker(&sched, &a, true);
        wait_for("the thread of slot 0 runs", || ta.probe.iterations() > 0);
        let tb = checker(&sched, &b, false);
        switch_to(&sched, 1);
        wait_for("the thread of slot 1 runs", || tb.probe.iterations() > 0);
        switch_to(&sched, 0);
        assert_eq!(sched.stats().late_stops, 0, "{:?}", sched.stats());
        // The next stop of slot 0 fails to signal its thread.
        inject::arm(Point::KillFails);
        sched.switch_now();
        assert!(
            inject::wait_hits(Point::KillFails, 1, STEP),
            "no kill of the thread of slot 0 failed"
        );
        wait_for("the failed kill's switch ends late", || {
            sched.stats().late_stops == 1
        });
        wait_for("slot 1 runs", || sched.current_slot() == Some(1));
        // Two more rounds: slot 0 is stopped twice more, by signals.
        for _ in 0..4 {
            let switches = sched.stats().switches;
            sched.switch_now();
            wait_for("a switch", || sched.stats().switches > switches);
        }
        let st = sched.stats();
        assert_eq!(
            st.late_stops, 1,
            "switches after the failed kill did not signal the thread (late stops): {st:?}"
        );
        assert_eq!(inject::hits(Point::KillFails), 1);
        assert_eq!(tb.probe.violations(), 0, "{st:?}");
        finish(&sched, vec![ta, tb]);
    });
}

/// A thread parked in a gang that is dropped while it is still a member (its `Member` was
/// forgotten) must run on: the slot never runs for it again. The drop wakes parked threads;
/// a thread between its last look at its cell and its sleep misses that wake-up, so parked
/// threads look at their cell again on their own (within 100 ms).
#[test]
fn a_thread_parked_when_its_gang_is_dropped_runs_on() {
    bounded(WATCHDOG, || {
        let sched = scheduler(Duration::from_secs(10), None);
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let orphan = Arc::new(Probe::default());
        let to = {
            let (a, p) = (Arc::clone(&a), Arc::clone(&orphan));
            thread::spawn(move || {
                inject::target_this_thread();
                std::mem::forget(a.join(0).unwrap());
                drop(a);
                while !p.stop.load(Ordering::SeqCst) {
                    p.iterations.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        wait_for("the thread of slot 0 runs", || orphan.iterations() > 0);
        let tb = checker(&sched, &b, false);
        // Slot 0 is stopped; its thread pauses just before it sleeps.
        inject::arm(Point::ParkWait);
        switch_to(&sched, 1);
        assert!(
            inject::wait_hits(Point::ParkWait, 1, STEP),
            "the thread of slot 0 never parked"
        );
        let before = orphan.iterations();
        // The gang goes, with the thread still its member; the wake-up finds no sleeper.
        drop(a);
        inject::release(Point::ParkWait);
        let t = Instant::now();
        while orphan.iterations() == before && t.elapsed() < STEP {
            thread::sleep(Duration::from_millis(1));
        }
        assert!(
            orphan.iterations() > before,
            "the thread of the dropped gang stayed parked; {:?}",
            sched.stats()
        );
        orphan.stop.store(true, Ordering::SeqCst);
        wait_for("the orphaned thread exits", || to.is_finished());
        to.join().unwrap();
        assert_eq!(tb.probe.violations(), 0, "{:?}", sched.stats());
        finish(&sched, vec![tb]);
    });
}
