//! Tests of [`AsatLogic`](super::super::AsatLogic) under asat's rule: scripted clocks, probes
//! and machine readings.
use super::*;

/// Drives one region start under asat's rule: each probe of `n` threads comes back with
/// `probe(n)` = (passage, prompt members).
fn region_asat(
    l: &mut AsatLogic,
    now: Instant,
    machine: Machine,
    probe: &dyn Fn(usize) -> (Duration, usize),
) -> (usize, Vec<usize>, Option<Evaluation>) {
    let mut probes = Vec::new();
    let mut result = None;
    let mut eval = None;
    loop {
        let s = l.step(now, result, || machine);
        eval = s.evaluation.or(eval);
        match s.plan {
            Plan::Run { threads } => return (threads, probes, eval),
            Plan::Probe { threads, .. } => {
                probes.push(threads);
                let (p, prompt) = probe(threads);
                result = Some(ProbeResult::new(threads, p, 0).with_prompt(prompt));
            }
        }
    }
}

fn asat_cfg() -> AsatConfig {
    AsatConfig {
        rule: Rule::Asat,
        samples: 4,
        ..cfg()
    }
}

/// `others` threads of other jobs on `cpus` CPUs: a team of `n` gets `n * cpus / (n +
/// others)` of its threads run at once, the barrier is bad when one is missing.
fn shared(cpus: usize, others: usize) -> impl Fn(usize) -> (Duration, usize) {
    move |n| {
        let prompt = (n * cpus / (n + others)).clamp(1, n);
        (if prompt < n { 5000 * US } else { 5 * US }, prompt)
    }
}

#[test]
fn asat_jumps_to_the_probed_share_at_the_first_region() {
    // Three other jobs of 64 threads on 64 CPUs: a new job of 64 runs 16 at once. It
    // halves at the first region (at most), and reaches 16 at the next evaluation.
    let mut l = AsatLogic::new(asat_cfg(), 64);
    let m = Machine {
        bound: 64,
        pressure: None,
        wait: None,
        idle: None,
        free: None,
        equal: None,
        rank: None,
    };
    let t0 = Instant::now();
    let (n, probes, e) = region_asat(&mut l, t0, m, &shared(64, 192));
    assert_eq!(
        (n, probes, e),
        (64, vec![], None),
        "no probe at the very start"
    );
    let (n, probes, e) = region_asat(&mut l, t0 + 25 * MS, m, &shared(64, 192));
    assert_eq!((n, probes), (32, vec![64; FIRST_SAMPLES as usize]));
    let e = e.unwrap();
    assert_eq!((e.decision, e.share), (Decision::Drop, Some(16.0)));
    let mut n = 0;
    for ms in (50..=125).step_by(25) {
        n = region_asat(&mut l, t0 + ms * MS, m, &shared(64, 192)).0;
    }
    assert_eq!(n, 16);
}

#[test]
fn asat_beside_a_hog_on_two_cpus_drops_by_the_second_evaluation() {
    // Half the samples find the worker late (as measured with a hog): share 1.5 rounds
    // to 1 at the first evaluation; had it not, bad_trig's step drops at the second.
    let t0 = Instant::now();
    let m = Machine {
        bound: 2,
        pressure: Some(0.5),
        wait: None,
        idle: None,
        free: None,
        equal: None,
        rank: None,
    };
    let k = std::cell::Cell::new(0u32);
    let alternating = |n: usize| {
        k.set(k.get() + 1);
        if k.get() % 2 == 1 {
            (3000 * US, 1)
        } else {
            (8 * US, n)
        }
    };
    let mut l = AsatLogic::new(asat_cfg(), 2);
    let mut sizes = Vec::new();
    for ms in (0..=200).step_by(25) {
        sizes.push(region_asat(&mut l, t0 + ms * MS, m, &alternating).0);
    }
    assert_eq!(*sizes.last().unwrap(), 1, "{sizes:?}");
    assert!(l.threads() == 1);
}

