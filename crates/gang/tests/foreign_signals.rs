//! Signals of the stop signal's number that asat-gang did not send: a `pthread_kill`, `tgkill`
//! or `pthread_sigqueue` from another thread of the process, `kill` and `sigqueue` of the whole
//! process from inside it and from another process. The handler must ignore them all: no stop,
//! no deferred stop, no `EINTR` inside `blocking`, a parked thread stays parked.
//!
//! Its own harness (`harness = false` in Cargo.toml): `main` blocks the signal before any other
//! thread starts, so every thread but the gang threads (which unblock it) has it blocked, and
//! the kernel delivers the process-directed signals to a gang thread, where the handler sees
//! them. Under libtest's harness its main thread would take them.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

mod common;
use common::{default_signal, errno, gang, one_cpu_scheduler, switch_to, wait_for, Looper};

/// How many signals of each kind a test sends.
const EACH: u64 = 20;

/// A value that is not the scheduler's token (which is random and odd).
const NOT_THE_TOKEN: usize = 0x5eed_0000;

fn sigval(v: usize) -> libc::sigval {
    libc::sigval {
        sival_ptr: v as *mut libc::c_void,
    }
}

/// Sends the kinds of foreign signal aimed at one thread: `pthread_kill`, `tgkill`, and
/// `pthread_sigqueue` with a value that is not the token. Returns how many were sent.
fn at_thread(pthread: libc::pthread_t, tid: libc::pid_t) -> u64 {
    let sig = default_signal();
    for _ in 0..EACH {
        // SAFETY: the target thread is alive (it is stopped only after the signals are all
        // delivered); the signal is a valid real-time signal.
        unsafe {
            assert_eq!(libc::pthread_kill(pthread, sig), 0);
            assert_eq!(
                libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, sig),
                0,
                "tgkill: errno {}",
                errno()
            );
            assert_eq!(
                libc::pthread_sigqueue(pthread, sig, sigval(NOT_THE_TOKEN)),
                0
            );
        }
        thread::sleep(Duration::from_micros(500));
    }
    3 * EACH
}

