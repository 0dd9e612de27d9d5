//! The paper's spin-time rules (section 6.1) and load-imbalance estimator (sections 6.2, 6.3),
//! as pure logic: no threads, no clocks.
//!
//! - [`SpinRule`]: always spin at least `S = 2 cs`; at a barrier, if the estimated imbalance `v`
//!   exceeds `V = 10 cs`, spin only `S` (blocking pays off: the processor can do more useful
//!   work for another job than the coordination it loses); otherwise spin `v` plus the release
//!   latency (enough to wait through the imbalance while the job is coordinated). At a
//!   point-to-point wait (a read), spin `S`.
//! - [`Estimator`]: a bounded sample of wait times. The largest 10% are discarded as outliers
//!   (waits inflated by scheduling irregularities: a partner that was not running); the largest
//!   remaining one is the imbalance estimate. Once the sample is full, a new wait time replaces
//!   one chosen at random, so the estimate follows changes of the program's imbalance.

use std::time::Duration;

/// The default capacity of an [`Estimator`]'s sample.
pub const DEFAULT_SAMPLE: usize = 64;

/// The largest sample an [`Estimator`] may keep.
pub const MAX_SAMPLE: usize = 4096;

/// The paper's spin-time rules, in absolute times.
///
/// ```
/// use asat_implicit::SpinRule;
/// use std::time::Duration;
/// let us = Duration::from_micros;
/// let rule = SpinRule::from_context_switch(us(30), us(1));
/// assert_eq!(rule.min_spin, us(60)); // S = 2 cs
/// assert_eq!(rule.max_imbalance, us(300)); // V = 10 cs
/// assert_eq!(rule.barrier_spin(None), us(60)); // nothing known yet: S
/// assert_eq!(rule.barrier_spin(Some(us(10))), us(60)); // never below S
/// assert_eq!(rule.barrier_spin(Some(us(200))), us(201)); // v + release latency
/// assert_eq!(rule.barrier_spin(Some(us(400))), us(60)); // v > V: only S
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpinRule {
    /// `S`: the least any waiter spins (twice the context-switch cost: the scheduling skew a
    /// blocked partner introduces).
    pub min_spin: Duration,
    /// `V`: the imbalance beyond which a barrier waiter spins only `S` (ten context switches).
    pub max_imbalance: Duration,
    /// Added to the imbalance: how long a spinning waiter takes to see the release.
    pub release_latency: Duration,
}

impl SpinRule {
    /// `S = 2 cs`, `V = 10 cs`.
    pub fn from_context_switch(context_switch: Duration, release_latency: Duration) -> Self {
        Self {
            min_spin: context_switch.saturating_mul(2),
            max_imbalance: context_switch.saturating_mul(10),
            release_latency,
        }
    }

    /// The spin time at a barrier for an imbalance estimate (`None`: nothing known yet).
    pub fn barrier_spin(&self, imbalance: Option<Duration>) -> Duration {
        match imbalance {
            None => self.min_spin,
            Some(v) if v > self.max_imbalance => self.min_spin,
            Some(v) => v.saturating_add(self.release_latency).max(self.min_spin),
        }
    }

    /// The spin time at a point-to-point wait: `S`.
    pub fn read_spin(&self) -> Duration {
        self.min_spin
    }
}

/// A bounded sample of wait times and the imbalance estimate drawn from it.
///
/// ```
/// use asat_implicit::Estimator;
/// use std::time::Duration;
/// let mut e = Estimator::new(20);
/// for us in 1..=18 {
///     e.record(Duration::from_micros(us));
/// }
/// e.record(Duration::from_millis(50)); // a partner was descheduled: an outlier
/// e.record(Duration::from_millis(70));
/// // 20 values: the largest 2 are dropped, the largest remaining is 18 µs
/// assert_eq!(e.estimate(), Some(Duration::from_micros(18)));
/// ```
#[derive(Clone, Debug)]
pub struct Estimator {
    sample: Vec<u64>,
    scratch: Vec<u64>,
    cap: usize,
    rng: u64,
    estimate: Option<u64>,
    /// How many values of the sample are 0 (a full sample of zeros stays one when more zeros
    /// are recorded, so that case costs O(1)).
    zeros: usize,
    recorded: u64,
    recomputed: u64,
}

