//! GMRES(m) on several right-hand sides at once: k independent classical GMRES(m) recurrences
//! (right-preconditioned Arnoldi with modified Gram-Schmidt, as [`Gmres`]'s classical variant,
//! `arnoldi.rs`) in lockstep. Every column starts its restart cycles at the same rounds and takes
//! step s of a cycle in the same round, so that
//!
//! * the products w_c = A M^-1 v_c of one step share each read of the matrix
//!   ([`block_product::products`]: up to eight columns per read of a CSR matrix of one process),
//! * the inner products of one Gram-Schmidt stage are finished together (one transfer per stage
//!   for all columns instead of one per column).
//!
//! Each column keeps its own basis, Hessenberg matrix, true residual checks at its restarts,
//! best iterate and stop test; a stopped column costs nothing more.
//!
//! Only the classical variant runs in lockstep: on the H200 (convdiff3d 1M, Jacobi, 8 columns)
//! a lockstep step of 8 classical columns took 3457 us, against 570 us for one classical column
//! and 136 us for one pipelined (DCGS2) column, whose fused kernels cannot share their product
//! between columns. With the pipelined variant (the default) the columns are solved one after
//! another by the pipelined solver: 3.2x faster than the lockstep there.

use super::arnoldi::ARNOLDI_FIRST_COL;
use super::least_squares::arnoldi_givens;
use super::{restore_best, BestIterate, Gmres};
use crate::backend::{Backend, Basis, Buffer, Slot};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::solver::block_product;
use crate::solver::cg::norm;
use crate::solver::common::{start_solve, Tracker};
use crate::solver::report::{SolveReport, StopReason};

/// One column's recurrence.
struct Column<'m, T> {
    tracker: Tracker<'m>,
    /// v_0 .. v_m in columns 1..m+1 (column 0 unused, as the one-column Arnoldi forms).
    basis: Basis<T>,
    /// The residual at a restart; the update's M^-1 input otherwise.
    r: Buffer<T>,
    /// The step's source v_{s-1} (copied out of the basis) and its product w.
    v: Buffer<T>,
    w: Buffer<T>,
    /// M^-1 v (with a preconditioner).
    z: Buffer<T>,
    eta: Buffer<T>,
    x_best: Buffer<T>,
    /// The cycle's Hessenberg matrix (leading dimension m + 1) and step count.
    h: Vec<f64>,
    steps: usize,
    /// True residual norms at the current cycle's start, the previous one's and the best.
    rho: f64,
    rho_start: f64,
    rho_best: f64,
    /// Cycles that ended with a larger true residual than they started from.
    increases: usize,
    iterations: usize,
    stopped: Option<StopReason>,
}

impl<T: Scalar> Column<'_, T> {
    fn running(&self) -> bool {
        self.stopped.is_none()
    }
}

