//! Watching a solve from the command line while it runs: `--monitor K` prints every K-th residual
//! as it is computed (like PETSc's `-ksp_monitor`), and on a terminal a progress line appears once
//! a solve has run for a second.
//!
//! Both need the solver's per-iteration callback, which makes pipelined CG and BiCGStab run
//! synchronously (the device-resident mode has no per-iteration host step). `--monitor` accepts that; the
//! progress line is only installed on solves that run synchronously anyway, so that it never
//! changes how a solve runs.

use crate::backend::Backend;
use crate::solver::{Execution, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// After how long a solve shows its progress line.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// How often the progress line is redrawn.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// The line `--monitor` prints for iteration `i` with residual norm `r` (relative to `scale`).
pub fn monitor_line(i: usize, r: f64, scale: f64) -> String {
    format!("{i:6} residual {r:.6e} relative {:.6e}\n", r / scale)
}

/// What watches one solve: nothing, the `--monitor` lines, or a progress line.
pub struct Watch {
    every: Option<usize>,
    scale: f64,
    last: Option<(usize, f64)>,
    printed_last: bool,
    /// The progress line, when the solve started, when the line was last drawn.
    bar: Option<(ProgressBar, Instant, Instant)>,
}

impl Watch {
    /// The watcher for a solve of `solver` on `backend` with `n` unknowns: `--monitor K` when
    /// given, else a progress line when stderr is a terminal, the output is not JSON and the solve
    /// runs synchronously anyway. `b_norm` scales the relative residuals.
    pub fn new<B: Backend>(
        backend: &B,
        solver: &str,
        execution: Execution,
        n: usize,
        monitor: Option<usize>,
        json: bool,
        b_norm: f64,
    ) -> Self {
        let synchronous_anyway = !matches!(solver, "cg" | "bicgstab")
            || execution == Execution::Synchronous
            || (execution == Execution::Auto
                && (!backend.is_gpu() || backend.ranks() > 1 || n > Execution::auto_max_n(solver)));
        let bar =
            (monitor.is_none() && !json && synchronous_anyway && std::io::stderr().is_terminal())
                .then(|| {
                    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
                    if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
                        bar.set_style(style);
                    }
                    let now = Instant::now();
                    (bar, now, now)
                });
        Self {
            every: monitor.map(|k| k.max(1)),
            scale: if b_norm > 0.0 { b_norm } else { 1.0 },
            last: None,
            printed_last: false,
            bar,
        }
    }

    /// Whether the solve needs the per-iteration callback.
    pub fn active(&self) -> bool {
        self.every.is_some() || self.bar.is_some()
    }

    /// The per-iteration callback.
    pub fn on_iteration(&mut self, p: Progress) {
        self.last = Some((p.iteration, p.residual));
        if let Some(k) = self.every {
            self.printed_last = p.iteration % k == 0;
            if self.printed_last {
                eprint!("{}", monitor_line(p.iteration, p.residual, self.scale));
            }
        }
        if let Some((bar, start, drawn)) = &mut self.bar {
            let now = Instant::now();
            if now.duration_since(*start) < SHOW_AFTER || now.duration_since(*drawn) < REDRAW_EVERY
            {
                return;
            }
            *drawn = now;
            if bar.is_hidden() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_message(format!(
                "iteration {}  relative residual {:.3e}",
                p.iteration,
                p.residual / self.scale
            ));
            bar.tick();
        }
    }

    /// After the solve: the last iteration's `--monitor` line if it was not printed, the
    /// progress line cleared.
    pub fn finish(&mut self) {
        if let (Some(_), Some((i, r)), false) = (self.every, self.last, self.printed_last) {
            eprint!("{}", monitor_line(i, r, self.scale));
        }
        if let Some((bar, _, _)) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
