//! A borrowed closure run by another thread while the thread that owns its borrows waits:
//! what [`Runtime::install`](crate::Runtime::install) needs to hand its `op` (which may borrow
//! the caller's stack) to a spawn thread, whose queue only takes `'static` jobs.
//!
//! The protocol: [`run_elsewhere`] keeps `op`, a slot for its outcome, a completion flag and
//! its own thread handle in a [`Handoff`] on its stack, and gives `submit` a `'static` job
//! that holds only a raw pointer to it. Whoever ends up with the job either runs it (`op` is
//! taken out and run, the outcome goes to the slot, then the flag is set) or drops it unrun
//! (the flag is set, `op` stays in the handoff for the caller to drop). The flag is the last
//! thing the job touches that the caller owns; the wake-up after it goes through the job's own
//! [`Thread`] handle of the caller. `run_elsewhere` does not return or unwind
//! before the flag is set, even when `submit` panics, so the handoff outlives every use.
//!
//! Nothing the running thread holds refers to the handoff by reference, and `op` (whose
//! captures may be references to the caller's data) is called and gone before the flag is
//! set: the caller may use its data again, and free the handoff, as soon as it sees the flag,
//! while the job's own functions are still on the other thread's stack. A reference held in
//! one of their arguments would be required to stay valid until they return.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, Thread};

/// A job for a queue of `'static` jobs.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// What the caller and the job share, on the caller's stack.
struct Handoff<F, R> {
    /// Taken out by the job when it runs; dropped with the handoff otherwise.
    op: UnsafeCell<Option<F>>,
    /// Written once by the job, before the flag is set.
    slot: UnsafeCell<Option<thread::Result<R>>>,
    flag: AtomicBool,
}

impl<F: FnOnce() -> R, R> Handoff<F, R> {
    /// Runs `op`, stores its outcome, sets the flag and wakes `waiter`.
    ///
    /// # Safety
    /// `this` is alive and its flag not set; the job is run once, and nothing else touches
    /// `op` or the slot until the flag is set.
    unsafe fn run(this: *const Self, waiter: Thread) {
        // SAFETY: this function's contract; `op` is taken out and the cell left `None`.
        let op = unsafe { (*(*this).op.get()).take() }.expect("a handoff runs once");
        let outcome = catch_unwind(AssertUnwindSafe(op));
        // SAFETY: as above; the caller reads the slot only once the flag is set.
        unsafe { *(*this).slot.get() = Some(outcome) };
        // SAFETY: as above.
        unsafe { Self::finish(this, waiter) };
    }

    /// Sets the flag and wakes the caller, `waiter`: the last access to the handoff.
    ///
    /// # Safety
    /// `this` is alive and its flag not set.
    unsafe fn finish(this: *const Self, waiter: Thread) {
        // SAFETY: alive until this store (this function's contract); the caller may free the
        // handoff once it sees it.
        unsafe { (*this).flag.store(true, Ordering::Release) };
        waiter.unpark();
    }
}

/// The job given to `submit`: a pointer to the caller's [`Handoff`] and the caller's handle;
/// runs it, or sets its flag when dropped unrun.
struct Remote<F: FnOnce() -> R, R> {
    handoff: *const Handoff<F, R>,
    /// Taken by whichever of `run` and `drop` sets the flag.
    waiter: Option<Thread>,
}

// SAFETY: the handoff is used by one thread at a time (the job runs `op`, writes the slot and
// sets the flag; the caller reads after it sees the flag); `op` and its result are `Send`
// (`run_elsewhere`'s bounds), `AtomicBool` is `Sync` and `Thread` is `Send`.
unsafe impl<F: FnOnce() -> R + Send, R: Send> Send for Remote<F, R> {}

impl<F: FnOnce() -> R, R> Remote<F, R> {
    fn run(mut self) {
        if let Some(waiter) = self.waiter.take() {
            // SAFETY: the caller keeps the handoff alive until its flag is set, which only
            // this job does, once (the handle is taken once).
            unsafe { Handoff::run(self.handoff, waiter) };
        }
    }
}

impl<F: FnOnce() -> R, R> Drop for Remote<F, R> {
    fn drop(&mut self) {
        if let Some(waiter) = self.waiter.take() {
            // SAFETY: as in `run`: dropped unrun, the job sets the flag.
            unsafe { Handoff::finish(self.handoff, waiter) };
        }
    }
}

