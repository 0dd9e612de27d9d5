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
//! The thread that runs a team of one is the caller's own: the slice is its for the length of
//! the region only, never left on it and never inherited. The protocol, per thread (the state
//! is the thread's own; [`on_region`] runs at each region start, after the policy decided the
//! team and before workers are started for it, and what it returns ends with the region):
//!
//! - Each region with a team of one, on a runtime with a solo slice, is timed (two clock
//!   reads) and remembered by its *site*: the code it runs (its body's closure type, so one
//!   call site of the program; a thread remembers its last [`SITES`] sites). A site whose
//!   last timed region was shorter than [`SAMPLE_BELOW`] is timed again only one region in
//!   [`SAMPLE_EVERY`] while no other site's short region comes between (the clock reads would
//!   cost its regions more than a slice could give): a loop of tiny regions pays a
//!   thread-local compare and decrement; short regions of sites that take turns are timed.
//! - Such a region asks for the slice only when the thread's previous region of the same site
//!   lasted at least [`SOLO_MIN_REGION`]. Asking and giving back cost two system calls each
//!   (about 3 µs apiece on this project's machine), which a region of that length pays at
//!   most 0.6% for; shorter regions, which a long slice would help little, pay nothing (and a
//!   site's first region never asks). Programs alternate long and short regions (NPB CG: a
//!   product with the matrix, then a few vector operations): going by the site, the long ones
//!   hold the slice and the short ones do not ask, where going by the thread's previous region
//!   would get both wrong.
//! - To ask, the thread reads its scheduling attributes and, when it is in the fair class
//!   (`SCHED_OTHER` or `SCHED_BATCH`) with a nice value of 0 or more and its slice in force is
//!   the kernel's default (it has not asked for one of its own; the default is learned the
//!   first time, by asking for it), asks for the solo slice with the reset-on-fork flag,
//!   keeping its policy and nice value: threads it creates meanwhile start with the default
//!   slice. A thread not in the fair class, with a negative nice value (which the flag would
//!   not pass on to its children), with a slice of its own, or whose attributes cannot be read
//!   or set is left alone for the rest of its life.
//! - When the region ends (returning or unwinding) the thread asks for the default slice
//!   again, with its own reset-on-fork flag and the policy and nice value it has then.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use crate::sys::slice::{self, FairAttr};
use crate::Team;

/// The shortest region with a team of one after which the next of its site asks for the solo
/// slice.
pub(crate) const SOLO_MIN_REGION: Duration = Duration::from_millis(1);

/// How many sites a thread remembers.
pub(crate) const SITES: usize = 8;

/// The site of a region whose body is an `F`: the address of a function made for `F` (which
/// calls it, so that bodies of different code get different functions).
pub(super) fn site<F: Fn(&Team<'_>) + Sync>() -> usize {
    fn call<F: Fn(&Team<'_>)>(f: &F, team: &Team<'_>) {
        f(team)
    }
    call::<F> as fn(&F, &Team<'_>) as usize
}

/// A thread's standing with respect to solo slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Solo {
    /// It may ask.
    Normal,
    /// Left alone for good (not in the fair class, a negative nice value, its own slice, or
    /// the calls failed).
    Skip,
}

/// What a thread remembers between its regions.
#[derive(Debug)]
struct Memory {
    solo: Solo,
    /// The kernel's default slice, once learned (ns).
    default_ns: Option<u64>,
    /// The last sites (site 0: none).
    sites: [Site; SITES],
    /// Where the next site not remembered goes (the oldest one's place).
    next: usize,
    /// Where the last site looked up is.
    recent: usize,
}

/// A site's last region with a team of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Site {
    site: usize,
    /// How long it lasted, in µs.
    last_us: u32,
}

/// What a region with a team of one does, when [`QUIET`] does not leave it untimed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// It is timed.
    Time,
    /// It is timed and asks for the solo slice.
    Ask,
}

/// Regions shorter than this are timed only one in [`SAMPLE_EVERY`]: two clock reads cost a
/// short region more than a long slice could give it.
pub(crate) const SAMPLE_BELOW: Duration = Duration::from_micros(100);

/// How often a site of short regions is timed again (to see it grow).
pub(crate) const SAMPLE_EVERY: u32 = 64;

impl Memory {
    const NEW: Self = Self {
        solo: Solo::Normal,
        default_ns: None,
        sites: [Site {
            site: 0,
            last_us: 0,
        }; SITES],
        next: 0,
        recent: 0,
    };

