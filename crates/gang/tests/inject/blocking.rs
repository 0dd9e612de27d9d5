//! Races 6 and 7, around blocking calls (see `main.rs`).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use asat_gang::inject::{self, Point};

use super::{
    bounded, checker, finish, gang, scheduler, scheduler_on, wait_for, wait_parked, STEP, WATCH,
    WATCHDOG,
};

/// Race 6: a thread whose `Member` was forgotten leaves a `blocking` call just as its gang is
/// dropped: it has decided to become runnable again when the drop marks it orphaned (idle, never
/// to be stopped again). Its cell must stay idle: a thread that cleared the mark would be
/// signalled at every stop of its slot, where another gang now runs, and counted runnable there.
/// The gang domain is two CPUs, so that the slot holds that other gang beside the orphan.
#[test]
fn an_orphaned_thread_leaving_a_blocking_call_stays_idle() {
    bounded(WATCHDOG, || {
        let Some(sched) = scheduler_on(2, Duration::from_secs(10)) else {
            eprintln!("skipped: this race needs a gang domain of two CPUs");
            return;
        };
        // Slot 0: the orphan-to-be (column 0) and gang b (column 1); slot 1: gang c.
        let (o, b, c) = (gang(&sched, 0), gang(&sched, 0), gang(&sched, 1));
        assert_eq!((o.columns(), b.columns()), (&[0][..], &[1][..]));
        let tb = checker(&sched, &b, false);
        wait_for("the thread of gang b runs", || tb.probe.iterations() > 0);
        let tc = checker(&sched, &c, false);
        wait_parked(&tc);
        let (in_call, leave_call, left, stop) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let to = {
            let (o, in_call, leave_call, left, stop) = (
                Arc::clone(&o),
                Arc::clone(&in_call),
                Arc::clone(&leave_call),
                Arc::clone(&left),
                Arc::clone(&stop),
            );
            thread::spawn(move || {
                inject::target_this_thread();
                std::mem::forget(o.join(0).unwrap());
                drop(o);
                asat_gang::blocking(|| {
                    in_call.store(true, Ordering::SeqCst);
                    while !leave_call.load(Ordering::SeqCst) {
                        thread::sleep(Duration::from_millis(1));
                    }
                });
                left.store(true, Ordering::SeqCst);
                // No safe points: only a signal would stop it.
                while !stop.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
            })
        };
        wait_for("the orphan-to-be is inside its blocking call", || {
            in_call.load(Ordering::SeqCst)
        });
        // It leaves the call and pauses before it changes its cell; its gang is dropped then.
        inject::arm(Point::IdleLeave);
        leave_call.store(true, Ordering::SeqCst);
        assert!(
            inject::wait_hits(Point::IdleLeave, 1, STEP),
            "the thread never left its blocking call"
        );
        drop(o);
        inject::release(Point::IdleLeave);
        wait_for("the orphaned thread runs on", || {
            left.load(Ordering::SeqCst)
        });
        thread::sleep(WATCH);
        // One switch from slot 0 to slot 1 (one request: slot 1 has a runnable thread, and the
        // 10 s quantum does not end): it signals gang b's thread, and the orphan must not be.
        let before = sched.stats();
        sched.switch_now();
        // A runnable orphan is signalled, but never parks: the switch would wait for it
        // until its 10 s stop timeout.
        wait_for(
            "slot 1 runs (the switch is not waiting for the orphan to stop)",
            || sched.current_slot() == Some(1),
        );
        let st = sched.stats();
        assert_eq!(st.switches, before.switches + 1, "{st:?}");
        assert_eq!(
            st.signals - before.signals,
            1,
            "the switch signalled more threads than gang b's: the orphan was runnable again; \
             {st:?}"
        );
        stop.store(true, Ordering::SeqCst);
        to.join().unwrap();
        finish(&sched, vec![tb, tc]);
    });
}

/// Race 7: a switch marks a running thread `SIGNALED` and, before it sends the signal, the
/// thread enters a `blocking` call (it is idle from then on, but the signal is already decided);
/// the signal arrives while the thread is inside the call. The call must not return `EINTR`:
/// the signal waits until the call is over.
#[test]
fn a_stop_signal_sent_as_its_thread_enters_a_blocking_call_does_not_interrupt_it() {
    bounded(WATCHDOG, || {
        let sched = scheduler(Duration::from_secs(10), None);
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let (ready, go, in_call, stop) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let result = Arc::new(Mutex::new(None));
        let tid = Arc::new(AtomicI32::new(0));
        let ta = {
            let (a, ready, go, in_call, stop, result, tid) = (
                Arc::clone(&a),
                Arc::clone(&ready),
                Arc::clone(&go),
                Arc::clone(&in_call),
                Arc::clone(&stop),
                Arc::clone(&result),
                Arc::clone(&tid),
            );
            thread::spawn(move || {
                inject::target_this_thread();
                let _me = a.join(0).unwrap();
                // SAFETY: gettid takes no arguments and cannot fail.
                tid.store(unsafe { libc::gettid() }, Ordering::SeqCst);
                ready.store(true, Ordering::SeqCst);
                // No safe points: only the signal stops it.
                while !go.load(Ordering::SeqCst) {
                    std::hint::spin_loop();
                }
                asat_gang::blocking(|| {
                    in_call.store(true, Ordering::SeqCst);
                    // SAFETY: poll with no descriptors only sleeps, here for 1 s.
                    let rc = unsafe { libc::poll(std::ptr::null_mut(), 0, 1000) };
                    let errno = std::io::Error::last_os_error().raw_os_error();
                    // Stored inside the call: on its way out the thread parks (its slot is
                    // stopped by then).
                    *result.lock().unwrap() = Some((rc, errno));
                });
                while !stop.load(Ordering::SeqCst) {
                    asat_gang::safe_point();
                }
            })
        };
        wait_for("the thread of slot 0 runs", || ready.load(Ordering::SeqCst));
        let tb = checker(&sched, &b, false);
        wait_parked(&tb);
        // The switch marks the thread of slot 0 and pauses before it sends the signal.
        inject::arm(Point::BeforeKill);
        sched.switch_now();
        assert!(
            inject::wait_hits(Point::BeforeKill, 1, STEP),
            "the switch never came to signal the thread of slot 0"
        );
        go.store(true, Ordering::SeqCst);
        wait_for("the thread is inside its call", || {
            in_call.load(Ordering::SeqCst)
        });
        // Let it get into poll, then send the signal.
        thread::sleep(Duration::from_millis(100));
        inject::release(Point::BeforeKill);
        wait_for("the call returns", || result.lock().unwrap().is_some());
        let (rc, errno) = result.lock().unwrap().unwrap();
        assert_eq!(
            rc,
            0,
            "poll inside blocking() returned {rc} (errno {errno:?}): the stop signal interrupted \
             it; {:?}",
            sched.stats()
        );
        // The switch counted the thread stopped (idle) and went on; the thread took its stop
        // when the call returned.
        wait_for("slot 1 runs", || sched.current_slot() == Some(1));
        assert_eq!(sched.stats().late_stops, 0, "{:?}", sched.stats());
        let t = tid.load(Ordering::SeqCst);
        wait_for("the thread of slot 0 parks after its call", || {
            super::thread_state(t) == 'S'
        });
        stop.store(true, Ordering::SeqCst);
        // Switches (the slots alternate) until it has run and left.
        wait_for("the thread of slot 0 leaves", || {
            sched.switch_now();
            ta.is_finished()
        });
        ta.join().unwrap();
        finish(&sched, vec![tb]);
    });
}