impl Estimator {
    /// An empty estimator keeping at most `capacity` wait times (clamped to
    /// `1..=`[`MAX_SAMPLE`]), its random replacement seeded from the clock.
    pub fn new(capacity: usize) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9e37_79b9, |d| d.as_nanos() as u64);
        Self::with_seed(capacity, seed ^ (&seed as *const u64 as u64))
    }

    /// Like [`new`](Estimator::new) with a fixed seed (reproducible replacement).
    pub fn with_seed(capacity: usize, seed: u64) -> Self {
        let cap = capacity.clamp(1, MAX_SAMPLE);
        Self {
            sample: Vec::with_capacity(cap),
            scratch: Vec::with_capacity(cap),
            cap,
            rng: seed | 1,
            estimate: None,
            zeros: 0,
            recorded: 0,
            recomputed: 0,
        }
    }

    /// The sample's capacity.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The wait times kept, in nanoseconds (in no particular order).
    pub fn sample(&self) -> &[u64] {
        &self.sample
    }

    /// How many wait times were recorded in all.
    pub fn recorded(&self) -> u64 {
        self.recorded
    }

    /// How many times the estimate had to be recomputed (a record that leaves the top of the
    /// sample alone costs O(1)).
    pub fn recomputed(&self) -> u64 {
        self.recomputed
    }

    /// How many of `n` values are discarded as outliers: the largest 10%, rounded down.
    pub fn outliers(n: usize) -> usize {
        n / 10
    }

    /// Records `count` wait times of `wait`: as `count` calls of [`record`](Estimator::record),
    /// except that the shortcut below draws no random numbers (so a seeded estimator replaces
    /// other values afterwards than after `count` single calls).
    ///
    /// Zeros recorded into a full sample of zeros change nothing but
    /// [`recorded`](Estimator::recorded) and cost O(1): a barrier whose threads keep arriving
    /// together reports its short imbalances as batches of zeros.
    pub fn record_n(&mut self, wait: Duration, count: u32) {
        if wait.is_zero() && self.is_full_of_zeros() {
            self.recorded += u64::from(count);
            return;
        }
        for _ in 0..count {
            self.record(wait);
        }
    }

    /// Records one wait time. Until the sample is full it is appended; then it replaces a value
    /// chosen uniformly at random.
    pub fn record(&mut self, wait: Duration) {
        let x = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
        self.recorded += 1;
        if self.sample.len() < self.cap {
            self.sample.push(x);
            self.zeros += usize::from(x == 0);
            self.recompute();
            return;
        }
        // uniform in 0..cap from the random number's high 32 bits (multiply and shift)
        let i = (((self.next_random() >> 32) * self.cap as u64) >> 32) as usize;
        let y = std::mem::replace(&mut self.sample[i], x);
        self.zeros = self.zeros + usize::from(x == 0) - usize::from(y == 0);
        // Removing a value below the estimate and adding one not above it leaves the values
        // above the estimate alone and at least k+1 values at or above it, so the estimate
        // (the (k+1)-th largest) cannot change.
        match self.estimate {
            _ if x == y => {}
            Some(e) if x <= e && y < e => {}
            _ => self.recompute(),
        }
    }

    /// The imbalance estimate: the largest wait time once the largest 10% are discarded.
    /// `None` before the first record.
    pub fn estimate(&self) -> Option<Duration> {
        self.estimate.map(Duration::from_nanos)
    }

    /// Whether the sample is full and every value in it is 0: recording zeros then changes
    /// nothing.
    pub fn is_full_of_zeros(&self) -> bool {
        self.zeros == self.cap
    }

    /// Forgets every wait time.
    pub fn clear(&mut self) {
        self.sample.clear();
        self.zeros = 0;
        self.estimate = None;
    }

    fn recompute(&mut self) {
        self.recomputed += 1;
        let n = self.sample.len();
        if n == 0 {
            self.estimate = None;
            return;
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.sample);
        let k = n - 1 - Self::outliers(n);
        let (_, v, _) = self.scratch.select_nth_unstable(k);
        self.estimate = Some(*v);
    }

    /// xorshift64*: enough to pick which value a new one replaces.
    fn next_random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