    /// What a region of `site` does.
    #[inline]
    fn action(&mut self, site: usize) -> Action {
        // A loop's regions come from one site in a row: the last one found first.
        let s = if self.sites[self.recent].site == site {
            &mut self.sites[self.recent]
        } else {
            let Some(i) = self.sites.iter().position(|s| s.site == site) else {
                return Action::Time;
            };
            self.recent = i;
            &mut self.sites[i]
        };
        if Duration::from_micros(u64::from(s.last_us)) >= SOLO_MIN_REGION {
            Action::Ask
        } else {
            Action::Time
        }
    }

    /// Records that a region of `site` lasted `lasted`.
    fn remember(&mut self, site: usize, lasted: Duration) {
        let entry = Site {
            site,
            last_us: u32::try_from(lasted.as_micros()).unwrap_or(u32::MAX),
        };
        match self.sites.iter_mut().find(|s| s.site == site) {
            Some(s) => *s = entry,
            None => {
                self.sites[self.next] = entry;
                self.next = (self.next + 1) % SITES;
            }
        }
    }
}

/// Whether a thread whose attributes are `attr` may be given a solo slice, the kernel's
/// default being `default_ns`: one in the fair class with a nice value of 0 or more, whose
/// slice in force is the default (not one it asked for).
fn may_take(attr: Option<FairAttr>, default_ns: u64) -> bool {
    attr.is_some_and(|a| a.slice_ns == default_ns && a.nice >= 0)
}

#[cfg(not(loom))]
thread_local! {
    static MEMORY: RefCell<Memory> = const { RefCell::new(Memory::NEW) };
    /// The last site whose timed region was short, and how many of its regions go untimed
    /// still: a loop of tiny regions from one site skips the table.
    static QUIET: Cell<(usize, u32)> = const { Cell::new((0, 0)) };
}

/// Whether this region of `site` goes untimed by [`QUIET`] (counted).
#[cfg(not(loom))]
#[inline]
fn quiet(site: usize) -> bool {
    QUIET.with(|q| {
        let (untimed, next) = quiet_step(q.get(), site);
        q.set(next);
        untimed
    })
}

/// One region of `site` against the quiet site and its count `q`: whether it goes untimed,
/// and the count after it.
fn quiet_step(q: (usize, u32), site: usize) -> (bool, (usize, u32)) {
    match q {
        (s, n) if s == site && n > 0 => (true, (s, n - 1)),
        _ => (false, q),
    }
}

/// The quiet site and count after a timed region of `site` that lasted `lasted`: a short one
/// makes its site the quiet one for the next [`SAMPLE_EVERY`]` - 1` regions.
fn after_timed(q: (usize, u32), site: usize, lasted: Duration) -> (usize, u32) {
    if lasted < SAMPLE_BELOW {
        (site, SAMPLE_EVERY - 1)
    } else if q.0 == site {
        (0, 0)
    } else {
        q
    }
}

/// A region with a team of one, timed, and holding the solo slice when it asked for it: both
/// end when it is dropped.
#[derive(Debug)]
pub(super) struct SoloRegion {
    site: usize,
    started: Option<Instant>,
    /// Set when it asked: the thread's own reset-on-fork flag, to put back.
    held: Option<bool>,
}

/// Applies the protocol for a region of `site` with a team of `team` started by the calling
/// thread, on a runtime whose solo slice is `slice`; keep the result until the region ends.
#[cfg(not(loom))]
#[inline]
pub(super) fn on_region(team: usize, slice: Option<Duration>, site: usize) -> SoloRegion {
    let mut region = SoloRegion {
        site,
        started: None,
        held: None,
    };
    let Some(slice) = slice.filter(|_| team == 1) else {
        return region;
    };
    if quiet(site) {
        return region;
    }
    MEMORY.with_borrow_mut(|memory| {
        if memory.solo == Solo::Skip {
            return;
        }
        match memory.action(site) {
            Action::Time => {}
            Action::Ask => region.held = take(memory, slice),
        }
        region.started = Some(Instant::now());
    });
    region
}

/// loom runs its threads on one OS thread: no system calls there.
#[cfg(loom)]
pub(super) fn on_region(_team: usize, _slice: Option<Duration>, site: usize) -> SoloRegion {
    SoloRegion {
        site,
        started: None,
        held: None,
    }
}

#[cfg(not(loom))]
impl Drop for SoloRegion {
    fn drop(&mut self) {
        let Some(started) = self.started else {
            return;
        };
        let lasted = started.elapsed();
        QUIET.set(after_timed(QUIET.get(), self.site, lasted));
        MEMORY.with_borrow_mut(|memory| {
            memory.remember(self.site, lasted);
            if let Some(own) = self.held {
                if !give_back(own) {
                    memory.solo = Solo::Skip;
                }
            }
        });
    }
}

