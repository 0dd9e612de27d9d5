//! Spawned jobs: each runs once, in spawn order on one thread, on its runtime; panics, yields,
//! the owner's drop with jobs pending, and spawn threads that exit when idle. Waits are bounded
//! (a bug fails the test instead of hanging it) and nothing depends on how fast a thread runs.

use std::sync::atomic::AtomicUsize;
use std::sync::mpsc;

use super::*;
use crate::{current_num_threads, current_thread_index, Fixed, Schedule};

/// Long enough for any of these waits on a loaded machine; reached only by a bug.
const LIMIT: Duration = Duration::from_secs(60);

fn pool(threads: usize) -> Runtime {
    Runtime::builder()
        .max_threads(threads)
        .policy(Fixed::new(threads))
        .build()
        .unwrap()
}

/// Counts thread starts and stops through the builder's handlers (workers and spawn threads).
#[derive(Default)]
struct Lives {
    starts: AtomicUsize,
    stops: AtomicUsize,
}

fn counted_pool(threads: usize, lives: &Arc<Lives>) -> Runtime {
    let (a, b) = (Arc::clone(lives), Arc::clone(lives));
    Runtime::builder()
        .max_threads(threads)
        .policy(Fixed::new(threads))
        .on_thread_start(move |_| {
            a.starts.fetch_add(1, Ordering::SeqCst);
        })
        .on_thread_stop(move |_| {
            b.stops.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap()
}

/// Waits until `cond` holds, failing the test after [`LIMIT`].
fn eventually(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < LIMIT, "{what}: not within {LIMIT:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `f` on another thread, failing the test if it does not return within [`LIMIT`].
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("{what}: did not return within {LIMIT:?}"))
}

/// Whether no job of `rt` is queued or running.
fn quiet(rt: &Runtime) -> bool {
    let st = rt.inner.spawner.state.lock();
    st.queue.is_empty() && st.running == 0
}

#[test]
fn every_job_runs_exactly_once() {
    // (Miri runs some thousand times slower: fewer jobs there.)
    let jobs = if cfg!(miri) { 60 } else { 500 };
    for threads in [1, 2, 4] {
        let rt = pool(threads);
        let hits: Arc<Vec<AtomicUsize>> =
            Arc::new((0..jobs).map(|_| AtomicUsize::new(0)).collect());
        let (tx, rx) = mpsc::channel();
        for i in 0..jobs {
            let (hits, tx) = (Arc::clone(&hits), tx.clone());
            let job = move || {
                hits[i].fetch_add(1, Ordering::SeqCst);
                tx.send(i).unwrap();
            };
            if i % 2 == 0 {
                rt.spawn(job);
            } else {
                rt.spawn_fifo(job);
            }
        }
        for _ in 0..jobs {
            rx.recv_timeout(LIMIT).expect("a spawned job did not run");
        }
        for (i, h) in hits.iter().enumerate() {
            assert_eq!(
                h.load(Ordering::SeqCst),
                1,
                "job {i} with {threads} threads"
            );
        }
        let st = rt.inner.spawner.state.lock();
        assert!(st.threads <= threads, "{} spawn threads", st.threads);
    }
}

#[test]
fn jobs_spawn_jobs() {
    fn tree(depth: u32, tx: mpsc::Sender<()>) {
        tx.send(()).unwrap();
        if depth > 0 {
            let tx2 = tx.clone();
            crate::spawn(move || tree(depth - 1, tx2));
            crate::spawn_fifo(move || tree(depth - 1, tx));
        }
    }
    let rt = pool(3);
    let (tx, rx) = mpsc::channel();
    rt.spawn(move || tree(7, tx));
    // 2^8 - 1 jobs, all on `rt`: the free functions in a job spawn on the job's runtime.
    for _ in 0..255 {
        rx.recv_timeout(LIMIT).expect("a spawned job did not run");
    }
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
}

#[test]
fn jobs_start_in_spawn_order_on_one_thread() {
    let rt = pool(1);
    let order = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    // The first job holds the only spawn thread until all the others are queued.
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    rt.spawn(move || gate_rx.recv_timeout(LIMIT).unwrap());
    for i in 0..100 {
        let (order, tx) = (Arc::clone(&order), tx.clone());
        let job = move || {
            order.lock().push(i);
            tx.send(()).unwrap();
        };
        if i % 3 == 0 {
            rt.spawn(job);
        } else {
            rt.spawn_fifo(job);
        }
    }
    gate_tx.send(()).unwrap();
    for _ in 0..100 {
        rx.recv_timeout(LIMIT).expect("a spawned job did not run");
    }
    assert_eq!(*order.lock(), (0..100).collect::<Vec<_>>());
}

#[test]
fn jobs_run_on_their_runtime_outside_any_team() {
    let rt = pool(3);
    let id = rt.id();
    let (tx, rx) = mpsc::channel();
    rt.spawn(move || {
        let seen = (
            current_thread_index(),
            current_num_threads(),
            Runtime::with_current(|r| r.id() == id),
            std::thread::current().name().map(str::to_owned),
        );
        // Calls in the job run on the runtime, as regions of their own.
        let sum = Runtime::with_current(|r| {
            r.parallel_reduce(
                0..1000,
                Schedule::dynamic(10),
                || 0usize,
                |a, r| a + r.sum::<usize>(),
                |a, b| a + b,
            )
        });
        let team = crate::broadcast(|ctx| (ctx.index(), current_thread_index()));
        tx.send((seen, sum, team)).unwrap();
    });
    let ((index, num, on_rt, name), sum, team) = rx.recv_timeout(LIMIT).unwrap();
    assert_eq!(index, None);
    assert_eq!(num, 3);
    assert!(on_rt);
    assert_eq!(name.as_deref(), Some("asat-spawn-0"));
    assert_eq!(sum, 499_500);
    // A team of 3, or of 1 had another thread's region held the runtime (none here).
    assert_eq!(team, [(0, Some(0)), (1, Some(1)), (2, Some(2))]);
}

#[test]
fn a_panicking_job_does_not_stop_the_pool() {
    let rt = pool(1);
    let (tx, rx) = mpsc::channel();
    rt.spawn(|| panic!("job panics (expected by the test)"));
    for i in 0..3 {
        let tx = tx.clone();
        rt.spawn(move || tx.send(i).unwrap());
    }
    let got: Vec<i32> = (0..3).map(|_| rx.recv_timeout(LIMIT).unwrap()).collect();
    assert_eq!(got, [0, 1, 2]);
    // One spawn thread: the panicking job ended before the next one started.
    assert_eq!(rt.stats().spawn_panics, 1);
}

#[test]
fn the_panic_handler_gets_the_payload_and_may_panic_itself() {
    let (ptx, prx) = mpsc::channel::<String>();
    let ptx = Mutex::new(ptx);
    let rt = Runtime::builder()
        .max_threads(1)
        .panic_handler(move |p| {
            let msg = p.downcast_ref::<&str>().copied().unwrap_or("?").to_owned();
            ptx.lock().send(msg.clone()).unwrap();
            if msg == "second" {
                panic!("the handler panics (expected by the test)");
            }
        })
        .build()
        .unwrap();
    rt.spawn(|| std::panic::panic_any("first"));
    rt.spawn(|| std::panic::panic_any("second"));
    rt.spawn(|| std::panic::panic_any("third"));
    let got: Vec<String> = (0..3).map(|_| prx.recv_timeout(LIMIT).unwrap()).collect();
    assert_eq!(got, ["first", "second", "third"]);
    let (tx, rx) = mpsc::channel();
    rt.spawn(move || tx.send(7).unwrap());
    assert_eq!(rx.recv_timeout(LIMIT).unwrap(), 7);
    assert_eq!(rt.stats().spawn_panics, 3);
}

#[test]
fn dropping_the_runtime_runs_pending_jobs_then_stops_its_threads() {
    let lives = Arc::new(Lives::default());
    let rt = counted_pool(2, &lives);
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let gate_rx = Mutex::new(gate_rx);
    let (tx, rx) = mpsc::channel();
    // Two blockers hold both spawn threads; ten jobs wait in the queue.
    let gate = Arc::new(gate_rx);
    for _ in 0..2 {
        let (gate, tx) = (Arc::clone(&gate), tx.clone());
        rt.spawn(move || {
            gate.lock().recv_timeout(LIMIT).unwrap();
            tx.send(0).unwrap();
        });
    }
    for i in 1..=10 {
        let tx = tx.clone();
        rt.spawn(move || {
            // Regions still run after the owner's drop: the workers stop after the last job.
            let team = crate::broadcast(|ctx| ctx.num_threads());
            assert!(team.iter().all(|&n| n == team.len()));
            tx.send(i).unwrap();
        });
    }
    drop(tx);
    // The drop does not wait for the jobs (they wait for the gate).
    within("drop with jobs pending", move || drop(rt));
    gate_tx.send(()).unwrap();
    gate_tx.send(()).unwrap();
    let mut got: Vec<i32> = (0..12).map(|_| rx.recv_timeout(LIMIT).unwrap()).collect();
    got.sort();
    assert_eq!(got, [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Every thread started (spawn threads and the worker) stops, without anyone joining them.
    eventually("the runtime's threads stop after the last job", || {
        lives.stops.load(Ordering::SeqCst) == lives.starts.load(Ordering::SeqCst)
    });
    assert!(lives.starts.load(Ordering::SeqCst) >= 2);
}

#[test]
fn a_job_may_drop_the_last_owner() {
    let lives = Arc::new(Lives::default());
    let rt = Arc::new(counted_pool(2, &lives));
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let (tx, rx) = mpsc::channel();
    let mine = Arc::clone(&rt);
    rt.spawn(move || {
        gate_rx.recv_timeout(LIMIT).unwrap();
        let n = mine.broadcast(|ctx| ctx.index()).len();
        drop(mine); // the last handle: the drop runs on this spawn thread, inside the job
        tx.send(n).unwrap();
    });
    drop(rt);
    gate_tx.send(()).unwrap();
    assert_eq!(rx.recv_timeout(LIMIT).unwrap(), 2);
    eventually("the runtime's threads stop", || {
        lives.stops.load(Ordering::SeqCst) == lives.starts.load(Ordering::SeqCst)
    });
}

#[test]
fn dropping_an_idle_runtime_joins_its_threads() {
    let lives = Arc::new(Lives::default());
    let rt = counted_pool(3, &lives);
    let (tx, rx) = mpsc::channel();
    for _ in 0..6 {
        let tx = tx.clone();
        rt.spawn(move || tx.send(crate::broadcast(|_| ()).len()).unwrap());
    }
    for _ in 0..6 {
        rx.recv_timeout(LIMIT).unwrap();
    }
    eventually("the jobs' threads finish them", || quiet(&rt));
    within("drop of an idle runtime", move || drop(rt));
    // The drop joined every spawn thread and worker: their exit handlers have run.
    assert_eq!(
        lives.stops.load(Ordering::SeqCst),
        lives.starts.load(Ordering::SeqCst)
    );
}

#[test]
fn idle_spawn_threads_exit() {
    let lives = Arc::new(Lives::default());
    // One thread: no worker, so every start is a spawn thread's.
    let rt = counted_pool(1, &lives);
    let (tx, rx) = mpsc::channel();
    rt.spawn(move || tx.send(()).unwrap());
    rx.recv_timeout(LIMIT).unwrap();
    assert_eq!(lives.starts.load(Ordering::SeqCst), 1);
    eventually("an idle spawn thread exits", || {
        lives.stops.load(Ordering::SeqCst) == 1
    });
    assert_eq!(rt.inner.spawner.state.lock().threads, 0);
    // A later spawn starts a thread again.
    let (tx, rx) = mpsc::channel();
    rt.spawn(move || tx.send(()).unwrap());
    rx.recv_timeout(LIMIT).unwrap();
    assert_eq!(lives.starts.load(Ordering::SeqCst), 2);
}

#[test]
fn yield_now_runs_a_queued_job_on_a_spawn_thread() {
    let rt = pool(1);
    assert_eq!(crate::yield_now(), None);
    assert_eq!(crate::yield_local(), None);
    assert_eq!(rt.yield_now(), None);
    rt.region(|_| {
        assert_eq!(crate::yield_now(), Some(Yield::Idle));
        assert_eq!(rt.yield_now(), Some(Yield::Idle));
        assert_eq!(rt.yield_local(), Some(Yield::Idle));
    });
    let other = pool(1);
    let (tx, rx) = mpsc::channel();
    rt.spawn(move || {
        let ran = Arc::new(AtomicUsize::new(0));
        let r = Arc::clone(&ran);
        // The only spawn thread is this one: the job stays queued until it yields.
        crate::spawn(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        let first = crate::yield_now();
        let after = ran.load(Ordering::SeqCst);
        let second = crate::yield_now();
        let local = crate::yield_local();
        let elsewhere = other.yield_now();
        tx.send((first, after, second, local, elsewhere)).unwrap();
    });
    let got = rx.recv_timeout(LIMIT).unwrap();
    assert_eq!(
        got,
        (
            Some(Yield::Executed),
            1,
            Some(Yield::Idle),
            Some(Yield::Idle),
            None
        )
    );
}

#[test]
fn spawn_threads_take_the_builders_names() {
    let rt = Runtime::builder()
        .max_threads(2)
        .thread_name(|i| format!("mine-{i}\0"))
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    rt.spawn(move || {
        tx.send(std::thread::current().name().map(str::to_owned))
            .unwrap()
    });
    assert_eq!(rx.recv_timeout(LIMIT).unwrap().as_deref(), Some("mine-0"));
}

#[test]
fn spawn_broadcast_runs_on_a_team() {
    let rt = pool(3);
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    rt.spawn_broadcast(move |ctx| tx.lock().send((ctx.index(), ctx.num_threads())).unwrap());
    let mut got: Vec<(usize, usize)> = (0..3).map(|_| rx.recv_timeout(LIMIT).unwrap()).collect();
    got.sort();
    assert_eq!(got, [(0, 3), (1, 3), (2, 3)]);
}
