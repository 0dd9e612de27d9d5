//! What one evaluation saw and decided ([`Asat::history`](super::Asat::history)).

use std::time::Duration;

/// What an evaluation decided.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// The team size stays.
    Keep,
    /// One thread fewer.
    Drop,
    /// The toe-dip barrier with one more thread was good: one thread more.
    Grow,
    /// The toe-dip barrier was bad: the team size stays.
    RejectGrow,
    /// The bound (affinity mask, CPU quota) fell below the team size: clamped to it.
    Clamp,
}

impl Decision {
    /// A short lower-case name (`keep`, `drop`, `grow`, `reject-grow`, `clamp`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Keep => "keep",
            Decision::Drop => "drop",
            Decision::Grow => "grow",
            Decision::RejectGrow => "reject-grow",
            Decision::Clamp => "clamp",
        }
    }
}

/// One evaluation, as [`Asat::history`](super::Asat::history) records it.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// When, since the first region start the policy saw.
    pub at: Duration,
    /// Team size before the evaluation.
    pub threads_before: usize,
    /// Team size after it.
    pub threads_after: usize,
    /// Passage of the timed barrier with the current size (`None` for a team of one).
    pub passage: Option<Duration>,
    /// Passage of the toe-dip barrier, if one was run.
    pub toe_passage: Option<Duration>,
    /// The share of the machine the evaluation saw, in threads: the team size times the share
    /// of runnable time its threads were not kept waiting, or where the kernel does not say,
    /// times the mean fraction of members that entered the timed barriers on time (`None` when
    /// neither is known).
    pub share: Option<f64>,
    /// The CPU pressure since the previous evaluation (`None` where the kernel has none).
    pub pressure: Option<f64>,
    /// The share of runnable time the process's threads waited for a CPU since the previous
    /// evaluation (`None` where the kernel does not say).
    pub wait: Option<f64>,
    /// The CPUs the rest of the machine left free since the previous evaluation (`None` where
    /// unknown).
    pub free: Option<f64>,
    /// The bad-time threshold in force.
    pub bad_time: Duration,
    /// The bound in force.
    pub bound: usize,
    /// What was decided.
    pub decision: Decision,
}
