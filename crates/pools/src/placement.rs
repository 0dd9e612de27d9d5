//! Placement as in section 3 of Zhou and Brecht: pure functions from pool loads to decisions.
//!
//! The same functions serve the real policy ([`PoolPolicy`](crate::PoolPolicy)) and asat-lab's
//! simulator of the paper's model (`asat_lab::pools_sim`).
//!
//! - A job's **home pool** is the least-loaded pool when it starts ([`home_pool`]).
//! - At each parallel phase the job, with desired parallelism `d`, considers at most
//!   `f(d)` **candidate pools** ([`candidate_count`]): `x = round(F*d/p)` clamped to
//!   `[1, P/p]`. The home pool comes first, then the other pools in increasing load
//!   ([`candidate_pools`]).
//! - The **actual parallelism** is `a = min(d, max(p_idle, G*d, 1))` where `p_idle` is the
//!   number of idle processors in the candidate pools ([`actual_parallelism`]).
//! - Threads go to idle processors first, in candidate order; threads beyond the idle
//!   processors are spread over the candidates to balance their resulting load
//!   ([`assign_threads`]).
//!
//! The load index of a pool is its number of active threads (running or ready). Pools may have
//! different sizes (NUMA nodes of a real machine need not be equal): "least loaded" and
//! "balanced" then compare loads relative to pool size, which for equal pools is the paper's
//! rule exactly. Ties go to the lower pool index, so every decision is deterministic.
//!
//! ```
//! use asat_pools::placement::{place, Params};
//! // The paper's example: d = 20 on 60 processors in pools of 10, F = 0.8, G = 0.5; the home
//! // pool 0 has 2 idle processors, pool 3 has 6, the others are full.
//! let loads = [8, 10, 10, 4, 10, 10];
//! let sizes = [10; 6];
//! let a = place(20, 0, &loads, &sizes, Params::default());
//! assert_eq!(a.threads, 10);
//! assert_eq!(a.per_pool, vec![(0, 3), (3, 7)]);
//! ```

use std::cmp::Ordering;

/// The control parameters of limited spanning (`F`) and restricted parallelism (`G`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// `F`: how many pools a job may span, `x = round(F*d/p)`. 0 means no spanning; a very
    /// large value means unlimited spanning. Default 0.8.
    pub f: f64,
    /// `G` in `[0, 1]`: the least actual parallelism, as a fraction of `d`. 1 means
    /// unrestricted parallelism (`a = d`). Default 0.5.
    pub g: f64,
}

impl Params {
    /// The paper's defaults (Table 2): `F = 0.8`, `G = 0.5`.
    pub const DEFAULT: Params = Params { f: 0.8, g: 0.5 };
}

