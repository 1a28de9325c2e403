//! SVG plot of seconds per iteration vs n (log-log): one panel per solver, one colour per
//! backend, pipelined thick and classical thin, each backend's traffic floor dashed in its
//! colour — the shape of \[Rupp16\]'s Fig. 4.

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

fn backend_color(backend: &str) -> RGBColor {
    match backend {
        "cuda" => RGBColor(0x1b, 0x9e, 0x77),
        "opencl" => RGBColor(0xd9, 0x5f, 0x02),
        "host" => RGBColor(0x75, 0x70, 0xb3),
        _ => RGBColor(0x66, 0x66, 0x66),
    }
}

/// Seconds as a short label (1us, 10us, 1ms, ...).
fn seconds_label(v: &f64) -> String {
    let v = *v;
    if v >= 1.0 {
        format!("{v:.0}s")
    } else if v >= 1e-3 {
        format!("{:.0}ms", v * 1e3)
    } else if v >= 1e-6 {
        format!("{:.0}us", v * 1e6)
    } else {
        format!("{:.0}ns", v * 1e9)
    }
}

/// Unknowns as a short label (1k, 1M, ...).
fn n_label(v: &f64) -> String {
    let v = *v;
    if v >= 1e6 {
        format!("{:.0}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.0}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

type Series = BTreeMap<(String, String), Vec<(f64, f64)>>;

/// Write the plot of `rows` to `path`.
pub fn write_svg(rows: &[BenchRow], path: &Path, title: &str) -> Result<()> {
    if rows.is_empty() {
        return Err(Error::param("rows", "nothing to plot"));
    }
    let mut solvers: Vec<String> = Vec::new();
    for r in rows {
        if !solvers.contains(&r.solver) {
            solvers.push(r.solver.clone());
        }
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, 0.0f64, f64::MAX, 0.0f64);
    for r in rows {
        x0 = x0.min(r.n as f64);
        x1 = x1.max(r.n as f64);
        y0 = y0.min(r.median);
        y1 = y1.max(r.median);
    }
    let (y0, y1) = (y0 / 4.0, y1 * 2.0);
    let width = 520 * solvers.len() as u32;
    let root = SVGBackend::new(path, (width, 620)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(err)?;
    let panels = root.split_evenly((1, solvers.len()));
    for (panel, solver) in panels.iter().zip(&solvers) {
        let mut lines: Series = BTreeMap::new();
        let mut floors: Series = BTreeMap::new();
        for r in rows.iter().filter(|r| &r.solver == solver) {
            lines
                .entry((
                    r.backend.clone(),
                    if r.execution == "resident" {
                        format!("{} resident", r.variant)
                    } else {
                        r.variant.to_string()
                    },
                ))
                .or_default()
                .push((r.n as f64, r.median));
            floors
                .entry((r.backend.clone(), String::new()))
                .or_default()
                .push((r.n as f64, r.floor));
        }
        let name = match solver.as_str() {
            "cg" => "CG",
            "bicgstab" => "BiCGStab",
            "gmres" => "GMRES",
            "gmres-simpler" => "GMRES (simpler, CGS1)",
            "gmres-cgs2" => "GMRES (CGS2)",
            other => other,
        };
        let mut chart = ChartBuilder::on(panel)
            .caption(name, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d((x0 * 0.8..x1 * 1.25).log_scale(), (y0..y1).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("unknowns n")
            .y_desc("time per iteration")
            .x_label_formatter(&n_label)
            .y_label_formatter(&seconds_label)
            .draw()
            .map_err(err)?;
        for ((backend, variant), mut pts) in lines {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let color = backend_color(&backend);
            let pipelined = variant.starts_with("pipelined");
            let style = color.stroke_width(if pipelined { 3 } else { 1 });
            chart
                .draw_series(LineSeries::new(pts.clone(), style))
                .map_err(err)?
                .label(format!("{backend} {variant}"))
                .legend(move |(x, y)| {
                    PathElement::new(
                        vec![(x, y), (x + 20, y)],
                        color.stroke_width(if pipelined { 3 } else { 1 }),
                    )
                });
            if pipelined {
                chart
                    .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(
                        pts.into_iter()
                            .map(|p| Cross::new(p, 3, color.stroke_width(1))),
                    )
                    .map_err(err)?;
            }
        }
        for ((backend, _), mut pts) in floors {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            pts.dedup_by(|a, b| a.0 == b.0);
            let pts: Vec<(f64, f64)> = pts.into_iter().filter(|p| p.1 >= y0).collect();
            if pts.len() < 2 {
                continue;
            }
            let color = backend_color(&backend);
            chart
                .draw_series(DashedLineSeries::new(
                    pts,
                    6,
                    4,
                    color.mix(0.8).stroke_width(1),
                ))
                .map_err(err)?
                .label(format!("{backend} traffic floor"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.mix(0.5)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
