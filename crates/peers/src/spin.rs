//! A pure busy-waiting barrier (no yield, no blocking): the busy waiting of the gang-scheduling
//! paper's experiments, and the `os-spin` peer of asat-gang's example and bench.

use std::sync::atomic::{AtomicUsize, Ordering};

/// A counter-and-generation barrier for `n` threads whose waiters spin on the CPU.
#[derive(Debug)]
pub struct SpinBarrier {
    n: usize,
    count: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    /// A barrier for `n` threads.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            count: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Waits until all `n` threads have called `wait` for this generation.
    pub fn wait(&self) {
        let g = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
        } else {
            while self.generation.load(Ordering::Acquire) == g {
                std::hint::spin_loop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_thread_passes_before_all_arrive() {
        let b = SpinBarrier::new(3);
        let before = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 1..=100 {
                        before.fetch_add(1, Ordering::SeqCst);
                        b.wait();
                        assert!(before.load(Ordering::SeqCst) >= 3 * round);
                        b.wait();
                    }
                });
            }
        });
    }
}
