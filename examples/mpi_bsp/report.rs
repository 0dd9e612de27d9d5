//! The table, `mpi_bsp.csv` and `mpi_bsp.svg`.

use plotters::prelude::*;

use crate::jobs::Cell;
use crate::Args;

/// One row of the table: a strategy in a cell.
#[derive(Clone, Debug)]
pub struct Row {
    pub cell: Cell,
    pub completion_s: f64,
    pub slowdown: f64,
    pub timed_out: bool,
    pub blocks: u64,
    pub spin_successes: u64,
}

pub fn print_header() {
    println!(
        "{:<9} {:>10} {:>9} {:<9} {:>12} {:>9} {:>9} {:>9}",
        "pattern", "grain", "imbalance", "wait", "completion_s", "slowdown", "blocks", "spins"
    );
}

pub fn print_row(r: &Row) {
    println!(
        "{:<9} {:>10} {:>9} {:<9} {:>12.4} {:>9.2} {:>9} {:>9}{}",
        r.cell.pattern,
        format!(
            "{} {:.0}us",
            r.cell.grain_label,
            r.cell.grain_ns as f64 / 1e3
        ),
        r.cell.imbalance_label,
        r.cell.strategy,
        r.completion_s,
        r.slowdown,
        r.blocks,
        r.spin_successes,
        if r.timed_out {
            "  (timed out: a lower bound)"
        } else {
            ""
        }
    );
}

/// The target for one cell: the better of asat-mpi's adaptive strategies (`local`,
/// `global`) against `mpi` and against the best strategy; `None` without `mpi` or either.
pub fn target_line(cell_rows: &[Row]) -> Option<String> {
    let get = |s: &str| cell_rows.iter().find(|r| r.cell.strategy == s);
    let mpi = get("mpi")?;
    let adaptive = ["local", "global"]
        .iter()
        .filter_map(|s| get(s))
        .min_by(|a, b| a.completion_s.total_cmp(&b.completion_s))?;
    Some(format!(
        "  target: {} is {:.2}x faster than mpi (>= 2), {:.3}x the best (<= 1.1)",
        adaptive.cell.strategy,
        mpi.completion_s / adaptive.completion_s,
        adaptive.slowdown
    ))
}

pub fn write_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let mut csv =
        String::from("pattern,grain_us,imbalance,strategy,completion_s,slowdown_vs_best\n");
    for r in rows {
        csv.push_str(&format!(
            "{},{},{},{},{:.6},{:.4}\n",
            r.cell.pattern,
            r.cell.grain_ns as f64 / 1e3,
            r.cell.imbalance_label,
            r.cell.strategy,
            r.completion_s,
            r.slowdown
        ));
    }
    let path = args.out.join("mpi_bsp.csv");
    std::fs::write(&path, csv).map_err(|e| format!("{}: {e}", path.display()))
}

/// One panel per pattern and imbalance: slowdown against the best strategy, by grain.
pub fn plot(
    args: &Args,
    rows: &[Row],
    grains: &[(String, u64)],
    imbalances: &[(String, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("mpi_bsp.svg");
    let (cols, nrows) = (args.patterns.len(), imbalances.len());
    let root = SVGBackend::new(&path, (430 * cols as u32, 340 * nrows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let labels: Vec<String> = grains
        .iter()
        .map(|(l, ns)| format!("{l} {:.0}us", *ns as f64 / 1e3))
        .collect();
    for (k, area) in root.split_evenly((nrows, cols)).iter().enumerate() {
        let (pattern, ilabel) = (&args.patterns[k % cols], &imbalances[k / cols].0);
        let panel: Vec<&Row> = rows
            .iter()
            .filter(|r| &r.cell.pattern == pattern && &r.cell.imbalance_label == ilabel)
            .collect();
        let ymax = panel.iter().map(|r| r.slowdown).fold(1.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{pattern}, imbalance {ilabel}"), ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(48)
            .build_cartesian_2d(
                -0.5f64..grains.len() as f64 - 0.5,
                (0.9f64..ymax).log_scale(),
            )?;
        chart
            .configure_mesh()
            .x_desc("granularity g")
            .y_desc("slowdown vs best (log)")
            .x_labels(grains.len())
            .x_label_formatter(&|x| {
                let i = x.round();
                let ok = (x - i).abs() < 0.01 && i >= 0.0 && (i as usize) < labels.len();
                if ok {
                    labels[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .draw()?;
        for (si, strategy) in args.strategies.iter().enumerate() {
            let pts: Vec<(f64, f64)> = grains
                .iter()
                .enumerate()
                .filter_map(|(gi, (gl, _))| {
                    panel
                        .iter()
                        .find(|r| &r.cell.strategy == strategy && &r.cell.grain_label == gl)
                        .map(|r| (gi as f64, r.slowdown))
                })
                .collect();
            let color = Palette99::pick(si).to_rgba();
            asat_peers::plot::series(&mut chart, strategy.as_str(), color, &pts, true)?;
        }
        if k == 0 {
            asat_peers::plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
    }
    root.present()?;
    Ok(())
}
