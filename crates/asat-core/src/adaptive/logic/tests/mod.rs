//! Tests of [`AsatLogic`](super::AsatLogic): both rules on scripted clocks and probes.
use super::*;

mod asat_rule;

const US: Duration = Duration::from_micros(1);
const MS: Duration = Duration::from_millis(1);

/// The paper's algorithm: one timed barrier per evaluation.
fn cfg() -> AsatConfig {
    AsatConfig {
        eval_interval: 100 * MS,
        samples: 1,
        bad_time: Some(100 * US),
        bad_trig: 2,
        good_trig: 3,
        rule: Rule::Paper,
    }
}

/// Drives one region start: the passage for each probe comes from `passage(threads)`.
fn region(
    l: &mut AsatLogic,
    now: Instant,
    bound: usize,
    passage: &dyn Fn(usize) -> Duration,
) -> (usize, Vec<usize>, Option<Evaluation>) {
    let mut probes = Vec::new();
    let mut probe = None;
    let mut eval = None;
    loop {
        let s = l.step(now, probe, || bound);
        if s.evaluation.is_some() {
            eval = s.evaluation;
        }
        match s.plan {
            Plan::Run { threads } => return (threads, probes, eval),
            Plan::Probe {
                threads,
                give_up_after,
                ..
            } => {
                assert_eq!(
                    give_up_after,
                    Some(l.bad_time()),
                    "probes give up at the threshold"
                );
                probes.push(threads);
                probe = Some(ProbeResult::new(threads, passage(threads), 0));
            }
        }
    }
}

#[test]
fn regions_between_evaluations_do_not_probe() {
    let mut l = AsatLogic::new(cfg(), 4);
    let t0 = Instant::now();
    let (n, probes, e) = region(&mut l, t0, 4, &|_| 5 * US);
    assert_eq!((n, probes.len()), (4, 1));
    assert!(e.is_some());
    for ms in [1, 50, 99] {
        let (n, probes, e) = region(&mut l, t0 + ms * MS, 4, &|_| 5 * US);
        assert_eq!((n, probes.len(), e), (4, 0, None));
    }
    let (_, probes, _) = region(&mut l, t0 + 100 * MS, 4, &|_| 5 * US);
    assert_eq!(probes, vec![4]);
}

#[test]
fn samples_spread_over_the_interval_and_the_worst_is_judged() {
    let mut c = cfg();
    c.samples = 4;
    let mut l = AsatLogic::new(c, 2);
    let t0 = Instant::now();
    // The first region start evaluates at once, on one barrier.
    let (n, probes, e) = region(&mut l, t0, 2, &|_| 5 * US);
    assert_eq!((n, probes), (2, vec![2]));
    assert_eq!(e.unwrap().at, Duration::ZERO);
    // Then a sample every 25 ms; the second is bad, so the window's verdict is known and
    // the third is skipped; the evaluation comes at 100 ms and judges the worst.
    let mut evals = Vec::new();
    let mut sampled = Vec::new();
    for ms in (5..=100).step_by(5) {
        let p = if ms == 50 { 900 * US } else { 6 * US };
        let (n, probes, e) = region(&mut l, t0 + ms * MS, 2, &|_| p);
        assert_eq!(n, 2);
        if !probes.is_empty() {
            sampled.push(ms);
        }
        evals.extend(e);
    }
    assert_eq!(
        sampled,
        vec![25, 50],
        "samples at 25 and 50 ms, none after a bad one"
    );
    assert_eq!(evals.len(), 1, "one evaluation per interval: {evals:?}");
    assert_eq!(evals[0].at, 100 * MS);
    assert_eq!(
        evals[0].passage,
        Some(900 * US),
        "the worst sample is judged"
    );
    // A good window: three samples, judged at 200 ms.
    let mut sampled = Vec::new();
    for ms in (105..=200).step_by(5) {
        let (_, probes, e) = region(&mut l, t0 + ms * MS, 2, &|_| 5 * US);
        if !probes.is_empty() {
            sampled.push(ms);
        }
        evals.extend(e);
    }
    assert_eq!(sampled, vec![125, 150, 175]);
    assert_eq!(evals.len(), 2, "{evals:?}");
    assert_eq!((evals[1].at, evals[1].passage), (200 * MS, Some(5 * US)));
}

