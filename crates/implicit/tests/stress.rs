//! Stress tests of asat-implicit's barrier and flags: many episodes with random arrival delays
//! under every strategy, poisoning at a random point, and a property test that generations only
//! move forward. Every test is bounded in time (episode counts and a watchdog), not timed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use asat_implicit::{AnyStrategy, Barrier, Config, Flag, TwoPhase};
use proptest::prelude::*;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Runs `f` on another thread and fails the test if it does not finish within `limit` (a hang
/// shows as a failure, not as a CI job that never ends).
fn watchdog<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not finish within {limit:?}: it hangs"))
}

const STRATEGIES: [&str; 6] = ["block", "spin", "fixed", "oracle:50", "local", "global"];

fn cfg() -> Config {
    Config::builder()
        .context_switch(Duration::from_micros(20))
        .release_latency(Duration::from_micros(1))
        .sample(16)
        .build()
        .unwrap()
}

fn delay(rng: &mut StdRng) {
    match rng.random_range(0..10u32) {
        0..=5 => {}
        6..=7 => {
            let t = Instant::now();
            let d = Duration::from_micros(rng.random_range(0..100));
            while t.elapsed() < d {
                std::hint::spin_loop();
            }
        }
        8 => std::thread::yield_now(),
        _ => std::thread::sleep(Duration::from_micros(rng.random_range(50..500))),
    }
}

#[test]
fn many_episodes_random_delays_every_strategy() {
    watchdog(Duration::from_secs(120), || {
        for (k, name) in STRATEGIES.iter().enumerate() {
            for threads in [2usize, 3, 5] {
                let b = Barrier::new(threads, AnyStrategy::by_name(name, &cfg()).unwrap()).unwrap();
                // Spinning-only waiters on an oversubscribed 2-CPU machine: keep it short.
                let episodes = if *name == "spin" { 300 } else { 1500 };
                let sum = AtomicU64::new(0);
                std::thread::scope(|s| {
                    for t in 0..threads {
                        let (b, sum) = (&b, &sum);
                        s.spawn(move || {
                            let mut rng = StdRng::seed_from_u64((k * 100 + t) as u64);
                            let _g = b.guard();
                            let mut last = 0;
                            for e in 1..=episodes {
                                delay(&mut rng);
                                sum.fetch_add(1, Ordering::Relaxed);
                                let r = b.wait().unwrap();
                                // every thread sees every episode's arrivals after it
                                assert!(sum.load(Ordering::Relaxed) >= e * threads as u64);
                                assert_eq!(r.generation, last + 1, "generations go 1, 2, 3...");
                                last = r.generation;
                            }
                        });
                    }
                });
                let st = b.stats();
                assert_eq!(st.generation, episodes, "{name} x{threads}");
                assert_eq!(st.arrivals, episodes * threads as u64);
                assert_eq!(
                    st.spin_successes + st.blocks,
                    episodes * (threads as u64 - 1)
                );
            }
        }
    });
}

#[test]
fn poisoning_at_a_random_episode_releases_everyone() {
    watchdog(Duration::from_secs(120), || {
        let mut rng = StdRng::seed_from_u64(42);
        for round in 0..24 {
            let name = STRATEGIES[round % STRATEGIES.len()];
            let threads = rng.random_range(2..6usize);
            let victim = rng.random_range(0..threads);
            let fail_at = rng.random_range(1..60u64);
            let b = Barrier::new(threads, AnyStrategy::by_name(name, &cfg()).unwrap()).unwrap();
            let outcomes: Vec<Result<u64, bool>> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..threads)
                    .map(|t| {
                        let b = &b;
                        s.spawn(move || {
                            let _g = b.guard();
                            let mut e = 0;
                            loop {
                                if t == victim && e + 1 == fail_at {
                                    panic!("victim fails");
                                }
                                match b.wait() {
                                    Ok(r) => e = r.generation,
                                    Err(err) => {
                                        assert!(err.is_poisoned());
                                        return e;
                                    }
                                }
                            }
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().map_err(|_| true)).collect()
            });
            for (t, o) in outcomes.iter().enumerate() {
                if t == victim {
                    assert!(o.is_err(), "the victim panicked");
                } else {
                    // nobody got past the episode the victim never reached
                    assert_eq!(*o, Ok(fail_at - 1), "{name} x{threads}");
                }
            }
            assert!(b.stats().poisoned);
        }
    });
}

