//! The decisions of asat's own rule ([`Rule::Asat`](super::Rule::Asat)) as pure functions of
//! what an evaluation saw. [`AsatLogic`](super::AsatLogic) calls them; asat-lab's simulator
//! (`asat_lab::asat_sim`) drives that same logic. The control law and the argument for it are
//! in the [module docs](super).

/// CPU pressure below this fraction of the interval (system-wide `some` stall time over
/// busy time) means the machine has room: growth needs one good evaluation instead of
/// `good_trig`. At or above it, the team does not grow.
pub const PRESSURE_ROOM: f64 = 0.02;
/// A job whose threads waited for a CPU more than this share of their runnable time is
/// crowded, whatever its timed barriers showed.
pub const WAIT_CROWDED: f64 = 0.05;
/// Growth also needs the job's threads to have waited less than this share (when known).
pub const WAIT_ROOM: f64 = 0.02;

/// Whether the job's run-queue wait alone shows a crowded machine.
pub fn crowded_by_wait(wait: Option<f64>) -> bool {
    wait.is_some_and(|w| w > WAIT_CROWDED)
}

/// The number of the team's threads the machine ran at once, from what the evaluation saw:
/// `threads` times the share of runnable time the threads were not kept waiting (`1 - wait`)
/// where the kernel says, else times the mean fraction of members on time in the timed
/// barriers (`prompt`). `None` when neither is known.
///
/// The wait is read over the whole interval from every thread; `prompt` comes from a few
/// barriers of a few microseconds, in which one member that happened to start late is a
/// whole thread of a small team (in the simulator, jobs started together ended up to 4x apart
/// when the smaller of the two was taken).
pub fn share(threads: usize, prompt: Option<f64>, wait: Option<f64>) -> Option<f64> {
    let f = match wait {
        Some(w) => 1.0 - w.clamp(0.0, 1.0),
        None => prompt?,
    };
    Some(threads as f64 * f.clamp(0.0, 1.0))
}

/// The team size after a crowded evaluation: the share the evaluation showed, `round(share)`
/// (a tie rounds down), never more than the team had, never below one, and never below half
/// the team (a noisy estimate taken while other jobs shrink too cannot empty the machine). `share` is the team size times the
/// mean fraction of members that entered the timed barriers promptly, that is the number of
/// the team's threads the machine ran at once.
pub fn share_target(threads: usize, share: f64) -> usize {
    let share = if share.is_finite() {
        share.max(0.0)
    } else {
        0.0
    };
    // round half down: on a tie the machine showed no more than that many
    let rounded = (share - 0.5).ceil().max(0.0) as usize;
    rounded.max(threads.div_ceil(2)).clamp(1, threads.max(1))
}

/// The team size after a crowded evaluation: [`share_target`] of the share the evaluation
/// showed or of the CPUs the rest of the machine left free (`free`, where known), whichever is
/// smaller (so still never below half the team, nor above it).
///
/// The share from the wait understates a bulk-synchronous job's excess (members blocked at a
/// barrier do not wait), by about half while the machine is crowded: in the simulator, 8 jobs
/// of 64 threads on 256 CPUs (twice the CPUs) waited 25-27% where runnable threads would
/// wait 50%, and took 47 threads each instead of 32. The free CPUs do not depend on how the
/// team's threads wait: the machine ran the others' threads on all but `free` CPUs, and a
/// team larger than that shares CPUs with them. Every crowded job that takes its free CPUs
/// together leaves the machine at least full (the free CPUs of all jobs add up to the CPUs
/// that other load leaves, plus the idle ones counted once per job), so the sum cannot
/// undershoot those CPUs in one step.
pub fn crowded_target(threads: usize, share: f64, free: Option<f64>) -> usize {
    let capped = match free {
        // NaN and infinite readings are no cap; a NaN share stays NaN (halves)
        Some(f) if f.is_finite() && !share.is_nan() => share.min(f.max(0.0)),
        _ => share,
    };
    share_target(threads, capped)
}

/// Whether the paper's step (`bad_trig` bad evaluations in a row drop one thread) may apply
/// under asat's rule: not when the kernel says the job's threads waited for a CPU at most
/// [`WAIT_ROOM`] of their runnable time. Slow timed barriers then have another cause (a
/// worker woken late), and a team at its share that dropped a thread on them stayed below
/// the CPUs for good (its idle CPU is too small a share of the machine to grow into: in the
/// simulator, 8 jobs beside 16 hogs on 64 CPUs ended at 47 threads for 48 free CPUs).
pub fn step_confirmed(wait: Option<f64>) -> bool {
    !wait.is_some_and(|w| w <= WAIT_ROOM)
}

