use super::*;
use crate::{AdaptiveGlobal, Block, Config, FixedSpin, Spin};
use std::sync::atomic::AtomicUsize;

fn cfg() -> Config {
    Config::builder()
        .context_switch(Duration::from_micros(30))
        .release_latency(Duration::from_micros(1))
        .build()
        .unwrap()
}

#[test]
fn generation_carries_past_the_episode_wrap() {
    let b = Barrier::new(1, Block).unwrap();
    for g in 1..=(1u64 << EPISODE_BITS) + 5 {
        assert_eq!(b.wait().unwrap().generation, g);
    }
    assert_eq!(b.stats().generation, (1 << EPISODE_BITS) + 5);
}

#[test]
fn participants_are_checked() {
    let e = Barrier::new(0, Block).unwrap_err();
    assert_eq!(
        e.to_string(),
        "barrier of 0 participants: must be between 1 and 65535"
    );
    assert!(Barrier::new(MAX_PARTICIPANTS + 1, Block).is_err());
}

#[test]
fn single_participant_never_waits() {
    let b = Barrier::new(1, AdaptiveGlobal::with_config(&cfg())).unwrap();
    for g in 1..=40 {
        let r = b.wait().unwrap();
        assert!(r.leader);
        assert_eq!(r.generation, g);
    }
    // every episode had no imbalance; they are reported in batches
    assert_eq!(b.stats().imbalance, Some(Duration::ZERO));
}

fn run<S: TwoPhase>(b: &Barrier<S>, threads: usize, episodes: u64) {
    let leaders = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let _g = b.guard();
                for e in 1..=episodes {
                    let r = b.wait().unwrap();
                    assert_eq!(r.generation, e);
                    if r.leader {
                        leaders.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(leaders.load(Ordering::Relaxed) as u64, episodes);
    let st = b.stats();
    assert_eq!(st.generation, episodes);
    assert_eq!(st.arrivals, episodes * threads as u64);
    assert_eq!(
        st.spin_successes + st.blocks,
        episodes * (threads as u64 - 1)
    );
}

#[test]
fn every_strategy_completes_episodes_in_order() {
    run(&Barrier::new(3, Block).unwrap(), 3, 200);
    run(&Barrier::new(3, Spin).unwrap(), 3, 200);
    run(
        &Barrier::new(3, FixedSpin::new(Duration::from_micros(20))).unwrap(),
        3,
        200,
    );
    run(
        &Barrier::new(4, AdaptiveGlobal::with_config(&cfg())).unwrap(),
        4,
        200,
    );
    run(
        &Barrier::new(2, crate::AdaptiveLocal::with_config(&cfg())).unwrap(),
        2,
        200,
    );
}

#[test]
fn block_strategy_blocks_when_released_late() {
    let b = Barrier::new(2, Block).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| b.wait().unwrap());
        std::thread::sleep(Duration::from_millis(30));
        b.wait().unwrap();
    });
    assert_eq!(b.stats().blocks, 1);
}

#[test]
fn panic_poisons_waiters_and_later_arrivals() {
    let b = Barrier::new(3, FixedSpin::new(Duration::from_micros(50))).unwrap();
    std::thread::scope(|s| {
        let w = s.spawn(|| b.wait());
        let p = s.spawn(|| {
            let _g = b.guard();
            std::thread::sleep(Duration::from_millis(20));
            panic!("participant fails");
        });
        assert!(p.join().is_err());
        let e = w.join().unwrap().unwrap_err();
        assert!(e.is_poisoned(), "{e}");
    });
    assert!(b.is_poisoned());
    assert!(b.wait().unwrap_err().is_poisoned());
    assert!(b.stats().poisoned);
}

#[test]
fn global_estimates_the_imbalance_of_sleepy_partner() {
    let b = Barrier::new(2, AdaptiveGlobal::with_config(&cfg())).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..20 {
                b.wait().unwrap();
            }
        });
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(2));
            b.wait().unwrap();
        }
    });
    let st = b.stats();
    let v = st.imbalance.expect("an estimate");
    // Each episode the other thread waits ~2 ms; a loaded machine only makes it longer.
    assert!(v >= Duration::from_millis(1), "{v:?}");
    // 2 ms is more than V = 300 µs: spin only S.
    assert_eq!(st.spin, Duration::from_micros(60));
}

