//! Invariants of the placement rules (section 3.2), for any loads, pool sizes and parameters.

use asat_pools::placement::{candidate_count, home_pool, idle, place, Params};
use proptest::prelude::*;

fn machine() -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    // 1..12 pools of 1..16 CPUs, loads up to 3 times the size.
    prop::collection::vec((1u32..16, 0u32..48), 1..12)
        .prop_map(|v| v.into_iter().map(|(s, l)| (l.min(3 * s), s)).unzip())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn placement_invariants(
        (loads, sizes) in machine(),
        d in 1usize..200,
        home_pick in any::<prop::sample::Index>(),
        f in 0.0f64..4.0,
        g in 0.0f64..=1.0,
    ) {
        let home = home_pick.index(loads.len());
        let params = Params { f, g };
        let a = place(d, home, &loads, &sizes, params);
        let total: u64 = sizes.iter().map(|&s| s as u64).sum();
        let mean = total as f64 / sizes.len() as f64;
        let allowed = candidate_count(d, mean, sizes.len(), f);

        // Never more pools than allowed, all distinct, the home pool first.
        prop_assert!(!a.candidates.is_empty());
        prop_assert!(a.candidates.len() <= allowed);
        prop_assert_eq!(a.candidates.len(), allowed.min(loads.len()));
        prop_assert_eq!(a.candidates[0], home);
        let mut c = a.candidates.clone();
        c.sort_unstable();
        c.dedup();
        prop_assert_eq!(c.len(), a.candidates.len());
        // Other candidates are the least loaded of the non-home pools (relative to size).
        let worst_candidate = a.candidates[1..]
            .iter()
            .map(|&p| loads[p] as f64 / sizes[p] as f64)
            .fold(f64::NEG_INFINITY, f64::max);
        for p in 0..loads.len() {
            if !a.candidates.contains(&p) && a.candidates.len() > 1 {
                prop_assert!(loads[p] as f64 / sizes[p] as f64 >= worst_candidate - 1e-12);
            }
        }

        // 1 <= a <= d, and a = min(d, max(p_idle, round(G d), 1)).
        prop_assert!(a.threads >= 1 && a.threads <= d);
        let p_idle: usize = a.candidates.iter().map(|&p| idle(loads[p], sizes[p]) as usize).sum();
        prop_assert_eq!(a.idle, p_idle);
        let gd = (g * d as f64).round() as usize;
        prop_assert_eq!(a.threads, d.min(p_idle.max(gd).max(1)));

        // Threads only in candidate pools; totals add up.
        let placed: usize = a.per_pool.iter().map(|&(_, n)| n).sum();
        prop_assert_eq!(placed, a.threads);
        for &(p, n) in &a.per_pool {
            prop_assert!(a.candidates.contains(&p));
            prop_assert!(n >= 1);
        }
        prop_assert!(a.pools_spanned() <= allowed);
        prop_assert_eq!(a.thread_pools().count(), a.threads);

        // Idle processors are used first: with a <= p_idle no pool gets more threads than
        // it has idle CPUs; with a > p_idle every candidate is filled up.
        let mut after = loads.clone();
        for &(p, n) in &a.per_pool {
            after[p] += n as u32;
        }
        if a.threads <= p_idle {
            for &(p, n) in &a.per_pool {
                prop_assert!(n as u32 <= idle(loads[p], sizes[p]));
            }
        } else {
            for &p in &a.candidates {
                prop_assert!(after[p] >= sizes[p], "pool {} kept an idle CPU", p);
            }
            // The threads beyond the idle CPUs balance the candidates: moving a pool's last
            // thread to any other candidate would not lower the larger of the two loads.
            for &(p, n) in &a.per_pool {
                if after[p] > sizes[p].max(loads[p]) && n > 0 {
                    for &q in &a.candidates {
                        let here = after[p] as u64 * sizes[q] as u64;
                        let there = (after[q] as u64 + 1) * sizes[p] as u64;
                        prop_assert!(here <= there, "pool {} at {} vs pool {} at {}", p, after[p], q, after[q]);
                    }
                }
            }
        }
    }

    #[test]
    fn home_pool_is_least_loaded((loads, sizes) in machine()) {
        let h = home_pool(&loads, &sizes);
        for p in 0..loads.len() {
            prop_assert!((loads[h] as u64) * (sizes[p] as u64) <= (loads[p] as u64) * (sizes[h] as u64));
        }
    }

    #[test]
    fn load_totals_add_up_over_a_sequence_of_jobs(
        sizes in prop::collection::vec(1u32..12, 1..8),
        jobs in prop::collection::vec((1usize..40, any::<bool>()), 1..60),
    ) {
        // Jobs start (home pool, master counted) and enter their parallel phase, or a running
        // job ends: the table's total is always the sum of what live jobs hold.
        let mut loads = vec![0u32; sizes.len()];
        let mut live: Vec<Vec<(usize, usize)>> = Vec::new();
        for (d, end) in jobs {
            if end && !live.is_empty() {
                for (p, n) in live.remove(0) { loads[p] -= n as u32; }
            } else {
                let home = home_pool(&loads, &sizes);
                let a = place(d, home, &loads, &sizes, Params::default());
                for &(p, n) in &a.per_pool { loads[p] += n as u32; }
                live.push(a.per_pool.clone());
            }
            let held: usize = live.iter().flatten().map(|&(_, n)| n).sum();
            prop_assert_eq!(loads.iter().map(|&l| l as usize).sum::<usize>(), held);
        }
    }
}
