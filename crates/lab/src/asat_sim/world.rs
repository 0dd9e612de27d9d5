//! The jobs on the simulated machine: each is a bulk-synchronous loop of regions whose master
//! asks the real [`AsatLogic`] for every region's team (or, with [`Config::fixed`], always
//! runs `max_threads`, or its share with [`Config::partition`]), runs the timed barriers it
//! asks for (with the runtime's give-up rule), and whose members wait for work and at
//! barriers by spinning, then blocking, as the runtime's default wait does.

use std::time::{Duration, Instant};

use asat_core::adaptive::{claims, fair, pressure, AsatLogic, Machine};
use asat_core::{Plan, ProbeResult};

use super::engine::{Doing, Engine, Note, Ns, Params, Tid};
use super::{Config, JobSpec, Scenario, TracePoint};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Hog,
    Member { job: usize, m: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MState {
    /// The master, before its first region.
    Starting,
    /// Waiting for work.
    Idle,
    Working,
    AtBarrier,
    /// Released from a barrier, not yet run since.
    Leaving,
}

#[derive(Debug, Default)]
struct Episode {
    epoch: u64,
    size: usize,
    probe: bool,
    limit: Option<Ns>,
    posted: Ns,
    work: Ns,
    started: Vec<bool>,
    revoked: Vec<bool>,
    prompt: usize,
    given_up: u32,
    arrived: usize,
    last_arrive: Ns,
    released: bool,
}

/// One process as `/proc` shows it: CPU time, threads, start.
type Proc = (u64, usize, Ns);

/// A job's previous reading of `/proc`: when, every process's CPU time, the share's claimants.
type ProcsMark = (Ns, Vec<u64>, Vec<u64>);

/// The counters at a job's previous reading.
#[derive(Clone, Copy, Debug)]
struct Mark {
    at: Ns,
    busy: u128,
    run: u64,
    wait: u64,
}

#[derive(Debug)]
struct Job {
    spec: JobSpec,
    logic: AsatLogic,
    members: Vec<Tid>,
    state: Vec<MState>,
    ep: Episode,
    result: Option<ProbeResult>,
    psi_mark: Option<(u128, u128)>,
    mark: Option<Mark>,
    /// Every process's CPU time at the job's previous reading of `/proc`, when, and the
    /// claimants of its share.
    procs_mark: Option<ProcsMark>,
    evaluations: usize,
    /// Work regions completed (timed barriers not counted), and their CPU time.
    regions: u64,
    done: Ns,
    gone: bool,
    /// When it left.
    left: Option<Ns>,
}

/// One simulation run.
#[derive(Debug)]
pub(super) struct World<'a> {
    cfg: &'a Config,
    eng: Engine,
    owners: Vec<Owner>,
    jobs: Vec<Job>,
    base: Instant,
    /// Each job's fixed team under [`Config::partition`].
    shares: Option<Vec<usize>>,
    pub(super) trace: Vec<TracePoint>,
}

fn ns(d: Duration) -> Ns {
    d.as_nanos().min(u128::from(u64::MAX)) as Ns
}

impl<'a> World<'a> {
    pub(super) fn new(cfg: &'a Config, scenario: &Scenario) -> Self {
        let params = Params {
            processors: cfg.processors,
            slice: ns(cfg.slice),
            wakeup_granularity: ns(cfg.wakeup_granularity),
        };
        let mut w = World {
            cfg,
            eng: Engine::new(params, cfg.seed),
            owners: Vec::new(),
            jobs: Vec::new(),
            base: Instant::now(),
            shares: (cfg.fixed && cfg.partition)
                .then(|| super::share_teams(cfg.processors, scenario)),
            trace: Vec::new(),
        };
        for _ in 0..scenario.hogs {
            w.eng.spawn(Doing::Forever);
            w.owners.push(Owner::Hog);
        }
        for (j, spec) in scenario.jobs.iter().enumerate() {
            w.jobs.push(Job {
                spec: *spec,
                // each job its own rounding draws, fixed by the run's seed
                logic: AsatLogic::new(cfg.asat, spec.max_threads)
                    .with_seed(cfg.seed.wrapping_mul(1_000_003).wrapping_add(j as u64)),
                members: Vec::new(),
                state: Vec::new(),
                ep: Episode::default(),
                result: None,
                psi_mark: None,
                mark: None,
                procs_mark: None,
                evaluations: 0,
                regions: 0,
                done: 0,
                gone: false,
                left: None,
            });
            // The only timers are arrivals; the token is the job.
            w.eng.timer(ns(spec.arrive), j as u64);
        }
        w
    }

