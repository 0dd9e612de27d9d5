//! Starting a region: the SPMD entry points (`region`, `region_of`, `for_each_member`), the
//! `Shape` of a region, and how a start either runs the region on the team, holding the region
//! lock (steps 1-5 of the [region protocol](super)), or runs it inline on the calling thread.

use super::*;

impl Runtime {
    /// Runs `f` on every member of a team (an SPMD region, like `omp parallel`). The team size
    /// is the policy's decision. Returns when every member has returned.
    ///
    /// A panic in `f` on any member is re-raised here, after the whole team has joined; the
    /// runtime stays usable. A region started from inside a region runs inline on the calling
    /// thread, with a team of one.
    pub fn region<F>(&self, f: F)
    where
        F: Fn(&Team<'_>) + Sync,
    {
        self.run_region(&f, Shape::Spmd);
    }

    /// Runs `f` on every member of a team of `threads` (at least 1, at most
    /// [`max_threads`](Runtime::max_threads)), whatever the policy would choose: OpenMP's
    /// `num_threads` clause. For code whose members must all run at once because they wait for
    /// each other (a `std::sync::Barrier` of `threads`, flags one member sets for another),
    /// which a smaller team would deadlock; everything else should let the policy choose, with
    /// [`region`](Runtime::region).
    ///
    /// The policy is neither asked nor told: [`Policy::plan`] and [`Policy::region_end`] are not
    /// called for it, so a policy that measures its own teams (ASAT) measures only regions it
    /// chose. Placements and the wait strategy apply as in any region, and it counts in
    /// [`RuntimeStats`] (`regions`, `last_team`). Like every region, it runs inline on the
    /// calling thread with a team of one when started inside a region, in a `fork`ed child, or
    /// after another thread's region held the runtime for [`REGION_LOCK_WAIT`]
    /// ([`Team::size`] says so), and it has fewer members only when the system refuses to
    /// start more threads.
    ///
    /// ```
    /// use asat_core::{Runtime, Single};
    /// use std::sync::Barrier;
    ///
    /// // Single gives every region a team of one; this one has three, all at once.
    /// let rt = Runtime::builder().max_threads(3).policy(Single).build()?;
    /// let met = Barrier::new(3);
    /// rt.region_of(3, |team| {
    ///     assert_eq!(team.size(), 3);
    ///     met.wait();
    /// });
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn region_of<F>(&self, threads: usize, f: F)
    where
        F: Fn(&Team<'_>) + Sync,
    {
        self.run_region(
            &f,
            Shape::Sized {
                threads,
                revocable: false,
            },
        );
    }

    /// Runs `f(i)` for every `i` in `0..n`, each on a member of its own: a parallel loop on a
    /// team of `n` (at least 1, at most [`max_threads`](Runtime::max_threads)) whatever the
    /// policy would choose, item `i` on member `i`. For rayon's one-item-per-thread idiom,
    /// `(0..current_num_threads()).into_par_iter()`, whose items may wait for each other (the
    /// parallel iterators run such calls with it).
    ///
    /// As in every parallel loop, the calling thread, once done with item 0, runs the items
    /// whose worker has not started them yet, so a worker that is not on a CPU does not hold
    /// the loop up; it takes them one at a time, each only after the one before has returned.
    /// Items may therefore wait for each other: an item the caller runs can only wait for items
    /// that have returned, run on their workers, or are still offered to workers woken for
    /// them, so none waits forever.
    ///
    /// As for [`region_of`](Runtime::region_of), the policy is neither asked nor told, and where
    /// every region runs inline (inside a region, in a `fork`ed child, after another thread's
    /// region held the runtime for [`REGION_LOCK_WAIT`]) the calling thread runs the items one
    /// after another, so items that wait for each other would wait forever; so would `n`
    /// above `max_threads`, where a member runs several (as it does when the system refuses to
    /// start threads).
    ///
    /// ```
    /// use asat_core::{Runtime, Single};
    /// use std::sync::Barrier;
    ///
    /// let rt = Runtime::builder().max_threads(4).policy(Single).build()?;
    /// let met = Barrier::new(4);
    /// rt.for_each_member(4, |_| {
    ///     met.wait();
    /// });
    /// # Ok::<(), asat_core::Error>(())
    /// ```
    pub fn for_each_member<F>(&self, n: usize, f: F)
    where
        F: Fn(usize) + Sync,
    {
        if n == 0 {
            return;
        }
        self.run_region(
            &move |team: &Team<'_>| (team.index()..n).step_by(team.size()).for_each(&f),
            Shape::Sized {
                threads: n,
                revocable: true,
            },
        );
    }

    pub(super) fn run_region<F>(&self, f: &F, shape: Shape)
    where
        F: Fn(&Team<'_>) + Sync,
    {
        if self.inline_only() || self.run_region_then(f, shape, |_| ()).is_none() {
            self.run_inline(f);
        }
    }

    /// Whether regions must run inline on the calling thread: it runs a region already, or
    /// this process is a `fork`ed child of the one that built the runtime (no workers here).
    #[inline]
    pub(super) fn inline_only(&self) -> bool {
        IN_REGION.with(Cell::get) || self.forked()
    }

    /// Whether the calling thread runs a region (as a member, or as the holder of a region lock)
    /// or is a worker: a call it makes must not wait for work it hands to the workers, which
    /// may all be members of that region.
    #[inline]
    pub(crate) fn in_region() -> bool {
        IN_REGION.with(Cell::get)
    }

    /// Whether another thread's region holds the runtime now (a hint: it may end at once).
    #[inline]
    pub(crate) fn region_busy(&self) -> bool {
        self.inner.region_lock.is_locked()
    }

    /// Whether this process was `fork`ed from the one that built the runtime.
    #[inline]
    pub(crate) fn forked(&self) -> bool {
        crate::sys::fork::generation() != self.inner.fork_generation
    }

    /// Runs a region (not inline: the caller is not in one), then `after(panicked)` while this
    /// thread still holds the region lock, so that state the members left for the starting
    /// thread (the reduction slots) is read before another region can start; then re-raises
    /// the team's panic, if any. `None`, having run nothing, when another thread's region held
    /// the lock for [`REGION_LOCK_WAIT`]: the caller then runs the region inline.
    pub(super) fn run_region_then<F, R>(
        &self,
        f: &F,
        shape: Shape,
        after: impl FnOnce(bool) -> R,
    ) -> Option<R>
    where
        F: Fn(&Team<'_>) + Sync,
    {
        let ctl = self.wait_lock()?;
        Some(self.run_locked(ctl, f, shape, after))
    }

    /// The region lock, waiting up to [`REGION_LOCK_WAIT`] for it; `None` (counted in
    /// [`RuntimeStats::inline_busy`]) when another thread's region held it that long.
    pub(super) fn wait_lock(&self) -> Option<RegionLock<'_>> {
        let inner = &*self.inner;
        let ctl = inner.region_lock.try_lock_for(REGION_LOCK_WAIT);
        if ctl.is_none() {
            inner.stats.inline_busy.fetch_add(1, Ordering::Relaxed);
        }
        ctl
    }

    /// The region lock if it is free now: a loop that finds it taken runs on tasks beside the
    /// region that holds it (see [`Runtime::loops_on_tasks`]) rather than wait.
    pub(super) fn loop_lock(&self) -> Option<RegionLock<'_>> {
        self.inner.region_lock.try_lock()
    }

    /// [`run_region_then`](Runtime::run_region_then) with the region lock held.
    pub(super) fn run_locked<F, R>(
        &self,
        mut ctl: RegionLock<'_>,
        f: &F,
        shape: Shape,
        after: impl FnOnce(bool) -> R,
    ) -> R
    where
        F: Fn(&Team<'_>) + Sync,
    {
        let inner = &*self.inner;
        // While this thread holds the region lock, a region it starts from a callback (the
        // policy's, the wait strategy's, a placement, `after`) runs inline instead of
        // deadlocking.
        let _in_region = InRegion::enter();
        let (team, mut started) = match shape {
            Shape::Sized { threads, .. } => (threads.clamp(1, inner.max_threads), None),
            _ => self.decide(&mut ctl),
        };
        // Held until the region is over (returning or unwinding).
        let _solo = solo::on_region(team, inner.hooks.solo_slice, solo::site::<F>());
        let spawned = self.workers_started();
        let team = self.ensure_workers(team);
        if self.workers_started() != spawned && started.is_some() {
            // Starting threads is not part of the region's time.
            started = Some(Instant::now());
        }
        let panic = self.execute(&mut ctl, team, f, shape, started);
        let result = after(panic.is_some());
        drop(ctl);
        if let Some(p) = panic {
            resume_unwind(p);
        }
        result
    }

    pub(super) fn run_inline<F: Fn(&Team<'_>) + Sync>(&self, f: &F) {
        let state = RegionState::new(1, Instant::now());
        let wait = SpinThenPark::default();
        let team = Team {
            state: &state,
            policy: None,
            wait: &wait,
            member: 0,
            size: 1,
            region: 0,
            thread: ThreadHandle::current(),
            _not_send: std::marker::PhantomData,
        };
        f(&team);
    }
}

/// The region lock, held: by the thread that runs a region, for its length.
pub(super) type RegionLock<'a> = parking_lot::MutexGuard<'a, Control>;

/// Marks the calling thread as inside a region until dropped (unwinding included), then
/// restores what it was.
pub(crate) struct InRegion(bool);

impl InRegion {
    #[inline]
    pub(crate) fn enter() -> Self {
        Self(IN_REGION.with(|r| r.replace(true)))
    }
}

impl Drop for InRegion {
    #[inline]
    fn drop(&mut self) {
        IN_REGION.with(|r| r.set(self.0));
    }
}

/// What kind of region runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// A user SPMD region: every member must run on its own thread (members meet at barriers).
    Spmd,
    /// A region whose team the caller chose: the policy is neither asked nor told (its
    /// decisions and measurements stay its own). An SPMD region ([`Runtime::region_of`]), or
    /// `revocable`, a loop whose unstarted members the caller runs
    /// ([`Runtime::for_each_member`]).
    Sized { threads: usize, revocable: bool },
    /// A work-shared loop without barriers: members that have not started may be run by the
    /// starting thread (revoked). `counter`: its schedule hands out chunks from the shared
    /// counter, which the loop leaves non-zero.
    Loop { counter: bool },
    /// A timed barrier.
    Probe,
}

impl Shape {
    /// Whether members whose worker has not claimed them may be run by the starting thread:
    /// not in SPMD regions, whose members may wait for each other.
    pub(super) fn revocable(self) -> bool {
        matches!(
            self,
            Shape::Loop { .. }
                | Shape::Probe
                | Shape::Sized {
                    revocable: true,
                    ..
                }
        )
    }

    /// Whether the starting thread runs the members no worker has claimed once its own part is
    /// done (loops; probes are posted revocable but only ever revoked by a give-up).
    pub(super) fn revokes(self) -> bool {
        matches!(
            self,
            Shape::Loop { .. }
                | Shape::Sized {
                    revocable: true,
                    ..
                }
        )
    }

    pub(super) fn loop_with(schedule: Schedule) -> Shape {
        Shape::Loop {
            counter: schedule.uses_counter(),
        }
    }
}