/// Asks for the solo slice; the thread's own reset-on-fork flag, if it got it. Records a
/// thread left alone for good, and the default slice once learned.
#[cold]
fn take(memory: &mut Memory, slice: Duration) -> Option<bool> {
    let ns = u64::try_from(slice.as_nanos()).unwrap_or(u64::MAX);
    let got = match slice::fair_attr() {
        Ok(Some(attr)) => learn_default(memory, attr)
            .filter(|&default| may_take(Some(attr), default))
            .filter(|_| slice::set_slice_not_inherited(&attr, ns).is_ok())
            .map(|_| attr.reset_on_fork),
        _ => None,
    };
    if got.is_none() {
        memory.solo = Solo::Skip;
    }
    got
}

/// The kernel's default slice: remembered, or learned now for a thread whose attributes are
/// `attr` (the kernel reports the slice in force whether the thread asked for it or not: ask
/// for the default to learn it, then put back a slice the thread asked for). `None` when the
/// calls fail.
fn learn_default(memory: &mut Memory, attr: FairAttr) -> Option<u64> {
    if let Some(d) = memory.default_ns {
        return Some(d);
    }
    slice::set_slice(&attr, 0).ok()?;
    let default = slice::fair_attr().ok()??.slice_ns;
    if attr.slice_ns != default {
        let _ = slice::set_slice(&attr, attr.slice_ns);
    }
    memory.default_ns = Some(default);
    Some(default)
}

