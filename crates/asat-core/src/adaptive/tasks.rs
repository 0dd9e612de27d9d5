//! How many threads take tasks in a program made only of `join` and loops on tasks, before
//! any region has been evaluated: a pure state machine fed one reading of the kernel at a
//! time ([`TaskTeam::next`]), [`READINGS`] times per evaluation interval and once more where
//! CPUs fall idle ("Early readings" below; the module docs, "Programs of tasks").
//!
//! Such a program times no barrier, so the team follows what the kernel says:
//!
//! - alone, or beside load that claims no share (single-threaded hogs, small pools): the CPUs
//!   the rest of the machine left free, rounded ([`task_team`]);
//! - beside other parallel jobs ([`fair::equal_share`] is `Some`): its equal share, rounded
//!   as regions round it ([`fair::share_team`]). The free CPUs alone would keep the first
//!   job's advantage for good: a job that finds 63 of 64 CPUs taken takes one thread, and the
//!   first one, seeing that thread, keeps 63. A team below its share grows to it at once, as
//!   regions do, since jobs above theirs give CPUs back at their next reading;
//! - on probation: [`HOLD`] readings after such a growth, the others must have left
//!   [`HELD_FRACTION`] of the share free. Where they do not (a fixed pool beside this job
//!   never gives way), the team falls back to the free CPUs for `2^b` readings, `b` growing
//!   with each failure up to [`MAX_BACKOFF`](super::MAX_BACKOFF), and tries again. The same
//!   check applies to a team that holds its share: a job that arrives and does not give way
//!   sends it back to the free CPUs. A share that grows (a job left) is tried at once: the
//!   failures were against the jobs there before (a copy whose CPU the hypervisor slowed got
//!   less than that fraction of its one-CPU share, and the back-off then kept it at one
//!   thread for four readings after the other copy ended).
//!
//! # Early readings
//!
//! A team below its pool waits for CPUs to come free, and a job that leaves frees them all at
//! once: at one reading per interval the others would take them up to an interval later. A
//! job that starts beside others runs its whole pool until its first reading (the one taken
//! when the runtime was built has nothing to compare with), and the others lose as much as it
//! gains (copies of a program that started together ended 60-150 ms apart in 310 ms when
//! the last one to build its pool ran 2 threads for its first 100 ms beside the others' one).
//! So between readings a team looks at the machine's runnable threads (`/proc/loadavg`: a
//! count of now, not an average) at most every [`LOOK_INTERVAL`], and reads the kernel at once
//! when [`IDLE_LOOKS`] looks in a row found fewer runnable threads than CPUs while the team is
//! below its pool, or more than CPUs while it has more than one thread, at least
//! [`EARLY_READING`] after the last reading ([`Looks`]). The reading decides as any other
//! (a job that ended is gone from its share's claimants, zombies included); an early reading
//! that left the team as it was is the last before the next regular one, so that load that
//! leaves CPUs idle or crowded for moments (I/O, serial phases, a pool beside that keeps more
//! than its share) costs at most a reading per interval more. A reading that crowded looks
//! called, where no other job claims a share, leaves the others' runnable threads their CPUs
//! ([`crowded_cap`]): over its 20 ms the kernel's counts of their CPU time lag. Where the
//! looks find the machine crowded before a reading may come (within its 20 ms of the last
//! one) and the last reading found no job claiming a share, they take the team down to that
//! cap at once, once between readings ([`Looks::cap_now`]): of two copies of a tree sum
//! that started together, the last to build its pool took its reading as it did so and ran
//! its whole pool for 20 ms beside the other, which came down in 1-10 ms; they ended 42-54 ms
//! apart in 5 runs of 12, against 6-29 ms where the two came down within 15 ms of each other.
//! With the cap it comes down 10 ms in (11 of 12; 14 ms in the other). A job whose share
//! others claim waits for its reading: its probation must not end at a look.

use std::time::Duration;

use super::fair;

/// Readings after a growth to the share before it is judged: the others see it at their
/// next reading, and the one after it is the first to cover an interval in which they gave
/// way.
pub const HOLD: u64 = 2;

/// A growth to the share holds when the rest of the machine left at least this fraction of
/// it free: the others' draws and serial phases move what they use by a thread or so.
pub const HELD_FRACTION: f64 = 0.75;