#[test]
fn asat_grows_by_doubling_when_the_pressure_shows_room_and_not_under_pressure() {
    let t0 = Instant::now();
    let empty = |n: usize| (5 * US, n);
    // Room: one good evaluation, then a probe with twice the team, adopted.
    let mut l = AsatLogic::new(asat_cfg(), 8);
    let room = Machine {
        bound: 64,
        pressure: Some(0.0),
        wait: None,
        idle: None,
        free: None,
        equal: None,
        rank: None,
    };
    // The first evaluation is due a quarter interval after the start.
    let times = [0, 25, 125, 225, 325, 425];
    let sizes: Vec<usize> = times
        .iter()
        .map(|&ms| region_asat(&mut l, t0 + ms * MS, room, &empty).0)
        .collect();
    assert_eq!(sizes, vec![8, 16, 32, 64, 64, 64]);
    // Pressure: never a growth probe.
    let mut l = AsatLogic::new(asat_cfg(), 8);
    let busy = Machine {
        bound: 64,
        pressure: Some(0.6),
        wait: None,
        idle: None,
        free: None,
        equal: None,
        rank: None,
    };
    for k in 0..6 {
        let (n, probes, _) = region_asat(&mut l, t0 + 100 * k * MS, busy, &empty);
        assert_eq!(n, 8);
        assert!(probes.iter().all(|&p| p == 8), "{probes:?}");
    }
    // Unknown pressure: good_trig good evaluations first.
    let mut l = AsatLogic::new(asat_cfg(), 8);
    let unknown = Machine {
        bound: 64,
        pressure: None,
        wait: None,
        idle: None,
        free: None,
        equal: None,
        rank: None,
    };
    let sizes: Vec<usize> = times[..5]
        .iter()
        .map(|&ms| region_asat(&mut l, t0 + ms * MS, unknown, &empty).0)
        .collect();
    assert_eq!(sizes, vec![8, 8, 8, 16, 32]);
}

#[test]
fn asat_adopts_only_what_a_growth_probe_ran_and_undoes_a_growth_that_meets_load() {
    let t0 = Instant::now();
    let room = Machine {
        bound: 64,
        pressure: Some(0.0),
        wait: None,
        idle: None,
        free: None,
        equal: None,
        rank: None,
    };
    let mut l = AsatLogic::new(asat_cfg(), 8);
    // 12 CPUs free for us: the probe of 16 runs 12.
    region_asat(&mut l, t0, room, &shared(12, 0));
    let (n, probes, e) = region_asat(&mut l, t0 + 25 * MS, room, &shared(12, 0));
    assert_eq!(
        (n, probes, e.unwrap().decision),
        (12, vec![8, 8, 8, 16], Decision::Grow)
    );
    // The next evaluation finds the 12 crowded (another job came): back to 8 at most.
    let (n, _, e) = region_asat(&mut l, t0 + 125 * MS, room, &shared(12, 12));
    assert_eq!((n, e.unwrap().decision), (6, Decision::Drop));
}

