//! The paper's model for each method (equations 6, 8 and 12), its inputs (every prediction at
//! a load from measurements at the other loads; see the program's docs), the model CSV and
//! the printed check of its errors.

use std::fmt::Write as _;

use asat::gang::Model;
use asat_lab::files;

use crate::{Args, Row, METHODS};

/// The paper's equation for a method.
pub fn equation(method: &str) -> &'static str {
    match method {
        "gang-spin" => "eq. 6",
        "os-spin" => "eq. 8",
        "os-block" => "eq. 12",
        _ => "-",
    }
}

/// The method whose load-1 time is the dedicated time of the model: gang-spin, or os-spin
/// when gang-spin is not run.
pub fn baseline_method(methods: &[String]) -> Option<&'static str> {
    ["gang-spin", "os-spin"]
        .into_iter()
        .find(|m| methods.iter().any(|x| x == m))
}

/// The kernel's base time slice, for the os-spin model, us, and where it came from.
pub fn os_slice_us() -> (f64, &'static str) {
    std::fs::read_to_string("/sys/kernel/debug/sched/base_slice_ns")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .map_or((3000.0, "EEVDF default; debugfs not readable"), |ns| {
            (ns / 1e3, "/sys/kernel/debug/sched/base_slice_ns")
        })
}

/// Where one load's model inputs came from.
pub struct Calibration {
    load: usize,
    /// eq. 6's `tau_cs`: the mean coordinated-switch stop time over the gang-spin cells at
    /// `tau_cs_loads` (never `load`), us; 0 when there are none.
    tau_cs: f64,
    tau_cs_loads: Vec<usize>,
    tau_cs_cells: usize,
    /// The loads the dedicated time was taken from (one per grain; normally a single load).
    baseline_loads: Vec<usize>,
}

/// Fills in the model column, each load from the other loads' rows (see the module docs).
pub fn add_model(
    args: &Args,
    rows: &mut [Row],
    n: usize,
    block_cpu_us: f64,
    slice_us: f64,
) -> Vec<Calibration> {
    let tau_q = args.quantum_ms * 1e3;
    let Some(base_method) = baseline_method(&args.methods) else {
        return Vec::new();
    };
    let mut loads: Vec<usize> = rows.iter().map(|r| r.load).collect();
    loads.sort_unstable();
    loads.dedup();
    let snapshot = rows.to_vec();
    let time = |m: &str, l: usize, g: f64| {
        snapshot
            .iter()
            .find(|r| r.method == m && r.load == l && r.grain_us == g && !r.censored)
            .map(|r| r.time_per_iter_us)
    };
    let mut calibrations = Vec::new();
    for &load in &loads {
        let others: Vec<&Row> = snapshot
            .iter()
            .filter(|r| r.load != load && r.method == "gang-spin")
            .filter(|r| r.switch_us.is_some())
            .collect();
        let tau_cs = if others.is_empty() {
            0.0
        } else {
            others.iter().filter_map(|r| r.switch_us).sum::<f64>() / others.len() as f64
        };
        let mut tau_cs_loads: Vec<usize> = others.iter().map(|r| r.load).collect();
        tau_cs_loads.dedup();
        let mut baseline_loads = Vec::new();
        for r in rows.iter_mut().filter(|r| r.load == load) {
            let g = r.grain_us;
            // The dedicated time at grain g, from another load: load 1 if this is not load 1,
            // else gang-spin at the lowest other load through eq. 6 inverted.
            let from_load_1 = (load != 1)
                .then(|| time(base_method, 1, g))
                .flatten()
                .map(|t| (1, t));
            let Some((from, dedicated)) = from_load_1.or_else(|| {
                loads
                    .iter()
                    .filter(|&&l| l != load && l >= 2)
                    .find_map(|&l| {
                        time("gang-spin", l, g)
                            .map(|t| (l, t / (l as f64 * (1.0 + tau_cs / tau_q))))
                    })
            }) else {
                continue;
            };
            if !baseline_loads.contains(&from) {
                baseline_loads.push(from);
            }
            let (_, t_w) = Model::synthetic(g, r.var_us, 0.0, n as u32);
            let base = Model {
                t_p: (dedicated - t_w).max(0.0),
                t_w,
                n: n as u32,
                load: r.load as f64,
                tau_q,
                tau_cs,
                alpha: 1.0,
            };
            let (model, predicted) = match r.method.as_str() {
                "gang-spin" => (base, base.gang_spin()),
                "os-spin" => {
                    let m = Model {
                        tau_q: slice_us,
                        tau_cs: 0.0,
                        ..base
                    };
                    (m, m.os_spin())
                }
                "os-block" => {
                    let m = Model {
                        // eq. 12 charges (n - 1)/n alpha tau_cs per thread and iteration.
                        tau_cs: block_cpu_us * n as f64 / (n as f64 - 1.0).max(1.0),
                        alpha: 1.0,
                        ..base
                    };
                    (m, m.os_block())
                }
                _ => continue,
            };
            r.model = Some((model, from));
            r.model_us = Some(predicted);
        }
        calibrations.push(Calibration {
            load,
            tau_cs,
            tau_cs_loads,
            tau_cs_cells: others.len(),
            baseline_loads,
        });
    }
    calibrations
}

