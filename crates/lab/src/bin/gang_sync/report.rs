//! The results: `gang.csv`, the printed table and the summary.

use std::fmt::Write as _;

use asat_lab::files;

use crate::model::{equation, error_pct};
use crate::{Args, Row, METHODS};

pub fn write_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let path = args.out.join("gang.csv");
    let mut s = String::from("method,load,grain_us,var_us,time_per_iter_us,model_us\n");
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{:.3},{}",
            r.method,
            r.load,
            r.grain_us,
            r.var_us,
            r.time_per_iter_us,
            r.model_us.map_or(String::new(), |m| format!("{m:.3}"))
        );
    }
    files::write(&path, s)
}

pub fn print_table(rows: &[Row]) {
    println!(
        "{:<10} {:>5} {:>9} {:>8} {:>14} {:>10} {:>8}",
        "method", "load", "grain_us", "var_us", "us/iter", "model_us", "err%"
    );
    for r in rows {
        let err = r.model_us.map_or(String::from("-"), |m| {
            format!(
                "{:+.0}",
                100.0 * (m - r.time_per_iter_us) / r.time_per_iter_us
            )
        });
        println!(
            "{:<10} {:>5} {:>9} {:>8} {:>13.2}{} {:>10} {:>8}",
            r.method,
            r.load,
            r.grain_us,
            r.var_us,
            r.time_per_iter_us,
            if r.censored { ">" } else { " " },
            r.model_us.map_or(String::from("-"), |m| format!("{m:.2}")),
            err
        );
    }
}

pub fn find(rows: &[Row], m: &str, load: usize, g: f64) -> Option<f64> {
    rows.iter()
        .find(|r| r.method == m && r.load == load && r.grain_us == g)
        .map(|r| r.time_per_iter_us)
}

pub fn summary(args: &Args, rows: &[Row]) {
    let Some(&load) = args
        .load
        .iter()
        .find(|&&l| l == 3)
        .or(args.load.iter().max())
    else {
        return;
    };
    let mut grains = args.grains_us.clone();
    grains.sort_by(f64::total_cmp);
    let ratio = |g: f64| Some(find(rows, "os-block", load, g)? / find(rows, "gang-spin", load, g)?);
    if let Some(&g0) = grains.first() {
        if let Some(r) = ratio(g0) {
            println!("load {load}, finest grain {g0} us: os-block / gang-spin = {r:.2}");
        }
        // A conclusion only where both methods ran at some grain.
        if grains.iter().any(|&g| ratio(g).is_some()) {
            let crossover = grains.iter().find(|&&g| ratio(g).is_some_and(|r| r < 1.0));
            match crossover {
                Some(g) => println!("load {load}: blocking is faster from grain {g} us on"),
                None => {
                    println!("load {load}: gang-spin is at least as fast at every grain measured")
                }
            }
        }
        let mut loads = args.load.clone();
        loads.sort_unstable();
        for m in METHODS {
            let ts: Vec<String> = loads
                .iter()
                .filter_map(|&l| find(rows, m, l, g0).map(|t| format!("{l}:{t:.1}")))
                .collect();
            if !ts.is_empty() {
                println!("{m} at grain {g0} us, us/iter by load: {}", ts.join(" "));
            }
        }
    }
    let mut loads = args.load.clone();
    loads.sort_unstable();
    loads.dedup();
    for m in METHODS {
        let per_load: Vec<String> = loads
            .iter()
            .filter_map(|&l| {
                let errs: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.method == m && r.load == l)
                    .filter_map(error_pct)
                    .collect();
                (!errs.is_empty()).then(|| {
                    let ok = errs.iter().filter(|e| e.abs() <= 25.0).count();
                    format!("l={l}: {ok}/{}", errs.len())
                })
            })
            .collect();
        if !per_load.is_empty() {
            println!(
                "model {} ({m}), cells within 25% by load: {}",
                equation(m),
                per_load.join(", ")
            );
        }
    }
    switch_summary(args, rows);
}

/// The gang-spin cells' coordinated-switch stop times: the mean of their means, their range,
/// the longest stop of any run.
fn switch_summary(args: &Args, rows: &[Row]) {
    let cells: Vec<&Row> = rows
        .iter()
        .filter(|r| r.method == "gang-spin" && r.switch_us.is_some())
        .collect();
    let means: Vec<f64> = cells.iter().filter_map(|r| r.switch_us).collect();
    if means.is_empty() {
        return;
    }
    let lo = means.iter().copied().fold(f64::MAX, f64::min);
    let hi = means.iter().copied().fold(f64::MIN, f64::max);
    let max = cells
        .iter()
        .filter_map(|r| r.switch_max_us)
        .fold(0.0, f64::max);
    let own: Vec<f64> = cells.iter().filter_map(|r| r.own_stop_us).collect();
    println!(
        "gang-spin switch stop time{}: mean {:.1} us over {} cells (cells {lo:.1}-{hi:.1} us), \
         longest {max:.0} us{}",
        if args.processes {
            " across processes (the leader's domain stop)"
        } else {
            ""
        },
        means.iter().sum::<f64>() / means.len() as f64,
        means.len(),
        if own.is_empty() {
            String::new()
        } else {
            format!(
                "; each process's own threads: mean {:.1} us",
                own.iter().sum::<f64>() / own.len() as f64
            )
        }
    );
}