/// Sends the kinds of foreign signal aimed at the whole process: `kill` and `sigqueue` from
/// this process, and the same from a forked child (another sender pid). Returns how many.
fn at_process() -> u64 {
    let sig = default_signal();
    // SAFETY: getpid cannot fail.
    let me = unsafe { libc::getpid() };
    let send = |to: libc::pid_t| {
        for _ in 0..EACH {
            // SAFETY: kill and sigqueue with a valid pid and real-time signal.
            unsafe {
                assert_eq!(libc::kill(to, sig), 0);
                assert_eq!(libc::sigqueue(to, sig, sigval(NOT_THE_TOKEN)), 0);
            }
            thread::sleep(Duration::from_micros(500));
        }
    };
    send(me);
    // SAFETY: the child only sends signals, sleeps and `_exit`s (no lock, no allocation).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: see above; `_exit` ends the child without running the parent's destructors.
        unsafe {
            for _ in 0..EACH {
                libc::kill(me, sig);
                libc::sigqueue(me, sig, sigval(NOT_THE_TOKEN));
                libc::usleep(500);
            }
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    4 * EACH
}

/// A running gang thread, inside `preempt_off` sections most of the time and inside
/// `blocking(poll)` some of the time, gets foreign signals of every kind: none stops it or
/// interrupts its call.
fn foreign_signals_are_ignored() {
    let sched = one_cpu_scheduler();
    let g = gang(&sched, 0);
    let turns = Arc::new(AtomicU64::new(0));
    let eintr = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let worker = {
        let (g, turns, eintr, stop) = (
            Arc::clone(&g),
            Arc::clone(&turns),
            Arc::clone(&eintr),
            Arc::clone(&stop),
        );
        thread::spawn(move || {
            common::set_blocked(default_signal(), false);
            let _me = g.join(0).unwrap();
            // SAFETY: pthread_self and gettid take no arguments and cannot fail.
            tx.send(unsafe { (libc::pthread_self(), libc::gettid()) })
                .unwrap();
            let mut x = 0u64;
            while !stop.load(Ordering::SeqCst) {
                {
                    let _section = asat_gang::preempt_off();
                    for _ in 0..20_000 {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
                    }
                }
                asat_gang::safe_point();
                let n = turns.fetch_add(1, Ordering::SeqCst);
                if n % 4 == 0 {
                    // SAFETY: poll with no descriptors only sleeps.
                    let rc = asat_gang::blocking(|| unsafe {
                        (libc::poll(std::ptr::null_mut(), 0, 2), errno())
                    });
                    if rc == (-1, libc::EINTR) {
                        eintr.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
        })
    };
    let (pthread, tid) = rx.recv().unwrap();
    wait_for("the gang thread runs", || turns.load(Ordering::SeqCst) > 0);
    let sent = at_thread(pthread, tid) + at_process();
    wait_for("every foreign signal is delivered and ignored", || {
        sched.stats().ignored_signals >= sent
    });
    let before = turns.load(Ordering::SeqCst);
    wait_for("the gang thread runs on", || {
        turns.load(Ordering::SeqCst) > before + 10
    });
    stop.store(true, Ordering::SeqCst);
    worker.join().unwrap();
    let st = sched.stats();
    assert_eq!(st.ignored_signals, sent, "{st:?}");
    assert_eq!(
        (st.signal_stops, st.deferred_stops, st.cooperative_stops),
        (0, 0, 0),
        "a foreign signal stopped the thread or was taken for a stop: {st:?}"
    );
    assert_eq!((st.signals, st.switches), (0, 0), "{st:?}");
    assert_eq!(
        eintr.load(Ordering::SeqCst),
        0,
        "a foreign signal interrupted a call inside blocking()"
    );
}

/// A gang thread parked because its slot is stopped gets foreign signals: it stays parked (no
/// stop is counted, it makes no progress) and runs when its slot does. It is parked in its
/// join, outside the signal handler (a thread parked inside the handler has the signal blocked
/// until its slot runs).
fn foreign_signals_leave_a_parked_thread_parked() {
    let sched = one_cpu_scheduler();
    let (a, b) = (gang(&sched, 0), gang(&sched, 1));
    // Slot 1 gets the first runnable thread, so it runs; slot 0's thread then parks as it
    // joins.
    let tb = Looper::start(&b, true);
    wait_for("the thread of slot 1 runs", || tb.turns() > 0);
    let ta = Looper::start(&a, true);
    wait_for("the thread of slot 0 parks in its join", || {
        let tid = ta.tid.load(Ordering::SeqCst);
        tid != 0 && common::thread_state(tid) == 'S'
    });
    let st0 = sched.stats();
    let pthread = ta.pthread.load(Ordering::SeqCst) as libc::pthread_t;
    let sent = at_thread(pthread, ta.tid.load(Ordering::SeqCst));
    wait_for("every foreign signal is delivered and ignored", || {
        sched.stats().ignored_signals >= st0.ignored_signals + sent
    });
    let st = sched.stats();
    assert_eq!(ta.turns(), 0, "the parked thread ran: {st:?}");
    assert_eq!(sched.current_slot(), Some(1));
    assert_eq!(st.ignored_signals, st0.ignored_signals + sent, "{st:?}");
    assert_eq!(
        (st.signal_stops, st.deferred_stops, st.cooperative_stops),
        (st0.signal_stops, st0.deferred_stops, st0.cooperative_stops),
        "a foreign signal was taken for a stop: {st:?}"
    );
    switch_to(&sched, 0);
    wait_for("the thread of slot 0 runs", || ta.turns() > 0);
    ta.finish(&sched);
    tb.finish(&sched);
}

fn main() {
    common::set_blocked(default_signal(), true);
    let tests: [(&str, fn()); 2] = [
        ("foreign_signals_are_ignored", foreign_signals_are_ignored),
        (
            "foreign_signals_leave_a_parked_thread_parked",
            foreign_signals_leave_a_parked_thread_parked,
        ),
    ];
    println!("\nrunning {} tests", tests.len());
    for (name, test) in tests {
        common::bounded(common::WATCHDOG, test);
        println!("test {name} ... ok");
    }
    println!("\ntest result: ok. {} passed", tests.len());
}
