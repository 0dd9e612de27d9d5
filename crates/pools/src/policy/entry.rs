//! `ASAT_POLICY=pools`: processor pools of this machine in the registry of policies
//! ([`asat_core::policies`]).

use std::sync::Arc;

use asat_core::linkme::distributed_slice;
use asat_core::{Env, Policy, PolicyEntry, POLICIES};

use crate::{PoolKind, PoolPolicy, Topology};

#[distributed_slice(POLICIES)]
#[linkme(crate = asat_core::linkme)]
static POOLS: PolicyEntry = PolicyEntry {
    name: "pools",
    arg: "KIND (numa, l3, package or a pool size)",
    about: "processor pools (Zhou and Brecht): each job's threads placed on the least loaded \
            pools of this machine, counted in a table its processes share",
    build,
};

/// A job on the pools of `kind` (NUMA nodes when not given) of this machine, its threads
/// pinned, counted in the machine-wide table.
fn build(kind: Option<&str>, _env: Env<'_>) -> Result<Arc<dyn Policy>, asat_core::Error> {
    let err = |e: crate::Error| asat_core::Error::policy("pools", e.to_string());
    let kind = kind.map_or(Ok(PoolKind::Numa), str::parse).map_err(err)?;
    let pools = Topology::detect()
        .and_then(|t| t.pools(kind))
        .map_err(err)?;
    Ok(Arc::new(PoolPolicy::builder(pools).build().map_err(err)?))
}
