//! A simulator of the model of Zhou and Brecht (sections 2 and 3), to reproduce the paper's
//! figures with asat-pools' own placement functions ([`asat_pools::placement`]): the jobs are
//! placed by the functions the policy calls, not by a copy of them.
//!
//! - `P` processors in pools of `p`; jobs arrive as a Poisson stream at load `L` (the
//!   utilization without overheads: rate `P*L / (10 + 100*D + 10)`).
//! - A job's desired parallelism `d` is bounded-geometric with mean `D` on `1..=P`
//!   ([`BoundedGeometric`]); it runs INIT (10 time units), then `a` parallel threads of
//!   `U(100d/a-10, 100d/a+10)` each, then FINAL (10).
//! - Round-robin per pool with time slice `T`: a slice that expires with the pool's run queue
//!   empty goes on without a context switch. The four overheads of section 3.3: the in-pool
//!   `W*(p-p0)` and spanning `S*(k-1)*p` factors inflate the parallel threads' demand; every
//!   context switch (a processor starting another thread, from idle included) costs the
//!   run-queue contention `r*(p-p0)` plus the cache loading `c`, or `t*c` when the new thread
//!   is of the job the processor ran last.
//! - The master thread runs INIT in the home pool (the least-loaded pool when the job arrives),
//!   leaves the load while the parallel threads run where
//!   [`place`](asat_pools::placement::place) put them, and is queued in the home pool again
//!   for FINAL.
//! - A run is deterministic given its seed: arrivals and `d` come from one random stream,
//!   thread demands from another, so runs with the same seed and different pool sizes see the
//!   same jobs. The first [`Config::warmup_jobs`] jobs are discarded; the next [`Config::jobs`]
//!   are measured. [`replicate`] makes independent replications and a 90% confidence interval.
//!
//! ```
//! use asat_lab::pools_sim::{replicate, Config};
//! let mut cfg = Config::paper(60, 30, 20.0, 0.6);
//! cfg.warmup_jobs = 200;
//! cfg.jobs = 1_000;
//! let s = replicate(&cfg, 2)?;
//! assert!(s.mean_rt > 120.0 && s.mean_rt < 600.0);
//! assert!(s.actual_parallelism <= 20.0);
//! # Ok::<(), asat_lab::Error>(())
//! ```

mod engine;
mod rng;
mod workload;

pub use rng::Rng;
pub use workload::BoundedGeometric;

use asat_pools::placement::Params;

use crate::Error;

/// The most processors a simulated machine may have.
pub const MAX_PROCESSORS: usize = 1 << 20;
/// The most warm-up and measured jobs of one run together (jobs are numbered in 32 bits).
pub const MAX_JOBS: usize = u32::MAX as usize;
/// The longest a thread's demand may be (time units).
pub const MAX_DEMAND: f64 = 1e12;
/// The most time slices a thread's longest demand may take.
pub const MAX_SLICES_PER_THREAD: f64 = 1e6;

/// The model's parameters. [`Config::paper`] gives Table 2's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `P`: processors.
    pub processors: usize,
    /// `p`: processors per pool; must divide `P`.
    pub pool_size: usize,
    /// `D`: mean desired parallelism, in `[1, (P+1)/2)`.
    pub parallelism: f64,
    /// `L`: load level, in `(0, 1)`.
    pub load: f64,
    /// `F` and `G`.
    pub params: Params,
    /// `T`: time slice (10).
    pub time_slice: f64,
    /// `p0`: the pool size up to which there is no in-pool or run-queue overhead (10).
    pub p0: usize,
    /// `W`: in-pool overhead per processor above `p0` (0.005).
    pub in_pool: f64,
    /// `S`: spanning overhead factor (0.01).
    pub spanning: f64,
    /// `r`: run-queue contention per processor above `p0`, time units per switch (0.003).
    pub run_queue: f64,
    /// `c`: cache loading per context switch, time units (0.005).
    pub cache: f64,
    /// `t`: fraction of `c` paid when the new thread is of the same job (0.25).
    pub same_job_fraction: f64,
    /// CPU demand of INIT and of FINAL (10).
    pub serial_demand: f64,
    /// Mean demand of a parallel thread when `a = d` (100).
    pub thread_demand: f64,
    /// Half-width of the uniform spread of thread demands (10).
    pub thread_spread: f64,
    /// Jobs discarded at the start of a run.
    pub warmup_jobs: usize,
    /// Jobs measured in a run.
    pub jobs: usize,
    /// Seed of the run (replications derive theirs from it).
    pub seed: u64,
}

