//! `ThreadPoolBuilder::spawn_handler`, `build_scoped` and `ThreadBuilder`: pools whose workers
//! run on threads the user starts.
//!
//! Nothing here measures time: a test that goes wrong hangs (a worker that never stops, a
//! region that waits for a member that never comes) or fails an assertion.

use std::cell::Cell;
use std::error::Error as _;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread::{self, JoinHandle, ThreadId};

use asat_core::{Fixed, Schedule, ThreadBuilder, ThreadPool, ThreadPoolBuilder};

/// What a handler was told about one worker.
#[derive(Debug, PartialEq, Eq)]
struct Told {
    index: usize,
    name: Option<String>,
    stack_size: Option<usize>,
}

/// The threads a test's handler started: index, thread id, handle.
type Started = Mutex<Vec<(usize, ThreadId, JoinHandle<()>)>>;

/// A handler that starts a named std thread running the worker, and records it.
fn start_on_std_thread(started: &Started, thread: ThreadBuilder) -> io::Result<()> {
    let index = thread.index();
    let mut b = thread::Builder::new();
    if let Some(name) = thread.name() {
        b = b.name(name.to_owned());
    }
    if let Some(bytes) = thread.stack_size() {
        b = b.stack_size(bytes);
    }
    let handle = b.spawn(move || thread.run())?;
    let id = handle.thread().id();
    started.lock().unwrap().push((index, id, handle));
    Ok(())
}

/// Joins the threads a handler started (each returns once its `run` has).
fn join_all(started: Started) {
    for (_, _, handle) in started.into_inner().unwrap() {
        handle.join().unwrap();
    }
}

/// The thread id of the handler's thread for each worker index (entry 0: none).
fn ids_by_index(started: &Started, n: usize) -> Vec<Option<ThreadId>> {
    let mut ids = vec![None; n];
    for (index, id, _) in started.lock().unwrap().iter() {
        ids[*index] = Some(*id);
    }
    ids
}

#[test]
fn handler_starts_workers_1_to_n_with_names_and_stack_sizes() {
    const N: usize = 4;
    const STACK: usize = 3 << 20;
    let told = Mutex::new(Vec::new());
    let started = Started::default();
    let pool = ThreadPoolBuilder::new()
        .num_threads(N)
        .thread_name(|i| format!("handled-{i}"))
        .stack_size(STACK)
        .spawn_handler(|thread| {
            told.lock().unwrap().push(Told {
                index: thread.index(),
                name: thread.name().map(str::to_owned),
                stack_size: thread.stack_size(),
            });
            assert!(format!("{thread:?}").contains(&format!("index: {}", thread.index())));
            start_on_std_thread(&started, thread)
        })
        .build()
        .unwrap();
    let expected: Vec<Told> = (1..N)
        .map(|index| Told {
            index,
            name: Some(format!("handled-{index}")),
            stack_size: Some(STACK),
        })
        .collect();
    assert_eq!(told.into_inner().unwrap(), expected);
    assert_eq!(pool.workers_started(), N - 1);
    let ids = ids_by_index(&started, N);

    // An SPMD region whose members wait for each other: every member on a thread of its own.
    let met = Barrier::new(N);
    let on = Mutex::new(vec![None; N]);
    pool.region_of(N, |team| {
        assert_eq!(team.size(), N);
        met.wait();
        on.lock().unwrap()[team.index()] = Some(thread::current().id());
    });
    let on = on.into_inner().unwrap();
    assert_eq!(on[0], Some(thread::current().id()));
    assert_eq!(on[1..], ids[1..]);

    let got = pool.broadcast(|ctx| {
        let name = thread::current().name().map(str::to_owned);
        (ctx.index(), thread::current().id(), name)
    });
    assert_eq!(got.len(), N);
    for (i, (index, id, name)) in got.into_iter().enumerate().skip(1) {
        assert_eq!(index, i);
        assert_eq!(Some(id), ids[i]);
        assert_eq!(name, Some(format!("handled-{i}")));
    }
    drop(pool);
    join_all(started);
}

#[test]
fn handler_error_fails_the_build_and_stops_the_started_threads() {
    let calls = AtomicUsize::new(0);
    let started = Started::default();
    let err = ThreadPoolBuilder::new()
        .num_threads(4)
        .spawn_handler(|thread| {
            if calls.fetch_add(1, Ordering::Relaxed) == 1 {
                return Err(io::Error::other("no"));
            }
            start_on_std_thread(&started, thread)
        })
        .build()
        .unwrap_err();
    assert_eq!(calls.load(Ordering::Relaxed), 2, "no call after the error");
    let msg = err.to_string();
    assert!(
        msg.starts_with("spawn_handler failed to start pool thread 2"),
        "{msg}"
    );
    assert!(msg.ends_with(": no"), "{msg}");
    let source = err.source().expect("the handler's error is the source");
    assert_eq!(source.to_string(), "no");
    assert!(source.downcast_ref::<io::Error>().is_some());
    // The thread the first call started runs worker 1; the failed build stopped it.
    assert_eq!(started.lock().unwrap().len(), 1);
    join_all(started);
}