/// `DIR/gang_model.csv`: one line per cell with a model value.
pub fn write_model_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let path = args.out.join("gang_model.csv");
    let mut s = String::from(
        "load,grain_us,method,equation,measured_us,model_us,error_pct,\
         t_p_us,t_w_us,tau_q_us,tau_cs_us,dedicated_from_load\n",
    );
    for r in rows {
        let (Some(m), Some((p, from))) = (r.model_us, r.model) else {
            continue;
        };
        let _ = writeln!(
            s,
            "{},{},{},{},{:.3},{:.3},{:.1},{:.3},{:.3},{:.1},{:.3},{}",
            r.load,
            r.grain_us,
            r.method,
            equation(&r.method),
            r.time_per_iter_us,
            m,
            error_pct(r).unwrap_or(f64::NAN),
            p.t_p,
            p.t_w,
            p.tau_q,
            p.alpha * p.tau_cs,
            from
        );
    }
    files::write(&path, s)
}

/// The model's error for a row, percent of the measurement (`None` without a model value).
pub fn error_pct(r: &Row) -> Option<f64> {
    r.model_us
        .map(|m| 100.0 * (m - r.time_per_iter_us) / r.time_per_iter_us)
}

/// Where every model input came from, then each equation's error by grain and load.
#[allow(clippy::too_many_arguments)]
pub fn print_model_check(
    args: &Args,
    rows: &[Row],
    calibrations: &[Calibration],
    n: usize,
    block_cpu_us: f64,
    slice: (f64, &str),
) {
    let Some(base_method) = baseline_method(&args.methods) else {
        return;
    };
    let tau_q = args.quantum_ms * 1e3;
    let mut grains = args.grains_us.clone();
    grains.sort_by(f64::total_cmp);
    println!();
    println!("model inputs (a prediction at load l uses no measurement taken at load l):");
    let baseline: Vec<String> = grains
        .iter()
        .filter_map(|&g| {
            let r = rows
                .iter()
                .find(|r| r.method == base_method && r.load == 1 && r.grain_us == g)?;
            let lo = r.runs_us.iter().copied().fold(f64::MAX, f64::min);
            let hi = r.runs_us.iter().copied().fold(f64::MIN, f64::max);
            Some(format!("{g}: {:.2} [{lo:.2}-{hi:.2}]", r.time_per_iter_us))
        })
        .collect();
    if !baseline.is_empty() {
        let runs = rows
            .iter()
            .find(|r| r.method == base_method && r.load == 1)
            .map_or(0, |r| r.runs_us.len());
        println!(
            "  dedicated time t_p + t_w, loads >= 2: {base_method} at load 1, median of {runs} runs \
             [min-max], us, by grain: {}",
            baseline.join(", ")
        );
    }
    for c in calibrations {
        let from: Vec<String> = c.baseline_loads.iter().map(|l| l.to_string()).collect();
        let how = if c.baseline_loads.iter().all(|&l| l == 1) {
            format!("{base_method} at load 1")
        } else {
            format!(
                "gang-spin at load {} / (load (1 + tau_cs/tau_q)) (eq. 6 inverted)",
                from.join(",")
            )
        };
        let tau = if c.tau_cs_cells == 0 {
            "tau_cs = 0 (no gang-spin switch measured at another load)".to_string()
        } else {
            let ls: Vec<String> = c.tau_cs_loads.iter().map(|l| l.to_string()).collect();
            format!(
                "tau_cs = {:.1} us = mean switch stop time of the {} gang-spin cells at load{} {} \
                 (tau_cs/tau_q = {:.2}%)",
                c.tau_cs,
                c.tau_cs_cells,
                if ls.len() > 1 { "s" } else { "" },
                ls.join(","),
                100.0 * c.tau_cs / tau_q
            )
        };
        println!("  load {}: dedicated time from {how}; eq. 6 {tau}", c.load);
    }
    println!("  t_w = VAR (n/(n+1) - 1/2) with n = {n} (analytic); t_p = dedicated time - t_w");
    println!(
        "  eq. 6: tau_q = {tau_q:.0} us (the gang quantum, configured); eq. 8: tau_q = {:.0} us \
         (kernel base slice: {}), tau_cs = 0; eq. 12: (n-1)/n alpha tau_cs = {block_cpu_us:.2} us \
         (blocking-barrier CPU per thread and episode, start-up microbenchmark)",
        slice.0, slice.1
    );
    if let Some(c) = calibrations.iter().find(|c| c.tau_cs_cells > 0) {
        println!(
            "  note: eq. 6 predicts (dedicated time) x l x (1 + tau_cs/tau_q), and tau_cs/tau_q \
             is about {:.2}% here: it is in effect a check that gang-spin time grows linearly \
             with the load from the baseline load, not a test of the switch-cost term",
            100.0 * c.tau_cs / tau_q
        );
    }
    let mut loads: Vec<usize> = rows.iter().map(|r| r.load).collect();
    loads.sort_unstable();
    loads.dedup();
    for m in METHODS {
        if !rows.iter().any(|r| r.method == m && r.model_us.is_some()) {
            continue;
        }
        println!();
        println!(
            "{} ({m}) model error, % of measured, by grain (rows) and load (columns):",
            equation(m)
        );
        let mut head = format!("{:>9}", "grain_us");
        for l in &loads {
            let _ = write!(head, " {:>7}", format!("l={l}"));
        }
        println!("{head}");
        for &g in &grains {
            let mut line = format!("{g:>9}");
            for &l in &loads {
                let e = rows
                    .iter()
                    .find(|r| r.method == m && r.load == l && r.grain_us == g)
                    .and_then(error_pct);
                let _ = write!(
                    line,
                    " {:>7}",
                    e.map_or(String::from("-"), |e| format!("{e:+.0}"))
                );
            }
            println!("{line}");
        }
        let mut within = format!("{:>9}", "<=25%");
        let mut med = format!("{:>9}", "median");
        for &l in &loads {
            let errs: Vec<f64> = rows
                .iter()
                .filter(|r| r.method == m && r.load == l)
                .filter_map(error_pct)
                .collect();
            let ok = errs.iter().filter(|e| e.abs() <= 25.0).count();
            let _ = write!(within, " {:>7}", format!("{ok}/{}", errs.len()));
            let _ = write!(
                med,
                " {:>7}",
                if errs.is_empty() {
                    String::from("-")
                } else {
                    format!("{:+.0}", asat_peers::stats::median(errs))
                }
            );
        }
        println!("{within}");
        println!("{med}");
    }
}
