//! A thread created with the stop signal blocked (a mask inherited from its creator) that
//! joins a gang must still be stopped by signal when its slot is switched out: joining
//! unblocks the signal. Without that, the thread ran on through every switch and each switch
//! waited `stop_timeout` for it. Installs the stop signal's handler (its own process).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

mod common;
use common::{bounded, default_signal, gang, one_cpu_scheduler, set_blocked, switch_to};
use common::{thread_state, wait_for, WATCHDOG};

#[test]
fn a_member_created_with_the_signal_blocked_is_stopped_by_signal() {
    bounded(WATCHDOG, || {
        let sched = one_cpu_scheduler();
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let turns = Arc::new(AtomicU64::new(0));
        let tid = Arc::new(AtomicI32::new(0));
        let done = Arc::new(AtomicBool::new(false));
        // Blocked here, so the new thread inherits the blocked signal.
        set_blocked(default_signal(), true);
        let spinner = {
            let (a, turns, tid, done) = (
                Arc::clone(&a),
                Arc::clone(&turns),
                Arc::clone(&tid),
                Arc::clone(&done),
            );
            thread::spawn(move || {
                // SAFETY: gettid takes no arguments and cannot fail.
                tid.store(unsafe { libc::gettid() }, Ordering::SeqCst);
                let _me = a.join(0).unwrap();
                // No safe points: only the signal can stop this loop.
                while !done.load(Ordering::SeqCst) {
                    turns.fetch_add(1, Ordering::SeqCst);
                    std::hint::spin_loop();
                }
            })
        };
        set_blocked(default_signal(), false);
        wait_for("the member of slot 0 runs", || {
            turns.load(Ordering::SeqCst) > 1000
        });
        let other = thread::spawn({
            let b = Arc::clone(&b);
            let done = Arc::clone(&done);
            move || {
                let _me = b.join(0).unwrap();
                while !done.load(Ordering::SeqCst) {
                    asat_gang::safe_point();
                }
            }
        });
        switch_to(&sched, 1);
        let t = tid.load(Ordering::SeqCst);
        wait_for(
            "the member of the stopped slot sleeps in the stop handler",
            || thread_state(t) == 'S',
        );
        let st = sched.stats();
        assert!(st.signal_stops > 0, "{st:?}");
        done.store(true, Ordering::SeqCst);
        switch_to(&sched, 0);
        spinner.join().unwrap();
        other.join().unwrap();
    });
}
