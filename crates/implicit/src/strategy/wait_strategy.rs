//! asat-core's [`WaitStrategy`] for every strategy, through its [`TwoPhase`] rule.

use std::time::Duration;

use asat_core::{WaitInfo, WaitOutcome, WaitSite, WaitStrategy};

use super::{AdaptiveGlobal, AdaptiveLocal, AnyStrategy, Block, FixedSpin, Oracle, Spin, TwoPhase};

/// asat-core's waits through a [`TwoPhase`] rule: every site spins the barrier spin time (the
/// runtime caps idle workers at [`asat_core::IDLE_SPIN_CAP`]); barrier and probe waits feed
/// [`record_wait`](TwoPhase::record_wait), joins [`record_join_wait`](TwoPhase::record_join_wait),
/// and the team barrier's arrival times [`record_imbalance`](TwoPhase::record_imbalance).
fn core_spin_limit(s: &dyn TwoPhase, _info: &WaitInfo) -> Duration {
    s.barrier_spin()
}

fn core_waited(s: &dyn TwoPhase, info: &WaitInfo, outcome: &WaitOutcome) {
    match info.site {
        WaitSite::Join => s.record_join_wait(outcome.waited, outcome.blocked),
        WaitSite::Barrier | WaitSite::Probe => s.record_wait(outcome.waited, outcome.blocked),
        _ => {}
    }
}

fn core_all_arrived(s: &dyn TwoPhase, arrivals_ns: &[u64]) {
    let (Some(&lo), Some(&hi)) = (arrivals_ns.iter().min(), arrivals_ns.iter().max()) else {
        return;
    };
    s.record_imbalance(Duration::from_nanos(hi - lo));
}

macro_rules! impl_wait_strategy {
    ($($t:ty),*) => {$(
        impl WaitStrategy for $t {
            fn spin_limit(&self, info: &WaitInfo) -> Duration {
                core_spin_limit(self, info)
            }
            fn waited(&self, info: &WaitInfo, outcome: &WaitOutcome) {
                core_waited(self, info, outcome)
            }
            fn wants_arrivals(&self) -> bool {
                self.wants_imbalance()
            }
            fn all_arrived(&self, _info: &WaitInfo, arrivals_ns: &[u64]) {
                core_all_arrived(self, arrivals_ns)
            }
        }
    )*};
}

impl_wait_strategy!(
    Block,
    Spin,
    FixedSpin,
    Oracle,
    AdaptiveLocal,
    AdaptiveGlobal,
    AnyStrategy
);

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::*;

    #[test]
    fn global_learns_through_core_arrivals() {
        let us = Duration::from_micros;
        let c = Config::builder()
            .context_switch(us(30))
            .release_latency(us(1))
            .sample(20)
            .build()
            .unwrap();
        let g = AdaptiveGlobal::with_config(&c);
        assert!(WaitStrategy::wants_arrivals(&g));
        for _ in 0..5 {
            core_all_arrived(&g, &[1_000, 81_000, 41_000]);
        }
        assert_eq!(g.imbalance_estimate(), Some(us(80)));
        assert_eq!(g.barrier_spin(), us(81));
    }
}
