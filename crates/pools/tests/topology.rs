//! Pools formed from synthetic topologies (independent of this machine's layout) and from the
//! detected one.

use asat_core::CpuSet;
use asat_pools::{PoolKind, Topology};

fn set(r: std::ops::Range<usize>) -> CpuSet {
    r.collect()
}

const PAPER: &str = "pack:2 node:2 core:4 pu:2";

#[test]
fn synthetic_numa_pools_are_four_of_eight() {
    let t = Topology::synthetic(PAPER).unwrap();
    assert!(!t.is_this_system());
    assert_eq!(t.usable_cpus().len(), 32);
    let pools = t.pools(PoolKind::Numa).unwrap();
    assert_eq!(pools.len(), 4);
    assert_eq!(pools.sizes(), vec![8, 8, 8, 8]);
    for i in 0..4 {
        assert_eq!(pools.cpus(i), set(8 * i..8 * i + 8), "pool {i}");
    }
    assert!(!pools.is_this_system());
    // The default kind is NUMA.
    assert_eq!(PoolKind::default(), PoolKind::Numa);
}

#[test]
fn synthetic_package_and_size_pools() {
    let t = Topology::synthetic(PAPER).unwrap();
    let pack = t.pools(PoolKind::Package).unwrap();
    assert_eq!(pack.sizes(), vec![16, 16]);
    assert_eq!(pack.cpus(1), set(16..32));
    let four = t.pools(PoolKind::Size(4)).unwrap();
    assert_eq!(four.len(), 8);
    // Contiguous in topology order: a pool of 4 is two cores' PUs.
    assert_eq!(four.cpus(0), set(0..4));
    assert_eq!(four.cpus(7), set(28..32));
    let all = t.pools(PoolKind::Size(32)).unwrap();
    assert_eq!(all.sizes(), vec![32]);
}

#[test]
fn synthetic_l3_pools() {
    // The paper's description has no caches: L3 pools are refused, clearly.
    let t = Topology::synthetic(PAPER).unwrap();
    let e = t.pools(PoolKind::L3).unwrap_err().to_string();
    assert!(e.contains("no L3 cache objects"), "{e}");
    // With L3 caches, one pool per L3 domain.
    let t = Topology::synthetic("pack:2 l3:2 core:4 pu:2").unwrap();
    let l3 = t.pools(PoolKind::L3).unwrap();
    assert_eq!(l3.sizes(), vec![8, 8, 8, 8]);
    assert_eq!(l3.cpus(2), set(16..24));
}

#[test]
fn bad_pool_sizes_are_clear_errors() {
    let t = Topology::synthetic(PAPER).unwrap();
    let e = t.pools(PoolKind::Size(0)).unwrap_err().to_string();
    assert_eq!(e, "pool size 0: must be between 1 and 32 CPUs");
    let e = t.pools(PoolKind::Size(64)).unwrap_err().to_string();
    assert_eq!(
        e,
        "pool size 64 is larger than the 32 usable CPUs: must be between 1 and 32"
    );
    let e = t.pools(PoolKind::Size(5)).unwrap_err().to_string();
    assert_eq!(
        e,
        "pool size 5 does not divide the 32 usable CPUs into equal pools: must be a divisor of 32"
    );
}

#[test]
fn bad_synthetic_description_is_an_error() {
    let e = Topology::synthetic("pack:two").unwrap_err().to_string();
    assert!(
        e.contains("cannot load the topology from synthetic description"),
        "{e}"
    );
}

#[test]
fn xml_round_trip_of_a_synthetic_topology() {
    let t = Topology::synthetic("node:3 core:2 pu:1").unwrap();
    let dir = std::env::temp_dir().join(format!("asat-pools-xml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("machine.xml");
    t.hwloc()
        .export_xml_file(Some(&path), Default::default())
        .expect("export xml");
    let back = Topology::from_xml_file(&path).unwrap();
    assert_eq!(back.pools(PoolKind::Numa).unwrap().sizes(), vec![2, 2, 2]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn detected_topology_uses_the_affinity_mask() {
    let t = Topology::detect().unwrap();
    assert!(t.is_this_system());
    assert_eq!(t.usable_cpus(), CpuSet::of_current_thread().unwrap());
    // Whatever the machine's NUMA layout, the NUMA pools cover exactly the usable CPUs.
    let pools = t.pools(PoolKind::Numa).unwrap();
    assert_eq!(pools.all_cpus(), t.usable_cpus());
    assert!(pools.is_this_system());
    let n = t.usable_cpus().len();
    let ones = t.pools(PoolKind::Size(1)).unwrap();
    assert_eq!(ones.len(), n);
}

#[test]
fn cpus_a_cpu_set_cannot_hold_are_an_error() {
    let e = Topology::synthetic("pack:2 pu:600")
        .unwrap_err()
        .to_string();
    assert!(e.contains("CPUs numbered 1024 or more"), "{e}");
}
