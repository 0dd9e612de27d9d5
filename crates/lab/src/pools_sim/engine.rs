//! The event loop of one simulation run.
//!
//! Processors belong to pools of equal size; each pool has one FIFO run queue. A processor runs
//! its thread for a time slice `T` (or less, if the thread finishes first); when the slice
//! expires and the pool's queue is empty, the thread goes on without a context switch,
//! otherwise it goes to the tail of the queue and the head runs. Every context switch (a
//! processor starting a thread other than the one it just ran, idle processors included) costs
//! the run-queue contention `r*(p-p0)` plus the cache loading `c`, or `t*c` when the new thread
//! belongs to the job the processor ran last. Overheads keep the processor busy but do not
//! shorten the thread's demand.
//!
//! A job's master thread runs INIT in the home pool (the least-loaded pool when the job
//! arrives), then sleeps (it leaves the load) while the `a` parallel threads run where
//! [`place`] put them, with demands `U(100d/a-10, 100d/a+10)` inflated by the in-pool overhead
//! `W*(p-p0)` and the spanning overhead `S*(k-1)*p`; when the last one finishes, the master is
//! queued in the home pool again for FINAL.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use asat_pools::placement::{home_pool, place};

use super::rng::Rng;
use super::workload::BoundedGeometric;
use super::{Config, RunResult};

const NONE: u32 = u32::MAX;
const ARRIVAL: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Init,
    Para,
    Final,
}

struct Job {
    arrival: f64,
    d: u32,
    home: u32,
    outstanding: u32,
    phase: Phase,
}

struct Thread {
    job: u32,
    remaining: f64,
}

struct Proc {
    pool: u32,
    running: u32,
    last_job: u32,
    quantum: f64,
    overhead: f64,
}

struct Sim<'a> {
    cfg: &'a Config,
    now: f64,
    seq: u64,
    events: BinaryHeap<Reverse<(u64, u64, u32)>>,
    loads: Vec<u32>,
    sizes: Vec<u32>,
    queues: Vec<VecDeque<u32>>,
    idle: Vec<Vec<u32>>,
    procs: Vec<Proc>,
    threads: Vec<Thread>,
    free_threads: Vec<u32>,
    jobs: Vec<Job>,
    service: Rng,
    switch_cost: f64,
    in_pool: f64,
    // measurement
    window_start: f64,
    busy: f64,
    rt_sum: f64,
    a_sum: f64,
    k_sum: f64,
    done: usize,
}

impl Sim<'_> {
    fn schedule(&mut self, at: f64, proc: u32) {
        self.seq += 1;
        // Non-negative f64s order like their bit patterns.
        self.events.push(Reverse((at.to_bits(), self.seq, proc)));
    }

    fn new_thread(&mut self, job: u32, remaining: f64) -> u32 {
        let t = Thread { job, remaining };
        if let Some(i) = self.free_threads.pop() {
            self.threads[i as usize] = t;
            i
        } else {
            self.threads.push(t);
            (self.threads.len() - 1) as u32
        }
    }

    fn dispatch(&mut self, proc: u32, th: u32) {
        let job = self.threads[th as usize].job;
        let remaining = self.threads[th as usize].remaining;
        let cfg = self.cfg;
        let p = &mut self.procs[proc as usize];
        let cache = if p.last_job == job {
            cfg.cache * cfg.same_job_fraction
        } else {
            cfg.cache
        };
        p.overhead = self.switch_cost + cache;
        p.last_job = job;
        p.running = th;
        p.quantum = remaining.min(cfg.time_slice);
        let at = self.now + p.overhead + p.quantum;
        self.schedule(at, proc);
    }

    fn enqueue(&mut self, pool: u32, th: u32) {
        self.loads[pool as usize] += 1;
        if let Some(proc) = self.idle[pool as usize].pop() {
            self.dispatch(proc, th);
        } else {
            self.queues[pool as usize].push_back(th);
        }
    }

    fn arrival(&mut self, workload: &mut Rng, dist: &BoundedGeometric) {
        let d = dist.sample(workload) as u32;
        let home = home_pool(&self.loads, &self.sizes) as u32;
        let id = self.jobs.len() as u32;
        self.jobs.push(Job {
            arrival: self.now,
            d,
            home,
            outstanding: 0,
            phase: Phase::Init,
        });
        if id as usize == self.cfg.warmup_jobs {
            self.window_start = self.now;
        }
        let th = self.new_thread(id, self.cfg.serial_demand);
        self.enqueue(home, th);
        let next = self.now + workload.exponential(1.0 / self.cfg.arrival_rate());
        self.schedule(next, ARRIVAL);
    }

    fn measured(&self, job: u32) -> bool {
        let j = job as usize;
        j >= self.cfg.warmup_jobs && j < self.cfg.warmup_jobs + self.cfg.jobs
    }

    fn thread_done(&mut self, job: u32) {
        let cfg = self.cfg;
        let j = &mut self.jobs[job as usize];
        match j.phase {
            Phase::Init => {
                j.phase = Phase::Para;
                let (d, home) = (j.d as usize, j.home as usize);
                let asg = place(d, home, &self.loads, &self.sizes, cfg.params);
                let a = asg.threads;
                let k = asg.pools_spanned();
                let inflation =
                    1.0 + self.in_pool + cfg.spanning * (k as f64 - 1.0) * cfg.pool_size as f64;
                self.jobs[job as usize].outstanding = a as u32;
                if self.measured(job) {
                    self.a_sum += a as f64;
                    self.k_sum += k as f64;
                }
                let mean = cfg.thread_demand * d as f64 / a as f64;
                for (pool, n) in asg.per_pool {
                    for _ in 0..n {
                        let demand = self
                            .service
                            .range(mean - cfg.thread_spread, mean + cfg.thread_spread)
                            .max(0.0)
                            * inflation;
                        let th = self.new_thread(job, demand);
                        self.enqueue(pool as u32, th);
                    }
                }
            }
            Phase::Para => {
                j.outstanding -= 1;
                if j.outstanding == 0 {
                    j.phase = Phase::Final;
                    let home = j.home;
                    let th = self.new_thread(job, cfg.serial_demand);
                    self.enqueue(home, th);
                }
            }
            Phase::Final => {
                let rt = self.now - j.arrival;
                if self.measured(job) {
                    self.rt_sum += rt;
                    self.done += 1;
                }
            }
        }
    }

    fn proc_event(&mut self, proc: u32) {
        let (th, quantum, overhead, pool) = {
            let p = &self.procs[proc as usize];
            (p.running, p.quantum, p.overhead, p.pool)
        };
        if self.now >= self.window_start {
            self.busy += quantum + overhead;
        }
        let t = &mut self.threads[th as usize];
        t.remaining -= quantum;
        if t.remaining <= 1e-9 {
            let job = t.job;
            self.free_threads.push(th);
            self.loads[pool as usize] -= 1;
            self.procs[proc as usize].running = NONE;
            if let Some(next) = self.queues[pool as usize].pop_front() {
                self.dispatch(proc, next);
            } else {
                self.idle[pool as usize].push(proc);
            }
            self.thread_done(job);
        } else if self.queues[pool as usize].is_empty() {
            // No one waits: go on without a context switch.
            let p = &mut self.procs[proc as usize];
            p.overhead = 0.0;
            p.quantum = t.remaining.min(self.cfg.time_slice);
            let at = self.now + p.quantum;
            self.schedule(at, proc);
        } else {
            let q = &mut self.queues[pool as usize];
            q.push_back(th);
            let next = q.pop_front().unwrap_or(th);
            self.dispatch(proc, next);
        }
    }
}

