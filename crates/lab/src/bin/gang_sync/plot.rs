//! `gang.svg`: the paper's Figures 5, 6 and 8.

use plotters::prelude::*;

use crate::report::find;
use crate::{Args, Row, METHODS};

pub fn plot(args: &Args, rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.out.join("gang.svg");
    let root = SVGBackend::new(&path, (1560, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((1, 3));
    let mut grains = args.grains_us.clone();
    grains.sort_by(f64::total_cmp);
    let (gmin, gmax) = (grains[0], grains[grains.len() - 1]);
    let load = args
        .load
        .iter()
        .copied()
        .find(|&l| l == 3)
        .or(args.load.iter().copied().max())
        .unwrap_or(1);
    let colors = |i: usize| Palette99::pick(i).to_rgba();

    // Figure 5: time per iteration against grain at one load.
    let sel: Vec<&Row> = rows.iter().filter(|r| r.load == load).collect();
    let ymax = sel
        .iter()
        .map(|r| r.time_per_iter_us.max(r.model_us.unwrap_or(0.0)))
        .fold(1.0, f64::max)
        * 1.5;
    let ymin = sel
        .iter()
        .map(|r| r.time_per_iter_us)
        .fold(f64::MAX, f64::min)
        .max(0.1)
        / 1.5;
    let mut chart = ChartBuilder::on(&areas[0])
        .caption(
            format!("time per iteration, load {load} (Fig. 5)"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (gmin / 1.3..gmax * 1.3).log_scale(),
            (ymin..ymax).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc("grain (us, log)")
        .y_desc("us per iteration (log)")
        .draw()?;
    for (i, m) in METHODS.iter().enumerate() {
        let color = colors(i);
        let pts: Vec<(f64, f64)> = sel
            .iter()
            .filter(|r| r.method == *m)
            .map(|r| (r.grain_us, r.time_per_iter_us))
            .collect();
        if pts.is_empty() {
            continue;
        }
        asat_peers::plot::series(&mut chart, *m, color, &pts, true)?;
        let model: Vec<(f64, f64)> = sel
            .iter()
            .filter(|r| r.method == *m)
            .filter_map(|r| r.model_us.map(|y| (r.grain_us, y)))
            .collect();
        if *m != "os-spin" && !model.is_empty() {
            chart
                .draw_series(DashedLineSeries::new(model, 5, 4, color.stroke_width(1)))?
                .label(format!("{m} model"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(1))
                });
        }
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;

    // Figure 6: os-block / gang-spin against grain, per load.
    let mut loads = args.load.clone();
    loads.sort_unstable();
    let ratios: Vec<(usize, Vec<(f64, f64)>)> = loads
        .iter()
        .map(|&l| {
            let pts = grains
                .iter()
                .filter_map(|&g| {
                    Some((
                        g,
                        find(rows, "os-block", l, g)? / find(rows, "gang-spin", l, g)?,
                    ))
                })
                .collect();
            (l, pts)
        })
        .collect();
    let rmax = ratios
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.1))
        .fold(2.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(&areas[1])
        .caption("os-block / gang-spin (Fig. 6)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d((gmin / 1.3..gmax * 1.3).log_scale(), 0.0..rmax)?;
    chart
        .configure_mesh()
        .x_desc("grain (us, log)")
        .y_desc("time ratio")
        .draw()?;
    chart.draw_series(LineSeries::new(
        vec![(gmin / 1.3, 1.0), (gmax * 1.3, 1.0)],
        BLACK.mix(0.4),
    ))?;
    for (i, (l, pts)) in ratios.into_iter().enumerate() {
        if pts.is_empty() {
            continue;
        }
        let color = colors(i + 3);
        asat_peers::plot::series(&mut chart, format!("load {l}"), color, &pts, true)?;
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;

    // Figure 8: time per iteration against load at the finest grain.
    let g0 = gmin;
    let lmax = *loads.last().unwrap_or(&1) as f64;
    let sel: Vec<&Row> = rows.iter().filter(|r| r.grain_us == g0).collect();
    let ymax = sel.iter().map(|r| r.time_per_iter_us).fold(1.0, f64::max) * 1.5;
    let ymin = sel
        .iter()
        .map(|r| r.time_per_iter_us)
        .fold(f64::MAX, f64::min)
        .max(0.1)
        / 1.5;
    let mut chart = ChartBuilder::on(&areas[2])
        .caption(
            format!("against load, grain {g0} us (Fig. 8)"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0.5..lmax + 0.5, (ymin..ymax).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("load (gangs)")
        .y_desc("us per iteration (log)")
        .x_labels(loads.len())
        .draw()?;
    for (i, m) in METHODS.iter().enumerate() {
        let color = colors(i);
        let pts: Vec<(f64, f64)> = sel
            .iter()
            .filter(|r| r.method == *m)
            .map(|r| (r.load as f64, r.time_per_iter_us))
            .collect();
        if pts.is_empty() {
            continue;
        }
        asat_peers::plot::series(&mut chart, *m, color, &pts, true)?;
    }
    asat_peers::plot::legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
    root.present()?;
    Ok(())
}