impl<B: Backend, T: Scalar> Gmres<'_, B, T> {
    /// Solve A x_c = b_c for every column c (`b[c]`, `x[c]` the initial guess and, afterwards,
    /// the last iterate), one report per column. With
    /// [`Variant::Classical`](crate::solver::Variant::Classical): classical GMRES(m) in lockstep
    /// (see the module), the columns' products with A sharing each read of the matrix (a CSR
    /// matrix of one process; one product per column for other formats and for a distributed
    /// matrix), each column holding a basis of m + 2 vectors, every report's times the whole
    /// block's. With [`Variant::Pipelined`](crate::solver::Variant::Pipelined) (and `Auto`):
    /// the columns one after another (faster: see the module); each report says which.
    ///
    /// Errors: as [`Gmres::solve`] for any column; [`crate::Error::DimensionMismatch`] when `b`
    /// and `x` have different lengths.
    pub fn solve_many(
        &mut self,
        b: &[&Buffer<T>],
        x: &mut [&mut Buffer<T>],
    ) -> Result<Vec<SolveReport>> {
        block_product::check_columns(b, x)?;
        if self.params.variant.is_pipelined() {
            return self.solve_one_after_another(b, x);
        }
        let (be, a, pc) = (self.backend, self.a, self.precond);
        let (n, k, m) = (a.n_rows(), b.len(), self.m);
        let ld = m + 1;
        let mut cols = Vec::with_capacity(k);
        for (bc, xc) in b.iter().zip(x.iter_mut()) {
            let mut tracker = start_solve(be, a, bc, xc, &mut self.scratch, self.params, None)?;
            if let Some(asked) = self.requested_restart {
                tracker.notes.push(format!(
                    "restart capped at {m} = min(restart {asked}, n, max_iter)"
                ));
            }
            cols.push(Column {
                tracker,
                basis: be.basis(n, m + 2)?,
                r: be.alloc(n)?,
                v: be.alloc(n)?,
                w: be.alloc(n)?,
                z: be.alloc(if pc.is_some() { n } else { 0 })?,
                eta: be.alloc(m)?,
                x_best: be.alloc(n)?,
                h: vec![0.0; ld * m],
                steps: 0,
                rho: 0.0,
                rho_start: f64::INFINITY,
                rho_best: f64::INFINITY,
                increases: 0,
                iterations: 0,
                stopped: None,
            });
        }
        let mut sums = be.partials::<T>(n, k)?;
        for col in &mut cols {
            col.tracker.start_loop(be.counters());
        }
        loop {
            // Lines 2-4 for every running column: r = b - A x, rho = ||r||, the stop tests at
            // a restart, v_0 = r / rho.
            for (c, col) in cols.iter_mut().enumerate() {
                if col.running() {
                    self.restart_column(col, b[c], x[c], &mut sums, c)?;
                }
            }
            let longest = cols.iter().filter(|c| c.running()).map(|c| c.steps).max();
            let Some(longest) = longest else { break };
            // The cycle's steps in lockstep: step s fills basis column i = s + 1.
            for s in 1..=longest {
                let i = s + 1;
                let active: Vec<usize> = (0..k)
                    .filter(|&c| cols[c].running() && s <= cols[c].steps)
                    .collect();
                // w = A M^-1 v_{s-1}, the products sharing the matrix reads.
                for &c in &active {
                    let col = &mut cols[c];
                    be.basis_store(&col.basis, i - 1, &mut col.v)?;
                    if let Some(pc) = pc {
                        pc.apply(be, &col.v, &mut col.z)?;
                    }
                }
                let (sources, mut products): (Vec<&Buffer<T>>, Vec<&mut Buffer<T>>) = cols
                    .iter_mut()
                    .enumerate()
                    .filter(|(c, _)| active.contains(c))
                    .map(|(_, col)| {
                        let Column { v, z, w, .. } = col;
                        (if pc.is_some() { &*z } else { &*v }, w)
                    })
                    .unzip();
                block_product::products(be, a, &sources, &mut products)?;
                for &c in &active {
                    let col = &mut cols[c];
                    be.basis_load(&mut col.basis, i, &col.w, T::one())?;
                }
                // Modified Gram-Schmidt against v_0 .. v_{s-1}, each stage's inner products
                // finished together: h_{j,s-1} = <v_j, w>, w -= h_{j,s-1} v_j.
                for j in 1..i {
                    for &c in &active {
                        be.basis_dots(&cols[c].basis, i, j..j + 1, &mut sums, Slot(c))?;
                    }
                    let finished = be.finish(&sums)?;
                    for &c in &active {
                        let col = &mut cols[c];
                        let hj = finished.get(Slot(c));
                        be.basis_axpy(&mut col.basis, i, j, T::from_f64(-hj))?;
                        col.h[(j - 1) + (s - 1) * ld] = hj;
                    }
                }
                // h_{s,s-1} = ||w||, v_s = w / ||w||.
                for &c in &active {
                    be.basis_dots(&cols[c].basis, i, i..i + 1, &mut sums, Slot(c))?;
                }
                let finished = be.finish(&sums)?;
                for &c in &active {
                    let col = &mut cols[c];
                    let nrm = norm(finished.get(Slot(c)));
                    col.h[s + (s - 1) * ld] = nrm;
                    if nrm > 0.0 {
                        be.basis_scale(&mut col.basis, i, T::from_f64(1.0 / nrm))?;
                    }
                }
            }
            // Every column's cycle ends as the one-column solver's: the estimates recorded,
            // x += M^-1 V eta, the stop reason.
            for (c, col) in cols.iter_mut().enumerate() {
                if col.running() {
                    self.end_cycle(col, b[c], x[c])?;
                }
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
            "gmres",
            be,
            a,
            b,
            x,
            ends,
            &mut self.scratch,
            self.setup_seconds,
        )
    }

    /// The columns one after another by the configured (pipelined) solver.
    fn solve_one_after_another(
        &mut self,
        b: &[&Buffer<T>],
        x: &mut [&mut Buffer<T>],
    ) -> Result<Vec<SolveReport>> {
        let k = b.len();
        let mut reports = Vec::with_capacity(k);
        for (bc, xc) in b.iter().zip(x.iter_mut()) {
            let mut report = self.solve_with_control(bc, xc, None)?;
            report.notes.push(format!(
                "one of {k} right-hand sides, solved one after another (pipelined GMRES; the \
                 classical variant runs the columns in lockstep)"
            ));
            reports.push(report);
        }
        Ok(reports)
    }

    /// A column's restart (lines 2-4 of the cycle, as [`Gmres::solve`]'s): its true residual,
    /// the stop tests (a stop returns the best iterate when the last is worse), the cycle's
    /// step count and v_0.
    fn restart_column(
        &self,
        col: &mut Column<'_, T>,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        sums: &mut crate::backend::Partials<T>,
        c: usize,
    ) -> Result<()> {
        let be = self.backend;
        be.residual(self.a, x, b, &mut col.r, sums, Some(Slot(c)))?;
        let rho = norm(be.finish(sums)?.get(Slot(c)));
        let stop = if col.iterations == 0 && col.rho_start.is_infinite() {
            col.tracker.record(0, rho)
        } else if !rho.is_finite() {
            Some(StopReason::NanOrInf)
        } else if col.tracker.passes(rho) {
            Some(StopReason::Converged)
        } else if col.iterations >= self.params.max_iter {
            Some(StopReason::MaxIterations)
        } else {
            None
        };
        if let Some(reason) = stop {
            if col.iterations > 0 {
                restore_column_best(be, col, x, rho)?;
            }
            col.stopped = Some(reason);
            return Ok(());
        }
        let rounding = 1e3 * T::EPSILON.to_f64() * col.rho_start.min(rho).max(col.tracker.b_norm);
        if col.iterations > 0 && rho - col.rho_start > rounding {
            col.increases += 1;
        }
        col.steps = self.m.min(self.params.max_iter - col.iterations).max(1);
        col.rho_start = rho;
        col.rho = rho;
        if rho < col.rho_best {
            col.rho_best = rho;
            be.copy(x, &mut col.x_best)?;
        }
        col.h.iter_mut().for_each(|v| *v = 0.0);
        be.basis_load(
            &mut col.basis,
            ARNOLDI_FIRST_COL,
            &col.r,
            T::from_f64(1.0 / rho),
        )
    }

    /// A column's cycle end: the Givens reduction of its Hessenberg matrix, the estimates
    /// recorded, x += M^-1 [v_0 .. v_{taken-1}] eta, and the stop reason (a happy breakdown is
    /// confirmed by the true residual; an estimate's convergence by the next restart).
    fn end_cycle(&self, col: &mut Column<'_, T>, b: &Buffer<T>, x: &mut Buffer<T>) -> Result<()> {
        let be = self.backend;
        let sys = arnoldi_givens(&col.h, self.m + 1, col.steps, col.rho, ARNOLDI_FIRST_COL);
        let (taken, reason) = sys.record_estimates(&mut col.tracker, &mut col.iterations);
        if taken > 0 {
            be.write(&mut col.eta, &sys.eta::<T>(taken, self.m))?;
            let range = sys.first_col..sys.first_col + taken;
            match self.precond {
                None => be.multi_axpy_device(x, &col.basis, range, &col.eta)?,
                Some(pc) => {
                    be.fill(&mut col.r, T::zero())?;
                    be.multi_axpy_device(&mut col.r, &col.basis, range, &col.eta)?;
                    pc.apply(be, &col.r, &mut col.z)?;
                    be.axpby(T::one(), &col.z, T::one(), x)?;
                }
            }
        }
        match reason {
            Some(StopReason::Converged) | None => {}
            Some(StopReason::Breakdown(kind)) => {
                // Happy breakdown: converged if the true residual passes.
                let mut sums = be.partials::<T>(self.a.n_rows(), 1)?;
                be.residual(self.a, x, b, &mut col.r, &mut sums, Some(Slot(0)))?;
                let rho = norm(be.finish(&sums)?.get(Slot(0)));
                col.stopped = Some(if col.tracker.passes(rho) {
                    StopReason::Converged
                } else {
                    StopReason::Breakdown(kind)
                });
            }
            Some(other) => {
                if col.increases > 0 {
                    let mut sums = be.partials::<T>(self.a.n_rows(), 1)?;
                    be.residual(self.a, x, b, &mut col.r, &mut sums, Some(Slot(0)))?;
                    let rho = norm(be.finish(&sums)?.get(Slot(0)));
                    restore_column_best(be, col, x, rho)?;
                }
                col.stopped = Some(other);
            }
        }
        Ok(())
    }
}

/// At a column's end: [`restore_best`] with the column's best iterate.
fn restore_column_best<B: Backend, T: Scalar>(
    be: &B,
    col: &mut Column<'_, T>,
    x: &mut Buffer<T>,
    rho: f64,
) -> Result<()> {
    let best = BestIterate {
        x: &col.x_best,
        rho: col.rho_best,
        increases: col.increases,
    };
    restore_best(be, best, x, rho, &mut col.tracker)
}
