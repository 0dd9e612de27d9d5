//! Scopes and joins called from several threads at once on one pool: a caller that holds the
//! pool's index 0 steals, while it waits, jobs of the others' scopes, whose spawns land on its
//! own queue; its call must leave none of them there when it ends.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use asat_core::{Fixed, Runtime};
use common::watchdog;

/// Long enough for these calls on a loaded machine; reached only by a hang.
const LIMIT: Duration = Duration::from_secs(120);

/// A little work, kept from being optimised away.
fn spin(n: u64) -> u64 {
    (0..n).fold(0, |x, i| x.wrapping_add(std::hint::black_box(i)))
}

/// Spawns three jobs per level down to `depth`, each leaf counting a hit: jobs spawned from
/// jobs, on whichever thread runs their parent.
fn tree<'s>(s: &asat_core::Scope<'s>, depth: u32, hits: &'s AtomicUsize) {
    if depth == 0 {
        spin(2000);
        hits.fetch_add(1, Ordering::Relaxed);
        return;
    }
    for _ in 0..3 {
        s.spawn(move |s| tree(s, depth - 1, hits));
    }
}

#[test]
fn a_call_ends_with_no_task_of_another_call_left_on_its_queue() {
    watchdog(LIMIT, || {
        let rt = Runtime::builder()
            .max_threads(4)
            .policy(Fixed::new(4))
            .build()
            .unwrap();
        let stop = AtomicBool::new(false);
        let until = Instant::now() + Duration::from_millis(500);
        thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    while !stop.load(Ordering::Relaxed) {
                        let hits = AtomicUsize::new(0);
                        rt.scope(|s| tree(s, 5, &hits));
                        assert_eq!(hits.into_inner(), 243);
                    }
                });
            }
            for _ in 0..2 {
                s.spawn(|| {
                    while Instant::now() < until {
                        let (a, b) = rt.join(|| spin(20_000), || spin(20_000));
                        assert_eq!(a, b);
                        // A call that holds index 0 starts with an empty queue.
                        let (index, pending) = rt.scope(|_| {
                            (
                                rt.current_thread_index(),
                                rt.current_thread_has_pending_tasks(),
                            )
                        });
                        if index == Some(0) {
                            assert_eq!(pending, Some(false), "a task was left on index 0");
                        }
                    }
                });
            }
            while Instant::now() < until {
                thread::sleep(Duration::from_millis(10));
            }
            stop.store(true, Ordering::Relaxed);
        });
    });
}
