//! A gang dropped while a thread is still its member (the thread's `Member` was forgotten):
//! the thread's cell stays reserved, given to no new gang, until the thread leaves; and a
//! parked thread sleeps until something happens for it (no periodic wake-up, which the
//! orphaning of a parked thread once needed). Installs the stop signal's handler (its own
//! process).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

mod common;
use common::{bounded, gang, one_cpu_scheduler, switch_to, voluntary_switches, wait_for, Looper};
use common::{thread_state, WATCHDOG};

/// Joins member 0 of `g` on a new thread, which then leaves at once; the error's text if
/// joining failed.
fn join_elsewhere(g: &asat_gang::Gang) -> Result<(), String> {
    thread::scope(|s| {
        s.spawn(|| g.join(0).map(drop).map_err(|e| e.to_string()))
            .join()
            .unwrap()
    })
}

#[test]
fn an_orphaned_cell_stays_reserved_until_its_thread_leaves() {
    bounded(WATCHDOG, || {
        // One CPU: the orphan's cell is the whole of slot 0.
        let sched = one_cpu_scheduler();
        let g = gang(&sched, 0);
        let (tx, rx) = mpsc::channel();
        let leave = Arc::new(AtomicBool::new(false));
        let orphan = {
            let (g, leave) = (Arc::clone(&g), Arc::clone(&leave));
            thread::spawn(move || {
                std::mem::forget(g.join(0).unwrap());
                drop(g);
                tx.send(()).unwrap();
                // It runs on in the cell (its gang is dropped meanwhile), then exits, which
                // ends its membership.
                while !leave.load(Ordering::SeqCst) {
                    asat_gang::safe_point();
                }
            })
        };
        rx.recv().unwrap();
        drop(g);
        assert!(
            sched.used_slots().is_empty(),
            "a reserved cell is no gang: {:?}",
            sched.used_slots()
        );
        // A new gang does not get the cell while the thread runs in it, and its member joins.
        let n = sched.gang(1).unwrap();
        assert_ne!(
            n.slot(),
            0,
            "a new gang was placed on the cell of a thread that still runs there"
        );
        join_elsewhere(&n).unwrap();
        assert_eq!(sched.used_slots(), vec![n.slot()]);
        // Once the thread has left, the cell is free again.
        leave.store(true, Ordering::SeqCst);
        orphan.join().unwrap();
        let m = sched.gang(1).unwrap();
        assert_eq!(m.slot(), 0, "the freed cell was not reused");
        join_elsewhere(&m).unwrap();
    });
}

#[test]
fn a_parked_thread_sleeps_until_its_slot_runs() {
    bounded(WATCHDOG, || {
        let sched = one_cpu_scheduler();
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let ta = Looper::start(&a, false);
        wait_for("the thread of slot 0 runs", || ta.turns() > 0);
        let tb = Looper::start(&b, false);
        switch_to(&sched, 1);
        let tid = ta.tid.load(Ordering::SeqCst);
        let turns = ta.turns();
        wait_for("the thread of slot 0 sleeps", || thread_state(tid) == 'S');
        let before = voluntary_switches(tid);
        thread::sleep(Duration::from_secs(1));
        let woken = voluntary_switches(tid) - before;
        assert_eq!(ta.turns(), turns);
        assert!(
            woken <= 1,
            "the parked thread woke {woken} times in 1 s while its slot did not run"
        );
        switch_to(&sched, 0);
        wait_for("the thread of slot 0 runs again", || ta.turns() > turns);
        ta.finish(&sched);
        tb.finish(&sched);
    });
}

/// The orphaning wakes a parked thread: it runs on at once.
#[test]
fn a_thread_parked_when_its_gang_is_dropped_runs_on() {
    bounded(WATCHDOG, || {
        let sched = one_cpu_scheduler();
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let tid = Arc::new(AtomicI32::new(0));
        let turns = Arc::new(AtomicI32::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let orphan = {
            let (a, tid, turns, stop) = (
                Arc::clone(&a),
                Arc::clone(&tid),
                Arc::clone(&turns),
                Arc::clone(&stop),
            );
            thread::spawn(move || {
                std::mem::forget(a.join(0).unwrap());
                drop(a);
                // SAFETY: gettid takes no arguments and cannot fail.
                tid.store(unsafe { libc::gettid() }, Ordering::SeqCst);
                while !stop.load(Ordering::SeqCst) {
                    asat_gang::safe_point();
                    turns.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        wait_for("the thread of slot 0 runs", || {
            turns.load(Ordering::SeqCst) > 0
        });
        let tb = Looper::start(&b, false);
        switch_to(&sched, 1);
        let t = tid.load(Ordering::SeqCst);
        wait_for("the thread of slot 0 sleeps", || thread_state(t) == 'S');
        let before = turns.load(Ordering::SeqCst);
        drop(a);
        wait_for("the thread of the dropped gang runs on", || {
            turns.load(Ordering::SeqCst) > before
        });
        assert_eq!(sched.current_slot(), Some(1), "slot 1 ran all along");
        stop.store(true, Ordering::SeqCst);
        orphan.join().unwrap();
        tb.finish(&sched);
    });
}