impl Config {
    /// Table 2's defaults with the given `P`, `p`, `D` and `L`; 2,000 warm-up jobs and 20,000
    /// measured ones; seed 1.
    pub fn paper(processors: usize, pool_size: usize, parallelism: f64, load: f64) -> Self {
        Self {
            processors,
            pool_size,
            parallelism,
            load,
            params: Params::DEFAULT,
            time_slice: 10.0,
            p0: 10,
            in_pool: 0.005,
            spanning: 0.01,
            run_queue: 0.003,
            cache: 0.005,
            same_job_fraction: 0.25,
            serial_demand: 10.0,
            thread_demand: 100.0,
            thread_spread: 10.0,
            warmup_jobs: 2_000,
            jobs: 20_000,
            seed: 1,
        }
    }

    /// Job arrivals per time unit: `P*L / (2*serial + thread_demand*D)`.
    pub fn arrival_rate(&self) -> f64 {
        self.processors as f64 * self.load
            / (2.0 * self.serial_demand + self.thread_demand * self.parallelism)
    }

    /// The response time without any overhead or waiting, every job running `a = d` threads
    /// (the paper's "absolute minimum", about 127 for `P = 60`, `D = 20`): INIT + FINAL + the
    /// expected longest of `d` thread demands, averaged over the distribution of `d`.
    pub fn minimum_response_time(&self) -> f64 {
        let Some(dist) = BoundedGeometric::new(self.parallelism, self.processors) else {
            return f64::NAN;
        };
        let (lo, w) = (
            self.thread_demand - self.thread_spread,
            2.0 * self.thread_spread,
        );
        let para: f64 = (1..=self.processors)
            .map(|d| dist.pmf(d) * (lo + w * d as f64 / (d as f64 + 1.0)))
            .sum();
        2.0 * self.serial_demand + para
    }

    /// Checks the parameters; the error says which one is wrong and what is allowed.
    pub fn validate(&self) -> Result<(), Error> {
        let p = self.processors;
        if p == 0 || p > MAX_PROCESSORS {
            return Err(Error::config(
                "pools",
                format!("processors {p}: must be between 1 and {MAX_PROCESSORS}"),
            ));
        }
        if self.pool_size == 0 || self.pool_size > p || p % self.pool_size != 0 {
            return Err(Error::config(
                "pools",
                format!(
                    "pool size {}: must divide the {p} processors (1..={p})",
                    self.pool_size
                ),
            ));
        }
        if BoundedGeometric::new(self.parallelism, p).is_none() {
            return Err(Error::config(
                "pools",
                format!(
                    "parallelism {}: the mean of a bounded-geometric distribution on 1..={p} must \
                 be at least 1 and below {}",
                    self.parallelism,
                    (p as f64 + 1.0) / 2.0
                ),
            ));
        }
        if !(self.load > 0.0 && self.load < 1.0) {
            return Err(Error::config(
                "pools",
                format!("load {}: must be above 0 and below 1", self.load),
            ));
        }
        if !(self.params.f >= 0.0 && self.params.f.is_finite()) {
            return Err(Error::config(
                "pools",
                format!("F = {}: must be a finite number >= 0", self.params.f),
            ));
        }
        if !(0.0..=1.0).contains(&self.params.g) {
            return Err(Error::config(
                "pools",
                format!("G = {}: must be between 0 and 1", self.params.g),
            ));
        }
        if !(self.time_slice > 0.0 && self.time_slice.is_finite()) {
            return Err(Error::config(
                "pools",
                format!("time slice {}: must be a positive number", self.time_slice),
            ));
        }
        let nonneg = [
            ("W", self.in_pool),
            ("S", self.spanning),
            ("r", self.run_queue),
            ("c", self.cache),
            ("t", self.same_job_fraction),
            ("serial demand", self.serial_demand),
            ("thread spread", self.thread_spread),
        ];
        for (name, v) in nonneg {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(Error::config(
                    "pools",
                    format!("{name} = {v}: must be a finite number >= 0"),
                ));
            }
        }
        if !(self.thread_demand > 0.0 && self.thread_demand.is_finite()) {
            return Err(Error::config(
                "pools",
                format!(
                    "thread demand {}: must be a positive number",
                    self.thread_demand
                ),
            ));
        }
        if self.thread_demand + self.thread_spread > MAX_DEMAND {
            return Err(Error::config(
                "pools",
                format!(
                    "thread demand {} + spread {}: must be at most {MAX_DEMAND:e}",
                    self.thread_demand, self.thread_spread
                ),
            ));
        }
        // Far smaller slices would be lost in the rounding of a thread's remaining demand
        // (the run would never end), and would take forever anyway.
        let min_slice = (self.thread_demand + self.thread_spread) / MAX_SLICES_PER_THREAD;
        if self.time_slice < min_slice {
            return Err(Error::config(
                "pools",
                format!(
                    "time slice {}: must be at least {min_slice:e} (a thread's longest demand / \
                 {MAX_SLICES_PER_THREAD:e})",
                    self.time_slice
                ),
            ));
        }
        if self.jobs == 0 {
            return Err(Error::config(
                "pools",
                "jobs 0: must measure at least 1 job",
            ));
        }
        if self
            .warmup_jobs
            .checked_add(self.jobs)
            .is_none_or(|n| n > MAX_JOBS)
        {
            return Err(Error::config(
                "pools",
                format!(
                    "{} warm-up jobs + {} jobs: at most {MAX_JOBS} in all",
                    self.warmup_jobs, self.jobs
                ),
            ));
        }
        let rate = self.arrival_rate();
        if !(rate.is_normal() && rate > 0.0 && (1.0 / rate).is_finite()) {
            return Err(Error::config(
                "pools",
                format!(
                    "load {} gives an arrival rate of {rate}: too small to simulate",
                    self.load
                ),
            ));
        }
        Ok(())
    }
}

