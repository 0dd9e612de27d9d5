//! The kernel's clock tick, the unit of the CPU times and start times in `/proc/[pid]/stat`,
//! and the clock those start times count from.

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

/// Seconds since the machine booted, from `/proc/uptime` (the clock of the start times in
/// `/proc/[pid]/stat`, to a hundredth of a second); `None` where it cannot be read.
pub(crate) fn since_boot() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/uptime").ok()?;
    parse_uptime(&text)
}

/// The first field of `/proc/uptime`.
fn parse_uptime(text: &str) -> Option<f64> {
    text.split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_is_its_first_field() {
        assert_eq!(parse_uptime("12345.67 54321.00\n"), Some(12345.67));
        assert_eq!(parse_uptime(""), None);
        assert_eq!(parse_uptime("x 1"), None);
        assert_eq!(parse_uptime("inf 1"), None);
    }

    #[test]
    fn the_boot_clock_runs() {
        let a = since_boot().expect("/proc/uptime");
        let b = since_boot().expect("/proc/uptime");
        assert!(a > 0.0 && b >= a);
    }
}
