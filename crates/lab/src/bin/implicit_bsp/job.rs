//! The job: its BSP loop (computation, then the pattern's communication), its barrier under
//! each strategy, and the worker modes that run one job as a process (`--worker`).

use std::time::{Duration, Instant};

use asat::gang::GangScheduler;
use asat::implicit::{AnyStrategy, Block, Config, Flag, Spin};
use asat::{CpuSet, Runtime};
use asat_lab::bsp::work::{work, Compute};
use asat_peers::procs;
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::{default_threads, Args};

/// What every member of a BSP job shares: its phases, each a computation of `U(g - v/2, g +
/// v/2)` (`compute`) followed by the communication phase.
pub struct Bsp<'a> {
    pub phases: u64,
    pub compute: &'a Compute,
    /// Work units between two reads of the communication phase.
    pub c_units: u64,
    /// One flag per member: the last step it published.
    pub flags: &'a [Flag],
}

impl Bsp<'_> {
    /// Member `me`'s phases: compute; opening barrier; publish a step and `read` the flag of
    /// each partner in `reads` (the pattern); closing barrier (none when there is nothing to
    /// read: the pattern `barrier`).
    pub fn run(
        &self,
        me: usize,
        reads: &[usize],
        rng: &mut StdRng,
        barrier: impl Fn(),
        read: impl Fn(&Flag, u32),
    ) {
        let steps = reads.len().max(1) as u32;
        for phase in 0..self.phases {
            self.compute.phase(rng);
            barrier();
            if reads.is_empty() {
                continue;
            }
            let base = (phase as u32).wrapping_mul(steps);
            for (i, &q) in reads.iter().enumerate() {
                let step = base.wrapping_add(i as u32 + 1);
                self.flags[me].set(step);
                read(&self.flags[q], step);
                work(self.c_units);
            }
            barrier();
        }
    }
}

/// The barrier of a job: asat-implicit's or std's.
enum JobBarrier {
    Implicit(Box<asat::implicit::Barrier<AnyStrategy>>),
    Std(std::sync::Barrier),
}

impl JobBarrier {
    fn wait(&self) {
        match self {
            JobBarrier::Implicit(b) => {
                b.wait().expect("a job thread panicked");
            }
            JobBarrier::Std(b) => {
                b.wait();
            }
        }
    }

    fn read(&self, flag: &Flag, step: u32) {
        let r = match self {
            JobBarrier::Implicit(b) => flag.wait_at_least(step, b.strategy()),
            JobBarrier::Std(_) => flag.wait_at_least(step, &Block),
        };
        r.expect("a job thread panicked");
    }
}

/// The partners thread `me` of `p` reads from in one communication phase.
pub fn partners(pattern: &str, me: usize, p: usize) -> Vec<usize> {
    match pattern {
        "news" => asat_peers::grid::torus_neighbours(me, p),
        "transpose" => (1..p).map(|i| (me + i) % p).collect(),
        _ => Vec::new(),
    }
}

