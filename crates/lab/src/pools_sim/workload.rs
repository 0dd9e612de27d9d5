//! The workload of section 2: bounded-geometric desired parallelism and Poisson arrivals.

use super::rng::Rng;

/// The desired parallelism `d` of jobs: a geometric distribution on `1, 2, ...` with a mean
/// somewhat above `D`, values above `P` drawn again, so that the mean of what is kept is `D`.
#[derive(Clone, Copy, Debug)]
pub struct BoundedGeometric {
    /// Success probability of the untruncated geometric distribution.
    q: f64,
    max: usize,
}

impl BoundedGeometric {
    /// The distribution with mean `mean` on `1..=max`. `mean` must lie in `[1, (max+1)/2)`
    /// (the mean of a uniform distribution is the largest a decreasing one can reach);
    /// `mean == 1` gives the constant 1.
    pub fn new(mean: f64, max: usize) -> Option<Self> {
        let max = max.max(1);
        if !(mean >= 1.0 && mean < (max as f64 + 1.0) / 2.0 || mean == 1.0) {
            return None;
        }
        if mean == 1.0 || max == 1 {
            return Some(Self { q: 1.0, max });
        }
        // The truncated mean falls as q rises: bisect.
        let (mut lo, mut hi) = (1e-12, 1.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if truncated_mean(mid, max) > mean {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(Self {
            q: 0.5 * (lo + hi),
            max,
        })
    }

    /// The mean of the (untruncated) geometric distribution used to draw values.
    pub fn untruncated_mean(&self) -> f64 {
        1.0 / self.q
    }

    /// The probability of `d = k`.
    pub fn pmf(&self, k: usize) -> f64 {
        if k == 0 || k > self.max {
            return 0.0;
        }
        let r = 1.0 - self.q;
        self.q * r.powi(k as i32 - 1) / (1.0 - r.powi(self.max as i32))
    }

    /// The mean of the distribution.
    pub fn mean(&self) -> f64 {
        truncated_mean(self.q, self.max)
    }

    /// Draws `d`.
    pub fn sample(&self, rng: &mut Rng) -> usize {
        if self.q >= 1.0 {
            return 1;
        }
        let ln_r = (1.0 - self.q).ln();
        loop {
            let k = (rng.uniform_open0().ln() / ln_r).ceil().max(1.0);
            if k <= self.max as f64 {
                return k as usize;
            }
        }
    }
}

fn truncated_mean(q: f64, max: usize) -> f64 {
    if q >= 1.0 {
        return 1.0;
    }
    let r = 1.0 - q;
    let mut num = 0.0;
    let mut pk = q;
    for k in 1..=max {
        num += k as f64 * pk;
        pk *= r;
    }
    num / (1.0 - r.powi(max as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_percentages_for_p60_d20() {
        // Section 2: for P = 60 and D = 20, "15.7% of the jobs have parallelism < 4" and 6%
        // between 50 and 60. The 15.7% is the share of d <= 4 (d < 4 gives 12.0%): the
        // distribution starts at 1, and no other reading gives both figures.
        let g = BoundedGeometric::new(20.0, 60).unwrap();
        assert!((g.mean() - 20.0).abs() < 1e-6);
        assert!(g.untruncated_mean() > 20.0);
        let upto4: f64 = (1..=4).map(|k| g.pmf(k)).sum();
        let high: f64 = (50..=60).map(|k| g.pmf(k)).sum();
        assert!((upto4 - 0.157).abs() < 0.002, "{upto4}");
        assert!((high - 0.06).abs() < 0.01, "{high}");
    }

    #[test]
    fn sample_mean_matches() {
        let g = BoundedGeometric::new(10.0, 60).unwrap();
        let mut rng = Rng::new(3, 0);
        let n = 200_000;
        let mut sum = 0usize;
        for _ in 0..n {
            let d = g.sample(&mut rng);
            assert!((1..=60).contains(&d));
            sum += d;
        }
        let m = sum as f64 / n as f64;
        assert!((m - 10.0).abs() < 0.15, "{m}");
    }

    #[test]
    fn impossible_means_are_refused() {
        assert!(BoundedGeometric::new(0.5, 60).is_none());
        assert!(BoundedGeometric::new(31.0, 60).is_none());
        assert!(BoundedGeometric::new(1.0, 60).is_some());
    }
}
