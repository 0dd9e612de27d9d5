//! `preempt_off` sections defer stops to their end; a signal already handled by someone else is
//! refused. Installs signal handlers (this file is its own test process).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use asat_gang::GangScheduler;

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

#[test]
fn stops_inside_preempt_off_sections_are_deferred_to_their_end() {
    let sched = GangScheduler::builder()
        .quantum(Duration::from_millis(1))
        .build()
        .unwrap();
    let p = sched.cpus().len();
    let a = sched.gang(p).unwrap();
    let b = sched.gang(p).unwrap();
    let stop = AtomicBool::new(false);
    // Longest time a section took, and the number of sections run.
    let sections = AtomicU64::new(0);
    std::thread::scope(|s| {
        for i in 0..p {
            let (a, b, stop, sections) = (&a, &b, &stop, &sections);
            s.spawn(move || {
                let _me = a.join(i).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    let _outer = asat_gang::preempt_off();
                    {
                        let _inner = asat_gang::preempt_off();
                        spin(Duration::from_micros(1500));
                    }
                    // Still inside the outer section: no stop here either.
                    spin(Duration::from_micros(500));
                    sections.fetch_add(1, Ordering::Relaxed);
                }
            });
            s.spawn(move || {
                let _me = b.join(i).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        std::thread::sleep(Duration::from_millis(600));
        stop.store(true, Ordering::Relaxed);
    });
    let st = sched.stats();
    assert!(sections.load(Ordering::Relaxed) > 10, "{st:?}");
    assert!(
        st.deferred_stops >= 5,
        "stops that hit a section were deferred: {st:?}"
    );
    assert_eq!(st.late_stops, 0, "{st:?}");
    // Outside a gang a section only counts nesting.
    assert!(!asat_gang::in_gang());
    drop(asat_gang::preempt_off());
    asat_gang::safe_point();
}

extern "C" fn other_handler(_: libc::c_int) {}

#[test]
fn a_signal_with_another_handler_is_refused() {
    let offset = 9;
    let sig = libc::SIGRTMIN() + offset as libc::c_int;
    // SAFETY: installing a trivial, async-signal-safe handler for a real-time signal nobody
    // else in this test process uses.
    unsafe { libc::signal(sig, other_handler as *const () as libc::sighandler_t) };
    let e = GangScheduler::builder()
        .signal_offset(offset)
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("stop signal SIGRTMIN+9:"), "{e}");
    assert!(e.contains("signal_offset"), "{e}");
}

#[test]
fn a_thread_that_exits_still_joined_leaves_its_gang() {
    let sched = GangScheduler::builder()
        .quantum(Duration::from_millis(1))
        .build()
        .unwrap();
    let p = sched.cpus().len();
    let a = sched.gang(p).unwrap();
    let b = sched.gang(p).unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (b, stop) = (&b, &stop);
        s.spawn(move || {
            let _me = b.join(0).unwrap();
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        for _ in 0..20 {
            let a = &a;
            s.spawn(move || {
                let me = a.join(0).unwrap();
                spin(Duration::from_millis(2));
                // The membership is never dropped: the thread's exit must end it.
                std::mem::forget(me);
            })
            .join()
            .unwrap();
        }
        stop.store(true, Ordering::Relaxed);
    });
    // Member 0 is free again: each of the 20 threads could join it, and so can this one.
    drop(a.join(0).unwrap());
    assert!(sched.stats().switches > 0);
}
