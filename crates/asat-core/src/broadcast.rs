//! [`Runtime::broadcast`] and [`Runtime::spawn_broadcast`] (rayon's `broadcast` and
//! `spawn_broadcast`): one closure run once by every member of a team.
//!
//! A broadcast is one SPMD region of the pool's size ([`Runtime::region_of`]`(max_threads)`):
//! every member runs `op` with a [`BroadcastContext`] made from its [`Team`] and writes the
//! result to the slot of its index (one slot per possible member, `max_threads` of them, each
//! behind its own lock); after the join the filled slots, the first `size`, are the results.
//! What users see (which team, nested calls, panics) is documented on
//! [`Runtime::broadcast`].

use std::fmt;
use std::marker::PhantomData;

use parking_lot::Mutex;

use crate::{Runtime, Team};

/// What a broadcast's `op` is told about its call (rayon's `BroadcastContext`): its index in
/// the team that receives the broadcast, and that team's size (see [`Runtime::broadcast`]).
///
/// Like the [`Team`] it comes from, it belongs to one member: it is neither `Send` nor `Sync`.
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    _team: PhantomData<&'a Team<'a>>,
}

impl<'a> BroadcastContext<'a> {
    /// The context of `team`'s member: its index and the team's size, as a broadcast gives
    /// them. For clients that run broadcast jobs of their own on a region's team (asat-iter's
    /// `Scope::spawn_broadcast` runs one on each member of a scope's team).
    pub fn of(team: &'a Team<'a>) -> Self {
        BroadcastContext {
            index: team.index(),
            num_threads: team.size(),
            _team: PhantomData,
        }
    }

    /// The context of thread `index` of `num_threads` that run a scope's broadcast.
    pub(crate) fn new(index: usize, num_threads: usize) -> Self {
        BroadcastContext {
            index,
            num_threads,
            _team: PhantomData,
        }
    }

    /// This member's index, `0..num_threads()`; 0 is the thread that called `broadcast`.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of threads that run this broadcast: the pool's size, except where the
    /// broadcast runs inline (see [`Runtime::broadcast`]).
    #[inline]
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

impl fmt::Debug for BroadcastContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BroadcastContext")
            .field("index", &self.index)
            .field("num_threads", &self.num_threads)
            .finish()
    }
}

impl Runtime {
    /// Runs `op` once on every member of a team of this runtime (rayon's
    /// `ThreadPool::broadcast`) and returns the results in member order. It is one region.
    ///
    /// - **Who receives it.** Every thread of the pool, as in rayon: a team of
    ///   [`max_threads`](Runtime::max_threads) ([`region_of`](Runtime::region_of)), whatever
    ///   the policy would give a region (the policy is neither asked nor told), so that `op`
    ///   reaches every worker that later regions may use (per-thread set-up) and members may
    ///   wait for each other (a `std::sync::Barrier` of `current_num_threads()`). The members
    ///   are distinct threads, member 0 being the caller (on a runtime whose threads carry a
    ///   name or start handler, one of its spawn threads where the caller is not one of its
    ///   threads: [`hands_calls_over`](Runtime::hands_calls_over));
    ///   [`BroadcastContext::num_threads`] is the team's size, the length of the returned
    ///   `Vec`. Fewer members than the pool's size only in the cases below (and when the
    ///   system refuses to start threads).
    /// - **Nested.** A broadcast started inside a region or parallel call (on any runtime) runs
    ///   inline on the calling member as a team of one, as every nested region does: `op` runs
    ///   once, with index 0 of 1, and the result is a `Vec` of one (the member's
    ///   [`current_thread_index`](crate::current_thread_index) stays its own). So does a
    ///   broadcast that found another thread's region holding the runtime for
    ///   [`REGION_LOCK_WAIT`](crate::REGION_LOCK_WAIT) (counted in
    ///   [`RuntimeStats::inline_busy`](crate::RuntimeStats)), and every broadcast in a child
    ///   made by `fork`.
    ///
    /// # Panics
    ///
    /// If `op` panics on a member: the first panic is re-raised once the whole team has run
    /// `op` and joined; the other members' results are dropped, and the runtime stays usable.
    ///
    /// ```
    /// use asat_core::{Fixed, Runtime};
    ///
    /// let rt = Runtime::builder().max_threads(3).policy(Fixed::new(3)).build()?;
    /// let got = rt.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
    /// assert_eq!(got, [(0, 3), (1, 3), (2, 3)]);
    /// // inside a region, a broadcast runs on the calling member alone
    /// rt.region(|_| assert_eq!(rt.broadcast(|ctx| ctx.num_threads()), [1]));
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        if self.hands_calls_over() {
            // `op` runs on the runtime's own threads (one of its spawn threads is member 0).
            return self.install(|| self.broadcast_here(&op));
        }
        self.broadcast_here(op)
    }

    /// [`broadcast`](Runtime::broadcast) with the calling thread as member 0.
    fn broadcast_here<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        let results: Vec<Mutex<Option<R>>> =
            (0..self.max_threads()).map(|_| Mutex::new(None)).collect();
        self.region_of(self.max_threads(), |team| {
            let r = op(BroadcastContext::of(team));
            *results[team.index()].lock() = Some(r);
        });
        // A region that returned ran every member of its team, members 0..size: the filled
        // slots are the first ones.
        results.into_iter().map_while(Mutex::into_inner).collect()
    }

    /// Queues a job that runs [`broadcast`](Runtime::broadcast)`(op)` (rayon's
    /// `ThreadPool::spawn_broadcast`) and returns at once. See [`spawn`](crate::spawn) for how
    /// jobs run and what happens to their panics (a panic of `op` on any member is the job's).
    ///
    /// ```
    /// use std::sync::mpsc;
    ///
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let (tx, rx) = mpsc::channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// pool.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.num_threads()).unwrap());
    /// let n = rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap();
    /// assert!((1..=2).contains(&n));
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        self.spawn(move || {
            // A spawned job runs with its runtime installed.
            Runtime::with_current(|rt| rt.broadcast(&op));
        });
    }
}

