//! Line plots of a bench's series, as SVG.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// Draws each `(label, points)` series as a line on one chart at `path`.
pub fn lines(
    path: &str,
    caption: &str,
    (x_label, y_label): (&str, &str),
    series: &[(&str, Vec<(f64, f64)>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let points = || series.iter().flat_map(|(_, points)| points.iter());
    let right = points().map(|(x, _)| *x).fold(0.0, f64::max).max(1.0);
    let top = points().map(|(_, y)| *y).fold(0.0, f64::max).max(1.0) * 1.15;
    let root = SVGBackend::new(path, (800, 360)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..right, 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()?;
    for (index, (label, points)) in series.iter().enumerate() {
        let color = Palette99::pick(index).to_rgba();
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2)));
        if points.len() <= 16 {
            chart.draw_series(
                points
                    .iter()
                    .map(|point| Circle::new(*point, 3, color.filled())),
            )?;
        }
    }
    legend(&mut chart)?;
    root.present()?;
    Ok(())
}

/// The legend of every bench plot: its series' labels in a box at the lower right.
pub fn legend<'a>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
) -> Result<(), Box<dyn std::error::Error>> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
