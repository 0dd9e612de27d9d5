//! Workers: their mailboxes, their main loop, how one member of a region runs, and their
//! shutdown when the runtime is dropped.

use super::*;
use crate::payload::catch;

/// Phases of a mailbox's `state` (low two bits; then [`REVOCABLE`]; the post's token is above).
const POSTED: u64 = 1;
const RUNNING: u64 = 2;
const FINISHED: u64 = 3;
/// Set in a post the starting thread may revoke (loops and probes, not SPMD regions).
const REVOCABLE: u64 = 4;

/// A worker's mailbox: the region it is to join, on one cache line with the event it waits
/// on and the word that says who runs it.
///
/// `state` goes `POSTED` (by the starting thread) -> `RUNNING` (the worker claims it, CAS) ->
/// `FINISHED` (the worker is done with it), or `POSTED` -> `FINISHED` directly when the starting
/// thread revokes it (CAS) to run the member itself. Whoever wins the CAS runs the member; the
/// starting thread does not post again before the state is `FINISHED`, so a worker that loses
/// the race never touches that region. A post without [`REVOCABLE`] (an SPMD region) is never
/// revoked, so its worker takes it without the CAS, which would cost one more transfer of the
/// line between CPUs before the member starts.
#[derive(Debug, Default)]
pub(super) struct Mailbox {
    /// Moves once per post (and once at shutdown); the futex an idle worker sleeps on.
    pub(super) event: Event,
    pub(super) state: AtomicU64,
    /// The region's body ([`JobRef::to_words`]); the closure it refers to stays alive on the
    /// starting thread's stack until this mailbox is `FINISHED` (see the job module docs).
    pub(super) job_data: AtomicPtr<()>,
    pub(super) job_call: AtomicPtr<()>,
    pub(super) size: AtomicUsize,
    pub(super) region: AtomicU64,
    pub(super) timing: AtomicBool,
    /// Join arrival of the last region, ns since the runtime's epoch (when timing; the worker
    /// does not read the region's start, which the starting thread has just written).
    pub(super) arrival_ns: AtomicU64,
}

// A worker reads its whole post with one cache transfer. (loom's atomics are larger.)
#[cfg(not(loom))]
const _: () = assert!(std::mem::size_of::<Mailbox>() <= 64);

impl Mailbox {
    /// Posts the region written into the mailbox and wakes the worker.
    #[inline]
    pub(super) fn post(&self, revocable: bool) {
        let token = u64::from(self.event.current().wrapping_add(1));
        let flag = if revocable { REVOCABLE } else { 0 };
        self.state
            .store(token << 3 | flag | POSTED, Ordering::Release);
        self.event.notify();
    }

    /// The worker's claim on a posted region: the claimed state word, or `None` when there is
    /// nothing to claim (revoked, or already run).
    #[inline]
    fn claim(&self) -> Option<u64> {
        let s = self.state.load(Ordering::Acquire);
        (s & 3 == POSTED
            && (s & REVOCABLE == 0
                || self
                    .state
                    .compare_exchange(
                        s,
                        s ^ POSTED ^ RUNNING,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    )
                    .is_ok()))
        .then_some(s)
    }

    /// The starting thread's claim on a member whose worker has not started it.
    #[inline]
    pub(super) fn revoke(&self) -> bool {
        let s = self.state.load(Ordering::Acquire);
        s & 3 == POSTED
            && self
                .state
                .compare_exchange(
                    s,
                    s ^ POSTED ^ FINISHED,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
    }

    /// Whether a region is posted and not yet claimed (`SeqCst`: see [`Event::wait_until`]).
    #[inline]
    pub(super) fn posted(&self) -> bool {
        self.state.load(Ordering::SeqCst) & 3 == POSTED
    }

    /// Whether the posted region was claimed by its worker (or is finished).
    #[inline]
    pub(super) fn claimed(&self) -> bool {
        self.state.load(Ordering::Acquire) & 3 != POSTED
    }

    /// Whether the posted region is finished (`SeqCst`: see [`Event::wait_until`]).
    #[inline]
    pub(super) fn finished(&self) -> bool {
        self.state.load(Ordering::SeqCst) & 3 == FINISHED
    }
}

impl Inner {
    pub(super) fn worker_main(&self, rt: &Runtime, index: usize) {
        let thread = ThreadHandle::current();
        let info = ThreadInfo { index, thread };
        // A worker only ever runs members of this runtime's regions and its thread callbacks:
        // a region it starts, from a body or from a hook, runs inline (starting one for real
        // would wait for the region lock that the region it serves holds). Set once for the
        // thread's life; the starting thread is marked by `region` for each region.
        IN_REGION.with(|r| r.set(true));
        // The hooks and the policy's thread callbacks are user code. A panic in one (the panic
        // hook has reported it) must not end the worker: a region posted to it would wait for
        // it forever.
        let _ = catch(|| {
            if let Some(h) = &self.hooks.on_start {
                h(index);
            }
            self.policy.thread_start(&info);
        });
        let mb = &self.mailboxes[index];
        // Between tasks (the `steal` module runs the loop), the worker serves its mailbox:
        // a region posted to it runs before the next task.
        let stop = || self.shutdown.load(Ordering::Acquire);
        let posted = || mb.posted();
        let mut serve = || {
            let Some(token) = mb.claim() else {
                // Nothing posted, or revoked: the starting thread ran this member itself.
                return false;
            };
            // SAFETY: the starting thread wrote both words from one `JobRef::to_words` before
            // the post that `claim` acquired.
            let job = unsafe {
                JobRef::from_words((
                    mb.job_data.load(Ordering::Relaxed),
                    mb.job_call.load(Ordering::Relaxed),
                ))
            };
            let work = Work {
                job: &job,
                size: mb.size.load(Ordering::Relaxed),
                region: mb.region.load(Ordering::Relaxed),
                timing: mb.timing.load(Ordering::Relaxed),
            };
            let arrival = self.run_member(index, thread, &work, true);
            mb.arrival_ns.store(arrival, Ordering::Relaxed);
            // The last touch of the region: from here on the starting thread may return.
            mb.state.store(token ^ POSTED ^ FINISHED, Ordering::SeqCst);
            self.join_event.notify_sleepers();
            true
        };
        // Shutdown sets its flag before it moves the event, and the loop checks the flag
        // before each sleep with the event's protocol, so no worker sleeps past it; drop
        // runs only while no region is in progress, so a worker that sees the flag leaves
        // no post unserved.
        self.worker_loop(rt, index, &stop, &posted, &mut serve);
        let _ = catch(|| {
            self.policy.thread_stop(&info);
            if let Some(h) = &self.hooks.on_stop {
                h(index);
            }
        });
    }