#[test]
fn a_growth_undone_at_once_doubles_the_wait_for_the_next_toe_dip() {
    // 1 thread good; 2 threads: the toe dip passes but every later barrier is bad.
    let mut l = AsatLogic::new(cfg(), 1);
    let t0 = Instant::now();
    let mut sizes = Vec::new();
    let mut decisions = Vec::new();
    for k in 0..40 {
        // At one thread, the only probe is a toe dip.
        let at_one = l.threads() == 1;
        let passage = move |_| if at_one { 5 * US } else { 5000 * US };
        let (n, _, e) = region(&mut l, t0 + 100 * k * MS, 2, &passage);
        sizes.push(n);
        decisions.push(e.map(|e| e.decision));
    }
    let grows: Vec<usize> = decisions
        .iter()
        .enumerate()
        .filter(|(_, d)| **d == Some(Decision::Grow))
        .map(|(k, _)| k)
        .collect();
    // Toe dips after 3, then 6, then 12 good evaluations; each growth is on probation and
    // undone by the first (bad) evaluation after it.
    assert_eq!(grows, vec![2, 9, 22], "{decisions:?}");
    assert!(sizes.iter().all(|&n| n <= 2));
    for &g in &grows {
        assert_eq!(decisions[g + 1], Some(Decision::Drop), "{decisions:?}");
    }
    let gaps: Vec<usize> = grows.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps[0], 1 + 6, "{decisions:?}");
    assert_eq!(gaps[1], 1 + 12, "{decisions:?}");
    assert_eq!(l.good_needed(), 3 << 3);
}

#[test]
fn a_growth_is_on_probation_until_a_good_evaluation() {
    let t0 = Instant::now();
    let at = |k: u32| t0 + 100 * k * MS;
    let good = |_| 5 * US;
    let bad = |_| 5000 * US;
    // Grow from 1 to 2 at the third evaluation, then one good evaluation confirms it: a
    // single bad evaluation afterwards keeps 2 threads (bad_trig = 2), a second drops.
    let mut l = AsatLogic::new(cfg(), 1);
    for k in 0..3 {
        region(&mut l, at(k), 2, &good);
    }
    assert_eq!(l.threads(), 2);
    let (n, _, e) = region(&mut l, at(3), 2, &good);
    assert_eq!((n, e.unwrap().decision), (2, Decision::Keep));
    let (n, _, e) = region(&mut l, at(4), 2, &bad);
    assert_eq!((n, e.unwrap().decision), (2, Decision::Keep));
    let (n, _, e) = region(&mut l, at(5), 2, &bad);
    assert_eq!((n, e.unwrap().decision), (1, Decision::Drop));
    // Unconfirmed: the first evaluation after the growth is bad and undoes it.
    let mut l = AsatLogic::new(cfg(), 1);
    for k in 0..3 {
        region(&mut l, at(k), 2, &good);
    }
    let (n, _, e) = region(&mut l, at(3), 2, &bad);
    assert_eq!((n, e.unwrap().decision), (1, Decision::Drop));
    // The initial size is not on probation: a job starts with the bound, as fixed does.
    let mut l = AsatLogic::new(cfg(), 2);
    let (n, _, _) = region(&mut l, at(0), 2, &bad);
    assert_eq!(n, 2);
}

#[test]
fn drops_after_bad_trig_bad_evaluations_and_never_below_one() {
    let mut l = AsatLogic::new(cfg(), 3);
    let t0 = Instant::now();
    let bad = |_| 5000 * US;
    let sizes: Vec<usize> = (0..6)
        .map(|k| region(&mut l, t0 + 100 * k * MS, 3, &bad).0)
        .collect();
    // first bad: keep; second bad: drop to 2; bad_count stays >= trig: drop to 1; then 1.
    assert_eq!(sizes, vec![3, 2, 1, 1, 1, 1]);
}

#[test]
fn with_samples_a_load_seen_half_the_time_drops_within_two_evaluations() {
    // One CPU hog beside a 2-thread job on 2 CPUs: every other timed barrier is bad.
    let mut c = cfg();
    c.samples = 4;
    let mut l = AsatLogic::new(c, 2);
    let t0 = Instant::now();
    let mut k = 0u32;
    let mut evals = Vec::new();
    let mut n = 2;
    for ms in (0..200).step_by(25) {
        let p = if k % 2 == 0 { 3000 * US } else { 8 * US };
        let (m, probes, e) = region(&mut l, t0 + ms * MS, 2, &|_| p);
        k += probes.len() as u32;
        evals.extend(e);
        n = m;
    }
    assert_eq!(n, 1, "{evals:?}");
    assert_eq!(evals.len(), 2);
    assert_eq!(evals[1].decision, Decision::Drop);
}

