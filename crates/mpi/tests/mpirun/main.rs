//! asat-mpi's tests that need ranks: each test launches `mpirun -np 2` or `-np 3` on this test
//! binary (see `launch.rs`), whose ignored test `rank` runs a scenario as one rank
//! (`ranks.rs`), and checks every rank's findings. Each run is bounded in time (a hang fails
//! the test, and its processes are killed). Needs Open MPI's `mpirun` on the PATH.

mod launch;
mod pattern;
mod ranks;

use std::collections::BTreeSet;

use asat_core::CpuSet;
use asat_mpi::{NodeShare, ShareKind};
use launch::{mpirun, Findings};
use ranks::{strategy_name, ROUNDS, SEED, STRATEGIES};

/// One rank of the tests below, run by them under mpirun.
#[test]
#[ignore = "one rank of the mpirun tests: they run it under mpirun"]
fn rank() {
    let scenario = std::env::var("ASAT_MPI_TEST_SCENARIO")
        .expect("ASAT_MPI_TEST_SCENARIO: this test is a rank of the mpirun tests, run by them");
    ranks::run(&scenario);
}

fn get<'a>(f: &'a Findings, rank: usize, key: &str) -> &'a str {
    f[&rank]
        .get(key)
        .unwrap_or_else(|| panic!("rank {rank} did not report {key}: {:?}", f[&rank]))
}

fn num(f: &Findings, rank: usize, key: &str) -> u64 {
    get(f, rank, key)
        .parse()
        .unwrap_or_else(|_| panic!("rank {rank}: {key} is not a number"))
}

fn cpus(f: &Findings, rank: usize, key: &str) -> CpuSet {
    get(f, rank, key)
        .split_whitespace()
        .map(|c| c.parse::<usize>().expect("a CPU number"))
        .collect()
}

/// Every message arrives intact and every all-reduce gives the right values under every
/// strategy (and with the ranks' strategies mixed), no rank hangs, and each waiter's
/// statistics add up to what it was asked to do.
fn check_exchange(np: usize, f: &Findings) {
    for (si, name) in STRATEGIES.iter().enumerate() {
        let seed = SEED + si as u64;
        for r in 0..np {
            let k = |key: &str| num(f, r, &format!("{name}.{key}"));
            let (mut expect_recv, mut expect_waits) = (0, 0);
            for round in 0..ROUNDS {
                let msgs = pattern::round(seed, round, np);
                let inc = msgs.iter().filter(|m| m.dst == r).count() as u64;
                let outg = msgs.iter().filter(|m| m.src == r).count() as u64;
                expect_recv += inc;
                // the barrier and the all-reduce, and the exchange's waits
                expect_waits += 2 + match round % 3 {
                    0 => 2,
                    1 => inc + outg,
                    _ => 1,
                };
            }
            let full = strategy_name(name, r);
            let strategy = full.split(':').next().unwrap_or(full);
            // the barriers learn imbalances when some rank's strategy wants them
            let any_global = (0..np).any(|q| strategy_name(name, q) == "global");
            let ctx = format!("np {np}, strategy {name}, rank {r}: {:?}", f[&r]);
            assert_eq!(get(f, r, &format!("{name}.strategy")), strategy, "{ctx}");
            assert_eq!(k("received"), expect_recv, "{ctx}");
            assert_eq!(k("bad"), 0, "messages arrived wrong: {ctx}");
            assert_eq!(k("barriers"), ROUNDS, "{ctx}");
            assert_eq!(k("reductions"), ROUNDS, "{ctx}");
            assert_eq!(
                k("bad_reductions"),
                0,
                "all-reduces gave wrong values: {ctx}"
            );
            assert_eq!(k("waits"), expect_waits, "{ctx}");
            assert_eq!(
                k("waits"),
                k("immediate") + k("spin_successes") + k("blocks"),
                "{ctx}"
            );
            // then every barrier but a fresh waiter's first (an all-reduce) learns one; else
            // the first settles the ranks on MPI_Ibarrier, which learns none
            let learned = if any_global { ROUNDS - 1 } else { 0 };
            assert_eq!(k("imbalances"), learned, "{ctx}");
            assert_eq!(k("returned_imbalances"), learned, "{ctx}");
            match strategy {
                "block" => assert_eq!(k("spin_successes"), 0, "block never spins: {ctx}"),
                "spin" => assert_eq!(
                    k("blocks") + k("naps") + k("yields"),
                    0,
                    "spin never blocks: {ctx}"
                ),
                _ => {}
            }
            // a block phase yields or naps at least once before its test succeeds
            if k("blocks") == 0 {
                assert_eq!(k("naps") + k("yields"), 0, "{ctx}");
            } else {
                assert!(k("naps") + k("yields") >= k("blocks"), "{ctx}");
            }
            let learns = matches!(strategy, "local" | "global" | "oracle");
            let has = get(f, r, &format!("{name}.has_estimate"));
            assert_eq!(has, learns.to_string(), "imbalance estimate: {ctx}");
        }
    }
}

