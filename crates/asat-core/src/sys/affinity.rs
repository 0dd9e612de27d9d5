//! CPU affinity of the calling thread, and the CPUs the process may use (its affinity mask
//! and cgroup CPU quota).

use std::path::{Path, PathBuf};

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

// The thread's own mask, as the set's methods: here, so that the set's module names nothing
// of this one.
impl CpuSet {
    /// The calling thread's CPU affinity mask: the CPUs the kernel lets it run on
    /// (`sched_getaffinity`).
    ///
    /// Errors come from the kernel; on Linux the call does not fail for the calling thread in
    /// practice.
    ///
    /// ```
    /// use asat_core::CpuSet;
    /// let mask = CpuSet::of_current_thread()?;
    /// assert!(!mask.is_empty());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn of_current_thread() -> std::io::Result<CpuSet> {
        get()
    }

    /// Restricts the calling thread to the CPUs of this set (`sched_setaffinity`). Only the
    /// calling thread changes; threads it starts afterwards inherit the new mask.
    ///
    /// Errors come from the kernel: `EINVAL` (`ErrorKind::InvalidInput`) when the set is empty
    /// or holds no CPU the thread may use (none online, or all outside its cpuset cgroup);
    /// `EPERM` when the thread lacks the privilege to change its mask. On error the mask is
    /// unchanged. When only some of the CPUs are not allowed, the kernel drops those and the
    /// call succeeds: read the mask back with [`CpuSet::of_current_thread`] to see the result.
    ///
    /// ```
    /// use asat_core::CpuSet;
    /// let before = CpuSet::of_current_thread()?;
    /// let first = before.iter().next().expect("some CPU is allowed");
    /// let one: CpuSet = std::iter::once(first).collect();
    /// one.bind_current_thread()?;
    /// assert_eq!(CpuSet::of_current_thread()?, one);
    /// assert!(CpuSet::new().bind_current_thread().is_err());
    /// before.bind_current_thread()?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn bind_current_thread(&self) -> std::io::Result<()> {
        set(self)
    }
}

/// The most words of mask [`raw_mask_with`] asks for (`1 << 16` words: 4,194,304 CPU ids, far
/// above any kernel's `NR_CPUS`); a kernel that refuses even that many is an error.
const MAX_MASK_WORDS: usize = 1 << 16;

