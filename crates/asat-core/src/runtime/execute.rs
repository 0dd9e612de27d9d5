//! How a region runs once its starting thread holds the region lock: the policy's decision
//! (with the probes it asks for), starting the workers, posting the region to them, member 0's
//! part and the join (steps 1-5 of the [region protocol](super)).

use super::*;

/// Aborts the process if dropped by an unwinding that started while it was held: held by the
/// starting thread while workers may still run a region's body, which lives on its stack.
/// Every user callback in that window is run under `catch_unwind`, so only a bug in the
/// runtime could unwind there; an abort is then the only sound outcome (freeing what the
/// workers use would be undefined behaviour). A region started while the thread was already
/// unwinding (a parallel call in a `Drop` that a panic runs) ends normally, as in rayon.
struct AbortOnUnwind {
    /// Whether the thread was unwinding already when the guard was made.
    unwinding: bool,
}

impl AbortOnUnwind {
    #[inline]
    fn new() -> Self {
        Self {
            unwinding: std::thread::panicking(),
        }
    }
}

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        if std::thread::panicking() && !self.unwinding {
            eprintln!("asat-core: unwinding while workers run a region; aborting");
            std::process::abort();
        }
    }
}

impl Runtime {
    /// Asks the policy for the team of the region about to start, running the probes it asks
    /// for. Called with the region lock held. Returns the team size and, when the policy read
    /// the clock through [`RegionStart::now`], that instant, which is then the region's start
    /// (one clock read serves both; a policy that does not read it saves the read).
    pub(super) fn decide(&self, ctl: &mut Control) -> (usize, Option<Instant>) {
        let inner = &*self.inner;
        let mut start = RegionStart {
            seq: ctl.seq,
            max_threads: inner.max_threads,
            last_team: ctl.last_team,
            now: Cell::new(None),
            probe: None,
            probes_left: MAX_PROBES_PER_REGION,
        };
        loop {
            match inner.policy.plan(&start) {
                Plan::Run { threads } => {
                    return (threads.clamp(1, inner.max_threads), start.now.get());
                }
                Plan::Probe {
                    threads,
                    give_up_after,
                } => {
                    let threads = threads.clamp(1, inner.max_threads);
                    if start.probes_left == 0 {
                        return (threads, start.now.get());
                    }
                    start.probes_left -= 1;
                    start.probe = Some(self.probe(ctl, threads, give_up_after));
                    start.now.set(None);
                }
            }
        }
    }

