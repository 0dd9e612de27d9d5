//! CPU affinity of the calling thread.

use crate::CpuSet;

fn to_libc(set: &CpuSet) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array for which all-zeroes is the empty set.
    let mut raw: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for cpu in set.iter() {
        // SAFETY: CpuSet::CAPACITY equals CPU_SETSIZE (1024), so `cpu` is in range of `raw`.
        unsafe { libc::CPU_SET(cpu, &mut raw) };
    }
    raw
}

/// The calling thread's affinity mask.
pub(crate) fn get() -> std::io::Result<CpuSet> {
    // SAFETY: as in `to_libc`, all-zeroes is a valid cpu_set_t.
    let mut raw: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `raw` is a valid, writable cpu_set_t of the size passed; pid 0 is this thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut raw) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut set = CpuSet::new();
    for cpu in 0..CpuSet::CAPACITY {
        // SAFETY: `cpu` < CAPACITY = CPU_SETSIZE, in range of `raw`.
        if unsafe { libc::CPU_ISSET(cpu, &raw) } {
            set.insert(cpu);
        }
    }
    Ok(set)
}

/// Restricts the calling thread to `set`.
pub(crate) fn set(set: &CpuSet) -> std::io::Result<()> {
    let raw = to_libc(set);
    // SAFETY: `raw` is a valid cpu_set_t of the size passed; pid 0 is this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs this process may use: the calling thread's affinity mask, limited by the cgroup CPU
/// quota (rounded up), at least 1.
pub(crate) fn cpu_budget() -> usize {
    let mask = get().map(|s| s.len()).unwrap_or(0);
    let mask = if mask == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        mask
    };
    match cgroup_quota() {
        Some(q) => mask.min(q.ceil().max(1.0) as usize),
        None => mask,
    }
}

/// The tightest CPU quota (in CPUs) of this process's cgroup and its ancestors, if any.
fn cgroup_quota() -> Option<f64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<f64> = None;
    let mut take = |q: Option<f64>| {
        if let Some(q) = q {
            best = Some(best.map_or(q, |b: f64| b.min(q)));
        }
    };
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let mut dir = std::path::PathBuf::from(path);
        loop {
            let rel = dir.strip_prefix("/").unwrap_or(&dir);
            if controllers.is_empty() {
                // cgroup v2
                let p = std::path::Path::new("/sys/fs/cgroup")
                    .join(rel)
                    .join("cpu.max");
                take(
                    std::fs::read_to_string(p)
                        .ok()
                        .and_then(|s| parse_cpu_max(&s)),
                );
            } else if controllers.split(',').any(|c| c == "cpu") {
                // cgroup v1
                let base = std::path::Path::new("/sys/fs/cgroup/cpu,cpuacct").join(rel);
                let quota = std::fs::read_to_string(base.join("cpu.cfs_quota_us")).ok();
                let period = std::fs::read_to_string(base.join("cpu.cfs_period_us")).ok();
                if let (Some(q), Some(p)) = (quota, period) {
                    take(parse_cpu_max(&format!("{} {}", q.trim(), p.trim())));
                }
            }
            if !dir.pop() {
                break;
            }
        }
    }
    best
}

/// Parses a cgroup v2 `cpu.max` line (`"max 100000"`, `"50000 100000"`) into CPUs. A v1
/// quota of -1 means no limit, like `max`.
pub(crate) fn parse_cpu_max(s: &str) -> Option<f64> {
    let mut it = s.split_whitespace();
    let quota = it.next()?;
    let period: f64 = it.next().map_or(Some(100_000.0), |p| p.parse().ok())?;
    if quota == "max" || quota.starts_with('-') || period <= 0.0 {
        return None;
    }
    let quota: f64 = quota.parse().ok()?;
    Some(quota / period)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_max_parsing() {
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_cpu_max("-1 100000"), None);
        assert_eq!(parse_cpu_max("50000 100000"), Some(0.5));
        assert_eq!(parse_cpu_max("200000 100000"), Some(2.0));
        assert_eq!(parse_cpu_max("garbage"), None);
    }

    #[test]
    fn budget_is_within_the_affinity_mask() {
        let b = cpu_budget();
        assert!(b >= 1);
        assert!(b <= get().unwrap().len().max(1));
    }
}
