//! The plotting the examples and the lab's programs share: one named line series with its legend
//! entry, drawn the same way in every SVG they write (2 px line, a short line of the same color in
//! the legend, optionally a filled dot of radius 3 at each point).

use plotters::coord::CoordTranslate;
use plotters::prelude::*;

/// Draws `points` as a line of `color` named `label` into `chart`, with the legend entry for
/// that name, and with a dot at each point when `markers` is set.
///
/// The legend itself is drawn by the caller (`chart.configure_series_labels()...draw()`), once
/// all series are in; a chart whose legend is never drawn shows no label.
///
/// ```
/// use plotters::prelude::*;
///
/// let mut svg = String::new();
/// {
///     let root = SVGBackend::with_string(&mut svg, (320, 200)).into_drawing_area();
///     let mut chart = ChartBuilder::on(&root).build_cartesian_2d(0.0..2.0, 0.0..4.0)?;
///     let color = Palette99::pick(0).to_rgba();
///     asat_peers::plot::series(&mut chart, "squares", color, &[(0.0, 0.0), (1.0, 1.0), (2.0, 4.0)], true)?;
///     chart.configure_series_labels().draw()?;
///     root.present()?;
/// }
/// assert!(svg.contains("<polyline") && svg.contains("squares"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn series<DB, CT>(
    chart: &mut ChartContext<'_, DB, CT>,
    label: impl Into<String>,
    color: RGBAColor,
    points: &[(f64, f64)],
    markers: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    chart
        .draw_series(LineSeries::new(
            points.iter().copied(),
            color.stroke_width(2),
        ))?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    if markers {
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    Ok(())
}

/// Draws the legend of `chart` at `position`, in the style every example uses (black border,
/// translucent white background). Call it once all series are in.
pub fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
}
