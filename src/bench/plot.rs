//! SVG plot of seconds per iteration vs n (log-log), one line per backend / solver / variant,
//! the traffic floor dashed: the shape of seed 001's Fig. 4.

use super::BenchRow;
use crate::error::{Error, Result};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

fn err(e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: "plot".into(),
        message: e.to_string(),
    }
}

/// Write the plot of `rows` to `path`.
pub fn write_svg(rows: &[BenchRow], path: &Path, title: &str) -> Result<()> {
    if rows.is_empty() {
        return Err(Error::param("rows", "nothing to plot"));
    }
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut floors: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in rows {
        let key = format!("{} {} {}", r.backend, r.solver, r.variant);
        series.entry(key).or_default().push((r.n as f64, r.median));
        let fk = format!("floor {} {}", r.backend, r.solver);
        floors.entry(fk).or_default().push((r.n as f64, r.floor));
    }
    let all = series.values().chain(floors.values()).flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, 0.0f64, f64::MAX, 0.0f64);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let root = SVGBackend::new(path, (1000, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (x0 * 0.8..x1 * 1.25).log_scale(),
            (y0 * 0.7..y1 * 1.4).log_scale(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("unknowns n")
        .y_desc("seconds per iteration")
        .draw()
        .map_err(err)?;
    for (k, (name, mut pts)) in series.into_iter().enumerate() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = Palette99::pick(k).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(err)?;
    }
    for (name, mut pts) in floors {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts.dedup_by(|a, b| a.0 == b.0);
        chart
            .draw_series(DashedLineSeries::new(
                pts,
                6,
                4,
                BLACK.mix(0.5).stroke_width(1),
            ))
            .map_err(err)?
            .label(name)
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.5)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
