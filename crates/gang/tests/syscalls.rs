//! System calls that `SA_RESTART` does not restart (`poll`, `nanosleep`, `epoll_wait`), made by
//! a gang thread while its slot is switched every millisecond or so: inside
//! [`asat_gang::blocking`] none returns `EINTR`; outside it they do, as the crate docs say
//! ("Blocking calls"). And asat's own waits (the runtime's barriers and idle sleep) carry on
//! through switches and stray signals. Installs the stop signal's handler (its own process).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use asat_core::{Runtime, Schedule};
use asat_gang::{GangScheduler, GangStats};

mod common;
use common::{bounded, errno, WATCHDOG};

/// Spins for `d` (a gang thread that computes between its calls, so its slot is runnable and
/// gets stopped while the thread is in and out of them).
fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// A scheduler with a 1 ms quantum over the whole domain, and a full-width gang of spinners
/// (no safe points: stopped by signal) so that the slots alternate. Runs `body` on a thread
/// that is member 0 of a gang of one, then stops the spinners. Returns the stats.
fn with_switching(body: impl FnOnce(&GangScheduler) + Send) -> GangStats {
    let sched = GangScheduler::builder()
        .quantum(Duration::from_millis(1))
        .build()
        .unwrap();
    let p = sched.cpus().len();
    let caller = sched.gang(1).unwrap();
    let busy = sched.gang(p).unwrap();
    assert_ne!(caller.slot(), busy.slot());
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        for i in 0..p {
            let (busy, stop) = (&busy, &stop);
            s.spawn(move || {
                let _me = busy.join(i).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let (sched, caller) = (&sched, &caller);
        s.spawn(move || {
            let _me = caller.join(0).unwrap();
            body(sched);
        })
        .join()
        .unwrap();
        stop.store(true, Ordering::Relaxed);
    });
    sched.stats()
}

/// The three calls, each waiting 1 ms, each returning 0 (timed out) or -1 with `errno`.
struct Calls {
    epfd: libc::c_int,
    fds: [libc::c_int; 2],
}

impl Calls {
    fn new() -> Self {
        let mut fds = [0; 2];
        // SAFETY: `fds` is an array of two ints for pipe(2) to fill; epoll_create1 and
        // epoll_ctl get valid descriptors and a valid event.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            let epfd = libc::epoll_create1(0);
            assert!(epfd >= 0);
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: 0,
            };
            assert_eq!(
                libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, fds[0], &mut ev),
                0
            );
            Calls { epfd, fds }
        }
    }

    fn poll(&self) -> i32 {
        let mut pfd = libc::pollfd {
            fd: self.fds[0],
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; nothing is written to the pipe, so it times out.
        unsafe { libc::poll(&mut pfd, 1, 1) }
    }

    fn nanosleep(&self) -> i32 {
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // SAFETY: a valid timespec; no remainder wanted.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) }
    }

    fn epoll_wait(&self) -> i32 {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: a valid epoll descriptor and room for one event.
        unsafe { libc::epoll_wait(self.epfd, &mut ev, 1, 1) }
    }
}

impl Drop for Calls {
    fn drop(&mut self) {
        // SAFETY: the descriptors are open and owned here.
        unsafe {
            libc::close(self.epfd);
            libc::close(self.fds[0]);
            libc::close(self.fds[1]);
        }
    }
}

#[test]
fn calls_inside_blocking_are_not_interrupted_by_switches() {
    bounded(WATCHDOG, || {
        let rounds = 150;
        let eintr = AtomicUsize::new(0);
        let other = AtomicUsize::new(0);
        let overlapped = AtomicUsize::new(0);
        let st = with_switching(|sched| {
            let calls = Calls::new();
            for _ in 0..rounds {
                for call in [Calls::poll, Calls::nanosleep, Calls::epoll_wait] {
                    let before = sched.stats().switches;
                    let (rc, e) = asat_gang::blocking(|| (call(&calls), errno()));
                    if sched.stats().switches != before {
                        overlapped.fetch_add(1, Ordering::Relaxed);
                    }
                    match (rc, e) {
                        (0, _) => {}
                        (-1, libc::EINTR) => _ = eintr.fetch_add(1, Ordering::Relaxed),
                        _ => _ = other.fetch_add(1, Ordering::Relaxed),
                    }
                    spin(Duration::from_micros(300));
                }
            }
        });
        let (eintr, other) = (eintr.into_inner(), other.into_inner());
        assert_eq!(other, 0, "a call failed otherwise than with EINTR");
        assert_eq!(
            eintr,
            0,
            "calls inside blocking() returned EINTR ({eintr} of {}); {st:?}",
            3 * rounds
        );
        // The calls were made while the gang's slot was being switched.
        assert!(
            overlapped.into_inner() >= 10,
            "too few switches during the calls; {st:?}"
        );
    });
}

