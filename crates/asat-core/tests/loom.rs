//! loom models of the runtime's protocols, on a whole `Runtime`: posting a region to a worker
//! and the worker's claim against the starting thread's revocation, the join, the team
//! barrier (two members: its one-word protocol, generations, poisoning; three: its two-word
//! protocol, built with `--cfg loom`, the count's reset), the work-sharing counter's reset between
//! loops, worker shutdown, the work-stealing `join` (a shared `b`, the thief's latch, the
//! sleep protocol; the deques are stand-ins on loom's mutex, so the model takes crossbeam's
//! deque as linearizable), a worker the policy kept out let in by a rise of the number, and
//! a scope's spawned job and broadcast (its count, the mail). loom runs every interleaving of
//! the threads' atomic operations
//! (within the preemption bound) and reports a deadlock if a thread sleeps forever, so a lost
//! wake-up fails the model.
//!
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p asat-core --release --test loom`
#![cfg(loom)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use asat_core::{Fixed, Plan, Policy, RegionStart, Runtime, Schedule, SpinThenPark};
use loom::sync::atomic::{AtomicUsize, Ordering};

/// A runtime of `threads` threads, all used; `spin` zero blocks at once, any other value is
/// one more look before blocking under loom.
fn runtime(threads: usize, spin: Duration, timing: bool) -> Runtime {
    Runtime::builder()
        .max_threads(threads)
        .policy(Fixed::new(threads))
        .wait(SpinThenPark::new(spin))
        .timing(timing)
        .build()
        .unwrap()
}

/// Counts, over all executions of a model, those in which something happened and those in
/// which it did not (outside the model, with std's atomics), to check that the model reaches
/// both.
struct Outcomes([std::sync::atomic::AtomicUsize; 2]);

impl Outcomes {
    const fn new() -> Self {
        Self([
            std::sync::atomic::AtomicUsize::new(0),
            std::sync::atomic::AtomicUsize::new(0),
        ])
    }

    fn record(&self, happened: bool) {
        self.0[usize::from(happened)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn assert_both(&self, what: &str) {
        let [no, yes] = [0, 1].map(|i| self.0[i].load(std::sync::atomic::Ordering::Relaxed));
        assert!(
            yes > 0 && no > 0,
            "{what}: in {yes} executions, not in {no}"
        );
    }
}

static LOOP_REVOKED: Outcomes = Outcomes::new();
static PROBE_REVOKED: Outcomes = Outcomes::new();

fn model(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.check(f);
}

/// Every member must have arrived at a barrier before anyone passes it, two regions in a row
/// (the second starts from the barrier word the first left), then shutdown.
fn barrier_regions(spin: Duration) {
    model(2, move || {
        let rt = runtime(2, spin, false);
        for round in 1..=2 {
            let arrived = AtomicUsize::new(0);
            rt.region(|team| {
                assert_eq!(team.size(), 2);
                arrived.fetch_add(1, Ordering::Relaxed);
                team.barrier();
                assert_eq!(arrived.load(Ordering::Relaxed), 2, "region {round}");
            });
            assert_eq!(arrived.load(Ordering::Relaxed), 2);
        }
    });
}

#[test]
fn spmd_barrier_blocking() {
    barrier_regions(Duration::ZERO);
}

#[test]
fn spmd_barrier_spin_then_block() {
    barrier_regions(Duration::from_micros(1));
}

/// A static loop: the worker claims its member or the starting thread revokes it and runs it;
/// either way every index runs once and the join waits for it. Timing on: the worker's
/// arrival time travels back with its finish.
#[test]
fn static_loop_claim_or_revoke() {
    model(2, || {
        let rt = runtime(2, Duration::ZERO, true);
        for _ in 0..2 {
            let hits = [AtomicUsize::new(0), AtomicUsize::new(0)];
            rt.parallel_for(0..2, Schedule::Static, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            for h in &hits {
                assert_eq!(h.load(Ordering::Relaxed), 1);
            }
        }
        LOOP_REVOKED.record(rt.stats().revoked > 0);
    });
    LOOP_REVOKED.assert_both("a loop member revoked");
}

/// Dynamic loops hand out chunks from the shared counter; the counter must be back at 0 for
/// the next loop, whoever ran the members.
#[test]
fn dynamic_loops_reset_the_counter() {
    model(2, || {
        let rt = runtime(2, Duration::ZERO, false);
        for _ in 0..2 {
            let hits = [
                AtomicUsize::new(0),
                AtomicUsize::new(0),
                AtomicUsize::new(0),
            ];
            rt.parallel_for(0..3, Schedule::dynamic(1), |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            for h in &hits {
                assert_eq!(h.load(Ordering::Relaxed), 1);
            }
        }
    });
}

/// A member that panics before the barrier poisons it: the other member, waiting or about to
/// wait, unwinds instead of hanging, the region re-raises the panic, and the next region's
/// barrier works.
#[test]
fn panic_poisons_then_next_region_is_clean() {
    model(2, || {
        let rt = runtime(2, Duration::ZERO, false);
        let r = catch_unwind(AssertUnwindSafe(|| {
            rt.region(|team| {
                if team.index() == 1 {
                    panic!("member 1");
                }
                team.barrier();
            })
        }));
        let payload = r.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"member 1"));
        let arrived = AtomicUsize::new(0);
        rt.region(|team| {
            arrived.fetch_add(1, Ordering::Relaxed);
            team.barrier();
            assert_eq!(arrived.load(Ordering::Relaxed), 2);
        });
    });
}

/// Three members (the two-word barrier under loom), two barriers: two may sleep at once; the
/// last arrival releases both, and a member hurrying into the second barrier counts into the
/// fresh count. (One preemption: with two, the model takes minutes.)
#[test]
fn three_member_barrier() {
    model(1, || {
        let rt = runtime(3, Duration::ZERO, false);
        let arrived = AtomicUsize::new(0);
        rt.region(|team| {
            for p in 1..=2 {
                arrived.fetch_add(1, Ordering::Relaxed);
                team.barrier();
                let a = arrived.load(Ordering::Relaxed);
                assert!((3 * p..3 * p + 3).contains(&a), "barrier {p}: {a}");
            }
        });
    });
}

/// Probes before every region with a give-up limit of zero: the starting thread revokes the
/// worker's member unless the worker has claimed it within the starting thread's first spins.
#[derive(Debug)]
struct ProbeFirst;

impl Policy for ProbeFirst {
    fn name(&self) -> &str {
        "probe-first"
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        match start.probe {
            None => Plan::probe_within(2, Duration::ZERO),
            Some(p) => {
                PROBE_REVOKED.record(p.given_up == 1);
                Plan::run(2)
            }
        }
    }
}

/// A probe whose member is revoked is counted as arrived by the starting thread, so the timed
/// barrier still completes; a worker that claimed it first takes part. Either way the region
/// that follows, with a barrier, runs with both members.
#[test]
fn probe_revocation_then_barrier() {
    model(2, || {
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(ProbeFirst)
            .wait(SpinThenPark::new(Duration::ZERO))
            .build()
            .unwrap();
        let arrived = AtomicUsize::new(0);
        rt.region(|team| {
            assert_eq!(team.size(), 2);
            arrived.fetch_add(1, Ordering::Relaxed);
            team.barrier();
            assert_eq!(arrived.load(Ordering::Relaxed), 2);
        });
        assert_eq!(rt.stats().probes, 1);
    });
    PROBE_REVOKED.assert_both("the probe's member revoked");
}

static B_STOLEN: Outcomes = Outcomes::new();

/// A join from outside the pool on two threads: the caller takes index 0, and its first join
/// is a due beat, so it shares `b` when the worker searches or sleeps (waking it) and keeps it
/// private while the worker is still starting. The worker steals `b` or the caller takes it
/// back; a stolen `b`'s latch wakes the caller. No interleaving loses a wake-up (loom reports
/// a thread asleep forever as a deadlock), and both outcomes occur.
#[test]
fn join_shares_b_and_the_latch_wakes_the_caller() {
    model(2, || {
        let rt = runtime(2, Duration::ZERO, false);
        // The worker starts and goes to sleep before the join, in some executions.
        rt.region(|_| {});
        let (a, b) = rt.join(|| 1, asat_core::current_thread_index);
        assert_eq!(a, 1);
        B_STOLEN.record(b == Some(1));
        assert!(b == Some(0) || b == Some(1), "{b:?}");
    });
    B_STOLEN.assert_both("b run by the worker");
}

/// Lets one thread take tasks at the first call from outside, both from the second on.
#[derive(Debug, Default)]
struct Rising(std::sync::atomic::AtomicUsize);

impl Policy for Rising {
    fn name(&self) -> &str {
        "rising"
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        Plan::run(start.max_threads)
    }

    fn task_workers(&self, _max_threads: usize) -> usize {
        if self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 0 {
            1
        } else {
            2
        }
    }
}

static RISE_STOLEN: Outcomes = Outcomes::new();

/// Two joins from outside on two threads: the first lets the caller alone take tasks, so the
/// worker, once it has served a region, sleeps kept out in some executions (uncounted as a
/// sleeper that may take tasks, so no share wakes it); the second lets it in, which wakes
/// it. No interleaving leaves a thread asleep, and the worker steals the second join's `b` in
/// some executions. (That the rise is what wakes a worker kept out is checked by the
/// `steal_policy` tests: with no thread to share with, a join's `b` may stay private, so a
/// model cannot require the steal.)
#[test]
fn a_worker_kept_out_is_woken_when_the_number_lets_it_in() {
    model(2, || {
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(Rising::default())
            .wait(SpinThenPark::new(Duration::ZERO))
            .timing(false)
            .build()
            .unwrap();
        let (_, b) = rt.join(|| 1, asat_core::current_thread_index);
        assert_eq!(b, Some(0), "the worker was kept out");
        rt.region(|_| {});
        let (a, b) = rt.join(|| 1, asat_core::current_thread_index);
        assert_eq!(a, 1);
        assert!(b == Some(0) || b == Some(1), "{b:?}");
        RISE_STOLEN.record(b == Some(1));
    });
    RISE_STOLEN.assert_both("b run by the worker let in");
}

static SPAWN_STOLEN: Outcomes = Outcomes::new();

/// A scope from outside the pool on two threads: the caller takes index 0 and its spawned job
/// goes on its deque, where the worker steals it or the caller, waiting for the scope's count,
/// runs it; a broadcast puts a part in each thread's mail. The count's last decrement wakes
/// the caller in every interleaving, the job's write is visible once the scope returns, and
/// both threads run the spawned job in some executions.
#[test]
fn scope_spawns_are_stolen_or_run_by_the_owner_and_the_count_wakes_it() {
    model(2, || {
        let rt = runtime(2, Duration::ZERO, false);
        // The worker starts and goes to sleep before the scope, in some executions.
        rt.region(|_| {});
        let ran_on = AtomicUsize::new(0);
        let parts = AtomicUsize::new(0);
        rt.scope(|s| {
            s.spawn(|_| {
                let me = asat_core::current_thread_index().expect("a thread of the pool");
                ran_on.store(me + 1, Ordering::Relaxed);
            });
            s.spawn_broadcast(|_, ctx| {
                parts.fetch_or(1 << ctx.index(), Ordering::Relaxed);
            });
        });
        let who = ran_on.load(Ordering::Relaxed);
        assert!(who == 1 || who == 2, "{who}");
        assert_eq!(parts.load(Ordering::Relaxed), 0b11);
        SPAWN_STOLEN.record(who == 2);
    });
    SPAWN_STOLEN.assert_both("the spawned job run by the worker");
}
