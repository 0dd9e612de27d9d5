//! What one rank does in each scenario; it writes its findings as `key=value` lines to
//! `rank-<world rank>.txt` in `ASAT_MPI_TEST_OUT`, once it has finished (a missing file fails
//! the driver's test).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use asat_core::{CpuSet, Schedule};
use asat_implicit::{AnyStrategy, Config, TwoPhase};
use asat_mpi::mpi::collective::SystemOperation;
use asat_mpi::mpi::datatype::Equivalence;
use asat_mpi::mpi::traits::*;
use asat_mpi::{Hybrid, Threading, Waiter};

use crate::pattern;

/// The strategies the exchange scenario runs, one after the other; `mixed:a/b/c` gives rank
/// `r` the `r % 3`-th of the list (with and without a strategy that learns at barriers, so
/// that the ranks' barriers settle on either collective).
pub const STRATEGIES: [&str; 9] = [
    "block",
    "spin",
    "fixed",
    "fixed:20",
    "oracle:100",
    "local",
    "global",
    "mixed:block/global/spin",
    "mixed:fixed/local/spin",
];

/// The strategy of `rank` for an entry of [`STRATEGIES`].
pub fn strategy_name(entry: &str, rank: usize) -> &str {
    match entry.strip_prefix("mixed:") {
        Some(list) => {
            let names: Vec<&str> = list.split('/').collect();
            names[rank % names.len()]
        }
        None => entry,
    }
}
pub const ROUNDS: u64 = 30;
pub const SEED: u64 = 0xa5a7;

/// Runs `scenario` as this rank.
pub fn run(scenario: &str) {
    let mut out = String::new();
    match scenario {
        "exchange" => with_hybrid(Hybrid::builder(), &mut out, exchange),
        "node" => with_hybrid(Hybrid::builder(), &mut out, node),
        "hybrid" => with_hybrid(Hybrid::builder(), &mut out, hybrid),
        "errors" => errors(&mut out),
        "bad_env" => {
            let e = Hybrid::builder()
                .build()
                .expect_err("a bad ASAT_MPI_* value is refused");
            writeln!(out, "error={e}").unwrap();
            writeln!(out, "initialized={}", asat_mpi::mpi::is_initialized()).unwrap();
        }
        other => panic!("unknown scenario {other:?}"),
    }
    let dir = std::env::var("ASAT_MPI_TEST_OUT").expect("ASAT_MPI_TEST_OUT is set");
    let rank = std::env::var("OMPI_COMM_WORLD_RANK").expect("run by Open MPI's mpirun");
    std::fs::write(format!("{dir}/rank-{rank}.txt"), out).expect("findings written");
}

/// Builds the hybrid start-up and runs `body`; a panic in `body` aborts the whole job (the
/// other ranks would otherwise wait for this one's messages until the driver's timeout).
fn with_hybrid(builder: asat_mpi::HybridBuilder, out: &mut String, body: fn(&Hybrid, &mut String)) {
    let hybrid = builder.build().expect("the hybrid start-up");
    let world_rank = hybrid.world().rank();
    writeln!(out, "world_rank={world_rank}").unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&hybrid, out)));
    if r.is_err() {
        eprintln!("rank {world_rank}: the scenario panicked; aborting the job");
        hybrid.world().abort(3);
    }
}

fn strategy_for(entry: &str, rank: usize, config: &Config) -> AnyStrategy {
    AnyStrategy::by_name(strategy_name(entry, rank), config).expect("a known strategy")
}

