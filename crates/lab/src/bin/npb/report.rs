//! What the harness reports: `npb.csv`, `npb.svg` and the table on stdout.

use std::path::Path;

use asat_lab::files;
use asat_peers::plot;
use plotters::prelude::*;

use crate::IMPLS;

/// One cell: a kernel, class, implementation and copies count, its medians over the
/// repetitions.
#[derive(Debug, Clone)]
pub struct Row {
    /// The kernel (`cg`, `ep`, `ft`, `is`, `mg`).
    pub kernel: String,
    /// Its class.
    pub class: String,
    /// The implementation (`--impls` value).
    pub imp: String,
    /// Copies run at once.
    pub copies: usize,
    /// Median over repetitions of the copies' mean wall time.
    pub mean_s: f64,
    /// Median over repetitions of the time until the last copy finished.
    pub max_s: f64,
    /// Median over repetitions of the CPU seconds of all copies together.
    pub cpu_s: f64,
    /// Whether a repetition's copies were killed at the timeout (the times are then lower
    /// bounds, and the row is not verified).
    pub timed_out: bool,
    /// Median over repetitions of the copies' mean `Time in seconds` (NPB's timed section);
    /// `None` when a copy printed none (killed).
    pub npb_s: Option<f64>,
}

/// Writes `rows` to `path` as CSV (`verified` is false only for rows killed at the timeout: a
/// copy that finished without verifying stops the harness).
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<(), String> {
    let mut csv = String::from("kernel,class,impl,copies,mean_s,max_s,cpu_s,verified,npb_s\n");
    for r in rows {
        csv.push_str(&format!(
            "{},{},{},{},{:.4},{:.4},{:.4},{},{}\n",
            r.kernel,
            r.class,
            r.imp,
            r.copies,
            r.mean_s,
            r.max_s,
            r.cpu_s,
            !r.timed_out,
            r.npb_s.map_or(String::new(), |s| format!("{s:.4}"))
        ));
    }
    files::write(path, csv)
}

/// The rows of one kernel and copies count, in `IMPLS` order.
fn cell<'a>(rows: &'a [Row], kernel: &str, copies: usize) -> Vec<&'a Row> {
    let mut v: Vec<&Row> = rows
        .iter()
        .filter(|r| r.kernel == kernel && r.copies == copies)
        .collect();
    v.sort_by_key(|r| IMPLS.iter().position(|i| *i == r.imp));
    v
}

/// `what` (max_s or mean_s) of `imp` over the best of serial, rayon and omp in `cell`.
fn ratio(cell: &[&Row], imp: &str, what: fn(&Row) -> f64) -> Option<f64> {
    let best = cell
        .iter()
        .filter(|r| matches!(r.imp.as_str(), "serial" | "rayon" | "omp"))
        .map(|r| what(r))
        .reduce(f64::min)?;
    let own = cell.iter().find(|r| r.imp == imp).map(|r| what(r))?;
    Some(own / best)
}

/// Prints the table: per kernel and copies count, each implementation's `max_s/mean_s`, and
/// asat's and asat-fixed's max_s and mean_s over the best of serial, rayon and omp.
pub fn print_table(rows: &[Row], kernels: &[(String, String)], copies: &[usize], threads: usize) {
    let imps: Vec<&str> = IMPLS
        .iter()
        .copied()
        .filter(|i| rows.iter().any(|r| r.imp == *i))
        .collect();
    let asats: Vec<&str> = imps
        .iter()
        .copied()
        .filter(|i| i.starts_with("asat"))
        .collect();
    println!(
        "\nNPB, {threads} threads per job: max_s/mean_s in seconds (max_s: until the last copy \
         finished; mean_s: mean of the copies); x/best: max_s and mean_s over the best of \
         serial/rayon/omp; >: killed at --timeout, a lower bound, not verified"
    );
    let mut head = format!("{:<6} {:<5} {:>6}", "kernel", "class", "copies");
    for i in &imps {
        head.push_str(&format!(" {i:>15}"));
    }
    for a in &asats {
        head.push_str(&format!(" {:>22}", format!("{a}/best max,mean")));
    }
    println!("{head}");
    for (kernel, class) in kernels {
        for &c in copies {
            let cell = cell(rows, kernel, c);
            if cell.is_empty() {
                continue;
            }
            let mut line = format!("{kernel:<6} {class:<5} {c:>6}");
            for i in &imps {
                let s = cell
                    .iter()
                    .find(|r| r.imp == *i)
                    .map_or("-".to_owned(), |r| {
                        let killed = if r.timed_out { ">" } else { "" };
                        format!("{killed}{:.2}/{:.2}", r.max_s, r.mean_s)
                    });
                line.push_str(&format!(" {s:>15}"));
            }
            for a in &asats {
                let max = ratio(&cell, a, |r| r.max_s);
                let mean = ratio(&cell, a, |r| r.mean_s);
                let s = match (max, mean) {
                    (Some(x), Some(y)) => format!("{x:.2},{y:.2}"),
                    _ => "-".to_owned(),
                };
                line.push_str(&format!(" {s:>22}"));
            }
            println!("{line}");
        }
    }
}

/// The line color of each of `IMPLS`: serial gray, rayon green, omp red, asat-fixed orange,
/// asat blue.
const COLORS: [RGBColor; 5] = [
    RGBColor(127, 127, 127),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(31, 119, 180),
];

/// Draws `path`: one panel per kernel, max_s against copies, one line per implementation.
pub fn write_svg(
    path: &Path,
    rows: &[Row],
    kernels: &[(String, String)],
    threads: usize,
) -> Result<(), String> {
    draw(path, rows, kernels, threads).map_err(|e| format!("{}: {e}", path.display()))
}

fn draw(
    path: &Path,
    rows: &[Row],
    kernels: &[(String, String)],
    threads: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let cols = kernels.len().clamp(1, 3);
    let lines = kernels.len().div_ceil(cols).max(1);
    let root = SVGBackend::new(path, (480 * cols as u32, 380 * lines as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((lines, cols));
    let max_copies = rows.iter().map(|r| r.copies).max().unwrap_or(1);
    for (area, (kernel, class)) in areas.iter().zip(kernels) {
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.kernel == kernel).collect();
        let ymax = mine.iter().map(|r| r.max_s).fold(0.0, f64::max) * 1.15 + 1e-3;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{} class {class}, {threads} threads per job",
                    kernel.to_uppercase()
                ),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(0.5f64..max_copies as f64 + 0.5, 0.0..ymax)?;
        chart
            .configure_mesh()
            .x_desc("copies at once")
            .y_desc("max_s: until the last copy ends (s)")
            .x_labels(max_copies.min(16))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
        for (n, imp) in IMPLS.iter().enumerate() {
            let mut pts: Vec<(f64, f64)> = mine
                .iter()
                .filter(|r| r.imp == *imp)
                .map(|r| (r.copies as f64, r.max_s))
                .collect();
            if pts.is_empty() {
                continue;
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let color = COLORS[n].to_rgba();
            plot::series(&mut chart, *imp, color, &pts, true)?;
        }
        plot::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    root.present()?;
    Ok(())
}
