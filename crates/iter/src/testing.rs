//! Helpers for the unit tests: runtimes with fixed teams, built once.

use std::sync::OnceLock;

use asat_core::{Fixed, Runtime};

/// A runtime of 4 threads whose every region has a team of `k` (1 to 4).
pub(crate) fn team_of(k: usize) -> &'static Runtime {
    static RTS: OnceLock<Vec<Runtime>> = OnceLock::new();
    &RTS.get_or_init(|| {
        (1..=4)
            .map(|k| {
                Runtime::builder()
                    .max_threads(4)
                    .policy(Fixed::new(k))
                    .build()
                    .unwrap()
            })
            .collect()
    })[k - 1]
}

/// Runs `f` on each of the runtimes, with the team size.
pub(crate) fn on_every_team(f: impl Fn(usize)) {
    for k in 1..=4 {
        team_of(k).install(|| f(k));
    }
}
