//! [`Topology`]: the machine (detected, synthetic or from XML) through hwloc, and
//! [`Pools`] formed from it.
//!
//! The usable CPUs of the detected machine are the process's CPU affinity mask (within the
//! CPUs hwloc allows); a synthetic or XML topology describes another machine, all of whose
//! CPUs count as usable. Pools are formed from the usable CPUs only: a NUMA node outside the
//! mask gives no pool, one partly inside gives a smaller pool.
//!
//! Pools remember where they come from: only pools of the machine detected by
//! [`Topology::detect`] (or explicit pools declared this machine's) are
//! [machine-wide](Pools::is_machine_wide), and only those use the load table shared by all
//! processes by default. A synthetic or XML topology describes a model machine, whose pools may
//! happen to have the real pools' CPU numbers: its jobs must never count in the real table.

use std::fmt;
use std::path::Path;

use asat_core::CpuSet;
use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::object::types::ObjectType;

use crate::Error;

/// How the usable CPUs are divided into pools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PoolKind {
    /// One pool per NUMA node (the default: the natural cluster of a NUMA machine).
    #[default]
    Numa,
    /// One pool per L3 cache domain.
    L3,
    /// One pool per package (socket).
    Package,
    /// Pools of this many CPUs, contiguous in topology order; the size must divide the
    /// number of usable CPUs.
    Size(usize),
}

impl std::str::FromStr for PoolKind {
    type Err = Error;

    /// Parses `numa`, `l3`, `package` or a number (a fixed pool size).
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "numa" | "node" => Ok(Self::Numa),
            "l3" => Ok(Self::L3),
            "package" | "pack" | "socket" => Ok(Self::Package),
            other => other.parse::<usize>().map(Self::Size).map_err(|_| {
                Error::pools(format!(
                    "pool kind {s:?}: must be numa, l3, package or a pool size (a number)"
                ))
            }),
        }
    }
}

/// A machine's topology.
pub struct Topology {
    inner: hwlocality::Topology,
    this_system: bool,
    /// Read from this machine by [`Topology::detect`] (and hwloc says it is this system).
    detected: bool,
    usable: CpuSet,
    source: String,
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topology")
            .field("source", &self.source)
            .field("this_system", &self.this_system)
            .field("detected", &self.detected)
            .field("usable", &self.usable)
            .finish_non_exhaustive()
    }
}

fn to_cpuset(bitmap: &hwlocality::cpu::cpuset::CpuSet) -> CpuSet {
    bitmap.iter_set().map(usize::from).collect()
}

impl Topology {
    /// The machine this process runs on.
    pub fn detect() -> Result<Self, Error> {
        let inner = hwlocality::Topology::new().map_err(|e| Error::topology("this system", e))?;
        Self::from_inner(inner, "this system".into(), true)
    }

    /// A synthetic topology, in hwloc's syntax: `"pack:2 node:2 core:4 pu:2"` is 2 packages
    /// of 2 NUMA nodes of 4 cores of 2 PUs (32 CPUs).
    ///
    /// ```
    /// use asat_pools::{PoolKind, Topology};
    /// let t = Topology::synthetic("pack:2 node:2 core:4 pu:2")?;
    /// assert_eq!(t.usable_cpus().len(), 32);
    /// let pools = t.pools(PoolKind::Numa)?;
    /// assert_eq!(pools.sizes(), vec![8, 8, 8, 8]);
    /// # Ok::<(), asat_pools::Error>(())
    /// ```
    pub fn synthetic(description: &str) -> Result<Self, Error> {
        let what = format!("synthetic description {description:?}");
        let bad = |e: &dyn std::fmt::Display| {
            Error::topology(
                &what,
                format!(
                    "{e}; a description is levels from the machine down, each type:count, \
                     separated by spaces (types such as pack, node, l3, l2, core, pu), e.g. \
                     \"pack:2 node:2 core:4 pu:2\""
                ),
            )
        };
        let inner = hwlocality::Topology::builder()
            .from_synthetic(description)
            .map_err(|e| bad(&e))?
            .build()
            .map_err(|e| bad(&e))?;
        Self::from_inner(inner, what, false)
    }

