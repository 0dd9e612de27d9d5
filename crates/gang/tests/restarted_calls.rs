//! Gang threads inside blocking system calls survive repeated stops: the handler is installed
//! with `SA_RESTART`, so a `read` interrupted by a stop is restarted, and `sleep` (which the
//! kernel does not restart) is resumed by std with the time left. Installs the gang stop
//! signal's handler (this file is its own test process).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use asat_gang::GangScheduler;

fn pipe() -> (libc::c_int, libc::c_int) {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

/// Reads exactly `buf.len()` bytes with raw `read(2)` calls, failing on any error (EINTR
/// included: with SA_RESTART there must be none).
fn read_all(fd: libc::c_int, buf: &mut [u8]) {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a valid writable buffer of the length passed.
        let n = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        assert!(
            n > 0,
            "read returned {n}: {}",
            std::io::Error::last_os_error()
        );
        done += n as usize;
    }
}

#[test]
fn read_on_a_pipe_and_sleep_survive_repeated_switches() {
    let sched = GangScheduler::builder()
        .quantum(Duration::from_millis(2))
        .build()
        .unwrap();
    let p = sched.cpus().len();
    // Two full-width gangs: they take a slot each and alternate every 2 ms.
    let a = sched.gang(p).unwrap();
    let b = sched.gang(p).unwrap();
    assert_ne!(a.slot(), b.slot());
    let (rd, wr) = pipe();
    let messages = 60u32;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // Writer: not a gang thread.
        s.spawn(move || {
            for i in 0..messages {
                std::thread::sleep(Duration::from_millis(7));
                let bytes = i.to_le_bytes();
                // SAFETY: `bytes` is a valid 4-byte buffer; writes of 4 bytes to a pipe are atomic.
                let n = unsafe { libc::write(wr, bytes.as_ptr().cast(), 4) };
                assert_eq!(n, 4);
            }
        });
        // Gang a, member 0: blocked in read most of the time, not marked as blocking, so it is
        // signalled at each of its slot's stops.
        let a = &a;
        let reader = s.spawn(move || {
            let _me = a.join(0).unwrap();
            for i in 0..messages {
                let mut buf = [0u8; 4];
                read_all(rd, &mut buf);
                assert_eq!(
                    u32::from_le_bytes(buf),
                    i,
                    "messages arrive in order, intact"
                );
            }
        });
        // Gang a, another member (or the same CPU's next member if p == 1): sleeps.
        let sleeper = (p > 1).then(|| {
            s.spawn(move || {
                let _me = a.join(1).unwrap();
                for _ in 0..40 {
                    let want = Duration::from_millis(3);
                    let t = Instant::now();
                    std::thread::sleep(want);
                    assert!(t.elapsed() >= want, "sleep returned early");
                }
            })
        });
        // Gang b: busy, so a's slot keeps being stopped and resumed.
        let b = &b;
        let stop = &stop;
        let spinners: Vec<_> = (0..p)
            .map(|i| {
                s.spawn(move || {
                    let _me = b.join(i).unwrap();
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        reader.join().unwrap();
        if let Some(h) = sleeper {
            h.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        for h in spinners {
            h.join().unwrap();
        }
    });
    let st = sched.stats();
    assert!(st.switches >= 20, "{st:?}");
    assert!(
        st.signal_stops >= 10,
        "threads were stopped by signal: {st:?}"
    );
    // SAFETY: both descriptors are open and owned by this test.
    unsafe {
        libc::close(rd);
        libc::close(wr);
    }
}

#[test]
fn a_thread_marked_blocking_lets_its_gang_be_switched_away_early() {
    let sched = GangScheduler::builder()
        .quantum(Duration::from_millis(50))
        .build()
        .unwrap();
    let a = sched.gang(1).unwrap();
    let b = sched.gang(sched.cpus().len()).unwrap();
    let (rd, wr) = pipe();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let a = &a;
        let reader = s.spawn(move || {
            let _me = a.join(0).unwrap();
            for _ in 0..10 {
                let mut buf = [0u8; 1];
                asat_gang::blocking(|| read_all(rd, &mut buf));
            }
        });
        let b = &b;
        let done = &done;
        let spinner = s.spawn(move || {
            let _me = b.join(0).unwrap();
            while !done.load(Ordering::Relaxed) {
                asat_gang::safe_point();
            }
        });
        for _ in 0..10 {
            std::thread::sleep(Duration::from_millis(20));
            // SAFETY: a valid 1-byte buffer.
            assert_eq!(unsafe { libc::write(wr, [7u8].as_ptr().cast(), 1) }, 1);
        }
        reader.join().unwrap();
        done.store(true, Ordering::Relaxed);
        spinner.join().unwrap();
    });
    let st = sched.stats();
    assert!(
        st.early_switches >= 1,
        "a slot whose only thread is blocked is left before its 50 ms quantum ends: {st:?}"
    );
    // SAFETY: both descriptors are open and owned by this test.
    unsafe {
        libc::close(rd);
        libc::close(wr);
    }
}