#[test]
fn exchange_np2() {
    let f = mpirun(2, &[], "exchange", &[]);
    check_exchange(2, &f);
}

#[test]
fn exchange_np3_oversubscribed() {
    let f = mpirun(3, &["--bind-to", "none"], "exchange", &[]);
    check_exchange(3, &f);
}

/// The node-local ranks are found, each gets the share `NodeShare::compute` gives for the
/// masks the ranks had, and its runtime stays within it.
fn check_node(np: usize, f: &Findings, pinned: bool, max_env: Option<usize>) -> Vec<NodeShare> {
    let mut local = BTreeSet::new();
    for r in 0..np {
        let ctx = format!("rank {r}: {:?}", f[&r]);
        assert_eq!(num(f, r, "world_rank"), r as u64, "{ctx}");
        assert_eq!(num(f, r, "local_size"), np as u64, "one node: {ctx}");
        assert_eq!(num(f, r, "node_comm_size"), np as u64, "{ctx}");
        assert_eq!(num(f, r, "node_sum"), np as u64, "{ctx}");
        // the node communicator ranks by world rank
        assert_eq!(num(f, r, "local_rank"), r as u64, "{ctx}");
        assert_eq!(num(f, r, "node_comm_rank"), r as u64, "{ctx}");
        local.insert(num(f, r, "local_rank"));
        assert_eq!(get(f, r, "threading"), "Funneled", "{ctx}");
    }
    assert_eq!(local.len(), np);
    // the masks the ranks had before start-up: unchanged unless pinned
    let masks: Vec<CpuSet> = (0..np)
        .map(|r| {
            let share = cpus(f, r, "cpus");
            let after = cpus(f, r, "mask_after");
            let kind = get(f, r, "kind");
            if pinned {
                assert_eq!(after, share, "rank {r} bound to its share");
                cpus(f, r, "node_cpus") // ranks of these tests all see the node before pinning
            } else {
                if kind == "Bound" {
                    assert_eq!(after, share, "rank {r}'s share is its mask");
                }
                after
            }
        })
        .collect();
    let mut shares = Vec::new();
    let mut taken = CpuSet::new();
    let mut total = 0;
    for (r, _) in masks.iter().enumerate() {
        let want = NodeShare::compute(&masks, None, r);
        let ctx = format!("rank {r}: {:?}, expected {want:?}", f[&r]);
        assert_eq!(cpus(f, r, "cpus"), want.cpus, "{ctx}");
        assert_eq!(cpus(f, r, "node_cpus"), want.node_cpus, "{ctx}");
        assert_eq!(get(f, r, "kind"), format!("{:?}", want.kind), "{ctx}");
        let threads = num(f, r, "threads") as usize;
        // a cgroup quota may lower it
        assert!(threads >= 1 && threads <= want.threads, "{ctx}");
        let bound = max_env.map_or(threads, |m| threads.min(m));
        assert_eq!(num(f, r, "max_threads") as usize, bound, "{ctx}");
        assert_eq!(num(f, r, "runtime_max_threads") as usize, bound, "{ctx}");
        let largest = num(f, r, "largest_team") as usize;
        assert!(largest >= 1 && largest <= bound, "{ctx}");
        if want.kind != ShareKind::Oversubscribed {
            assert!(
                taken.intersection(&want.cpus).is_empty(),
                "shares overlap: {ctx}"
            );
        }
        taken = taken.iter().chain(want.cpus.iter()).collect();
        total += threads;
        shares.push(want);
    }
    if shares.iter().all(|s| s.kind != ShareKind::Oversubscribed) {
        assert!(
            total <= shares[0].node_cpus.len(),
            "the ranks' runtimes oversubscribe the node: {shares:?}"
        );
    }
    shares
}

