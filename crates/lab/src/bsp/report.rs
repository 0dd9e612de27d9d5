//! The results of a bulk-synchronous experiment: its CSV, its printed table and its plot, the
//! layout of the implicit-coscheduling paper's Figure 13 (one panel per pattern and imbalance,
//! slowdown against granularity, one line per strategy).

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use super::{Axes, Row};
use crate::files;

/// The CSV's header: the median completion time and its ratio to the best strategy.
pub const CSV_HEADER: &str = "pattern,grain_us,imbalance,strategy,completion_s,slowdown_vs_best";

/// The CSV text of `rows` (with [`CSV_HEADER`]).
pub fn csv(rows: &[Row]) -> String {
    let mut s = format!("{CSV_HEADER}\n");
    for r in rows {
        let _ = writeln!(
            s,
            "{},{:.1},{},{},{:.6},{:.4}",
            r.cell.pattern,
            r.cell.grain_ns as f64 / 1e3,
            r.cell.imbalance_label,
            r.cell.strategy,
            r.completion_s,
            r.slowdown
        );
    }
    s
}

/// Writes `rows` to the folder `dir` as `NAME.csv` ([`csv`]) and `NAME.svg` ([`plot`] of
/// `layout`).
pub fn write(dir: &Path, name: &str, layout: Layout<'_>, rows: &[Row]) -> Result<(), String> {
    files::write(&dir.join(format!("{name}.csv")), csv(rows))?;
    plot(&dir.join(format!("{name}.svg")), layout, rows).map_err(|e| format!("plot: {e}"))
}

/// The table's header line.
pub fn header() -> String {
    format!(
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
    )
}

/// The table's line of `r` (a timed-out row says it is a lower bound).
pub fn line(r: &Row) -> String {
    format!(
        "{:<9} {:>7} {:>10.1} {:>9} {:<10} {:>12.4} {:>9.2} {:>9} {:>9}{}",
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
    )
}

/// What a plot shows: the panels' patterns, the grains of the x axis and the imbalances of
/// the rows of panels, and the strategies, one line each.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    /// One column of panels each.
    pub patterns: &'a [String],
    /// The grains (x axis) and imbalances (one row of panels each), in this order.
    pub axes: &'a Axes,
    /// One line each, in this order (colours by position).
    pub strategies: &'a [String],
}

/// Draws `rows` to the SVG file `path`: one panel per pattern (columns) and imbalance (rows),
/// slowdown against the best strategy (log) by grain, one line per strategy; the first panel
/// draws the legend.
pub fn plot(
    path: &Path,
    layout: Layout<'_>,
    rows: &[Row],
) -> Result<(), Box<dyn std::error::Error>> {
    let Layout {
        patterns,
        axes: Axes { grains, imbalances },
        strategies,
    } = layout;
    let (cols, nrows) = (patterns.len(), imbalances.len());
    let root = SVGBackend::new(path, (430 * cols as u32, 340 * nrows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let labels: Vec<String> = grains
        .iter()
        .map(|(l, ns)| format!("{l} {:.0}us", *ns as f64 / 1e3))
        .collect();
    for (k, area) in root.split_evenly((nrows, cols)).iter().enumerate() {
        let (pattern, ilabel) = (&patterns[k % cols], &imbalances[k / cols].0);
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
        for (si, strategy) in strategies.iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::super::{cells, JobResult};
    use super::*;

    #[test]
    fn csv_table_and_plot_of_a_cell() {
        let strategies = ["block".to_string(), "spin".to_string()];
        let grain = ("fine".to_string(), 15_000);
        let imbalance = ("low".to_string(), 0.25);
        let cells = cells("news", &grain, &imbalance, &strategies);
        let job = |w| {
            vec![vec![JobResult {
                wall_s: w,
                ..JobResult::default()
            }]]
        };
        let rows = super::super::cell_rows(cells, vec![job(2.0), job(1.0)]);
        let text = csv(&rows);
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                CSV_HEADER,
                "news,15.0,low,block,2.000000,2.0000",
                "news,15.0,low,spin,1.000000,1.0000"
            ]
        );
        assert!(header().starts_with("pattern"));
        assert!(line(&rows[0]).contains("block"));
        let dir = tempfile::tempdir().unwrap();
        let axes = Axes {
            grains: vec![grain],
            imbalances: vec![imbalance],
        };
        let layout = Layout {
            patterns: &["news".to_string()],
            axes: &axes,
            strategies: &strategies,
        };
        write(dir.path(), "bsp", layout, &rows).unwrap();
        let svg = std::fs::read_to_string(dir.path().join("bsp.svg")).unwrap();
        assert!(svg.contains("<svg"));
        let written = std::fs::read_to_string(dir.path().join("bsp.csv")).unwrap();
        assert_eq!(written, text);
    }
}
