//! Another handler installed for the stop signal after the scheduler was built: switches see it
//! and send no signal (counted in `GangStats::handler_replaced`), and creating or joining a gang,
//! or building a runtime with the policy, fails with an error that says which signal and what
//! to do, until asat-gang's handler is back. Installs signal handlers (its own process).

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use asat_core::Runtime;

mod common;
use common::{bounded, default_signal, gang, one_cpu_scheduler, switch_to, Looper, WATCHDOG};

static FOREIGN_CALLS: AtomicU64 = AtomicU64::new(0);

extern "C" fn foreign_handler(_: libc::c_int) {
    FOREIGN_CALLS.fetch_add(1, Ordering::SeqCst);
}

/// Installs `act` for the default stop signal; returns the action it replaced.
fn set_action(act: &libc::sigaction) -> libc::sigaction {
    // SAFETY: all-zeroes is a valid sigaction to be overwritten; `act` is a valid action
    // whose handler is async-signal-safe (an atomic increment) or asat-gang's own.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(default_signal(), act, &mut old), 0);
        old
    }
}

fn foreign_action() -> libc::sigaction {
    // SAFETY: all-zeroes is a valid sigaction (empty mask, no flags) before the handler is set.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = foreign_handler as *const () as usize;
    act
}

/// Checks that `e` is the error of a replaced handler.
fn is_replaced_error(e: &str) {
    let offset = asat_gang::GangSchedulerBuilder::DEFAULT_SIGNAL_OFFSET;
    assert!(
        e.contains(&format!(
            "stop signal SIGRTMIN+{offset} (signal {})",
            default_signal()
        )),
        "{e}"
    );
    assert!(e.contains("another handler was installed"), "{e}");
    assert!(e.contains("signal_offset or ASAT_GANG_SIGNAL"), "{e}");
}

/// Joins member 0 of `g` on a new thread (which waits for `g`'s slot to run: switches are
/// asked for meanwhile) and leaves; the error's text if joining failed.
fn join_elsewhere(sched: &asat_gang::GangScheduler, g: &asat_gang::Gang) -> Result<(), String> {
    thread::scope(|s| {
        let h = s.spawn(|| g.join(0).map(drop).map_err(|e| e.to_string()));
        common::wait_for("the joining thread is done", || {
            sched.switch_now();
            h.is_finished()
        });
        h.join().unwrap()
    })
}

/// Whether `sig` is pending for thread `tid` (its `SigPnd` mask in `/proc`).
fn signal_pending(tid: libc::pid_t, sig: libc::c_int) -> bool {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigPnd:"))
        .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
        .unwrap();
    mask & (1 << (sig - 1)) != 0
}

#[test]
fn a_handler_installed_over_the_schedulers_is_reported() {
    bounded(WATCHDOG, || {
        let sched = one_cpu_scheduler();
        let (a, b) = (gang(&sched, 0), gang(&sched, 1));
        let spare = gang(&sched, 2);
        // The gangs' threads call safe points: switches stop them without signals.
        let ta = Looper::start(&a, false);
        let tb = Looper::start(&b, false);
        switch_to(&sched, 1);
        switch_to(&sched, 0);
        assert_eq!(sched.stats().handler_replaced, 0);
        // A stop signal of those switches may still wait for its thread to run (a loaded
        // machine): delivered after the replacement below, it would run the other handler.
        for t in [&ta, &tb] {
            let tid = t.tid.load(Ordering::SeqCst);
            common::wait_for("no stop signal is pending", || {
                !signal_pending(tid, default_signal())
            });
        }

        let ours = set_action(&foreign_action());
        let st0 = sched.stats();
        switch_to(&sched, 1);
        let st = sched.stats();
        assert!(
            st.handler_replaced > st0.handler_replaced,
            "the switch did not see the replaced handler: {st:?}"
        );
        assert_eq!(st.signals, st0.signals, "a signal was sent: {st:?}");
        assert_eq!(
            FOREIGN_CALLS.load(Ordering::SeqCst),
            0,
            "asat-gang's signals ran the other handler"
        );
        is_replaced_error(&sched.gang(1).unwrap_err().to_string());
        is_replaced_error(&join_elsewhere(&sched, &spare).unwrap_err());
        let e = Runtime::builder()
            .max_threads(1)
            .policy(sched.policy())
            .build()
            .unwrap_err()
            .to_string();
        is_replaced_error(&e);

        // asat-gang's handler back: gangs are created and joined again, switches signal.
        set_action(&ours);
        drop(sched.gang(1).unwrap());
        join_elsewhere(&sched, &spare).unwrap();
        let replaced = sched.stats().handler_replaced;
        switch_to(&sched, 0);
        assert_eq!(sched.stats().handler_replaced, replaced);
        ta.finish(&sched);
        tb.finish(&sched);
    });
}