    /// Runs until `end`.
    pub(super) fn run(&mut self, end: Duration) {
        let end = ns(end);
        while self.jobs.iter().any(|j| !j.gone) {
            let Some(note) = self.eng.next(end) else {
                break;
            };
            match note {
                Note::Timer(t) => self.on_timer(t),
                Note::OnCpu(tid) => self.on_cpu(tid),
                Note::Done(tid) => self.on_done(tid),
            }
        }
    }

    /// When the last job left, if every job did.
    pub(super) fn makespan(&self) -> Option<Duration> {
        self.jobs
            .iter()
            .map(|j| j.left.map(Duration::from_nanos))
            .try_fold(Duration::ZERO, |a, l| l.map(|l| a.max(l)))
    }

    /// The hogs' CPU time so far over what they would have had alone on a CPU each; `None`
    /// without hogs.
    pub(super) fn hog_share(&self) -> Option<f64> {
        let hogs: Vec<Tid> = (0..self.owners.len())
            .filter(|&t| matches!(self.owners[t], Owner::Hog))
            .collect();
        let elapsed = self.eng.now();
        if hogs.is_empty() || elapsed == 0 {
            return None;
        }
        let ran: u64 = hogs.iter().map(|&t| self.eng.times(t).0).sum();
        Some(ran as f64 / (hogs.len() as f64 * elapsed as f64))
    }

    fn member(&self, tid: Tid) -> Option<(usize, usize)> {
        match self.owners[tid] {
            Owner::Member { job, m } if !self.jobs[job].gone => Some((job, m)),
            _ => None,
        }
    }

    fn spin(&self) -> Doing {
        Doing::Spin(ns(self.cfg.spin))
    }

    fn latency(&mut self) -> Ns {
        // 0.5x to 1.5x the configured wake-up latency
        let l = ns(self.cfg.wake_latency) as f64;
        (l * (0.5 + self.eng.uniform())) as Ns
    }

    /// A job arrives: its master thread starts.
    fn on_timer(&mut self, job: u64) {
        let job = job as usize;
        let tid = self.eng.spawn(self.spin());
        self.owners.push(Owner::Member { job, m: 0 });
        let j = &mut self.jobs[job];
        j.members.push(tid);
        j.state.push(MState::Starting);
    }

    fn on_cpu(&mut self, tid: Tid) {
        let Some((job, m)) = self.member(tid) else {
            return;
        };
        match self.jobs[job].state[m] {
            MState::Starting => self.region_start(job),
            MState::Idle => {
                if self.post_waiting(job, m) {
                    self.start_member(job, m);
                }
            }
            MState::Leaving => self.proceed(job, m),
            MState::Working | MState::AtBarrier => {}
        }
    }

    fn on_done(&mut self, tid: Tid) {
        let Some((job, m)) = self.member(tid) else {
            return;
        };
        match self.jobs[job].state[m] {
            MState::Working if m == 0 && self.gathering(job) => {
                self.give_up(job);
                self.arrive(job, 0);
            }
            MState::Working => self.arrive(job, m),
            // A spin used up: block until woken.
            _ => self.eng.block(tid),
        }
    }

    fn post_waiting(&self, job: usize, m: usize) -> bool {
        let ep = &self.jobs[job].ep;
        m < ep.size && !ep.started[m] && !ep.revoked[m]
    }