#[test]
fn node_bound_to_cores_np2() {
    let f = mpirun(2, &["--bind-to", "core:overload-allowed"], "node", &[]);
    let shares = check_node(2, &f, false, None);
    let disjoint = shares[0].cpus.intersection(&shares[1].cpus).is_empty();
    if disjoint {
        assert!(
            shares.iter().all(|s| s.kind == ShareKind::Bound),
            "{shares:?}"
        );
    }
}

#[test]
fn node_unbound_np2_with_asat_max_threads() {
    let f = mpirun(
        2,
        &["--bind-to", "none"],
        "node",
        &[("ASAT_MAX_THREADS", "1")],
    );
    let shares = check_node(2, &f, false, Some(1));
    assert!(
        shares.iter().all(|s| s.kind != ShareKind::Bound),
        "unbound ranks share the node: {shares:?}"
    );
}

#[test]
fn node_unbound_np3_pinned() {
    let f = mpirun(3, &["--bind-to", "none"], "node", &[("ASAT_MPI_PIN", "1")]);
    let shares = check_node(3, &f, true, None);
    assert!(
        shares.iter().all(|s| s.kind != ShareKind::Bound),
        "{shares:?}"
    );
}

/// A hybrid program (runtime loops between MPI exchanges) computes what a serial run does.
#[test]
fn hybrid_stencil_np3() {
    let f = mpirun(3, &["--bind-to", "none"], "hybrid", &[]);
    for r in 0..3 {
        let ctx = format!("rank {r}: {:?}", f[&r]);
        assert_eq!(num(&f, r, "mismatches"), 0, "{ctx}");
        assert_eq!(num(&f, r, "runtime_max_threads"), 2, "{ctx}");
        assert_eq!(num(&f, r, "barriers"), 8, "{ctx}");
        assert_eq!(num(&f, r, "waits"), 40 + 8, "{ctx}");
    }
}

#[test]
fn bad_settings_are_errors_np2() {
    let f = mpirun(2, &[], "errors", &[]);
    for r in 0..2 {
        let ctx = format!("rank {r}: {:?}", f[&r]);
        assert_eq!(
            get(&f, r, "single"),
            "threading level single: asat starts worker threads, so MPI must be initialised \
             funneled, serialized or multiple",
            "{ctx}"
        );
        assert_eq!(get(&f, r, "initialized_after_refusal"), "false", "{ctx}");
        assert!(
            get(&f, r, "strategy").contains("must be one of block, spin, fixed"),
            "{ctx}"
        );
        assert_eq!(num(&f, r, "world_rank"), r as u64, "{ctx}");
        assert!(
            get(&f, r, "second").starts_with("MPI is already initialised in this process"),
            "{ctx}"
        );
        assert_eq!(get(&f, r, "second_kind"), "true", "{ctx}");
        assert_eq!(
            get(&f, r, "reduce_length"),
            "all-reduce of 4 elements into 3: the receive buffer must have the send buffer's \
             length and element type",
            "{ctx}"
        );
        assert_eq!(
            get(&f, r, "reduce_type"),
            "all-reduce of 4 elements into 4 of another MPI datatype: the receive buffer must \
             have the send buffer's length and element type",
            "{ctx}"
        );
        assert_eq!(get(&f, r, "reduce_untouched"), "true", "{ctx}");
        assert_eq!(num(&f, r, "reduce_counted"), 0, "{ctx}");
        assert!(
            get(&f, r, "after_finalize").starts_with("MPI was finalised in this process"),
            "{ctx}"
        );
    }
}

#[test]
fn bad_environment_is_an_error_before_mpi_starts_np2() {
    let f = mpirun(2, &[], "bad_env", &[("ASAT_MPI_WAIT", "sometimes")]);
    for r in 0..2 {
        assert_eq!(
            get(&f, r, "error"),
            "environment variable ASAT_MPI_WAIT=\"sometimes\" is invalid: must be one of \
             block, spin, fixed, fixed:<us>, oracle:<us>, local, global"
        );
        assert_eq!(get(&f, r, "initialized"), "false");
    }
}