/// The outcome of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunResult {
    /// Mean response time of the measured jobs (time units).
    pub mean_rt: f64,
    /// Mean actual parallelism `a` of the measured jobs.
    pub actual_parallelism: f64,
    /// Mean number of pools the measured jobs spanned.
    pub pools_spanned: f64,
    /// Measured processor utilization `U` (overheads included) while the measured jobs ran.
    pub utilization: f64,
    /// Jobs measured.
    pub jobs: usize,
}

/// Runs the model once.
pub fn run(cfg: &Config) -> Result<RunResult, Error> {
    cfg.validate()?;
    Ok(engine::run(cfg))
}

/// The seed of replication `rep` of a configuration seeded with `seed`.
pub fn replication_seed(seed: u64, rep: usize) -> u64 {
    Rng::new(seed, 0x5eed_0000 + rep as u64).next_u64()
}

/// Means over independent replications, with a 90% confidence interval of the response time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Mean of the replications' mean response times.
    pub mean_rt: f64,
    /// Lower end of the 90% confidence interval (Student's t over replications).
    pub ci_low: f64,
    /// Upper end of the 90% confidence interval.
    pub ci_high: f64,
    /// Mean actual parallelism `A`.
    pub actual_parallelism: f64,
    /// Mean pools spanned.
    pub pools_spanned: f64,
    /// Mean utilization `U`.
    pub utilization: f64,
    /// Number of replications.
    pub reps: usize,
}

/// Combines runs into a [`Summary`] (the interval is empty with one run).
pub fn summarize(runs: &[RunResult]) -> Summary {
    let n = runs.len().max(1) as f64;
    let mean = |f: fn(&RunResult) -> f64| runs.iter().map(f).sum::<f64>() / n;
    let m = mean(|r| r.mean_rt);
    let half = if runs.len() > 1 {
        let var =
            runs.iter().map(|r| (r.mean_rt - m).powi(2)).sum::<f64>() / (runs.len() - 1) as f64;
        t90(runs.len() - 1) * (var / n).sqrt()
    } else {
        0.0
    };
    Summary {
        mean_rt: m,
        ci_low: m - half,
        ci_high: m + half,
        actual_parallelism: mean(|r| r.actual_parallelism),
        pools_spanned: mean(|r| r.pools_spanned),
        utilization: mean(|r| r.utilization),
        reps: runs.len(),
    }
}

/// `reps` independent replications of `cfg` (seeds from [`replication_seed`]), one after
/// another on the calling thread.
pub fn replicate(cfg: &Config, reps: usize) -> Result<Summary, Error> {
    cfg.validate()?;
    if reps == 0 {
        return Err(Error::config("pools", "reps 0: must be at least 1"));
    }
    let runs: Vec<RunResult> = (0..reps)
        .map(|rep| {
            let mut c = cfg.clone();
            c.seed = replication_seed(cfg.seed, rep);
            engine::run(&c)
        })
        .collect();
    Ok(summarize(&runs))
}