#[test]
fn dropping_the_pool_makes_run_return_even_when_called_late() {
    // The handler's threads wait for a go before they call `run`: the pool is dropped first.
    let (go, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let ran = AtomicUsize::new(0);
    thread::scope(|s| {
        let started = Mutex::new(Vec::new());
        let pool = ThreadPoolBuilder::new()
            .num_threads(3)
            .spawn_handler(|thread| {
                let (gate, ran) = (&gate, &ran);
                started.lock().unwrap().push(s.spawn(move || {
                    gate.lock().unwrap().recv().unwrap();
                    thread.run();
                    ran.fetch_add(1, Ordering::Relaxed);
                    // Once `run` has returned, the thread starts regions as any thread does
                    // (not inline, as it did while it was a worker).
                    let own = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
                    assert_eq!(own.broadcast(|ctx| ctx.index()), [0, 1]);
                }));
                Ok(())
            })
            .build()
            .unwrap();
        drop(pool);
        go.send(()).unwrap();
        go.send(()).unwrap();
        for h in started.into_inner().unwrap() {
            h.join().unwrap();
        }
    });
    assert_eq!(ran.load(Ordering::Relaxed), 2);
}

#[test]
fn loops_run_without_workers_that_have_not_called_run_and_regions_wait_for_them() {
    const N: usize = 3;
    // Each handler thread waits for its go before it calls `run`.
    let gos = Mutex::new(Vec::new());
    let started = Started::default();
    let pool = ThreadPoolBuilder::new()
        .num_threads(N)
        .policy(Fixed::new(N))
        .spawn_handler(|thread| {
            let (go, wait) = mpsc::channel::<()>();
            gos.lock().unwrap().push(go);
            let index = thread.index();
            let handle = thread::spawn(move || {
                wait.recv().unwrap();
                thread.run();
            });
            let id = handle.thread().id();
            started.lock().unwrap().push((index, id, handle));
            Ok(())
        })
        .build()
        .unwrap();
    // No worker runs yet: the loop's other members are revoked and run on this thread.
    let done: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
    pool.parallel_for(0..64, Schedule::dynamic(1), |i| {
        done[i].fetch_add(1, Ordering::Relaxed);
    });
    assert!(done.iter().all(|d| d.load(Ordering::Relaxed) == 1));
    assert_eq!(pool.stats().last_team, N);
    assert_eq!(pool.stats().revoked, (N - 1) as u64);
    // An SPMD region is posted to the workers before member 0 runs `op`, which only then lets
    // them call `run`: the region waits for them, and they run their members.
    let ids = ids_by_index(&started, N);
    let got = pool.broadcast(|ctx| {
        if ctx.index() == 0 {
            for go in gos.lock().unwrap().drain(..) {
                go.send(()).unwrap();
            }
        }
        thread::current().id()
    });
    assert_eq!(got.len(), N);
    for i in 1..N {
        assert_eq!(Some(got[i]), ids[i]);
    }
    drop(pool);
    join_all(started);
}

#[test]
fn start_and_exit_handlers_run_on_the_handler_threads() {
    const N: usize = 3;
    let starts = Arc::new(Mutex::new(Vec::new()));
    let exits = Arc::new(Mutex::new(Vec::new()));
    let started = Started::default();
    let pool = ThreadPoolBuilder::new()
        .num_threads(N)
        .start_handler({
            let starts = Arc::clone(&starts);
            move |i| starts.lock().unwrap().push((i, thread::current().id()))
        })
        .exit_handler({
            let exits = Arc::clone(&exits);
            move |i| exits.lock().unwrap().push((i, thread::current().id()))
        })
        .spawn_handler(|thread| start_on_std_thread(&started, thread))
        .build()
        .unwrap();
    let ids = ids_by_index(&started, N);
    let expected: Vec<(usize, ThreadId)> = (1..N).map(|i| (i, ids[i].unwrap())).collect();
    // Every worker ran a member, so it has run its start handler (before its first member).
    // Member 0 is one of the pool's spawn threads (a pool with a start handler runs its calls'
    // closures on its own threads), which ran the handler too, with its slot.
    assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
    let on_handler_threads = |v: &Mutex<Vec<(usize, ThreadId)>>| {
        let mut got = v.lock().unwrap().clone();
        let others = got
            .iter()
            .filter(|(_, t)| !expected.iter().any(|e| e.1 == *t));
        assert!(others.clone().all(|&(slot, _)| slot < N), "{got:?}");
        assert_eq!(
            others.count(),
            1,
            "one spawn thread ran the handler: {got:?}"
        );
        got.retain(|(_, t)| expected.iter().any(|e| e.1 == *t));
        got.sort_by_key(|&(i, _)| i);
        got
    };
    assert_eq!(on_handler_threads(&starts), expected);
    drop(pool);
    join_all(started);
    assert_eq!(on_handler_threads(&exits), expected);
}

#[test]
fn a_thread_builder_dropped_without_run_limits_the_teams() {
    const N: usize = 4;
    let started = Started::default();
    let pool = ThreadPoolBuilder::new()
        .num_threads(N)
        .spawn_handler(|thread| {
            if thread.index() == 2 {
                return Ok(()); // a handler that forgets worker 2
            }
            start_on_std_thread(&started, thread)
        })
        .build()
        .unwrap();
    assert_eq!(pool.stats().spawn_failures, 1);
    // Teams stop below the lost worker: a broadcast has members 0 and 1 only, and returns.
    assert_eq!(pool.broadcast(|ctx| ctx.num_threads()), [2, 2]);
    drop(pool);
    join_all(started);
}

thread_local! {
    /// The worker index a `build_scoped` wrapper set on its thread before `run`.
    static WRAPPED: Cell<Option<usize>> = const { Cell::new(None) };
}

#[test]
fn build_scoped_runs_members_on_the_wrapped_scoped_threads() {
    const N: usize = 4;
    let exits = AtomicUsize::new(0); // borrowed by the scoped threads
    let got = ThreadPoolBuilder::new()
        .num_threads(N)
        .thread_name(|i| format!("scoped-{i}"))
        .build_scoped(
            |thread| {
                WRAPPED.with(|w| w.set(Some(thread.index())));
                thread.run();
                WRAPPED.with(|w| w.set(None));
                exits.fetch_add(1, Ordering::Relaxed);
            },
            |pool: &ThreadPool| {
                assert_eq!(pool.current_num_threads(), N);
                let met = Barrier::new(N);
                let seen = Mutex::new(vec![None; N]);
                pool.region_of(N, |team| {
                    met.wait();
                    seen.lock().unwrap()[team.index()] = WRAPPED.with(Cell::get);
                });
                let names = pool.broadcast(|_| thread::current().name().map(str::to_owned));
                (seen.into_inner().unwrap(), names)
            },
        )
        .unwrap();
    let (seen, names) = got;
    assert_eq!(seen, [None, Some(1), Some(2), Some(3)]);
    for (i, name) in names.iter().enumerate().skip(1) {
        assert_eq!(name.as_deref(), Some(format!("scoped-{i}").as_str()));
    }
    // Every scoped thread has left `run` and its wrapper before `build_scoped` returned.
    assert_eq!(exits.load(Ordering::Relaxed), N - 1);
}

#[test]
fn build_scoped_propagates_a_panic_of_with_pool_after_the_threads_exit() {
    const N: usize = 3;
    let exits = AtomicUsize::new(0);
    let result = catch_unwind(AssertUnwindSafe(|| {
        ThreadPoolBuilder::new().num_threads(N).build_scoped(
            |thread| {
                thread.run();
                exits.fetch_add(1, Ordering::Relaxed);
            },
            |pool| {
                assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
                panic!("with_pool gives up");
            },
        )
    }));
    let payload = result.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"with_pool gives up"));
    assert_eq!(exits.load(Ordering::Relaxed), N - 1);
}

