//! BiCGStab on several right-hand sides at once: k independent classical BiCGStab recurrences
//! (the baseline of \[Rupp16\] Algorithm 3, lines as in [`BiCgStab::classical`]) in lockstep,
//! whose two products with A per iteration share each read of the matrix
//! ([`block_product::products`]) and whose dot products of one step are finished together.
//! Each column keeps its own scalars and stops on its own test (or breakdown); a stopped column
//! costs nothing more.

use super::BiCgStab;
use crate::backend::{Backend, Buffer, Slot};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::solver::block_product;
use crate::solver::cg::norm;
use crate::solver::common::{start_solve, t, Tracker};
use crate::solver::report::{BreakdownKind, SolveReport, StopReason};

/// One column's recurrence.
struct Column<'m, T> {
    tracker: Tracker<'m>,
    r: Buffer<T>,
    r0star: Buffer<T>,
    p: Buffer<T>,
    s: Buffer<T>,
    ap: Buffer<T>,
    as_: Buffer<T>,
    phat: Buffer<T>,
    shat: Buffer<T>,
    rho: f64,
    alpha: f64,
    omega: f64,
    r_norm: f64,
    r0star_norm: f64,
    iterations: usize,
    stopped: Option<StopReason>,
}

impl<T: Scalar> Column<'_, T> {
    fn running(&self) -> bool {
        self.stopped.is_none()
    }
}