/// The 95% quantile of Student's t with `df` degrees of freedom (two-sided 90%).
pub fn t90(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771,
        1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706,
        1.703, 1.701, 1.699, 1.697,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let z = 1.644_854;
            z + (z * z * z + z) / (4.0 * df as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(pool: usize, d: f64) -> Config {
        let mut c = Config::paper(60, pool, d, 0.6);
        c.warmup_jobs = 300;
        c.jobs = 2_000;
        c
    }

    #[test]
    fn arrival_rate_of_the_paper() {
        // Section 2: 60 * 0.6 / (10 + 2000 + 10) = 0.0178 jobs per time unit.
        let c = Config::paper(60, 10, 20.0, 0.6);
        assert!((c.arrival_rate() - 0.0178).abs() < 0.0001);
    }

    #[test]
    fn minimum_of_the_paper() {
        // Section 4.1: "the absolute minimum (non-achievable) response time is about 127".
        let m = Config::paper(60, 60, 20.0, 0.6).minimum_response_time();
        assert!((m - 127.0).abs() < 1.5, "{m}");
    }

    #[test]
    fn deterministic_by_seed() {
        let c = small(10, 20.0);
        assert_eq!(run(&c).unwrap(), run(&c).unwrap());
        let mut c2 = c.clone();
        c2.seed = 2;
        assert_ne!(run(&c).unwrap().mean_rt, run(&c2).unwrap().mean_rt);
    }

    #[test]
    fn outcomes_are_plausible() {
        let r = run(&small(10, 20.0)).unwrap();
        assert_eq!(r.jobs, 2_000);
        // At least INIT + the shortest thread + FINAL.
        assert!(r.mean_rt > 110.0, "{r:?}");
        assert!(
            r.actual_parallelism >= 1.0 && r.actual_parallelism <= 20.0,
            "{r:?}"
        );
        assert!(r.pools_spanned >= 1.0 && r.pools_spanned <= 6.0, "{r:?}");
        // Load 0.6 plus overheads: utilization a little above 0.6.
        assert!(r.utilization > 0.5 && r.utilization < 0.8, "{r:?}");
    }

    #[test]
    fn unrestricted_single_pool_without_overheads_approaches_the_minimum() {
        // Light load, a = d always (G = 1), no overheads: the response time approaches the
        // sum of the phases, about 127 for D = 20 (section 4.1).
        let mut c = small(60, 20.0);
        c.load = 0.05;
        c.params.g = 1.0;
        c.in_pool = 0.0;
        c.run_queue = 0.0;
        c.cache = 0.0;
        let r = run(&c).unwrap();
        assert!(r.mean_rt > 120.0 && r.mean_rt < 135.0, "{r:?}");
        assert!((r.actual_parallelism - 20.0).abs() < 1.5, "{r:?}");
    }

    #[test]
    fn bad_configurations_are_refused() {
        let mut c = small(7, 20.0);
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("pool size 7: must divide the 60 processors"),
            "{e}"
        );
        c.pool_size = 10;
        c.load = 1.2;
        assert!(c.validate().unwrap_err().to_string().contains("load 1.2"));
        c.load = 0.6;
        c.parallelism = 40.0;
        assert!(c.validate().is_err());
        c.parallelism = 20.0;
        c.params.g = 2.0;
        assert!(c.validate().is_err());
        assert!(replicate(&small(10, 20.0), 0).is_err());
        // Inputs that used to loop forever, panic or give NaN.
        let refused = |f: &dyn Fn(&mut Config), what: &str| {
            let mut c = small(10, 20.0);
            f(&mut c);
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        };
        refused(&|c| c.time_slice = 1e-20, "time slice");
        refused(&|c| c.thread_demand = 1e20, "thread demand");
        refused(&|c| c.jobs = usize::MAX, "jobs");
        refused(&|c| c.load = 1e-320, "arrival rate");
        refused(&|c| c.processors = usize::MAX, "processors");
    }

    #[test]
    fn confidence_interval_contains_mean() {
        let s = replicate(&small(20, 10.0), 3).unwrap();
        assert!(s.ci_low <= s.mean_rt && s.mean_rt <= s.ci_high);
        assert!(s.ci_high > s.ci_low);
        assert_eq!(s.reps, 3);
        assert!((t90(9) - 1.833).abs() < 1e-9);
        assert!(t90(100) > 1.64 && t90(100) < 1.67);
    }
}