/// Random exchange patterns under every strategy: every message arrives intact, with its
/// status, whichever wait completes it; every round ends with a barrier and an all-reduce
/// (a sum or a maximum) whose result every rank checks.
fn exchange(hybrid: &Hybrid, out: &mut String) {
    let world = hybrid.world();
    let (me, np) = (world.rank() as usize, world.size() as usize);
    let config = Config::builder()
        .context_switch(Duration::from_micros(20))
        .build()
        .unwrap();
    for (si, name) in STRATEGIES.iter().enumerate() {
        let seed = SEED + si as u64;
        let waiter = Waiter::new(strategy_for(name, me, &config));
        let (mut received, mut bad, mut imbalances) = (0usize, 0usize, 0u64);
        let mut bad_reductions = 0u64;
        for round in 0..ROUNDS {
            let msgs = pattern::round(seed, round, np);
            let incoming: Vec<_> = msgs.iter().filter(|m| m.dst == me).copied().collect();
            let outgoing: Vec<_> = msgs.iter().filter(|m| m.src == me).copied().collect();
            let sends: Vec<Vec<u64>> = outgoing
                .iter()
                .map(|m| {
                    (0..m.len)
                        .map(|j| pattern::word(seed, round, m, j))
                        .collect()
                })
                .collect();
            let mut recvs: Vec<Vec<u64>> = incoming.iter().map(|m| vec![0; m.len]).collect();
            let statuses = asat_mpi::mpi::request::scope(|scope| {
                let r: Vec<_> = incoming
                    .iter()
                    .zip(recvs.iter_mut())
                    .map(|(m, buf)| {
                        world
                            .process_at_rank(m.src as i32)
                            .immediate_receive_into_with_tag(scope, &mut buf[..], m.tag)
                    })
                    .collect();
                let s: Vec<_> = outgoing
                    .iter()
                    .zip(&sends)
                    .map(|(m, buf)| {
                        world.process_at_rank(m.dst as i32).immediate_send_with_tag(
                            scope,
                            &buf[..],
                            m.tag,
                        )
                    })
                    .collect();
                // the three ways to complete an exchange, in turn
                match round % 3 {
                    0 => {
                        let st = waiter.wait_all(r);
                        waiter.wait_all(s);
                        st
                    }
                    1 => {
                        let st = r.into_iter().map(|q| waiter.wait(q)).collect();
                        for q in s {
                            waiter.wait(q);
                        }
                        st
                    }
                    _ => {
                        let n = r.len();
                        let mut all = r;
                        all.extend(s);
                        let mut st = waiter.wait_all(all);
                        st.truncate(n);
                        st
                    }
                }
            });
            for ((m, buf), st) in incoming.iter().zip(&recvs).zip(&statuses) {
                received += 1;
                let words_ok = buf
                    .iter()
                    .enumerate()
                    .all(|(j, &w)| w == pattern::word(seed, round, m, j));
                let status_ok = st.source_rank() == m.src as i32
                    && st.tag() == m.tag
                    && st.count(u64::equivalent_datatype()) == m.len as i32;
                if !words_ok || !status_ok {
                    bad += 1;
                }
            }
            let work = Duration::from_micros(pattern::work_us(seed, round, me));
            let t = Instant::now();
            while t.elapsed() < work {
                std::hint::spin_loop();
            }
            if waiter
                .barrier(world)
                .expect("barriers from one thread")
                .is_some()
            {
                imbalances += 1;
            }
            let send = pattern::contribution(seed, round, me);
            let mut got = [0u64; 4];
            let op = if round % 2 == 0 {
                SystemOperation::sum()
            } else {
                SystemOperation::max()
            };
            waiter
                .all_reduce_into(world, &send[..], &mut got[..], op)
                .expect("buffers of one length and type");
            if got != pattern::reduced(seed, round, np) {
                bad_reductions += 1;
            }
        }
        let s = waiter.stats();
        writeln!(out, "[{name}]").unwrap();
        writeln!(out, "strategy={}", waiter.strategy().name()).unwrap();
        writeln!(out, "received={received}").unwrap();
        writeln!(out, "bad={bad}").unwrap();
        writeln!(out, "returned_imbalances={imbalances}").unwrap();
        writeln!(out, "waits={}", s.waits).unwrap();
        writeln!(out, "barriers={}", s.barriers).unwrap();
        writeln!(out, "reductions={}", s.reductions).unwrap();
        writeln!(out, "bad_reductions={bad_reductions}").unwrap();
        writeln!(out, "immediate={}", s.immediate).unwrap();
        writeln!(out, "spin_successes={}", s.spin_successes).unwrap();
        writeln!(out, "blocks={}", s.blocks).unwrap();
        writeln!(out, "naps={}", s.naps).unwrap();
        writeln!(out, "yields={}", s.yields).unwrap();
        writeln!(out, "imbalances={}", s.imbalances).unwrap();
        writeln!(out, "has_estimate={}", s.imbalance.is_some()).unwrap();
    }
}

