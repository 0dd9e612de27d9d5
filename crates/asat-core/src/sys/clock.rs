//! The kernel's clock tick, the unit of the CPU times in `/proc/[pid]/stat`.

/// Seconds per clock tick (`sysconf(_SC_CLK_TCK)`; 1/100 where the call fails).
pub(crate) fn tick_seconds() -> f64 {
    // SAFETY: sysconf reads a constant of the system and has no memory-safety preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        1.0 / hz as f64
    } else {
        0.01
    }
}
