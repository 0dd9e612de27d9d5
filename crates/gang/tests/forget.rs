//! A gang dropped while a thread is still its member (the thread's `Member` was forgotten with
//! `mem::forget`): the thread must not stay parked on a slot that never runs for it again, and
//! its place is kept for it, so a new gang's member joins elsewhere. Installs signal handlers
//! (this file is its own test process).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use asat_gang::GangScheduler;

#[test]
fn a_forgotten_member_of_a_dropped_gang_runs_on() {
    let sched = GangScheduler::builder()
        .quantum(Duration::from_millis(1))
        .build()
        .unwrap();
    let p = sched.cpus().len();
    // Another gang keeps the rotation going, with runnable threads of its own.
    let busy = sched.gang(p).unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    let stop = AtomicBool::new(false);
    let stop = &stop;
    std::thread::scope(|s| {
        for i in 0..p {
            let busy = &busy;
            s.spawn(move || {
                let _me = busy.join(i).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            });
        }
        let sched = &sched;
        s.spawn(move || {
            let g = sched.gang(1).unwrap();
            std::mem::forget(g.join(0).unwrap());
            drop(g);
            // Work that needs the CPU for a while: with the thread parked for good, it never
            // ends.
            let t = Instant::now();
            let mut spins = 0u64;
            while t.elapsed() < Duration::from_millis(300) {
                spins += 1;
                std::hint::spin_loop();
            }
            // blocking() and safe points of an orphaned thread do nothing to it.
            asat_gang::blocking(|| std::thread::sleep(Duration::from_millis(5)));
            asat_gang::safe_point();
            // A new gang does not get the place the thread still runs in: its member joins.
            let g2 = sched.gang(1).unwrap();
            let joined = std::thread::scope(|s2| {
                s2.spawn(|| g2.join(0).map(|_| ()).map_err(|e| e.to_string()))
                    .join()
                    .unwrap()
            });
            let _ = done_tx.send((spins, joined));
        });
        let got = done_rx.recv_timeout(Duration::from_secs(30));
        stop.store(true, Ordering::Relaxed);
        let (spins, joined) = got.expect("the orphaned thread stayed parked");
        assert!(spins > 0);
        joined.unwrap();
    });
}
