//! A borrowed closure run by another thread while the thread that owns its borrows waits:
//! what [`Runtime::install`](crate::Runtime::install) needs to hand its `op` (which may borrow
//! the caller's stack) to a spawn thread, whose queue only takes `'static` jobs.
//!
//! The protocol: [`run_elsewhere`] packs `op`, a slot for its outcome and a completion flag
//! into one job, erases the job's lifetime and gives it to `submit`. Whoever ends up with the
//! job either runs it (the outcome goes to the slot, then the flag is set) or drops it unrun
//! (the flag is set last, after `op` is dropped). The flag is the last thing the job touches
//! that the caller owns; the wake-up after it goes through an owned [`Thread`] handle.
//! `run_elsewhere` does not return or unwind before the flag is set, even when `submit`
//! panics, so the borrows the job holds outlive every use of them.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, Thread};

/// A job for a queue of `'static` jobs.
pub(crate) type Job = Box<dyn FnOnce() + Send + 'static>;

/// Sets the completion flag and wakes the waiting thread when dropped, whether the job ran or
/// not.
struct Done<'a> {
    flag: &'a AtomicBool,
    waiter: Thread,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.flag.store(true, Ordering::Release);
        // The caller may return as soon as it sees the flag: nothing it owns is touched after
        // the store (the handle is the job's own clone).
        self.waiter.unpark();
    }
}

/// The job's state. Fields drop in order, so a job dropped unrun drops `op` before it sets
/// the flag.
struct Handoff<'a, F, R> {
    op: F,
    slot: &'a mut Option<thread::Result<R>>,
    done: Done<'a>,
}

impl<F: FnOnce() -> R, R> Handoff<'_, F, R> {
    fn run(self) {
        let Handoff { op, slot, done } = self;
        *slot = Some(catch_unwind(AssertUnwindSafe(op)));
        drop(done);
    }
}

/// Runs `op` on whichever thread runs the job handed to `submit`, and waits for it: returns
/// `op`'s result, resumes its panic, or returns `None` when the job was dropped without
/// running. `submit` must see that the job is run or dropped eventually; until then the
/// calling thread waits (parked). A panic of `submit` propagates once the job is run or
/// dropped.
pub(crate) fn run_elsewhere<F, R>(op: F, submit: impl FnOnce(Job)) -> Option<R>
where
    F: FnOnce() -> R + Send,
    R: Send,
{
    let flag = AtomicBool::new(false);
    let mut slot = None;
    let handoff = Handoff {
        op,
        slot: &mut slot,
        done: Done {
            flag: &flag,
            waiter: thread::current(),
        },
    };
    let job: Box<dyn FnOnce() + Send + '_> = Box::new(move || handoff.run());
    // SAFETY: only the lifetime changes (the same trait object, the same layout). The job
    // borrows `flag` and `slot` (and whatever `op` borrows, which outlives this call); it sets
    // `flag` after its last use of them, when it runs or is dropped (`Handoff`'s field order).
    // This function does not return or unwind before it has seen `flag` set: `submit`'s panic
    // is caught and resumed after the wait, and the wait itself cannot panic. So the borrows
    // are alive whenever the job uses them.
    let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
    let submitted = catch_unwind(AssertUnwindSafe(|| submit(job)));
    while !flag.load(Ordering::Acquire) {
        thread::park();
    }
    if let Err(payload) = submitted {
        resume_unwind(payload);
    }
    slot.map(|outcome| match outcome {
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
