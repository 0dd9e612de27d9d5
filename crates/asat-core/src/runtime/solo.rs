//! Long time slices for a thread that runs its regions alone ([`Builder::solo_slice`],
//! `ASAT_SOLO_SLICE`).
//!
//! When more threads want to run than there are CPUs, the kernel takes turns among them in
//! slices of a few milliseconds (1.4 ms on this project's 2-CPU machine), and a thread whose
//! data filled the cache finds it refilled by others at each turn. A policy that shrinks a job
//! to a team of one (ASAT on a crowded machine, [`Single`](crate::Single)) cannot shrink it
//! further; what is left is how long each turn lasts. A team of one has no partner waiting for
//! it at a join or barrier, so a long turn costs it nothing and saves cache refills and
//! switches. Since Linux 6.12 a thread may ask for its slice (`sched_setattr`'s
//! `sched_runtime`, 0.1-100 ms); older kernels ignore the request, and nothing changes there.
//!
//! The protocol, per thread (the state is the thread's own; [`on_region`] runs at each region
//! start, after the policy decided the team and before workers are started for it):
//!
//! - A region with a team of one, on a runtime with a solo slice: the starting thread, unless
//!   it holds one already, reads its scheduling attributes and, when it is in the fair class
//!   (`SCHED_OTHER` or `SCHED_BATCH`) and has not asked for a slice of its own, asks for the
//!   solo slice, keeping its policy, nice value and reset-on-fork flag. A thread that is not in
//!   the fair class, asked for its own slice, or whose attributes cannot be read or set is left
//!   alone for the rest of its life (checked once).
//! - A region with a larger team, on any runtime, started by a thread that holds a solo slice:
//!   the thread asks for the kernel's default slice again (keeping the attributes it has then),
//!   before any worker is started, since a new thread inherits its creator's slice.
//! - A count of the threads holding a solo slice lets a region with a larger team skip the
//!   thread-local read while no thread holds one (a thread that exits holding one keeps the
//!   count up: it is a hint, never a correctness condition).
//!
//! Threads a holder starts meanwhile (its own, or a spawned job's) inherit the slice, as they
//! inherit its nice value.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::sys::slice::{self, FairAttr};

/// A thread's standing with respect to solo slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Solo {
    /// The thread's slice is its own (no solo slice asked for).
    Normal,
    /// The thread asked for a solo slice.
    Held,
    /// Left alone for good (not in the fair class, its own slice, or the calls failed).
    Skip,
}

/// What a region start does to its starting thread's slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Nothing,
    Take,
    GiveBack,
}

/// The step for a thread in `state` starting a region with a team of `team`, on a runtime
/// with a solo slice (`on`) or without.
fn step(state: Solo, team: usize, on: bool) -> Step {
    match state {
        Solo::Normal if team == 1 && on => Step::Take,
        Solo::Held if team > 1 => Step::GiveBack,
        _ => Step::Nothing,
    }
}

/// Whether a thread may be given a solo slice: one in the fair class whose slice in force is
/// the kernel's default (`default_ns`, read after asking for the default), not one it asked
/// for.
fn may_take(attr: Option<FairAttr>, default_ns: u64) -> bool {
    attr.is_some_and(|a| a.slice_ns == default_ns)
}

#[cfg(not(loom))]
thread_local! {
    static STATE: Cell<Solo> = const { Cell::new(Solo::Normal) };
}

/// Threads that hold a solo slice (a hint: see the module docs).
static HOLDERS: AtomicUsize = AtomicUsize::new(0);

/// Applies the protocol for a region with a team of `team` started by the calling thread, on
/// a runtime whose solo slice is `slice`.
#[cfg(not(loom))]
#[inline]
pub(super) fn on_region(team: usize, slice: Option<Duration>) {
    if team > 1 && HOLDERS.load(Ordering::Relaxed) == 0 || team == 1 && slice.is_none() {
        return;
    }
    STATE.with(|state| match step(state.get(), team, slice.is_some()) {
        Step::Nothing => {}
        Step::Take => state.set(take(slice.unwrap_or_default())),
        Step::GiveBack => state.set(give_back()),
    });
}

/// loom runs its threads on one OS thread: no system calls there.
#[cfg(loom)]
pub(super) fn on_region(_team: usize, _slice: Option<Duration>) {}

#[cold]
fn take(slice: Duration) -> Solo {
    let ns = u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX);
    let Ok(Some(attr)) = slice::fair_attr() else {
        return Solo::Skip;
    };
    // The kernel reports the slice in force whether the thread asked for it or not: ask for
    // the default to learn it, then put back a slice of the thread's own.
    let default = slice::set_slice(&attr, 0).and_then(|()| slice::fair_attr());
    let Ok(Some(default)) = default else {
        return Solo::Skip;
    };
    if !may_take(Some(attr), default.slice_ns) {
        let _ = slice::set_slice(&attr, attr.slice_ns);
        return Solo::Skip;
    }
    if slice::set_slice(&attr, ns).is_err() {
        return Solo::Skip;
    }
    HOLDERS.fetch_add(1, Ordering::Relaxed);
    Solo::Held
}

