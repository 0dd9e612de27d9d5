//! The ASAT simulator: deterministic by seed, and at P = 2 the shape of the real runs on this
//! 2-CPU machine (`compare --trace`, BENCHMARKS.md): one copy keeps both threads; 2-4 copies
//! each drop to one thread within their first evaluations and stay there most of the time;
//! one copy beside one CPU hog is at one thread by its second evaluation; and at P = 16 the
//! shape of the real runs on the one 16-CPU machine lent so far (BENCHMARKS.md, "On 16 CPUs").
//! Bounds are generous: the point is the shape (when each job settles and at what size), not
//! the exact trace.

use std::time::Duration;

use asat::adaptive::Rule;
use asat_lab::asat_sim::{
    ideal_makespan, makespan, makespan_run, run, share_teams, summarize, Config, Scenario,
    TracePoint,
};

const EVAL: Duration = Duration::from_millis(200);

fn jobs(trace: &[TracePoint], k: usize) -> Vec<Vec<usize>> {
    (0..k)
        .map(|j| {
            trace
                .iter()
                .filter(|p| p.job == j)
                .map(|p| p.team)
                .collect()
        })
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_may_not() {
    let cfg = Config::new(8, Rule::Asat, 7);
    let sc = Scenario::together(8, 3, EVAL);
    let a = run(&cfg, &sc).unwrap();
    let b = run(&cfg, &sc).unwrap();
    assert_eq!(a, b);
    assert!(
        a.len() >= 3 * 25,
        "about 30 evaluations per job: {}",
        a.len()
    );
}

#[test]
fn two_cpus_one_copy_keeps_both_threads() {
    for rule in [Rule::Paper, Rule::Asat] {
        let cfg = Config::new(2, rule, 1);
        let trace = run(&cfg, &Scenario::together(2, 1, EVAL)).unwrap();
        let teams = &jobs(&trace, 1)[0];
        assert!(teams.len() >= 25, "{rule:?}: {teams:?}");
        let at_two = teams.iter().filter(|&&t| t == 2).count();
        assert!(at_two * 10 >= teams.len() * 9, "{rule:?}: {teams:?}");
    }
}

#[test]
fn two_cpus_two_to_four_copies_drop_to_one_thread_early_and_stay() {
    for rule in [Rule::Paper, Rule::Asat] {
        for k in 2..=4 {
            let cfg = Config::new(2, rule, k as u64);
            let sc = Scenario::together(2, k, EVAL);
            let trace = run(&cfg, &sc).unwrap();
            for (j, teams) in jobs(&trace, k).iter().enumerate() {
                let first_one = teams.iter().position(|&t| t == 1);
                // Real runs: by the 4th evaluation in every cell; allowed here: the 6th.
                assert!(
                    first_one.is_some_and(|e| e < 6),
                    "{rule:?} k={k} job {j}: reaches 1 thread within 6 evaluations: {teams:?}"
                );
                let at_one = teams.iter().filter(|&&t| t == 1).count();
                assert!(
                    at_one * 10 >= teams.len() * 6,
                    "{rule:?} k={k} job {j}: mostly at 1 thread: {teams:?}"
                );
            }
            let s = summarize(&trace, &sc, &cfg);
            assert!(
                s.settle_evals.is_some_and(|e| e <= 30),
                "{rule:?} k={k}: {s:?}"
            );
        }
    }
}

#[test]
fn two_cpus_one_copy_beside_a_hog_is_at_one_thread_by_its_second_evaluation() {
    for rule in [Rule::Paper, Rule::Asat] {
        let cfg = Config::new(2, rule, 3);
        let trace = run(&cfg, &Scenario::hogs(2, 1, EVAL)).unwrap();
        let teams = &jobs(&trace, 1)[0];
        assert!(teams.len() >= 25, "{rule:?}: {teams:?}");
        assert_eq!(teams[1], 1, "{rule:?}: {teams:?}");
        let at_one = teams.iter().filter(|&&t| t == 1).count();
        assert!(at_one * 10 >= teams.len() * 7, "{rule:?}: {teams:?}");
    }
}

/// The evaluation (of any job) at which the sum of the teams first comes within 10% of P,
/// and the largest and smallest sums from then on.
fn near_p(trace: &[TracePoint], k: usize, p: usize) -> Option<(usize, usize, usize)> {
    let mut team = vec![None; k];
    let mut sums = Vec::new();
    for q in trace {
        team[q.job] = Some(q.team);
        if team.iter().all(Option::is_some) {
            sums.push(team.iter().flatten().sum::<usize>());
        }
    }
    let first = sums.iter().position(|&s| s * 10 <= p * 11)?;
    let after = &sums[first..];
    Some((first / k + 1, *after.iter().min()?, *after.iter().max()?))
}

#[test]
fn asat_comes_near_the_machine_size_where_the_paper_rule_does_not_on_64_cpus() {
    let sc = Scenario::together(64, 4, EVAL);
    let asat = Config::new(64, Rule::Asat, 1);
    let paper = Config::new(64, Rule::Paper, 1);
    let (evals, lo, hi) = near_p(&run(&asat, &sc).unwrap(), 4, 64).expect("asat comes near P");
    assert!(evals <= 8, "asat: within 10% of P at evaluation {evals}");
    assert!(lo >= 56 && hi <= 76, "asat afterwards: {lo}..={hi}");
    let p = near_p(&run(&paper, &sc).unwrap(), 4, 64);
    assert!(
        p.is_none(),
        "the paper's rule needs ~48 drops per job: {p:?}"
    );
}

#[test]
fn bad_settings_are_clear_errors() {
    let mut cfg = Config::new(0, Rule::Asat, 1);
    let sc = Scenario::together(2, 1, EVAL);
    let e = run(&cfg, &sc).unwrap_err().to_string();
    assert!(
        e.contains("processors 0: must be between 1 and 4096"),
        "{e}"
    );
    cfg.processors = 2;
    cfg.spin = Duration::ZERO;
    let e = run(&cfg, &sc).unwrap_err().to_string();
    assert!(e.contains("spin 0ns: must be above 0"), "{e}");
    let cfg = Config::new(2, Rule::Asat, 1);
    let empty = Scenario {
        jobs: Vec::new(),
        ..sc
    };
    let e = run(&cfg, &empty).unwrap_err().to_string();
    assert!(e.contains("need 1 to 1024 jobs"), "{e}");
}

/// The sum of the jobs' teams at each evaluation they all reached.
fn sums(teams: &[Vec<usize>]) -> Vec<usize> {
    let n = teams.iter().map(Vec::len).min().unwrap_or(0);
    (0..n).map(|e| teams.iter().map(|t| t[e]).sum()).collect()
}

/// At P = 16, the shape of the real runs on the one 16-CPU machine lent so far (BENCHMARKS.md,
/// "On 16 CPUs", two runs each; bounds that both real runs meet), over six seeds: with asat's
/// rule one job keeps 16 threads; 4 jobs started together hold 13-20 threads together from
/// their 3rd evaluation, at most 6 each (real: 4, 4, 4, 4 and 4, 3, 3, 3 at the 3rd); 8 jobs
/// 12-18 together from their 4th (real: 14 and 12), at most 5 each (real: 1-2 each, under
/// an earlier rule whose teams of one could not grow into the idle CPUs; now they grow with
/// the probability of the proportional target's fraction, which fills the 16
/// CPUs and takes single jobs to 3-5 threads in the model); one job beside 4 CPU hogs holds
/// 11-13 from its 2nd (real: 12-13). The real runs' 3-6 threads for each of 4
/// jobs is what most seeds give, not all: once the machine is full, asat's rule does not even
/// out shares that started unequal (seed 3 ends at 6, 5, 1, 4), as the 4-copy NPB runs on
/// that machine showed too.
#[test]
fn sixteen_cpus_asat_rule_settles_as_the_real_runs_did() {
    let mut even = 0;
    for seed in 1..=6 {
        let cfg = Config::new(16, Rule::Asat, seed);
        let one = run(&cfg, &Scenario::together(16, 1, EVAL)).unwrap();
        let one = &jobs(&one, 1)[0];
        assert!(one.len() >= 25 && one.iter().all(|&t| t == 16), "{one:?}");
        for (k, from, most, sum) in [(4, 2, 6, 13..=20), (8, 3, 5, 12..=18)] {
            let trace = run(&cfg, &Scenario::together(16, k, EVAL)).unwrap();
            let teams = jobs(&trace, k);
            for (j, t) in teams.iter().enumerate() {
                assert!(
                    t.len() >= 25 && t[from..].iter().all(|&n| n <= most),
                    "seed {seed}, k={k}, job {j}: {t:?}"
                );
            }
            let s = sums(&teams);
            assert!(
                s[from..].iter().all(|n| sum.contains(n)),
                "seed {seed}, k={k}: sums {s:?}"
            );
            if k == 4 && teams.iter().all(|t| t[from..].iter().all(|&n| n >= 3)) {
                even += 1;
            }
        }
        let hog = run(&cfg, &Scenario::hogs(16, 1, EVAL)).unwrap();
        let hog = &jobs(&hog, 1)[0];
        assert!(
            hog.len() >= 25 && hog[1..].iter().all(|t| (11..=13).contains(t)),
            "seed {seed}: {hog:?}"
        );
    }
    assert!(even >= 4, "4 jobs at 3-6 threads each in {even} of 6 seeds");
}

/// The paper's rule with 8 jobs on 16 CPUs, as in the real run: every job drops one thread per
/// evaluation from its 2nd, so the sum falls by 8 per evaluation (real: 128, 120, ..., 32 at
/// the 13th). (With 4 jobs the simulated jobs see some good evaluations and slow down where
/// the real ones did not: BENCHMARKS.md.)
#[test]
fn sixteen_cpus_paper_rule_with_eight_jobs_steps_down_as_the_real_run_did() {
    for seed in 1..=6 {
        let cfg = Config::new(16, Rule::Paper, seed);
        let trace = run(&cfg, &Scenario::together(16, 8, EVAL)).unwrap();
        let s = sums(&jobs(&trace, 8));
        for (e, &n) in s.iter().enumerate().take(13) {
            let real = 128 - 8 * e;
            assert!(
                n + 4 >= real && n <= real + 4,
                "seed {seed}: evaluation {}: {n} against the real {real}: {s:?}",
                e + 1
            );
        }
    }
}

#[test]
fn one_job_beside_hogs_takes_exactly_the_cpus_they_leave_and_stays() {
    // 256 CPUs and 64 hogs: 192 CPUs free. Two threads more would share CPUs with hogs and
    // hold up every barrier (half the job's work lost), while its mean wait stays in the dead
    // band; before the free CPUs were read, the job sat at 194 and grew to 256 and back every
    // few evaluations.
    for seed in 1..=3 {
        let cfg = Config::new(256, Rule::Asat, seed);
        let trace = run(&cfg, &Scenario::hogs(256, 1, EVAL)).unwrap();
        let teams = &jobs(&trace, 1)[0];
        assert!(teams.len() >= 25, "seed {seed}: {teams:?}");
        assert!(
            teams[3..].iter().all(|&t| t == 192),
            "seed {seed}: at 192 from the 4th evaluation on: {teams:?}"
        );
    }
}

#[test]
fn jobs_started_together_settle_near_the_machine_size_and_near_equal() {
    // The shares come from the wait every thread shares (the probes' prompt, which is a
    // coarse fraction of a small team, sent single jobs to half their share before: 8 jobs on
    // 256 CPUs ended as far apart as 9 and 40 threads), and a good evaluation gives back the
    // threads that waited, so the sum comes down to about one thread per job over P.
    for (p, k, seed) in [(64, 8, 2), (256, 8, 1), (256, 4, 3)] {
        let cfg = Config::new(p, Rule::Asat, seed);
        let sc = Scenario::together(p, k, EVAL);
        let trace = run(&cfg, &sc).unwrap();
        let last: Vec<usize> = jobs(&trace, k).iter().map(|t| *t.last().unwrap()).collect();
        let fair = p as f64 / k as f64;
        assert!(
            last.iter().all(|&t| (t as f64 - fair).abs() <= 0.25 * fair),
            "P {p}, k {k}: teams {last:?} against {fair}"
        );
        let sum: usize = last.iter().sum();
        assert!((p..=p + k).contains(&sum), "P {p}, k {k}: sum {sum}");
        let s = summarize(&trace, &sc, &cfg);
        assert!(
            s.settle_evals.is_some_and(|e| e <= 12),
            "P {p}, k {k}: {s:?}"
        );
    }
}

#[test]
fn jobs_that_arrive_one_after_another_or_differ_in_grain_end_with_equal_shares() {
    // Proportional moves keep the ratio of jobs that fill the machine: a late arrival kept
    // its entry advantage (up to 62% over the mean with 8 jobs on 64 CPUs) and jobs of
    // unequal grains settled up to 80% apart. The equal share read from the other processes
    // evens them out; without it (`procs` off) they stay apart, which this test also shows.
    for (p, k, seed, name) in [(64, 8, 1, "staggered"), (64, 4, 2, "grain")] {
        let mut cfg = Config::new(p, Rule::Asat, seed);
        let sc = Scenario::named(name, p, k, EVAL, cfg.region_work).unwrap();
        let s = summarize(&run(&cfg, &sc).unwrap(), &sc, &cfg);
        assert!(
            s.max_share_dev.is_some_and(|d| d <= 0.25),
            "{name}, P {p}, k {k}: {s:?}"
        );
        cfg.procs = false;
        let s = summarize(&run(&cfg, &sc).unwrap(), &sc, &cfg);
        assert!(
            s.max_share_dev.is_some_and(|d| d > 0.25),
            "{name}, P {p}, k {k}, without the share: {s:?}"
        );
    }
}

#[test]
fn teams_of_one_fill_the_cpus_the_hogs_leave() {
    // 8 jobs beside 4 hogs on 16 CPUs: 12 CPUs for the jobs. A team of one grows into idle
    // CPUs with the probability of its proportional target's fraction (1 / (1 - idle) is
    // 1.33 at a quarter of the machine idle); rounded down always, every job stayed at one
    // thread with 4 CPUs idle (70-78% of the work).
    for seed in 1..=3 {
        let cfg = Config::new(16, Rule::Asat, seed);
        let sc = Scenario::hogs(16, 8, EVAL);
        let trace = run(&cfg, &sc).unwrap();
        let teams = jobs(&trace, 8);
        let sum: usize = teams.iter().map(|t| *t.last().unwrap()).sum();
        assert!((11..=14).contains(&sum), "seed {seed}: {teams:?}");
        let s = summarize(&trace, &sc, &cfg);
        assert!(s.efficiency.is_some_and(|e| e >= 0.9), "seed {seed}: {s:?}");
    }
}

#[test]
fn after_a_departure_the_jobs_left_regain_the_machine_within_eight_evaluations() {
    // The target: the others take the CPUs a job leaves within 8 evaluations. The
    // jobs left grow into the idle CPUs in proportion (`rule::idle_target`), all at once.
    for (p, k, seed) in [(16, 4, 1), (64, 4, 2), (64, 8, 1)] {
        let cfg = Config::new(p, Rule::Asat, seed);
        let sc = Scenario::departure(p, k, EVAL);
        let trace = run(&cfg, &sc).unwrap();
        let s = summarize(&trace, &sc, &cfg);
        assert!(
            s.regain_evals.is_some_and(|e| e <= 8),
            "P {p}, k {k}, seed {seed}: {s:?}"
        );
        // the first job is gone: no evaluation of it after its departure
        let leave = sc.jobs[0].depart;
        assert!(trace.iter().all(|q| q.job != 0 || q.t < leave + EVAL));
    }
}

/// `sc` with `evals` intervals of all `p` CPUs as each job's work.
fn with_work(p: usize, sc: &Scenario, evals: u32) -> Scenario {
    sc.with_work(EVAL * evals * p as u32, EVAL * 400)
}

/// Makespans of `sc` with `evals` intervals of all CPUs as each job's work: asat's rule and
/// a fixed team of P threads per job.
fn makespans(p: usize, sc: &Scenario, evals: u32) -> (Duration, Duration) {
    let cfg = Config::new(p, Rule::Asat, 1);
    let work = with_work(p, sc, evals);
    let asat = makespan(&cfg, &work).unwrap().expect("every job finishes");
    let fixed = Config { fixed: true, ..cfg };
    let fixed = makespan(&fixed, &work)
        .unwrap()
        .expect("every job finishes");
    (asat, fixed)
}

#[test]
fn a_job_alone_finishes_as_soon_as_a_fixed_team_and_crowded_jobs_sooner() {
    // Alone, asat's team is the fixed one: within 5%. Four jobs of 16 threads on 16 CPUs
    // lose to oversubscription with fixed teams (a barrier waits for members that share
    // CPUs); asat's jobs take about 4 threads each and finish sooner.
    let (asat, fixed) = makespans(16, &Scenario::together(16, 1, EVAL), 5);
    let ratio = asat.as_secs_f64() / fixed.as_secs_f64();
    assert!(ratio <= 1.05, "alone: {asat:?} against {fixed:?}");
    // 5 intervals of 16 CPUs at ~94% efficiency: a little over 1 s
    assert!(
        (1.0..1.3).contains(&fixed.as_secs_f64()),
        "alone, fixed: {fixed:?}"
    );
    let (asat, fixed) = makespans(16, &Scenario::together(16, 4, EVAL), 5);
    assert!(
        asat.as_secs_f64() <= 0.95 * fixed.as_secs_f64(),
        "4 jobs: {asat:?} against {fixed:?}"
    );
    assert!(fixed.as_secs_f64() >= 4.0, "4 jobs of 1 s each: {fixed:?}");
}

#[test]
fn asat_leaves_the_hogs_their_cpus_where_fixed_teams_take_a_share() {
    // Four jobs beside four single-threaded hogs on 16 CPUs: asat's jobs come to the 12 CPUs
    // the hogs leave, so each hog keeps (nearly) a whole CPU; fixed teams of 16 threads each
    // queue behind the hogs and take part of their CPUs (less than all: their members block
    // at barriers).
    let p = 16;
    let cfg = Config::new(p, Rule::Asat, 1);
    let sc = with_work(p, &Scenario::hogs(p, 4, EVAL), 5);
    let asat = makespan_run(&cfg, &sc)
        .unwrap()
        .expect("every job finishes");
    let fixed = makespan_run(&Config { fixed: true, ..cfg }, &sc)
        .unwrap()
        .expect("every job finishes");
    let (a, f) = (asat.hog_share.unwrap(), fixed.hog_share.unwrap());
    assert!(
        a >= 0.9,
        "beside asat's jobs the hogs got {a:.2} of a CPU each"
    );
    assert!(
        f < a - 0.1,
        "beside fixed teams {f:.2}, beside asat's jobs {a:.2}"
    );
    // without hogs, nothing to say
    let none = with_work(p, &Scenario::together(p, 2, EVAL), 1);
    let m = makespan_run(&cfg, &none)
        .unwrap()
        .expect("every job finishes");
    assert_eq!(m.hog_share, None);
}

#[test]
fn no_schedule_beats_the_ideal_makespan_unless_it_takes_the_hogs_cpus() {
    // The ideal (every free CPU busy with the jobs' work, no barrier or imbalance cost) is a
    // bound for asat's jobs and for fixed teams alike, on an empty machine; beside hogs it
    // binds asat's jobs, which leave the hogs their CPUs, while 8 fixed teams of 16 threads
    // take part of those CPUs and may end sooner than any schedule that does not.
    let p = 16;
    let ideal =
        |sc: &Scenario| ideal_makespan(p, &with_work(p, sc, 5)).expect("every job has work");
    for sc in [
        Scenario::together(p, 1, EVAL),
        Scenario::together(p, 4, EVAL),
        Scenario::staggered(p, 2, EVAL),
    ] {
        let ideal = ideal(&sc);
        let (asat, fixed) = makespans(p, &sc, 5);
        for (m, name) in [(asat, "asat"), (fixed, "fixed")] {
            assert!(
                m >= ideal && m.as_secs_f64() <= 1.3 * ideal.as_secs_f64(),
                "{} jobs, {name}: {m:?} against the ideal {ideal:?}",
                sc.jobs.len()
            );
        }
    }
    let sc = Scenario::hogs(p, 8, EVAL);
    let ideal = ideal(&sc);
    // 8 jobs of 5 intervals of 16 CPUs on the 12 the hogs leave
    let expect = EVAL * 5 * 8 * 16 / 12;
    assert!(
        ideal.abs_diff(expect) < Duration::from_micros(1),
        "{ideal:?}"
    );
    let (asat, fixed) = makespans(p, &sc, 5);
    assert!(asat >= ideal, "asat {asat:?} against the ideal {ideal:?}");
    assert!(
        fixed.as_secs_f64() < 1.03 * ideal.as_secs_f64(),
        "fixed teams beside hogs {fixed:?} against the ideal {ideal:?}"
    );
}

#[test]
fn jobs_that_arrive_or_leave_within_an_interval_count_at_the_next_evaluation() {
    // A reading averages each process over its interval: a job that arrived with its whole
    // pool shortly before claimed no share, and the jobs there kept their teams an interval
    // more; the last job left after the others counted them busy an interval more. A
    // newcomer is judged over its life, and a claimant that left gives its CPUs at once.
    let p = 64;
    let cfg = Config::new(p, Rule::Asat, 1);
    let sc = Scenario::named("staggered", p, 4, EVAL, cfg.region_work).unwrap();
    let trace = run(&cfg, &sc).unwrap();
    let first_after = |job: usize, t: Duration| {
        trace
            .iter()
            .find(|q| q.job == job && q.t >= t)
            .unwrap_or_else(|| panic!("job {job} after {t:?}: {trace:?}"))
    };
    for (j, spec) in sc.jobs.iter().enumerate().skip(1) {
        let share = p.div_ceil(j + 1);
        for i in 0..j {
            let q = first_after(i, spec.arrive + EVAL / 4);
            assert!(q.team <= share, "job {i} after job {j} arrived: {q:?}");
        }
    }
    let last = sc.jobs.len() - 1;
    let q = first_after(last, sc.jobs[0].depart + EVAL / 4);
    assert!(q.team >= p * 9 / 10, "the last job alone: {q:?}");
}

#[test]
fn a_job_alone_pays_nothing_for_its_probes_and_two_jobs_end_as_equal_fixed_shares_do() {
    // Alone, asat's team is the fixed one, and its timed barriers cost nothing measurable:
    // its workers spin for work between regions, so a probe's master finds them started.
    // Two jobs take half the machine each from their first evaluation: they end with a
    // static partition into fixed teams of 8 (the same regions, on fewer members), which is
    // what choosing team sizes can reach, 0.93-0.97x the fixed teams of 16 here.
    let p = 16;
    let (asat, fixed) = makespans(p, &Scenario::together(p, 1, EVAL), 5);
    assert!(
        asat.as_secs_f64() <= 1.005 * fixed.as_secs_f64(),
        "alone: {asat:?} against {fixed:?}"
    );
    let sc = Scenario::together(p, 2, EVAL);
    assert_eq!(share_teams(p, &sc), [8, 8]);
    let (asat, fixed) = makespans(p, &sc, 5);
    let cfg = Config {
        fixed: true,
        partition: true,
        ..Config::new(p, Rule::Asat, 1)
    };
    let share = makespan(&cfg, &with_work(p, &sc, 5))
        .unwrap()
        .expect("every job finishes");
    let (a, f, s) = (asat.as_secs_f64(), fixed.as_secs_f64(), share.as_secs_f64());
    assert!(
        a <= 1.01 * s,
        "2 jobs: asat {asat:?} against the partition {share:?}"
    );
    assert!(
        (0.93..0.97).contains(&(s / f)),
        "2 jobs: the partition {share:?} against fixed teams {fixed:?}"
    );
}
