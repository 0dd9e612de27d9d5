//! A child `fork`ed (without `exec`) from a process whose runtime has started workers: the
//! workers do not exist in the child, so its regions must run inline on the calling thread and
//! dropping the runtime must not join them; spawned jobs run on threads of their own. (Its own file: it forks the test process, which
//! must hold one test.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use asat_core::{Fixed, Runtime, Schedule};

/// Runs `child` in a forked child that exits with its return value (101 if it panics; killed
/// by `SIGALRM` after 30 s if it hangs); returns that exit status, or a negative signal number.
fn in_child(child: impl FnOnce() -> i32) -> i32 {
    // SAFETY: this test binary holds one test, so no other thread of the harness holds a lock
    // the child needs; the child ends with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: `alarm` only arms a timer of this process; `_exit` ends it at once.
        unsafe {
            libc::alarm(30);
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(101);
            libc::_exit(code)
        }
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    if libc::WIFSIGNALED(status) {
        -libc::WTERMSIG(status)
    } else {
        libc::WEXITSTATUS(status)
    }
}

#[test]
fn a_forked_child_runs_the_parents_runtime_inline_and_drops_it() {
    let rt = Runtime::builder()
        .max_threads(2)
        .policy(Fixed::new(2))
        .build()
        .unwrap();
    let size = AtomicUsize::new(0);
    rt.region(|t| {
        size.fetch_max(t.size(), Ordering::Relaxed);
    });
    assert_eq!(size.into_inner(), 2);
    assert_eq!(rt.workers_started(), 1);
    // A spawned job: the parent has a spawn thread too (idle, or gone after a second).
    let (tx, rx) = std::sync::mpsc::channel();
    rt.spawn(move || tx.send(()).unwrap());
    rx.recv_timeout(Duration::from_secs(60)).unwrap();
    let status = in_child(move || {
        // Spawned jobs run on threads of their own (the parent's spawn threads are not here),
        // and a broadcast runs inline.
        let (tx, rx) = std::sync::mpsc::channel();
        for i in 0..3 {
            let tx = tx.clone();
            rt.spawn(move || {
                let team = asat_core::broadcast(|c| c.num_threads());
                tx.send((i, team)).unwrap()
            });
        }
        let mut jobs: Vec<(i32, Vec<usize>)> = (0..3)
            .filter_map(|_| rx.recv_timeout(Duration::from_secs(10)).ok())
            .collect();
        jobs.sort();
        let spawned_ok = jobs == [(0, vec![1]), (1, vec![1]), (2, vec![1])]
            && rt.broadcast(|c| (c.index(), c.num_threads())) == [(0, 1)];
        // An SPMD region with a barrier would wait forever for a worker that is not here.
        let members = AtomicUsize::new(0);
        rt.region(|t| {
            members.fetch_add(t.size(), Ordering::Relaxed);
            t.barrier();
        });
        let sum = rt.parallel_reduce(
            0..1000,
            Schedule::Static,
            || 0u64,
            |a, r| a + r.map(|i| i as u64).sum::<u64>(),
            |a, b| a + b,
        );
        let mut v = vec![0u32; 100];
        rt.parallel_slice_mut(&mut v, Schedule::dynamic(7), |start, chunk| {
            for (k, x) in chunk.iter_mut().enumerate() {
                *x = (start + k) as u32;
            }
        });
        drop(rt);
        let ok = spawned_ok
            && members.into_inner() == 1
            && sum == 499_500
            && v.iter().enumerate().all(|(i, &x)| x == i as u32);
        if ok {
            0
        } else {
            1
        }
    });
    assert_eq!(
        status, 0,
        "the child failed (1), panicked (101) or hung (-14)"
    );
}