/// Counts what the barrier reports, for the window tests.
#[derive(Debug, Default)]
struct Reports {
    longs: AtomicU64,
    shorts: AtomicU64,
}

impl TwoPhase for Reports {
    fn name(&self) -> &'static str {
        "reports"
    }
    fn barrier_spin(&self) -> Duration {
        Duration::from_secs(5)
    }
    fn read_spin(&self) -> Duration {
        Duration::from_secs(5)
    }
    fn wants_imbalance(&self) -> bool {
        true
    }
    fn record_imbalance(&self, _: Duration) {
        self.longs.fetch_add(1, Ordering::Relaxed);
    }
    fn record_short_imbalances(&self, count: u32) {
        self.shorts.fetch_add(u64::from(count), Ordering::Relaxed);
    }
}

fn shorts_of_one_report(b: &Barrier<Reports>) -> u64 {
    let before = b.strategy.shorts.load(Ordering::Relaxed);
    b.report_window();
    b.strategy.shorts.load(Ordering::Relaxed) - before
}

#[test]
fn windows_report_shorts_as_32_less_the_longs_with_a_carry() {
    let b = Barrier::new(2, Reports::default()).unwrap();
    // episode 0's first arriver reports a window that never happened: nothing
    assert_eq!(shorts_of_one_report(&b), 0);
    assert_eq!(shorts_of_one_report(&b), 32);
    b.stamps.longs.store(5, Ordering::Relaxed);
    assert_eq!(shorts_of_one_report(&b), 27);
    // a window's last long counted after its report: 33 longs in the next one, the extra
    // one taking back the short the late window reported too many
    b.stamps.longs.store(33, Ordering::Relaxed);
    assert_eq!(shorts_of_one_report(&b), 0);
    assert_eq!(shorts_of_one_report(&b), 31);
    assert_eq!(shorts_of_one_report(&b), 32);
    // one participant: the leader reports, from the first real window on
    let one = Barrier::new(1, Reports::default()).unwrap();
    assert_eq!(shorts_of_one_report(&one), 32);
}

#[test]
fn every_episode_is_reported_once_short_or_long() {
    // 97 episodes: the windows of episodes 0-31, 32-63 and 64-95 are reported (at the
    // arrivals of episodes 32, 64 and 96), each episode in them as long or short. Episode
    // 96 may have been long too, and episode 95's leader may count its long only after the
    // last report (which then counts it as short as well): 96 to 98. A partner that arrives
    // 300 µs late makes most episodes long; a loaded machine may turn some short, which
    // changes nothing here. (A window reported for nothing at episode 0 would make 128.)
    let b = Barrier::new(2, Reports::default()).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..97 {
                b.wait().unwrap();
            }
        });
        for _ in 0..97 {
            std::thread::sleep(Duration::from_micros(300));
            b.wait().unwrap();
        }
    });
    let r = &b.strategy;
    let (longs, shorts) = (
        r.longs.load(Ordering::Relaxed),
        r.shorts.load(Ordering::Relaxed),
    );
    assert!(
        (96..=98).contains(&(longs + shorts)),
        "{longs} long and {shorts} short episodes reported for 96 (to 98)"
    );
}

#[test]
fn a_strategy_shared_by_short_lived_barriers_learns_their_imbalance() {
    // One strategy for many barriers of two episodes each (a barrier per job), every
    // episode about 1 ms imbalanced: no barrier completes a window, so only the long
    // episodes are reported, and the estimate is about 1 ms (not zeros for windows that
    // never were).
    let cfg = Config::builder()
        .context_switch(Duration::from_micros(300))
        .release_latency(Duration::from_micros(1))
        .build()
        .unwrap();
    let g = std::sync::Arc::new(AdaptiveGlobal::with_config(&cfg));
    for _ in 0..30 {
        let b = Barrier::new(2, std::sync::Arc::clone(&g)).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..2 {
                    b.wait().unwrap();
                }
            });
            for _ in 0..2 {
                std::thread::sleep(Duration::from_millis(1));
                b.wait().unwrap();
            }
        });
    }
    let est = g.imbalance_estimate().expect("an estimate");
    assert!(est >= Duration::from_micros(500), "{est:?}");
}
