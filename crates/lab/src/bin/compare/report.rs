//! The results: [`Row`], `DIR/compare.csv`, the printed table, `DIR/compare.svg`, and the ASAT
//! traces (`DIR/asat_trace*.{csv,svg}`).

use std::io::Write;

use asat_lab::files;
use plotters::prelude::*;

use crate::copies::CopyResult;
use crate::options::Args;

/// One row of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub policy: String,
    pub grain: usize,
    pub copies: usize,
    /// The median over the repetitions of the repetition's mean job time.
    pub mean_job_s: f64,
    /// Which repetition is the median one (0 = the first run).
    pub median_rep: usize,
    /// The fastest and slowest copy of the median repetition.
    pub min_job_s: f64,
    pub max_job_s: f64,
    /// Whether a copy of the median repetition was killed.
    pub timed_out: bool,
    /// The fastest and slowest copy over every repetition.
    pub all_min_job_s: f64,
    pub all_max_job_s: f64,
    /// Repetitions in which a copy was killed, of `reps`.
    pub timed_out_reps: usize,
    pub reps: usize,
    /// Averaged over the copies of every repetition.
    pub join_wait_pct: Option<f64>,
    pub probe_pct: Option<f64>,
    pub cpu_s: f64,
}

/// Writes the ASAT trace of one cell (and makes it the current DIR/asat_trace.{csv,svg}).
pub fn write_trace(
    args: &Args,
    grain: usize,
    copies: usize,
    res: &[CopyResult],
) -> Result<(), String> {
    let mut csv = String::from("copy,t_s,team_size,passage_us,decision,wait,free_cpus\n");
    let mut series: Vec<Vec<(f64, f64)>> = Vec::new();
    for (copy, r) in res.iter().enumerate() {
        let mut pts = Vec::new();
        for line in &r.trace {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() == 6 {
                csv.push_str(&format!("{copy},{}\n", f.join(",")));
                if let (Ok(t), Ok(n)) = (f[0].parse::<f64>(), f[1].parse::<f64>()) {
                    pts.push((t, n));
                }
            }
        }
        series.push(pts);
    }
    for name in [
        format!("asat_trace_g{grain}_c{copies}.csv"),
        "asat_trace.csv".into(),
    ] {
        let path = args.out.join(name);
        files::write(&path, &csv)?;
    }
    plot_trace(args, grain, copies, &series).map_err(|e| format!("trace plot: {e}"))
}

fn plot_trace(
    args: &Args,
    grain: usize,
    copies: usize,
    series: &[Vec<(f64, f64)>],
) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("asat_trace.svg");
    let root = SVGBackend::new(&path, (760, 380)).into_drawing_area();
    root.fill(&WHITE)?;
    let tmax = series
        .iter()
        .flatten()
        .map(|p| p.0)
        .fold(0.0, f64::max)
        .max(0.1);
    let nmax = series.iter().flatten().map(|p| p.1).fold(1.0, f64::max);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "ASAT team size over time (grain {grain}, {copies} copies, {} hogs)",
                args.hogs
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(44)
        .build_cartesian_2d(0.0..tmax * 1.02, 0.0..nmax + 0.5)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("team size")
        .draw()?;
    for (copy, pts) in series.iter().enumerate() {
        let color = Palette99::pick(copy).to_rgba();
        // a step line: the size holds until the next evaluation
        let mut steps = Vec::new();
        for w in pts.windows(2) {
            steps.push(w[0]);
            steps.push((w[1].0, w[0].1));
        }
        if let Some(&last) = pts.last() {
            steps.push(last);
        }
        asat_peers::plot::series(&mut chart, format!("copy {copy}"), color, &steps, false)?;
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
    root.present()?;
    Ok(())
}

pub fn write_csv(args: &Args, rows: &[Row]) -> Result<(), String> {
    let path = args.out.join("compare.csv");
    let mut f = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut s = String::from(
        "policy,grain,copies,mean_job_s,min_job_s,max_job_s,join_wait_pct,cpu_s,timed_out,\
         median_rep,all_min_job_s,all_max_job_s,timed_out_reps\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{:.4},{:.4},{:.4},{},{:.3},{},{},{:.4},{:.4},{}\n",
            r.policy,
            r.grain,
            r.copies,
            r.mean_job_s,
            r.min_job_s,
            r.max_job_s,
            r.join_wait_pct.map_or(String::new(), |j| format!("{j:.1}")),
            r.cpu_s,
            r.timed_out,
            r.median_rep + 1,
            r.all_min_job_s,
            r.all_max_job_s,
            r.timed_out_reps
        ));
    }
    f.write_all(s.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))
}

pub fn print_table(rows: &[Row]) {
    println!(
        "mean_job_s: median over the repetitions of the mean job time; rep: the median \
         repetition; min_s, max_s: its fastest and slowest copy; all_min, all_max: over every \
         repetition; join%, probe%, cpu_s: averaged over every repetition"
    );
    println!(
        "{:<13} {:>8} {:>6} {:>10} {:>4} {:>8} {:>8} {:>8} {:>8} {:>6} {:>6} {:>7}",
        "policy",
        "grain",
        "copies",
        "mean_job_s",
        "rep",
        "min_s",
        "max_s",
        "all_min",
        "all_max",
        "join%",
        "probe%",
        "cpu_s"
    );
    for r in rows {
        let killed = match (r.timed_out, r.timed_out_reps) {
            (_, 0) => String::new(),
            (true, k) => format!("  a copy killed in the median rep ({k} of {} reps)", r.reps),
            (false, k) => format!("  none killed in the median rep ({k} of {} reps)", r.reps),
        };
        println!(
            "{:<13} {:>8} {:>6} {:>10.3} {:>4} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>6} {:>6} \
             {:>7.2}{killed}",
            r.policy,
            r.grain,
            r.copies,
            r.mean_job_s,
            r.median_rep + 1,
            r.min_job_s,
            r.max_job_s,
            r.all_min_job_s,
            r.all_max_job_s,
            r.join_wait_pct
                .map_or(String::from("-"), |j| format!("{j:.1}")),
            r.probe_pct.map_or(String::from("-"), |j| format!("{j:.2}")),
            r.cpu_s,
        );
    }
}

pub fn plot(args: &Args, rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("compare.svg");
    let panels = args.grains.len();
    let root = SVGBackend::new(&path, (520 * panels as u32, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, panels));
    let max_copies = *args.copies.iter().max().unwrap_or(&1);
    for (area, &grain) in areas.iter().zip(&args.grains) {
        let cell: Vec<&Row> = rows.iter().filter(|r| r.grain == grain).collect();
        let ymax = cell.iter().map(|r| r.mean_job_s).fold(0.0, f64::max) * 1.1 + 1e-3;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("grain {grain}"), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d(0.5f64..max_copies as f64 + 0.5, (0.0..ymax).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("copies")
            .y_desc("mean job time (s, log)")
            .x_labels(max_copies)
            .draw()?;
        for (i, policy) in args.policies.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = cell
                .iter()
                .filter(|r| &r.policy == policy)
                .map(|r| (r.copies as f64, r.mean_job_s))
                .collect();
            asat_peers::plot::series(&mut chart, policy.as_str(), color, &pts, true)?;
        }
        asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
    }
    root.present()?;
    Ok(())
}