#[test]
fn build_scoped_returns_build_errors() {
    let called = AtomicUsize::new(0);
    let err = ThreadPoolBuilder::new()
        .num_threads(5000)
        .build_scoped(
            |thread| {
                called.fetch_add(1, Ordering::Relaxed);
                thread.run();
            },
            |_| called.fetch_add(1, Ordering::Relaxed),
        )
        .unwrap_err();
    assert!(err.to_string().starts_with("num_threads 5000"), "{err}");
    assert_eq!(called.load(Ordering::Relaxed), 0);
}

#[test]
fn a_pool_of_one_calls_no_handler() {
    let calls = AtomicUsize::new(0);
    let pool = ThreadPoolBuilder::new()
        .num_threads(1)
        .spawn_handler(|_| {
            calls.fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .build()
        .unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 0);
    assert_eq!(pool.broadcast(|ctx| ctx.index()), [0]);
}

#[test]
fn the_builder_type_needs_no_parameter() {
    let b: ThreadPoolBuilder = ThreadPoolBuilder::default().num_threads(2);
    let pool: ThreadPool = b.build().unwrap();
    assert_eq!(pool.current_num_threads(), 2);
    let _: ThreadPoolBuilder<asat_core::DefaultSpawn> = ThreadPoolBuilder::new();
}
