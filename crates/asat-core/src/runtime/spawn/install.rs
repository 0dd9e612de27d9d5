//! [`Runtime::install`] (rayon's: `op` runs on a thread of the pool, the caller waits) and
//! [`Runtime::install_here`] (asat's: on the caller, with the runtime installed).
//!
//! `install` hands `op` to the runtime's spawn pool as a job (see the parent module) through
//! [`sys::handoff`](crate::sys::handoff), which lets the job borrow the caller's stack because
//! the caller waits until the job has run. A thread that already belongs to the runtime (a
//! member of one of its calls, or one of its spawn threads) runs `op` itself, as a rayon
//! worker does: handing it on would only add a wait, or a deadlock when every spawn thread
//! is the caller's.

use super::*;
use crate::sys::handoff;

impl Runtime {
    /// Runs `op` on a thread of this runtime and returns what it returns (rayon's
    /// `ThreadPool::install`): parallel calls made inside `op` (iterators, [`join`](crate::join),
    /// regions) run on this runtime, [`current_num_threads`](crate::current_num_threads) is its
    /// size, and the thread is one the runtime started, with the builder's
    /// [`stack_size`](crate::Builder::stack_size), [`thread_name`](crate::Builder::thread_name)
    /// and [`on_thread_start`](crate::Builder::on_thread_start) handler (a program that sets a
    /// large stack for deep recursion in `op` gets it). The calling thread waits; a panic in
    /// `op` propagates to it.
    ///
    /// The thread is one of the runtime's spawn threads (those that run
    /// [spawned](crate::spawn) jobs, started on demand and gone after
    /// [`SPAWN_IDLE_EXIT`] idle): `op` is member 0 of the calls it makes, and the runtime's
    /// workers the other members. Up to `max_threads` installs and spawned jobs run at once,
    /// the rest wait their turn, as in a rayon pool of that size. Handing `op` over costs a
    /// thread wake-up each way (microseconds; tens on a busy machine): a program that
    /// installs around every small call, and does not need the pool's threads, can use
    /// [`install_here`](Runtime::install_here) instead.
    ///
    /// `op` runs on the calling thread, with this runtime installed, when that thread already
    /// belongs to the runtime: inside one of its parallel calls (nested `install`), on one of
    /// its spawn threads, or on the thread it was built on with
    /// [`use_current_thread`](crate::ThreadPoolBuilder::use_current_thread). Also in a child
    /// made by `fork` (without `exec`), where the runtime's threads do not exist, and when the
    /// system refuses to start a spawn thread and none is running (see
    /// [`spawn`](crate::spawn)).
    ///
    /// What differs from rayon: [`current_thread_index`](crate::current_thread_index) is
    /// `None` in `op` outside the parallel calls it makes (a spawn thread holds no member
    /// index between calls), and a pool built with a
    /// [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler) runs `op` on a thread it
    /// started itself, not on one of the handler's.
    ///
    /// ```
    /// let pool = asat_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .thread_name(|i| format!("worker-{i}"))
    ///     .stack_size(64 << 20)
    ///     .build()?;
    /// let mut v = vec![1u64; 1000];
    /// let name = pool.install(|| {
    ///     assert_eq!(asat_core::current_num_threads(), 2);
    ///     v.iter_mut().for_each(|x| *x *= 2); // op may borrow the caller's data
    ///     std::thread::current().name().map(str::to_owned)
    /// });
    /// assert!(name.unwrap().starts_with("worker-"));
    /// assert_eq!(v.iter().sum::<u64>(), 2000);
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        if self.runs_on_this_thread() || self.forked() {
            return self.install_here(op);
        }
        match handoff::run_elsewhere(op, |job| self.push_job(job)) {
            Some(r) => r,
            None => unreachable!("the spawn pool runs every job it queues"),
        }
    }

    /// Runs `f` on the calling thread with this runtime installed: parallel calls made inside
    /// `f` run on it, and [`current_num_threads`](crate::current_num_threads) is its size. The
    /// calling thread is member 0 of every call it makes. No thread is woken to run `f`, so
    /// this costs nothing; but `f` runs with the caller's stack, name and thread-locals, not
    /// the pool's (what [`install`](Runtime::install) gives, as rayon's does). Returns what
    /// `f` returns; a panic in `f` propagates.
    ///
    /// ```
    /// let pool = asat_core::ThreadPoolBuilder::new().num_threads(2).build()?;
    /// let me = std::thread::current().id();
    /// let sum: u64 = pool.install_here(|| {
    ///     assert_eq!(std::thread::current().id(), me);
    ///     asat_core::join(|| 1, || 2).0 + asat_core::current_num_threads() as u64
    /// });
    /// assert_eq!(sum, 3);
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn install_here<R>(&self, f: impl FnOnce() -> R) -> R {
        crate::steal::install(self, f)
    }

    /// Whether a parallel call made on the calling thread runs on another thread of this
    /// runtime, as [`install`](Runtime::install) runs `op` (the caller waits): on a runtime
    /// whose threads carry what the program gave them, a
    /// [`thread_name`](crate::Builder::thread_name) or an
    /// [`on_thread_start`](crate::Builder::on_thread_start) handler (rayon's `thread_name`,
    /// `start_handler`), when the calling thread is not one of its threads.
    ///
    /// Elsewhere the thread that calls in takes part in its call (no hand-over, no wake-up);
    /// but a program that names its pool's threads, or sets them up in a start handler (a
    /// thread-local, a registration with another runtime), counts on its closures running on
    /// those threads, as rayon runs them. So on such a runtime the calls rayon has, `join`,
    /// `scope`, `scope_fifo`, `broadcast` and the parallel iterators' terminal calls, made
    /// from a thread that is not its own, run on one of its spawn threads (named and started
    /// as its workers are), which takes the caller's part. Not `in_place_scope`, whose `op`
    /// runs on the caller as in rayon (its spawned jobs run on the pool's threads), nor asat's
    /// regions ([`region`](Runtime::region), [`parallel_for`](Runtime::parallel_for), ...),
    /// whose member 0 is the caller. Where the system refuses to start a spawn thread and none
    /// runs, the caller runs the call itself, as `install` runs `op` then.
    ///
    /// ```
    /// let pool = asat_core::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .thread_name(|i| format!("worker-{i}"))
    ///     .build()?;
    /// assert!(pool.hands_calls_over());
    /// let names = pool.broadcast(|_| std::thread::current().name().map(str::to_owned));
    /// assert!(names.iter().all(|n| n.as_deref().is_some_and(|n| n.starts_with("worker-"))));
    /// pool.install(|| assert!(!pool.hands_calls_over()));
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    #[inline]
    pub fn hands_calls_over(&self) -> bool {
        self.inner.hooks.marks_threads() && !self.runs_on_this_thread() && !self.forked()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::atomic::AtomicUsize;
    use std::sync::mpsc;
    use std::thread;

    use super::*;
    use crate::{current_num_threads, current_thread_index, Fixed};

    /// Long enough for any of these waits on a loaded machine; reached only by a bug.
    const LIMIT: Duration = Duration::from_secs(60);

    thread_local! {
        static MARK: Cell<u32> = const { Cell::new(0) };
    }

    /// Recursion that needs about `mb` MiB of stack.
    fn deep(mb: u32) -> u32 {
        let mut buf = [0u8; 1 << 20];
        std::hint::black_box(&mut buf);
        if mb == 0 {
            buf[7] as u32
        } else {
            deep(mb - 1) + buf[9] as u32
        }
    }

    fn pool(threads: usize) -> Runtime {
        Runtime::builder()
            .max_threads(threads)
            .policy(Fixed::new(threads))
            .thread_name(|i| format!("pool-{i}"))
            .stack_size(64 << 20)
            .on_thread_start(|_| MARK.with(|m| m.set(7)))
            .build()
            .unwrap()
    }

    #[test]
    fn op_runs_on_a_thread_of_the_pool_with_its_name_stack_and_start_handler() {
        let rt = pool(2);
        MARK.with(|m| m.set(1));
        let me = thread::current().id();
        let mut v = vec![1u64; 64];
        let (id, name, mark, n, index) = rt.install(|| {
            v.iter_mut().for_each(|x| *x += 1);
            // 24 MiB of frames: more than a test thread's stack or a main thread's 8 MiB
            assert_eq!(deep(24), 0);
            let t = thread::current();
            let index = current_thread_index();
            (
                t.id(),
                t.name().map(str::to_owned),
                MARK.with(Cell::get),
                current_num_threads(),
                index,
            )
        });
        assert_ne!(id, me);
        assert!(
            name.as_deref().is_some_and(|n| n.starts_with("pool-")),
            "{name:?}"
        );
        assert_eq!((mark, n, index), (7, 2, None));
        assert_eq!(v, [2; 64]);
        assert_eq!(MARK.with(Cell::get), 1, "the caller's thread-local");
        // its parallel calls are the pool's regions, op their member 0
        let regions = rt.stats().regions;
        let (op_thread, members) = rt.install(|| {
            let seen = Mutex::new(Vec::new());
            rt.region(|team| seen.lock().push((team.index(), thread::current().id())));
            (thread::current().id(), seen.into_inner())
        });
        assert_eq!(rt.stats().regions, regions + 1);
        assert!(members.contains(&(0, op_thread)), "{members:?}");
        assert!(
            !members.iter().any(|(_, t)| *t == me),
            "the caller ran a member"
        );
    }

    #[test]
    fn a_thread_of_the_runtime_runs_op_itself() {
        let rt = pool(2);
        let me = thread::current().id();
        // nested install, on the spawn thread running the outer one
        let (outer, inner) = rt.install(|| {
            (
                thread::current().id(),
                rt.install(|| thread::current().id()),
            )
        });
        assert_eq!(outer, inner);
        assert_ne!(outer, me);
        // install inside a member of one of its regions: on that member, under its index
        rt.install_here(|| {
            rt.region(|team| {
                let (t, i) = rt.install(|| (thread::current().id(), current_thread_index()));
                assert_eq!((t, i), (thread::current().id(), Some(team.index())));
            })
        });
        // install_here runs on the caller
        assert_eq!(
            rt.install_here(|| (thread::current().id(), current_num_threads())),
            (me, 2)
        );
    }

    #[test]
    fn a_panic_in_op_reaches_the_caller_and_the_pool_goes_on() {
        let rt = pool(2);
        for _ in 0..3 {
            let r = catch_unwind(AssertUnwindSafe(|| {
                rt.install(|| -> u8 { panic!("in op") })
            }));
            assert_eq!(*r.unwrap_err().downcast_ref::<&str>().unwrap(), "in op");
            assert_eq!(rt.install(|| 5), 5);
        }
        assert_eq!(rt.stats().spawn_panics, 0, "not a spawned job's panic");
    }

    #[test]
    fn installs_from_several_threads_run_at_once() {
        // Two installs that each wait for the other: they must run on two threads at once.
        let rt = pool(2);
        let (to_a, from_b) = mpsc::channel();
        let (to_b, from_a) = mpsc::channel();
        let running = AtomicUsize::new(0);
        thread::scope(|s| {
            let side = |tx: mpsc::Sender<u8>, rx: mpsc::Receiver<u8>| {
                let (rt, running) = (&rt, &running);
                move || {
                    rt.install(move || {
                        running.fetch_add(1, Ordering::SeqCst);
                        tx.send(1).unwrap();
                        rx.recv_timeout(LIMIT)
                            .expect("the other install did not run")
                    })
                }
            };
            let a = s.spawn(side(to_b, from_b));
            let b = s.spawn(side(to_a, from_a));
            assert_eq!(a.join().unwrap() + b.join().unwrap(), 2);
        });
        assert_eq!(running.load(Ordering::SeqCst), 2);
    }
}
