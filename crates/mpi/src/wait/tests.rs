//! The waiter's unit tests (the MPI-free parts: the phases, counters, settings).

use super::*;
use asat_implicit::{Block, Spin};
use std::cell::Cell;

#[test]
fn spread_is_max_minus_min_unless_a_rank_had_no_previous_barrier() {
    assert_eq!(spread([900, -100, 0]), Some(Duration::from_nanos(800)));
    assert_eq!(spread([5, -5, 0]), Some(Duration::ZERO));
    assert_eq!(spread([900, -100, 1]), None);
}

/// The phase of a wait whose requests are done at the `n`th test, and its naps and yields.
fn wait_done_at(w: &Waiter<Block>, n: u32) -> (Phase, Option<(u64, u64)>) {
    let calls = Cell::new(0);
    let phase = w.two_phase(Duration::ZERO, || {
        calls.set(calls.get() + 1);
        calls.get() == n
    });
    let counts = match phase {
        Phase::Blocked { naps, yields, .. } => Some((naps, yields)),
        _ => None,
    };
    (phase, counts)
}

#[test]
fn block_never_spins_and_spin_never_naps() {
    let b = Waiter::new(Block).with_yield_time(Duration::ZERO).unwrap();
    let (phase, counts) = wait_done_at(&b, 4);
    assert_eq!(counts, Some((3, 0)), "{phase:?}");
    let s = Waiter::new(Spin);
    let calls = Cell::new(0);
    let phase = s.two_phase(Duration::MAX, || {
        calls.set(calls.get() + 1);
        calls.get() == 1000
    });
    assert!(matches!(phase, Phase::Spun(_)), "{phase:?}");
    assert_eq!(s.two_phase(Duration::MAX, || true), Phase::Immediate);
}

#[test]
fn the_block_phase_yields_for_its_yield_time_then_naps() {
    let long = Waiter::new(Block).with_yield_time(Duration::from_secs(1));
    let (phase, counts) = wait_done_at(&long.unwrap(), 4);
    assert_eq!(counts, Some((0, 3)), "{phase:?}");
    // a yield time over before the first yield: naps only
    let short = Waiter::new(Block).with_yield_time(Duration::from_nanos(1));
    let (phase, counts) = wait_done_at(&short.unwrap(), 4);
    assert_eq!(counts, Some((3, 0)), "{phase:?}");
    assert!(Waiter::new(Block).with_yield_time(MAX_YIELD_TIME).is_ok());
}

#[test]
fn counts_add_up() {
    let w = Waiter::new(Block);
    for phase in [
        Phase::Immediate,
        Phase::Spun(Duration::from_micros(3)),
        Phase::Blocked {
            waited: Duration::from_micros(100),
            naps: 2,
            yields: 5,
        },
    ] {
        w.count(phase);
    }
    let s = w.stats();
    assert_eq!(
        (s.waits, s.immediate, s.spin_successes, s.blocks),
        (3, 1, 1, 1)
    );
    assert_eq!((s.naps, s.yields), (2, 5));
    assert_eq!(s.waited, Duration::from_micros(103));
    assert_eq!(s.last_imbalance, None);
}

#[test]
fn sleep_cap_is_checked_and_bounds_the_naps() {
    assert!(Waiter::with_sleep_cap(Block, Duration::from_secs(2)).is_err());
    assert!(Waiter::with_sleep_cap(Block, Duration::from_secs(1)).is_ok());
    let us = Duration::from_micros;
    let naps = |cap: Duration| {
        std::iter::successors(Some(FIRST_NAP.min(cap)), |&n| Some(next_nap(n, cap)))
            .take(7)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        naps(DEFAULT_SLEEP_CAP),
        [
            us(50),
            us(100),
            us(200),
            us(400),
            us(800),
            us(1000),
            us(1000)
        ]
    );
    assert_eq!(naps(us(10)), [us(10); 7]);
}

#[test]
fn barriers_come_from_the_thread_of_the_first_and_others_are_refused() {
    let w = Waiter::new(Block);
    std::thread::scope(|s| {
        // Before its first barrier a waiter may be used from any thread: the first one binds.
        s.spawn(|| assert!(w.on_barrier_thread().is_ok()))
            .join()
            .unwrap();
    });
    let e = w
        .on_barrier_thread()
        .expect_err("another thread")
        .to_string();
    assert!(
        e.contains("barriers must all come from one thread") && e.contains("its own Waiter"),
        "{e}"
    );
    let w = Waiter::new(Block);
    assert!(w.on_barrier_thread().is_ok());
    assert!(w.on_barrier_thread().is_ok(), "the same thread again");
    std::thread::scope(|s| {
        s.spawn(|| assert!(w.on_barrier_thread().is_err()))
            .join()
            .unwrap();
    });
}
