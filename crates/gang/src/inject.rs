//! Fault and delay injection at the places where the switching protocol's races were found,
//! for `tests/inject`. Compiled only with `RUSTFLAGS="--cfg asat_inject"`: in a normal build
//! neither this module nor the calls to it exist.
//!
//! The races of coordinated switching are nanoseconds wide. Each [`Point`] widens one of them
//! into a pause that lasts until the test [`release`]s it, so a test can drive the scheduler
//! (with [`GangScheduler::switch_now`](crate::GangScheduler::switch_now)) into exactly the
//! interleaving that broke, instead of hoping for it. [`Point::KillFails`] makes the sending of
//! a stop signal fail instead.
//!
//! A point acts once per [`arm`]: the next time the code passes it, and only on the thread that
//! called [`target_this_thread`] for the points that gang threads pass (for `BeforeKill` and
//! `KillFails`: only for a signal aimed at that thread). [`reset`] disarms and releases
//! everything and forgets the target. The state is process-global; tests that use it run one
//! at a time.
//!
//! Some points are passed inside the stop signal's handler, so this module is
//! async-signal-safe: atomics, a const thread-local and futex system calls, nothing else.
//!
//! Why not the `fail` crate: its registry takes a lock and allocates, which the signal handler
//! and the scheduler's lock-free loop must not do; and a pause that a test ends at a moment it
//! chooses is what these races need, more than a fixed sleep or a panic.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::time::Duration;

use crate::sys;

/// The places where something can be injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Point {
    /// Gang thread, in the park loop (`switch::park_if_stopped`): woken because its slot runs
    /// again, before it clears `PARKED`. A pause here lets the slot be stopped again while the
    /// thread still looks parked (race 1: the thread must park again, not run on).
    ParkWoken,
    /// Gang thread, in the park loop: it has found its slot stopped and its gang alive, and is
    /// about to sleep on the slot's `run` word. A pause here makes a wake-up sent meanwhile
    /// (by a gang dropped under an orphaned thread) find no sleeper: the thread must look at
    /// its cell again on its own.
    ParkWait,
    /// Gang thread, in `set_idle(true)` (entered by [`blocking`](crate::blocking) and by idle
    /// runtime workers): inside the section that defers stops, before `IDLE` is set. A stop
    /// signalled during the pause is deferred to the section's end, when the thread is already
    /// idle (race 3: it must not park then).
    IdleEnter,
    /// Gang thread, in `set_idle(false)` (leaving [`blocking`](crate::blocking)): it has
    /// decided to become runnable again, before it changes its cell. A gang dropped during the
    /// pause marks the thread orphaned (race 6: it must stay idle, never signalled again).
    IdleLeave,
    /// Scheduler thread: it has found the running slot's gangs gone, before it stops that
    /// slot. A gang placed in the freed slot during the pause has threads running in it (race
    /// 2: they must be stopped like any others).
    GangsGone,
    /// Scheduler thread: the next stop signal aimed at the target thread fails, as with a full
    /// real-time signal queue, and sends nothing (race 4: later switches must still signal that
    /// thread).
    KillFails,
    /// Scheduler thread: it has marked the target thread `SIGNALED`, before it sends the
    /// signal. A thread that enters [`blocking`](crate::blocking) during the pause gets the
    /// signal inside its call (race 7: the call must not be interrupted).
    BeforeKill,
}

const POINTS: usize = 7;

impl Point {
    fn index(self) -> usize {
        match self {
            Point::ParkWoken => 0,
            Point::ParkWait => 1,
            Point::IdleEnter => 2,
            Point::GangsGone => 3,
            Point::KillFails => 4,
            Point::IdleLeave => 5,
            Point::BeforeKill => 6,
        }
    }

    /// Points passed by gang threads act only on the target thread.
    fn on_gang_thread(self) -> bool {
        matches!(
            self,
            Point::ParkWoken | Point::ParkWait | Point::IdleEnter | Point::IdleLeave
        )
    }
}

/// How long a pause lasts at most when the test never releases it (a test that failed): the
/// paused thread then goes on, so nothing stays stuck in a pause.
const PAUSE_LIMIT: Duration = Duration::from_secs(10);

struct State {
    /// 1 while armed: the next pass acts.
    armed: AtomicU32,
    /// Passes that acted.
    hits: AtomicU32,
    /// 1 once released; the futex a paused thread sleeps on.
    released: AtomicU32,
}

