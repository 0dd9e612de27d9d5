//! One suite of runtime behaviour, run against every policy (as tokio's `rt_test!`).
//!
//! To add a policy, add a line to the `policy_suite!` invocation at the bottom: a module name
//! and an expression building a `Runtime` with it.

// The helpers of every test file (`tests/common`) lie outside this suite's folder: only a
// path reaches them.
// asat-core's test helpers, for a policy and threads of the facade's runtime.
#[path = "../../crates/asat-core/tests/common/mod.rs"]
mod common;
mod iter_core;
mod iter_extra;
mod iter_more;
mod nested;
mod pool_api;
mod runtime_api;

macro_rules! policy_suite {
    ($($name:ident => $build:expr;)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                fn rt() -> asat::Runtime {
                    $build
                }

                #[test]
                fn nested_chains_equal_the_sequential_result() {
                    super::nested::nested_chains(&rt());
                }

                #[test]
                fn unbalanced_recursion_equals_the_sequential_result() {
                    super::nested::unbalanced_recursion(&rt());
                }

                #[test]
                fn every_index_runs_once_under_every_schedule() {
                    super::runtime_api::every_index_runs_once(&rt());
                }

                #[test]
                fn region_members_meet_at_barriers() {
                    super::runtime_api::members_meet_at_barriers(&rt());
                }

                #[test]
                fn reductions_equal_the_serial_result() {
                    super::runtime_api::reductions_equal_serial(&rt());
                }

                #[test]
                fn reductions_of_owned_large_and_nested_values() {
                    super::runtime_api::reductions_of_owned_values(&rt());
                }

                #[test]
                fn panics_propagate_and_the_runtime_stays_usable() {
                    super::runtime_api::panics_propagate(&rt());
                }

                #[test]
                fn nested_regions_run_inline() {
                    super::runtime_api::nested_inline(&rt());
                }

                #[test]
                fn several_user_threads_share_one_runtime() {
                    super::runtime_api::several_callers(&rt());
                }

                #[test]
                fn slices_are_split_disjointly() {
                    super::runtime_api::slices_split(&rt());
                }

                #[test]
                fn iter_sum_equals_the_serial_sum() {
                    super::iter_core::iter_sum(&rt());
                }

                #[test]
                fn iter_collect_keeps_the_order() {
                    super::iter_core::iter_collect_in_order(&rt());
                }

                #[test]
                fn iter_par_iter_mut_updates_every_item_once() {
                    super::iter_core::iter_par_iter_mut(&rt());
                }

                #[test]
                fn iter_zips_pair_items_by_index() {
                    super::iter_core::iter_zips(&rt());
                }

                #[test]
                fn iter_filtered_collect_keeps_the_order() {
                    super::iter_core::iter_filtered_collect(&rt());
                }

                #[test]
                fn iter_panics_propagate_and_the_runtime_stays_usable() {
                    super::iter_core::iter_panics_propagate(&rt());
                }

                #[test]
                fn iter_sorts_equal_std_and_survive_a_panicking_comparator() {
                    super::iter_more::iter_sorts(&rt());
                }

                #[test]
                fn iter_scope_runs_every_job_and_reraises_panics() {
                    super::iter_more::iter_scope(&rt());
                }

                #[test]
                fn iter_scope_broadcasts_reach_every_member() {
                    super::iter_more::iter_scope_broadcast(&rt());
                }

                #[test]
                fn iter_split_and_tree_walks_keep_rayons_order() {
                    super::iter_more::iter_recursive(&rt());
                }

                #[test]
                fn iter_blocks_run_in_rounds_and_searches_stop() {
                    super::iter_more::iter_blocks(&rt());
                }

                #[test]
                fn iter_try_forms_return_the_failure_and_stop() {
                    super::iter_extra::iter_try(&rt());
                }

                #[test]
                fn iter_more_adapters_equal_std() {
                    super::iter_extra::iter_adapters_extra(&rt());
                }

                #[test]
                fn iter_scope_variants_run_every_job() {
                    super::iter_extra::iter_scope_variants(&rt());
                }

                #[test]
                fn iter_collections_yield_their_items() {
                    super::iter_extra::iter_collections(&rt());
                }

                #[test]
                fn iter_slice_and_string_sources_equal_std() {
                    super::iter_extra::iter_strings(&rt());
                }

                #[test]
                fn broadcast_runs_op_once_per_member_of_the_team() {
                    super::pool_api::broadcast(&rt());
                }

                #[test]
                fn spawned_jobs_run_once_on_their_runtime() {
                    super::pool_api::spawn(&rt());
                }

                #[test]
                fn install_runs_on_a_thread_of_the_runtime() {
                    super::pool_api::install(&rt());
                }
            }
        )*
    };
}

