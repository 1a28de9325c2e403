//! CG on several right-hand sides at once: k independent classical PCG recurrences
//! (\[Rupp16\] Algorithm 1, the baseline of the pipelined one) in lockstep, whose dot products
//! of one step are finished together (one host transfer per step for all columns). On a CSR
//! matrix of one process each step's vector work is three kernels per 8 columns: the product
//! with its <p, A p> (`csr_spmm_dots`: the matrix read once for all), the update with its
//! <r, r> (`block_cg_update`) and the new directions (`block_xpby`); otherwise the products go
//! through [`block_product::products`] and the updates column by column. Each column keeps its
//! own scalars and stops on its own test; a stopped column costs nothing more.

use super::Cg;
use crate::backend::ops::sparse::{self, CsrRef, SPMM_MAX_COLUMNS};
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
    /// Errors: as [`Cg::solve`] for any column; [`crate::Error::DimensionMismatch`] when `b` and `x`
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
        // One CSR matrix of one process: the block kernels (a product with its dots, the
        // update with its <r, r>, the direction), 8 columns per launch; otherwise per column.
        let csr = CsrRef::of(a)
            .ok()
            .filter(|_| block_product::shares_matrix_reads(a));
        while columns.iter().any(|c| c.stopped.is_none()) {
            // Lines 7-8: A p and <p, A p> of every running column (slot: its position).
            let running: Vec<usize> = (0..k).filter(|&c| columns[c].stopped.is_none()).collect();
            for (at, chunk) in chunks_of(&running) {
                let (ps, mut aps): (Vec<&Buffer<T>>, Vec<&mut Buffer<T>>) =
                    picked(&mut columns, chunk)
                        .map(|col| (&col.p, &mut col.ap))
                        .unzip();
                match csr {
                    Some(csr) => sparse::spmm_dots(be, csr, &ps, &mut aps, &mut sums, Slot(at))?,
                    None => {
                        block_product::products(be, a, &ps, &mut aps)?;
                        for (j, (p, ap)) in ps.iter().zip(&aps).enumerate() {
                            be.dot_partials(p, ap, &mut sums, Slot(at + j))?;
                        }
                    }
                }
            }
            let deltas = be.finish(&sums)?;
            // Lines 9-11: the checks and alpha, then x += alpha p, r -= alpha A p, <r, r>.
            let mut updating = Vec::with_capacity(running.len());
            let mut alphas = Vec::with_capacity(running.len());
            for (at, &c) in running.iter().enumerate() {
                let col = &mut columns[c];
                let delta = deltas.get(Slot(at));
                col.stopped = if !(delta.is_finite() && col.gamma.is_finite()) {
                    Some(StopReason::NanOrInf)
                } else if pc.is_some() && col.gamma <= 0.0 {
                    Some(StopReason::IndefinitePreconditioner)
                } else if delta <= 0.0 {
                    Some(StopReason::IndefiniteMatrix)
                } else {
                    updating.push(c);
                    alphas.push(col.gamma / delta);
                    col.iterations += 1;
                    None
                };
            }
            for (at, chunk) in chunks_of(&updating) {
                let alpha = &alphas[at..at + chunk.len()];
                let mut xs: Vec<&mut Buffer<T>> = picked(x, chunk).map(|xc| &mut **xc).collect();
                let (mut rs, mut ps, mut aps) = (Vec::new(), Vec::new(), Vec::new());
                for col in picked(&mut columns, chunk) {
                    let Column { r, p, ap, .. } = col;
                    rs.push(r);
                    ps.push(&*p);
                    aps.push(&*ap);
                }
                if csr.is_some() {
                    sparse::block_cg_update(
                        be,
                        alpha,
                        &mut xs,
                        &ps,
                        &mut rs,
                        &aps,
                        &mut sums,
                        Slot(at),
                    )?;
                } else {
                    for (j, xc) in xs.iter_mut().enumerate() {
                        be.axpby(t(alpha[j]), ps[j], T::one(), xc)?;
                        be.axpby(t(-alpha[j]), aps[j], T::one(), rs[j])?;
                        be.dot_partials(rs[j], rs[j], &mut sums, Slot(at + j))?;
                    }
                }
            }
            // Line 15: the test on ||r||.
            let rrs = be.finish(&sums)?;
            for (at, &c) in updating.iter().enumerate() {
                let col = &mut columns[c];
                let it = col.iterations;
                col.stopped = record(col, it, rrs.get(Slot(at)));
            }
            // Lines 17-18: z = M^-1 r, beta, p = z + beta p. Without a preconditioner gamma is
            // the <r, r> just finished (no second pass over r).
            let gammas: Vec<f64> = columns.iter().map(|c| c.gamma).collect();
            if pc.is_some() {
                self.precondition(&mut columns, &mut sums)?;
            } else {
                for (at, &c) in updating.iter().enumerate() {
                    columns[c].gamma = rrs.get(Slot(at));
                }
            }
            let going: Vec<usize> = updating
                .iter()
                .copied()
                .filter(|&c| columns[c].stopped.is_none())
                .collect();
            let betas: Vec<f64> = going
                .iter()
                .map(|&c| columns[c].gamma / gammas[c])
                .collect();
            for (at, chunk) in chunks_of(&going) {
                let beta = &betas[at..at + chunk.len()];
                let (mut zs, mut ps) = (Vec::new(), Vec::new());
                for col in picked(&mut columns, chunk) {
                    let Column { r, z, p, .. } = col;
                    zs.push(if pc.is_some() { &*z } else { &*r });
                    ps.push(p);
                }
                if csr.is_some() {
                    sparse::block_xpby(be, beta, &zs, &mut ps)?;
                } else {
                    for (j, p) in ps.iter_mut().enumerate() {
                        be.axpby(T::one(), zs[j], t(beta[j]), p)?;
                    }
                }
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

/// `columns` in groups of at most [`SPMM_MAX_COLUMNS`], each with the position of its first.
fn chunks_of(columns: &[usize]) -> impl Iterator<Item = (usize, &[usize])> {
    columns
        .chunks(SPMM_MAX_COLUMNS)
        .enumerate()
        .map(|(i, chunk)| (i * SPMM_MAX_COLUMNS, chunk))
}

/// The items at the ascending positions `chunk`, in one pass over the range they span (the
/// chunks of one step are disjoint ranges, so a step walks the columns once).
fn picked<'a, E>(items: &'a mut [E], chunk: &'a [usize]) -> impl Iterator<Item = &'a mut E> {
    let first = chunk.first().copied().unwrap_or(0);
    let end = chunk.last().map_or(0, |&last| last + 1);
    let mut wanted = chunk.iter().copied().peekable();
    items[first..end]
        .iter_mut()
        .enumerate()
        .filter_map(move |(i, item)| wanted.next_if_eq(&(first + i)).map(|_| item))
}

/// Record a column's residual norm from its finished <r, r>; the stop reason when it stops.
fn record<T>(col: &mut Column<'_, T>, iteration: usize, rr: f64) -> Option<StopReason> {
    col.tracker.record(iteration, super::norm(rr))
}
