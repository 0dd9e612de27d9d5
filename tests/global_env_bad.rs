//! A bad `ASAT_POLICY` when the global runtime is first used: the global runtime is built with
//! the defaults instead (the error goes to stderr), and a builder that reads the variable
//! returns the error, naming the allowed policies. A file of its own: the global runtime is
//! process-wide state, and the variable must be set before anything touches it.

use asat::prelude::*;
use asat::{current_num_threads, Runtime, ThreadPoolBuilder};

#[test]
fn a_bad_policy_variable_leaves_the_global_runtime_at_its_defaults() {
    std::env::remove_var("ASAT_MAX_THREADS");
    std::env::set_var("ASAT_POLICY", "bogus");

    // the first use builds the global runtime anyway, with the defaults
    assert_eq!((0..10_000u64).into_par_iter().sum::<u64>(), 49_995_000);
    let global = Runtime::global();
    assert_eq!(global.policy().name(), "fixed");
    assert!(global.max_threads() >= 1);
    assert_eq!(current_num_threads(), global.max_threads());
    let v: Vec<u32> = (0..1000).collect();
    assert_eq!(
        v.par_iter().map(|x| x * 2).collect::<Vec<_>>(),
        (0..1000).map(|x| x * 2).collect::<Vec<_>>()
    );
    assert_eq!(asat::join(|| 1, || 2), (1, 2));

    // a builder that reads the variable returns the error
    for err in [
        ThreadPoolBuilder::new().build().unwrap_err(),
        ThreadPoolBuilder::new().num_threads(2).build().unwrap_err(),
        Runtime::builder().max_threads(2).build().unwrap_err(),
    ] {
        let msg = err.to_string();
        assert!(msg.contains("ASAT_POLICY"), "{msg}");
        assert!(msg.contains("\"bogus\""), "{msg}");
        assert!(
            msg.contains("must be one of fixed, fixed:N (N >= 1), single, asat"),
            "{msg}"
        );
    }
    // and so does build_global, which finds the global runtime built
    let err = ThreadPoolBuilder::new().build_global().unwrap_err();
    assert!(err.to_string().contains("exists already"), "{err}");

    // a good value is read by the next builder; the global runtime stays as it was
    std::env::set_var("ASAT_POLICY", "single");
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    assert_eq!(pool.policy().name(), "single");
    assert_eq!(Runtime::global().policy().name(), "fixed");
}
