//! Running a cell: its copies started at once as processes of this program (`--worker`), with
//! the libgomp environment of their policy, alongside the CPU hogs; what each copy reports; and
//! the check that libgomp has not bound this process to one CPU.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use asat_peers::load::CpuHogs;
use asat_peers::procs::{self, Outcome, Watched};

use crate::options::Args;

/// What one copy reports.
#[derive(Clone, Debug, Default)]
pub struct CopyResult {
    pub wall_s: f64,
    pub join_wait_pct: Option<f64>,
    pub cpu_s: f64,
    pub timed_out: bool,
    /// Share of the job's time its starting thread spent in ASAT's probes, in percent.
    pub probe_pct: Option<f64>,
    /// `t_s team_size passage_us decision wait free_cpus` lines of an ASAT copy run with --trace.
    pub trace: Vec<String>,
    /// The sum of the job's result (none for a killed copy).
    pub checksum: Option<f64>,
}

/// Prefixes of the environment variables libgomp reads (OpenMP's and its own).
const OMP_ENV_PREFIXES: [&str; 2] = ["OMP_", "GOMP_"];

/// The libgomp settings of a copy under `policy`, set after every `OMP_*` / `GOMP_*` variable of
/// the caller's environment has been removed: `gomp` is libgomp's defaults bar the thread count.
fn omp_env(policy: &str, threads: usize) -> Vec<(&'static str, String)> {
    let mut env = Vec::new();
    if matches!(policy, "gomp" | "gomp-dynamic" | "gomp-passive") {
        env.push(("OMP_NUM_THREADS", threads.to_string()));
    }
    match policy {
        "gomp-dynamic" => env.push(("OMP_DYNAMIC", "true".to_owned())),
        "gomp-passive" => env.push(("OMP_WAIT_POLICY", "passive".to_owned())),
        _ => {}
    }
    env
}

fn spawn_copy(
    args: &Args,
    policy: &str,
    grain: usize,
    sweeps: usize,
    threads: usize,
) -> std::io::Result<Child> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args([
        "--worker",
        "--policy",
        policy,
        "--grain",
        &grain.to_string(),
        "--sweeps",
        &sweeps.to_string(),
        "--threads",
        &threads.to_string(),
    ]);
    // libgomp reads its settings from the environment when the process starts: drop the caller's,
    // then set exactly what the policy needs, so that a run does not depend on the shell's.
    for (key, _) in std::env::vars_os() {
        let k = key.as_encoded_bytes();
        if OMP_ENV_PREFIXES.iter().any(|p| k.starts_with(p.as_bytes())) {
            cmd.env_remove(&key);
        }
    }
    cmd.envs(omp_env(policy, threads));
    if args.trace {
        cmd.arg("--trace");
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()
}

/// Runs `copies` copies at once; returns each copy's result.
pub fn run_cell(
    args: &Args,
    policy: &str,
    grain: usize,
    sweeps: usize,
    copies: usize,
    threads: usize,
) -> Result<Vec<CopyResult>, String> {
    // The co-located load that is not ASAT: killed when the cell ends.
    let _hogs = CpuHogs::spawn(args.hogs).map_err(|e| format!("cannot start a hog: {e}"))?;
    let mut children = Vec::new();
    for _ in 0..copies {
        let child = spawn_copy(args, policy, grain, sweeps, threads)
            .map_err(|e| format!("cannot start a copy: {e}"))?;
        children.push(Watched::new(child));
    }
    let outcomes = procs::wait_all(
        children,
        Duration::from_secs_f64(args.timeout),
        Duration::from_millis(5),
    )
    .map_err(|e| format!("waiting for a copy: {e}"))?;
    outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Exited { status, lines } => {
                if !status.success() {
                    return Err(format!("a {policy} copy failed: {status}"));
                }
                parse_output(&lines).ok_or_else(|| format!("bad copy output {lines:?}"))
            }
            Outcome::TimedOut => Ok(CopyResult {
                wall_s: args.timeout,
                join_wait_pct: None,
                cpu_s: f64::NAN,
                timed_out: true,
                probe_pct: None,
                trace: Vec::new(),
                checksum: None,
            }),
        })
        .collect()
}

/// Parses a copy's output: one `RESULT` line and, with --trace, `TRACE` lines.
fn parse_output(lines: &[String]) -> Option<CopyResult> {
    let mut r = parse_result(
        lines
            .iter()
            .find_map(|l| l.trim().strip_prefix("RESULT "))?,
    )?;
    r.trace = lines
        .iter()
        .filter_map(|l| l.trim().strip_prefix("TRACE "))
        .map(str::to_owned)
        .collect();
    Some(r)
}

fn parse_result(rest: &str) -> Option<CopyResult> {
    let mut r = CopyResult::default();
    for kv in rest.split_whitespace() {
        let (k, v) = kv.split_once('=')?;
        match k {
            "wall_s" => r.wall_s = v.parse().ok()?,
            "join_wait_pct" => r.join_wait_pct = v.parse().ok(),
            "probe_pct" => r.probe_pct = v.parse().ok(),
            "cpu_s" => r.cpu_s = v.parse().ok()?,
            "checksum" => r.checksum = Some(v.parse().ok()?),
            _ => {}
        }
    }
    // A copy that finished always reports its checksum.
    r.checksum.is_some().then_some(r)
}

extern "C" {
    /// libgomp's `omp_get_proc_bind` (libgomp is linked through `asat_peers`).
    fn omp_get_proc_bind() -> std::os::raw::c_int;
}

/// This process links libgomp, which reads its environment when it is loaded, before `main`:
/// with `OMP_PROC_BIND` (other than `false`), `OMP_PLACES` or `GOMP_CPU_AFFINITY` it pins the
/// starting thread to one place, and every copy would inherit that one CPU (the copies' own
/// environment is cleaned, but the affinity mask is passed on). That cannot be undone here (the
/// mask before the pinning is lost), so such a run is refused.
pub fn check_not_bound() -> Result<(), String> {
    // SAFETY: a plain libgomp query without arguments.
    if unsafe { omp_get_proc_bind() } == 0 {
        return Ok(());
    }
    let set: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| OMP_ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .collect();
    Err(format!(
        "libgomp has bound this process to one CPU at start-up (the OMP_*/GOMP_* variables set: \
         {}), and the copies would inherit it: run compare without OMP_PROC_BIND, OMP_PLACES \
         and GOMP_CPU_AFFINITY (every copy starts without the caller's OMP_*/GOMP_* variables \
         anyway)",
        set.join(", ")
    ))
}