proptest::proptest! {
    #[test]
    fn team_size_never_leaves_one_to_bound(
        initial in 1usize..16,
        samples in 1u32..5,
        steps in proptest::collection::vec((0u64..300, 0u64..10_000, 1usize..16), 1..200),
    ) {
        let mut c = cfg();
        c.bad_time = None;
        c.samples = samples;
        let mut l = AsatLogic::new(c, initial);
        let t0 = Instant::now();
        let mut t = 0;
        let mut last_bound = initial;
        let mut last_eval: Option<u64> = None;
        let mut prev_n = initial;
        for (dt, passage_us, bound) in steps {
            t += dt;
            let now = t0 + Duration::from_millis(t);
            let (n, probes, e) = region(&mut l, now, bound, &|_| US * passage_us as u32);
            if let Some(e) = e {
                last_bound = e.bound;
                proptest::prop_assert_eq!(e.bound, bound);
                if let Some(prev) = last_eval {
                    proptest::prop_assert!(t - prev >= 100, "evaluations {} ms apart", t - prev);
                }
                last_eval = Some(t);
            }
            proptest::prop_assert!(n >= 1 && n <= last_bound, "n {} bound {}", n, last_bound);
            proptest::prop_assert!(probes.len() <= 2);
            // Samples run with the current size, a toe dip with one more, within the bound.
            proptest::prop_assert!(probes.iter().all(|&p| p >= 2 && p <= prev_n + 1));
            proptest::prop_assert!(probes.len() < 2 || probes[1] <= last_bound);
            prev_n = n;
        }
    }

    #[test]
    fn asat_rule_stays_in_bounds_never_shrinks_on_a_good_machine_nor_grows_on_a_crowded_one(
        initial in 1usize..64,
        steps in proptest::collection::vec(
            (
                (0u64..300, 0u64..3_000, 0.0f64..=1.0, 1usize..64),
                (
                    proptest::option::of(0.0f64..0.3),
                    proptest::option::of(0.0f64..80.0),
                    proptest::option::of(0.0f64..0.2),
                ),
            ),
            1..200,
        ),
    ) {
        let mut l = AsatLogic::new(asat_cfg(), initial);
        let t0 = Instant::now();
        let mut t = 0;
        for ((dt, passage_us, frac, bound), (pressure, free, wait)) in steps {
            t += dt;
            let now = t0 + Duration::from_millis(t);
            let before = l.threads();
            let bad = passage_us > 100;
            let probe = |n: usize| {
                let prompt = if bad { ((n as f64 * frac) as usize).min(n) } else { n };
                (US * passage_us as u32, prompt)
            };
            let m = Machine { bound, pressure, wait, idle: None, free, equal: None, rank: None };
            let (n, probes, e) = region_asat(&mut l, now, m, &probe);
            proptest::prop_assert!(n >= 1 && n <= bound.max(1) || e.is_none() && n <= before,
                "n {} bound {} before {}", n, bound, before);
            if let Some(e) = e {
                proptest::prop_assert!(n <= e.bound);
                let crowded = rule::crowded_by_wait(wait);
                let judged_bad = e.passage.is_some_and(|p| p > e.bad_time) || crowded && e.passage.is_some();
                let judged_good = e.passage.is_some_and(|p| p <= e.bad_time) && !crowded;
                // the threads that waited on average
                let waiting = wait.map_or(0.0, |w| before as f64 * w);
                if e.decision != Decision::Clamp {
                    if judged_bad {
                        // crowded: never grows, never past the share shown but by the
                        // paper's one-thread step
                        proptest::prop_assert!(n <= before);
                        let share = e.share.unwrap();
                        let floor = before.div_ceil(2) as f64;
                        proptest::prop_assert!(n as f64 <= share.max(floor) + 0.5 || n + 1 == before || n == before,
                            "n {} share {} before {}", n, share, before);
                    } else if judged_good && !rule::over_free(before, free) && waiting <= 0.5 {
                        proptest::prop_assert!(n >= before, "a good machine shrank {} -> {}", before, n);
                    } else if judged_good {
                        // more threads than the others leave free, or threads that waited:
                        // at most the share, at least half
                        proptest::prop_assert!(n <= before && n >= before.div_ceil(2),
                            "over the free CPUs {:?} or waited {}: {} -> {}", free, waiting, before, n);
                        if !rule::over_free(before, free) {
                            proptest::prop_assert!(n as f64 <= before as f64 - waiting + 0.5,
                                "waited {}: {} -> {}", waiting, before, n);
                        }
                    }
                    if e.decision == Decision::Grow {
                        // a growth never exceeds what its probe ran, nor the free CPUs
                        let dip = *probes.last().unwrap();
                        proptest::prop_assert!(n <= probe(dip).1, "grew to {} from a probe of {}", n, dip);
                        proptest::prop_assert!(n <= rule::free_limit(e.bound, free),
                            "grew to {} with {:?} free", n, free);
                    }
                }
            }
            proptest::prop_assert!(probes.iter().all(|&p| p >= 2 && p <= bound.max(before) * 2));
        }
    }
}

#[test]
fn asat_gives_back_the_thread_that_shares_a_cpu_with_a_hog_and_does_not_grow_into_its_idle() {
    // 64 CPUs, 16 hogs, a team of 49 (the simulator's case): one member shares a CPU with a
    // hog and every barrier waits for it, so 34% of the machine is idle although the mean
    // wait (1.9%) is small and every timed barrier is prompt.
    let t0 = Instant::now();
    let straggler = Machine {
        bound: 64,
        pressure: Some(0.012),
        wait: Some(0.019),
        idle: Some(0.34),
        free: Some(48.0),
        equal: None,
        rank: None,
    };
    let prompt = |n: usize| (20 * US, n);
    let mut l = AsatLogic::new(asat_cfg(), 49);
    region_asat(&mut l, t0, straggler, &prompt);
    let (n, _, e) = region_asat(&mut l, t0 + 25 * MS, straggler, &prompt);
    let e = e.unwrap();
    assert_eq!((n, e.decision, e.free), (48, Decision::Drop, Some(48.0)));
    // At 48 the idle share and the good evaluations never grow it past the free CPUs.
    let settled = Machine {
        wait: Some(0.0),
        pressure: Some(0.0),
        idle: Some(0.3),
        ..straggler
    };
    for k in 1..=10 {
        let (n, _, _) = region_asat(&mut l, t0 + (25 + 100 * k) * MS, settled, &prompt);
        assert_eq!(n, 48, "evaluation {k}");
    }
    // Without the free CPUs known, the wait alone (0.93 threads waiting on average) gives
    // the thread back too.
    let mut l = AsatLogic::new(asat_cfg(), 49);
    let no_free = Machine {
        free: None,
        equal: None,
        rank: None,
        ..straggler
    };
    region_asat(&mut l, t0, no_free, &prompt);
    assert_eq!(region_asat(&mut l, t0 + 25 * MS, no_free, &prompt).0, 48);
    // Knowing neither (a kernel without schedstat) and seeing no pressure, the idle third
    // grows the team into the hogs' CPUs: the oscillation the free CPUs remove.
    let mut l = AsatLogic::new(asat_cfg(), 49);
    let unknown = Machine {
        free: None,
        equal: None,
        rank: None,
        wait: None,
        pressure: Some(0.0),
        ..straggler
    };
    region_asat(&mut l, t0, unknown, &prompt);
    assert_eq!(region_asat(&mut l, t0 + 25 * MS, unknown, &prompt).0, 64);
}

