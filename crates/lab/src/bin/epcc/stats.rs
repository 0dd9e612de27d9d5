//! The statistics EPCC reports for each test: over the outer repetitions' times (microseconds
//! per inner repetition), the mean, median, sample standard deviation (divided by `n - 1`),
//! minimum, maximum, and the number of outliers, the times further than three standard
//! deviations from the mean.

use asat_peers::stats::median;

/// The summary of one test's samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (the mean of the two middle samples for an even count).
    pub median: f64,
    /// Sample standard deviation (`n - 1` in the denominator; 0 for fewer than 2 samples).
    pub stddev: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Samples more than 3 standard deviations from the mean.
    pub outliers: usize,
}

impl Summary {
    /// The summary of `samples` (all NaN and 0 outliers when empty).
    pub fn of(samples: &[f64]) -> Summary {
        let n = samples.len();
        if n == 0 {
            return Summary {
                n,
                mean: f64::NAN,
                median: f64::NAN,
                stddev: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
                outliers: 0,
            };
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let stddev = if n < 2 {
            0.0
        } else {
            let squares: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
            (squares / (n - 1) as f64).sqrt()
        };
        let outliers = samples
            .iter()
            .filter(|x| (*x - mean).abs() > 3.0 * stddev)
            .count();
        Summary {
            n,
            mean,
            median: median(samples.to_vec()),
            stddev,
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            outliers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn fixed_inputs() {
        let s = Summary::of(&[4.0, 2.0, 6.0, 8.0]);
        assert_eq!(s.n, 4);
        assert!(close(s.mean, 5.0));
        assert!(close(s.median, 5.0));
        // squares 1 + 9 + 1 + 9 = 20, over n - 1 = 3
        assert!(close(s.stddev, (20.0f64 / 3.0).sqrt()));
        assert_eq!((s.min, s.max), (2.0, 8.0));
        assert_eq!(s.outliers, 0);

        let odd = Summary::of(&[3.0, 1.0, 2.0]);
        assert!(close(odd.median, 2.0));
        assert!(close(odd.stddev, 1.0));
    }

    #[test]
    fn one_far_sample_is_an_outlier() {
        // 19 samples of 1.0 and one of 100: mean 5.95, sd = sqrt(19 * 4.95^2 + 94.05^2) / sqrt(19)
        // ~ 22.1, so only the 100 lies beyond 3 sd (66.4) of the mean.
        let mut v = vec![1.0; 19];
        v.push(100.0);
        let s = Summary::of(&v);
        assert_eq!(s.outliers, 1);
        assert!(close(s.median, 1.0));
        assert!(close(s.mean, 5.95));
        assert_eq!(s.max, 100.0);
    }

    #[test]
    fn identical_samples_have_no_spread_and_no_outliers() {
        let s = Summary::of(&[0.5; 20]);
        assert_eq!(s.stddev, 0.0);
        assert_eq!(s.outliers, 0);
        assert_eq!(s.median, 0.5);
    }

    #[test]
    fn degenerate_counts() {
        let one = Summary::of(&[7.0]);
        assert_eq!(
            (one.mean, one.median, one.stddev, one.outliers),
            (7.0, 7.0, 0.0, 0)
        );
        let none = Summary::of(&[]);
        assert_eq!(none.n, 0);
        assert!(none.mean.is_nan());
    }
}