impl Default for Params {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Compares the relative loads `la/sa` and `lb/sb` without division.
fn cmp_relative(la: u64, sa: u64, lb: u64, sb: u64) -> Ordering {
    (la * sb).cmp(&(lb * sa))
}

/// The least-loaded pool (relative to its size); ties go to the lower index.
///
/// `loads` and `sizes` have one entry per pool; sizes are at least 1. Panics if there are no
/// pools or the slices differ in length.
pub fn home_pool(loads: &[u32], sizes: &[u32]) -> usize {
    assert!(!loads.is_empty() && loads.len() == sizes.len());
    let mut best = 0;
    for i in 1..loads.len() {
        let o = cmp_relative(
            loads[i] as u64,
            sizes[i] as u64,
            loads[best] as u64,
            sizes[best] as u64,
        );
        if o == Ordering::Less {
            best = i;
        }
    }
    best
}

/// `f(d)`: the number of candidate pools for desired parallelism `d`, with `pools` pools of
/// (mean) size `pool_size`: `x = round(F*d/p)`, clamped to `[1, pools]`.
///
/// ```
/// use asat_pools::placement::candidate_count;
/// assert_eq!(candidate_count(20, 10.0, 6, 0.8), 2); // the paper's example
/// assert_eq!(candidate_count(20, 10.0, 6, 0.0), 1); // no spanning
/// assert_eq!(candidate_count(20, 10.0, 6, 100.0), 6); // unlimited spanning
/// ```
pub fn candidate_count(d: usize, pool_size: f64, pools: usize, f: f64) -> usize {
    let pools = pools.max(1);
    let x = (f * d as f64 / pool_size.max(f64::MIN_POSITIVE)).round();
    if x.is_nan() || x < 1.0 {
        1
    } else if x >= pools as f64 {
        pools
    } else {
        x as usize
    }
}

/// The first `count` candidate pools: `home`, then the other pools in increasing (relative)
/// load, ties to the lower index.
pub fn candidate_pools(home: usize, count: usize, loads: &[u32], sizes: &[u32]) -> Vec<usize> {
    let mut out = Vec::with_capacity(count.min(loads.len()));
    candidate_pools_into(home, count, loads, sizes, &mut out);
    out
}

fn candidate_pools_into(
    home: usize,
    count: usize,
    loads: &[u32],
    sizes: &[u32],
    out: &mut Vec<usize>,
) {
    out.clear();
    if count == 0 || loads.is_empty() {
        return;
    }
    out.push(home);
    let mut others: Vec<usize> = (0..loads.len()).filter(|&i| i != home).collect();
    others.sort_by(|&a, &b| {
        cmp_relative(
            loads[a] as u64,
            sizes[a] as u64,
            loads[b] as u64,
            sizes[b] as u64,
        )
        .then(a.cmp(&b))
    });
    out.extend(others.into_iter().take(count - 1));
}

/// The number of idle processors of a pool: its size less its active threads, at least 0.
pub fn idle(load: u32, size: u32) -> u32 {
    size.saturating_sub(load)
}

/// `a = min(d, max(p_idle, G*d, 1))`, with `G*d` rounded to the nearest whole thread. For
/// `d = 0` the job still runs one thread.
///
/// ```
/// use asat_pools::placement::actual_parallelism;
/// assert_eq!(actual_parallelism(20, 8, 0.5), 10);
/// assert_eq!(actual_parallelism(20, 25, 0.5), 20);
/// assert_eq!(actual_parallelism(20, 0, 0.0), 1);
/// ```
pub fn actual_parallelism(d: usize, p_idle: usize, g: f64) -> usize {
    let d = d.max(1);
    let gd = (g.clamp(0.0, 1.0) * d as f64).round() as usize;
    d.min(p_idle.max(gd).max(1))
}

/// Spreads `a` threads over the candidate pools (in candidate order): first onto idle
/// processors, home pool first; the threads beyond the idle processors one at a time to the
/// candidate whose resulting relative load is lowest (ties to the earlier candidate).
///
/// Returns the number of threads per candidate, in the order of `candidates`.
pub fn assign_threads(a: usize, candidates: &[usize], loads: &[u32], sizes: &[u32]) -> Vec<usize> {
    let mut n = vec![0usize; candidates.len()];
    if candidates.is_empty() {
        return n;
    }
    let mut left = a;
    for (k, &pool) in candidates.iter().enumerate() {
        if left == 0 {
            break;
        }
        let take = (idle(loads[pool], sizes[pool]) as usize).min(left);
        n[k] = take;
        left -= take;
    }
    while left > 0 {
        let mut best = 0;
        for k in 1..candidates.len() {
            let (pb, pk) = (candidates[best], candidates[k]);
            let o = cmp_relative(
                loads[pk] as u64 + n[k] as u64 + 1,
                sizes[pk] as u64,
                loads[pb] as u64 + n[best] as u64 + 1,
                sizes[pb] as u64,
            );
            if o == Ordering::Less {
                best = k;
            }
        }
        n[best] += 1;
        left -= 1;
    }
    n
}

/// A placement decision for one parallel phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The actual parallelism `a`.
    pub threads: usize,
    /// The candidate pools, home first.
    pub candidates: Vec<usize>,
    /// The idle processors in the candidate pools when the decision was made.
    pub idle: usize,
    /// `(pool, threads)` for each candidate pool that got at least one thread, in candidate
    /// order. The counts add up to `threads`.
    pub per_pool: Vec<(usize, usize)>,
}

impl Assignment {
    /// The number of pools the job spans (`k` of the spanning overhead).
    pub fn pools_spanned(&self) -> usize {
        self.per_pool.len()
    }

    /// The pool of each thread, threads numbered in `per_pool` order (the home pool's first
    /// when it got any).
    pub fn thread_pools(&self) -> impl Iterator<Item = usize> + '_ {
        self.per_pool
            .iter()
            .flat_map(|&(pool, n)| std::iter::repeat_n(pool, n))
    }
}