#[test]
fn asat_gives_back_the_threads_that_waited_and_not_half_a_thread() {
    // 256 CPUs: a team of 70 whose threads waited 2% (1.4 threads) on a good evaluation
    // drops two (part of a thread counts as one); at 68 with 0.7% (0.48 threads) it stays.
    // Good evaluations are counted again from the drop.
    let t0 = Instant::now();
    let prompt = |n: usize| (20 * US, n);
    let m = |wait: f64| Machine {
        bound: 256,
        pressure: Some(0.01),
        wait: Some(wait),
        idle: Some(0.08),
        free: Some(80.0),
        equal: None,
        rank: None,
    };
    let mut l = AsatLogic::new(asat_cfg(), 70);
    region_asat(&mut l, t0, m(0.02), &prompt);
    let (n, _, e) = region_asat(&mut l, t0 + 25 * MS, m(0.02), &prompt);
    assert_eq!((n, e.unwrap().decision), (68, Decision::Drop));
    for k in 1..=10 {
        let (n, _, e) = region_asat(&mut l, t0 + (25 + 200 * k) * MS, m(0.007), &prompt);
        assert_eq!(n, 68, "evaluation {k}");
        // the idle 8% beside 1% pressure is not room
        assert_ne!(e.map(|e| e.decision), Some(Decision::Grow));
    }
}

#[test]
fn asat_alone_with_a_little_background_keeps_its_team() {
    // Two CPUs, a lone team of 2 whose wake-ups wait 4%: others leave 1.9 CPUs free.
    let t0 = Instant::now();
    let m = Machine {
        bound: 2,
        pressure: Some(0.03),
        wait: Some(0.04),
        idle: Some(0.02),
        free: Some(1.9),
        equal: None,
        rank: None,
    };
    let mut l = AsatLogic::new(asat_cfg(), 2);
    for k in 0..20 {
        assert_eq!(
            region_asat(&mut l, t0 + 25 * k * MS, m, &|n| (20 * US, n)).0,
            2
        );
    }
}

#[test]
fn asat_grows_without_back_off_when_the_machine_has_emptied() {
    // A growth undone at once doubles the good evaluations the next growth waits for; once
    // the rest of the machine leaves twice the team free, one good evaluation is enough.
    let t0 = Instant::now();
    let prompt = |n: usize| (20 * US, n);
    let full = Machine {
        bound: 64,
        pressure: Some(0.0),
        wait: Some(0.0),
        idle: Some(0.2),
        free: Some(24.0),
        equal: None,
        rank: None,
    };
    let mut l = AsatLogic::new(asat_cfg(), 16);
    region_asat(&mut l, t0, full, &prompt);
    let (n, _, e) = region_asat(&mut l, t0 + 25 * MS, full, &prompt);
    assert_eq!((n, e.unwrap().decision), (20, Decision::Grow));
    let crowded = Machine {
        wait: Some(0.2),
        idle: Some(0.0),
        free: Some(16.0),
        equal: None,
        rank: None,
        ..full
    };
    let (n, _, e) = region_asat(&mut l, t0 + 125 * MS, crowded, &prompt);
    assert_eq!((n, e.unwrap().decision), (16, Decision::Drop));
    assert_eq!(
        l.good_needed(),
        u32::MAX,
        "no growth while our threads wait"
    );
    let (n, _, _) = region_asat(&mut l, t0 + 225 * MS, full, &prompt);
    assert_eq!((n, l.good_needed()), (16, 2), "backed off");
    let empty = Machine {
        idle: Some(0.75),
        free: Some(64.0),
        equal: None,
        rank: None,
        ..full
    };
    let (n, _, e) = region_asat(&mut l, t0 + 325 * MS, empty, &prompt);
    assert_eq!((n, e.unwrap().decision), (64, Decision::Grow));
}

