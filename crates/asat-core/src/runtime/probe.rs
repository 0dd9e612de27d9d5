//! Probes: timed barriers a policy asks for before it decides a team.

use super::*;

impl Runtime {
    /// A timed barrier with `threads` members: the passage is the last member's exit minus the
    /// first member's entry. Workers created for it first run an empty, untimed team. With
    /// `give_up_after`, the starting thread (always the first in) waits at most that long for
    /// the workers to start; it then revokes the posts no worker has claimed (they count as
    /// arrived at the barrier, and the passage is reported as at least the time waited), and
    /// `prompt` counts the members that entered within the limit.
    pub(super) fn probe(
        &self,
        ctl: &mut Control,
        threads: usize,
        give_up_after: Option<Duration>,
    ) -> ProbeResult {
        let inner = &*self.inner;
        let st = &inner.region;
        let given_up = AtomicU32::new(0);
        let waited_ns = AtomicU64::new(0);
        let body = |team: &Team<'_>| {
            let m = team.index();
            let enter = st.now_ns();
            st.probe_enter[m].store(enter, Ordering::Relaxed);
            if m == 0 {
                if let Some(limit) = give_up_after {
                    let workers = &inner.mailboxes[1..team.size()];
                    // Spin without yielding: the wait is bounded by `limit`, and a yield on a
                    // crowded CPU would hand it to another process for a whole time slice.
                    let start = Instant::now();
                    let mut spins = 0u32;
                    let all_started = loop {
                        if workers.iter().all(|mb| mb.claimed()) {
                            break true;
                        }
                        spins += 1;
                        if spins == PROBE_SPINS_PER_CLOCK_READ {
                            spins = 0;
                            if start.elapsed() >= limit {
                                break false;
                            }
                        }
                        crate::sync::spin_loop();
                    };
                    if !all_started {
                        let k = workers.iter().filter(|mb| mb.revoke()).count();
                        if k > 0 {
                            given_up.store(k as u32, Ordering::Relaxed);
                            waited_ns.store(st.now_ns().saturating_sub(enter), Ordering::Relaxed);
                            // The revoked members will never arrive: arrive for them.
                            st.arrive_for(k, team.size());
                        }
                    }
                }
            }
            team.barrier_with(WaitSite::Probe, || {});
            st.probe_leave[m].store(st.now_ns(), Ordering::Relaxed);
        };
        let created = self.workers_started();
        let n = self.ensure_workers(threads);
        if self.workers_started() > created {
            // A thread's creation is not a sign of load: let the new workers start (one empty
            // team) before the timed barrier.
            let warm = Instant::now();
            if let Some(p) = self.execute(ctl, n, &|_: &Team<'_>| {}, Shape::Probe, Some(warm)) {
                resume_unwind(p);
            }
        }
        let began = Instant::now();
        // Members given up on keep the times of an earlier probe: mark every slot first.
        for m in 0..n {
            st.probe_enter[m].store(u64::MAX, Ordering::Relaxed);
            st.probe_leave[m].store(0, Ordering::Relaxed);
        }
        if let Some(p) = self.execute(ctl, n, &body, Shape::Probe, Some(began)) {
            // Only a callback can panic in a probe (the policy's safe point at the barrier):
            // re-raised now that every member is done, as a region's panic would be.
            resume_unwind(p);
        }
        let first_in = st.probe_enter[..n]
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .min()
            .unwrap_or(0);
        let last_out = st.probe_leave[..n]
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        inner.stats.probes.fetch_add(1, Ordering::Relaxed);
        inner
            .stats
            .probe_ns
            .fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
        let passage = last_out
            .saturating_sub(first_in)
            .max(waited_ns.load(Ordering::Relaxed));
        // Members given up on kept `u64::MAX`: never prompt.
        let limit_ns = give_up_after.map_or(u64::MAX, |l| l.as_nanos() as u64);
        let prompt = st.probe_enter[..n]
            .iter()
            .filter(|a| a.load(Ordering::Relaxed).saturating_sub(first_in) <= limit_ns)
            .count();
        ProbeResult {
            threads: n,
            passage: Duration::from_nanos(passage),
            blocked: st.blocks.load(Ordering::Relaxed),
            given_up: given_up.load(Ordering::Relaxed),
            prompt: if give_up_after.is_some() { prompt } else { n },
        }
    }
}
