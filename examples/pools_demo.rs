//! Processor pools with real threads: several jobs, each its own process, share one load table
//! in shared memory; each prints, at every parallel region, its home pool, the loads it saw,
//! and which pools and CPUs its team got.
//!
//! ```text
//! cargo run --release --example pools_demo                       # this machine, NUMA pools
//! cargo run --release --example pools_demo -- --pools 1          # pools of one CPU
//! cargo run --release --example pools_demo -- --topology "node:4 core:4 pu:1" --jobs 3
//! ```
//!
//! On this machine members are pinned to their pool's CPUs and each prints the affinity mask
//! it really had; a synthetic topology describes another machine, so its jobs place threads
//! (team sizes, pools) but cannot pin them. Each region is a fixed amount of CPU work shared
//! by the team (`--work-ms`), as in the paper's job model; jobs start `--stagger-ms` apart so
//! their regions overlap.

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use asat::pools::{PoolKind, PoolPolicy, SharedTable, Topology};
use asat::{CpuSet, Runtime, MAX_THREADS_LIMIT};
use clap::builder::RangedU64ValueParser;
use clap::Parser;

#[derive(Parser, Debug)]
#[command(about = "Jobs as processes placed on processor pools, sharing one load table")]
struct Args {
    /// A synthetic topology in hwloc's syntax (default: this machine).
    #[arg(long)]
    topology: Option<String>,
    /// Pools: numa, l3, package, or a pool size.
    #[arg(long, default_value = "numa")]
    pools: String,
    /// Number of jobs (processes; 1 ..= 256).
    #[arg(long, default_value_t = 3, value_parser = RangedU64ValueParser::<usize>::new().range(1..=256))]
    jobs: usize,
    /// Parallel regions per job.
    #[arg(long, default_value_t = 4)]
    regions: usize,
    /// Desired parallelism d of every job, 1 ..= 4096 (default: the usable CPUs of the
    /// topology).
    #[arg(long, value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS_LIMIT as u64))]
    desired: Option<usize>,
    /// CPU work per region, in milliseconds of one thread, shared by the team.
    #[arg(long, default_value_t = 300)]
    work_ms: u64,
    /// Delay between job starts, in milliseconds.
    #[arg(long, default_value_t = 50)]
    stagger_ms: u64,
    /// F: spanning control (a finite number >= 0).
    #[arg(long = "F", default_value_t = 0.8, allow_negative_numbers = true, value_parser = f_arg)]
    f: f64,
    /// G: least actual parallelism, as a fraction of d (0 ..= 1).
    #[arg(long = "G", default_value_t = 0.5, allow_negative_numbers = true, value_parser = g_arg)]
    g: f64,
    /// Internal: run job number N.
    #[arg(long, hide = true)]
    worker: Option<usize>,
    /// Internal: the load table's folder.
    #[arg(long, hide = true)]
    table_dir: Option<PathBuf>,
}

/// `--F`: what `PoolPolicy` accepts, a finite number >= 0.
fn f_arg(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err("must be a finite number >= 0".into()),
    }
}

/// `--G`: what `PoolPolicy` accepts, a number between 0 and 1.
fn g_arg(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err("must be a number between 0 and 1".into()),
    }
}

fn main() {
    let args = Args::parse();
    let result = match args.worker {
        Some(i) => worker(&args, i),
        None => launch(&args),
    };
    if let Err(e) = result {
        eprintln!("pools_demo: {e}");
        std::process::exit(2);
    }
}

fn topology(args: &Args) -> Result<Topology, asat::pools::Error> {
    match &args.topology {
        Some(desc) => Topology::synthetic(desc),
        None => Topology::detect(),
    }
}