    /// Runs `body` on a team of `size` (workers already started), counting the region's wall
    /// time from `started` when there is one (with timing on, there always is: read here if
    /// needed). Returns the first panic payload of the team. Probes do not go into the stats
    /// nor to `region_end`.
    ///
    /// With a start, the starting thread reads the clock once more at the end (twice more with
    /// timing: its own arrival too); these reads sit on every region's critical path.
    pub(super) fn execute<F: Fn(&Team<'_>) + Sync>(
        &self,
        ctl: &mut Control,
        size: usize,
        body: &F,
        shape: Shape,
        started: Option<Instant>,
    ) -> Option<Box<dyn std::any::Any + Send>> {
        let counted = shape != Shape::Probe;
        let inner = &*self.inner;
        let st = &inner.region;
        let job = JobRef::new(body);
        let timing = inner.timing && counted;
        let started = match started {
            None if timing => Some(Instant::now()),
            s => s,
        };
        st.reset(started.filter(|_| timing), ctl.dirty);
        let workers = &inner.mailboxes[1..size];
        let (job_data, job_call) = job.to_words();
        // A team of one has no worker that could still run the body.
        let guard = (size > 1).then(AbortOnUnwind::new);
        for mb in workers {
            mb.job_data.store(job_data, Ordering::Relaxed);
            mb.job_call.store(job_call, Ordering::Relaxed);
            mb.size.store(size, Ordering::Relaxed);
            mb.region.store(ctl.seq, Ordering::Relaxed);
            mb.timing.store(timing, Ordering::Relaxed);
            mb.post(shape.revocable());
        }
        let me = ThreadHandle::current();
        let work = Work {
            job: &job,
            size,
            region: ctl.seq,
            timing,
        };
        let arrival0 = inner.run_member(0, me, &work, true);
        let mut revoked = 0u32;
        if shape.revokes() {
            // Members whose worker has not started yet are run here, one after another: a
            // loop's members only share work, so any thread may run any of them, and a worker
            // that is not on a CPU does not hold the region up. Each is revoked only after the
            // one before has returned, so a member run here that waits for another
            // (`for_each_member`) waits for one that has returned, runs, or is still offered.
            for (i, mb) in workers.iter().enumerate() {
                if mb.revoke() {
                    revoked += 1;
                    let arrival = inner.run_member(i + 1, me, &work, false);
                    mb.arrival_ns.store(arrival, Ordering::Relaxed);
                }
            }
        }
        let all_done = || workers.iter().all(|mb| mb.finished());
        let info = WaitInfo {
            site: WaitSite::Join,
            member: 0,
            team_size: size,
        };
        if inner.join_event.wait_until(all_done, &*inner.wait, &info) {
            st.blocks.fetch_add(1, Ordering::Relaxed);
        }
        // Every member is done with the body.
        drop(guard);
        let wall = started.map(|s| s.elapsed());
        if let Shape::Loop { counter: true } = shape {
            // Every member is done with the counter; a store needs no look at the line first.
            st.clear_counter();
        }
        // Only touch the panic slot (a lock) when a member panicked: the slot shares a line
        // with words the workers read.
        let poisoned = st.is_poisoned();
        let panic = if poisoned {
            st.panic.lock().take()
        } else {
            None
        };
        let blocks = st.blocks.load(Ordering::Relaxed);
        ctl.dirty = poisoned || blocks != 0;
        if !counted {
            return panic;
        }
        ctl.seq += 1;
        ctl.last_team = size;
        let stats = &inner.stats;
        stats.regions.fetch_add(1, Ordering::Relaxed);
        stats.last_team.store(size as u64, Ordering::Relaxed);
        stats.blocks.fetch_add(u64::from(blocks), Ordering::Relaxed);
        stats
            .revoked
            .fetch_add(u64::from(revoked), Ordering::Relaxed);
        let mut report = RegionReport {
            seq: ctl.seq - 1,
            team_size: size,
            wall,
            blocks,
            revoked,
            panicked: panic.is_some(),
            timing: None,
        };
        if let (true, Some(started), Some(wall)) = (timing, started, wall) {
            let departure_ns = wall.as_nanos() as u64;
            let start_ns = st.ns_at(started);
            let arrivals = &mut ctl.arrivals[..size];
            arrivals[0] = arrival0;
            for (a, mb) in arrivals[1..].iter_mut().zip(workers) {
                *a = mb.arrival_ns.load(Ordering::Relaxed);
            }
            for a in arrivals.iter_mut() {
                *a = a.saturating_sub(start_ns);
            }
            let release_ns = arrivals.iter().copied().max().unwrap_or(0);
            let deps = &mut ctl.departures[..size];
            deps.fill(release_ns);
            deps[0] = departure_ns.max(release_ns);
            let t = RegionTiming {
                arrivals_ns: arrivals,
                release_ns,
                departures_ns: deps,
            };
            stats
                .join_wait_ns
                .fetch_add(t.join_wait().as_nanos() as u64, Ordering::Relaxed);
            stats
                .member_ns
                .fetch_add(wall.as_nanos() as u64 * size as u64, Ordering::Relaxed);
            stats
                .wall_ns
                .fetch_add(wall.as_nanos() as u64, Ordering::Relaxed);
            report.timing = Some(t);
        }
        if let Shape::Sized { .. } = shape {
            return panic;
        }
        // A panic in region_end propagates like a member's, but a member's comes first (the
        // runtime is consistent either way: the region is over).
        let ended = catch_unwind(AssertUnwindSafe(|| inner.policy.region_end(&report)));
        match (panic, ended) {
            (Some(p), Err(later)) => {
                crate::payload::drop_payload(later);
                Some(p)
            }
            (p, ended) => p.or(ended.err()),
        }
    }