/// The NEWS/TRANSPOSE shape: each thread publishes step values on its flag and reads its
/// partners' flags, with random delays; a barrier closes each phase.
#[test]
fn flags_and_barrier_phases() {
    watchdog(Duration::from_secs(120), || {
        for name in ["block", "fixed", "local", "global"] {
            let p = 4usize;
            let b = Barrier::new(p, AnyStrategy::by_name(name, &cfg()).unwrap()).unwrap();
            let flags: Vec<Flag> = (0..p).map(|_| Flag::new()).collect();
            let data: Vec<AtomicU64> = (0..p).map(|_| AtomicU64::new(0)).collect();
            std::thread::scope(|s| {
                for me in 0..p {
                    let (b, flags, data) = (&b, &flags, &data);
                    s.spawn(move || {
                        let mut rng = StdRng::seed_from_u64(me as u64);
                        for phase in 0..400u32 {
                            delay(&mut rng);
                            b.wait().unwrap();
                            for i in 1..p {
                                let step = phase * p as u32 + i as u32;
                                data[me].store(u64::from(step), Ordering::Relaxed);
                                flags[me].set(step);
                                let q = (me + i) % p;
                                flags[q].wait_at_least(step, b.strategy()).unwrap();
                                // q published at least this step: its data is at least as new
                                assert!(data[q].load(Ordering::Relaxed) >= u64::from(step));
                            }
                            b.wait().unwrap();
                        }
                    });
                }
            });
            assert_eq!(b.stats().generation, 800);
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn generations_only_move_forward(threads in 1usize..5, episodes in 1u64..200, which in 0usize..6, seed in any::<u64>()) {
        let b = Barrier::new(threads, AnyStrategy::by_name(STRATEGIES[which], &cfg()).unwrap()).unwrap();
        let seen: Vec<Vec<u64>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads).map(|t| {
                let b = &b;
                s.spawn(move || {
                    let mut rng = StdRng::seed_from_u64(seed ^ t as u64);
                    (0..episodes).map(|_| {
                        if rng.random_range(0..4u32) == 0 { std::thread::yield_now(); }
                        b.wait().unwrap().generation
                    }).collect::<Vec<_>>()
                })
            }).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for g in &seen {
            prop_assert_eq!(g.clone(), (1..=episodes).collect::<Vec<_>>());
        }
        prop_assert_eq!(b.stats().generation, episodes);
        prop_assert!(b.strategy().barrier_spin() > Duration::ZERO || STRATEGIES[which] == "block");
    }
}

/// A strategy that spins for as long as its spin word says and records the imbalances the
/// barrier measured from a first arrival's stamp, with the episode each was reported in.
#[derive(Debug, Default)]
struct Recorder {
    spin_ns: AtomicU64,
    episode: AtomicU64,
    imbalances: std::sync::Mutex<Vec<(u64, Duration)>>,
}

impl TwoPhase for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn barrier_spin(&self) -> Duration {
        Duration::from_nanos(self.spin_ns.load(Ordering::Relaxed))
    }
    fn read_spin(&self) -> Duration {
        Duration::ZERO
    }
    fn wants_imbalance(&self) -> bool {
        true
    }
    fn record_imbalance(&self, imbalance: Duration) {
        let e = self.episode.load(Ordering::Relaxed);
        self.imbalances.lock().unwrap().push((e, imbalance));
    }
    /// Episodes whose first arrival did not stamp: not what is checked here.
    fn record_short_imbalances(&self, _count: u32) {}
}

/// The first arrival's stamp is tagged with its episode, which repeats every 2^13 releases. A
/// stamp written once and then never again (every later wait blocks at once, so nobody
/// stamps) must not be taken, 2^13 episodes later, for that episode's first arrival.
#[test]
fn a_stale_first_arrival_stamp_is_never_reused() {
    const EPISODES: u64 = (1 << 14) + 4;
    let imbalances = watchdog(Duration::from_secs(300), || {
        let b = Barrier::new(
            2,
            Recorder {
                spin_ns: AtomicU64::new(Duration::from_secs(5).as_nanos() as u64),
                ..Recorder::default()
            },
        )
        .unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..EPISODES {
                    b.wait().unwrap();
                }
            });
            // Episode 1: the other thread arrives first, spins (up to 5 s) and stamps.
            std::thread::sleep(Duration::from_millis(20));
            b.strategy().episode.store(1, Ordering::Relaxed);
            b.wait().unwrap();
            // From episode 2 on every wait blocks at once: no stamps.
            b.strategy().spin_ns.store(0, Ordering::Relaxed);
            for e in 2..=EPISODES {
                b.strategy().episode.store(e, Ordering::Relaxed);
                b.wait().unwrap();
            }
        });
        let recorded = b.strategy().imbalances.lock().unwrap().clone();
        recorded
    });
    // Episode 2's first arrival may still have read the long spin before it was set to 0.
    let late: Vec<_> = imbalances.iter().filter(|(e, _)| *e > 2).collect();
    assert!(
        late.is_empty(),
        "imbalances reported from stale stamps: {late:?}"
    );
    assert!(
        imbalances.iter().any(|(e, _)| *e == 1),
        "episode 1's stamp was not used: {imbalances:?}"
    );
}
