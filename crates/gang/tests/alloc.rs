//! Heavy allocation in gang work under a 1 ms quantum: threads are stopped by signal while
//! inside `malloc`/`free` (holding the allocator's locks) thousands of times, and nothing
//! deadlocks, because the scheduler thread never allocates or locks while it switches (see the
//! `switch` module docs). A watchdog turns a deadlock into a failure instead of a hang.
//! Installs the gang stop signal's handler (this file is its own test process).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use asat_gang::GangScheduler;

#[test]
fn heavy_allocation_under_a_1ms_quantum_does_not_deadlock() {
    // A stop timeout far above any scheduling delay of a loaded machine (the default, 500 ms,
    // was once exceeded at load 4 on 2 vCPUs): a late stop here means a thread that could not
    // stop, not a slow one.
    let sched = GangScheduler::builder()
        .quantum(Duration::from_millis(1))
        .stop_timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let p = sched.cpus().len();
    let gangs: Vec<_> = (0..3).map(|_| sched.gang(p).unwrap()).collect();
    let finished = AtomicBool::new(false);
    let allocations = AtomicU64::new(0);
    // Allocations handed between threads of different gangs, so frees hit other threads'
    // arenas too.
    let exchange: Mutex<Vec<Box<[u8]>>> = Mutex::new(Vec::new());
    let run = Duration::from_secs(3);
    std::thread::scope(|s| {
        let finished = &finished;
        s.spawn(move || {
            let t = Instant::now();
            while !finished.load(Ordering::Relaxed) {
                if t.elapsed() > Duration::from_secs(90) {
                    eprintln!("deadlock: the allocation test did not finish in 90 s");
                    std::process::abort();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let workers: Vec<_> = gangs
            .iter()
            .enumerate()
            .flat_map(|(g, gang)| (0..p).map(move |i| (g, gang, i)))
            .map(|(g, gang, i)| {
                let (allocations, exchange) = (&allocations, &exchange);
                s.spawn(move || {
                    let _me = gang.join(i).unwrap();
                    let mut seed = (g * 31 + i * 7 + 1) as u64;
                    let mut keep: Vec<Vec<u64>> = Vec::new();
                    let mut strings: Vec<String> = Vec::new();
                    let t = Instant::now();
                    let mut n = 0u64;
                    while t.elapsed() < run {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        let size = (seed % 4096) as usize + 1;
                        keep.push(vec![seed; size]);
                        strings.push(format!("{g}-{i}-{n}-{size}"));
                        if keep.len() > 64 {
                            keep.swap_remove((seed % 64) as usize);
                            strings.swap_remove((seed % 64) as usize);
                        }
                        if n % 16 == 0 {
                            let mut x = exchange.lock().unwrap();
                            if x.len() > 32 {
                                x.clear();
                            }
                            x.push(vec![1u8; size * 8].into_boxed_slice());
                        }
                        n += 1;
                    }
                    let sum: u64 = keep.iter().map(|v| v[0] % 3).sum();
                    assert!(sum < 3 * keep.len() as u64 + 1);
                    allocations.fetch_add(n, Ordering::Relaxed);
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        finished.store(true, Ordering::Relaxed);
    });
    let st = sched.stats();
    eprintln!(
        "{} allocations, {st:?}",
        allocations.load(Ordering::Relaxed)
    );
    assert!(
        st.switches >= 300,
        "the 1 ms quantum really switched: {st:?}"
    );
    assert!(
        st.signal_stops >= 300,
        "threads were stopped by signal: {st:?}"
    );
    assert!(allocations.load(Ordering::Relaxed) > 10_000);
    assert_eq!(st.late_stops, 0, "{st:?}");
}
