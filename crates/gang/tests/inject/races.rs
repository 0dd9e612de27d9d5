//! Races 1-5 of the switching protocol (see `main.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use asat_gang::inject::{self, Point};

use super::{
    bounded, checker, finish, gang, scheduler, switch_to, wait_for, Probe, STEP, WATCH, WATCHDOG,
};

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

/// Race 4: sending the stop signal fails (a full queue of real-time signals). No signal is on
/// its way, so that switch waits out its stop timeout (a late stop); but later switches must
/// signal the thread again (a `SIGNALED` flag left set kept them from it: every one was late).
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

/// Race 5: a thread parked in a gang that is dropped while it is still a member (its `Member`
/// was forgotten) must run on: the slot never runs for it again. The drop's wake-up comes
/// while the thread is between its last look at its cell and its sleep; the drop moved the
/// slot's epoch, so the sleep returns at once (parked threads have no periodic wake-up to
/// cover a lost one).
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