    /// The master is on a CPU at a region start: ask the logic, post the episode.
    fn region_start(&mut self, job: usize) {
        let now = self.eng.now();
        let spec = self.jobs[job].spec;
        if now >= ns(spec.depart) || spec.work.is_some_and(|w| self.jobs[job].done >= ns(w)) {
            return self.depart(job);
        }
        let bound = spec.max_threads.min(self.cfg.processors);
        if self.cfg.fixed {
            let team = self.shares.as_ref().map_or(bound, |s| s[job].min(bound));
            return self.post(job, team.max(1), false, None);
        }
        let at = self.base + Duration::from_nanos(now);
        let procs = self.cfg.procs.then(|| self.process_times());
        let (eng, cfg) = (&self.eng, self.cfg);
        let j = &mut self.jobs[job];
        let result = j.result.take();
        let Job {
            logic,
            members,
            mark,
            psi_mark,
            procs_mark,
            ..
        } = j;
        // Read only when the logic asks (its first region start and its evaluations), as the
        // policy does: each reading covers the time since the job's previous one.
        let step = logic.step(at, result, || {
            let (wait, idle, free) = cpu_readings(eng, cfg, members, mark);
            let share = procs.and_then(|p| equal_share(cfg, now, job, p, procs_mark));
            Machine {
                bound,
                pressure: pressure(eng, cfg, psi_mark),
                wait,
                idle,
                free,
                equal: share.map(|s| s.0),
                rank: share.map(|s| s.1),
            }
        });
        if let Some(e) = step.evaluation {
            j.evaluations += 1;
            self.trace.push(TracePoint {
                job,
                evaluation: j.evaluations,
                t: Duration::from_nanos(now),
                before: e.threads_before,
                team: e.threads_after,
                regions: j.regions,
            });
        }
        match step.plan {
            Plan::Run { threads } => self.post(job, threads.clamp(1, bound.max(1)), false, None),
            Plan::Probe {
                threads,
                give_up_after,
                ..
            } => self.post(
                job,
                threads.clamp(1, bound.max(1)),
                true,
                give_up_after.map(ns),
            ),
            other => panic!("asat_sim: the model has no counterpart of the plan {other:?}"),
        }
    }

