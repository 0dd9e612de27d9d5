//! Running the jobs of one run: as processes (this program in its worker mode; `gang-procs`
//! jobs join the run's shared gang domain), or, for `gang`, as runtimes of this process.

use std::ffi::OsString;
use std::io::BufReader;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use asat::gang::GangScheduler;
use asat::implicit::Flag;
use asat::Runtime;
use asat_lab::bsp::work::Compute;
use asat_lab::bsp::{result_fields, Cell, JobArgs, JobResult};
use asat_peers::procs::{self, Outcome, Watched};

use crate::job::{gang_job, Bsp};
use crate::{Args, Setup};

/// What one job reports: what every bulk-synchronous job reports, and, for `gang-procs`, the
/// switches across processes that its scheduler led.
#[derive(Clone, Debug, Default)]
pub struct JobReport {
    pub result: JobResult,
    pub domain: DomainSwitches,
}

/// `gang-procs`: the switches this job's scheduler led across processes, their total and
/// longest stop time (announcement to the last job's acknowledgement), us.
#[derive(Clone, Copy, Debug, Default)]
pub struct DomainSwitches {
    pub count: u64,
    pub stop_us: f64,
    pub stop_max_us: f64,
}

/// How a strategy's jobs are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    /// Each job a separate process (implicit coscheduling, std): the local schedulers
    /// coordinate nothing; with `gang-procs`, each job's gang scheduler joins the run's shared
    /// gang domain.
    Processes,
    /// Each job a runtime of this process, one gang of one `GangScheduler` (gangs live in one
    /// process): the job's threads run together and busy-wait.
    OneProcess,
}

fn runner(strategy: &str) -> Runner {
    if strategy == "gang" {
        Runner::OneProcess
    } else {
        Runner::Processes
    }
}

fn spawn_job(
    setup: &Setup,
    cell: &Cell,
    phases: u64,
    seed: u64,
    no_pin: bool,
) -> std::io::Result<Child> {
    let job = JobArgs::new(cell, phases, setup.cs, setup.units_per_us, seed);
    let mut args: Vec<OsString> = job.to_args().into_iter().map(OsString::from).collect();
    for (name, value) in [
        ("--threads", setup.threads.to_string()),
        (
            "--release-ns",
            (setup.release.as_nanos() as u64).to_string(),
        ),
    ] {
        args.push(name.into());
        args.push(value.into());
    }
    if no_pin {
        args.push("--no-pin".into());
    }
    if let (Some(dir), "gang-procs") = (&setup.gang_dir, cell.strategy.as_str()) {
        args.push("--gang-dir".into());
        args.push(dir.into());
    }
    setup
        .relaunch
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
}

/// Runs the jobs of one cell at once; returns each job's result.
pub fn run_jobs(
    args: &Args,
    setup: &Setup,
    cell: &Cell,
    phases: u64,
) -> Result<Vec<JobReport>, String> {
    match runner(&cell.strategy) {
        Runner::Processes => run_processes(args, setup, cell, phases),
        Runner::OneProcess => run_gangs(args, setup, cell, phases),
    }
}

