//! loom models of the barrier's arrive/release/block protocol and of the flag's
//! publish/wait protocol: no wake-up is lost (loom reports a deadlock if a waiter sleeps
//! forever), generations advance by one per episode, poisoning releases every waiter. And
//! asat-core's runtime waiting through `AdaptiveGlobal` (asat-core's own protocols have their
//! model in `crates/asat-core/tests/loom.rs`). The `stamped_*` models use a strategy that wants
//! the imbalance, so every first arriver stamps and sets `STAMPED` in the futex word while
//! others may be asleep on it (under loom every non-zero spin is timed).
//!
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p asat-implicit --release --test loom`
#![cfg(loom)]

use std::time::Duration;

use std::sync::atomic::{AtomicBool, Ordering};

use asat_implicit::{AdaptiveGlobal, Barrier, Block, Config, FixedSpin, Flag, TwoPhase};
use loom::sync::Arc;
use loom::thread;

/// Two participants, two episodes, the waiter blocking at once.
#[test]
fn two_threads_two_episodes_block() {
    loom::model(|| {
        let b = Arc::new(Barrier::new(2, Block).unwrap());
        let b2 = Arc::clone(&b);
        let h = thread::spawn(move || {
            let g1 = b2.wait().unwrap().generation;
            let g2 = b2.wait().unwrap().generation;
            (g1, g2)
        });
        let m1 = b.wait().unwrap().generation;
        let m2 = b.wait().unwrap().generation;
        assert_eq!((m1, m2), (1, 2));
        assert_eq!(h.join().unwrap(), (1, 2));
        assert_eq!(b.stats().generation, 2);
        assert_eq!(b.stats().arrivals, 4);
    });
}

/// Two participants, the waiter spinning (one more look) before it blocks.
#[test]
fn two_threads_spin_then_block() {
    loom::model(|| {
        let b = Arc::new(Barrier::new(2, FixedSpin::new(Duration::from_micros(1))).unwrap());
        let b2 = Arc::clone(&b);
        let h = thread::spawn(move || b2.wait().unwrap());
        let r = b.wait().unwrap();
        let r2 = h.join().unwrap();
        assert_ne!(r.leader, r2.leader, "exactly one leader");
        assert_eq!((r.generation, r2.generation), (1, 1));
    });
}

/// Three participants, one episode: two may sleep at once.
#[test]
fn three_threads_block() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let b = Arc::new(Barrier::new(3, Block).unwrap());
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let b = Arc::clone(&b);
                thread::spawn(move || b.wait().unwrap().leader)
            })
            .collect();
        let mut leaders = usize::from(b.wait().unwrap().leader);
        for h in hs {
            leaders += usize::from(h.join().unwrap());
        }
        assert_eq!(leaders, 1);
        assert_eq!(b.stats().generation, 1);
    });
}

/// A participant that poisons instead of arriving releases the waiter with an error.
#[test]
fn poison_releases_waiter() {
    loom::model(|| {
        let b = Arc::new(Barrier::new(2, Block).unwrap());
        let b2 = Arc::clone(&b);
        let h = thread::spawn(move || b2.wait());
        b.poison();
        assert!(h.join().unwrap().unwrap_err().is_poisoned());
        assert!(b.wait().unwrap_err().is_poisoned());
    });
}

/// The flag: a blocked waiter sees the published value.
#[test]
fn flag_publish_wakes_waiter() {
    loom::model(|| {
        let f = Arc::new(Flag::new());
        let f2 = Arc::clone(&f);
        let h = thread::spawn(move || f2.wait_at_least(1, &Block).unwrap());
        f.set(1);
        h.join().unwrap();
        assert_eq!(f.value(), 1);
    });
}

/// asat-core's runtime with `Builder::wait(AdaptiveGlobal)`: at every team barrier the last
/// arriver hands the arrival times to the strategy before the release, and joins report their
/// waits; the published spin time is read by waiters meanwhile. Two regions of two barriers.
#[test]
fn runtime_with_adaptive_global() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let config = Config::builder()
            .context_switch(Duration::from_micros(20))
            .release_latency(Duration::from_nanos(100))
            .build()
            .unwrap();
        let rt = asat_core::Runtime::builder()
            .max_threads(2)
            .policy(asat_core::Fixed::new(2))
            .wait(AdaptiveGlobal::with_config(&config))
            .build()
            .unwrap();
        for _ in 0..2 {
            let arrived = loom::sync::atomic::AtomicUsize::new(0);
            rt.region(|team| {
                for episode in 1..=2 {
                    arrived.fetch_add(1, loom::sync::atomic::Ordering::Relaxed);
                    team.barrier();
                    let n = arrived.load(loom::sync::atomic::Ordering::Relaxed);
                    // Both arrived at this barrier; the other may be one arrival ahead.
                    assert!(
                        (2 * episode..=2 * episode + 1).contains(&n),
                        "episode {episode}: {n} arrivals"
                    );
                }
            });
        }
    });
}

/// The `stamped_*` models explore with a preemption bound of 3: unbounded they run for more
/// than 15 minutes.
fn bounded(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// Spins (under loom: one more look) and wants the imbalance; notes, outside loom's model, that
/// a leader used a stamp, so that the models can check the `STAMPED` path was reached.
#[derive(Debug)]
struct Stamping;

static STAMP_USED: AtomicBool = AtomicBool::new(false);

impl TwoPhase for Stamping {
    fn name(&self) -> &'static str {
        "stamping"
    }
    fn barrier_spin(&self) -> Duration {
        Duration::from_micros(1)
    }
    fn read_spin(&self) -> Duration {
        Duration::from_micros(1)
    }
    fn wants_imbalance(&self) -> bool {
        true
    }
    fn record_imbalance(&self, _: Duration) {
        STAMP_USED.store(true, Ordering::Relaxed);
    }
}

/// Two participants, two episodes, the first arriver stamping each time.
#[test]
fn stamped_two_threads_two_episodes() {
    STAMP_USED.store(false, Ordering::Relaxed);
    bounded(|| {
        let b = Arc::new(Barrier::new(2, Stamping).unwrap());
        let b2 = Arc::clone(&b);
        let h = thread::spawn(move || (b2.wait().unwrap(), b2.wait().unwrap()));
        let (m1, m2) = (b.wait().unwrap(), b.wait().unwrap());
        let (h1, h2) = h.join().unwrap();
        assert_eq!(
            (m1.generation, m2.generation, h1.generation, h2.generation),
            (1, 2, 1, 2)
        );
        assert!(m1.leader != h1.leader && m2.leader != h2.leader);
        let st = b.stats();
        assert_eq!((st.generation, st.arrivals), (2, 4));
        assert_eq!(st.spin_successes + st.blocks, 2);
    });
    assert!(
        STAMP_USED.load(Ordering::Relaxed),
        "no execution used a stamp"
    );
}

/// Three participants: a waiter may be asleep when the first arriver sets `STAMPED` (the word
/// changes under a sleeper), or its compare-exchange setting `SLEEP` may fail on `STAMPED`.
#[test]
fn stamped_three_threads_with_sleepers() {
    STAMP_USED.store(false, Ordering::Relaxed);
    bounded(|| {
        let b = Arc::new(Barrier::new(3, Stamping).unwrap());
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let b = Arc::clone(&b);
                thread::spawn(move || b.wait().unwrap())
            })
            .collect();
        let r = b.wait().unwrap();
        let mut leaders = usize::from(r.leader);
        for h in hs {
            let r = h.join().unwrap();
            assert_eq!(r.generation, 1);
            leaders += usize::from(r.leader);
        }
        assert_eq!(leaders, 1);
        let st = b.stats();
        assert_eq!((st.generation, st.arrivals), (1, 3));
        assert_eq!(st.spin_successes + st.blocks, 2);
    });
    assert!(
        STAMP_USED.load(Ordering::Relaxed),
        "no execution used a stamp"
    );
}

/// Poisoning while the first arriver stamps: both waiters get the error, and so does a later
/// arrival.
#[test]
fn stamped_poisoning() {
    bounded(|| {
        let b = Arc::new(Barrier::new(3, Stamping).unwrap());
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let b = Arc::clone(&b);
                thread::spawn(move || b.wait())
            })
            .collect();
        b.poison();
        for h in hs {
            assert!(h.join().unwrap().unwrap_err().is_poisoned());
        }
        assert!(b.wait().unwrap_err().is_poisoned());
    });
}

/// `AdaptiveGlobal` itself on the barrier: two participants, two episodes.
#[test]
fn stamped_global_two_episodes() {
    bounded(|| {
        let config = Config::builder()
            .context_switch(Duration::from_micros(20))
            .release_latency(Duration::from_nanos(100))
            .build()
            .unwrap();
        let b = Arc::new(Barrier::new(2, AdaptiveGlobal::with_config(&config)).unwrap());
        let b2 = Arc::clone(&b);
        let h =
            thread::spawn(move || (b2.wait().unwrap().generation, b2.wait().unwrap().generation));
        let m = (b.wait().unwrap().generation, b.wait().unwrap().generation);
        assert_eq!(m, (1, 2));
        assert_eq!(h.join().unwrap(), (1, 2));
    });
}