#[test]
fn asat_team_of_one_grows_into_idle_cpus_with_the_probability_of_the_fraction() {
    // A quarter of 16 CPUs idle, no pressure: the proportional target is 1 / 0.75 = 1.33, so
    // a team of one grows to two at its first evaluation with probability 1/3, the same for
    // the same seed, and never past two.
    let t0 = Instant::now();
    let m = Machine {
        bound: 16,
        pressure: Some(0.0),
        wait: Some(0.0),
        idle: Some(0.25),
        free: Some(5.0),
        equal: None,
        rank: None,
    };
    let first = |seed: u64| {
        let mut l = AsatLogic::new(asat_cfg(), 1).with_seed(seed);
        region_asat(&mut l, t0, m, &|n| (20 * US, n));
        region_asat(&mut l, t0 + 60 * MS, m, &|n| (20 * US, n)).0
    };
    let runs: Vec<usize> = (0..600).map(first).collect();
    assert!(runs.iter().all(|&n| n == 1 || n == 2), "{runs:?}");
    let grew = runs.iter().filter(|&&n| n == 2).count();
    assert!((150..=250).contains(&grew), "{grew} of 600 grew");
    assert_eq!(runs[..20], (0..20).map(first).collect::<Vec<_>>()[..]);
}

proptest::proptest! {
    #[test]
    fn asat_good_evaluations_give_back_the_threads_that_waited_and_no_more(
        initial in 2usize..256,
        waits in proptest::collection::vec(0.0f64..0.05, 1..20),
    ) {
        // Every timed barrier prompt and quick, the wait below the crowded threshold, no
        // pressure, the free CPUs unknown, the idle share none: each evaluation keeps
        // floor(T (1 - wait)) once more than half a thread waited (else T), never less than
        // half.
        let t0 = Instant::now();
        let prompt = |n: usize| (20 * US, n);
        let mut l = AsatLogic::new(asat_cfg(), initial);
        let m = |wait: f64| Machine {
            bound: 256,
            pressure: Some(0.0),
            wait: Some(wait),
            idle: Some(0.0),
            free: None,
            equal: None,
            rank: None,
        };
        region_asat(&mut l, t0, m(0.0), &prompt);
        let mut t = 25;
        for w in waits {
            let before = l.threads();
            let (n, _, e) = region_asat(&mut l, t0 + t * MS, m(w), &prompt);
            t += 200;
            let Some(e) = e else { continue };
            let kept = before as f64 * (1.0 - w);
            let want = rule::good_target(before, kept);
            proptest::prop_assert_eq!(n, want.max(before.div_ceil(2)));
            proptest::prop_assert!(n as f64 > kept - 1.0 && n as f64 <= kept || n == before);
            if before as f64 * w <= 0.5 {
                proptest::prop_assert_eq!((n, e.decision), (before, Decision::Keep));
            }
        }
    }
}

#[test]
fn asat_crowded_takes_no_more_than_the_free_cpus_and_slow_barriers_alone_do_not_step() {
    // 8 jobs of 64 threads on 256 CPUs (the simulator's third evaluation): the wait (26%)
    // shows 47 threads, the free CPUs 33.5: the team takes 33.
    let t0 = Instant::now();
    let crowded = Machine {
        bound: 256,
        pressure: Some(0.34),
        wait: Some(0.265),
        idle: Some(0.008),
        free: Some(33.5),
        equal: None,
        rank: None,
    };
    let slow = |n: usize| (5000 * US, n);
    let mut l = AsatLogic::new(asat_cfg(), 64);
    region_asat(&mut l, t0, crowded, &slow);
    let (n, _, e) = region_asat(&mut l, t0 + 25 * MS, crowded, &slow);
    assert_eq!((n, e.unwrap().decision), (33, Decision::Drop));
    // Without the free CPUs, the wait's share.
    let mut l = AsatLogic::new(asat_cfg(), 64);
    let no_free = Machine {
        free: None,
        equal: None,
        rank: None,
        ..crowded
    };
    region_asat(&mut l, t0, no_free, &slow);
    assert_eq!(region_asat(&mut l, t0 + 25 * MS, no_free, &slow).0, 47);
    // A team of 4 whose timed barriers are slow in a row: while its threads hardly waited
    // (1%) it keeps its size; with a wait of 3% (a share of 3.88, no jump) or none known,
    // the paper's step drops one thread from the second bad evaluation on.
    for (wait, want) in [(Some(0.01), 4), (Some(0.03), 2), (None, 2)] {
        let m = Machine {
            wait,
            free: Some(40.0),
            equal: None,
            rank: None,
            pressure: Some(0.0),
            idle: Some(0.0),
            ..crowded
        };
        let mut l = AsatLogic::new(asat_cfg(), 4);
        let mut n = 0;
        for ms in [0, 25, 225, 425] {
            n = region_asat(&mut l, t0 + ms * MS, m, &slow).0;
        }
        assert_eq!(n, want, "wait {wait:?}");
    }
}

