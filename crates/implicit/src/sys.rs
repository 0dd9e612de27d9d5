//! The system calls the calibration needs that asat-core does not offer: the number of CPUs
//! online (which CPUs a thread may use, and pinning it, go through `asat_core::CpuSet`). The
//! only `unsafe` of the crate outside the futex crate.

/// The number of CPUs online (0 if unknown).
pub(crate) fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(0)
}