    /// Starts workers so that a team of `size` can run; returns the size that can (smaller
    /// only if the system refuses new threads: counted, reported on standard error the first
    /// time, and not tried again for [`SPAWN_RETRY`]).
    ///
    /// A runtime built with a spawn handler has every worker from its build, so this starts
    /// none there; its teams stop below the first worker whose [`ThreadBuilder`] was dropped
    /// without running.
    pub(super) fn ensure_workers(&self, size: usize) -> usize {
        let inner = &*self.inner;
        let usable = |threads: &Threads| {
            (threads.workers.len() + 1).min(inner.lost_from.load(Ordering::Relaxed))
        };
        if self.workers_started() + 1 >= size {
            return size.min(inner.lost_from.load(Ordering::Relaxed));
        }
        let mut threads = inner.threads.lock();
        if threads.workers.len() + 1 < size {
            if let Some(at) = threads.spawn_failed_at {
                if at.elapsed() < SPAWN_RETRY {
                    return size.min(usable(&threads));
                }
            }
        }
        while threads.workers.len() + 1 < size {
            let index = threads.workers.len() + 1;
            let arc = Arc::clone(&self.inner);
            // std refuses names with a NUL byte (it would panic at every region): drop them.
            let mut name = inner.hooks.thread_name(index);
            name.retain(|c| c != '\0');
            let mut b = thread::Builder::new().name(name);
            if let Some(s) = inner.hooks.stack_size {
                b = b.stack_size(s);
            }
            match b.spawn(move || worker_thread(arc, index)) {
                Ok(h) => {
                    threads.workers.push(Some(h));
                    inner
                        .workers_started
                        .store(threads.workers.len(), Ordering::Relaxed);
                }
                Err(e) => {
                    inner.stats.spawn_failures.fetch_add(1, Ordering::Relaxed);
                    if threads.spawn_failed_at.is_none() {
                        eprintln!(
                            "asat-core: the system refused to start worker thread {index} \
                             ({e}); teams are limited to {index} threads until it accepts \
                             one (see RuntimeStats::spawn_failures); a smaller \
                             Builder::stack_size or max_threads (ASAT_MAX_THREADS), or a \
                             higher RLIMIT_NPROC, lets the workers start"
                        );
                    }
                    threads.spawn_failed_at = Some(Instant::now());
                    break;
                }
            }
        }
        size.min(usable(&threads))
    }

    /// Starts the workers a runtime without a spawn handler has not started yet, so that tasks
    /// find threads to run on (a region starts only as many as its team needs).
    pub(crate) fn start_task_workers(&self) {
        if self.workers_started() + 1 < self.inner.max_threads {
            self.ensure_workers(self.inner.max_threads);
        }
    }

    /// How many threads may run this runtime's tasks (index 0 and the workers that started,
    /// below the first that could not), starting the workers not started yet.
    pub(crate) fn task_threads(&self) -> usize {
        self.ensure_workers(self.inner.max_threads)
    }
}

/// What a worker thread runs, from its start to the runtime's shutdown: a thread the runtime
/// started, or one a spawn handler started ([`ThreadBuilder::run`]).
///
/// A worker has its runtime installed while it runs, so that the free functions (`spawn`,
/// `current_num_threads`, iterator calls) called from a region body on it act on the region's
/// runtime.
pub(super) fn worker_thread(inner: Arc<Inner>, index: usize) {
    #[cfg(not(loom))]
    {
        let rt = Runtime::handle(inner);
        rt.install_here(|| rt.inner.worker_main(&rt, index));
    }
    // loom's threads share one OS thread, and with it the installed runtime's thread-local,
    // which is not loom's: its workers install nothing.
    #[cfg(loom)]
    {
        let rt = Runtime::handle(inner);
        rt.inner.worker_main(&rt, index);
    }
}