#[cold]
fn give_back() -> Solo {
    HOLDERS.fetch_sub(1, Ordering::Relaxed);
    match slice::fair_attr() {
        // The attributes as they are now (the program may have changed its nice value
        // meanwhile), with the kernel's default slice.
        Ok(Some(now)) if slice::set_slice(&now, 0).is_ok() => Solo::Normal,
        // Made real-time or idle meanwhile, or the calls fail now: leave it be.
        _ => Solo::Skip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_team_of_one_takes_a_larger_team_gives_back() {
        assert_eq!(step(Solo::Normal, 1, true), Step::Take);
        assert_eq!(step(Solo::Held, 2, true), Step::GiveBack);
        // Given back also on a runtime without solo slices.
        assert_eq!(step(Solo::Held, 8, false), Step::GiveBack);
    }

    #[test]
    fn nothing_otherwise() {
        assert_eq!(step(Solo::Normal, 1, false), Step::Nothing);
        assert_eq!(step(Solo::Normal, 2, true), Step::Nothing);
        assert_eq!(step(Solo::Held, 1, true), Step::Nothing);
        for team in [1, 2, 64] {
            for on in [false, true] {
                assert_eq!(step(Solo::Skip, team, on), Step::Nothing);
            }
        }
    }

    #[test]
    fn only_a_fair_thread_on_the_default_slice_is_given_one() {
        let fair = FairAttr::for_tests;
        assert!(may_take(Some(fair(1_400_000)), 1_400_000));
        assert!(!may_take(Some(fair(3_000_000)), 1_400_000));
        assert!(!may_take(None, 1_400_000));
        // Kernels before 6.12 report 0 for every thread.
        assert!(may_take(Some(fair(0)), 0));
    }
}

/// The protocol on real threads and runtimes (each test on a thread of its own, whose state
/// starts `Normal`).
#[cfg(test)]
mod runtime_tests {
    use super::*;
    use crate::sys::slice::testing::{get, kernel_slices, set, SCHED_IDLE};
    use crate::{Fixed, Runtime, Single};

    const MS: u64 = 1_000_000;

    fn on_own_thread(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(f).join().unwrap();
    }

    fn single(slice: Option<Duration>) -> Runtime {
        let b = Runtime::builder().max_threads(2).policy(Single);
        b.solo_slice(slice).build().unwrap()
    }

    fn pair() -> Runtime {
        Runtime::builder()
            .max_threads(2)
            .policy(Fixed::new(2))
            .build()
            .unwrap()
    }

    #[test]
    fn a_team_of_one_asks_for_the_solo_slice_and_a_larger_team_gives_it_back() {
        let (default, grants) = kernel_slices();
        on_own_thread(move || {
            let (solo, pair) = (single(Some(Duration::from_millis(30))), pair());
            solo.region(|_| {});
            assert_eq!(STATE.with(Cell::get), Solo::Held);
            assert_eq!(get().2, if grants { 30 * MS } else { default });
            solo.region(|_| {});
            pair.region(|_| {});
            assert_eq!(STATE.with(Cell::get), Solo::Normal);
            assert_eq!(get().2, default);
            // Taken again at the next team of one.
            solo.region(|_| {});
            assert_eq!(STATE.with(Cell::get), Solo::Held);
            pair.region(|_| {});
            assert_eq!(get().2, default);
        });
    }

    #[test]
    fn the_default_is_100_ms_and_off_means_untouched() {
        let (default, grants) = kernel_slices();
        on_own_thread(move || {
            single(None).region(|_| {});
            assert_eq!((STATE.with(Cell::get), get().2), (Solo::Normal, default));
            let rt = Runtime::builder().max_threads(1).build().unwrap();
            rt.region(|_| {});
            assert_eq!(get().2, if grants { 100 * MS } else { default });
        });
    }

    #[test]
    fn a_slice_of_the_threads_own_or_another_policy_is_left_alone() {
        on_own_thread(|| {
            set(0, 0, 3 * MS).unwrap();
            let own = get();
            single(Some(Duration::from_millis(30))).region(|_| {});
            pair().region(|_| {});
            assert_eq!((STATE.with(Cell::get), get()), (Solo::Skip, own));
        });
        on_own_thread(|| {
            set(SCHED_IDLE, 0, 0).unwrap();
            single(Some(Duration::from_millis(30))).region(|_| {});
            assert_eq!((STATE.with(Cell::get), get().0), (Solo::Skip, SCHED_IDLE));
        });
    }

    #[test]
    fn workers_started_for_a_larger_team_do_not_inherit_it() {
        let (default, _) = kernel_slices();
        on_own_thread(move || {
            let rt = Runtime::builder().max_threads(2).build().unwrap();
            single(Some(Duration::from_millis(30))).region(|_| {});
            // The first region with 2 threads starts the worker, after giving the slice back.
            let worker = std::sync::Mutex::new(None);
            rt.region(|team| {
                if team.index() == 1 {
                    *worker.lock().unwrap() = Some(get().2);
                }
            });
            assert_eq!(worker.into_inner().unwrap(), Some(default));
        });
    }
}
