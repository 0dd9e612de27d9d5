//! One copy of a job (`--worker`): runs the sweeps under its policy and prints its `RESULT`
//! line (and, with `--trace`, ASAT's `TRACE` lines) for the parent to read.

use std::time::Instant;

use asat::{Runtime, Schedule};
use asat_peers::{kernel, omp, rayon_peer};

use crate::options::{default_threads, is_peer, Args};

fn cpu_seconds() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage fills the rusage it is pointed at; it cannot fail for RUSAGE_SELF.
    let ru = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr());
        ru.assume_init()
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

pub fn worker(args: &Args) -> Result<(), String> {
    let threads = args.threads.unwrap_or_else(default_threads);
    let (mut a, mut b) = kernel::buffers(args.grain);
    let n = a.len();
    let mut join_wait = None;
    let mut probe_pct = None;
    let start = Instant::now();
    // ASAT's settings from the caller's `ASAT_*` variables (`ASAT_RULE=paper`, ...), which
    // pass through to every copy.
    let asat_policy = std::sync::Arc::new(asat::Asat::from_env().map_err(|e| e.to_string())?);
    match args.policy.as_str() {
        // Every policy of asat's registry (fixed: a team of every thread).
        name if !is_peer(name) => {
            let builder = Runtime::builder().max_threads(threads).timing(true);
            let builder = match name {
                // The copy's own ASAT, whose history `--trace` prints.
                "asat" => builder.shared_policy(asat_policy.clone()),
                _ => builder.shared_policy(asat::parse_policy(name).map_err(|e| e.to_string())?),
            };
            let rt = builder.build().map_err(|e| e.to_string())?;
            for _ in 0..args.sweeps {
                let src = &a;
                rt.parallel_slice_mut(&mut b[1..n - 1], Schedule::Static, |start, out| {
                    kernel::sweep_chunk(src, out, start + 1)
                });
                std::mem::swap(&mut a, &mut b);
            }
            let stats = rt.stats();
            join_wait = Some(stats.join_wait_pct());
            if args.policy == "asat" {
                probe_pct =
                    Some(100.0 * stats.probe_time.as_secs_f64() / start.elapsed().as_secs_f64());
            }
        }
        "rayon" => {
            let pool = rayon_peer::pool(threads);
            rayon_peer::jacobi(&pool, &mut a, &mut b, args.sweeps);
        }
        "rayon-main" => {
            let pool = rayon_peer::pool(threads);
            rayon_peer::jacobi_per_call(&pool, &mut a, &mut b, args.sweeps);
        }
        // The three differ only in the environment `spawn_copy` gives them (`omp_env`).
        "gomp" | "gomp-dynamic" | "gomp-passive" => {
            omp::jacobi_omp(&mut a, &mut b, args.sweeps);
        }
        "serial-c" => omp::jacobi_serial(&mut a, &mut b, args.sweeps),
        "serial-rust" => kernel::serial(&mut a, &mut b, args.sweeps),
        other => return Err(format!("unknown peer {other:?}")),
    }
    let wall = start.elapsed().as_secs_f64();
    if args.trace {
        for e in asat_policy.history() {
            println!(
                "TRACE {} {} {} {} {} {}",
                e.at.as_secs_f64(),
                e.threads_after,
                e.passage
                    .or(e.toe_passage)
                    .map_or(String::new(), |p| format!("{:.1}", p.as_secs_f64() * 1e6)),
                e.decision.as_str(),
                e.wait.map_or(String::new(), |w| format!("{w:.4}")),
                e.free.map_or(String::new(), |f| format!("{f:.2}")),
            );
        }
    }
    println!(
        "RESULT wall_s={wall} join_wait_pct={} probe_pct={} cpu_s={} checksum={}",
        join_wait.map_or(String::from("-"), |j| format!("{j}")),
        probe_pct.map_or(String::from("-"), |j| format!("{j}")),
        cpu_seconds(),
        kernel::checksum(&a)
    );
    Ok(())
}
