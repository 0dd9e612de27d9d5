//! The driver's side of one run: the jobs' `mpirun`s, started together, and what they report.

use std::io::BufReader;
use std::process::{ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use asat_lab::bsp::{Cell, JobArgs, JobResult};
use asat_peers::procs::{self, Outcome, Watched};

use crate::Args;

/// What every run shares: ranks per job and the calibration passed to the ranks.
#[derive(Debug)]
pub struct Setup {
    pub ranks: usize,
    pub cs: Duration,
    pub units_per_us: f64,
}

/// `mpirun`'s own arguments for one job of `strategy`: `ranks` ranks, unbound
/// (`--bind-to none`: the jobs share every CPU, as Figure 13's processes do), and for
/// `mpi-yield` Open MPI's `mpi_yield_when_idle` (its waits call `sched_yield` between
/// polls). `mpi` keeps Open MPI's defaults: with no more ranks than CPUs it does not yield.
/// `--quiet`: no help text when a job aborts itself at the timeout.
pub fn mpirun_args(strategy: &str, ranks: usize) -> Vec<String> {
    let mut v: Vec<String> = ["--quiet", "-np", &ranks.to_string()]
        .into_iter()
        .map(String::from)
        .collect();
    v.extend(["--bind-to", "none", "--oversubscribe"].map(String::from));
    if strategy == "mpi-yield" {
        v.extend(["--mca", "mpi_yield_when_idle", "1"].map(String::from));
    }
    v
}

/// Starts the jobs of one run, waits until each has its ranks up, starts them together and
/// collects their results.
pub fn run_jobs(
    args: &Args,
    setup: &Setup,
    cell: &Cell,
    phases: u64,
) -> Result<Vec<JobResult>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut children = Vec::new();
    let mut stdins: Vec<ChildStdin> = Vec::new();
    for j in 0..args.jobs {
        let job = JobArgs::new(cell, phases, setup.cs, setup.units_per_us, j as u64 + 1);
        let mut child = Command::new("mpirun")
            .args(mpirun_args(&cell.strategy, setup.ranks))
            .arg(&exe)
            .args(job.to_args())
            .args(["--timeout", &args.timeout.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start mpirun ({e}); install Open MPI (openmpi-bin)"))?;
        stdins.push(child.stdin.take().expect("stdin is piped"));
        let mut out = BufReader::new(child.stdout.take().expect("stdout is piped"));
        if let Err(e) = procs::await_ready(&mut out) {
            let _ = child.kill();
            let _ = child.wait();
            let mut e = format!("a {} job did not start: {e}", cell.strategy);
            if let Some(hint) = asat::mpi::launch::mpirun_root_hint() {
                e = format!("{e}; {hint}");
            }
            return Err(e);
        }
        children.push(Watched::with_reader(child, out));
    }
    procs::start_together(stdins);
    let started = Instant::now();
    // the jobs abort themselves at the timeout; this is only a guard against a stuck mpirun
    let guard = Duration::from_secs_f64(args.timeout + 60.0);
    let outcomes = procs::wait_all(children, guard, Duration::from_millis(5))
        .map_err(|e| format!("waiting for a job: {e}"))?;
    // an aborted job's TIMEOUT line may be lost with its ranks: a failure at the timeout is one
    let late = started.elapsed().as_secs_f64() >= args.timeout;
    outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Exited { status, lines }
                if lines.iter().any(|l| l.starts_with("TIMEOUT"))
                    || (!status.success() && late) =>
            {
                Ok(JobResult::timed_out(args.timeout))
            }
            Outcome::Exited { status, lines } => {
                if !status.success() {
                    return Err(format!("a {} job failed: {status}", cell.strategy));
                }
                JobResult::parse(&lines).ok_or_else(|| format!("bad job output {lines:?}"))
            }
            Outcome::TimedOut => Err(format!("a {} job's mpirun did not exit", cell.strategy)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mpi_yield_asks_open_mpi_to_yield() {
        let yielding = mpirun_args("mpi-yield", 2).join(" ");
        assert!(yielding.contains("-np 2"), "{yielding}");
        assert!(
            yielding.contains("--mca mpi_yield_when_idle 1"),
            "{yielding}"
        );
        for s in ["mpi", "global", "block"] {
            let a = mpirun_args(s, 3).join(" ");
            assert!(a.contains("-np 3") && !a.contains("yield"), "{s}: {a}");
        }
    }
}
