//! `ASAT_POLICY` names a policy of another crate for the global runtime: with `pools`, the
//! global runtime's policy is processor pools. A file of its own: the global runtime is
//! process-wide state, and the variable must be set before anything touches it.

use asat::prelude::*;
use asat::Runtime;

#[test]
fn asat_policy_pools_chooses_processor_pools_for_the_global_runtime() {
    std::env::set_var("ASAT_POLICY", "pools");
    assert_eq!((0..10_000u64).into_par_iter().sum::<u64>(), 49_995_000);
    assert_eq!(Runtime::global().policy().name(), "pools");
    assert_eq!(asat::join(|| 1, || 2), (1, 2));
}