fn launch(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    // Check the settings once here, so that a bad value is one clear error.
    let topo = topology(args)?;
    let kind: PoolKind = args.pools.parse()?;
    let pools = topo.pools(kind)?;
    let d = args.desired.unwrap_or(topo.usable_cpus().len());
    if !(1..=MAX_THREADS_LIMIT).contains(&d) {
        return Err(format!(
            "desired parallelism {d} (the topology's usable CPUs): must be between 1 and \
             {MAX_THREADS_LIMIT}; set --desired"
        )
        .into());
    }
    println!(
        "topology: {}; usable CPUs {}; {} pools ({kind:?}): {:?}",
        args.topology.as_deref().unwrap_or("this machine"),
        topo.usable_cpus(),
        pools.len(),
        pools
    );
    if !topo.is_this_system() {
        println!("(synthetic topology: threads are placed but not pinned)");
    }
    // A table of its own for this run, so that the demo starts from an empty machine.
    // (A folder of the user's own, inside the private one: mode 0700, as the table needs.)
    let dir = SharedTable::default_dir()?.join(format!("asat-pools-demo-{}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| {
            format!(
                "cannot create the load table's folder {}: {e}",
                dir.display()
            )
        })?;
    let exe = std::env::current_exe()?;
    let mut children: Vec<Child> = Vec::new();
    for i in 0..args.jobs {
        let mut cmd = Command::new(&exe);
        cmd.args(std::env::args().skip(1))
            .arg("--worker")
            .arg(i.to_string())
            .arg("--table-dir")
            .arg(&dir);
        children.push(cmd.spawn()?);
        std::thread::sleep(Duration::from_millis(args.stagger_ms));
    }
    let mut failed = 0;
    for mut c in children {
        if !c.wait()?.success() {
            failed += 1;
        }
    }
    std::fs::remove_dir_all(&dir)?;
    if failed > 0 {
        return Err(format!("{failed} job(s) failed").into());
    }
    Ok(())
}

fn spin_for(d: Duration) {
    let t = Instant::now();
    let mut x = 0u64;
    while t.elapsed() < d {
        for _ in 0..1000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

fn worker(args: &Args, job: usize) -> Result<(), Box<dyn std::error::Error>> {
    let topo = topology(args)?;
    let pools = topo.pools(args.pools.parse()?)?;
    let dir = args.table_dir.clone().ok_or("--table-dir missing")?;
    let table = SharedTable::open_in(&dir, &pools)?;
    let d = args.desired.unwrap_or(topo.usable_cpus().len());
    let pin = topo.is_this_system();
    let policy = Arc::new(
        PoolPolicy::builder(pools.clone())
            .table(table)
            .f(args.f)
            .g(args.g)
            .desired(d)
            .pin(pin)
            .build()?,
    );
    let rt = Runtime::builder()
        .max_threads(d)
        .shared_policy(policy.clone())
        .build()?;
    let pid = std::process::id();
    println!(
        "job {job} (pid {pid}): home pool {} (CPUs {}), d = {d}",
        policy.home(),
        pools.cpus(policy.home())
    );
    for r in 0..args.regions {
        let masks = Mutex::new(Vec::new());
        let t = Instant::now();
        rt.region(|team| {
            if pin {
                masks.lock().unwrap().push((
                    team.index(),
                    CpuSet::of_current_thread().unwrap_or_default(),
                ));
            }
            spin_for(Duration::from_millis(args.work_ms) / team.size() as u32);
        });
        let wall = t.elapsed();
        let last = policy.last_region().ok_or("no region recorded")?;
        let team: Vec<String> = last
            .per_pool
            .iter()
            .map(|&(p, n)| format!("pool {p} (CPUs {}) x{n}", pools.cpus(p)))
            .collect();
        let mut line = format!(
            "job {job} region {r}: loads seen {:?}, candidates {:?}, a = {} of d = {}: {} [{:.0} ms]",
            last.loads,
            last.candidates,
            last.threads,
            last.desired,
            team.join(", "),
            wall.as_secs_f64() * 1e3
        );
        if pin {
            let mut m = masks.into_inner().unwrap();
            m.sort_by_key(|&(i, _)| i);
            let ok = m
                .iter()
                .all(|&(i, mask)| mask == pools.cpus(last.member_pools[i]));
            let masks: Vec<String> = m.iter().map(|(i, s)| format!("m{i}:{s}")).collect();
            line += &format!(
                "; masks {} ({})",
                masks.join(" "),
                if ok { "= pools" } else { "MISMATCH" }
            );
        }
        println!("{line}");
    }
    Ok(())
}
