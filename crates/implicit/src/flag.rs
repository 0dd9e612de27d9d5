//! [`Flag`]: a point-to-point event for the NEWS and TRANSPOSE patterns: one thread publishes
//! a value, others wait until it reaches the value they need, spinning the strategy's
//! [`read_spin`](TwoPhase::read_spin) (`S = 2 cs`: the paper's reads always spin `S`) before
//! blocking.
//!
//! The futex word holds `value << 2 | SLEEP << 1 | POISON`; values are 30-bit and compared
//! with wrap-around, so a flag can be advanced forever as long as no waiter lags more than
//! 2^29 values behind. Publishing is a compare-exchange that clears `SLEEP`, followed by a wake
//! when the old value had it set (the `sync` module's protocol).

use crate::sync::{Futex, Ordering, Padded};
use crate::{Error, TwoPhase};

const POISON: u32 = 1;
const SHIFT: u32 = 2;
/// The largest value a [`Flag`] holds; values wrap around past it.
pub const FLAG_VALUE_MASK: u32 = u32::MAX >> SHIFT;

/// How a [`Flag::wait_at_least`] went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlagWait {
    /// The value was there before the waiter had to spin.
    pub immediate: bool,
    /// The waiter gave up spinning and blocked.
    pub blocked: bool,
}

/// A published 30-bit value that threads wait on.
///
/// ```
/// use asat_implicit::{Flag, FixedSpin};
/// use std::time::Duration;
/// let f = Flag::new();
/// let spin = FixedSpin::new(Duration::from_micros(50));
/// std::thread::scope(|s| {
///     s.spawn(|| f.set(3));
///     f.wait_at_least(3, &spin).unwrap();
/// });
/// assert_eq!(f.value(), 3);
/// ```
#[derive(Debug)]
pub struct Flag {
    word: Padded<Futex>,
}

impl Default for Flag {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether `value` has reached `target`, with wrap-around in 30 bits.
#[inline]
pub(crate) fn reached(value: u32, target: u32) -> bool {
    value.wrapping_sub(target) & FLAG_VALUE_MASK < (1 << 29)
}

impl Flag {
    /// A flag holding 0.
    pub fn new() -> Self {
        Self {
            word: Padded(Futex::new(0)),
        }
    }

    /// The current value.
    pub fn value(&self) -> u32 {
        self.word.load(Ordering::Acquire) >> SHIFT
    }

    /// Publishes `value` (taken modulo 2^30) and wakes blocked waiters. What this thread wrote
    /// before is visible to a waiter that sees the value.
    pub fn set(&self, value: u32) {
        self.word
            .update_and_wake(|old| ((value & FLAG_VALUE_MASK) << SHIFT) | (old & POISON));
    }

    /// Waits until the value has reached `target` (with wrap-around), spinning `read_spin` of
    /// `strategy` first. Returns the poisoning error if [`poison`](Flag::poison) was called
    /// before the value was reached.
    pub fn wait_at_least(&self, target: u32, strategy: &impl TwoPhase) -> Result<FlagWait, Error> {
        let target = target & FLAG_VALUE_MASK;
        let done = |w: u32| w & POISON != 0 || reached(w >> SHIFT, target);
        if done(self.word.load(Ordering::Acquire)) && !self.is_poisoned() {
            return Ok(FlagWait {
                immediate: true,
                blocked: false,
            });
        }
        let w = self.word.wait(strategy.read_spin(), done, |_| {});
        let now = self.word.load(Ordering::Acquire);
        if !reached(now >> SHIFT, target) {
            return Err(Error::poisoned());
        }
        Ok(FlagWait {
            immediate: false,
            blocked: w.blocked,
        })
    }

    fn is_poisoned(&self) -> bool {
        self.word.load(Ordering::Acquire) & POISON != 0
    }

    /// Poisons the flag: waiters that have not seen their value, and later waits for a value
    /// not reached, return the poisoning error.
    pub fn poison(&self) {
        self.word.or_and_wake(POISON);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{Block, FixedSpin};
    use std::time::Duration;

    #[test]
    fn wraparound_comparison() {
        assert!(reached(5, 5));
        assert!(reached(6, 5));
        assert!(!reached(4, 5));
        assert!(reached(2, FLAG_VALUE_MASK - 1)); // wrapped past the top
        assert!(!reached(FLAG_VALUE_MASK - 1, 2));
    }

    #[test]
    fn blocked_waiter_is_woken() {
        let f = Flag::new();
        std::thread::scope(|s| {
            let h = s.spawn(|| f.wait_at_least(1, &Block).unwrap());
            std::thread::sleep(Duration::from_millis(30));
            f.set(1);
            assert!(h.join().unwrap().blocked);
        });
    }

    #[test]
    fn poison_releases_waiter_with_error() {
        let f = Flag::new();
        std::thread::scope(|s| {
            let h = s.spawn(|| f.wait_at_least(10, &FixedSpin::new(Duration::from_micros(5))));
            std::thread::sleep(Duration::from_millis(20));
            f.set(4);
            f.poison();
            assert!(h.join().unwrap().unwrap_err().is_poisoned());
        });
        // a value already reached is still reported as reached
        assert!(f.wait_at_least(4, &Block).is_ok());
        f.set(12);
        assert!(f.wait_at_least(11, &Block).is_ok());
    }

    #[test]
    fn ping_pong_many_rounds() {
        let a = Flag::new();
        let b = Flag::new();
        let s_ = FixedSpin::new(Duration::from_micros(20));
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 1..=2000u32 {
                    a.wait_at_least(i, &s_).unwrap();
                    b.set(i);
                }
            });
            for i in 1..=2000u32 {
                a.set(i);
                b.wait_at_least(i, &s_).unwrap();
            }
        });
        assert_eq!(b.value(), 2000);
    }
}