/// One run of the model (the configuration was validated by the caller).
pub(crate) fn run(cfg: &Config) -> RunResult {
    let pools = cfg.processors / cfg.pool_size;
    let dist = BoundedGeometric::new(cfg.parallelism, cfg.processors)
        .expect("validated: parallelism within 1..(P+1)/2");
    let mut workload = Rng::new(cfg.seed, 0);
    let over_p0 = cfg.pool_size.saturating_sub(cfg.p0) as f64;
    let mut sim = Sim {
        cfg,
        now: 0.0,
        seq: 0,
        events: BinaryHeap::with_capacity(cfg.processors * 2 + 4),
        loads: vec![0; pools],
        sizes: vec![cfg.pool_size as u32; pools],
        queues: vec![VecDeque::new(); pools],
        idle: (0..pools)
            .map(|k| {
                ((k * cfg.pool_size) as u32..((k + 1) * cfg.pool_size) as u32)
                    .rev()
                    .collect()
            })
            .collect(),
        procs: (0..cfg.processors)
            .map(|i| Proc {
                pool: (i / cfg.pool_size) as u32,
                running: NONE,
                last_job: NONE,
                quantum: 0.0,
                overhead: 0.0,
            })
            .collect(),
        threads: Vec::new(),
        free_threads: Vec::new(),
        jobs: Vec::with_capacity((cfg.warmup_jobs + cfg.jobs).min(1 << 20) + 1024),
        service: Rng::new(cfg.seed, 1),
        switch_cost: cfg.run_queue * over_p0,
        in_pool: cfg.in_pool * over_p0,
        window_start: f64::INFINITY,
        busy: 0.0,
        rt_sum: 0.0,
        a_sum: 0.0,
        k_sum: 0.0,
        done: 0,
    };
    let first = workload.exponential(1.0 / cfg.arrival_rate());
    sim.schedule(first, ARRIVAL);
    while sim.done < cfg.jobs {
        let Some(Reverse((bits, _, what))) = sim.events.pop() else {
            break;
        };
        sim.now = f64::from_bits(bits);
        if what == ARRIVAL {
            sim.arrival(&mut workload, &dist);
        } else {
            sim.proc_event(what);
        }
    }
    let n = sim.done.max(1) as f64;
    let window = (sim.now - sim.window_start).max(f64::MIN_POSITIVE);
    RunResult {
        mean_rt: sim.rt_sum / n,
        actual_parallelism: sim.a_sum / n,
        pools_spanned: sim.k_sum / n,
        utilization: sim.busy / (cfg.processors as f64 * window),
        jobs: sim.done,
    }
}