/// Readings per evaluation interval: a program of tasks reads the kernel every
/// `eval_interval / READINGS` (100 ms by default). A job that finds the machine crowded comes
/// down to its share within half the evaluations' interval (copies of a program that runs for
/// half a second shared the machine only at its end at one reading per 200 ms), and a reading
/// stays long enough for the kernel's clock-tick counts of the other processes' CPU time
/// (10 ms each: 0.1 CPU over a reading).
pub const READINGS: u32 = 2;

/// Between readings, a team below its pool looks at the machine's runnable threads at most
/// this often (a small file: a few microseconds, 0.1% of a CPU at this rate). With two looks
/// in a row needed, a copy of a tree sum left alone took the other CPU 35-60 ms after the
/// other copy ended at 10 ms (5 of 7 runs), 3-13 ms at 5 ms (4 of 5).
pub const LOOK_INTERVAL: Duration = Duration::from_millis(5);

/// Looks in a row that must find a CPU with nothing to run (or a thread with no CPU) before
/// a reading comes early.
pub const IDLE_LOOKS: u32 = 2;

/// The least time between an early reading and the one before it: the kernel counts idle
/// and process CPU time in ticks of 10 ms.
pub const EARLY_READING: Duration = Duration::from_millis(20);

/// Quick looks between readings at the machine's runnable threads (see the module docs,
/// "Early readings"): whether a team reads the kernel before its interval is over.
#[derive(Clone, Debug, Default)]
pub struct Looks {
    /// Looks in a row that found the machine as a reading could change the team for: a CPU
    /// with nothing to run while the team is below its pool, or more runnable threads than
    /// CPUs while it has more than one.
    calls: u32,
    /// An early reading since the last regular one left the team as it was.
    spent: bool,
    /// The runnable threads the last look found where they were more than the CPUs.
    crowded: Option<u64>,
    /// Looks took the team down without a reading since the last one ([`Looks::cap_now`]).
    capped: bool,
}

impl Looks {
    /// One look found `running` threads runnable on a machine of `cpus` CPUs (the looking
    /// thread included), `since` the last reading, with `team` of the pool's `max` threads
    /// taking tasks: whether to read the kernel now.
    pub fn look(
        &mut self,
        running: u64,
        cpus: usize,
        team: usize,
        max: usize,
        since: Duration,
    ) -> bool {
        let cpus = cpus as u64;
        let idle = team < max && running < cpus;
        let crowded = team > 1 && running > cpus;
        self.crowded = crowded.then_some(running);
        self.calls = if idle || crowded {
            self.calls.saturating_add(1)
        } else {
            0
        };
        !self.spent && self.calls >= IDLE_LOOKS && since >= EARLY_READING
    }

    /// The runnable threads the last look found, where they were more than the CPUs (a
    /// reading it called for early caps the team with [`crowded_cap`]).
    pub fn crowded(&self) -> Option<u64> {
        self.crowded
    }

    /// Where [`IDLE_LOOKS`] looks in a row found more runnable threads than CPUs, the last
    /// of them now, `since` the last reading, too soon for another ([`EARLY_READING`]): the
    /// runnable threads that look found, for [`crowded_cap`]; once between readings.
    pub fn cap_now(&mut self, since: Duration) -> Option<u64> {
        let due = !self.capped && self.calls >= IDLE_LOOKS && since < EARLY_READING;
        let running = self.crowded.filter(|_| due)?;
        self.capped = true;
        Some(running)
    }

    /// A reading was taken, `early` or at its interval, after which the team `changed` or
    /// not.
    pub fn read(&mut self, early: bool, changed: bool) {
        self.calls = 0;
        self.spent = early && !changed;
        self.capped = false;
    }
}

/// The most threads a team of `team` may keep after an early reading called by looks that
/// found `running` threads runnable on `cpus` CPUs, where no other job claims a share: the
/// CPUs the others' runnable threads (those beyond the team) left, at least one. The
/// reading's CPU times cannot say it over its 20 ms: the kernel's counts of another
/// process's time lag (a copy of a tree sum read the other copy, at one thread since 12 ms,
/// as 0.15 CPU, and kept its 2 threads beside it, 3 runnable on 2 CPUs, until its next
/// regular reading 100 ms on: 3 traced starts of 30; with the cap, both copies were at one
/// thread 1-28 ms in, 14 of 14).
pub fn crowded_cap(running: u64, cpus: usize, team: usize) -> usize {
    let others = running.saturating_sub(team as u64);
    (cpus as u64).saturating_sub(others).max(1) as usize
}