/// One `sched_getaffinity` call for the calling thread into `buf` (`size_of_val(buf)` bytes, in
/// the layout of `cpu_set_t`: CPU `n` is bit `n % 64` of word `n / 64`). The kernel's error, if
/// any, is `last_os_error()` (an `Os` error: no allocation).
fn sched_getaffinity(buf: &mut [u64]) -> std::io::Result<()> {
    // SAFETY: `buf` is valid and writable for `size_of_val(buf)` bytes, the size passed; the
    // kernel (and glibc, which zero-fills the part the kernel leaves) writes no more than that,
    // and any bit pattern is a valid u64. pid 0 is the calling thread.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(buf), buf.as_mut_ptr().cast()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The calling thread's affinity mask as the kernel's words (CPU `n` is bit `n % 64` of word
/// `n / 64`), however many CPUs the kernel supports.
fn raw_mask() -> std::io::Result<Vec<u64>> {
    raw_mask_with(sched_getaffinity)
}

/// The buffer-growing loop of [`raw_mask`], with the system call as a parameter (a fake kernel
/// in the tests). `getaffinity(buf)` fills `buf` as `sched_getaffinity` with
/// `size_of_val(buf)` bytes does, or returns the kernel's error.
///
/// `sched_getaffinity` fails with `EINVAL` when the buffer has fewer bits than the kernel has
/// CPU ids (`nr_cpu_ids`, more than 1024 on big machines), so the buffer starts at
/// [`CpuSet::CAPACITY`] bits (`cpu_set_t`'s 1024) and doubles on `EINVAL` up to
/// [`MAX_MASK_WORDS`] words. Any other error, and `EINVAL` at the largest size, is returned
/// as it is: this never panics and never makes up a mask.
fn raw_mask_with(
    mut getaffinity: impl FnMut(&mut [u64]) -> std::io::Result<()>,
) -> std::io::Result<Vec<u64>> {
    let mut words = CpuSet::CAPACITY / 64;
    loop {
        let mut buf = vec![0u64; words];
        match getaffinity(&mut buf) {
            Ok(()) => return Ok(buf),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && words < MAX_MASK_WORDS => {
                words *= 2;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The calling thread's affinity mask. An error if it holds a CPU a [`CpuSet`] cannot
/// (numbered [`CpuSet::CAPACITY`] or more).
pub(crate) fn get() -> std::io::Result<CpuSet> {
    cpuset_from(raw_mask()?)
}

/// The [`CpuSet`] of a mask from [`raw_mask_with`]; an error (`ErrorKind::Unsupported`) if it
/// holds a CPU numbered [`CpuSet::CAPACITY`] or more.
fn cpuset_from(raw: Vec<u64>) -> std::io::Result<CpuSet> {
    let words = CpuSet::CAPACITY / 64;
    if raw.iter().skip(words).any(|&w| w != 0) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!(
                "the affinity mask holds CPUs numbered {} or more, which a CpuSet cannot hold",
                CpuSet::CAPACITY
            ),
        ));
    }
    let mut set = CpuSet::new();
    for (i, &w) in raw.iter().take(words).enumerate() {
        for b in 0..64 {
            if w & (1 << b) != 0 {
                set.insert(i * 64 + b);
            }
        }
    }
    Ok(set)
}

/// Restricts the calling thread to `set`.
///
/// Unlike [`raw_mask`], this needs no growing buffer: `sched_setaffinity` accepts a mask
/// shorter than the kernel's (it reads the bytes passed and takes the CPUs past them as not
/// set), and a [`CpuSet`] holds no CPU past `cpu_set_t`'s 1024, so a `cpu_set_t` carries all
/// of it on any machine.
pub(crate) fn set(set: &CpuSet) -> std::io::Result<()> {
    let raw = to_libc(set);
    // SAFETY: `raw` is a valid cpu_set_t of the size passed; pid 0 is this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &raw) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs this process may use: the number of CPUs in the calling thread's affinity mask
/// (all of them, however many), limited by the cgroup CPU quota (rounded up), at least 1.
/// Should the mask not be readable at all (or be empty), `available_parallelism` stands in
/// for it.
pub(crate) fn cpu_budget() -> usize {
    budget(raw_mask(), cgroup_quota(), || {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    })
}

/// [`cpu_budget`] from its inputs: the mask from [`raw_mask_with`], the cgroup quota in CPUs,
/// and what stands in for a mask that could not be read or is empty.
fn budget(
    mask: std::io::Result<Vec<u64>>,
    quota: Option<f64>,
    fallback: impl FnOnce() -> usize,
) -> usize {
    let mask = mask
        .map(|r| r.iter().map(|w| w.count_ones() as usize).sum())
        .unwrap_or(0);
    let mask = if mask == 0 { fallback() } else { mask };
    match quota {
        Some(q) => mask.min(q.ceil().max(1.0) as usize),
        None => mask,
    }
}

/// The tightest CPU quota (in CPUs) of this process's cgroup and its ancestors, if any.
fn cgroup_quota() -> Option<f64> {
    // Where the hierarchies are mounted does not change under a running process: mountinfo
    // (tens of lines, hundreds in containers) is read and parsed once, not at every ASAT
    // evaluation. The process's cgroup and its quota files are read each time.
    static MOUNTS: std::sync::OnceLock<Mounts> = std::sync::OnceLock::new();
    let mounts = MOUNTS.get_or_init(|| {
        cgroup_mounts(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default())
    });
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    quota_with(&cgroups, mounts, &|p| std::fs::read_to_string(p).ok())
}

/// The cgroup v2 mount and the v1 mount of the `cpu` controller.
type Mounts = (Option<CgroupMount>, Option<CgroupMount>);

/// Where a cgroup hierarchy is mounted: the cgroup path shown at the mount point (`root`: `/`
/// unless the mount shows a sub-tree, as in some containers), and the mount point.
#[derive(Clone, Debug, PartialEq)]
struct CgroupMount {
    root: PathBuf,
    point: PathBuf,
}

impl CgroupMount {
    fn at(point: &str) -> Self {
        Self {
            root: PathBuf::from("/"),
            point: PathBuf::from(point),
        }
    }
}

/// The cgroup v2 mount and the v1 mount of the `cpu` controller, from `/proc/self/mountinfo`
/// (the first of each).
fn cgroup_mounts(mountinfo: &str) -> Mounts {
    let (mut v2, mut v1) = (None, None);
    for line in mountinfo.lines() {
        // `id parent major:minor root point options [optional...] - fstype source superoptions`
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        let before: Vec<&str> = before.split(' ').collect();
        let mut after = after.split(' ');
        let (Some(root), Some(point), Some(fstype)) = (before.get(3), before.get(4), after.next())
        else {
            continue;
        };
        let mount = || CgroupMount {
            root: PathBuf::from(unescape(root)),
            point: PathBuf::from(unescape(point)),
        };
        match fstype {
            "cgroup2" if v2.is_none() => v2 = Some(mount()),
            "cgroup" if v1.is_none() => {
                let options = after.nth(1).unwrap_or("");
                if options.split(',').any(|o| o == "cpu") {
                    v1 = Some(mount());
                }
            }
            _ => {}
        }
    }
    (v2, v1)
}

/// Undoes mountinfo's octal escapes (`\040` for a space, and so on).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The tightest quota over the cgroups listed in `cgroups` (`/proc/self/cgroup`) and their
/// ancestors up to the hierarchy's mount point, found through `mountinfo`; `read` reads a
/// file. Without a mount in `mountinfo`, the usual places are tried (`/sys/fs/cgroup` for v2,
/// `/sys/fs/cgroup/cpu,cpuacct` and `/sys/fs/cgroup/cpu` for v1).
#[cfg(test)]
fn quota_from(
    cgroups: &str,
    mountinfo: &str,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Option<f64> {
    quota_with(cgroups, &cgroup_mounts(mountinfo), read)
}

/// [`quota_from`] with the mounts already parsed.
fn quota_with(
    cgroups: &str,
    mounts: &Mounts,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Option<f64> {
    let (v2, v1) = mounts.clone();
    let v2 = v2.map_or_else(|| vec![CgroupMount::at("/sys/fs/cgroup")], |m| vec![m]);
    let v1 = v1.map_or_else(
        || {
            vec![
                CgroupMount::at("/sys/fs/cgroup/cpu,cpuacct"),
                CgroupMount::at("/sys/fs/cgroup/cpu"),
            ]
        },
        |m| vec![m],
    );
    let mut best: Option<f64> = None;
    for line in cgroups.lines() {
        // `hierarchy-id:controllers:path`; a malformed line is skipped, not fatal.
        let Some((_, rest)) = line.split_once(':') else {
            continue;
        };
        let Some((controllers, path)) = rest.split_once(':') else {
            continue;
        };
        let (mounts, v2_files) = if controllers.is_empty() {
            (&v2, true)
        } else if controllers.split(',').any(|c| c == "cpu") {
            (&v1, false)
        } else {
            continue;
        };
        for m in mounts {
            // A cgroup outside the mount's sub-tree is not visible through it.
            let Ok(rel) = Path::new(path).strip_prefix(&m.root) else {
                continue;
            };
            let mut dir = m.point.join(rel);
            loop {
                let q = if v2_files {
                    read(&dir.join("cpu.max")).and_then(|s| parse_cpu_max(&s))
                } else {
                    match (
                        read(&dir.join("cpu.cfs_quota_us")),
                        read(&dir.join("cpu.cfs_period_us")),
                    ) {
                        (Some(q), Some(p)) => parse_cpu_max(&format!("{} {}", q.trim(), p.trim())),
                        _ => None,
                    }
                };
                if let Some(q) = q {
                    best = Some(best.map_or(q, |b: f64| b.min(q)));
                }
                if dir == m.point || !dir.pop() {
                    break;
                }
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

    /// `quota_from` over a fake file system.
    fn quota(cgroups: &str, mountinfo: &str, files: &[(&str, &str)]) -> Option<f64> {
        let files: std::collections::HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, c)| (PathBuf::from(p), c.to_string()))
            .collect();
        quota_from(cgroups, mountinfo, &|p| files.get(p).cloned())
    }

    const V2: &str = "30 1 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n";

    #[test]
    fn cgroup_v2_quota_of_the_cgroup_and_its_ancestors() {
        let files = [
            ("/sys/fs/cgroup/a/b/cpu.max", "max 100000\n"),
            ("/sys/fs/cgroup/a/cpu.max", "150000 100000\n"),
            ("/sys/fs/cgroup/cpu.max", "max 100000\n"),
        ];
        assert_eq!(quota("0::/a/b\n", V2, &files), Some(1.5));
        assert_eq!(quota("0::/\n", V2, &files), None);
        // Without mountinfo, the usual mount point.
        assert_eq!(quota("0::/a/b\n", "", &files), Some(1.5));
        // A malformed line is skipped, not fatal.
        assert_eq!(quota("garbage\n0::/a/b\n", V2, &files), Some(1.5));
    }

    #[test]
    fn cgroup_v1_cpu_controller_wherever_it_is_mounted() {
        let files = [
            ("/sys/fs/cgroup/cpu/j/cpu.cfs_quota_us", "100000\n"),
            ("/sys/fs/cgroup/cpu/j/cpu.cfs_period_us", "100000\n"),
        ];
        // Mounted on its own (not as cpu,cpuacct), with the cpu option among others.
        let mi = "25 20 0:22 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                  26 20 0:23 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert_eq!(quota("4:memory:/j\n3:cpu:/j\n", mi, &files), Some(1.0));
        // Also found without mountinfo.
        assert_eq!(quota("3:cpu:/j\n", "", &files), Some(1.0));
        // A quota of -1 is no limit.
        let none = [
            ("/sys/fs/cgroup/cpu/j/cpu.cfs_quota_us", "-1\n"),
            ("/sys/fs/cgroup/cpu/j/cpu.cfs_period_us", "100000\n"),
        ];
        assert_eq!(quota("3:cpu:/j\n", mi, &none), None);
    }

    #[test]
    fn cgroup_mount_showing_a_sub_tree_and_escaped_mount_points() {
        // A container: the v2 mount shows the sub-tree /docker/x at "/my cgroup" (escaped).
        let mi = "40 30 0:26 /docker/x /my\\040cgroup rw - cgroup2 cgroup2 rw\n";
        let files = [
            ("/my cgroup/job/cpu.max", "50000 100000\n"),
            ("/my cgroup/cpu.max", "200000 100000\n"),
        ];
        assert_eq!(quota("0::/docker/x/job\n", mi, &files), Some(0.5));
        // A cgroup outside the mount's sub-tree cannot be read through it.
        assert_eq!(quota("0::/other\n", mi, &files), None);
        assert_eq!(unescape("a\\040b\\134c\\x"), "a b\\c\\x");
    }

    /// A fake `sched_getaffinity` (the kernel's, with glibc's wrapper): a machine with
    /// `nr_cpu_ids` CPU ids on which the calling thread may run on `cpus`, or that fails
    /// every call with `errno`. Records the size in bytes of every call.
    struct FakeKernel {
        nr_cpu_ids: usize,
        cpus: Vec<usize>,
        errno: Option<i32>,
        asked: Vec<usize>,
    }

    impl FakeKernel {
        fn new(nr_cpu_ids: usize, cpus: &[usize]) -> Self {
            Self {
                nr_cpu_ids,
                cpus: cpus.to_vec(),
                errno: None,
                asked: Vec::new(),
            }
        }

        fn failing(errno: i32) -> Self {
            Self {
                errno: Some(errno),
                ..Self::new(8, &[0])
            }
        }

        fn sched_getaffinity(&mut self, buf: &mut [u64]) -> std::io::Result<()> {
            let len = std::mem::size_of_val(buf);
            self.asked.push(len);
            // A loop that did not stop at its maximum fails here instead of allocating
            // until the process dies.
            assert!(len <= MAX_MASK_WORDS * 8, "asked for {len} bytes");
            if let Some(errno) = self.errno {
                return Err(std::io::Error::from_raw_os_error(errno));
            }
            // As the kernel: fewer bits than CPU ids, or not whole longs, is EINVAL.
            if len * 8 < self.nr_cpu_ids || len % 8 != 0 {
                return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
            }
            // The kernel writes its mask, glibc zeroes the rest of the buffer.
            buf.fill(0);
            for &c in &self.cpus {
                buf[c / 64] |= 1 << (c % 64);
            }
            Ok(())
        }
    }

    fn cpus_of(raw: &[u64]) -> Vec<usize> {
        (0..raw.len() * 64)
            .filter(|&c| raw[c / 64] & (1 << (c % 64)) != 0)
            .collect()
    }

    #[test]
    fn mask_buffer_grows_until_the_kernel_takes_it() {
        // 4096 CPU ids: 128 and 256 bytes are refused, 512 bytes (4096 bits) are taken.
        let mut k = FakeKernel::new(4096, &[0, 1500, 4095]);
        let raw = raw_mask_with(|b| k.sched_getaffinity(b)).unwrap();
        assert_eq!(k.asked, [128, 256, 512]);
        assert_eq!(cpus_of(&raw), [0, 1500, 4095]);
        // The budget counts all three, past 1024 too, and is still limited by the quota.
        let no_fallback = || -> usize { panic!("the mask was read: no fallback") };
        assert_eq!(budget(Ok(raw.clone()), None, no_fallback), 3);
        assert_eq!(budget(Ok(raw.clone()), Some(1.5), no_fallback), 2);
        // A CpuSet cannot hold CPU 1500: an error where a CpuSet is needed, not a wrong set.
        let e = cpuset_from(raw).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::Unsupported);
        assert!(e.to_string().contains("1024"), "{e}");

        // The review's host: 1152 CPU ids, `taskset -c 0-3`. The budget is 4, not 1152,
        // and the mask is a CpuSet.
        let mut k = FakeKernel::new(1152, &[0, 1, 2, 3]);
        let raw = raw_mask_with(|b| k.sched_getaffinity(b)).unwrap();
        assert_eq!(k.asked, [128, 256]);
        assert_eq!(budget(Ok(raw.clone()), None, no_fallback), 4);
        assert_eq!(cpuset_from(raw).unwrap().to_string(), "0-3");

        // Up to 1024 CPU ids the first call, of cpu_set_t's size, is taken.
        let mut k = FakeKernel::new(1024, &[5, 1023]);
        let raw = raw_mask_with(|b| k.sched_getaffinity(b)).unwrap();
        assert_eq!(k.asked, [128]);
        assert_eq!(cpuset_from(raw).unwrap().to_string(), "5,1023");
    }

    #[test]
    fn another_error_is_returned_at_once() {
        let mut k = FakeKernel::failing(libc::EPERM);
        let e = raw_mask_with(|b| k.sched_getaffinity(b)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EPERM));
        assert_eq!(k.asked, [128], "no retry with a larger buffer");
        // Only the budget stands in for an unreadable mask (documented on cpu_budget).
        let mut k = FakeKernel::failing(libc::EFAULT);
        let mask = raw_mask_with(|b| k.sched_getaffinity(b));
        assert_eq!(
            mask.as_ref().unwrap_err().raw_os_error(),
            Some(libc::EFAULT)
        );
        assert_eq!(budget(mask, Some(2.0), || 7), 2);
    }

    #[test]
    fn a_kernel_that_never_takes_the_buffer_is_an_error_at_the_maximum() {
        let mut k = FakeKernel::new(usize::MAX, &[]);
        let e = raw_mask_with(|b| k.sched_getaffinity(b)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
        // Every size from cpu_set_t's 128 bytes, doubling, up to MAX_MASK_WORDS words.
        let sizes: Vec<usize> = (0..)
            .map(|i| 128 << i)
            .take_while(|&s| s <= MAX_MASK_WORDS * 8)
            .collect();
        assert_eq!(k.asked, sizes);
        assert_eq!(k.asked.len(), 13);
    }

    #[test]
    fn real_mask_is_the_cpuset_of_the_thread() {
        // Through the real system call; the mask is not empty for a running thread.
        let raw = raw_mask().unwrap();
        assert!(raw.len() >= CpuSet::CAPACITY / 64);
        let cpus = cpus_of(&raw);
        assert!(!cpus.is_empty());
        match get() {
            Ok(set) => assert_eq!(cpus, set.iter().collect::<Vec<_>>()),
            // Only on a machine where this thread may run on CPUs past a CpuSet's range.
            Err(e) => assert!(cpus.iter().any(|&c| c >= CpuSet::CAPACITY), "{e}"),
        }
    }

    #[test]
    fn budget_is_within_the_affinity_mask() {
        let b = cpu_budget();
        assert!(b >= 1);
        assert!(b <= get().unwrap().len().max(1));
    }
}
