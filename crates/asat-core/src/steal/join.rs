//! `join` on the work-stealing engine: the hot path on a thread that runs the runtime's tasks,
//! and the cold path of a call from outside (see the module docs of `steal`).

use std::panic::resume_unwind;
use std::sync::Arc;

use super::frame::Frame;
use super::job::StackJob;
use super::latch::Latch;
use super::{ctx, Ctx};
use crate::payload::catch;
use crate::runtime::current::{self, Member};
use crate::runtime::InRegion;
use crate::sync::Ordering;
use crate::wait::{Event, WaitInfo, WaitSite};
use crate::Runtime;

/// rayon's `join` on `rt`: `a` on the calling thread, `b` there too unless another thread of
/// the runtime took it meanwhile. A panic of either is raised here once both are done; `b` is
/// dropped without running when `a` panicked and nobody had taken it.
pub(crate) fn join<A, B, RA, RB>(rt: &Runtime, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_on(rt, a, b, Share::AtBeat)
}

/// When a join's `b` is offered to the runtime's other threads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Share {
    /// At the calling thread's beat (module docs): a join whose frame stays private costs
    /// little more than calling both closures.
    AtBeat,
    /// At once, waking a sleeping thread for it: for halves known to be long.
    Now,
}

/// [`join`] with `b` offered as `share` says.
fn join_on<A, B, RA, RB>(rt: &Runtime, a: A, b: B, share: Share) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    ctx::with(|c| match c {
        Some(c) if c.rt.id() == rt.id() => match share {
            Share::AtBeat => join_here::<false, _, _, _, _>(c, a, b),
            Share::Now => join_here::<true, _, _, _, _>(c, a, b),
        },
        _ => join_cold(rt, a, b, share),
    })
}

/// [`join`] on the current runtime: the runtime whose tasks the calling thread runs, if any
/// (installing a runtime hides the tasks' context, so it is the current runtime then), else
/// the installed or global one, from outside; `b` offered as `share` says.
#[inline]
pub(crate) fn join_current<A, B, RA, RB>(a: A, b: B, share: Share) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    // The share decided here, where it is a constant, so that each kind of join is its own
    // code (the recursion of a join's closures runs through this function).
    match share {
        Share::AtBeat => current::<false, _, _, _, _>(a, b),
        Share::Now => current::<true, _, _, _, _>(a, b),
    }
}

/// [`join_current`] with `b` shared at once (`NOW`) or at the beat. The quickest join (no
/// frame to keep, no beat due: [`ctx::quick`]) is inlined where it is called; every other
/// goes through [`framed`], so that a recursion's own function saves no more registers than
/// that needs.
#[inline]
fn current<const NOW: bool, A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    if !NOW && ctx::quick() {
        let ra = a();
        return (ra, b());
    }
    framed::<NOW, _, _, _, _>(a, b)
}

/// [`current`]'s join that may keep a frame, share work or call from outside.
#[inline(never)]
fn framed<const NOW: bool, A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    ctx::with(|c| match c {
        Some(c) => join_here::<NOW, _, _, _, _>(c, a, b),
        None => Runtime::with_current(|rt| {
            let share = if NOW { Share::Now } else { Share::AtBeat };
            join_cold(rt, a, b, share)
        }),
    })
}

/// The hot path: the calling thread runs tasks of the runtime. `SHARE_NOW`: `b`'s frame is
/// shared at once (a loop's split, see `split`), instead of at the thread's beat.
#[inline]
pub(super) fn join_here<const SHARE_NOW: bool, A, B, RA, RB>(c: &Ctx<'_>, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    if !SHARE_NOW && !c.frames.wanted() {
        // Enough older frames to share (frame module docs): this join keeps none.
        c.offer();
        let ra = a();
        return (ra, b());
    }
    let job = StackJob::new(b, Latch::on(c.event));
    let frame = c.frames.frame(job.as_task());
    // SAFETY: `frame` stays here until `settle` unlinks it below, or the guard does if `a`
    // unwinds; the joins `a` makes unlink theirs before they return or unwind.
    unsafe { c.frames.push(&frame) };
    c.frames_changed();
    if SHARE_NOW {
        c.share_now();
    } else {
        c.offer();
    }
    // If `a` unwinds, the guard settles the frame before `job` goes (`b` is dropped unrun
    // unless another thread took it, which the guard then waits for).
    let guard = Unwinding {
        c,
        frame: &frame,
        job: &job,
    };
    let ra = a();
    std::mem::forget(guard);
    if c.settle(&frame) {
        // SAFETY: `settle` says the task is this thread's alone, never run.
        return (ra, unsafe { job.take_func() }());
    }
    c.run_until(&|| job.latch().probe(), WaitSite::Join);
    match job.into_result() {
        Ok(rb) => (ra, rb),
        Err(p) => resume_unwind(p),
    }
}

