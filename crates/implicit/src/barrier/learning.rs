//! The learning half of the [`Barrier`] protocol (see the parent module's docs): the last
//! arriver's report of a long episode and the reports of windows of short ones.

use std::time::{Duration, Instant};

use super::{Barrier, TIME_MASK};
use crate::strategy::SHORT_BATCH;
use crate::sync::Ordering;
use crate::TwoPhase;

impl<S: TwoPhase> Barrier<S> {
    /// The last arriver's learning after the release of episode `ep`, when there is any: its
    /// first arriver stamped its arrival (`stamped`), or the barrier has one participant (who
    /// then also reports the windows of short episodes).
    #[cold]
    pub(super) fn after_release(&self, ep: u32, stamped: bool) {
        if stamped {
            self.record_stamp(ep);
        }
        if self.n == 1 && ep % SHORT_BATCH == SHORT_BATCH - 1 {
            self.report_window();
        }
    }

    /// Reports the short episodes of the last window of [`SHORT_BATCH`]: those whose first
    /// arriver did not stamp. The first arriver of every `SHORT_BATCH`-th episode reports
    /// them at once, before it starts spinning, so that a barrier whose threads keep arriving
    /// together neither reads the clock nor writes a shared word nor touches the estimator
    /// every episode, and its last arriver does no more than a bit test. A long episode whose
    /// leader counts it only after the window was reported makes that window report one short
    /// too many, and the next one short fewer: over two windows the totals are right.
    pub(super) fn report_window(&self) {
        // Up to one window's worth of longs; any more (a long counted late by the last
        // window's leader, already reported there as short) stay for the next window, whose
        // shorts they then take back.
        let longs = match self.stamps.longs.load(Ordering::Relaxed) {
            0 => 0,
            _ => self
                .stamps
                .longs
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                    Some(l.saturating_sub(SHORT_BATCH))
                })
                .map_or(0, |l| l.min(SHORT_BATCH)),
        };
        let shorts = SHORT_BATCH - longs;
        if shorts > 0 {
            self.strategy.record_short_imbalances(shorts);
        }
    }

    /// A long episode: `now - first arrival` to the strategy.
    pub(super) fn record_stamp(&self, ep: u32) {
        let first = self.stamps.first.load(Ordering::Relaxed);
        // The tag tells this episode's stamp from the next one's, should that episode's first
        // arriver already have overwritten it (this leader was preempted): that episode is then
        // counted as short.
        if first & !TIME_MASK == Self::tag(ep) {
            let now = self.now_ns(Instant::now());
            self.strategy
                .record_imbalance(Duration::from_nanos(now.saturating_sub(first & TIME_MASK)));
            self.stamps.longs.fetch_add(1, Ordering::Relaxed);
        }
    }
}