/// The team size after a good evaluation that showed `share` (the team's threads the machine
/// ran at once): when more than half a thread's worth of the team waited, every thread that
/// waited goes, a part of one counting as one (`floor(share)`); else the team keeps its size.
/// Never below half the team or one, never more than it had.
///
/// A part counts as a whole because the wait understates a bulk-synchronous job's excess: a
/// thread blocked at a barrier is not waiting for a CPU, so while members block, the threads
/// still running wait less than the machine's overload would make them (in the simulator, 8
/// such jobs with twice as many threads as CPUs saw waits of 20-27%, where threads that were
/// always runnable would wait 50%). Rounded to the nearest instead, the last few threads
/// over the CPUs took an evaluation or two more to go (256 CPUs, 8 jobs: 9 evaluations to
/// settle in 4 of 10 seeds, against 1 of 10). Half a thread or less is not worth a move: jobs
/// that fit the machine wait that little.
pub fn good_target(threads: usize, share: f64) -> usize {
    let waited = threads as f64 - share;
    // NaN and no wait alike: keep
    if waited.is_nan() || waited <= 0.5 {
        return threads;
    }
    share_target(threads, share.floor())
}

/// Idle CPU time below this share of the machine is not room to grow into (a job's own
/// barrier waits leave some).
pub const IDLE_ROOM: f64 = 0.05;
/// A growth into idle CPUs at most multiplies the team by this.
pub const MAX_GROWTH: usize = 4;

/// Idle CPUs are room only while the CPU pressure stays below this fraction of the idle share
/// (0.25% pressure at 10% idle, 1.9% at 75%): idle CPUs beside waiting threads are the
/// barrier waits of bulk-synchronous jobs whose threads wait for CPUs at other moments. In
/// the simulator, jobs a few threads over the CPUs leave 5-10% of them idle at 0.3-0.7%
/// pressure, and jobs exactly at the CPUs leave neither; a machine that others have left
/// shows much idle and little pressure, even beside a little background load.
pub const PRESSURE_PER_IDLE: f64 = 0.025;

/// The team size that takes this team's part of the machine's idle CPUs: the busy CPUs grow
/// into the idle ones in proportion, `threads / (1 - idle)` (so k jobs that see the same idle
/// share together fill the machine), at most [`MAX_GROWTH`] times the team and the bound;
/// `None` when that is no growth, the idle share is below [`IDLE_ROOM`], or the CPU pressure
/// is at least [`PRESSURE_PER_IDLE`] times the idle share.
///
/// The target is rounded at random, `floor(threads / (1 - idle) + u)` with `u` drawn
/// uniformly from `[0, 1)`: up with the probability of its fraction, so that k jobs fill the
/// idle CPUs on average. Rounded down always (`u = 0`), a team of one would not grow until
/// half the machine were idle (`1 / (1 - idle) >= 2`), and k teams of one beside CPU hogs
/// would leave CPUs idle for good.
pub fn idle_target(
    threads: usize,
    idle: f64,
    pressure: Option<f64>,
    bound: usize,
    u: f64,
) -> Option<usize> {
    // NaN is no room
    if idle.is_nan()
        || idle < IDLE_ROOM
        || pressure.is_some_and(|p| p.is_nan() || p >= PRESSURE_PER_IDLE * idle)
    {
        return None;
    }
    let busy = (1.0 - idle.min(1.0)).max(1.0 / MAX_GROWTH as f64);
    // below 1, so that a whole target is never rounded up
    let u = if u.is_finite() {
        u.clamp(0.0, 0.999_999)
    } else {
        0.0
    };
    let t = ((threads as f64 / busy + u).floor() as usize)
        .min(threads.saturating_mul(MAX_GROWTH))
        .min(bound);
    (t > threads).then_some(t)
}

/// Whether the team has more threads than the CPUs the rest of the machine left free (by
/// more than half a thread): one of its threads then shares a CPU, and in a bulk-synchronous
/// job that thread holds up every barrier, however small the job's mean wait.
pub fn over_free(threads: usize, free: Option<f64>) -> bool {
    free.is_some_and(|f| f + 0.5 < threads as f64)
}

/// The most threads a growth may reach: the bound, and no more than the CPUs the rest of the
/// machine left free (rounded; never below one).
pub fn free_limit(bound: usize, free: Option<f64>) -> usize {
    match free {
        Some(f) if f.is_finite() => bound.min(((f + 0.5).floor().max(1.0)) as usize),
        _ => bound,
    }
}

