//! CG on several right-hand sides at once: k independent classical PCG recurrences
//! (\[Rupp16\] Algorithm 1, the baseline of the pipelined one) in lockstep, whose products with
//! A share each read of the matrix ([`block_product::products`]) and whose dot products of one
//! step are finished together (one host transfer per step for all columns). Each column keeps
//! its own scalars and stops on its own test; a stopped column costs nothing more.

use super::Cg;
use crate::backend::{Backend, Buffer, Slot};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::solver::block_product;
use crate::solver::common::{start_solve, t, Tracker};
use crate::solver::report::{SolveReport, StopReason};

/// One column's recurrence.
struct Column<'m, T> {
    tracker: Tracker<'m>,
    r: Buffer<T>,
    p: Buffer<T>,
    ap: Buffer<T>,
    z: Buffer<T>,
    /// <r, z> (<r, r> without a preconditioner).
    gamma: f64,
    iterations: usize,
    stopped: Option<StopReason>,
}

impl<B: Backend, T: Scalar> Cg<'_, B, T> {
    /// Solve A x_c = b_c for every column c (`b[c]`, `x[c]` the initial guess and, afterwards,
    /// the last iterate): the classical recurrences whatever the parameters' variant, the
    /// columns' products with A sharing each read of the matrix (a CSR matrix of one process;
    /// one product per column for other formats and for a distributed matrix), one report per
    /// column (its own iterations, stop reason and true residual; every report's times are the
    /// whole block's).
    ///
    /// Errors: as [`Cg::solve`] for any column; [`Error::DimensionMismatch`] when `b` and `x`
    /// have different lengths.
    pub fn solve_many(
        &mut self,
        b: &[&Buffer<T>],
        x: &mut [&mut Buffer<T>],
    ) -> Result<Vec<SolveReport>> {
        block_product::check_columns(b, x)?;
        let (be, a, pc) = (self.backend, self.a, self.precond);
        let n = a.n_rows();
        let k = b.len();
        let mut columns = Vec::with_capacity(k);
        for (bc, xc) in b.iter().zip(x.iter_mut()) {
            let tracker = start_solve(be, a, bc, xc, &mut self.scratch, self.params, None)?;
            columns.push(Column {
                tracker,
                r: be.alloc(n)?,
                p: be.alloc(n)?,
                ap: be.alloc(n)?,
                z: be.alloc(if pc.is_some() { n } else { 0 })?,
                gamma: 0.0,
                iterations: 0,
                stopped: None,
            });
        }
        let mut sums = be.partials::<T>(n, k)?;
        // Line 2: r0 = b - A x0, for every column, and <r0, r0>.
        for (c, col) in columns.iter_mut().enumerate() {
            be.residual(a, x[c], b[c], &mut col.r, &mut self.scratch, Some(Slot(0)))?;
            let rr = be.finish(&self.scratch)?.get(Slot(0));
            col.stopped = record(col, 0, rr);
        }
        // Lines 3-4: z0 = M^-1 r0, p0 = z0, gamma = <r0, z0>.
        self.precondition(&mut columns, &mut sums)?;
        for col in columns.iter_mut().filter(|c| c.stopped.is_none()) {
            be.copy(if pc.is_some() { &col.z } else { &col.r }, &mut col.p)?;
            col.tracker.start_loop(be.counters());
        }
        while columns.iter().any(|c| c.stopped.is_none()) {
            // Lines 7-8: A p and <p, A p> of every running column.
            let running: Vec<usize> = (0..k).filter(|&c| columns[c].stopped.is_none()).collect();
            {
                let (ps, mut aps): (Vec<&Buffer<T>>, Vec<&mut Buffer<T>>) = columns
                    .iter_mut()
                    .filter(|c| c.stopped.is_none())
                    .map(|c| (&c.p, &mut c.ap))
                    .unzip();
                block_product::products(be, a, &ps, &mut aps)?;
            }
            for &c in &running {
                be.dot_partials(&columns[c].p, &columns[c].ap, &mut sums, Slot(c))?;
            }
            let deltas = be.finish(&sums)?;
            // Lines 9-11 and 15: the updates and <r, r>.
            for &c in &running {
                let col = &mut columns[c];
                let delta = deltas.get(Slot(c));
                let reason = if !(delta.is_finite() && col.gamma.is_finite()) {
                    Some(StopReason::NanOrInf)
                } else if pc.is_some() && col.gamma <= 0.0 {
                    Some(StopReason::IndefinitePreconditioner)
                } else if delta <= 0.0 {
                    Some(StopReason::IndefiniteMatrix)
                } else {
                    None
                };
                if reason.is_some() {
                    col.stopped = reason;
                    continue;
                }
                let alpha = col.gamma / delta;
                be.axpby(t(alpha), &col.p, T::one(), x[c])?;
                be.axpby(t(-alpha), &col.ap, T::one(), &mut col.r)?;
                col.iterations += 1;
                be.dot_partials(&col.r, &col.r, &mut sums, Slot(c))?;
            }
            let rrs = be.finish(&sums)?;
            for &c in &running {
                let col = &mut columns[c];
                if col.stopped.is_none() {
                    let it = col.iterations;
                    col.stopped = record(col, it, rrs.get(Slot(c)));
                }
            }
            // Lines 17-18: z = M^-1 r, beta, p = z + beta p.
            let gammas: Vec<f64> = columns.iter().map(|c| c.gamma).collect();
            self.precondition(&mut columns, &mut sums)?;
            for (c, col) in columns.iter_mut().enumerate() {
                if col.stopped.is_some() || !running.contains(&c) {
                    continue;
                }
                let beta = col.gamma / gammas[c];
                let from = if pc.is_some() { &col.z } else { &col.r };
                be.axpby(T::one(), from, t(beta), &mut col.p)?;
            }
        }
        let ends = columns
            .into_iter()
            .map(|c| block_product::ColumnEnd {
                tracker: c.tracker,
                r: c.r,
                iterations: c.iterations,
                stopped: c.stopped,
            })
            .collect();
        block_product::reports(
            "cg",
            be,
            a,
            b,
            x,
            ends,
            &mut self.scratch,
            self.setup_seconds,
        )
    }

    /// z = M^-1 r and gamma = <r, z> (without a preconditioner, gamma = <r, r>) for every running
    /// column, the dots finished together.
    fn precondition(
        &self,
        columns: &mut [Column<'_, T>],
        sums: &mut crate::backend::Partials<T>,
    ) -> Result<()> {
        let be = self.backend;
        let running: Vec<usize> = (0..columns.len())
            .filter(|&c| columns[c].stopped.is_none())
            .collect();
        if running.is_empty() {
            return Ok(());
        }
        for &c in &running {
            let col = &mut columns[c];
            match self.precond {
                Some(m) => {
                    m.apply(be, &col.r, &mut col.z)?;
                    be.dot_partials(&col.r, &col.z, sums, Slot(c))?;
                }
                None => be.dot_partials(&col.r, &col.r, sums, Slot(c))?,
            }
        }
        let finished = be.finish(sums)?;
        for &c in &running {
            columns[c].gamma = finished.get(Slot(c));
        }
        Ok(())
    }
}

/// Record a column's residual norm from its finished <r, r>; the stop reason when it stops.
fn record<T>(col: &mut Column<'_, T>, iteration: usize, rr: f64) -> Option<StopReason> {
    col.tracker.record(iteration, super::norm(rr))
}
