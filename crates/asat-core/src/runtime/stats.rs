//! A runtime's counters since it was built ([`RuntimeStats`]) and how [`Runtime::stats`] reads
//! them.

use super::*;

/// Counters of a runtime since it was built. Times are only gathered when timing is on
/// ([`Builder::timing`](crate::Builder::timing) or a policy that
/// [wants it](Policy::wants_timing)); otherwise they stay 0.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeStats {
    /// Regions run (probes not included; nested inline regions not included).
    pub regions: u64,
    /// Probes (timed barriers) run.
    pub probes: u64,
    /// Wall time the starting thread spent in probes, summed (always measured: two clock
    /// reads per probe).
    pub probe_time: Duration,
    /// The team size of the last region.
    pub last_team: usize,
    /// Times a member blocked in the kernel at a join or barrier.
    pub blocks: u64,
    /// Loop members run by the starting thread because their worker had not started them
    /// (see [`RegionReport::revoked`]).
    pub revoked: u64,
    /// Time members spent waiting at joins, summed over members.
    pub join_wait: Duration,
    /// Team size times wall time, summed over regions: the thread time regions occupied.
    pub member_time: Duration,
    /// Wall time of regions, summed.
    pub wall: Duration,
    /// Regions run inline on their calling thread because another thread's region held the
    /// runtime for longer than [`REGION_LOCK_WAIT`] (not counted in `regions`).
    pub inline_busy: u64,
    /// Threads the system refused to start: workers (teams are then limited to the workers
    /// that did start) and threads for [spawned](Runtime::spawn) jobs. The first failure of
    /// each kind is reported on standard error, and a start is tried again at most once a
    /// second. Also counted, without a report: workers whose [`ThreadBuilder`] a spawn
    /// handler dropped without running it (teams stop below them too).
    pub spawn_failures: u64,
    /// Jobs started by [`Runtime::spawn`] (and its relatives) that panicked (see the panic
    /// rules in [`spawn`](crate::spawn)).
    pub spawn_panics: u64,
}

impl RuntimeStats {
    /// The share of thread time in regions spent waiting at joins, in percent (0 when no timing
    /// was gathered).
    pub fn join_wait_pct(&self) -> f64 {
        if self.member_time.is_zero() {
            0.0
        } else {
            100.0 * self.join_wait.as_secs_f64() / self.member_time.as_secs_f64()
        }
    }
}

impl Runtime {
    /// Counters since the runtime was built.
    pub fn stats(&self) -> RuntimeStats {
        let s = &self.inner.stats;
        RuntimeStats {
            regions: s.regions.load(Ordering::Relaxed),
            probes: s.probes.load(Ordering::Relaxed),
            probe_time: Duration::from_nanos(s.probe_ns.load(Ordering::Relaxed)),
            last_team: s.last_team.load(Ordering::Relaxed) as usize,
            blocks: s.blocks.load(Ordering::Relaxed),
            revoked: s.revoked.load(Ordering::Relaxed),
            join_wait: Duration::from_nanos(s.join_wait_ns.load(Ordering::Relaxed)),
            member_time: Duration::from_nanos(s.member_ns.load(Ordering::Relaxed)),
            wall: Duration::from_nanos(s.wall_ns.load(Ordering::Relaxed)),
            inline_busy: s.inline_busy.load(Ordering::Relaxed),
            spawn_failures: s.spawn_failures.load(Ordering::Relaxed),
            spawn_panics: s.spawn_panics.load(Ordering::Relaxed),
        }
    }
}
