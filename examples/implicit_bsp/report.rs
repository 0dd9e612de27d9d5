//! The results: `implicit.csv`, the printed table and `implicit.svg`.

use plotters::prelude::*;

use crate::{Args, Row};

pub fn write_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let path = args.out.join("implicit.csv");
    let mut s = String::from("pattern,grain_us,imbalance,strategy,completion_s,slowdown_vs_best\n");
    for r in rows {
        s.push_str(&format!(
            "{},{:.1},{},{},{:.4},{:.3}\n",
            r.cell.pattern,
            r.cell.grain_ns as f64 / 1e3,
            r.cell.imbalance_label,
            r.cell.strategy,
            r.completion_s,
            r.slowdown
        ));
    }
    std::fs::write(&path, s).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn print_table(rows: &[Row]) {
    println!(
        "{:<9} {:>7} {:>10} {:>9} {:<10} {:>12} {:>9} {:>9} {:>9}",
        "pattern",
        "grain",
        "grain_us",
        "imbalance",
        "strategy",
        "completion_s",
        "slowdown",
        "blocks",
        "spin_ok"
    );
    for r in rows {
        println!(
            "{:<9} {:>7} {:>10.1} {:>9} {:<10} {:>12.3} {:>9.2} {:>9} {:>9}{}",
            r.cell.pattern,
            r.cell.grain_label,
            r.cell.grain_ns as f64 / 1e3,
            r.cell.imbalance_label,
            r.cell.strategy,
            r.completion_s,
            r.slowdown,
            r.blocks,
            r.spin_successes,
            if r.timed_out {
                "  timed out (lower bound)"
            } else {
                ""
            }
        );
    }
}

/// One panel per pattern and imbalance (rows: imbalance), slowdown against granularity, one
/// line per strategy: the layout of the paper's Figure 13.
pub fn plot(
    args: &Args,
    rows: &[Row],
    grains: &[(String, u64)],
    imbalances: &[(String, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("implicit.svg");
    let (cols, nrows) = (args.patterns.len(), imbalances.len());
    let root = SVGBackend::new(&path, (430 * cols as u32, 340 * nrows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((nrows, cols));
    let xmax = grains.len() as f64 - 0.5;
    for (k, area) in areas.iter().enumerate() {
        let (ri, ci) = (k / cols, k % cols);
        let (pattern, (ilabel, _)) = (&args.patterns[ci], &imbalances[ri]);
        let cell: Vec<&Row> = rows
            .iter()
            .filter(|r| &r.cell.pattern == pattern && &r.cell.imbalance_label == ilabel)
            .collect();
        let ymax = cell.iter().map(|r| r.slowdown).fold(1.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{pattern}, imbalance {ilabel}"), ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(48)
            .build_cartesian_2d(-0.5f64..xmax, (0.9f64..ymax).log_scale())?;
        let labels: Vec<String> = grains
            .iter()
            .map(|(l, ns)| format!("{l} {:.0}us", *ns as f64 / 1e3))
            .collect();
        chart
            .configure_mesh()
            .x_desc("granularity g")
            .y_desc("slowdown vs best (log)")
            .x_labels(grains.len())
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 0.01 && i >= 0.0 && (i as usize) < labels.len() {
                    labels[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .draw()?;
        for (si, strategy) in args.strategies.iter().enumerate() {
            let color = Palette99::pick(si).to_rgba();
            let pts: Vec<(f64, f64)> = grains
                .iter()
                .enumerate()
                .filter_map(|(gi, (gl, _))| {
                    cell.iter()
                        .find(|r| &r.cell.strategy == strategy && &r.cell.grain_label == gl)
                        .map(|r| (gi as f64, r.slowdown))
                })
                .collect();
            // Every panel names its series; only the first draws its legend (below).
            asat_peers::plot::series(&mut chart, strategy.as_str(), color, &pts, true)?;
        }
        if k == 0 {
            asat_peers::plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
    }
    root.present()?;
    Ok(())
}