/// This rank's share of the node, and the runtime built within it.
fn node(hybrid: &Hybrid, out: &mut String) {
    let s = hybrid.share();
    writeln!(out, "local_rank={}", s.local_rank).unwrap();
    writeln!(out, "local_size={}", s.local_size).unwrap();
    writeln!(out, "node_comm_rank={}", hybrid.node_comm().rank()).unwrap();
    writeln!(out, "node_comm_size={}", hybrid.node_comm().size()).unwrap();
    writeln!(out, "kind={:?}", s.kind).unwrap();
    writeln!(out, "cpus={}", list(&s.cpus)).unwrap();
    writeln!(out, "node_cpus={}", list(&s.node_cpus)).unwrap();
    writeln!(out, "threads={}", s.threads).unwrap();
    let mask = CpuSet::of_current_thread().expect("the mask");
    writeln!(out, "mask_after={}", list(&mask)).unwrap();
    writeln!(out, "threading={:?}", hybrid.threading()).unwrap();
    writeln!(out, "max_threads={}", hybrid.max_threads()).unwrap();
    let rt = hybrid
        .runtime_builder()
        .build()
        .expect("a runtime within the share");
    writeln!(out, "runtime_max_threads={}", rt.max_threads()).unwrap();
    let largest = std::sync::atomic::AtomicUsize::new(0);
    for _ in 0..20 {
        rt.region(|team| {
            largest.fetch_max(team.size(), std::sync::atomic::Ordering::Relaxed);
            team.for_each(0..1000, Schedule::Static, |i| {
                std::hint::black_box(i);
            });
        });
    }
    writeln!(out, "largest_team={}", largest.into_inner()).unwrap();
    // the node is reached through the communicator: every rank of it sums to local_size
    let mut total = 0i32;
    hybrid.node_comm().all_reduce_into(
        &1i32,
        &mut total,
        asat_mpi::mpi::collective::SystemOperation::sum(),
    );
    writeln!(out, "node_sum={total}").unwrap();
}

/// Points of the periodic 1-D stencil each rank owns, and its iterations.
const PER_RANK: usize = 3000;
const STEPS: usize = 40;

fn start_value(g: usize) -> f64 {
    ((g * 7919) % 1000) as f64 / 1000.0
}

/// One step of the 3-point average on `x` (halos at both ends) into `next`, by the runtime.
fn stencil(rt: &asat_core::Runtime, x: &[f64], next: &mut [f64]) {
    let len = x.len();
    rt.parallel_slice_mut(
        &mut next[1..len - 1],
        Schedule::dynamic(64),
        |start, out| {
            for (j, y) in out.iter_mut().enumerate() {
                let i = start + j + 1;
                *y = (x[i - 1] + x[i] + x[i + 1]) / 3.0;
            }
        },
    );
}