#[test]
fn toe_dip_adopted_when_good_rejected_when_bad() {
    let t0 = Instant::now();
    let at = |k: u32| t0 + 100 * k * MS;
    // good everywhere: after good_trig evaluations, one more thread
    let mut l = AsatLogic::new(cfg(), 1);
    let good = |_| 5 * US;
    let (n, probes, _) = region(&mut l, at(0), 4, &good);
    assert_eq!((n, probes.len()), (1, 0), "a team of one is not timed");
    region(&mut l, at(1), 4, &good);
    let (n, probes, e) = region(&mut l, at(2), 4, &good);
    assert_eq!(probes, vec![2], "toe dip with one more thread");
    assert_eq!(n, 2);
    assert_eq!(e.unwrap().decision, Decision::Grow);
    // with 2 threads good, 3 threads bad: the dip is rejected
    let mut l = AsatLogic::new(cfg(), 2);
    let two_ok = |n: usize| if n <= 2 { 5 * US } else { 5000 * US };
    let mut decisions = Vec::new();
    for k in 0..6 {
        let (n, _, e) = region(&mut l, at(k), 4, &two_ok);
        assert_eq!(n, 2);
        decisions.push(e.unwrap().decision);
    }
    assert!(decisions.contains(&Decision::RejectGrow), "{decisions:?}");
}

#[test]
fn never_grows_past_the_bound_and_clamps_to_it() {
    let t0 = Instant::now();
    let mut l = AsatLogic::new(cfg(), 2);
    for k in 0..20 {
        let (n, probes, _) = region(&mut l, t0 + 100 * k * MS, 2, &|_| US);
        assert_eq!(n, 2);
        assert!(probes.iter().all(|&p| p <= 2), "{probes:?}");
    }
    // the affinity mask shrinks to one CPU: seen at the next evaluation
    let (n, probes, e) = region(&mut l, t0 + Duration::from_secs(5), 1, &|_| US);
    assert_eq!((n, probes.len()), (1, 1));
    assert_eq!(e.unwrap().decision, Decision::Clamp);
}

#[test]
fn a_clamp_forgets_what_the_larger_team_counted() {
    // One bad evaluation of 4 threads, then the bound drops to 2: the clamped team starts
    // counting afresh, so one bad evaluation of it does not drop it below the new bound.
    let t0 = Instant::now();
    let mut l = AsatLogic::new(cfg(), 4);
    let bad = |_: usize| 900 * US;
    let (n, _, e) = region(&mut l, t0, 4, &bad);
    assert_eq!((n, e.unwrap().decision), (4, Decision::Keep));
    let (n, _, e) = region(&mut l, t0 + 100 * MS, 2, &bad);
    assert_eq!((n, e.unwrap().decision), (2, Decision::Clamp));
    let (n, _, e) = region(&mut l, t0 + 200 * MS, 2, &bad);
    assert_eq!((n, e.unwrap().decision), (2, Decision::Keep));
    let (n, _, e) = region(&mut l, t0 + 300 * MS, 2, &bad);
    assert_eq!((n, e.unwrap().decision), (1, Decision::Drop));
}

#[test]
fn an_absurd_passage_does_not_overflow_the_threshold() {
    let mut c = cfg();
    c.bad_time = None;
    let mut l = AsatLogic::new(c, 2);
    region(&mut l, Instant::now(), 2, &|_| Duration::MAX);
    assert_eq!(l.bad_time(), MAX_BAD_TIME);
}

#[test]
fn derived_threshold_follows_the_smallest_recent_passage() {
    let mut c = cfg();
    c.bad_time = None;
    let mut l = AsatLogic::new(c, 2);
    assert_eq!(l.bad_time(), DEFAULT_BAD_TIME);
    let t0 = Instant::now();
    region(&mut l, t0, 2, &|_| 30 * US);
    assert_eq!(l.bad_time(), 30 * US * BAD_FACTOR);
    region(&mut l, t0 + 100 * MS, 2, &|_| 50 * US);
    assert_eq!(
        l.bad_time(),
        30 * US * BAD_FACTOR,
        "the minimum of the window is the baseline"
    );
    // a 1 us baseline is floored
    region(&mut l, t0 + 200 * MS, 2, &|_| US);
    assert_eq!(l.bad_time(), MIN_BAD_TIME);
    // a window of only slow passages (a crowded machine from the start) is capped
    let mut l = AsatLogic::new(c, 2);
    region(&mut l, t0, 2, &|_| 20 * MS);
    assert_eq!(l.bad_time(), MAX_BAD_TIME);
}

#[test]
fn probes_given_up_on_do_not_enter_the_baseline() {
    let mut c = cfg();
    c.bad_time = None;
    let mut l = AsatLogic::new(c, 2);
    let t0 = Instant::now();
    let s = l.step(t0, None, || 2);
    assert_eq!(s.plan, Plan::probe_within(2, DEFAULT_BAD_TIME));
    let mut r = ProbeResult::new(2, DEFAULT_BAD_TIME + US, 0);
    r.given_up = 1;
    let s = l.step(t0, Some(r), || 2);
    assert_eq!(s.evaluation.unwrap().passage, Some(DEFAULT_BAD_TIME + US));
    assert_eq!(
        l.bad_time(),
        DEFAULT_BAD_TIME,
        "no baseline from a cut-off probe"
    );
}