/// The jobs as gangs of one `GangScheduler` in this process: each job is a runtime with the
/// gang policy whose SPMD region runs the same BSP loop; team barriers busy-wait (the gang
/// policy's wait strategy) and so do the point-to-point reads. A gang cannot be killed, so
/// there is no timeout: the phases are calibrated like every other strategy's.
fn run_gangs(
    args: &Args,
    setup: &Setup,
    cell: &Cell,
    phases: u64,
) -> Result<Vec<JobReport>, String> {
    let p = setup.threads;
    let sched = GangScheduler::builder()
        .build()
        .map_err(|e| format!("gang scheduler: {e}"))?;
    let runtimes = (0..args.jobs)
        .map(|_| {
            Runtime::builder()
                .max_threads(p)
                .policy(sched.policy())
                .build()
                .map_err(|e| format!("gang runtime: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let compute = Compute::new(cell.grain_ns, cell.imbalance_ns, setup.units_per_us)?;
    let c_units = compute.units(setup.cs.as_nanos() as f64 / 25.0);
    let go = std::sync::Barrier::new(args.jobs);
    let walls: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = runtimes
            .iter()
            .enumerate()
            .map(|(j, rt)| {
                let (go, compute) = (&go, &compute);
                s.spawn(move || {
                    let flags: Vec<Flag> = (0..p).map(|_| Flag::new()).collect();
                    let bsp = Bsp {
                        phases,
                        compute,
                        c_units,
                        flags: &flags,
                    };
                    go.wait();
                    let t = Instant::now();
                    gang_job(rt, &cell.pattern, &bsp, j as u64 + 1);
                    t.elapsed().as_secs_f64()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(f64::NAN))
            .collect()
    });
    if walls.iter().any(|w| w.is_nan()) {
        return Err("a gang job panicked".into());
    }
    Ok(walls
        .into_iter()
        .map(|wall_s| JobReport {
            result: JobResult {
                wall_s,
                ..JobResult::default()
            },
            ..JobReport::default()
        })
        .collect())
}

fn run_processes(
    args: &Args,
    setup: &Setup,
    cell: &Cell,
    phases: u64,
) -> Result<Vec<JobReport>, String> {
    let mut started: Vec<(Child, BufReader<ChildStdout>)> = Vec::new();
    let mut stdins: Vec<ChildStdin> = Vec::new();
    // Kills the jobs started so far: a job that cannot start stops the run.
    let give_up = |started: Vec<(Child, BufReader<ChildStdout>)>, e: String| {
        for (mut c, _) in started {
            let _ = c.kill();
            let _ = c.wait();
        }
        Err(e)
    };
    for j in 0..args.jobs {
        let mut child = match spawn_job(setup, cell, phases, j as u64 + 1, args.no_pin) {
            Ok(c) => c,
            Err(e) => return give_up(started, format!("cannot start a job: {e}")),
        };
        stdins.push(child.stdin.take().expect("stdin is piped"));
        let mut out = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let read = procs::await_ready(&mut out);
        started.push((child, out));
        if let Err(e) = read {
            return give_up(
                started,
                format!("a {} job did not start: {e}", cell.strategy),
            );
        }
    }
    let children: Vec<Watched> = started
        .into_iter()
        .map(|(c, out)| Watched::with_reader(c, out))
        .collect();
    // all jobs are ready: start them together
    procs::start_together(stdins);
    let outcomes = procs::wait_all(
        children,
        Duration::from_secs_f64(args.timeout),
        Duration::from_millis(2),
    )
    .map_err(|e| format!("waiting for a job: {e}"))?;
    outcomes
        .into_iter()
        .map(|o| match o {
            Outcome::Exited { status, lines } => {
                if !status.success() {
                    return Err(format!("a {} job failed: {status}", cell.strategy));
                }
                parse_result(&lines).ok_or_else(|| format!("bad job output {lines:?}"))
            }
            Outcome::TimedOut => Ok(JobReport {
                result: JobResult::timed_out(args.timeout),
                ..JobReport::default()
            }),
        })
        .collect()
}

/// `gang-procs`: the mean and longest switch across processes of the jobs that led the
/// domain (empty when none did).
pub fn domain_switch_note(res: &[JobReport]) -> String {
    let n: u64 = res.iter().map(|r| r.domain.count).sum();
    if n == 0 {
        return String::new();
    }
    let total: f64 = res.iter().map(|r| r.domain.stop_us).sum();
    let max = res.iter().map(|r| r.domain.stop_max_us).fold(0.0, f64::max);
    format!(
        ", {n} switches across processes: mean {:.0} us, max {max:.0} us",
        total / n as f64
    )
}

/// A job's `RESULT` line: [`JobResult`]'s fields and the domain's switches.
fn parse_result(lines: &[String]) -> Option<JobReport> {
    let fields = result_fields(lines)?;
    let mut domain = DomainSwitches::default();
    for &(k, v) in &fields {
        match k {
            "domain_switches" => domain.count = v.parse().ok()?,
            "domain_stop_us" => domain.stop_us = v.parse().ok()?,
            "domain_stop_max_us" => domain.stop_max_us = v.parse().ok()?,
            _ => {}
        }
    }
    Some(JobReport {
        result: JobResult::from_fields(&fields)?,
        domain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::worker;
    use crate::{default_threads, gang_domain_dir};
    use asat_lab::bsp::work::units_per_us;
    use asat_peers::procs::Relaunch;
    use clap::Parser;

    const WORKER_ENV: &str = "IMPLICIT_BSP_TEST_WORKER_ARGS";

    #[test]
    fn result_lines_with_the_switches_across_processes() {
        let lines = vec![
            "READY".to_owned(),
            "RESULT wall_s=0.5 blocks=0 spin_successes=0 domain_switches=4 domain_stop_us=80 \
             domain_stop_max_us=30"
                .to_owned(),
        ];
        let r = parse_result(&lines).unwrap();
        assert_eq!((r.result.wall_s, r.domain.count), (0.5, 4));
        assert_eq!(
            domain_switch_note(&[r]),
            ", 4 switches across processes: mean 20 us, max 30 us"
        );
        assert_eq!(domain_switch_note(&[JobReport::default()]), "");
        assert!(parse_result(&["RESULT wall_s=1 domain_switches=x".to_owned()]).is_none());
    }

    /// Stands for the worker mode in the test below.
    #[test]
    #[ignore = "a job of gang_procs_runs_each_job_as_a_process_of_one_gang_domain"]
    fn job_process() {
        let Some(argv) = Relaunch::test_args(WORKER_ENV, "implicit_bsp") else {
            return;
        };
        worker(&Args::try_parse_from(argv).unwrap()).unwrap();
    }

    #[test]
    fn gang_procs_runs_each_job_as_a_process_of_one_gang_domain() {
        let args =
            Args::try_parse_from(["implicit_bsp", "--jobs", "2", "--timeout", "120"]).unwrap();
        let gang_dir = gang_domain_dir().unwrap();
        let setup = Setup {
            threads: default_threads().min(2),
            cs: Duration::from_micros(20),
            release: Duration::from_micros(1),
            units_per_us: units_per_us(),
            gang_dir: Some(gang_dir.path().to_path_buf()),
            relaunch: Relaunch::test("jobs::tests::job_process", WORKER_ENV).unwrap(),
        };
        // 100 us phases, 0.15 s of work per job: the two jobs' gangs share the CPUs for
        // about 0.3 s, many 20 ms quanta.
        let cell = |strategy: &str| Cell {
            pattern: "news".into(),
            grain_label: "100".into(),
            grain_ns: 100_000,
            imbalance_label: "low".into(),
            imbalance_ns: 25_000,
            strategy: strategy.into(),
        };
        for strategy in ["gang-procs", "gang"] {
            let res = run_jobs(&args, &setup, &cell(strategy), 1500).unwrap();
            assert_eq!(res.len(), 2, "{strategy}");
            for r in &res {
                let r = &r.result;
                assert!(!r.timed_out && r.wall_s > 0.0, "{strategy}: {r:?}");
            }
            // gang-procs: one job's scheduler led the switches between the two jobs' gangs
            // across processes; gang: no domain.
            let led: u64 = res.iter().map(|r| r.domain.count).sum();
            assert_eq!(led > 0, strategy == "gang-procs", "{strategy}: {res:?}");
        }
    }
}
