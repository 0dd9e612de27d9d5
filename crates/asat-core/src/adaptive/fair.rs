//! Equal shares between parallel jobs, as pure functions of what the kernel says every
//! process of the machine did over an interval.
//!
//! asat's proportional moves keep the ratio of jobs that already fill the machine (module
//! docs, "What the law does not do"): a job that arrives late enters with its whole pool, and
//! every crowded job then gives up the same fraction of its team, so the newcomer keeps part
//! of its entry advantage for good (8 jobs arriving one after another on 64 simulated CPUs:
//! the last held 13 threads, the others 6-9). An additive probe that would even them out (Chiu
//! and Jain) moves too slowly to do so within a few evaluations unless it oversubscribes the
//! machine by a large part of it.
//!
//! What evens them out is a fact no job can infer from its own threads: how many other
//! parallel jobs there are. The kernel says it to anyone who reads `/proc`: each process's CPU
//! time and number of threads. A process with more than one thread that kept at least
//! half the equal share busy is a *claimant*, a parallel job that wants an equal share; every
//! other process (a single-threaded hog, a daemon, a parallel job that uses less than half
//! its share of its own accord) keeps what it used. The equal share is the CPUs the
//! non-claimants leave, divided among the claimants and this job ([`equal_share`]). Every
//! job reads the same processes and computes the same share, so no coordination is needed
//! for all to agree; each job only takes its own part.
//!
//! Each job rounds the share to whole threads by its place among the claimants, ordered by
//! process id ([`share_place`], [`share_team`]): every job finds a different place, so the
//! teams add up to the CPUs exactly (a draw of the job's own, which adds up only on average,
//! where the places are unknown).
//!
//! [`AsatLogic`](super::AsatLogic) uses the share, as the job rounds it ([`share_team`]), as a
//! cap on the team while other jobs claim theirs, and a team below it grows to it unless the
//! evaluation was crowded ([`fair_growth`]), since the others, over theirs, give the CPUs back
//! at their next evaluation (on probation: where they do not, the growth is undone and backs
//! off).

/// What the kernel says one other process did over an interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Process {
    /// CPU time over the interval's wall time: the CPUs it kept busy on average.
    pub cpus: f64,
    /// Its threads at the end of the interval.
    pub threads: usize,
}

/// A multithreaded process is a claimant while it keeps at least this fraction of the equal
/// share busy: below that it uses what it wants (a small fixed pool), and counting it would
/// leave CPUs idle.
pub const CLAIM_FRACTION: f64 = 0.5;

/// The equal share of `cpus` CPUs between this job and the other claimants among `others`
/// (see the module docs), or `None` when no other process claims a share (the rule's other
/// readings then decide alone). Never below one CPU.
///
/// The claimants are found by exclusion: starting from every multithreaded process, one
/// that kept less than [`CLAIM_FRACTION`] of the share busy keeps what it used, and the
/// share is taken again, until no claimant is below it.
pub fn equal_share(cpus: usize, others: &[Process]) -> Option<f64> {
    let mut claimants: Vec<f64> = others
        .iter()
        .filter(|p| p.threads > 1 && p.cpus.is_finite() && p.cpus > 0.0)
        .map(|p| p.cpus)
        .collect();
    let used: f64 = others
        .iter()
        .filter(|p| p.cpus.is_finite() && p.cpus > 0.0)
        .map(|p| p.cpus)
        .sum();
    let mut kept = used - claimants.iter().sum::<f64>();
    loop {
        if claimants.is_empty() {
            return None;
        }
        let share = ((cpus as f64 - kept) / (claimants.len() + 1) as f64).max(1.0);
        let before = claimants.len();
        claimants.retain(|&c| {
            let claims = c >= CLAIM_FRACTION * share;
            if !claims {
                kept += c;
            }
            claims
        });
        if claimants.len() == before {
            return Some(share);
        }
    }
}