use asat::{Runtime, Schedule};

/// The schedules the cases run their loops under.
const SCHEDULES: [Schedule; 7] = [
    Schedule::Static,
    Schedule::StaticChunked { chunk: 1 },
    Schedule::StaticChunked { chunk: 7 },
    Schedule::Dynamic { chunk: 1 },
    Schedule::Dynamic { chunk: 7 },
    Schedule::Guided { min_chunk: 1 },
    Schedule::Guided { min_chunk: 5 },
];

/// A runtime whose team is a gang of a scheduler that lives as long as the test process: one
/// in-process scheduler, or one that joins a shared domain (its file in a folder of this suite,
/// one per user and reused by later runs, so that other programs are not in it).
fn gang_runtime(shared: bool) -> asat::Runtime {
    use asat::gang::GangScheduler;
    use std::sync::OnceLock;
    static IN_PROCESS: OnceLock<GangScheduler> = OnceLock::new();
    static SHARED: OnceLock<GangScheduler> = OnceLock::new();
    let build = || {
        let b = GangScheduler::builder().quantum(std::time::Duration::from_millis(5));
        match shared {
            true => {
                // SAFETY: getuid has no preconditions.
                let uid = unsafe { libc::getuid() };
                b.shared_dir(std::env::temp_dir().join(format!("asat-policy-suite-u{uid}")))
            }
            false => b,
        }
        .build()
        .unwrap()
    };
    let s = match shared {
        true => SHARED.get_or_init(build),
        false => IN_PROCESS.get_or_init(build),
    };
    Runtime::builder()
        .max_threads(s.cpus().len().min(3))
        .policy(s.policy())
        .build()
        .unwrap()
}

/// A runtime whose policy is processor pools of one CPU each on this machine, pinning its
/// threads, with a load table of its own (tests running at once do not see each other's
/// threads in it).
fn pools_runtime() -> asat::Runtime {
    use asat::pools::{LocalLoads, PoolKind, PoolPolicy, Topology};
    let topo = Topology::detect().unwrap();
    let pools = topo.pools(PoolKind::Size(1)).unwrap();
    let table = std::sync::Arc::new(LocalLoads::new(pools.len()));
    let n = topo.usable_cpus().len().clamp(2, 3);
    let policy = PoolPolicy::builder(pools)
        .table(table)
        .desired(n)
        .build()
        .unwrap();
    Runtime::builder()
        .max_threads(n)
        .policy(policy)
        .build()
        .unwrap()
}

policy_suite! {
    pools => pools_runtime();
    gang_in_process => gang_runtime(false);
    gang_shared => gang_runtime(true);
    fixed_all => Runtime::builder().max_threads(2).policy(asat::Fixed::all()).build().unwrap();
    fixed_four => Runtime::builder().max_threads(4).policy(asat::Fixed::new(4)).build().unwrap();
    single => Runtime::builder().max_threads(2).policy(asat::Single).build().unwrap();
    changing_sizes => Runtime::builder()
        .max_threads(3)
        .shared_policy(std::sync::Arc::new(common::Scripted::new(vec![3, 1, 2])))
        .build()
        .unwrap();
    asat_policy => Runtime::builder().max_threads(2).policy(asat::Asat::new()).build().unwrap();
    asat_eager => Runtime::builder()
        .max_threads(3)
        .policy(asat::Asat::with_config(asat::AsatConfig {
            eval_interval: std::time::Duration::from_micros(1),
            good_trig: 1,
            ..asat::AsatConfig::default()
        }))
        .build()
        .unwrap();
    blocking_waits => Runtime::builder()
        .max_threads(3)
        .wait(asat::SpinThenPark::new(std::time::Duration::ZERO))
        .build()
        .unwrap();
}