/// The whole decision of section 3.2: candidates, actual parallelism, spreading.
///
/// `d` is the desired parallelism, `home` the job's home pool, `loads` the active threads of
/// each pool (the job's own master thread not counted: it sleeps during the parallel phase),
/// `sizes` the processors of each pool. The pool size `p` of `x = round(F*d/p)` is the mean
/// pool size.
pub fn place(d: usize, home: usize, loads: &[u32], sizes: &[u32], params: Params) -> Assignment {
    assert!(home < loads.len() && loads.len() == sizes.len());
    let total: u64 = sizes.iter().map(|&s| s as u64).sum();
    let mean = total as f64 / sizes.len() as f64;
    let count = candidate_count(d, mean, sizes.len(), params.f);
    let candidates = candidate_pools(home, count, loads, sizes);
    let p_idle: usize = candidates
        .iter()
        .map(|&c| idle(loads[c], sizes[c]) as usize)
        .sum();
    let a = actual_parallelism(d, p_idle, params.g);
    let n = assign_threads(a, &candidates, loads, sizes);
    let per_pool = candidates
        .iter()
        .zip(&n)
        .filter(|(_, &k)| k > 0)
        .map(|(&c, &k)| (c, k))
        .collect();
    Assignment {
        threads: a,
        candidates,
        idle: p_idle,
        per_pool,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_spanning_example_two_candidates() {
        // Section 3.2: d = 20, p = 10, F = 0.8 on 60 processors: x = round(1.6) = 2 pools.
        assert_eq!(candidate_count(20, 10.0, 6, 0.8), 2);
        // F = 0: no spanning; F large: all P/p pools.
        assert_eq!(candidate_count(20, 10.0, 6, 0.0), 1);
        assert_eq!(candidate_count(20, 10.0, 6, 1e9), 6);
        // x < 1 is raised to 1.
        assert_eq!(candidate_count(1, 10.0, 6, 0.8), 1);
    }

    #[test]
    fn paper_restriction_example_ten_threads_three_and_seven() {
        // Section 3.2: two 10-processor candidate pools with 2 and 6 idle processors; 10
        // threads (G*d = 0.5*20 > 8 idle) are created, 3 and 7 per pool, both pools end at 11.
        // (The paper writes "F=0.5" but means the factor that sets a = 10, which is G; with
        // F = 0.5 literally, x = round(0.5*20/10) = 1 candidate, see the next test.)
        let loads = [8u32, 10, 10, 4, 10, 10];
        let sizes = [10u32; 6];
        let p = Params { f: 0.8, g: 0.5 };
        let a = place(20, 0, &loads, &sizes, p);
        assert_eq!(a.candidates, vec![0, 3]);
        assert_eq!(a.idle, 8);
        assert_eq!(a.threads, 10);
        assert_eq!(a.per_pool, vec![(0, 3), (3, 7)]);
        assert_eq!(loads[0] + 3, 11);
        assert_eq!(loads[3] + 7, 11);
        assert_eq!(a.pools_spanned(), 2);
        // And the spreading step alone.
        assert_eq!(assign_threads(10, &[0, 3], &loads, &sizes), vec![3, 7]);
    }

    #[test]
    fn literal_f_half_gives_one_candidate() {
        let loads = [8u32, 10, 10, 4, 10, 10];
        let sizes = [10u32; 6];
        let a = place(20, 0, &loads, &sizes, Params { f: 0.5, g: 0.5 });
        assert_eq!(a.candidates, vec![0]);
        assert_eq!(a.threads, 10);
        assert_eq!(a.per_pool, vec![(0, 10)]);
    }

    #[test]
    fn home_pool_is_least_loaded_lowest_index_on_ties() {
        assert_eq!(home_pool(&[3, 1, 1, 2], &[4, 4, 4, 4]), 1);
        assert_eq!(home_pool(&[0, 0], &[4, 4]), 0);
        // Relative to size: 4 of 8 is less loaded than 3 of 4.
        assert_eq!(home_pool(&[3, 4], &[4, 8]), 1);
    }

    #[test]
    fn enough_idle_processors_in_home_pool_stays_home() {
        let a = place(5, 2, &[10, 10, 0, 0, 10, 10], &[10; 6], Params::default());
        assert_eq!(a.threads, 5);
        assert_eq!(a.per_pool, vec![(2, 5)]);
    }

    #[test]
    fn candidates_are_home_then_increasing_load() {
        assert_eq!(
            candidate_pools(3, 3, &[5, 1, 9, 7, 1], &[8; 5]),
            vec![3, 1, 4]
        );
        assert_eq!(candidate_pools(0, 9, &[5, 1], &[8; 2]), vec![0, 1]);
    }

    #[test]
    fn restricted_parallelism_bounds() {
        assert_eq!(actual_parallelism(20, 0, 0.5), 10);
        assert_eq!(actual_parallelism(20, 0, 1.0), 20);
        assert_eq!(actual_parallelism(20, 0, 0.0), 1);
        assert_eq!(actual_parallelism(20, 13, 0.5), 13);
        assert_eq!(actual_parallelism(3, 0, 0.5), 2);
        assert_eq!(actual_parallelism(0, 0, 0.5), 1);
    }

    #[test]
    fn thread_pools_follow_per_pool() {
        let a = place(20, 0, &[8, 10, 10, 4, 10, 10], &[10; 6], Params::default());
        let v: Vec<usize> = a.thread_pools().collect();
        assert_eq!(v.len(), 10);
        assert_eq!(v.iter().filter(|&&p| p == 0).count(), 3);
        assert_eq!(v[0], 0);
    }
}