    /// What `/proc` says now: the number of hogs, then every process's CPU time, threads and
    /// start, the hogs' first (one thread each, from the start), then the jobs' (their threads
    /// so far; a job that left keeps its CPU time and has none).
    fn process_times(&self) -> (usize, Vec<Proc>) {
        let hogs = self
            .owners
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o, Owner::Hog))
            .map(|(t, _)| (self.eng.times(t).0, 1, 0));
        let jobs = self.jobs.iter().map(|j| {
            let run = j.members.iter().map(|&t| self.eng.times(t).0).sum();
            let threads = if j.gone { 0 } else { j.members.len() };
            (run, threads, ns(j.spec.arrive))
        });
        let all: Vec<_> = hogs.chain(jobs).collect();
        (all.len() - self.jobs.len(), all)
    }

    fn post(&mut self, job: usize, size: usize, probe: bool, limit: Option<Ns>) {
        let now = self.eng.now();
        while self.jobs[job].members.len() < size {
            let m = self.jobs[job].members.len();
            let tid = self.eng.spawn(self.spin());
            self.owners.push(Owner::Member { job, m });
            self.jobs[job].members.push(tid);
            self.jobs[job].state.push(MState::Idle);
        }
        let max = self.jobs[job].spec.max_threads as u64;
        let work = if probe {
            0
        } else {
            self.grain(job) * max / size as u64
        };
        let j = &mut self.jobs[job];
        let epoch = j.ep.epoch + 1;
        j.ep = Episode {
            epoch,
            size,
            probe,
            limit: if probe { limit } else { None },
            posted: now,
            work,
            started: vec![false; size],
            revoked: vec![false; size],
            ..Episode::default()
        };
        for m in 1..size {
            let tid = self.jobs[job].members[m];
            match self.jobs[job].state[m] {
                MState::Idle if self.eng.is_running(tid) => self.start_member(job, m),
                MState::Idle if self.eng.is_blocked(tid) => {
                    let l = self.latency();
                    self.eng.wake(tid, l);
                }
                // queued, waking or still leaving the last barrier: starts when it runs
                _ => {}
            }
        }
        self.start_member(job, 0);
    }

    /// Whether the master of a probe is still waiting for its workers to start.
    fn gathering(&self, job: usize) -> bool {
        let j = &self.jobs[job];
        j.ep.probe && j.ep.limit.is_some() && j.state[0] == MState::Working
    }

    fn start_member(&mut self, job: usize, m: usize) {
        let now = self.eng.now();
        let jitter = 0.95 + 0.1 * self.eng.uniform();
        let j = &mut self.jobs[job];
        let ep = &mut j.ep;
        ep.started[m] = true;
        if ep.limit.is_none_or(|l| now - ep.posted <= l) {
            ep.prompt += 1;
        }
        j.state[m] = MState::Working;
        let tid = j.members[m];
        if let (0, true, Some(limit)) = (m, ep.probe, ep.limit) {
            // The master of a probe spins (holding its CPU) until every worker has started
            // or the limit has passed, then gives up on the others (the runtime's rule);
            // workers that were spinning for work started when it was posted, and then the
            // master has nothing to wait for.
            if ep.started.iter().all(|&s| s) {
                return self.arrive(job, 0);
            }
            self.eng.set(tid, Doing::Work(limit.max(1)));
            return;
        }
        let work = (ep.work as f64 * jitter) as Ns;
        if work == 0 {
            self.arrive(job, m);
            let ep = &self.jobs[job].ep;
            if self.gathering(job) && ep.started.iter().all(|&s| s) {
                self.arrive(job, 0);
            }
        } else {
            self.eng.set(tid, Doing::Work(work));
        }
    }

    fn arrive(&mut self, job: usize, m: usize) {
        let now = self.eng.now();
        let j = &mut self.jobs[job];
        j.state[m] = MState::AtBarrier;
        j.ep.arrived += 1;
        j.ep.last_arrive = now;
        let tid = j.members[m];
        self.eng.set(tid, self.spin());
        if self.jobs[job].ep.arrived == self.jobs[job].ep.size {
            self.release(job);
        }
    }

    /// The master of a probe stops waiting: the workers not started yet are revoked.
    fn give_up(&mut self, job: usize) {
        let now = self.eng.now();
        let ep = &mut self.jobs[job].ep;
        for m in 1..ep.size {
            if !ep.started[m] {
                ep.revoked[m] = true;
                ep.arrived += 1;
                ep.given_up += 1;
                ep.last_arrive = now;
            }
        }
    }

    fn release(&mut self, job: usize) {
        self.jobs[job].ep.released = true;
        if !self.jobs[job].ep.probe {
            let work = self.grain(job) * self.jobs[job].spec.max_threads as u64;
            let j = &mut self.jobs[job];
            j.regions += 1;
            j.done += work;
        }
        let size = self.jobs[job].ep.size;
        // Workers first: the master's proceeding starts the next region.
        for m in (0..size).rev() {
            let j = &mut self.jobs[job];
            if j.state[m] != MState::AtBarrier {
                continue;
            }
            j.state[m] = MState::Leaving;
            let tid = j.members[m];
            if self.eng.is_running(tid) {
                self.proceed(job, m);
            } else if self.eng.is_blocked(tid) {
                let l = self.latency();
                self.eng.wake(tid, l);
            }
        }
    }

    /// A member leaves the barrier: the master starts the next region, a worker waits.
    fn proceed(&mut self, job: usize, m: usize) {
        if m == 0 {
            let j = &mut self.jobs[job];
            if j.ep.probe {
                let passage = Duration::from_nanos(j.ep.last_arrive - j.ep.posted);
                let mut r = ProbeResult::new(j.ep.size, passage, 0).with_prompt(j.ep.prompt);
                r.given_up = j.ep.given_up;
                j.result = Some(r);
            }
            return self.region_start(job);
        }
        self.jobs[job].state[m] = MState::Idle;
        let tid = self.jobs[job].members[m];
        self.eng.set(tid, self.spin());
        if self.post_waiting(job, m) {
            self.start_member(job, m);
        }
    }

    /// CPU time of a region of `job` per member at `max_threads`.
    fn grain(&self, job: usize) -> Ns {
        ns(self.jobs[job].spec.grain.unwrap_or(self.cfg.region_work))
    }

    fn depart(&mut self, job: usize) {
        self.jobs[job].gone = true;
        self.jobs[job].left = Some(self.eng.now());
        for &tid in &self.jobs[job].members {
            self.eng.exit(tid);
        }
    }
}