    /// A topology exported as XML (`lstopo machine.xml`).
    pub fn from_xml_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let what = format!("XML file {}", path.as_ref().display());
        let inner = hwlocality::Topology::builder()
            .from_xml_file(path.as_ref())
            .map_err(|e| Error::topology(&what, e))?
            .build()
            .map_err(|e| Error::topology(&what, e))?;
        Self::from_inner(inner, what, false)
    }

    fn from_inner(
        inner: hwlocality::Topology,
        source: String,
        detect: bool,
    ) -> Result<Self, Error> {
        let this_system = inner.is_this_system();
        let cpus = inner.cpuset();
        let n = cpus.iter_set().count();
        if cpus.iter_set().any(|c| usize::from(c) >= CpuSet::CAPACITY) {
            // A CpuSet (the kernel's cpu_set_t) would silently drop them.
            return Err(Error::pools(format!(
                "{source} has CPUs numbered {} or more ({n} CPUs): pools hold CPUs 0 to {} only",
                CpuSet::CAPACITY,
                CpuSet::CAPACITY - 1
            )));
        }
        let all = to_cpuset(&cpus);
        let usable = if this_system {
            let allowed = to_cpuset(&inner.allowed_cpuset());
            let mask = match inner.cpu_binding(CpuBindingFlags::PROCESS) {
                Ok(b) => to_cpuset(&b),
                Err(_) => CpuSet::of_current_thread().unwrap_or(allowed),
            };
            all.intersection(&allowed).intersection(&mask)
        } else {
            all
        };
        if usable.is_empty() {
            return Err(Error::no_usable_cpus());
        }
        Ok(Self {
            inner,
            this_system,
            // hwloc's detection reads the environment's HWLOC_XMLFILE or HWLOC_SYNTHETIC
            // instead of the machine when set: that is a model machine too, unless hwloc was
            // told it is this one.
            detected: detect && this_system,
            usable,
            source,
        })
    }

    /// Whether this is the machine the process runs on (threads can be pinned to its CPUs).
    /// An XML or synthetic topology is not, unless hwloc was told it is (`HWLOC_THISSYSTEM=1`).
    pub fn is_this_system(&self) -> bool {
        self.this_system
    }

    /// Whether this topology was read from the machine by [`Topology::detect`]: its pools are
    /// [machine-wide](Pools::is_machine_wide). A synthetic or XML topology never is, even one
    /// hwloc was told is this system.
    pub fn is_detected(&self) -> bool {
        self.detected
    }

    /// The CPUs pools are formed from: the process's affinity mask on this system, all CPUs of
    /// a synthetic or XML topology.
    pub fn usable_cpus(&self) -> CpuSet {
        self.usable
    }

    /// The usable CPUs in topology order (PUs by logical index), as OS CPU numbers.
    pub fn cpus_in_order(&self) -> Vec<usize> {
        self.inner
            .objects_with_type(ObjectType::PU)
            .filter_map(|pu| pu.os_index())
            .filter(|&c| self.usable.contains(c))
            .collect()
    }

    /// The hwloc topology, for what this crate does not wrap (memory binding, ...).
    pub fn hwloc(&self) -> &hwlocality::Topology {
        &self.inner
    }

    /// Divides the usable CPUs into pools.
    ///
    /// Errors: a pool size of 0, larger than the usable CPUs or not dividing them; a topology
    /// without objects of the asked kind (no L3 caches in a synthetic description).
    pub fn pools(&self, kind: PoolKind) -> Result<Pools, Error> {
        let sets: Vec<CpuSet> = match kind {
            PoolKind::Numa => self.object_pools(ObjectType::NUMANode, "NUMA node")?,
            PoolKind::L3 => self.object_pools(ObjectType::L3Cache, "L3 cache")?,
            PoolKind::Package => self.object_pools(ObjectType::Package, "package")?,
            PoolKind::Size(p) => {
                let order = self.cpus_in_order();
                let n = order.len();
                if p == 0 {
                    return Err(Error::pool_size_zero(n));
                }
                if p > n {
                    return Err(Error::pool_size_too_large(p, n));
                }
                if n % p != 0 {
                    return Err(Error::pool_size_not_dividing(p, n));
                }
                order
                    .chunks(p)
                    .map(|c| c.iter().copied().collect())
                    .collect()
            }
        };
        let mut pools = Pools::new(sets, self.this_system)?;
        pools.machine_wide = self.detected;
        Ok(pools)
    }

    fn object_pools(&self, ty: ObjectType, what: &'static str) -> Result<Vec<CpuSet>, Error> {
        let mut sets = Vec::new();
        let mut any = false;
        for obj in self.inner.objects_with_type(ty) {
            any = true;
            if let Some(cs) = obj.cpuset() {
                let set = to_cpuset(&cs).intersection(&self.usable);
                if !set.is_empty() {
                    sets.push(set);
                }
            }
        }
        if !any {
            return Err(Error::no_objects(what));
        }
        if sets.is_empty() {
            return Err(Error::no_usable_cpus());
        }
        let left_out: CpuSet = self
            .usable
            .iter()
            .filter(|&c| !sets.iter().any(|set| set.contains(c)))
            .collect();
        if !left_out.is_empty() {
            return Err(Error::pools(format!(
                "CPUs {left_out} belong to no {what}: pools by {what} would leave them out; \
                 use pools by package or of a fixed size"
            )));
        }
        Ok(sets)
    }
}

