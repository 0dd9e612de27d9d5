//! The registry of policies that `ASAT_POLICY` names: every entry, asat-core's and those of
//! the crates `asat` links (pools, gang), builds a policy that runs the usual calls, and the
//! README lists every name. Its own process: the gang entry installs the gang stop signal's
//! handler.

use std::sync::atomic::{AtomicUsize, Ordering};

use asat::prelude::*;
use asat::{parse_policy, policies, Runtime};

#[test]
fn the_crates_linked_in_add_their_policies() {
    let names: Vec<&str> = policies().iter().map(|e| e.name).collect();
    assert_eq!(
        &names[..3],
        ["fixed", "single", "asat"],
        "asat-core's first"
    );
    for name in ["gang", "pools"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let e = parse_policy("pools:big").unwrap_err().to_string();
    assert!(e.contains("pool kind \"big\""), "{e}");
    let e = parse_policy("gang:2").unwrap_err().to_string();
    assert!(e.contains("pools, pools:KIND") && e.contains("gang"), "{e}");
}

#[test]
fn every_registered_policy_runs_joins_loops_and_regions() {
    for entry in policies() {
        let policy = parse_policy(entry.name).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        assert_eq!(policy.name(), entry.name);
        let rt = Runtime::builder()
            .max_threads(2)
            .shared_policy(policy)
            .build()
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let members = AtomicUsize::new(0);
        rt.region(|_| {
            members.fetch_add(1, Ordering::Relaxed);
        });
        assert!((1..=2).contains(&members.into_inner()), "{}", entry.name);
        let (a, sum) =
            rt.install_here(|| asat::join(|| 1, || (0..10_000u64).into_par_iter().sum::<u64>()));
        assert_eq!((a, sum), (1, 49_995_000), "{}", entry.name);
    }
}

#[test]
fn the_readme_names_every_policy() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `ASAT_POLICY` |"))
        .expect("the README's table has a row for ASAT_POLICY");
    for e in policies() {
        assert!(
            row.contains(&format!("`{}`", e.name)),
            "{} is missing: {row}",
            e.name
        );
    }
}