/// The threads that take tasks after a reading of `free` CPUs left free by the rest of the
/// machine, for a pool of `max` threads: `round(free)`, at least 1 and at most `max`; `max`
/// where the kernel did not say.
pub fn task_team(free: Option<f64>, max: usize) -> usize {
    match free {
        Some(f) if f.is_finite() => (f.round().max(0.0) as usize).clamp(1, max.max(1)),
        _ => max.max(1),
    }
}

/// The task team's state between readings (see the module docs).
#[derive(Clone, Debug)]
pub struct TaskTeam {
    max: usize,
    /// The job's rounding of its share ([`fair::share_threads`]), drawn once.
    u: f64,
    team: usize,
    readings: u64,
    /// The reading at which the team last grew to its share, while on probation.
    grew_at: Option<u64>,
    /// Failed growths in a row.
    backoff: u32,
    /// No growth to the share before this reading.
    wait_until: u64,
    /// The last reading's share in threads ([`fair::share_team`]'s lift; the pool's size
    /// when no other job claims one).
    lift: usize,
    /// Whether the last reading found other jobs that claim a share.
    shared: bool,
}

impl TaskTeam {
    /// A pool of `max` threads, all of them taking tasks until the first reading; `u` in
    /// `[0, 1)` is the job's rounding of its share.
    pub fn new(max: usize, u: f64) -> Self {
        Self {
            max: max.max(1),
            u,
            team: max.max(1),
            readings: 0,
            grew_at: None,
            backoff: 0,
            wait_until: 0,
            lift: max.max(1),
            shared: false,
        }
    }

    /// Whether the last reading found other parallel jobs claiming a share of the machine
    /// (none before the first reading).
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// The threads that take tasks now.
    pub fn team(&self) -> usize {
        self.team
    }

    /// Takes the team down to `n` threads (at least one) where it has more.
    pub fn cap(&mut self, n: usize) {
        self.team = self.team.min(n.max(1));
    }

