//! The command line: [`Args`], the policies a copy may run and the parsers of the options'
//! values.

use std::path::PathBuf;

use asat::MAX_THREADS_LIMIT;
use asat_peers::cli::seconds_up_to_a_day;
use clap::builder::RangedU64ValueParser;
use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    about = "Copies of a fine-grain fork-join job under each policy (the ASAT paper, section 6)"
)]
pub struct Args {
    /// Policies to compare: any that `ASAT_POLICY` names (single, fixed, asat, pools, gang,
    /// ...), or a peer: rayon (the sweep loop inside `pool.install`),
    /// rayon-main (each sweep's `par_chunks_mut` called from the main thread), gomp (libgomp's
    /// defaults), gomp-dynamic (`OMP_DYNAMIC=true`), gomp-passive (`OMP_WAIT_POLICY=passive`; not
    /// in the default list).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "single,fixed,asat,rayon,rayon-main,gomp,gomp-dynamic",
        value_parser = policy
    )]
    pub policies: Vec<String>,
    /// Elements per parallel loop (3 ..= 100000000).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "10000,100000",
        value_parser = grain_parser()
    )]
    pub grains: Vec<usize>,
    /// Numbers of copies run at once (each 1 ..= 256).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,3,4",
        value_parser = RangedU64ValueParser::<usize>::new().range(1..=256)
    )]
    pub copies: Vec<usize>,
    /// Element updates per job (default: what one thread does in about 2 s, measured per grain).
    #[arg(long, allow_negative_numbers = true, value_parser = positive_total)]
    pub total: Option<f64>,
    /// Repetitions of each cell (1 ..= 10000); the median is reported.
    #[arg(
        long,
        default_value_t = 1,
        value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000)
    )]
    pub reps: usize,
    /// Seconds after which a copy is killed and its row marked timed out.
    #[arg(
        long,
        default_value_t = 15.0,
        allow_negative_numbers = true,
        value_parser = seconds_up_to_a_day
    )]
    pub timeout: f64,
    /// Threads per job, 1 ..= 4096 (default: the CPUs this process may use).
    #[arg(
        long,
        value_parser = RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS_LIMIT as u64)
    )]
    pub threads: Option<usize>,
    /// Single-threaded CPU hog processes run alongside the copies (load that is not ASAT;
    /// 0 ..= 256).
    #[arg(
        long,
        default_value_t = 0,
        value_parser = RangedU64ValueParser::<usize>::new().range(0..=256)
    )]
    pub hogs: usize,
    /// Record ASAT's team size over time per copy: DIR/asat_trace.csv and DIR/asat_trace.svg
    /// (of the last asat cell run; every asat cell also gets
    /// DIR/asat_trace_g{grain}_c{copies}.csv). Only asat copies are traced.
    #[arg(long)]
    pub trace: bool,
    /// Output folder.
    #[arg(long, default_value = "out/compare")]
    pub out: PathBuf,
    /// Internal: run one copy of a job and print its result.
    #[arg(long, hide = true)]
    pub worker: bool,
    #[arg(
        long,
        hide = true,
        requires = "worker",
        default_value = "fixed",
        value_parser = worker_policy
    )]
    pub policy: String,
    #[arg(
        long,
        hide = true,
        requires = "worker",
        default_value_t = 10000,
        value_parser = grain_parser()
    )]
    pub grain: usize,
    #[arg(long, hide = true, requires = "worker", default_value_t = 1)]
    pub sweeps: usize,
}

/// The most elements per parallel loop: two buffers of 10^8 `f64`s are 1.6 GB per copy.
const MAX_GRAIN: u64 = 100_000_000;

fn grain_parser() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::<usize>::new().range(3..=MAX_GRAIN)
}

/// `--total`: element updates, finite and above 0.
fn positive_total(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err("must be a finite number of element updates above 0".into()),
    }
}

/// The peers a copy may run instead of an asat policy.
const PEERS: [&str; 5] = [
    "rayon",
    "rayon-main",
    "gomp",
    "gomp-dynamic",
    "gomp-passive",
];

/// What a copy (`--worker --policy`) may run besides the policies: the calibration kernels.
const CALIBRATION_KERNELS: [&str; 2] = ["serial-c", "serial-rust"];

/// Whether a copy's `--policy` is a peer or a calibration kernel (else a policy of asat's).
pub fn is_peer(name: &str) -> bool {
    PEERS.contains(&name) || CALIBRATION_KERNELS.contains(&name)
}

/// `--policies`: a peer, or a policy that `ASAT_POLICY` could name (asat's registry, with
/// every policy crate linked in: `pools`, `pools:KIND`, `gang`, ...).
fn policy(s: &str) -> Result<String, String> {
    if PEERS.contains(&s) || asat::parse_policy(s).is_ok() {
        return Ok(s.to_string());
    }
    let asat: Vec<String> = asat::policies()
        .iter()
        .map(|e| match e.arg {
            "" => e.name.to_string(),
            arg => format!("{} (or {}:{arg})", e.name, e.name),
        })
        .collect();
    Err(format!(
        "unknown policy {s:?}: must be one of asat's {} or a peer: {}",
        asat.join(", "),
        PEERS.join(", ")
    ))
}

/// `--policy` of a copy: what `--policies` takes, or a calibration kernel.
fn worker_policy(s: &str) -> Result<String, String> {
    if CALIBRATION_KERNELS.contains(&s) {
        return Ok(s.to_string());
    }
    policy(s).map_err(|e| {
        format!(
            "{e}, or a calibration kernel: {}",
            CALIBRATION_KERNELS.join(", ")
        )
    })
}

pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_are_the_registry_s_and_the_peers() {
        for ok in [
            "fixed", "fixed:2", "single", "asat", "pools", "gang", "rayon", "gomp",
        ] {
            assert_eq!(policy(ok).as_deref(), Ok(ok));
        }
        let err = policy("bogus").unwrap_err();
        assert!(err.contains("pools") && err.contains("rayon-main"), "{err}");
        assert!(policy("serial-c").is_err());
        assert_eq!(worker_policy("serial-c").as_deref(), Ok("serial-c"));
        assert!(is_peer("gomp-passive") && !is_peer("pools"));
    }
}