/// Asks for the default slice again, with the thread's own reset-on-fork flag `own` and the
/// policy and nice value it has now; false when that failed or it is no longer in the fair
/// class (it is then left as it is).
#[cold]
fn give_back(own: bool) -> bool {
    match slice::fair_attr() {
        Ok(Some(now)) => slice::set_slice(&now.with_reset_on_fork(own), 0).is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = SOLO_MIN_REGION;
    const SHORT: Duration = Duration::from_micros(5);

    #[test]
    fn a_new_site_is_timed_and_after_a_long_region_it_asks() {
        let mut m = Memory::NEW;
        assert_eq!(m.action(16), Action::Time);
        m.remember(16, LONG - Duration::from_micros(1));
        assert_eq!(m.action(16), Action::Time);
        m.remember(16, LONG);
        assert_eq!(m.action(16), Action::Ask);
        assert_eq!(m.action(16), Action::Ask);
    }

    #[test]
    fn a_site_of_short_regions_is_timed_one_in_sample_every() {
        let mut q = after_timed((0, 0), 16, SHORT);
        for _ in 1..SAMPLE_EVERY {
            let (untimed, next) = quiet_step(q, 16);
            assert!(untimed);
            q = next;
        }
        assert_eq!(quiet_step(q, 16), (false, q), "the 64th is timed");
        // Another site's regions are timed, and a short one of them takes the place.
        let q = after_timed((0, 0), 16, SHORT);
        assert!(!quiet_step(q, 32).0);
        assert_eq!(after_timed(q, 32, SHORT), (32, SAMPLE_EVERY - 1));
        // A site that grew, or another's region that was not short, leaves or keeps it.
        assert_eq!(after_timed(q, 16, SAMPLE_BELOW), (0, 0));
        assert_eq!(after_timed(q, 32, LONG), q);
    }

    #[test]
    fn the_last_sites_are_remembered() {
        let mut m = Memory::NEW;
        m.remember(16, LONG);
        m.remember(32, SHORT);
        assert_eq!((m.action(16), m.action(32)), (Action::Ask, Action::Time));
        // SITES new ones push the oldest out.
        for k in 0..SITES - 1 {
            m.remember(1000 + k, LONG);
        }
        assert_eq!(m.action(16), Action::Time);
        m.remember(32, LONG);
        assert_eq!(m.action(32), Action::Ask);
    }

    #[test]
    fn sites_of_different_bodies_differ_and_of_one_body_agree() {
        fn of<F: Fn(&Team<'_>) + Sync>(_: &F) -> usize {
            site::<F>()
        }
        let (x, y) = (|_: &Team<'_>| {}, |t: &Team<'_>| assert!(t.size() > 0));
        assert_eq!(of(&x), of(&x));
        assert_ne!(of(&x), of(&y));
    }

    #[test]
    fn only_a_fair_thread_on_the_default_slice_and_not_below_nice_0_is_given_one() {
        let fair = FairAttr::for_tests;
        assert!(may_take(Some(fair(1_400_000)), 1_400_000));
        assert!(!may_take(Some(fair(3_000_000)), 1_400_000));
        assert!(!may_take(None, 1_400_000));
        let mut negative = fair(1_400_000);
        negative.nice = -1;
        assert!(!may_take(Some(negative), 1_400_000));
        // Kernels before 6.12 report 0 for every thread.
        assert!(may_take(Some(fair(0)), 0));
    }

    /// The protocol on real threads and runtimes (each test on a thread of its own, whose
    /// memory starts afresh).
    mod on_threads {
        use super::*;
        use crate::sys::slice::testing::{get, kernel_slices, resets_on_fork, set, SCHED_IDLE};
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

        /// A region of a team of one that lasts long enough for the next to ask.
        fn long(rt: &Runtime) -> (u64, bool) {
            let inside = std::sync::Mutex::new((0, false));
            rt.region(|_| {
                std::thread::sleep(Duration::from_nanos(SOLO_MIN_REGION.as_nanos() as u64));
                *inside.lock().unwrap() = (get().2, resets_on_fork());
            });
            inside.into_inner().unwrap()
        }

        #[test]
        fn a_long_team_of_one_makes_the_next_hold_the_slice_for_its_length_only() {
            let (default, grants) = kernel_slices();
            on_own_thread(move || {
                let solo = single(Some(Duration::from_millis(30)));
                // The first is not known to be long: it does not ask.
                assert_eq!(long(&solo), (default, false));
                assert_eq!((get().2, resets_on_fork()), (default, false));
                let (slice, flag) = long(&solo);
                assert_eq!(slice, if grants { 30 * MS } else { default });
                assert!(flag, "threads made meanwhile would inherit the slice");
                // Given back when the region returns.
                assert_eq!((get().2, resets_on_fork()), (default, false));
                // Regions of another site, which do not last, do not ask.
                short(&solo);
                assert_eq!(short(&solo), default);
                // Nor do larger teams.
                long(&pair());
                assert_eq!(long(&pair()).0, default);
            });
        }

        /// A region of a site of its own that does not last.
        fn short(rt: &Runtime) -> u64 {
            let inside = std::sync::Mutex::new(0);
            rt.region(|_| *inside.lock().unwrap() = get().2);
            inside.into_inner().unwrap()
        }

        #[test]
        fn long_regions_hold_the_slice_between_short_ones_which_do_not() {
            let (default, grants) = kernel_slices();
            on_own_thread(move || {
                let solo = single(Some(Duration::from_millis(30)));
                let held = if grants { 30 * MS } else { default };
                long(&solo);
                for _ in 0..3 {
                    assert_eq!(short(&solo), default, "a short region after a long one");
                    assert_eq!(long(&solo).0, held, "a long region after a short one");
                }
            });
        }

        #[test]
        fn a_thread_made_during_the_region_and_a_panic_leave_nothing_behind() {
            let (default, _) = kernel_slices();
            on_own_thread(move || {
                let solo = single(Some(Duration::from_millis(30)));
                long(&solo);
                let child = std::sync::Mutex::new(None);
                solo.region(|_| {
                    let got = std::thread::spawn(get).join().unwrap().2;
                    *child.lock().unwrap() = Some(got);
                    std::thread::sleep(Duration::from_nanos(SOLO_MIN_REGION.as_nanos() as u64));
                });
                assert_eq!(child.into_inner().unwrap(), Some(default));
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    solo.region(|_| panic!("in a solo region"))
                }));
                assert!(r.is_err());
                assert_eq!((get().2, resets_on_fork()), (default, false));
            });
        }

        #[test]
        fn the_default_is_100_ms_and_off_means_untouched() {
            let (default, grants) = kernel_slices();
            on_own_thread(move || {
                let off = single(None);
                long(&off);
                assert_eq!(long(&off).0, default);
                let rt = Runtime::builder().max_threads(1).build().unwrap();
                long(&rt);
                assert_eq!(long(&rt).0, if grants { 100 * MS } else { default });
            });
        }

        #[test]
        fn a_slice_of_the_threads_own_another_policy_or_a_negative_nice_is_left_alone() {
            on_own_thread(|| {
                set(0, 0, 3 * MS).unwrap();
                let own = get();
                let solo = single(Some(Duration::from_millis(30)));
                long(&solo);
                assert_eq!(long(&solo).0, 3 * MS);
                assert_eq!((MEMORY.with_borrow(|m| m.solo), get()), (Solo::Skip, own));
            });
            on_own_thread(|| {
                set(SCHED_IDLE, 0, 0).unwrap();
                let solo = single(Some(Duration::from_millis(30)));
                long(&solo);
                long(&solo);
                assert_eq!(
                    (MEMORY.with_borrow(|m| m.solo), get().0),
                    (Solo::Skip, SCHED_IDLE)
                );
            });
            // Lowering one's nice value needs privileges: only where the tests have them.
            on_own_thread(|| {
                if set(0, -1, 0).is_ok() {
                    let solo = single(Some(Duration::from_millis(30)));
                    long(&solo);
                    long(&solo);
                    assert_eq!((MEMORY.with_borrow(|m| m.solo), get().1), (Solo::Skip, -1));
                }
            });
        }
    }
}
