//! One rank of a job: the phases (work, then the pattern's communication, then a barrier),
//! timed by rank 0.

use std::io::Write;
use std::time::{Duration, Instant};

use asat::implicit::Config;
use asat::mpi::mpi::collective::SystemOperation;
use asat::mpi::mpi::topology::SimpleCommunicator;
use asat::mpi::mpi::traits::*;
use asat::mpi::{Hybrid, Waiter};
use asat_peers::procs;
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::Args;

/// Whether a strategy waits with MPI's own calls (`MPI_Wait*`, `MPI_Barrier`) rather than
/// asat-mpi's [`Waiter`].
pub fn is_native(strategy: &str) -> bool {
    matches!(strategy, "mpi" | "mpi-yield")
}

/// The ranks that rank `me` of `p` exchanges a message with each phase: for `news`, its
/// grid neighbours (north, east, south, west on the most square torus of `p` ranks,
/// duplicates and itself dropped), as `implicit_bsp`'s threads read them; none otherwise
/// (`transpose` is one all-to-all, `barrier` has no messages). The relation is symmetric: a
/// rank's neighbours have it as a neighbour, so every receive has its send.
pub fn partners(pattern: &str, me: usize, p: usize) -> Vec<usize> {
    if pattern != "news" {
        return Vec::new();
    }
    asat_peers::grid::torus_neighbours(me, p)
}

/// How a rank waits: MPI's own calls, or asat-mpi's two-phase waits.
#[derive(Clone, Copy)]
enum Wait<'w> {
    Native,
    Asat(&'w Waiter),
}

impl Wait<'_> {
    fn barrier(self, world: &SimpleCommunicator) {
        match self {
            Wait::Native => world.barrier(),
            Wait::Asat(w) => {
                if let Err(e) = w.barrier(world) {
                    eprintln!("mpi_bsp: {e}");
                    world.abort(2);
                }
            }
        }
    }
}

/// The halo exchange of `news`: a non-blocking receive from and send to each partner, then
/// one wait for all of them. Returns the words received, in partner order.
fn exchange(world: &SimpleCommunicator, wait: Wait, to: &[usize], word: u64) -> Vec<u64> {
    let send = vec![word; to.len()];
    let mut got = vec![u64::MAX; to.len()];
    asat::mpi::mpi::request::scope(|scope| {
        let mut reqs = Vec::with_capacity(2 * to.len());
        for (slot, &q) in got.chunks_mut(1).zip(to) {
            let q = world.process_at_rank(q as i32);
            reqs.push(q.immediate_receive_into(scope, slot));
        }
        for (x, &q) in send.chunks(1).zip(to) {
            let q = world.process_at_rank(q as i32);
            reqs.push(q.immediate_send(scope, x));
        }
        match wait {
            Wait::Native => reqs.into_iter().for_each(|r| r.wait_without_status()),
            Wait::Asat(w) => {
                w.wait_all(reqs);
            }
        }
    });
    got
}

/// The all-to-all of `transpose`: one word to and from every rank (`MPI_Ialltoall`), waited
/// for as one request.
fn all_to_all(world: &SimpleCommunicator, wait: Wait, word: u64) -> Vec<u64> {
    let np = world.size() as usize;
    let send = vec![word; np];
    let mut got = vec![u64::MAX; np];
    asat::mpi::mpi::request::scope(|scope| {
        let r = world.immediate_all_to_all_into(scope, &send[..], &mut got[..]);
        match wait {
            Wait::Native => r.wait_without_status(),
            Wait::Asat(w) => {
                w.wait(r);
            }
        }
    });
    got
}

/// Runs one rank: rank 0 says `READY`, waits for a line on its standard input (the driver
/// starts all jobs together), and at the end prints `RESULT wall_s=.. blocks=..
/// spin_successes=..` (summed over the ranks), or `TIMEOUT ..` before aborting the job.
pub fn worker(args: &Args) -> Result<(), String> {
    let native = is_native(&args.job.strategy);
    let cfg = Config::builder()
        .context_switch(Duration::from_nanos(args.job.cs_ns))
        .build()
        .map_err(|e| e.to_string())?;
    // the native strategies wait with MPI's calls; their waiter is not used
    let strategy = if native {
        "spin"
    } else {
        args.job.strategy.as_str()
    };
    let hybrid = Hybrid::builder()
        .strategy(strategy)
        .config(cfg)
        .build()
        .map_err(|e| e.to_string())?;
    let world = hybrid.world();
    let (me, np) = (world.rank() as usize, world.size() as usize);
    let waiter: &Waiter = hybrid.waiter();
    let wait = if native {
        Wait::Native
    } else {
        Wait::Asat(waiter)
    };
    let compute = args.job.compute()?;
    let mut rng = StdRng::seed_from_u64(args.job.seed.wrapping_mul(1000) + me as u64);
    let to = partners(&args.job.pattern, me, np);
    if me == 0 {
        // the driver's GO starts the job (or its end: the job then runs on its own)
        let _ = procs::ready_then_wait();
    }
    world.barrier();
    let start = Instant::now();
    let timeout = Duration::from_secs_f64(args.timeout);
    for phase in 0..args.job.phases {
        compute.phase(&mut rng);
        let got = match args.job.pattern.as_str() {
            "news" => exchange(world, wait, &to, phase),
            "transpose" => all_to_all(world, wait, phase),
            _ => Vec::new(),
        };
        if let Some(bad) = got.iter().find(|&&w| w != phase) {
            return Err(format!("rank {me}: phase {phase} received {bad}"));
        }
        wait.barrier(world);
        if start.elapsed() > timeout {
            println!("TIMEOUT rank={me} phase={phase}");
            let _ = std::io::stdout().flush();
            world.abort(4);
        }
    }
    // the closing barrier is timed, so each strategy waits for it its own way
    wait.barrier(world);
    let wall = start.elapsed().as_secs_f64();
    let s = waiter.stats();
    let mine = [s.blocks, s.spin_successes];
    let mut sum = [0u64; 2];
    world.all_reduce_into(&mine[..], &mut sum[..], SystemOperation::sum());
    if me == 0 {
        println!(
            "RESULT wall_s={wall} blocks={} spin_successes={}",
            sum[0], sum[1]
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_partners_are_grid_neighbours() {
        // 2x2 torus: 0's north and south are 2, east and west 1
        assert_eq!(partners("news", 0, 4), vec![2, 1]);
        // 2 ranks: one row of two, the east and west neighbour are the same rank
        assert_eq!(partners("news", 0, 2), vec![1]);
        assert_eq!(partners("news", 1, 2), vec![0]);
        // 3x3: 4 in the middle has 1, 5, 7, 3
        assert_eq!(partners("news", 4, 9), vec![1, 5, 7, 3]);
        assert!(partners("news", 0, 1).is_empty());
        assert!(partners("barrier", 0, 4).is_empty());
        assert!(partners("transpose", 0, 4).is_empty());
    }

    #[test]
    fn news_partners_are_symmetric_and_never_self() {
        for p in 1..=24 {
            for me in 0..p {
                for q in partners("news", me, p) {
                    assert!(q < p && q != me, "p={p} me={me} q={q}");
                    assert!(
                        partners("news", q, p).contains(&me),
                        "p={p}: {me} sends to {q}, which does not receive from it"
                    );
                }
            }
        }
    }

    #[test]
    fn native_strategies() {
        assert!(is_native("mpi") && is_native("mpi-yield"));
        assert!(!is_native("global") && !is_native("block"));
    }
}