static STATE: [State; POINTS] = [const {
    State {
        armed: AtomicU32::new(0),
        hits: AtomicU32::new(0),
        released: AtomicU32::new(0),
    }
}; POINTS];

/// The target's generation (see `TARGET_GEN`); a thread is the target while its thread-local
/// copy equals it. `reset` moves it on, so no old thread stays a target.
static GENERATION: AtomicU32 = AtomicU32::new(1);
/// The target thread's kernel thread id (0: none), for `BeforeKill` and `KillFails`, which the
/// scheduler thread passes for another thread.
static TARGET_TID: AtomicI32 = AtomicI32::new(0);

thread_local! {
    // Const-initialized, no destructor: the signal handler may read it.
    static TARGET_GEN: AtomicU32 = const { AtomicU32::new(0) };
}

/// Makes the calling thread the one the gang-thread points act on (and the one `BeforeKill`
/// and `KillFails` act on signals to), until [`reset`].
pub fn target_this_thread() {
    TARGET_GEN.with(|t| t.store(GENERATION.load(Ordering::SeqCst), Ordering::SeqCst));
    TARGET_TID.store(sys::gettid(), Ordering::SeqCst);
}

/// Arms `point`: the next pass (by the target thread, for gang-thread points) pauses until
/// [`release`], or, for [`Point::KillFails`], fails.
pub fn arm(point: Point) {
    let s = &STATE[point.index()];
    s.released.store(0, Ordering::SeqCst);
    s.armed.store(1, Ordering::SeqCst);
}

/// How many passes of `point` acted since the last [`reset`].
pub fn hits(point: Point) -> u32 {
    STATE[point.index()].hits.load(Ordering::SeqCst)
}

/// Waits until `point` has acted `n` times in all; false if that did not happen within
/// `timeout`.
pub fn wait_hits(point: Point, n: u32, timeout: Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    while hits(point) < n {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    true
}

/// Ends the pause at `point` (now, or at once when it comes).
pub fn release(point: Point) {
    let s = &STATE[point.index()];
    s.released.store(1, Ordering::SeqCst);
    sys::futex_wake(&s.released, i32::MAX);
}

/// Disarms and releases every point, zeroes the counts and forgets the target.
pub fn reset() {
    GENERATION.fetch_add(1, Ordering::SeqCst);
    TARGET_TID.store(0, Ordering::SeqCst);
    for s in STATE.iter() {
        s.armed.store(0, Ordering::SeqCst);
        s.hits.store(0, Ordering::SeqCst);
        s.released.store(1, Ordering::SeqCst);
        sys::futex_wake(&s.released, i32::MAX);
    }
}

/// Takes the arming of `point` if this pass is one it acts on.
fn take(point: Point) -> Option<&'static State> {
    if point.on_gang_thread()
        && TARGET_GEN.with(|t| t.load(Ordering::SeqCst)) != GENERATION.load(Ordering::SeqCst)
    {
        return None;
    }
    let s = &STATE[point.index()];
    s.armed
        .compare_exchange(1, 0, Ordering::SeqCst, Ordering::SeqCst)
        .ok()?;
    Some(s)
}

/// A pause point: pauses here if `point` is armed for this pass. Async-signal-safe.
pub(crate) fn pause(point: Point) {
    let Some(s) = take(point) else {
        return;
    };
    s.hits.fetch_add(1, Ordering::SeqCst);
    let deadline = sys::now_ns() + PAUSE_LIMIT.as_nanos() as u64;
    while s.released.load(Ordering::SeqCst) == 0 {
        let now = sys::now_ns();
        if now >= deadline {
            break;
        }
        // Returns early on a release, a signal (the stop signal may arrive meanwhile: that is
        // part of what the pause is for) or the timeout.
        sys::futex_wait(&s.released, 0, Some(Duration::from_nanos(deadline - now)));
    }
}

/// Called by the scheduler thread just before it sends a stop signal to thread `tid`: pauses
/// there for [`Point::BeforeKill`]; returns whether the signal is to fail
/// ([`Point::KillFails`]).
pub(crate) fn before_kill(tid: libc::pid_t) -> bool {
    if TARGET_TID.load(Ordering::SeqCst) != tid {
        return false;
    }
    pause(Point::BeforeKill);
    match take(Point::KillFails) {
        Some(s) => {
            s.hits.fetch_add(1, Ordering::SeqCst);
            true
        }
        None => false,
    }
}
