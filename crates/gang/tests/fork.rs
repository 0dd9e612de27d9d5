//! `fork()` from a gang thread: the child has that one thread and no scheduler thread, and must
//! run to completion as an ordinary process. The fork is made in the worst place: inside a
//! `preempt_off` section that a switch's stop signal has reached (a stop is pending, and the
//! slot is stopped in the child's copy of the scheduler). The child then does what a program
//! would: ends the section, calls safe points and `blocking`, tries its parent's scheduler, and
//! drops its membership, gangs and scheduler. It reports each step through a pipe; the parent
//! gives it a time limit, so a child that parks for good fails the test instead of hanging it.
//! (Its own file: it forks the test process.)

use std::io::Read;
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use asat_core::CpuSet;
use asat_gang::GangScheduler;

mod common;
use common::{bounded, wait_for, WATCHDOG};

/// How long the child may take.
const CHILD_LIMIT: Duration = Duration::from_secs(30);

/// The child's steps, in order; it writes each one's byte when the step is done.
const STEPS: [&str; 8] = [
    "the preempt_off section with a pending stop ended",
    "a safe point returned",
    "in_gang() was false",
    "blocking() ran its call",
    "the parent's scheduler refused a new gang",
    "the parent's gang refused a join",
    "the membership, the gangs and the scheduler were dropped",
    "a second scheduler was dropped",
];

/// In the child: writes step `i`'s byte to `fd`.
fn done(fd: libc::c_int, i: usize) {
    let b = [i as u8];
    // SAFETY: a valid 1-byte buffer and an open pipe.
    unsafe { libc::write(fd, b.as_ptr().cast(), 1) };
}

/// What the parent learns: the steps the child finished, and its exit status (None if it had
/// to be killed).
fn watch_child(pid: libc::pid_t, rd: libc::c_int) -> (Vec<u8>, Option<i32>) {
    let deadline = Instant::now() + CHILD_LIMIT;
    let mut status = 0;
    let exited = loop {
        // SAFETY: polls the child forked by this test.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        assert!(r >= 0, "waitpid failed");
        if r == pid {
            break true;
        }
        if Instant::now() > deadline {
            // SAFETY: the child is ours and still running.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            break false;
        }
        thread::sleep(Duration::from_millis(5));
    };
    // SAFETY: `rd` is the pipe's read end, owned here from now on; the write end is closed in
    // the parent and the child is gone, so reading ends.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(rd) };
    let mut steps = Vec::new();
    pipe.read_to_end(&mut steps).unwrap();
    let code = (exited && libc::WIFEXITED(status)).then(|| libc::WEXITSTATUS(status));
    (steps, code)
}

#[test]
fn a_child_forked_by_a_gang_thread_runs_as_an_ordinary_process() {
    bounded(WATCHDOG, || {
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        // The forking thread owns the scheduler (the test thread gets a reference only after
        // the fork, to drive it once the child is done), a gang, and a second scheduler, as a
        // program's main thread would: in the child, dropping them drops the last references.
        let forker = thread::spawn(move || {
            let cpu = CpuSet::of_current_thread().unwrap().iter().next().unwrap();
            let one: CpuSet = std::iter::once(cpu).collect();
            let sched = Arc::new(
                GangScheduler::builder()
                    .cpus(one)
                    .quantum(Duration::from_secs(10))
                    .build()
                    .unwrap(),
            );
            let lone = GangScheduler::builder().cpus(one).build().unwrap();
            let mine = sched.gang(1).unwrap();
            let other = Arc::new(sched.gang(1).unwrap());
            assert_eq!((mine.slot(), other.slot()), (0, 1));
            let me = mine.join(0).unwrap();
            let spinner = {
                let (other, stop) = (Arc::clone(&other), Arc::clone(&stop2));
                thread::spawn(move || {
                    let _me = other.join(0).unwrap();
                    while !stop.load(Ordering::SeqCst) {
                        asat_gang::safe_point();
                    }
                })
            };
            // A switch reaches this thread inside a section: its stop is deferred.
            let section = asat_gang::preempt_off();
            let deferred = sched.stats().deferred_stops;
            let t = Instant::now();
            let mut asked = t - Duration::from_secs(1);
            while sched.stats().deferred_stops == deferred {
                assert!(t.elapsed() < Duration::from_secs(9), "no stop was deferred");
                // Again and again: a request served before the other thread has joined finds
                // no other slot to run.
                if asked.elapsed() > Duration::from_millis(50) {
                    sched.switch_now();
                    asked = Instant::now();
                }
                std::hint::spin_loop();
            }
            let mut fds = [0; 2];
            // SAFETY: `fds` is an array of two ints for pipe(2) to fill.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            let [rd, wr] = fds;
            // SAFETY: the child touches only what this thread owns, the pipe, and
            // async-signal-safe or fork-safe calls (glibc's malloc is fork-safe; the child
            // uses no lock another thread may hold), and ends with `_exit`.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                // SAFETY: the read end belongs to the parent.
                unsafe { libc::close(rd) };
                drop(section);
                done(wr, 0);
                asat_gang::safe_point();
                done(wr, 1);
                if !asat_gang::in_gang() {
                    done(wr, 2);
                }
                let ran = asat_gang::blocking(|| true);
                if ran {
                    done(wr, 3);
                }
                if sched
                    .gang(1)
                    .is_err_and(|e| e.to_string().contains("fork()"))
                {
                    done(wr, 4);
                }
                if other
                    .join(0)
                    .is_err_and(|e| e.to_string().contains("fork()"))
                {
                    done(wr, 5);
                }
                drop(me);
                drop(mine);
                drop(other);
                drop(sched);
                done(wr, 6);
                drop(lone);
                done(wr, 7);
                // SAFETY: ends the child without running the parent's destructors.
                unsafe { libc::_exit(0) };
            }
            // SAFETY: the write end belongs to the child.
            unsafe { libc::close(wr) };
            tx.send((pid, rd, Arc::clone(&sched))).unwrap();
            // The parent's own stop, deferred above, is taken now: this thread parks until
            // slot 0 runs again (the test thread asks for switches once the child is done).
            drop(section);
            stop2.store(true, Ordering::SeqCst);
            wait_for("the other gang's thread leaves", || {
                sched.switch_now();
                spinner.is_finished()
            });
            spinner.join().unwrap();
            drop(me);
        });
        let (pid, rd, sched) = rx.recv().unwrap();
        let (steps, code) = watch_child(pid, rd);
        let next = steps.len();
        assert_eq!(
            steps,
            (0..next as u8).collect::<Vec<_>>(),
            "the child reported steps out of order"
        );
        assert!(
            next == STEPS.len() && code == Some(0),
            "the child did not run to completion (exit {code:?}); after '{}' it failed or hung \
             at: {}",
            next.checked_sub(1).map_or("fork", |i| STEPS[i]),
            STEPS.get(next).unwrap_or(&"its exit")
        );
        stop.store(true, Ordering::SeqCst);
        // The forking thread has taken its deferred stop and waits for its slot.
        wait_for("the forking thread is done", || {
            sched.switch_now();
            forker.is_finished()
        });
        forker.join().unwrap();
    });
}