    /// Takes one reading: `free`, the CPUs the rest of the machine left free since the last
    /// one; `equal`, this job's equal share among the parallel jobs
    /// ([`fair::equal_share`]), and `rank` its place among them ([`fair::share_place`];
    /// `None` rounds by the job's draw). Returns the new team.
    pub fn next(
        &mut self,
        free: Option<f64>,
        equal: Option<f64>,
        rank: Option<(usize, usize)>,
    ) -> usize {
        self.readings += 1;
        let n = self.readings;
        let base = task_team(free, self.max);
        self.shared = equal.is_some();
        if equal.is_none() {
            self.grew_at = None;
            self.lift = self.max;
            self.team = base;
            return base;
        }
        // Never over the share as regions cap it; grown to it as regions grow (by draw,
        // the cap rounds shares under `FINE_SHARE` up, past the machine for every job).
        let (cap, lift) = fair::share_team(equal, self.max, fair::Rounding::new(rank, self.u));
        if lift > self.lift {
            // A larger share (a job left): the failures were against the jobs there before.
            self.backoff = 0;
            self.wait_until = 0;
        }
        self.lift = lift;
        let given = free.is_none_or(|f| f >= HELD_FRACTION * lift as f64);
        let judged = self.grew_at.is_none_or(|g| n - g >= HOLD);
        self.team = if !judged {
            // On probation: the others have not had an interval to give way yet.
            lift
        } else if given {
            // The others leave the share free: it holds.
            self.grew_at = None;
            self.backoff = 0;
            base.min(cap).max(lift)
        } else if (lift..=cap).contains(&self.team) {
            // At its share, and the others keep more than theirs: a growth failed, or a job
            // arrived that does not give way.
            self.grew_at = None;
            self.backoff = (self.backoff + 1).min(super::MAX_BACKOFF);
            self.wait_until = n + (1u64 << self.backoff);
            base.min(cap)
        } else if self.team < lift && n >= self.wait_until {
            self.grew_at = Some(n);
            lift
        } else {
            // Over the share on a crowded machine, or waiting to try again.
            base.min(cap)
        };
        self.team
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_comes_early_after_looks_in_a_row_find_a_cpu_idle() {
        let ms = Duration::from_millis;
        let mut l = Looks::default();
        assert!(!l.look(1, 2, 1, 2, ms(50)), "one look is not enough");
        assert!(!l.look(2, 2, 1, 2, ms(60)), "every CPU has a thread again");
        assert!(!l.look(1, 2, 1, 2, ms(70)));
        assert!(l.look(0, 2, 1, 2, ms(80)), "two in a row");
        l.read(true, true);
        assert!(
            !l.look(1, 2, 1, 2, ms(10)),
            "the count starts again at a reading"
        );
        assert!(!l.look(1, 2, 1, 2, ms(15)), "too soon after the reading");
        assert!(l.look(1, 2, 1, 2, ms(20)));
        l.read(true, true);
        assert!(!l.look(64, 64, 8, 64, ms(20)) && !l.look(63, 64, 8, 64, ms(30)));
        assert!(
            l.look(40, 64, 8, 64, ms(40)),
            "63 and 40 threads runnable on 64 CPUs"
        );
        l.read(true, true);
        assert!(
            !l.look(1, 2, 2, 2, ms(30)) && !l.look(1, 2, 2, 2, ms(40)),
            "a team of the whole pool has no CPU to take"
        );
    }

    #[test]
    fn a_reading_comes_early_after_looks_in_a_row_find_a_thread_waiting() {
        let ms = Duration::from_millis;
        let mut l = Looks::default();
        // A pool of 2 started beside another job's thread: 3 runnable on 2 CPUs.
        assert!(!l.look(3, 2, 2, 2, ms(10)), "one look is not enough");
        assert!(l.look(3, 2, 2, 2, ms(20)), "two in a row");
        l.read(true, true);
        // A team of one cannot shrink: a crowded machine calls for no reading.
        assert!(!l.look(3, 2, 1, 2, ms(30)) && !l.look(3, 2, 1, 2, ms(40)));
        assert!(!l.look(3, 2, 2, 4, ms(50)), "one look");
        assert!(
            l.look(1, 2, 1, 4, ms(60)),
            "crowded, then idle: two in a row"
        );
    }

    #[test]
    fn an_early_reading_that_left_the_team_waits_for_the_next_regular_one() {
        let ms = Duration::from_millis;
        let mut l = Looks::default();
        assert!(!l.look(1, 2, 1, 2, ms(30)) && l.look(1, 2, 1, 2, ms(40)));
        l.read(true, false);
        for t in 3..10 {
            assert!(
                !l.look(1, 2, 1, 2, ms(10 * t)),
                "spent until a regular reading"
            );
            assert!(!l.look(3, 2, 2, 2, ms(10 * t)), "either way");
        }
        l.read(false, false);
        assert!(!l.look(3, 2, 2, 2, ms(30)) && l.look(3, 2, 2, 2, ms(40)));
    }

    #[test]
    fn crowded_looks_before_a_reading_may_come_cap_the_team_once() {
        let ms = Duration::from_millis;
        let mut l = Looks::default();
        // Just after a reading: two crowded looks call for no reading yet.
        assert!(!l.look(4, 2, 2, 2, ms(5)));
        assert_eq!(l.cap_now(ms(5)), None, "one look is not enough");
        assert!(!l.look(4, 2, 2, 2, ms(10)));
        assert_eq!(l.cap_now(ms(10)), Some(4));
        assert_eq!(crowded_cap(4, 2, 2), 1);
        assert!(!l.look(4, 2, 2, 2, ms(15)));
        assert_eq!(l.cap_now(ms(15)), None, "once between readings");
        l.read(true, true);
        assert!(!l.look(1, 2, 1, 2, ms(5)) && !l.look(1, 2, 1, 2, ms(10)));
        assert_eq!(l.cap_now(ms(10)), None, "idle looks cap nothing");
        assert!(!l.look(3, 2, 2, 2, ms(15)) && !l.look(3, 2, 2, 2, ms(19)));
        assert_eq!(l.cap_now(ms(19)), Some(3), "a new reading allows another");
        // Where a reading may come, the looks leave it to the reading (an early reading
        // that left the team as it was waits for the next regular one).
        l.read(true, false);
        assert!(!l.look(3, 2, 2, 2, ms(30)) && !l.look(3, 2, 2, 2, ms(35)));
        assert_eq!(l.cap_now(ms(35)), None);
        // Whether a job's share is claimed comes from its last reading.
        let mut t = TaskTeam::new(2, 0.0);
        assert!(!t.shared(), "no reading yet");
        t.next(Some(1.0), Some(1.0), None);
        assert!(t.shared());
        t.next(Some(2.0), None, None);
        assert!(!t.shared());
    }

    #[test]
    fn a_crowded_early_reading_leaves_the_others_runnable_threads_their_cpus() {
        // A pool of 2 beside another job's one thread: 3 runnable on 2 CPUs.
        assert_eq!(crowded_cap(3, 2, 2), 1);
        // Beside a hog on 4 CPUs; two hogs; more runnable threads than CPUs elsewhere.
        assert_eq!(crowded_cap(5, 4, 4), 3);
        assert_eq!(crowded_cap(6, 4, 4), 2);
        assert_eq!(crowded_cap(40, 16, 8), 1);
        // Fewer of the team's threads runnable than it has: the others counted no higher.
        assert_eq!(crowded_cap(3, 4, 8), 4);
        let mut t = TaskTeam::new(2, 0.0);
        t.cap(crowded_cap(3, 2, 2));
        assert_eq!(t.team(), 1);
        t.cap(0);
        assert_eq!(t.team(), 1, "never below one");
        let mut l = Looks::default();
        let ms = Duration::from_millis;
        assert!(!l.look(3, 2, 2, 2, ms(10)) && l.look(3, 2, 2, 2, ms(20)));
        assert_eq!(l.crowded(), Some(3));
        l.read(true, true);
        assert!(!l.look(1, 2, 1, 2, ms(10)) && l.look(1, 2, 1, 2, ms(20)));
        assert_eq!(l.crowded(), None, "idle looks");
    }

    #[test]
    fn tasks_take_the_free_cpus_rounded_within_the_pool() {
        assert_eq!(task_team(Some(2.0), 4), 2);
        assert_eq!(task_team(Some(1.4), 4), 1);
        assert_eq!(task_team(Some(1.6), 4), 2);
        assert_eq!(task_team(Some(0.3), 4), 1);
        assert_eq!(task_team(Some(0.0), 4), 1);
        assert_eq!(task_team(Some(64.0), 8), 8);
        assert_eq!(task_team(None, 8), 8);
        assert_eq!(task_team(Some(f64::NAN), 8), 8);
        assert_eq!(task_team(Some(3.0), 0), 1);
    }

    #[test]
    fn without_other_parallel_jobs_the_team_follows_the_free_cpus() {
        let mut t = TaskTeam::new(64, 0.5);
        assert_eq!(t.team(), 64);
        assert_eq!(t.next(Some(63.2), None, None), 63);
        assert_eq!(t.next(Some(40.0), None, None), 40);
        assert_eq!(t.next(None, None, None), 64);
    }

    #[test]
    fn a_late_job_grows_to_its_share_and_keeps_it_when_the_others_give_way() {
        // It finds the machine taken: one CPU free, another job claims a share of 32. Over
        // its share on a crowded machine, it first takes what is free.
        let mut t = TaskTeam::new(64, 0.0);
        assert_eq!(t.next(Some(1.0), Some(32.0), None), 1);
        assert_eq!(t.next(Some(1.0), Some(32.0), None), 32);
        // The other job still runs 63 threads: on probation for HOLD readings.
        assert_eq!(t.next(Some(22.0), Some(32.0), None), 32);
        // It gave way.
        assert_eq!(t.next(Some(31.5), Some(32.0), None), 32);
        assert_eq!(t.next(Some(30.0), Some(32.0), None), 32);
        assert_eq!(
            t.next(Some(25.0), Some(32.0), None),
            32,
            "within the fraction"
        );
    }

    #[test]
    fn a_job_over_its_share_comes_down_to_it() {
        // The first job, seeing a second claim 32 of 64.
        let mut t = TaskTeam::new(64, 0.0);
        assert_eq!(t.next(Some(63.0), None, None), 63);
        assert_eq!(t.next(Some(40.0), Some(32.0), None), 32);
        assert_eq!(t.next(Some(32.0), Some(32.0), None), 32);
    }

    #[test]
    fn beside_a_job_that_does_not_give_way_growths_back_off() {
        let mut t = TaskTeam::new(64, 0.0);
        let mut teams = Vec::new();
        // A fixed pool keeps 43 CPUs busy while this job holds 32 threads, 63 when it holds
        // fewer: the free CPUs stay under the fraction of the share.
        for _ in 0..40 {
            let free = if t.team() >= 32 { 21.0 } else { 1.0 };
            teams.push(t.next(Some(free), Some(32.0), None));
        }
        let at_share = teams.iter().filter(|&&n| n == 32).count();
        // Each try holds HOLD readings; the waits between them double up to 2^MAX_BACKOFF.
        assert!(at_share <= 40 / 3, "{teams:?}");
        assert!(
            teams.windows(7).any(|w| w.iter().all(|&n| n == 1)),
            "{teams:?}"
        );
        // It keeps trying: the job may leave.
        assert!(teams[30..].contains(&32), "{teams:?}");
    }

    #[test]
    fn a_growth_that_holds_resets_the_back_off() {
        let mut t = TaskTeam::new(16, 0.0);
        // Two failed growths.
        for _ in 0..8 {
            let free = if t.team() >= 8 { 3.0 } else { 1.0 };
            t.next(Some(free), Some(8.0), None);
        }
        assert!(t.backoff >= 2, "{t:?}");
        // The other job now gives way.
        for _ in 0..8 {
            t.next(Some(8.0), Some(8.0), None);
        }
        assert_eq!(t.team(), 8);
        assert_eq!(t.backoff, 0, "{t:?}");
    }

    #[test]
    fn a_larger_share_is_taken_at_once_whatever_the_back_off() {
        let mut t = TaskTeam::new(2, 0.0);
        // Two copies on 2 CPUs, this one at its share of 1 getting less than the fraction of
        // it (its CPU slow): failures that back off.
        for _ in 0..3 {
            assert_eq!(t.next(Some(0.6), Some(1.0), None), 1);
        }
        assert!(t.backoff >= 2, "{t:?}");
        // The other copy ends, its CPU not yet all free over the reading: the share is 2.
        assert_eq!(t.next(Some(1.4), Some(2.0), None), 2, "{t:?}");
        assert_eq!(t.backoff, 0);
        // The same share again keeps the back-off it earns.
        let mut u = TaskTeam::new(16, 0.0);
        for _ in 0..8 {
            let free = if u.team() >= 8 { 3.0 } else { 1.0 };
            u.next(Some(free), Some(8.0), None);
        }
        assert!(u.backoff >= 2, "{u:?}");
        assert_eq!(u.next(Some(1.0), Some(8.0), None), 1, "{u:?}");
    }

    #[test]
    fn shares_round_by_place_where_it_is_known() {
        // 3 jobs on 64 CPUs: the first place takes the extra CPU.
        let teams: Vec<usize> = (0..3)
            .map(|rank| TaskTeam::new(64, 0.0).next(Some(21.0), Some(64.0 / 3.0), Some((rank, 3))))
            .collect();
        assert_eq!(teams, [22, 21, 21]);
    }

    #[test]
    fn shares_round_by_the_jobs_draw() {
        let mut low = TaskTeam::new(64, 0.1);
        let mut high = TaskTeam::new(64, 0.9);
        assert_eq!(low.next(Some(21.0), Some(21.3), None), 21);
        assert_eq!(high.next(Some(21.0), Some(21.3), None), 22);
    }

    #[test]
    fn a_share_under_two_cpus_lifts_by_the_draw_and_caps_rounded_up() {
        // 8 jobs beside 4 hogs on 16 CPUs: 1.5 each. Every job lifted to 2 would crowd the
        // machine; by the draw, about half of them are.
        let mut low = TaskTeam::new(8, 0.2);
        let mut high = TaskTeam::new(8, 0.7);
        for t in [&mut low, &mut high] {
            t.next(Some(0.4), Some(1.5), None);
        }
        assert_eq!((low.team(), high.team()), (1, 1), "crowded: what is free");
        assert_eq!(low.next(Some(0.4), Some(1.5), None), 1);
        assert_eq!(
            high.next(Some(0.4), Some(1.5), None),
            2,
            "lifted by its draw"
        );
        // Free CPUs are taken up to the share rounded up.
        assert_eq!(low.next(Some(2.0), Some(1.5), None), 2);
    }
}
