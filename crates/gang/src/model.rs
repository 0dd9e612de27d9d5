//! Feitelson and Rudolph's model of a gang of `n` threads that compute and meet at a barrier,
//! iteration after iteration, on a machine shared by `load` such gangs per processor.
//!
//! All times are in one unit of the caller's choice (the functions only multiply and add):
//!
//! - `t_p`: the mean computation per thread per iteration, barrier overhead included (eq. 1);
//! - `t_w`: the mean time a thread waits for the slowest one at the barrier (eq. 4), so that
//!   `t_p + t_w` is an iteration on a dedicated machine;
//! - `tau_q`: the scheduling quantum; `tau_cs`: the cost of a context switch (for gang
//!   scheduling, of a coordinated switch); `alpha`: how much more a blocking switch costs than
//!   a plain one (> 1).
//!
//! ```
//! use asat_gang::Model;
//! // The paper's Makbilan parameters (ms): tau_q = 50, tau_cs = 0.2, alpha = 1.5.
//! let m = Model { t_p: 0.1, t_w: 0.02, n: 10, load: 3.0, tau_q: 50.0, tau_cs: 0.2, alpha: 1.5 };
//! let gang = m.gang_spin();
//! let block = m.os_block();
//! assert!(block / gang > 2.0); // fine grain: busy waiting under gang scheduling wins
//! ```

/// The model's parameters; see the module docs for the meaning and units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Mean computation per iteration (barrier overhead included).
    pub t_p: f64,
    /// Mean wait for the slowest thread per iteration.
    pub t_w: f64,
    /// Threads in the gang.
    pub n: u32,
    /// Threads (gangs) per processor, `ℓ`.
    pub load: f64,
    /// Scheduling quantum.
    pub tau_q: f64,
    /// Cost of one context switch (coordinated, for gang scheduling).
    pub tau_cs: f64,
    /// Blocking costs `alpha` context switches.
    pub alpha: f64,
}

impl Model {
    /// Equation (6): busy waiting under gang scheduling,
    /// `t = (1 + tau_cs / tau_q) (t_p + t_w) ℓ`.
    pub fn gang_spin(&self) -> f64 {
        (1.0 + self.tau_cs / self.tau_q) * (self.t_p + self.t_w) * self.load
    }

    /// Equation (8): busy waiting under uncoordinated scheduling, fine grain,
    /// `t = (1 + tau_cs / tau_q)^n (t_p + t_w) ℓ^n`, capped (as the paper says below it) at
    /// one iteration per scheduling round, `(tau_q + tau_cs) ℓ`, and never below equation (6).
    pub fn os_spin(&self) -> f64 {
        // powf: `n` as an i32 exponent would wrap negative for n >= 2^31.
        let n = f64::from(self.n);
        let t =
            (1.0 + self.tau_cs / self.tau_q).powf(n) * (self.t_p + self.t_w) * self.load.powf(n);
        let cap = (self.tau_q + self.tau_cs) * self.load;
        t.min(cap).max(self.gang_spin())
    }

    /// Equation (12): blocking under uncoordinated scheduling, fine grain, all competitors
    /// alike: `t = (1 + (n - 1) alpha tau_cs / (n t_p)) t_p ℓ`, that is
    /// `(t_p + (n - 1)/n alpha tau_cs) ℓ`.
    pub fn os_block(&self) -> f64 {
        let n = f64::from(self.n.max(1));
        (self.t_p + (n - 1.0) / n * self.alpha * self.tau_cs) * self.load
    }

    /// Equation (13): blocking when the competitors are compute-bound threads that never
    /// block: one iteration per scheduling round,
    /// `t = t_p + (ℓ - 1) tau_q + (ℓ + alpha - 1) tau_cs`.
    pub fn os_block_vs_compute(&self) -> f64 {
        self.t_p + (self.load - 1.0) * self.tau_q + (self.load + self.alpha - 1.0) * self.tau_cs
    }

    /// The paper's `t_p` and `t_w` for its synthetic program (eq. 14 in general form): each
    /// thread computes `grain + U(0, var)` per iteration plus a barrier costing `barrier`, so
    /// `t_p = barrier + grain + var / 2` and `t_w = var (n / (n + 1) - 1/2)` (the expected
    /// maximum of `n` uniform draws minus their mean). Returns `(t_p, t_w)`.
    pub fn synthetic(grain: f64, var: f64, barrier: f64, n: u32) -> (f64, f64) {
        let n = f64::from(n.max(1));
        let t_p = barrier + grain + var / 2.0;
        let t_w = var * (n / (n + 1.0) - 0.5);
        (t_p, t_w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn makbilan(t_p: f64, t_w: f64, load: f64, n: u32) -> Model {
        Model {
            t_p,
            t_w,
            n,
            load,
            tau_q: 50.0,
            tau_cs: 0.2,
            alpha: 1.5,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn equations_match_hand_computation() {
        let m = makbilan(1.0, 0.5, 3.0, 2);
        assert!(close(m.gang_spin(), (1.0 + 0.2 / 50.0) * 1.5 * 3.0));
        // eq. 8: (1.004)^2 * 1.5 * 9
        assert!(close(m.os_spin(), 1.004f64.powi(2) * 1.5 * 9.0));
        // eq. 12: (1 + 1/2 * 1.5 * 0.2) * 3
        assert!(close(m.os_block(), (1.0 + 0.5 * 1.5 * 0.2) * 3.0));
        // eq. 13: 1 + 2 * 50 + (3 + 0.5) * 0.2
        assert!(close(m.os_block_vs_compute(), 1.0 + 100.0 + 3.5 * 0.2));
    }

    #[test]
    fn uncoordinated_spin_is_capped_at_one_iteration_per_round() {
        let m = makbilan(10.0, 5.0, 4.0, 10);
        assert!(close(m.os_spin(), 50.2 * 4.0));
        // However many threads (an exponent past i32 included).
        let huge = makbilan(10.0, 5.0, 4.0, u32::MAX);
        assert!(close(huge.os_spin(), 50.2 * 4.0));
        let dedicated = makbilan(10.0, 5.0, 1.0, 10);
        assert!(close(
            dedicated.os_spin(),
            dedicated.gang_spin().max(dedicated.os_spin())
        ));
    }

    #[test]
    fn load_scales_gang_linearly_and_uncoordinated_spin_as_a_power() {
        let m1 = makbilan(0.1, 0.05, 1.0, 2);
        let m3 = makbilan(0.1, 0.05, 3.0, 2);
        assert!(close(m3.gang_spin() / m1.gang_spin(), 3.0));
        assert!(close(m3.os_spin() / m1.os_spin(), 9.0));
    }

    #[test]
    fn fine_grain_favours_gang_and_coarse_grain_with_imbalance_favours_blocking() {
        // The paper's fig. 9 corner: t_p + 2 t_w well under 0.3 ms.
        let fine = makbilan(0.05, 0.02, 3.0, 10);
        assert!(fine.os_block() / fine.gang_spin() > 2.0);
        // Highly unbalanced coarse grain: blocking wins.
        let coarse = makbilan(1.0, 3.0, 3.0, 10);
        assert!(coarse.os_block() < coarse.gang_spin());
    }

    #[test]
    fn synthetic_parameters() {
        let (t_p, t_w) = Model::synthetic(100.0, 100.0, 10.0, 2);
        assert!(close(t_p, 160.0));
        assert!(close(t_w, 100.0 * (2.0 / 3.0 - 0.5)));
        let (t_p, t_w) = Model::synthetic(5.0, 0.0, 1.0, 8);
        assert!(close(t_p, 6.0) && close(t_w, 0.0));
    }
}