/// Runs `op` on whichever thread runs the job handed to `submit`, and waits for it: returns
/// `op`'s result, resumes its panic, or returns `None` when the job was dropped without
/// running (`op` is dropped here then). `submit` must see that the job is run or dropped
/// eventually; until then the calling thread waits (parked). A panic of `submit` propagates
/// once the job is run or dropped.
pub(crate) fn run_elsewhere<F, R>(op: F, submit: impl FnOnce(Job)) -> Option<R>
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    let handoff = Handoff {
        op: UnsafeCell::new(Some(op)),
        slot: UnsafeCell::new(None),
        flag: AtomicBool::new(false),
    };
    let remote = Remote {
        handoff: &raw const handoff,
        waiter: Some(thread::current()),
    };
    let job: Box<dyn FnOnce() + Send + '_> = Box::new(move || remote.run());
    // SAFETY: only the lifetime changes (the same trait object, the same layout). The job
    // points to `handoff` (which holds `op`, and whatever `op` borrows outlives this call) and
    // sets its flag after its last use of it, when it runs or is dropped. This function does
    // not return or unwind before it has seen the flag set: `submit`'s panic is caught and
    // resumed after the wait, and the wait itself cannot panic.
    let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
    let submitted = catch_unwind(AssertUnwindSafe(|| submit(job)));
    while !handoff.flag.load(Ordering::Acquire) {
        thread::park();
    }
    let Handoff { op, slot, .. } = handoff;
    // Dropped unrun: `op` is still here, and goes first.
    drop(op);
    if let Err(payload) = submitted {
        resume_unwind(payload);
    }
    slot.into_inner().map(|outcome| match outcome {
        Ok(r) => r,
        Err(payload) => resume_unwind(payload),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A thread that runs (or drops) the jobs sent to it.
    fn runner(run: bool) -> (mpsc::Sender<Job>, thread::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel::<Job>();
        let h = thread::spawn(move || {
            for job in rx {
                if run {
                    job();
                }
            }
        });
        (tx, h)
    }

    #[test]
    fn a_borrowing_op_runs_on_the_other_thread_and_its_result_comes_back() {
        let (tx, h) = runner(true);
        let mut data = vec![1, 2, 3];
        let me = thread::current().id();
        let got = run_elsewhere(
            || {
                data.push(4);
                (thread::current().id(), data.iter().sum::<i32>())
            },
            |job| tx.send(job).unwrap(),
        );
        let (ran_on, sum) = got.unwrap();
        assert_ne!(ran_on, me);
        assert_eq!(sum, 10);
        assert_eq!(data, [1, 2, 3, 4]);
        drop(tx);
        h.join().unwrap();
    }

    #[test]
    fn the_ops_panic_comes_back_to_the_caller() {
        let (tx, h) = runner(true);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run_elsewhere(|| -> u8 { panic!("boom") }, |job| tx.send(job).unwrap())
        }));
        let payload = r.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
        drop(tx);
        h.join().unwrap();
    }

    #[test]
    fn a_job_dropped_unrun_gives_none_after_dropping_the_op() {
        let (tx, h) = runner(false);
        let dropped = AtomicBool::new(false);
        struct Flag<'a>(&'a AtomicBool);
        impl Drop for Flag<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let f = Flag(&dropped);
        let got = run_elsewhere(
            move || {
                let _f = &f;
                1
            },
            |job| tx.send(job).unwrap(),
        );
        assert_eq!(got, None);
        assert!(dropped.load(Ordering::SeqCst));
        drop(tx);
        h.join().unwrap();
    }

    #[test]
    fn a_submit_that_panics_after_queueing_waits_for_the_job_first() {
        let (tx, h) = runner(true);
        let ran = AtomicBool::new(false);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run_elsewhere(
                || {
                    thread::sleep(std::time::Duration::from_millis(20));
                    ran.store(true, Ordering::SeqCst);
                },
                |job| {
                    tx.send(job).unwrap();
                    panic!("submit failed");
                },
            )
        }));
        assert!(r.is_err());
        assert!(ran.load(Ordering::SeqCst), "returned before the job ended");
        drop(tx);
        h.join().unwrap();
    }
}