impl Default for Estimator {
    fn default() -> Self {
        Self::new(DEFAULT_SAMPLE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// The estimate recomputed from scratch.
    fn reference(sample: &[u64]) -> Option<u64> {
        let mut s = sample.to_vec();
        s.sort_unstable();
        let n = s.len();
        (n > 0).then(|| s[n - 1 - n / 10])
    }

    #[test]
    fn empty_has_no_estimate() {
        let e = Estimator::new(8);
        assert_eq!(e.estimate(), None);
    }

    #[test]
    fn under_ten_values_nothing_is_an_outlier() {
        let mut e = Estimator::with_seed(64, 1);
        for v in [5, 9, 3] {
            e.record(us(v));
        }
        assert_eq!(e.estimate(), Some(us(9)));
    }

    #[test]
    fn top_ten_percent_are_outliers() {
        let mut e = Estimator::with_seed(100, 1);
        for v in 1..=90 {
            e.record(us(v));
        }
        for v in 0..10 {
            e.record(Duration::from_millis(100 + v));
        }
        assert_eq!(e.sample().len(), 100);
        assert_eq!(e.estimate(), Some(us(90)));
        // one more outlier than 10%: it becomes the estimate
        let mut e = Estimator::with_seed(100, 1);
        for v in 1..=89 {
            e.record(us(v));
        }
        for v in 0..11 {
            e.record(Duration::from_millis(100 + v));
        }
        assert_eq!(e.estimate(), Some(Duration::from_millis(100)));
    }

    #[test]
    fn sample_is_bounded_and_replacement_follows_a_change() {
        let mut e = Estimator::with_seed(32, 7);
        for _ in 0..32 {
            e.record(us(500));
        }
        assert_eq!(e.estimate(), Some(us(500)));
        // the program's imbalance drops to 20 µs: random replacement forgets the old values
        for _ in 0..2000 {
            e.record(us(20));
        }
        assert_eq!(e.sample().len(), 32);
        assert_eq!(e.estimate(), Some(us(20)));
        assert_eq!(e.recorded(), 2032);
    }

    #[test]
    fn replacement_picks_positions_at_random() {
        // With a full sample of distinct markers, new values must land at many positions.
        let mut e = Estimator::with_seed(16, 3);
        for v in 0..16 {
            e.record(Duration::from_nanos(1000 + v));
        }
        for _ in 0..64 {
            e.record(Duration::from_nanos(1));
        }
        let replaced = e.sample().iter().filter(|&&v| v == 1).count();
        assert!(replaced >= 8, "only {replaced} of 16 positions replaced");
        assert!(replaced < 16 || e.recorded() > 64);
    }

    #[test]
    fn o1_path_is_taken_for_small_values() {
        let mut e = Estimator::with_seed(64, 9);
        for v in 0..64 {
            e.record(us(100 + v));
        }
        let before = e.recomputed();
        for _ in 0..100 {
            e.record(us(1));
        }
        // a value below the estimate replacing one below it needs no recomputation; only the
        // (few) replacements of values at or above the estimate do
        assert!(e.recomputed() - before < 50, "{}", e.recomputed() - before);
    }

    #[test]
    fn zeros_into_a_sample_of_zeros_cost_nothing() {
        let mut e = Estimator::with_seed(8, 5);
        e.record_n(us(3), 1);
        e.record_n(Duration::ZERO, 40); // fills the sample, then replaces the 3 µs at random
        assert_eq!(e.sample(), &[0; 8]);
        let (recomputed, rng) = (e.recomputed(), e.rng);
        e.record_n(Duration::ZERO, 1000);
        assert_eq!((e.recomputed(), e.rng), (recomputed, rng)); // no work, no random draw
        assert_eq!(e.recorded(), 1041);
        assert_eq!(e.estimate(), Some(Duration::ZERO));
        // one long wait ends the shortcut
        e.record(us(9));
        e.record_n(Duration::ZERO, 1);
        assert_ne!(e.rng, rng);
    }

    #[test]
    fn rule_s_and_v() {
        let r = SpinRule::from_context_switch(us(30), us(2));
        assert_eq!(r.min_spin, us(60));
        assert_eq!(r.max_imbalance, us(300));
        assert_eq!(r.read_spin(), us(60));
        assert_eq!(r.barrier_spin(None), us(60));
        assert_eq!(r.barrier_spin(Some(us(0))), us(60));
        assert_eq!(r.barrier_spin(Some(us(58))), us(60));
        assert_eq!(r.barrier_spin(Some(us(59))), us(61));
        assert_eq!(r.barrier_spin(Some(us(300))), us(302)); // v = V still spins through
        assert_eq!(r.barrier_spin(Some(us(301))), us(60)); // v > V: S only
        assert_eq!(r.barrier_spin(Some(Duration::MAX)), us(60));
    }

    proptest! {
        #[test]
        fn estimate_matches_reference(
            cap in 1usize..80,
            seed in any::<u64>(),
            values in proptest::collection::vec(0u64..1_000_000, 1..400),
        ) {
            let mut e = Estimator::with_seed(cap, seed);
            for &v in &values {
                e.record(Duration::from_nanos(v));
                prop_assert!(e.sample().len() <= cap);
                prop_assert_eq!(e.estimate().map(|d| d.as_nanos() as u64), reference(e.sample()));
            }
            prop_assert_eq!(e.sample().len(), values.len().min(cap));
        }

        #[test]
        fn batches_match_reference(
            cap in 1usize..80,
            seed in any::<u64>(),
            batches in proptest::collection::vec((prop_oneof![Just(0u64), 0u64..1_000_000], 1u32..100), 1..60),
        ) {
            let mut e = Estimator::with_seed(cap, seed);
            let mut recorded = 0;
            for &(v, n) in &batches {
                e.record_n(Duration::from_nanos(v), n);
                recorded += u64::from(n);
                prop_assert_eq!(e.recorded(), recorded);
                prop_assert_eq!(e.sample().len(), (recorded as usize).min(cap));
                prop_assert_eq!(e.zeros, e.sample().iter().filter(|&&x| x == 0).count());
                prop_assert_eq!(e.estimate().map(|d| d.as_nanos() as u64), reference(e.sample()));
            }
        }

        #[test]
        fn spin_is_never_below_s(cs in 1u64..1_000_000, lat in 0u64..10_000, v in proptest::option::of(0u64..100_000_000)) {
            let r = SpinRule::from_context_switch(Duration::from_nanos(cs), Duration::from_nanos(lat));
            let s = r.barrier_spin(v.map(Duration::from_nanos));
            prop_assert!(s >= r.min_spin);
            if let Some(v) = v {
                let v = Duration::from_nanos(v);
                if v > r.max_imbalance {
                    prop_assert_eq!(s, r.min_spin);
                } else {
                    prop_assert!(s >= v);
                }
            }
        }
    }
}