/// A job's equal share from `/proc` ([`claims::share_after`]): each other process's CPUs
/// over the time since the job's previous reading, or over its life where it started since
/// ([`claims::busy_cpus`]; `procs`: every process's CPU time, threads and start now, hogs
/// first, then the jobs in order; `me` is the reading job's index among the jobs). `mark`
/// keeps the reading's time, CPU times and claimants for the next one.
fn equal_share(
    cfg: &Config,
    now: Ns,
    me: usize,
    procs: (usize, Vec<Proc>),
    mark: &mut Option<ProcsMark>,
) -> Option<(f64, (usize, usize))> {
    let (hogs, procs) = procs;
    let times = procs.iter().map(|p| p.0).collect();
    let (at, before, claimants) = mark.replace((now, times, Vec::new()))?;
    let wall = now.saturating_sub(at) as f64;
    if wall <= 0.0 {
        return None;
    }
    // Each process's id is its place in the list.
    let others: Vec<(u64, fair::Process)> = procs
        .iter()
        .zip(&before)
        .enumerate()
        // A job that left is gone from `/proc` with its CPU time (threads 0 here).
        .filter(|&(i, (&(_, threads, _), _))| i != hogs + me && threads > 0)
        .map(|(i, (&(run, threads, start), &was))| {
            let age = now.saturating_sub(start) as f64;
            let cpus = claims::busy_cpus(run.saturating_sub(was) as f64, wall, age);
            (i as u64, fair::Process { cpus, threads })
        })
        .collect();
    let share = claims::share_after(cfg.processors, &others, &claimants);
    if let Some(m) = mark.as_mut() {
        m.2 = claims::claimants_of(&others, share);
    }
    let share = share?;
    Some((share, fair::share_place((hogs + me) as u64, &others, share)))
}

/// The stall fraction since the job's previous reading (with the model's PSI on).
fn pressure(eng: &Engine, cfg: &Config, mark: &mut Option<(u128, u128)>) -> Option<f64> {
    if !cfg.pressure {
        return None;
    }
    let (busy, some) = eng.pressure_integrals();
    let prev = mark.replace((busy, some))?;
    let db = busy.saturating_sub(prev.0);
    Some(if db == 0 {
        0.0
    } else {
        (some.saturating_sub(prev.1) as f64 / db as f64).min(1.0)
    })
}

/// What a job reads from the modelled kernel since its previous reading: the share of runnable
/// time its threads waited for a CPU (`schedstat`, with the model's on), the machine's idle
/// share of CPU time (`/proc/stat`), and the CPUs the rest of the machine left free (from both,
/// as the policy computes it).
fn cpu_readings(
    eng: &Engine,
    cfg: &Config,
    members: &[Tid],
    mark: &mut Option<Mark>,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let now = eng.now();
    let (busy, _) = eng.pressure_integrals();
    let (run, wait) = members
        .iter()
        .map(|&t| eng.times(t))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let Some(prev) = mark.replace(Mark {
        at: now,
        busy,
        run,
        wait,
    }) else {
        return (None, None, None);
    };
    let wall = now.saturating_sub(prev.at);
    let all = u128::from(wall) * cfg.processors as u128;
    let idle = if all == 0 {
        0.0
    } else {
        1.0 - busy.saturating_sub(prev.busy) as f64 / all as f64
    };
    let ran = run.saturating_sub(prev.run) as f64;
    let free = cfg
        .schedstat
        .then(|| pressure::free_cpus(cfg.processors, idle, ran, wall as f64))
        .flatten();
    let wait = cfg
        .schedstat
        .then(|| pressure::wait_fraction((prev.run, prev.wait), (run, wait)));
    (wait, Some(idle), free)
}