/// A hybrid program: a periodic 3-point stencil whose points are split among the ranks, each
/// rank's part computed by a runtime of 2 threads (parallel loops on the thread that started
/// MPI, MPI only between them: funneled), the halos exchanged through the waiter, a barrier
/// every 5 steps. Every rank then runs the whole stencil serially and compares its part.
fn hybrid(h: &Hybrid, out: &mut String) {
    let world = h.world();
    let (me, np) = (world.rank() as usize, world.size() as usize);
    let rt = h
        .runtime_builder()
        .max_threads(2)
        .build()
        .expect("a runtime");
    let left = world.process_at_rank(((me + np - 1) % np) as i32);
    let right = world.process_at_rank(((me + 1) % np) as i32);
    let mut x = vec![0.0; PER_RANK + 2];
    for (i, v) in x[1..=PER_RANK].iter_mut().enumerate() {
        *v = start_value(me * PER_RANK + i);
    }
    let mut next = x.clone();
    for step in 0..STEPS {
        {
            let (lo, rest) = x.split_at_mut(1);
            let (mid, hi) = rest.split_at_mut(PER_RANK);
            let (first, last) = (&mid[..1], &mid[PER_RANK - 1..]);
            asat_mpi::mpi::request::scope(|scope| {
                // tag 0 travels left and lands in the right halo; tag 1 the other way
                let reqs = vec![
                    left.immediate_receive_into_with_tag(scope, lo, 1),
                    right.immediate_receive_into_with_tag(scope, hi, 0),
                    left.immediate_send_with_tag(scope, first, 0),
                    right.immediate_send_with_tag(scope, last, 1),
                ];
                h.waiter().wait_all(reqs);
            });
        }
        stencil(&rt, &x, &mut next);
        std::mem::swap(&mut x, &mut next);
        if step % 5 == 4 {
            h.waiter().barrier(world).expect("barriers from one thread");
        }
    }
    let single = asat_core::Runtime::builder()
        .max_threads(1)
        .build()
        .expect("a runtime");
    let n = PER_RANK * np;
    let mut whole: Vec<f64> = (0..n + 2).map(|g| start_value((g + n - 1) % n)).collect();
    let mut whole_next = whole.clone();
    for _ in 0..STEPS {
        whole[0] = whole[n];
        whole[n + 1] = whole[1];
        stencil(&single, &whole, &mut whole_next);
        std::mem::swap(&mut whole, &mut whole_next);
    }
    let mine = &whole[1 + me * PER_RANK..1 + (me + 1) * PER_RANK];
    let mismatches = mine
        .iter()
        .zip(&x[1..=PER_RANK])
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    writeln!(out, "mismatches={mismatches}").unwrap();
    writeln!(out, "runtime_max_threads={}", rt.max_threads()).unwrap();
    let s = h.waiter().stats();
    writeln!(out, "waits={}", s.waits).unwrap();
    writeln!(out, "barriers={}", s.barriers).unwrap();
}

/// A CPU list as `a b c` (the `,` and `-` of CpuSet's Display are kept for humans).
fn list(s: &CpuSet) -> String {
    s.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Settings refused before MPI is touched, a second start-up while one is alive, all-reduces
/// into buffers that do not match, and a start-up after MPI was finalised.
fn errors(out: &mut String) {
    let e = Hybrid::builder()
        .threading(Threading::Single)
        .build()
        .expect_err("single is refused");
    writeln!(out, "single={e}").unwrap();
    writeln!(
        out,
        "initialized_after_refusal={}",
        asat_mpi::mpi::is_initialized()
    )
    .unwrap();
    let e = Hybrid::builder()
        .strategy("sometimes")
        .build()
        .expect_err("an unknown strategy is refused");
    writeln!(out, "strategy={e}").unwrap();
    let first = Hybrid::builder().build().expect("the first start-up");
    writeln!(out, "world_rank={}", first.world().rank()).unwrap();
    let e = Hybrid::builder().build().expect_err("a second start-up");
    writeln!(out, "second={e}").unwrap();
    writeln!(out, "second_kind={}", e.is_already_initialized()).unwrap();
    // a reduction into a buffer of another length or type is refused before it starts
    let w = first.waiter();
    let (send, mut short, mut other) = ([1u64; 4], [0u64; 3], [0f64; 4]);
    let e = w
        .all_reduce_into(
            first.world(),
            &send[..],
            &mut short[..],
            SystemOperation::sum(),
        )
        .expect_err("a shorter receive buffer");
    writeln!(out, "reduce_length={e}").unwrap();
    let e = w
        .all_reduce_into(
            first.world(),
            &send[..],
            &mut other[..],
            SystemOperation::sum(),
        )
        .expect_err("a receive buffer of another type");
    writeln!(out, "reduce_type={e}").unwrap();
    writeln!(
        out,
        "reduce_untouched={}",
        short == [0; 3] && other == [0.0; 4]
    )
    .unwrap();
    writeln!(out, "reduce_counted={}", w.stats().waits).unwrap();
    // the first still works
    first
        .waiter()
        .barrier(first.world())
        .expect("barriers from one thread");
    drop(first);
    let e = Hybrid::builder()
        .build()
        .expect_err("a start-up after finalisation");
    writeln!(out, "after_finalize={e}").unwrap();
}