/// [`Runtime::broadcast`] on the current runtime (rayon's `broadcast`): the one
/// [installed](Runtime::install) on the calling thread, else the global one.
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    Runtime::with_current(|rt| rt.broadcast(op))
}

/// [`Runtime::spawn_broadcast`] on the current runtime (rayon's `spawn_broadcast`).
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    Runtime::with_current(|rt| rt.spawn_broadcast(op));
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::{current_thread_index, Fixed, Plan, Policy, RegionStart, Single};

    /// A policy that cycles through team sizes, region after region (a team smaller than
    /// the pool, as ASAT gives on a crowded machine).
    #[derive(Debug)]
    struct Cycling {
        sizes: Vec<usize>,
        next: AtomicUsize,
    }

    impl Policy for Cycling {
        fn name(&self) -> &str {
            "cycling"
        }
        fn plan(&self, _start: &RegionStart) -> Plan {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            Plan::run(self.sizes[i % self.sizes.len()])
        }
    }

    /// Checks one broadcast's results on a team of `n`: indices in order, one size, distinct
    /// threads, and each member's `current_thread_index`.
    fn check_team(rt: &Runtime, n: usize) {
        let got = rt.broadcast(|ctx| {
            (
                ctx.index(),
                ctx.num_threads(),
                current_thread_index(),
                std::thread::current().id(),
            )
        });
        assert_eq!(got.len(), n);
        let threads: BTreeSet<_> = got.iter().map(|r| format!("{:?}", r.3)).collect();
        assert_eq!(threads.len(), n, "each member is a thread of its own");
        assert_eq!(
            got[0].3,
            std::thread::current().id(),
            "member 0 is the caller"
        );
        for (i, r) in got.iter().enumerate() {
            assert_eq!((r.0, r.1, r.2), (i, n, Some(i)));
        }
    }

    #[test]
    fn every_thread_of_the_pool_runs_op_once_whatever_the_policys_team() {
        for n in 1..=4 {
            let rt = Runtime::builder()
                .max_threads(4)
                .policy(Fixed::new(n))
                .build()
                .unwrap();
            for _ in 0..20 {
                check_team(&rt, 4);
            }
            let runs = AtomicUsize::new(0);
            let got = rt.broadcast(|_| runs.fetch_add(1, Ordering::Relaxed));
            assert_eq!(got.len(), 4);
            assert_eq!(runs.into_inner(), 4);
        }
    }

    #[test]
    fn the_policy_is_not_asked() {
        let cycling = std::sync::Arc::new(Cycling {
            sizes: vec![1, 3, 2],
            next: AtomicUsize::new(0),
        });
        let rt = Runtime::builder()
            .max_threads(4)
            .shared_policy(cycling.clone())
            .build()
            .unwrap();
        for round in 0..3 {
            check_team(&rt, 4);
            assert_eq!(rt.stats().last_team, 4, "round {round}");
            // the policy's own regions still have its teams
            rt.region(|_| ());
            assert_eq!(rt.stats().last_team, [1, 3, 2][round], "round {round}");
        }
        assert_eq!(cycling.next.load(Ordering::Relaxed), 3);
        let single = Runtime::builder()
            .max_threads(3)
            .policy(Single)
            .build()
            .unwrap();
        // Members meet at a barrier of the pool's size, as rayon programs' do.
        let met = std::sync::Barrier::new(3);
        single.broadcast(|_| {
            met.wait();
        });
        check_team(&single, 3);
        // The free function runs on the installed runtime.
        single.install(|| assert_eq!(broadcast(|ctx| ctx.num_threads()), [3, 3, 3]));
    }

    #[test]
    fn a_nested_broadcast_runs_inline_as_a_team_of_one() {
        let rt = Runtime::builder()
            .max_threads(3)
            .policy(Fixed::new(3))
            .build()
            .unwrap();
        let other = Runtime::builder().max_threads(2).build().unwrap();
        let got = rt.broadcast(|outer| {
            let inner = rt.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
            // A member of any runtime runs a broadcast of another inline too.
            let elsewhere = other.broadcast(|ctx| ctx.num_threads());
            // The member's own index stays what it was.
            (outer.index(), inner, elsewhere, current_thread_index())
        });
        let want: Vec<_> = (0..3)
            .map(|i| (i, vec![(0, 1)], vec![1], Some(i)))
            .collect();
        assert_eq!(got, want);
        rt.region(|team| {
            let r = rt.broadcast(|ctx| ctx.index() + 10 * ctx.num_threads());
            assert_eq!(r, [10], "member {}", team.index());
        });
    }

    #[test]
    fn a_panic_is_reraised_after_the_team_joins_and_the_runtime_goes_on() {
        let rt = Runtime::builder()
            .max_threads(3)
            .policy(Fixed::new(3))
            .build()
            .unwrap();
        for bad in 0..3 {
            let ran = AtomicUsize::new(0);
            let r = catch_unwind(AssertUnwindSafe(|| {
                rt.broadcast(|ctx| {
                    ran.fetch_add(1, Ordering::SeqCst);
                    if ctx.index() == bad {
                        std::panic::panic_any(format!("member {bad} panics (expected)"));
                    }
                    vec![ctx.index(); 100]
                })
            }));
            let p = r.unwrap_err();
            assert_eq!(
                p.downcast_ref::<String>().map(String::as_str),
                Some(format!("member {bad} panics (expected)").as_str())
            );
            // Every member ran: a panic does not cut the others short.
            assert_eq!(ran.into_inner(), 3);
            check_team(&rt, 3);
        }
    }

    #[test]
    fn a_broadcast_that_finds_the_runtime_busy_runs_inline() {
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(Fixed::new(2))
            .build()
            .unwrap();
        let (held_tx, held_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let done_rx = parking_lot::Mutex::new(done_rx);
        std::thread::scope(|s| {
            s.spawn(|| {
                rt.region(|team| {
                    if team.index() == 0 {
                        held_tx.send(()).unwrap();
                        // Bounded: the test fails rather than hangs if the broadcast waits.
                        let _ = done_rx.lock().recv_timeout(Duration::from_secs(60));
                    }
                });
            });
            held_rx.recv_timeout(Duration::from_secs(60)).unwrap();
            let got = rt.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
            done_tx.send(()).unwrap();
            assert_eq!(got, [(0, 1)]);
        });
        assert!(rt.stats().inline_busy >= 1);
        check_team(&rt, 2);
    }
}