pub fn worker(args: &Args) -> Result<(), String> {
    let p = args.threads.unwrap_or_else(default_threads);
    if args.job.strategy == "gang-procs" {
        return gang_worker(args, p);
    }
    let cfg = Config::builder()
        .context_switch(Duration::from_nanos(args.job.cs_ns))
        .release_latency(Duration::from_nanos(args.release_ns))
        .build()
        .map_err(|e| e.to_string())?;
    let barrier = if args.job.strategy == "std" {
        JobBarrier::Std(std::sync::Barrier::new(p))
    } else {
        let s = AnyStrategy::by_name(&args.job.strategy, &cfg).map_err(|e| e.to_string())?;
        JobBarrier::Implicit(Box::new(
            asat::implicit::Barrier::new(p, s).map_err(|e| e.to_string())?,
        ))
    };
    let flags: Vec<Flag> = (0..p).map(|_| Flag::new()).collect();
    let compute = args.job.compute()?;
    let bsp = Bsp {
        phases: args.job.phases,
        compute: &compute,
        c_units: args.job.c_units(&compute),
        flags: &flags,
    };
    let go = Flag::new();
    let cpus: Vec<usize> = CpuSet::of_current_thread()
        .map(|set| set.iter().collect())
        .unwrap_or_default();
    let wall = std::thread::scope(|s| {
        for me in 0..p {
            let (barrier, go, bsp) = (&barrier, &go, &bsp);
            let reads = partners(&args.job.pattern, me, p);
            let seed = args.job.seed.wrapping_mul(1000).wrapping_add(me as u64);
            let cpu = (!args.no_pin && !cpus.is_empty()).then(|| cpus[me % cpus.len()]);
            s.spawn(move || {
                if let Some(cpu) = cpu {
                    // Best effort: a pin the kernel refuses leaves the thread where it is.
                    let _ = CpuSet::from_iter([cpu]).bind_current_thread();
                }
                let mut rng = StdRng::seed_from_u64(seed);
                go.wait_at_least(1, &Block).expect("start");
                bsp.run(
                    me,
                    &reads,
                    &mut rng,
                    || barrier.wait(),
                    |flag, step| barrier.read(flag, step),
                );
            });
        }
        // the driver's GO starts the threads (or its end: they then run on their own)
        let _ = procs::ready_then_wait();
        let t = Instant::now();
        go.set(1);
        t
    });
    let wall = wall.elapsed().as_secs_f64();
    let (blocks, spins) = match &barrier {
        JobBarrier::Implicit(b) => {
            let st = b.stats();
            (st.blocks, st.spin_successes)
        }
        JobBarrier::Std(_) => (0, 0),
    };
    println!("RESULT wall_s={wall} blocks={blocks} spin_successes={spins}");
    Ok(())
}

/// One job of `gang-procs`: a runtime with the gang policy on a `GangScheduler` that joins the
/// shared gang domain in `--gang-dir`, running the same region as a job of `gang`.
fn gang_worker(args: &Args, p: usize) -> Result<(), String> {
    let dir = args
        .gang_dir
        .as_ref()
        .ok_or("gang-procs needs the folder of the gang domain (--gang-dir)")?;
    let sched = GangScheduler::builder()
        .shared(true)
        .shared_dir(dir)
        .build()
        .map_err(|e| format!("gang scheduler: {e}"))?;
    let rt = Runtime::builder()
        .max_threads(p)
        .policy(sched.policy())
        .build()
        .map_err(|e| format!("gang runtime: {e}"))?;
    let compute = args.job.compute()?;
    let flags: Vec<Flag> = (0..p).map(|_| Flag::new()).collect();
    let bsp = Bsp {
        phases: args.job.phases,
        compute: &compute,
        c_units: args.job.c_units(&compute),
        flags: &flags,
    };
    if !procs::ready_then_wait() {
        return Ok(()); // the driver is gone
    }
    let t = Instant::now();
    gang_job(&rt, &args.job.pattern, &bsp, args.job.seed);
    let wall = t.elapsed().as_secs_f64();
    let st = sched.stats();
    println!(
        "RESULT wall_s={wall} blocks=0 spin_successes=0 domain_switches={} domain_stop_us={} \
         domain_stop_max_us={}",
        st.domain_switches,
        st.domain_stop_time_total.as_secs_f64() * 1e6,
        st.domain_stop_time_max.as_secs_f64() * 1e6
    );
    Ok(())
}

/// One job as a region of `rt`, a runtime with the gang policy (`gang` and `gang-procs`):
/// every member runs the BSP loop (seeded by `seed` and its index, as a process job's threads
/// are); team barriers busy-wait (the gang policy's wait strategy) and so do the
/// point-to-point reads.
pub fn gang_job(rt: &Runtime, pattern: &str, bsp: &Bsp<'_>, seed: u64) {
    rt.region(|team| {
        let me = team.index();
        let reads = partners(pattern, me, team.size());
        let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(1000).wrapping_add(me as u64));
        bsp.run(
            me,
            &reads,
            &mut rng,
            || team.barrier(),
            |flag, step| {
                flag.wait_at_least(step, &Spin)
                    .expect("flags are never poisoned here");
            },
        );
    });
}
