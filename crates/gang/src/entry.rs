//! `ASAT_POLICY=gang`: gang scheduling in the registry of policies
//! ([`asat_core::policies`]).

use std::sync::{Arc, OnceLock};

use asat_core::linkme::distributed_slice;
use asat_core::{Env, Policy, PolicyEntry, POLICIES};

use crate::GangScheduler;

#[distributed_slice(POLICIES)]
#[linkme(crate = asat_core::linkme)]
static GANG: PolicyEntry = PolicyEntry {
    name: "gang",
    arg: "",
    about: "gang scheduling (Feitelson and Rudolph): each runtime's threads run at once and \
            switch together, one time slot each (settings from ASAT_GANG, ASAT_GANG_QUANTUM_US, \
            ASAT_GANG_SIGNAL)",
    build,
};

/// The process's scheduler for runtimes whose policy came from `ASAT_POLICY`: made at the
/// first, from the environment, and kept for the life of the process (every such runtime is
/// a gang of it).
static SCHEDULER: OnceLock<GangScheduler> = OnceLock::new();

fn build(_arg: Option<&str>, env: Env<'_>) -> Result<Arc<dyn Policy>, asat_core::Error> {
    let sched = match SCHEDULER.get() {
        Some(s) => s,
        None => {
            let made = GangScheduler::builder()
                .build_with_env(env)
                .map_err(|e| asat_core::Error::policy("gang", e.to_string()))?;
            // Two first calls at once: one scheduler is kept, the other dropped.
            let _ = SCHEDULER.set(made);
            SCHEDULER.get().expect("set above")
        }
    };
    Ok(Arc::new(sched.policy()))
}