/// Settles a join's frame while its `a` unwinds (see [`join_here`]).
struct Unwinding<'c, 'a, B, RB>
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    c: &'c Ctx<'a>,
    frame: &'c Frame,
    job: &'c StackJob<B, RB>,
}

impl<B, RB> Drop for Unwinding<'_, '_, B, RB>
where
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    fn drop(&mut self) {
        if !self.c.settle(self.frame) {
            let job = self.job;
            self.c.run_until(&|| job.latch().probe(), WaitSite::Join);
            job.discard_result();
        }
    }
}

impl Ctx<'_> {
    /// Unlinks a join's frame once its `a` has returned: true when `b` is this thread's to
    /// run (its frame stayed private, or its task was taken back from the deque), false when
    /// another thread took it.
    #[inline]
    fn settle(&self, frame: &Frame) -> bool {
        let shared = self.frames.pop(frame);
        self.frames_changed();
        if !shared {
            return true;
        }
        match self.deque.pop() {
            Some(t) if t.is(frame.task()) => true,
            Some(other) => {
                // An older frame of this thread's, left there while this join's was stolen
                // and the thread ran it inside an inner wait: put it back where it was.
                self.deque.push(other);
                false
            }
            None => false,
        }
    }
}

/// A call from a thread that runs no task of the runtime: `join` on [`cold`].
#[cold]
fn join_cold<A, B, RA, RB>(rt: &Runtime, a: A, b: B, share: Share) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    let serial = |(a, b): (A, B)| {
        let ra = a();
        (ra, b())
    };
    cold(rt, (a, b), |(a, b)| join_on(rt, a, b, share), serial)
}

/// Runs `f(data)` as a task of `rt` for a thread that runs none of its tasks: on the calling
/// thread as index 0 when that is free (it then runs the pool's tasks while it waits), or
/// handed to the workers through the injector while the calling thread sleeps; on a runtime
/// whose threads the caller is not one of and must be ([`Runtime::hands_calls_over`]), on one
/// of its spawn threads, as `install` runs `op`. `serial(data)` instead where no thread of
/// the pool may help: a `fork`ed child, a pool of one thread whose index 0 another call
/// holds, or a region's member while index 0 is taken (the workers may all be members of
/// that region, waiting for this one; both halves then run here, as a nested region would).
/// A pool of one thread seats its caller too, so that the joins `f` makes take the quick path
/// instead of each coming back here.
pub(super) fn cold<D, R>(
    rt: &Runtime,
    data: D,
    f: impl FnOnce(D) -> R + Send,
    serial: impl FnOnce(D) -> R,
) -> R
where
    D: Send,
    R: Send,
{
    let inner = rt.inner();
    if rt.forked() {
        return serial(data);
    }
    if rt.hands_calls_over() {
        // On one of the runtime's own threads, which takes index 0 or hands in from there.
        return rt.install(move || f(data));
    }
    let _call = start_call(rt);
    let (data, f) = match seat(rt, (data, f), |(data, f)| f(data)) {
        Ok(r) => return r,
        Err(back) => back,
    };
    if inner.max_threads == 1 || Runtime::in_region() {
        return serial(data);
    }
    hand_in(rt, move || f(data))
}

/// Hands `f` to `rt`'s workers through the injector and sleeps until one has run it; raises
/// its panic here.
pub(super) fn hand_in<R: Send>(rt: &Runtime, f: impl FnOnce() -> R + Send) -> R {
    let inner = rt.inner();
    let event = own_event();
    let job = StackJob::new(f, Latch::on_own(Arc::clone(&event)));
    inner.tasks().injector.push(job.as_task());
    inner.calls_notify();
    let info = WaitInfo {
        site: WaitSite::Join,
        member: 0,
        team_size: inner.max_threads,
    };
    event.wait_until(|| job.latch().probe(), &*inner.wait, &info);
    match job.into_result() {
        Ok(r) => r,
        Err(p) => resume_unwind(p),
    }
}

