//! Delay injection at the places where the shared table's reclaim races were found, for
//! `tests/inject.rs`. Compiled only with `RUSTFLAGS="--cfg asat_inject"`: in a normal build
//! neither this module nor the calls to it exist.
//!
//! The races (a reclaimer stalled between deciding a slot's owner is dead and freeing the slot,
//! while a live process claims it, or while another reclaimer of the same process frees it
//! first) are microseconds wide. A [`Point`] widens them into a pause that lasts until the test
//! [`release`]s it, so a test can start the other process, or the other reclaimer, in exactly
//! that window instead of hoping for it.
//!
//! A point acts once per [`arm`]: the next time any thread of this process passes it. [`reset`]
//! disarms and releases everything. The state is process-global (each process has its own):
//! tests that use it run one at a time.
//!
//! The pause polls an atomic with short sleeps: the points are passed by ordinary threads (never
//! in a signal handler), and a pause a few hundred microseconds late to end costs nothing.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The places where a pause can be injected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Point {
    /// A reclaimer, in [`SharedTable::reclaim_dead`](crate::SharedTable::reclaim_dead): it has
    /// found a slot whose owner is dead and marked it `RECLAIMING`, before it zeroes the slot's
    /// loads and frees it. A process that opens the table during the pause must keep its slot
    /// and its load when the reclaimer goes on.
    Reclaiming,
    /// A reclaimer in [`SharedTable::reclaim_dead`](crate::SharedTable::reclaim_dead) that
    /// found another thread of this process reclaiming the same table, just before it waits
    /// for that one to finish. A test that sees it here knows the second reclaimer is held
    /// back.
    ReclaimWaits,
}

const POINTS: usize = 2;

impl Point {
    fn index(self) -> usize {
        match self {
            Point::Reclaiming => 0,
            Point::ReclaimWaits => 1,
        }
    }
}

/// How long a pause lasts at most when the test never releases it (a test that failed): the
/// paused thread then goes on, so nothing stays stuck in a pause. [`expired`] counts these.
const PAUSE_LIMIT: Duration = Duration::from_secs(30);
/// How often a paused thread looks whether it was released.
const POLL: Duration = Duration::from_micros(100);

struct State {
    /// 1 while armed: the next pass pauses.
    armed: AtomicU32,
    /// Passes that paused.
    hits: AtomicU32,
    /// Pauses that ended at [`PAUSE_LIMIT`], not by a release.
    expired: AtomicU32,
    /// 1 once released.
    released: AtomicU32,
}

static STATE: [State; POINTS] = [const {
    State {
        armed: AtomicU32::new(0),
        hits: AtomicU32::new(0),
        expired: AtomicU32::new(0),
        released: AtomicU32::new(0),
    }
}; POINTS];

/// Arms `point`: the next pass pauses until [`release`].
pub fn arm(point: Point) {
    let s = &STATE[point.index()];
    s.released.store(0, Ordering::SeqCst);
    s.armed.store(1, Ordering::SeqCst);
}

/// How many passes of `point` paused since the last [`reset`].
pub fn hits(point: Point) -> u32 {
    STATE[point.index()].hits.load(Ordering::SeqCst)
}

/// How many pauses at `point` ran out (lasted the whole limit, never released) since the last
/// [`reset`]: a test that saw one did not control the interleaving it meant to.
pub fn expired(point: Point) -> u32 {
    STATE[point.index()].expired.load(Ordering::SeqCst)
}

/// Waits until `point` has paused `n` times in all; false if that did not happen within
/// `timeout`.
pub fn wait_hits(point: Point, n: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while hits(point) < n {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    true
}

/// Ends the pause at `point` (now, or at once when it comes).
pub fn release(point: Point) {
    STATE[point.index()].released.store(1, Ordering::SeqCst);
}

/// Disarms and releases every point and zeroes the counts.
pub fn reset() {
    for s in STATE.iter() {
        s.armed.store(0, Ordering::SeqCst);
        s.hits.store(0, Ordering::SeqCst);
        s.expired.store(0, Ordering::SeqCst);
        s.released.store(1, Ordering::SeqCst);
    }
}

/// A pause point: pauses here if `point` is armed.
pub(crate) fn pause(point: Point) {
    let s = &STATE[point.index()];
    if s.armed
        .compare_exchange(1, 0, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        return;
    }
    s.hits.fetch_add(1, Ordering::SeqCst);
    let deadline = Instant::now() + PAUSE_LIMIT;
    while s.released.load(Ordering::SeqCst) == 0 {
        if Instant::now() >= deadline {
            s.expired.fetch_add(1, Ordering::SeqCst);
            return;
        }
        std::thread::sleep(POLL);
    }
}
