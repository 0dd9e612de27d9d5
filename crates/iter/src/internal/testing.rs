//! Helpers for the unit tests: runtimes with fixed teams, built once per test thread.

use std::cell::OnceCell;

use asat_core::{Fixed, Runtime};

/// A runtime of 4 threads whose every region has a team of `k` (1 to 4). Each test thread has
/// its own (built at its first call and kept for the thread's life): tests that run at once
/// on one runtime would wait for each other's regions (or run their loops on tasks, split
/// another way).
pub(crate) fn team_of(k: usize) -> &'static Runtime {
    thread_local! {
        static RTS: OnceCell<&'static [Runtime]> = const { OnceCell::new() };
    }
    RTS.with(|r| {
        *r.get_or_init(|| {
            let rts: Vec<Runtime> = (1..=4)
                .map(|k| {
                    Runtime::builder()
                        .max_threads(4)
                        .policy(Fixed::new(k))
                        .build()
                        .unwrap()
                })
                .collect();
            Vec::leak(rts)
        })
    })
    .get(k - 1)
    .expect("a team of 1 to 4")
}

/// Runs `f` on the calling thread with each of the runtimes installed, with the team size.
pub(crate) fn on_every_team(f: impl Fn(usize)) {
    for k in 1..=4 {
        team_of(k).install_here(|| f(k));
    }
}