#[test]
fn calls_outside_blocking_return_eintr_at_switches() {
    bounded(WATCHDOG, || {
        let counts: [AtomicUsize; 3] = Default::default();
        let st = with_switching(|_| {
            let calls = Calls::new();
            let deadline = Instant::now() + Duration::from_secs(30);
            // Until each call has been interrupted once (the documented behaviour).
            while counts.iter().any(|c| c.load(Ordering::Relaxed) == 0) {
                assert!(Instant::now() < deadline, "no EINTR within 30 s");
                for (i, call) in [Calls::poll, Calls::nanosleep, Calls::epoll_wait]
                    .iter()
                    .enumerate()
                {
                    match (call(&calls), errno()) {
                        (0, _) => {}
                        (-1, libc::EINTR) => _ = counts[i].fetch_add(1, Ordering::Relaxed),
                        (rc, e) => panic!("call {i} returned {rc}, errno {e}"),
                    }
                }
            }
        });
        assert!(st.signal_stops > 0, "{st:?}");
    });
}

#[test]
fn runtime_waits_carry_on_through_switches_and_stray_signals() {
    bounded(WATCHDOG, || {
        let sched = GangScheduler::builder()
            .quantum(Duration::from_millis(1))
            .build()
            .unwrap();
        let p = sched.cpus().len();
        let rt = Runtime::builder()
            .max_threads(p)
            .policy(sched.policy())
            .build()
            .unwrap();
        let busy = sched.gang(p).unwrap();
        let stop = AtomicBool::new(false);
        // The runtime's threads, as pthread_t values, for the stray signals.
        let threads: Vec<AtomicU64> = (0..p).map(|_| AtomicU64::new(0)).collect();
        rt.region(|team| {
            // SAFETY: pthread_self takes no arguments and cannot fail.
            let me = unsafe { libc::pthread_self() } as u64;
            threads[team.index()].store(me, Ordering::SeqCst);
        });
        let sent = Arc::new(AtomicU64::new(0));
        thread::scope(|s| {
            for i in 0..p {
                let (busy, stop) = (&busy, &stop);
                s.spawn(move || {
                    let _me = busy.join(i).unwrap();
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            // Stray signals of the stop signal's number at the runtime's threads, which are
            // then in barriers, idle sleep or their region's work.
            let (stop, threads, sent) = (&stop, &threads, Arc::clone(&sent));
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    for t in threads {
                        let t = t.load(Ordering::SeqCst) as libc::pthread_t;
                        // SAFETY: the runtime's threads live until `rt` is dropped, after
                        // this thread has stopped (end of the scope).
                        if unsafe { libc::pthread_kill(t, common::default_signal()) } == 0 {
                            sent.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    thread::sleep(Duration::from_micros(300));
                }
            });
            for round in 0..200u64 {
                let phase = AtomicUsize::new(0);
                rt.region(|team| {
                    for k in 0..5 {
                        assert_eq!(phase.load(Ordering::SeqCst) / p, k, "barrier {k} broken");
                        team.barrier();
                        phase.fetch_add(1, Ordering::SeqCst);
                        team.barrier();
                    }
                });
                let sum = rt.parallel_reduce(
                    0..1000,
                    Schedule::dynamic(7),
                    || 0u64,
                    |acc, r| acc + r.map(|i| i as u64).sum::<u64>(),
                    |a, b| a + b,
                );
                assert_eq!(sum, 499_500, "round {round}");
                if round % 20 == 0 {
                    // Idle workers sleep in the runtime's futex meanwhile.
                    thread::sleep(Duration::from_millis(3));
                }
            }
            stop.store(true, Ordering::Relaxed);
        });
        let st = sched.stats();
        assert!(sent.load(Ordering::Relaxed) > 0);
        assert!(st.switches > 0, "{st:?}");
        assert!(st.ignored_signals > 0, "{st:?}");
    });
}
