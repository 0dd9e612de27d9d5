//! Helpers shared by asat-pools' integration tests.
#![allow(dead_code)]

use asat_core::CpuSet;
use asat_pools::Pools;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Two pools of two CPUs (a made-up machine: a load table only needs the layout).
pub fn pools() -> Pools {
    let a: CpuSet = [0, 1].into_iter().collect();
    let b: CpuSet = [2, 3].into_iter().collect();
    Pools::new(vec![a, b], false).unwrap()
}

/// A fresh directory for a load table, mode 0700, in `/dev/shm` where there is one (removed
/// when dropped).
pub fn temp_dir(name: &str) -> tempfile::TempDir {
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let d = tempfile::Builder::new()
        .prefix(&format!("asat-pools-test-{name}-"))
        .tempdir_in(base)
        .unwrap();
    // A table's folder must be the user's alone.
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}
