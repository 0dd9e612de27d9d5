//! Small statistics the examples, the benches and the lab's programs share.

/// The median of `v` (the mean of the two middle values for an even length; NaN when empty).
///
/// ```
/// assert_eq!(asat_peers::stats::median(vec![3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(asat_peers::stats::median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
/// assert!(asat_peers::stats::median(Vec::new()).is_nan());
/// ```
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The process's user and system CPU time so far (every thread's).
///
/// ```
/// let spent = asat_peers::stats::process_cpu();
/// assert!(asat_peers::stats::process_cpu() >= spent);
/// ```
pub fn process_cpu() -> std::time::Duration {
    // SAFETY: getrusage writes the struct it is given; RUSAGE_SELF is always valid.
    let usage = unsafe {
        let mut u = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| std::time::Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