/// The team the equal share allows: `floor(share + u)`, at least 1 and at most `bound`;
/// `bound` when there is no share. `u` in `[0, 1)` is the job's own, drawn once: jobs whose
/// share has a fraction `f` round up where `u >= 1 - f`, about `f` of them, so that their teams
/// add up to the CPUs on average, and each keeps its size from one evaluation to the next
/// (rounded to the nearest, 8 jobs sharing 12 CPUs took 2 threads each, crowded the machine,
/// dropped to 1 and grew again, evaluation after evaluation).
pub fn share_threads(share: Option<f64>, bound: usize, u: f64) -> usize {
    let u = if u.is_finite() {
        u.clamp(0.0, 0.999_999)
    } else {
        0.5
    };
    match share {
        Some(s) if s.is_finite() => ((s + u).floor().max(1.0) as usize).min(bound.max(1)),
        _ => bound.max(1),
    }
}

/// The team a job below its equal share takes: the share's threads, when the team is below
/// them and the evaluation was not crowded; else `None`. Idle CPUs do not wait for the rule's
/// growth into idle (which needs low pressure, a low wait and good evaluations in a row, and
/// grows in proportion): jobs that had dropped below their shares together, 8 of regions of
/// unequal grain on 64 CPUs, took up to 14 evaluations to climb back a thread at a time, and
/// take 2-4 so.
pub fn fair_growth(threads: usize, share_threads: usize, crowded: bool) -> Option<usize> {
    (!crowded && threads < share_threads).then_some(share_threads)
}

/// Whether the equal share rose from `before` to `now` by more than its noise (other load
/// moving a little): by a quarter CPU and 5%, as when one of 16 jobs sharing 64 CPUs leaves
/// (4 to 4.27).
pub fn share_rose(before: Option<f64>, now: Option<f64>) -> bool {
    match (before, now) {
        (Some(a), Some(b)) => b >= a + 0.25 && b >= a * 1.05,
        _ => false,
    }
}

/// This job's place among the claimants of the equal `share` and itself, ordered by process
/// id (`me`, and each other's in `others`), and their number: every job reads the same
/// processes, so each finds a different place and all agree on the number. The claimants
/// are the multithreaded processes that kept at least [`CLAIM_FRACTION`] of the share busy,
/// as [`equal_share`] found them.
pub fn share_place(me: u64, others: &[(u64, Process)], share: f64) -> (usize, usize) {
    let claimants = claimants(others, share);
    let rank = claimants.iter().filter(|&&id| id < me).count();
    (rank, claimants.len() + 1)
}

/// The claimants of an equal `share` among `others`, by id: the multithreaded processes that
/// kept at least [`CLAIM_FRACTION`] of it busy, as [`equal_share`] finds them.
pub fn claimants(others: &[(u64, Process)], share: f64) -> Vec<u64> {
    others
        .iter()
        .filter(|(_, p)| p.threads > 1 && p.cpus.is_finite() && p.cpus >= CLAIM_FRACTION * share)
        .map(|&(id, _)| id)
        .collect()
}

/// How a job rounds its equal share to whole threads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rounding {
    /// By its place among the claimants ([`share_place`]): the first `round(f x of)` places
    /// of a share with fraction `f` round up, so the teams add up to the CPUs exactly.
    Place {
        /// This job's place, from 0.
        rank: usize,
        /// The claimants and this job.
        of: usize,
    },
    /// By the job's own draw in `[0, 1)` ([`share_threads`]), where the places are unknown:
    /// the teams add up to the CPUs on average.
    Draw(f64),
}

impl Rounding {
    /// By place where it is known (`rank`: [`share_place`]'s), else by the draw `u`.
    pub fn new(rank: Option<(usize, usize)>, u: f64) -> Self {
        match rank {
            Some((rank, of)) => Rounding::Place { rank, of },
            None => Rounding::Draw(u),
        }
    }
}

/// The most threads a job takes while others claim their shares, and the team it grows to
/// when below them: by place, both the share rounded by place; by draw, [`share_limit`] and
/// [`share_threads`].
pub fn share_team(share: Option<f64>, bound: usize, rounding: Rounding) -> (usize, usize) {
    match (rounding, share) {
        (Rounding::Place { rank, of }, Some(s)) if s.is_finite() => {
            let whole = s.floor().max(0.0);
            let extra = ((s - whole) * of as f64).round() as usize;
            let n = (whole as usize + usize::from(rank < extra)).clamp(1, bound.max(1));
            (n, n)
        }
        (Rounding::Draw(u), _) => {
            let cap = share_limit(share, bound, u);
            (cap, share_threads(share, bound, u).min(cap))
        }
        _ => (bound.max(1), bound.max(1)),
    }
}