    /// One member's part of a region: placement, body. Returns the arrival time at the join
    /// (ns since the runtime's epoch, when timing; else 0).
    pub(super) fn run_member(
        &self,
        member: usize,
        thread: ThreadHandle,
        work: &Work<'_>,
        place: bool,
    ) -> u64 {
        let Work {
            job,
            size,
            region,
            timing,
        } = *work;
        let st = &self.region;
        let team = Team {
            state: st,
            policy: Some(&*self.policy),
            wait: &*self.wait,
            member,
            size,
            region,
            thread,
            _not_send: std::marker::PhantomData,
        };
        let mut restore = None;
        // What `current_thread_index` answers while the body runs.
        let _member = current::enter(current::Member::new(member, self.max_threads, self));
        // (Inside a region already: workers for their whole life, the starting thread while
        // `region` runs.)
        let result = catch_unwind(AssertUnwindSafe(|| {
            // The policy's placement is user code too: a panic in it poisons the region.
            if place {
                restore = self.place(&team.info(), member == 0);
            }
            // SAFETY: the JobRef and its closure outlive every member's run (see the job module
            // docs): the starting thread waits for all members before returning.
            unsafe { job.run(&team) }
        }));
        if let Err(payload) = result {
            st.poison(payload);
        }
        if let Some(mask) = restore {
            unplace(&mask);
        }
        if timing {
            st.now_ns()
        } else {
            0
        }
    }

    /// Applies the policy's placement for the calling thread, `info`; returns the mask to
    /// give back when it is done, for a thread that wants its own back (`restore`: a region's
    /// starting thread, a call's calling thread; workers keep the last placement).
    pub(crate) fn place(&self, info: &MemberInfo, restore: bool) -> Option<CpuSet> {
        let Placement::Cpus(set) = self.policy.placement(info) else {
            return None;
        };
        if PINNED.with(Cell::get) == Some(set) {
            return None;
        }
        let old = if restore {
            // The thread gets its own mask back afterwards; one that cannot be read (CPUs
            // beyond a CpuSet's range) could not be restored, so the thread is not pinned at
            // all.
            match affinity::get() {
                Ok(mask) => Some(mask),
                Err(_) => return None,
            }
        } else {
            None
        };
        if affinity::set(&set).is_ok() {
            PINNED.with(|p| p.set(Some(set)));
            old
        } else {
            None
        }
    }
}

/// Gives the calling thread back `mask`, its own from before a placement
/// ([`Inner::place`] with `restore`).
pub(crate) fn unplace(mask: &CpuSet) {
    // Best effort: the thread's own mask could only fail to apply if it had become invalid,
    // and there is nothing better to do with it then.
    let _ = affinity::set(mask);
    PINNED.with(|p| p.set(None));
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if !self.owner {
            return;
        }
        self.inner.resident.release();
        if self.forked() {
            // The workers (and any lock a parent's thread held at the fork) are not in this
            // process: joining or detaching their handles would act on threads that do not
            // exist. Leak the runtime's state instead.
            std::mem::forget(Arc::clone(&self.inner));
            return;
        }
        // With spawned jobs pending, the thread that runs the last of them shuts the workers
        // down instead (see the spawn module docs).
        if self.inner.spawner.release_owner() {
            self.inner.shutdown_workers();
        }
    }
}

impl Inner {
    /// An identity of the runtime, for telling apart the runtimes a thread is a member of.
    #[inline]
    pub(crate) fn id(&self) -> usize {
        self as *const Inner as usize
    }

    /// Stops the workers and joins those the runtime started. Called once, when no region can
    /// start any more: by the owner's drop, or by the spawn thread that ran the last job after
    /// it. Workers a spawn handler started have no handle here: they are told to stop and
    /// not waited for ([`ThreadBuilder::run`] returns on their threads, at once for one that
    /// calls it only later), as rayon does not wait for them either.
    pub(super) fn shutdown_workers(&self) {
        self.shutdown.store(true, Ordering::Release);
        let workers = std::mem::take(&mut self.threads.lock().workers);
        for mb in &self.mailboxes[1..] {
            mb.event.notify();
        }
        for w in workers.into_iter().flatten() {
            let _ = w.join();
        }
    }
}
