//! Small statistics the examples and benches share.

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