/// Shares below this many CPUs are rounded up ([`share_cap`]) instead of by the job's draw.
pub const FINE_SHARE: f64 = 2.0;

/// The most threads a job takes while other jobs claim their shares: [`share_threads`], or
/// [`share_cap`] for a share below [`FINE_SHARE`] CPUs. There the fraction is a large part of
/// each team and the draws of a few jobs leave whole CPUs idle or crowded (8 jobs sharing 12
/// CPUs, 1.5 each: 2 of 8 drew a second thread in one run, and 2 CPUs stayed idle); the
/// rule's proportional moves and its growth into idle CPUs at random then share them.
pub fn share_limit(share: Option<f64>, bound: usize, u: f64) -> usize {
    match share {
        Some(s) if s < FINE_SHARE => share_cap(share, bound),
        _ => share_threads(share, bound, u),
    }
}

/// The share rounded up: `ceil(share)`, at least 1 and at most `bound`; `bound` when there is
/// no share.
pub fn share_cap(share: Option<f64>, bound: usize) -> usize {
    match share {
        Some(s) if s.is_finite() => ((s - 1e-6).ceil().max(1.0) as usize).min(bound.max(1)),
        _ => bound.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(cpus: f64) -> Process {
        Process { cpus, threads: 64 }
    }
    fn hog() -> Process {
        Process {
            cpus: 1.0,
            threads: 1,
        }
    }

    #[test]
    fn jobs_of_any_sizes_get_the_same_share() {
        // 8 jobs on 64 CPUs, the last one large: each of them computes 8
        let sizes = [9.0, 7.0, 6.0, 8.0, 8.0, 9.0, 8.0, 13.0];
        for me in 0..sizes.len() {
            let others: Vec<Process> = (0..sizes.len())
                .filter(|&i| i != me)
                .map(|i| job(sizes[i] * 0.9))
                .collect();
            assert_eq!(equal_share(64, &others), Some(8.0));
        }
    }

    #[test]
    fn single_threaded_load_keeps_what_it_uses() {
        let others = [job(20.0), hog(), hog(), hog(), hog()];
        assert_eq!(equal_share(64, &others), Some(30.0));
    }

    #[test]
    fn a_small_pool_that_uses_little_is_no_claimant() {
        // a 2-thread job using 2 CPUs of 64 leaves this one 62, not 32
        let small = Process {
            cpus: 2.0,
            threads: 2,
        };
        assert_eq!(equal_share(64, &[small]), None);
        // but with another claimant it stays out of the division
        assert_eq!(equal_share(64, &[small, job(40.0)]), Some(31.0));
    }

    #[test]
    fn exclusion_repeats_until_every_claimant_is_above_the_fraction() {
        // share 64/4 = 16: 7 < 8 goes out; share (64-7)/3 = 19: 9 < 9.5 goes out; 48/2 = 24
        let others = [job(7.0), job(9.0), job(30.0)];
        assert_eq!(equal_share(64, &others), Some(24.0));
    }

    #[test]
    fn no_share_without_other_claimants_and_never_below_one_cpu() {
        assert_eq!(equal_share(64, &[]), None);
        assert_eq!(equal_share(64, &[hog(), hog()]), None);
        let idle = Process {
            cpus: 0.0,
            threads: 8,
        };
        assert_eq!(equal_share(64, &[idle]), None);
        let nan = Process {
            cpus: f64::NAN,
            threads: 8,
        };
        assert_eq!(equal_share(64, &[nan]), None);
        // 4 CPUs under 6 hogs and a parallel job: one CPU each at least
        let mut crowded = vec![hog(); 6];
        crowded.push(job(3.0));
        assert_eq!(equal_share(4, &crowded), Some(1.0));
    }

    #[test]
    fn the_share_rounds_by_the_jobs_draw_within_the_bound() {
        assert_eq!(share_threads(Some(21.33), 64, 0.5), 21);
        assert_eq!(share_threads(Some(21.33), 64, 0.7), 22);
        assert_eq!(
            share_threads(Some(21.0), 64, 0.999),
            21,
            "a whole share stays"
        );
        assert_eq!(share_threads(Some(21.0), 64, 1.0), 21);
        assert_eq!(share_threads(Some(100.0), 64, 0.9), 64);
        assert_eq!(share_threads(Some(0.2), 64, 0.0), 1);
        assert_eq!(share_threads(None, 16, 0.3), 16);
        assert_eq!(share_threads(Some(f64::NAN), 16, 0.3), 16);
        assert_eq!(share_threads(Some(3.5), 16, f64::NAN), 4);
        // 8 jobs sharing 12 CPUs, draws spread over [0, 1): 12 threads in all
        let teams: usize = (0..8)
            .map(|j| share_threads(Some(1.5), 2, j as f64 / 8.0))
            .sum();
        assert_eq!(teams, 12);
    }

    #[test]
    fn the_cap_is_the_share_rounded_up_within_the_bound() {
        assert_eq!(share_cap(Some(8.0), 64), 8);
        assert_eq!(share_cap(Some(8.000_000_1), 64), 8);
        assert_eq!(share_cap(Some(1.5), 64), 2);
        assert_eq!(share_cap(Some(0.3), 64), 1);
        assert_eq!(share_cap(Some(80.0), 64), 64);
        assert_eq!(share_cap(None, 64), 64);
        assert_eq!(share_cap(Some(f64::INFINITY), 64), 64);
    }

    #[test]
    fn a_share_under_two_cpus_is_rounded_up_and_others_by_the_draw() {
        assert_eq!(share_limit(Some(1.5), 8, 0.1), 2);
        assert_eq!(share_limit(Some(1.99), 8, 0.0), 2);
        assert_eq!(share_limit(Some(2.4), 8, 0.1), 2);
        assert_eq!(share_limit(Some(2.4), 8, 0.7), 3);
        assert_eq!(share_limit(None, 8, 0.7), 8);
    }

    #[test]
    fn places_among_the_claimants_follow_the_ids() {
        let others = [(7, job(10.0)), (3, job(10.0)), (5, hog()), (9, job(1.0))];
        // 4 is after 3 only: the hog and the job below half the share are no claimants
        assert_eq!(share_place(4, &others, 10.0), (1, 3));
        assert_eq!(share_place(1, &others, 10.0), (0, 3));
        assert_eq!(share_place(8, &others, 10.0), (2, 3));
    }

    #[test]
    fn by_place_the_teams_add_up_to_the_cpus_exactly() {
        for (cpus, k) in [(64, 3), (64, 7), (12, 8), (256, 6), (16, 16)] {
            let share = cpus as f64 / k as f64;
            let teams: Vec<usize> = (0..k)
                .map(|rank| share_team(Some(share), cpus, Rounding::Place { rank, of: k }).0)
                .collect();
            assert_eq!(
                teams.iter().sum::<usize>(),
                cpus,
                "{cpus} CPUs, {k} jobs: {teams:?}"
            );
            let (lo, hi) = (teams.iter().min().unwrap(), teams.iter().max().unwrap());
            assert!(hi - lo <= 1, "{teams:?}");
        }
        let place = Rounding::Place { rank: 0, of: 2 };
        assert_eq!(share_team(Some(100.0), 64, place), (64, 64));
        assert_eq!(share_team(None, 16, place), (16, 16));
        assert_eq!(share_team(Some(1.5), 8, Rounding::Draw(0.1)), (2, 1));
    }

    #[test]
    fn a_share_rises_when_a_job_leaves_not_with_noise() {
        assert!(
            share_rose(Some(8.0), Some(64.0 / 7.0)),
            "one of 8 on 64 left"
        );
        assert!(
            share_rose(Some(4.0), Some(64.0 / 15.0)),
            "one of 16 on 64 left"
        );
        assert!(!share_rose(Some(8.0), Some(8.2)));
        assert!(!share_rose(Some(32.0), Some(33.0)), "a daemon's CPU");
        assert!(!share_rose(Some(8.0), Some(7.0)));
        assert!(!share_rose(None, Some(8.0)));
        assert!(!share_rose(Some(8.0), None));
    }

    #[test]
    fn a_job_below_its_share_grows_to_it_unless_crowded() {
        assert_eq!(fair_growth(6, 8, false), Some(8));
        assert_eq!(fair_growth(6, 8, true), None, "crowded");
        assert_eq!(fair_growth(8, 8, false), None);
        assert_eq!(fair_growth(9, 8, false), None);
    }
}
