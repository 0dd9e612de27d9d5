//! The work of a cell: calibrated busy work, the loop every gang member runs, the threads of
//! one gang under each method (the same in one process and in a gang's own process), and the
//! CPU-time measurements.

use rand::{rngs::StdRng, RngExt, SeedableRng};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::thread::Scope;
use std::time::Instant;

use asat::{CpuSet, Runtime};
use asat_peers::spin::SpinBarrier;

/// Calibrated busy work: `work(us)` computes for about `us` microseconds of CPU time.
#[derive(Clone, Copy)]
pub struct Work {
    /// Loops of [`spin_loops`] per microsecond.
    pub loops_per_us: f64,
}

#[inline(never)]
fn spin_loops(n: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..n {
        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
    }
    x
}

impl Work {
    pub fn calibrate() -> Work {
        let n = 2_000_000u64;
        let mut best = f64::MAX;
        for _ in 0..7 {
            let t = Instant::now();
            std::hint::black_box(spin_loops(n));
            best = best.min(t.elapsed().as_secs_f64() * 1e6);
        }
        Work {
            loops_per_us: n as f64 / best,
        }
    }

    #[inline]
    pub fn run(&self, us: f64) {
        std::hint::black_box(spin_loops((us * self.loops_per_us) as u64));
    }
}

/// What the members of one gang share in a cell.
pub struct GangState {
    /// Iterations member 0 has finished.
    pub iters: AtomicU64,
    /// The iteration every member quits at (`u64::MAX` until `stop` is seen).
    pub quit_at: AtomicU64,
}

impl GangState {
    /// No iteration done, no quitting decided.
    pub fn new() -> GangState {
        GangState {
            iters: AtomicU64::new(0),
            quit_at: AtomicU64::new(u64::MAX),
        }
    }
}

/// The loop every member runs: work, barrier, until member 0 has seen `stop` (the iteration to
/// quit at is published before a barrier, so every member quits at the same one).
#[allow(clippy::too_many_arguments)]
fn member_loop(
    member: usize,
    seed: u64,
    work: Work,
    grain: f64,
    var: f64,
    (iters, quit_at): (&AtomicU64, &AtomicU64),
    stop: &AtomicBool,
    barrier: &dyn Fn(),
) {
    // One generator per thread for the U(0, VAR) draws.
    let mut rng = StdRng::seed_from_u64(seed);
    let mut j = 0u64;
    loop {
        work.run(
            grain
                + if var > 0.0 {
                    rng.random_range(0.0..var)
                } else {
                    0.0
                },
        );
        if member == 0 {
            if stop.load(Ordering::Relaxed) && quit_at.load(Ordering::Relaxed) == u64::MAX {
                quit_at.store(j + 1, Ordering::Relaxed);
            }
            iters.fetch_add(1, Ordering::Relaxed);
        }
        barrier();
        j += 1;
        if j >= quit_at.load(Ordering::Relaxed) {
            break;
        }
    }
}

/// Pins the calling thread to `cpu` (best effort: a CPU the kernel refuses is ignored).
pub fn pin(cpu: usize) {
    let _ = CpuSet::from_iter([cpu]).bind_current_thread();
}

/// One gang of a cell: gang number `g` (it seeds the members' draws), `n` threads, its method.
pub struct OneGang<'a> {
    /// The gang's number in the cell.
    pub g: usize,
    /// Threads (members).
    pub n: usize,
    /// `gang-spin`, `os-spin` or `os-block`.
    pub method: &'a str,
    /// The gang's runtime (gang policy), for `gang-spin`.
    pub runtime: Option<&'a Runtime>,
    /// The CPUs: member `m` of an `os-*` gang is pinned to `cpus[m % cpus.len()]`.
    pub cpus: &'a [usize],
    /// The work and its GRAIN and VAR, us.
    pub work: Work,
    pub grain: f64,
    pub var: f64,
    /// The gang's iteration counter (member 0 counts) and the iteration its members quit at.
    pub iters: &'a AtomicU64,
    pub quit_at: &'a AtomicU64,
    /// Set when the cell ends.
    pub stop: &'a AtomicBool,
    /// The gang's barriers for `os-spin` and `os-block`.
    pub spin: &'a SpinBarrier,
    pub block: &'a Barrier,
}