#[test]
fn asat_keeps_to_its_equal_share_while_other_jobs_claim_theirs() {
    // A late arrival on a full machine of 8 jobs: it holds 13 threads, its share is 8.
    let t0 = Instant::now();
    let quiet = |n: usize| (20 * US, n);
    let full = Machine {
        bound: 64,
        pressure: Some(0.0),
        wait: Some(0.01),
        idle: Some(0.01),
        free: Some(13.0),
        equal: Some(8.0),
        rank: None,
    };
    let mut l = AsatLogic::new(asat_cfg(), 13);
    region_asat(&mut l, t0, full, &quiet);
    let (n, _, e) = region_asat(&mut l, t0 + 150 * MS, full, &quiet);
    assert_eq!((n, e.unwrap().decision), (8, Decision::Drop));
    // An early one squeezed to 6 grows back to the share on a full machine, at once...
    let mut l = AsatLogic::new(asat_cfg(), 6);
    region_asat(&mut l, t0, full, &quiet);
    let (n, _, e) = region_asat(&mut l, t0 + 150 * MS, full, &quiet);
    assert_eq!((n, e.unwrap().decision), (8, Decision::Grow));
    // ...on probation: where the others do not give way, a crowded evaluation undoes it,
    // and the next try waits for two good evaluations instead of one.
    let crowded = Machine {
        wait: Some(0.08),
        free: Some(7.0),
        ..full
    };
    let (n, _, e) = region_asat(&mut l, t0 + 300 * MS, crowded, &quiet);
    assert_eq!((n, e.unwrap().decision), (6, Decision::Drop));
    assert_eq!(region_asat(&mut l, t0 + 450 * MS, full, &quiet).0, 6);
    assert_eq!(region_asat(&mut l, t0 + 600 * MS, full, &quiet).0, 8);
    // No growth past the share into idle CPUs either, nor without one to even out.
    let idle = Machine {
        idle: Some(0.3),
        free: Some(30.0),
        wait: Some(0.0),
        ..full
    };
    let mut l = AsatLogic::new(asat_cfg(), 8);
    for k in 0..6 {
        assert!(region_asat(&mut l, t0 + 150 * k * MS, idle, &quiet).0 <= 8);
    }
    let alone = Machine {
        equal: None,
        rank: None,
        ..full
    };
    let mut l = AsatLogic::new(asat_cfg(), 6);
    for k in 0..6 {
        assert_eq!(region_asat(&mut l, t0 + 150 * k * MS, alone, &quiet).0, 6);
    }
}

#[test]
fn asat_rounds_its_share_by_its_place_among_the_claimants() {
    // 3 jobs on 64 CPUs, 21.33 each: the first place takes 22 threads, the others 21, so
    // that the teams add up to the 64 CPUs, and each keeps its team from then on.
    let t0 = Instant::now();
    let quiet = |n: usize| (20 * US, n);
    let teams: Vec<usize> = (0..3)
        .map(|rank| {
            let m = Machine {
                bound: 64,
                pressure: Some(0.0),
                wait: Some(0.01),
                idle: Some(0.01),
                free: Some(21.0),
                equal: Some(64.0 / 3.0),
                rank: Some((rank, 3)),
            };
            let mut l = AsatLogic::new(asat_cfg(), 64);
            let mut n = 0;
            for k in 0..6 {
                n = region_asat(&mut l, t0 + 150 * k * MS, m, &quiet).0;
            }
            n
        })
        .collect();
    assert_eq!(teams, [22, 21, 21]);
}