impl<B: Backend, T: Scalar> BiCgStab<'_, B, T> {
    /// Solve A x_c = b_c for every column c (`b[c]`, `x[c]` the initial guess and, afterwards,
    /// the last iterate): the classical recurrences whatever the parameters' variant, the
    /// columns' products with A sharing each read of the matrix (a CSR matrix of one process),
    /// one report per column (every report's times are the whole block's).
    ///
    /// Errors: as [`BiCgStab::solve`] for any column; [`crate::Error::DimensionMismatch`] when `b` and
    /// `x` have different lengths.
    pub fn solve_many(
        &mut self,
        b: &[&Buffer<T>],
        x: &mut [&mut Buffer<T>],
    ) -> Result<Vec<SolveReport>> {
        block_product::check_columns(b, x)?;
        let (be, a, pc) = (self.backend, self.a, self.precond);
        let with_m = pc.is_some();
        let (n, k) = (a.n_rows(), b.len());
        let m_len = if with_m { n } else { 0 };
        let mut cols = Vec::with_capacity(k);
        for (bc, xc) in b.iter().zip(x.iter_mut()) {
            let tracker = start_solve(be, a, bc, xc, &mut self.scratch, self.params, None)?;
            cols.push(Column {
                tracker,
                r: be.alloc(n)?,
                r0star: be.alloc(n)?,
                p: be.alloc(n)?,
                s: be.alloc(n)?,
                ap: be.alloc(n)?,
                as_: be.alloc(n)?,
                phat: be.alloc(m_len)?,
                shat: be.alloc(m_len)?,
                rho: 0.0,
                alpha: 0.0,
                omega: 0.0,
                r_norm: 0.0,
                r0star_norm: 0.0,
                iterations: 0,
                stopped: None,
            });
        }
        let mut sums = be.partials::<T>(n, 2 * k)?;
        // r0 = b - A x0, r0* = r0, p = r0, rho = <r0, r0>.
        for (c, col) in cols.iter_mut().enumerate() {
            be.residual(a, x[c], b[c], &mut col.r, &mut self.scratch, Some(Slot(0)))?;
            col.rho = be.finish(&self.scratch)?.get(Slot(0));
            col.r0star_norm = norm(col.rho);
            col.r_norm = col.r0star_norm;
            col.stopped = col.tracker.record(0, col.r0star_norm);
            if col.running() {
                be.copy(&col.r, &mut col.r0star)?;
                be.copy(&col.r, &mut col.p)?;
                col.tracker.start_loop(be.counters());
            }
        }
        let eps = T::EPSILON.to_f64();
        while cols.iter().any(Column::running) {
            // The breakdown tests on rho, then p^ = M^-1 p and A p^ (lines 6-7).
            for col in cols.iter_mut().filter(|c| c.running()) {
                if !col.rho.is_finite() {
                    col.stopped = Some(StopReason::NanOrInf);
                } else if col.rho.abs() <= eps * eps * col.r_norm * col.r0star_norm {
                    col.stopped = Some(StopReason::Breakdown(BreakdownKind::Rho));
                } else if let Some(m) = pc {
                    m.apply(be, &col.p, &mut col.phat)?;
                }
            }
            products(be, a, &mut cols, with_m, false)?;
            // Line 8: alpha = rho / <A p^, r0*>; line 9: s = r - alpha A p^, and ||s||.
            let running = running_columns(&cols);
            for &c in &running {
                be.dot_partials(&cols[c].ap, &cols[c].r0star, &mut sums, Slot(c))?;
            }
            let finished = be.finish(&sums)?;
            for &c in &running {
                let col = &mut cols[c];
                let ap_r0 = finished.get(Slot(c));
                if !ap_r0.is_finite() {
                    col.stopped = Some(StopReason::NanOrInf);
                    continue;
                }
                if ap_r0 == 0.0 {
                    col.stopped = Some(StopReason::Breakdown(BreakdownKind::AlphaDenominator));
                    continue;
                }
                col.alpha = col.rho / ap_r0;
                be.copy(&col.r, &mut col.s)?;
                be.axpby(t(-col.alpha), &col.ap, T::one(), &mut col.s)?;
                be.dot_partials(&col.s, &col.s, &mut sums, Slot(c))?;
            }
            let finished = be.finish(&sums)?;
            for &c in &running {
                let col = &mut cols[c];
                if !col.running() {
                    continue;
                }
                let s_norm = norm(finished.get(Slot(c)));
                if col.tracker.passes(s_norm) {
                    let p_eff = if with_m { &col.phat } else { &col.p };
                    be.axpby(t(col.alpha), p_eff, T::one(), x[c])?;
                    col.iterations += 1;
                    let it = col.iterations;
                    let reason = col.tracker.record(it, s_norm);
                    col.stopped = Some(reason.unwrap_or(StopReason::Converged));
                } else if let Some(m) = pc {
                    // Line 10: s^ = M^-1 s.
                    m.apply(be, &col.s, &mut col.shat)?;
                }
            }
            // Lines 11-14: A s^, omega = <A s^, s> / <A s^, A s^>.
            products(be, a, &mut cols, with_m, true)?;
            let running = running_columns(&cols);
            for &c in &running {
                let col = &cols[c];
                be.dot_partials(&col.as_, &col.s, &mut sums, Slot(2 * c))?;
                be.dot_partials(&col.as_, &col.as_, &mut sums, Slot(2 * c + 1))?;
            }
            let finished = be.finish(&sums)?;
            for &c in &running {
                let col = &mut cols[c];
                let (as_s, as_as) = (finished.get(Slot(2 * c)), finished.get(Slot(2 * c + 1)));
                if !(as_s.is_finite() && as_as.is_finite()) {
                    col.stopped = Some(StopReason::NanOrInf);
                    continue;
                }
                let omega = if as_as > 0.0 { as_s / as_as } else { 0.0 };
                if omega == 0.0 {
                    col.stopped = Some(StopReason::Breakdown(BreakdownKind::Omega));
                    continue;
                }
                // Lines 15-16: x += alpha p^ + omega s^; r = s - omega A s^.
                let (p_eff, s_eff) = if with_m {
                    (&col.phat, &col.shat)
                } else {
                    (&col.p, &col.s)
                };
                be.axpby(t(col.alpha), p_eff, T::one(), x[c])?;
                be.axpby(t(omega), s_eff, T::one(), x[c])?;
                be.copy(&col.s, &mut col.r)?;
                be.axpby(t(-omega), &col.as_, T::one(), &mut col.r)?;
                col.iterations += 1;
                col.omega = omega;
                be.dot_partials(&col.r, &col.r, &mut sums, Slot(2 * c))?;
                be.dot_partials(&col.r, &col.r0star, &mut sums, Slot(2 * c + 1))?;
            }
            let finished = be.finish(&sums)?;
            for &c in &running {
                let col = &mut cols[c];
                if !col.running() {
                    continue;
                }
                col.r_norm = norm(finished.get(Slot(2 * c)));
                let it = col.iterations;
                if let Some(reason) = col.tracker.record(it, col.r_norm) {
                    col.stopped = Some(reason);
                    continue;
                }
                // Lines 17-19: beta = rho' / rho alpha / omega; p = r + beta (p - omega A p^).
                let rho_new = finished.get(Slot(2 * c + 1));
                let beta = rho_new / col.rho * col.alpha / col.omega;
                col.rho = rho_new;
                be.axpby(t(-col.omega), &col.ap, T::one(), &mut col.p)?;
                be.axpby(T::one(), &col.r, t(beta), &mut col.p)?;
            }
        }
        let ends = cols
            .into_iter()
            .map(|c| block_product::ColumnEnd {
                tracker: c.tracker,
                r: c.r,
                iterations: c.iterations,
                stopped: c.stopped,
            })
            .collect();
        block_product::reports(
            "bicgstab",
            be,
            a,
            b,
            x,
            ends,
            &mut self.scratch,
            self.setup_seconds,
        )
    }
}

/// A p^ (`second` false) or A s^ (true) for every running column (p and s themselves without a
/// preconditioner).
fn products<B: Backend, T: Scalar>(
    be: &B,
    a: &crate::backend::DeviceMatrix<T>,
    cols: &mut [Column<'_, T>],
    with_m: bool,
    second: bool,
) -> Result<()> {
    let (ins, mut outs): (Vec<&Buffer<T>>, Vec<&mut Buffer<T>>) = cols
        .iter_mut()
        .filter(|c| c.stopped.is_none())
        .map(|c| {
            let Column {
                p,
                phat,
                s,
                shat,
                ap,
                as_,
                ..
            } = c;
            match (second, with_m) {
                (false, true) => (&*phat, ap),
                (false, false) => (&*p, ap),
                (true, true) => (&*shat, as_),
                (true, false) => (&*s, as_),
            }
        })
        .unzip();
    block_product::products(be, a, &ins, &mut outs)
}

/// The columns still running.
fn running_columns<T: Scalar>(cols: &[Column<'_, T>]) -> Vec<usize> {
    (0..cols.len()).filter(|&c| cols[c].running()).collect()
}