impl<'a> OneGang<'a> {
    /// Starts the gang's threads in `s`: for `gang-spin` one thread that runs the member loop
    /// as a region of the runtime (its team barrier busy-waits), else `n` threads pinned as
    /// the gang-spin members are, passing the spin or the blocking barrier.
    pub fn spawn<'s>(self, s: &'s Scope<'s, '_>)
    where
        'a: 's,
    {
        let OneGang {
            g,
            n,
            method,
            runtime,
            cpus,
            work,
            grain,
            var,
            iters,
            quit_at,
            stop,
            spin,
            block,
        } = self;
        match (method, runtime) {
            ("gang-spin", Some(rt)) => {
                s.spawn(move || {
                    rt.region(|team| {
                        let m = team.index();
                        member_loop(
                            m,
                            (g * 1000 + m) as u64 + 7,
                            work,
                            grain,
                            var,
                            (iters, quit_at),
                            stop,
                            &|| team.barrier(),
                        );
                    })
                });
            }
            _ => {
                for m in 0..n {
                    let cpu = cpus[m % cpus.len()];
                    let blocking = method == "os-block";
                    s.spawn(move || {
                        pin(cpu);
                        let barrier = || {
                            if blocking {
                                block.wait();
                            } else {
                                spin.wait();
                            }
                        };
                        member_loop(
                            m,
                            (g * 1000 + m) as u64 + 7,
                            work,
                            grain,
                            var,
                            (iters, quit_at),
                            stop,
                            &barrier,
                        );
                    });
                }
            }
        }
    }
}

/// User plus system CPU time of this process, seconds.
pub fn process_cpu_seconds() -> f64 {
    cpu_seconds(libc::RUSAGE_SELF)
}

/// User plus system CPU time of `who` (`RUSAGE_SELF`: every thread of the process;
/// `RUSAGE_THREAD`: the calling thread), seconds.
pub fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: all-zeroes is a valid rusage for getrusage to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage; `who` is RUSAGE_SELF or RUSAGE_THREAD.
    unsafe { libc::getrusage(who, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The processor time one episode of the os-block barrier costs each thread, in microseconds:
/// `n` threads pinned as in the experiment pass `std::sync::Barrier` with no work between, and
/// their own CPU time (user + system) is divided by episodes times threads. Median of five
/// (single runs on this VM range from 3 to 8 us).
///
/// This is the blocking cost of the model's eq. 12, `(n - 1)/n alpha tau_cs` per thread and
/// iteration: the model charges blocking as processor time that the `l` gangs share, not as
/// wake-up latency, which on a loaded machine the other gangs' work overlaps. (Measured with a
/// compute-bound thread beside each member instead, the cost came out higher, 8.5-9.8 us, and
/// the model further from the load-3 data.)
pub fn block_barrier_cpu_us(cpus: &[usize], n: usize) -> f64 {
    let mut runs: Vec<f64> = (0..5).map(|_| block_barrier_cpu_once(cpus, n)).collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn block_barrier_cpu_once(cpus: &[usize], n: usize) -> f64 {
    const EPISODES: u32 = 5_000;
    let barrier = Barrier::new(n);
    std::thread::scope(|s| {
        let members: Vec<_> = (0..n)
            .map(|m| cpus[m % cpus.len()])
            .map(|cpu| {
                let barrier = &barrier;
                s.spawn(move || {
                    pin(cpu);
                    barrier.wait();
                    let cpu0 = cpu_seconds(libc::RUSAGE_THREAD);
                    for _ in 0..EPISODES {
                        barrier.wait();
                    }
                    cpu_seconds(libc::RUSAGE_THREAD) - cpu0
                })
            })
            .collect();
        let total: f64 = members.into_iter().map(|h| h.join().unwrap()).sum();
        total * 1e6 / (f64::from(EPISODES) * n as f64)
    })
}