/// Readies `rt` for a call from outside its tasks: its workers started, the policy's number of
/// task workers asked, and the call counted (see
/// [`Tasks::busy`](super::tasks::Tasks::busy)) until the guard is dropped. Not in a `fork`ed
/// child, which has no workers (callers check).
pub(super) fn start_call(rt: &Runtime) -> super::Call<'_> {
    let inner = rt.inner();
    debug_assert!(!rt.forked());
    let tasks = inner.tasks();
    tasks.calls.fetch_add(1, Ordering::Relaxed);
    // Counted before the policy is asked, so that the policy hears of the end even when its
    // answer unwinds.
    let call = super::Call(inner);
    // The number first: workers this call starts must not steal as if every one could.
    inner.set_task_workers(inner.policy.task_workers(inner.max_threads));
    rt.start_task_workers();
    call
}

/// Runs `f(data)` on the calling thread as index 0 of `rt` (a thread that runs its tasks) when
/// that index is free and, where the pool has a resident thread, this is it; gives `data`
/// back otherwise.
pub(super) fn seat<D, R>(rt: &Runtime, data: D, f: impl FnOnce(D) -> R) -> Result<R, D> {
    let inner = rt.inner();
    if !crate::runtime::resident::seats_here(inner) {
        // Index 0 is the resident thread's (`runtime::resident`).
        return Err(data);
    }
    let Some(mut local) = inner.tasks().locals[0].try_lock() else {
        return Err(data);
    };
    let c = Ctx::new(rt, 0, &mut local);
    // Dropped before index 0 is let go, also when `f` unwinds.
    let _leave = Leave(&c);
    // Placed as the policy says for the call's length (module docs); a panic of the policy's
    // leaves the thread where it is.
    let _placed = Placed(catch(|| inner.place(&c.task_member(), true)).flatten());
    // Regions this thread starts while it runs tasks run inline (module docs).
    let _in_region = InRegion::enter();
    let _member = current::enter(Member::new(0, inner.max_threads, inner));
    // The free functions called in `f` (a parallel iterator's) go to `rt` too.
    Ok(crate::sys::scoped::set(rt, || ctx::enter(&c, || f(data))))
}

/// Hands what a call leaves on index 0's deque to the workers as the call ends: tasks spawned
/// into another call's scope by a task of that call this thread stole while it waited (its
/// own call's work is done by then). Nobody else would run them while index 0 is free, where
/// the policy's number lets only index 0 steal.
struct Leave<'c, 'a>(&'c Ctx<'a>);

impl Drop for Leave<'_, '_> {
    fn drop(&mut self) {
        let c = self.0;
        let mut left = false;
        while let Some(t) = c.deque.pop() {
            c.inner().tasks().injector.push(t);
            left = true;
        }
        if left {
            c.inner().calls_notify();
        }
    }
}

/// The mask a call's thread had before its placement: given back when dropped.
struct Placed(Option<crate::CpuSet>);

impl Drop for Placed {
    fn drop(&mut self) {
        if let Some(mask) = &self.0 {
            crate::runtime::unplace(mask);
        }
    }
}

/// The calling thread's event for the latches of its calls from outside a pool.
pub(super) fn own_event() -> Arc<Event> {
    thread_local! {
        static EVENT: Arc<Event> = Arc::new(Event::default());
    }
    EVENT.with(Arc::clone)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::steal::job::HeapJob;
    use crate::Fixed;

    /// A task a call leaves on index 0's deque (as one spawned there by another call's task
    /// that this thread stole while it waited) runs once the call is over, also where the
    /// policy lets no worker steal: the call hands it to the workers, which take calls.
    #[test]
    fn a_task_left_on_index_0_runs_after_the_call_where_no_worker_may_steal() {
        let rt = Runtime::builder()
            .max_threads(2)
            .policy(Fixed::new(1))
            .build()
            .unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        let _call = start_call(&rt);
        assert_eq!(rt.inner().tasks().active(), 1, "worker 1 is kept out");
        let seated = seat(&rt, (), |()| {
            ctx::with(|c| {
                let run = move || flag.store(true, Ordering::SeqCst);
                // SAFETY: queued once below and run once by whoever takes it; `run` borrows
                // nothing and does not unwind.
                c.unwrap().deque.push(unsafe { HeapJob::into_task(run) });
            })
        });
        assert!(seated.is_ok(), "index 0 was free");
        assert!(rt.inner().tasks().locals[0].lock().deque.is_empty());
        let start = Instant::now();
        while !ran.load(Ordering::SeqCst) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the task left never ran"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