/// Whether the rest of the machine leaves at least twice the team's CPUs free: room that a
/// growth did not find by luck (the machine changed since growths failed), so growth does not
/// wait for the back-off.
pub fn ample(threads: usize, free: Option<f64>) -> bool {
    free.is_some_and(|f| f >= 2.0 * threads as f64)
}

/// The size of the growth probe (a timed barrier with more threads than the team has): twice
/// the team, within the bound, and at least one more thread.
pub fn dip_size(threads: usize, bound: usize) -> usize {
    threads.saturating_mul(2).min(bound).max(threads + 1)
}

/// The team size after a growth probe in which `prompt` members entered on time: that many,
/// if it is more than the team had (the machine ran them at once), else no growth.
pub fn grow_target(threads: usize, prompt: usize, probed: usize) -> Option<usize> {
    let t = prompt.min(probed);
    (t > threads).then_some(t)
}

/// Good evaluations in a row needed before a growth probe, or `None` while the machine shows
/// CPU pressure or the job's threads waited for CPUs: 1 when the pressure showed room,
/// `good_trig` when it is unknown; each doubled `backoff` times (growths that did not hold).
pub fn growth_wait(
    pressure: Option<f64>,
    wait: Option<f64>,
    good_trig: u32,
    backoff: u32,
) -> Option<u32> {
    if wait.is_some_and(|w| w.is_nan() || w >= WAIT_ROOM) {
        return None;
    }
    let base = match pressure {
        Some(p) if p.is_nan() || p >= PRESSURE_ROOM => return None,
        Some(_) => 1,
        None => good_trig.max(1),
    };
    Some(base.saturating_mul(1 << backoff.min(31)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_target_rounds_half_down_within_one_and_the_team() {
        assert_eq!(share_target(64, 40.0), 40);
        assert_eq!(share_target(64, 40.5), 40);
        assert_eq!(share_target(64, 40.51), 41);
        assert_eq!(share_target(64, 16.0), 32, "at most halved");
        assert_eq!(
            share_target(2, 1.5),
            1,
            "beside a hog on 2 CPUs: 4/3 threads -> 1"
        );
        assert_eq!(share_target(2, 1.75), 2);
        assert_eq!(share_target(8, 0.2), 4);
        assert_eq!(share_target(1, 0.2), 1);
        assert_eq!(share_target(8, 100.0), 8, "never grows");
        assert_eq!(share_target(8, f64::NAN), 4);
        assert_eq!(share_target(0, 3.0), 1);
    }

    #[test]
    fn good_evaluations_give_back_every_thread_that_waited_once_half_a_thread_did() {
        // 70 threads, 2% waited: 1.4 threads, two go
        assert_eq!(good_target(70, 70.0 * 0.98), 68);
        // 0.7%: 0.49 threads, none
        assert_eq!(good_target(70, 70.0 * 0.993), 70);
        assert_eq!(good_target(70, 69.5), 70, "exactly half a thread: none");
        assert_eq!(good_target(70, 69.4), 69);
        assert_eq!(good_target(70, 69.0), 69, "a whole thread: one");
        assert_eq!(good_target(8, 1.0), 4, "at most halved");
        assert_eq!(good_target(1, 0.2), 1);
        assert_eq!(good_target(8, 9.0), 8, "never grows");
        assert_eq!(good_target(8, f64::NAN), 8, "no reading: keep");
    }

    #[test]
    fn a_crowded_team_keeps_no_more_than_the_free_cpus() {
        // 8 jobs of 64 threads on 256 CPUs: the wait shows 47, the free CPUs 33.5
        assert_eq!(
            crowded_target(64, 47.0, Some(33.5)),
            33,
            "a tie rounds down"
        );
        assert_eq!(crowded_target(64, 47.0, Some(33.6)), 34);
        assert_eq!(crowded_target(64, 47.0, None), 47);
        assert_eq!(crowded_target(64, 30.0, Some(40.0)), 32, "at most halved");
        assert_eq!(crowded_target(64, 47.0, Some(10.0)), 32, "at most halved");
        assert_eq!(crowded_target(64, 47.0, Some(-3.0)), 32);
        assert_eq!(
            crowded_target(64, 40.0, Some(48.0)),
            40,
            "the share when smaller"
        );
        assert_eq!(crowded_target(64, 40.0, Some(f64::NAN)), 40);
        assert_eq!(crowded_target(64, 40.0, Some(f64::INFINITY)), 40);
        assert_eq!(crowded_target(64, f64::NAN, Some(40.0)), 32);
        assert_eq!(
            crowded_target(2, 1.75, Some(1.0)),
            1,
            "beside a hog on 2 CPUs"
        );
        assert_eq!(crowded_target(2, 1.75, Some(2.0)), 2);
        assert_eq!(crowded_target(1, 0.2, Some(0.0)), 1);
    }

    #[test]
    fn the_step_needs_the_wait_to_agree() {
        assert!(step_confirmed(None), "no reading: the paper's step");
        assert!(step_confirmed(Some(0.021)));
        assert!(step_confirmed(Some(f64::NAN)));
        assert!(!step_confirmed(Some(WAIT_ROOM)));
        assert!(!step_confirmed(Some(0.0)));
    }

    #[test]
    fn dip_doubles_within_the_bound() {
        assert_eq!(dip_size(8, 64), 16);
        assert_eq!(dip_size(40, 64), 64);
        assert_eq!(dip_size(1, 2), 2);
        assert_eq!(dip_size(usize::MAX / 2 + 1, usize::MAX), usize::MAX);
    }

    #[test]
    fn growth_into_idle_cpus_is_in_proportion() {
        assert_eq!(idle_target(32, 0.5, None, 256, 0.0), Some(64));
        assert_eq!(
            idle_target(32, 0.875, None, 256, 0.0),
            Some(128),
            "at most 4x"
        );
        assert_eq!(idle_target(32, 0.875, Some(0.0), 100, 0.0), Some(100));
        assert_eq!(idle_target(32, 0.04, None, 256, 0.0), None);
        assert_eq!(idle_target(32, 0.06, Some(0.001), 256, 0.0), Some(34));
        assert_eq!(
            idle_target(1, 0.4, None, 2, 0.0),
            None,
            "1 / 0.6 rounds down to 1"
        );
        assert_eq!(idle_target(1, 0.5, None, 2, 0.0), Some(2));
        assert_eq!(idle_target(8, f64::NAN, None, 64, 0.0), None);
        assert_eq!(idle_target(8, 1.0, None, 64, 0.0), Some(32));
    }

    #[test]
    fn the_growth_into_idle_cpus_is_rounded_at_random() {
        // 1 / (1 - 0.25) = 1.33: a team of one grows with probability 1/3
        assert_eq!(idle_target(1, 0.25, None, 16, 0.6), None);
        assert_eq!(idle_target(1, 0.25, None, 16, 0.7), Some(2));
        assert_eq!(
            idle_target(2, 0.5, None, 16, 0.99),
            Some(4),
            "whole: never up"
        );
        assert_eq!(idle_target(2, 0.5, None, 16, 1.0), Some(4));
        assert_eq!(idle_target(2, 0.5, None, 16, f64::NAN), Some(4));
        assert_eq!(
            idle_target(30, 0.9, None, 256, 0.99),
            Some(120),
            "at most 4x"
        );
        assert_eq!(idle_target(30, 0.9, None, 100, 0.99), Some(100));
        // on average the target is the proportional one
        for (t, idle) in [(1usize, 0.25), (3, 0.1), (7, 0.3)] {
            let n = 10_000;
            let sum: usize = (0..n)
                .map(|i| idle_target(t, idle, None, 64, i as f64 / n as f64).unwrap_or(t))
                .sum();
            let want = t as f64 / (1.0 - idle);
            assert!((sum as f64 / n as f64 - want).abs() < 1e-3, "{t} {idle}");
        }
    }

    #[test]
    fn idle_beside_waiting_threads_is_not_room() {
        assert_eq!(idle_target(64, 0.1, Some(0.0026), 256, 0.0), None);
        assert_eq!(idle_target(64, 0.1, Some(0.0024), 256, 0.0), Some(71));
        assert_eq!(idle_target(64, 0.75, Some(0.019), 256, 0.0), None);
        assert_eq!(idle_target(64, 0.75, Some(0.018), 256, 0.0), Some(256));
        assert_eq!(idle_target(64, 0.75, Some(f64::NAN), 256, 0.0), None);
    }

    #[test]
    fn the_free_cpus_bound_the_team() {
        assert!(over_free(49, Some(48.0)));
        assert!(over_free(49, Some(48.49)));
        assert!(!over_free(49, Some(48.5)), "the boundary rounds up");
        assert!(!over_free(2, Some(1.9)), "alone beside a little noise");
        assert!(!over_free(2, None));
        assert!(!over_free(2, Some(f64::NAN)));
        assert_eq!(free_limit(64, Some(48.2)), 48);
        assert_eq!(free_limit(64, Some(63.6)), 64);
        assert_eq!(free_limit(64, Some(99.0)), 64);
        assert_eq!(free_limit(64, Some(0.1)), 1);
        assert_eq!(free_limit(64, None), 64);
        assert_eq!(free_limit(64, Some(f64::INFINITY)), 64);
        assert!(ample(71, Some(256.0)) && ample(1, Some(2.0)));
        assert!(!ample(65, Some(86.0)) && !ample(2, Some(3.9)) && !ample(2, None));
        for t in 1..300 {
            for f in [0.0, 0.4, 0.5, 0.6, 1.5, 47.5, 48.0, 48.5, 299.9] {
                // a team at the growth limit is never over the free CPUs
                let lim = free_limit(1000, Some(f));
                assert!(
                    !(t <= lim && t > 1 && over_free(t, Some(f))),
                    "t {t} free {f}"
                );
            }
        }
    }

    #[test]
    fn growth_adopts_what_the_machine_ran() {
        assert_eq!(grow_target(8, 16, 16), Some(16));
        assert_eq!(grow_target(8, 11, 16), Some(11));
        assert_eq!(grow_target(8, 8, 16), None);
        assert_eq!(grow_target(8, 3, 16), None);
        assert_eq!(grow_target(8, 99, 16), Some(16));
    }

    #[test]
    fn growth_waits_for_room() {
        assert_eq!(growth_wait(Some(0.0), None, 3, 0), Some(1));
        assert_eq!(growth_wait(Some(0.01), Some(0.015), 3, 2), Some(4));
        assert_eq!(growth_wait(Some(0.5), None, 3, 0), None);
        assert_eq!(
            growth_wait(Some(0.0), Some(0.2), 3, 0),
            None,
            "our threads waited"
        );
        assert_eq!(growth_wait(Some(f64::NAN), None, 3, 0), None);
        assert_eq!(growth_wait(None, None, 3, 0), Some(3));
        assert_eq!(growth_wait(None, None, 3, 3), Some(24));
    }

    #[test]
    fn the_share_is_what_the_waits_showed_else_the_probes() {
        assert_eq!(share(64, Some(0.5), None), Some(32.0));
        assert_eq!(share(64, None, Some(0.75)), Some(16.0));
        assert_eq!(share(64, Some(0.5), Some(0.75)), Some(16.0));
        assert_eq!(
            share(64, Some(0.25), Some(0.0)),
            Some(64.0),
            "one late member is not load"
        );
        assert_eq!(share(8, Some(0.5), Some(0.125)), Some(7.0));
        assert_eq!(share(64, None, None), None);
        assert_eq!(share(2, None, Some(7.0)), Some(0.0));
        assert!(
            crowded_by_wait(Some(0.2)) && !crowded_by_wait(Some(0.04)) && !crowded_by_wait(None)
        );
    }

    proptest::proptest! {
        #[test]
        fn a_crowded_machine_never_grows_the_team_past_its_share(
            threads in 1usize..512, frac in 0.0f64..=1.0,
        ) {
            let share = threads as f64 * frac;
            let t = share_target(threads, share);
            proptest::prop_assert!(t >= 1 && t <= threads);
            proptest::prop_assert!(t as f64 <= share.max(threads.div_ceil(2) as f64) + 0.5);
            proptest::prop_assert!(t >= threads.div_ceil(2));
        }

        #[test]
        fn a_crowded_team_never_keeps_more_than_its_share_or_the_free_cpus(
            threads in 1usize..512, frac in 0.0f64..=1.0, free in proptest::option::of(-1.0f64..600.0),
        ) {
            let share = threads as f64 * frac;
            let t = crowded_target(threads, share, free);
            let half = threads.div_ceil(2);
            proptest::prop_assert!(t >= 1 && t <= threads && t >= half);
            proptest::prop_assert!(t <= share_target(threads, share), "never above the share's");
            if let Some(f) = free {
                // within half a thread of the free CPUs, unless at the halving floor
                proptest::prop_assert!(t == half.max(1) || t as f64 <= f + 0.5,
                    "{} threads, {} free -> {}", threads, f, t);
            } else {
                proptest::prop_assert_eq!(t, share_target(threads, share));
            }
        }

        #[test]
        fn growth_stays_within_the_probe(
            threads in 1usize..512, bound in 1usize..512, prompt in 0usize..1024,
        ) {
            let bound = bound.max(threads + 1);
            let d = dip_size(threads, bound);
            proptest::prop_assert!(d > threads && d <= bound);
            if let Some(t) = grow_target(threads, prompt, d) {
                proptest::prop_assert!(t > threads && t <= d && t <= prompt);
            }
        }
    }
}
