//! The suite's cases for rayon's thread-pool calls beyond `join` and `scope`: `broadcast`,
//! the `spawn` family and `install`, run against every policy by `policy_suite!` (in a file of
//! their own to keep `policy_suite.rs` short).

use asat::prelude::*;
use asat::{current_num_threads, current_thread_index, Runtime};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

/// Long enough for any wait here on a loaded machine; reached only by a bug.
const LIMIT: Duration = Duration::from_secs(120);

/// A broadcast runs `op` once on every thread of the pool whatever the policy's team, results
/// in member order (members may meet at a barrier of the pool's size); nested, it runs inline
/// as a team of one; a panic is re-raised and the runtime goes on.
pub fn broadcast(rt: &Runtime) {
    let met = std::sync::Barrier::new(rt.max_threads());
    for _ in 0..20 {
        let got = rt.broadcast(|ctx| {
            met.wait();
            (ctx.index(), ctx.num_threads(), current_thread_index())
        });
        let n = got.len();
        assert_eq!(n, rt.max_threads());
        for (i, r) in got.iter().enumerate() {
            assert_eq!(*r, (i, n, Some(i)));
        }
    }
    let nested: Vec<Vec<(usize, usize)>> = rt.install(|| {
        (0..4)
            .into_par_iter()
            .map(|_| asat::broadcast(|ctx| (ctx.index(), ctx.num_threads())))
            .collect()
    });
    assert_eq!(nested, vec![vec![(0, 1)]; 4]);
    let r = catch_unwind(AssertUnwindSafe(|| {
        rt.broadcast(|ctx| {
            if ctx.index() == 0 {
                panic!("member 0");
            }
        })
    }));
    assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "member 0");
    assert!(!rt.broadcast(|ctx| ctx.index()).is_empty());
}

/// Every spawned job runs once, on its runtime (its iterator calls and broadcasts too), outside
/// any team; `spawn_broadcast` reaches a whole team.
pub fn spawn(rt: &Runtime) {
    let max = rt.max_threads();
    let (tx, rx) = mpsc::channel();
    for i in 0..100u64 {
        let tx = tx.clone();
        let job = move || {
            let outside = (current_thread_index(), current_num_threads());
            let sum: u64 = (0..=i).into_par_iter().sum();
            let team = asat::broadcast(|ctx| ctx.num_threads());
            tx.send((i, outside, sum, team)).unwrap();
        };
        match i % 3 {
            0 => rt.spawn(job),
            1 => rt.spawn_fifo(job),
            // The free function, on the installed runtime.
            _ => rt.install(|| asat::spawn(job)),
        }
    }
    let mut seen = vec![0; 100];
    for _ in 0..100 {
        let (i, outside, sum, team) = rx.recv_timeout(LIMIT).expect("a job did not run");
        seen[i as usize] += 1;
        assert_eq!(outside, (None, max));
        assert_eq!(sum, i * (i + 1) / 2);
        let n = team.len();
        assert!(
            (1..=max).contains(&n) && team.iter().all(|&m| m == n),
            "{team:?}"
        );
    }
    assert!(seen.iter().all(|&s| s == 1), "{seen:?}");
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    rt.spawn_broadcast(move |ctx| {
        tx.lock()
            .unwrap()
            .send((ctx.index(), ctx.num_threads()))
            .unwrap()
    });
    let (first, n) = rx.recv_timeout(LIMIT).unwrap();
    let mut got = vec![first];
    got.extend((1..n).map(|_| rx.recv_timeout(LIMIT).unwrap().0));
    got.sort();
    assert_eq!(got, (0..n).collect::<Vec<_>>());
}

/// `install` runs its closure on a thread of the runtime, not the caller's, where the calls it
/// makes are the runtime's; nested, and inside one of the runtime's calls, it runs inline; a
/// panic comes back to the caller and the runtime goes on.
pub fn install(rt: &Runtime) {
    let me = std::thread::current().id();
    let v: Vec<u64> = (0..10_000).collect();
    for _ in 0..20 {
        let (on, sum, nested_on, n) = rt.install(|| {
            let on = std::thread::current().id();
            let sum: u64 = v.par_iter().map(|x| x * 2).sum();
            let nested_on = rt.install(|| std::thread::current().id());
            (on, sum, nested_on, current_num_threads())
        });
        assert_ne!(on, me);
        assert_eq!((on, sum, n), (nested_on, 99_990_000, rt.max_threads()));
    }
    let moved = rt.install(|| {
        (0..1000)
            .into_par_iter()
            .filter(|_| {
                let here = (std::thread::current().id(), current_thread_index());
                rt.install(|| (std::thread::current().id(), current_thread_index())) != here
            })
            .count()
    });
    assert_eq!(moved, 0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        rt.install(|| v.par_iter().for_each(|x| assert!(*x != 5_000, "item 5000")))
    }));
    assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "item 5000");
    assert_eq!(rt.install(|| v.par_iter().count()), 10_000);
}