/// Disjoint, non-empty sets of CPUs, one per pool.
#[derive(Clone, PartialEq, Eq)]
pub struct Pools {
    sets: Vec<CpuSet>,
    this_system: bool,
    machine_wide: bool,
}

impl fmt::Debug for Pools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pools[")?;
        for (i, s) in self.sets.iter().enumerate() {
            if i > 0 {
                write!(f, " | ")?;
            }
            write!(f, "{s}")?;
        }
        write!(
            f,
            "]{}",
            match (self.this_system, self.machine_wide) {
                (_, true) => "",
                (true, false) => " (this system, not detected)",
                (false, false) => " (not this system)",
            }
        )
    }
}

impl Pools {
    /// Pools from explicit CPU sets. `this_system` says whether the CPUs are this machine's
    /// (and threads may be pinned to them); pools declared this machine's are also
    /// [machine-wide](Self::is_machine_wide).
    ///
    /// Errors: no pools, an empty pool, a CPU in two pools.
    pub fn new(sets: Vec<CpuSet>, this_system: bool) -> Result<Self, Error> {
        if sets.is_empty() {
            return Err(Error::pools("no pools: at least one is needed"));
        }
        let mut seen = CpuSet::new();
        for (i, s) in sets.iter().enumerate() {
            if s.is_empty() {
                return Err(Error::pools(format!(
                    "pool {i} is empty: every pool needs a CPU"
                )));
            }
            let both = seen.intersection(s);
            if !both.is_empty() {
                return Err(Error::pools(format!(
                    "CPUs {both} are in pool {i} and an earlier one: pools must be disjoint"
                )));
            }
            for c in s.iter() {
                seen.insert(c);
            }
        }
        Ok(Self {
            sets,
            this_system,
            machine_wide: this_system,
        })
    }

    /// The number of pools.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Always false: there is at least one pool.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The CPUs of pool `i`.
    pub fn cpus(&self, i: usize) -> CpuSet {
        self.sets[i]
    }

    /// The number of CPUs of each pool.
    pub fn sizes(&self) -> Vec<u32> {
        self.sets.iter().map(|s| s.len() as u32).collect()
    }

    /// All CPUs of all pools.
    pub fn all_cpus(&self) -> CpuSet {
        let mut all = CpuSet::new();
        for s in &self.sets {
            for c in s.iter() {
                all.insert(c);
            }
        }
        all
    }

    /// Whether the CPUs are this machine's.
    pub fn is_this_system(&self) -> bool {
        self.this_system
    }

    /// Whether these are pools of the real machine, which may count in the load table that all
    /// processes of the user share ([`SharedTable::open`](crate::SharedTable::open), the
    /// default table of a [`PoolPolicy`](crate::PoolPolicy)): pools of the topology
    /// [`Topology::detect`] read, or explicit pools declared this machine's by
    /// [`Pools::new`]. Pools of a synthetic or XML topology never are, even with the real
    /// pools' CPU numbers (or `HWLOC_THISSYSTEM=1`): their jobs get a table of their own.
    pub fn is_machine_wide(&self) -> bool {
        self.machine_wide
    }

    /// A 64-bit fingerprint of the pools' CPU sets (FNV-1a), naming the shared load table:
    /// processes with the same pools share one table (pools that are not
    /// [machine-wide](Self::is_machine_wide) never share the machine-wide one: their table's
    /// name says so, see the [`shm`](crate::shm) module).
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for s in &self.sets {
            for c in s.iter() {
                eat(c as u64);
            }
            eat(u64::MAX);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_parsing() {
        assert_eq!("numa".parse::<PoolKind>().unwrap(), PoolKind::Numa);
        assert_eq!("L3".parse::<PoolKind>().unwrap(), PoolKind::L3);
        assert_eq!("package".parse::<PoolKind>().unwrap(), PoolKind::Package);
        assert_eq!("8".parse::<PoolKind>().unwrap(), PoolKind::Size(8));
        let e = "big".parse::<PoolKind>().unwrap_err().to_string();
        assert!(
            e.contains("must be numa, l3, package or a pool size"),
            "{e}"
        );
    }

    #[test]
    fn explicit_pools_are_checked() {
        let a: CpuSet = [0, 1].into_iter().collect();
        let b: CpuSet = [1, 2].into_iter().collect();
        assert!(Pools::new(vec![], false).is_err());
        assert!(Pools::new(vec![a, CpuSet::new()], false).is_err());
        let e = Pools::new(vec![a, b], false).unwrap_err().to_string();
        assert!(e.contains("CPUs 1 are in pool 1"), "{e}");
        let p = Pools::new(vec![a], false).unwrap();
        assert_eq!(p.sizes(), vec![2]);
        assert_ne!(
            p.fingerprint(),
            Pools::new(vec![b], false).unwrap().fingerprint()
        );
    }
}
