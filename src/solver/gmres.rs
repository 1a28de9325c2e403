//! GMRES(m) in the "simpler GMRES" form of Walker and Zhou with classical Gram-Schmidt:
//! pipelined (seed 001 Algorithm 6: 4 kernels per step, no host transfer during the
//! orthogonalization) and classical (Algorithm 5), both right-preconditioned.
//!
//! Basis: v_0 = r_0 / rho_0 and v_i = orthonormalized A M^-1 v_{i-1}, so A M^-1 [v_0..v_{k-1}]
//! = [v_1..v_k] R with R upper triangular. With xi_i = <r_0, v_i>, the minimizer is
//! R eta = xi and x_k = x_0 + M^-1 [v_0..v_{k-1}] eta; the residual norms follow from the xi
//! without touching the residual vector: ||r_k|| = ||r_{k-1}|| sqrt(1 - (xi_k/||r_{k-1}||)^2),
//! the product form that keeps relative accuracy when the residual becomes small.

use super::cg::norm;
use super::common::{check_operator, start_solve, Monitor, Tracker};
use super::params::{Params, Variant};
use super::report::{BreakdownKind, SolveReport, StopReason};
use crate::backend::{Backend, Basis, Buffer, DeviceMatrix, Partials, Slot};
use crate::error::Result;
use crate::precond::Preconditioner;
use crate::scalar::Scalar;
use std::time::Instant;

/// GMRES(m) for nonsymmetric systems.
///
/// ```
/// use pipekrylov::backend::{host::HostBackend, MatrixFormat, SpmvOps, VectorOps};
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::solver::{Gmres, Params};
/// let host = HostBackend::new();
/// let p = Generator::ConvDiff3d.generate::<f64>(1000).unwrap();
/// let a = host.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
/// let params = Params { restart: 30, ..Params::default() };
/// let mut solver = Gmres::new(&host, &a, None, params).unwrap();
/// let b = host.upload(&vec![1.0; a.n_rows()]).unwrap();
/// let mut x = host.alloc(a.n_rows()).unwrap();
/// assert!(solver.solve(&b, &mut x).unwrap().stop_reason.converged());
/// ```
pub struct Gmres<'a, B: Backend, T: Scalar> {
    backend: &'a B,
    a: &'a DeviceMatrix<T>,
    precond: Option<&'a dyn Preconditioner<B, T>>,
    params: Params,
    m: usize,
    /// v_0 .. v_m, and (classical only) the residual r in column m + 1.
    basis: Basis<T>,
    /// R, m x m column-major (R_{j,i} at (j-1) + (i-1) m).
    rmat: Buffer<T>,
    rhost: Vec<T>,
    partials: Partials<T>,
    xi_partials: Partials<T>,
    scratch: Partials<T>,
    tmp: Buffer<T>,
    z: Buffer<T>,
    /// The best iterate seen at a cycle start (by true residual), returned when the solve ends
    /// on a worse one.
    x_best: Buffer<T>,
    setup_seconds: f64,
}

impl<'a, B: Backend, T: Scalar> Gmres<'a, B, T> {
    /// Set up the solver with restart length `params.restart`.
    pub fn new(
        backend: &'a B,
        a: &'a DeviceMatrix<T>,
        precond: Option<&'a dyn Preconditioner<B, T>>,
        params: Params,
    ) -> Result<Self> {
        let t0 = Instant::now();
        params.validate()?;
        check_operator(a, precond)?;
        let n = a.n_rows();
        let m = params.restart;
        Ok(Self {
            backend,
            a,
            precond,
            params,
            m,
            basis: backend.basis(n, m + 2)?,
            rmat: backend.alloc(m * m)?,
            rhost: vec![T::zero(); m * m],
            partials: backend.partials(n, m + 1)?,
            xi_partials: backend.partials(n, m)?,
            scratch: backend.partials(n, 1)?,
            tmp: backend.alloc(n)?,
            z: backend.alloc(if precond.is_some() { n } else { 0 })?,
            x_best: backend.alloc(n)?,
            setup_seconds: t0.elapsed().as_secs_f64() + precond.map_or(0.0, |m| m.setup_seconds()),
        })
    }

    /// Change the parameters (validated; the restart length is fixed at construction).
    pub fn set_params(&mut self, params: Params) -> Result<()> {
        params.validate()?;
        if params.restart != self.m {
            return Err(crate::Error::param(
                "restart",
                "the restart length is fixed when the solver is built",
            ));
        }
        self.params = params;
        Ok(())
    }

    /// Solve A x = b starting from the guess in `x`.
    pub fn solve(&mut self, b: &Buffer<T>, x: &mut Buffer<T>) -> Result<SolveReport> {
        self.solve_with_monitor(b, x, None)
    }

    /// [`Gmres::solve`] with a callback per step (the pipelined variant reports the steps of a
    /// cycle at its end, when their residual norms are known on the host).
    pub fn solve_with_monitor(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        monitor: Monitor<'_>,
    ) -> Result<SolveReport> {
        let mut tracker = start_solve(
            self.backend,
            self.a,
            b,
            x,
            &mut self.scratch,
            self.params,
            monitor,
        )?;
        let (iterations, reason) = self.cycles(b, x, &mut tracker)?;
        tracker.report(
            "gmres",
            self.params.variant,
            iterations,
            reason,
            self.backend,
            self.a,
            b,
            x,
            &mut self.tmp,
            &mut self.scratch,
            self.setup_seconds,
            false,
        )
    }

    /// Restart cycles; each starts from the true residual.
    fn cycles(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
    ) -> Result<(usize, StopReason)> {
        let be = self.backend;
        let mut iteration = 0;
        // True residual norms at the start of the previous cycle and of the best iterate, and
        // the cycles that increased the true residual (loss of orthogonality).
        let (mut rho_start, mut rho_best) = (f64::INFINITY, f64::INFINITY);
        let mut increases = 0usize;
        tracker.start_loop(be.counters());
        loop {
            // Lines 2-4: r = b - A x, rho = ||r||, v_0 = r / rho.
            be.residual(
                self.a,
                x,
                b,
                &mut self.tmp,
                &mut self.scratch,
                Some(Slot(0)),
            )?;
            let rho = norm(be.finish(&self.scratch)?.get(Slot(0)));
            if iteration == 0 {
                if let Some(reason) = tracker.record(0, rho) {
                    return Ok((0, reason));
                }
            } else if !rho.is_finite() {
                self.restore_best(x, rho, rho_best, increases, tracker)?;
                return Ok((iteration, StopReason::NanOrInf));
            } else if tracker.passes(rho) {
                self.restore_best(x, rho, rho_best, increases, tracker)?;
                return Ok((iteration, StopReason::Converged));
            } else if iteration >= self.params.max_iter {
                self.restore_best(x, rho, rho_best, increases, tracker)?;
                return Ok((iteration, StopReason::MaxIterations));
            }
            let rounding = 1e3 * T::EPSILON.to_f64() * rho_start.min(rho).max(tracker.b_norm);
            if iteration > 0 && rho - rho_start > rounding {
                // The last cycle made the true residual larger than it started from.
                increases += 1;
            }
            let steps = self.m.min(self.params.max_iter - iteration).max(1);
            rho_start = rho;
            if rho < rho_best {
                rho_best = rho;
                be.copy(x, &mut self.x_best)?;
            }
            be.basis_load(&mut self.basis, 0, &self.tmp, T::from_f64(1.0 / rho))?;
            let xi = match self.params.variant {
                Variant::Pipelined => self.pipelined_cycle(steps, rho, tracker)?,
                Variant::Classical => self.classical_cycle(steps, tracker)?,
            };
            // Residual norms of the cycle, the first vanishing diagonal of R (breakdown).
            let mut taken = 0;
            let mut reason = None;
            let mut r_prev = rho;
            let rscale = (0..steps * self.m)
                .map(|k| self.rhost[k].to_f64().abs())
                .fold(0.0, f64::max);
            for k in 1..=steps {
                let rkk = self.rhost[(k - 1) + (k - 1) * self.m].to_f64();
                if rkk.is_nan() || rkk.abs() <= T::EPSILON.to_f64() * rscale {
                    if !rkk.is_finite() {
                        reason = Some(StopReason::NanOrInf);
                    } else {
                        reason = Some(StopReason::Breakdown(BreakdownKind::Gmres));
                    }
                    break;
                }
                let c = (xi[k - 1] / r_prev).clamp(-1.0, 1.0);
                let rk = r_prev * ((1.0 - c) * (1.0 + c)).max(0.0).sqrt();
                taken = k;
                iteration += 1;
                r_prev = rk;
                if let Some(r) = tracker.record(iteration, rk) {
                    reason = Some(r);
                    break;
                }
            }
            // Line 20: solve R eta = xi, x += M^-1 [v_0 .. v_{k-1}] eta.
            if taken > 0 {
                let eta = back_substitute(&self.rhost, self.m, &xi[..taken]);
                let coeffs: Vec<T> = eta.iter().map(|&v| T::from_f64(v)).collect();
                match self.precond {
                    None => be.multi_axpy(x, &self.basis, 0..taken, &coeffs)?,
                    Some(pc) => {
                        be.fill(&mut self.tmp, T::zero())?;
                        be.multi_axpy(&mut self.tmp, &self.basis, 0..taken, &coeffs)?;
                        pc.apply(be, &self.tmp, &mut self.z)?;
                        be.axpby(T::one(), &self.z, T::one(), x)?;
                    }
                }
            }
            match reason {
                // A claim of the residual estimate is confirmed by the next cycle's true residual.
                Some(StopReason::Converged) | None => {}
                Some(StopReason::Breakdown(k)) => {
                    // Happy breakdown: converged if the true residual passes (row 9).
                    be.residual(
                        self.a,
                        x,
                        b,
                        &mut self.tmp,
                        &mut self.scratch,
                        Some(Slot(0)),
                    )?;
                    let rho = norm(be.finish(&self.scratch)?.get(Slot(0)));
                    let r = if tracker.passes(rho) {
                        StopReason::Converged
                    } else {
                        StopReason::Breakdown(k)
                    };
                    return Ok((iteration, r));
                }
                Some(other) => {
                    if increases > 0 {
                        be.residual(
                            self.a,
                            x,
                            b,
                            &mut self.tmp,
                            &mut self.scratch,
                            Some(Slot(0)),
                        )?;
                        let rho = norm(be.finish(&self.scratch)?.get(Slot(0)));
                        self.restore_best(x, rho, rho_best, increases, tracker)?;
                    }
                    return Ok((iteration, other));
                }
            }
        }
    }

    /// At the end of a solve: warn when cycles increased the true residual, and return the best
    /// iterate seen at a cycle start when the final one (true residual `rho`) is worse.
    fn restore_best(
        &mut self,
        x: &mut Buffer<T>,
        rho: f64,
        rho_best: f64,
        increases: usize,
        tracker: &mut Tracker<'_>,
    ) -> Result<()> {
        if increases == 0 {
            return Ok(());
        }
        let mut w = format!(
            "loss of orthogonality: {increases} restart cycle(s) ended with a larger true \
             residual than they started from"
        );
        if rho.is_nan() || rho > rho_best {
            self.backend.copy(&self.x_best, x)?;
            w += &format!(
                "; the best iterate seen at a cycle start (||b - Ax|| = {rho_best:.3e} against \
                 {rho:.3e} at the end) is returned"
            );
        }
        tracker.solver_warning = Some(w);
        Ok(())
    }

    /// The source of step i: v_{i-1}, or z = M^-1 v_{i-1} (right preconditioning).
    fn prepare_source(&mut self, i: usize) -> Result<bool> {
        if let Some(pc) = self.precond {
            self.backend
                .basis_store(&self.basis, i - 1, &mut self.tmp)?;
            pc.apply(self.backend, &self.tmp, &mut self.z)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Algorithm 6, lines 6-17: four kernels per step, no transfer until the cycle ends. Returns
    /// xi_1..xi_steps; R is left in `rhost`.
    fn pipelined_cycle(
        &mut self,
        steps: usize,
        rho: f64,
        tracker: &mut Tracker<'_>,
    ) -> Result<Vec<f64>> {
        let be = self.backend;
        let m = self.m;
        let norm_slot = Slot(m);
        tracker.start_inner(be.counters());
        for i in 1..=steps {
            let pre = self.prepare_source(i)?;
            // Line 7 with the first stage of <v_{i-1}, v_i> (slot i-2, j = i-1), or of
            // <v_1, v_1> in the first step.
            be.basis_spmv_dots(
                self.a,
                pre.then_some(&self.z),
                &mut self.basis,
                i,
                &mut self.partials,
                (i >= 2).then(|| Slot(i - 2)),
                (i == 1).then_some(norm_slot),
            )?;
            if i >= 2 {
                // Line 9: first stage of <v_j, v_i>, j = 1..i-2, in one pass over v_i.
                if i >= 3 {
                    be.basis_dots(&self.basis, i, 1..i - 1, &mut self.partials, Slot(0))?;
                }
                // Lines 9-12: second stage of R_{j,i}, v_i -= sum_j R_{j,i} v_j, first stage of
                // ||v_i||.
                be.gmres_gram_schmidt(
                    &mut self.basis,
                    i,
                    &mut self.partials,
                    Slot(0),
                    norm_slot,
                    &mut self.rmat,
                    m,
                )?;
            }
            // Lines 14-15: second stage of ||v_i||, normalize, first stage of xi_i.
            be.gmres_normalize(
                &mut self.basis,
                i,
                &self.partials,
                norm_slot,
                &mut self.rmat,
                m,
                &mut self.xi_partials,
                Slot(i - 1),
            )?;
        }
        tracker.end_inner(be.counters());
        // After the orthogonalization: R and the xi partials to the host.
        be.read(&self.rmat, &mut self.rhost)?;
        let sums = be.finish(&self.xi_partials)?;
        Ok((0..steps).map(|k| rho * sums.get(Slot(k))).collect())
    }

    /// Algorithm 5: one kernel per BLAS call, one transfer per inner product.
    fn classical_cycle(&mut self, steps: usize, tracker: &mut Tracker<'_>) -> Result<Vec<f64>> {
        let be = self.backend;
        let m = self.m;
        let rcol = m + 1;
        // The residual r (unnormalized, still in tmp) lives in column m + 1.
        be.basis_load(&mut self.basis, rcol, &self.tmp, T::one())?;
        let mut xi = Vec::with_capacity(steps);
        tracker.start_inner(be.counters());
        for i in 1..=steps {
            let pre = self.prepare_source(i)?;
            // Line 7.
            be.basis_spmv_dots(
                self.a,
                pre.then_some(&self.z),
                &mut self.basis,
                i,
                &mut self.partials,
                None,
                None,
            )?;
            // Lines 8-10: R_{j,i} = <v_j, v_i>, each with its own transfer.
            let mut col = Vec::with_capacity(i);
            for j in 1..i {
                be.basis_dots(&self.basis, i, j..j + 1, &mut self.scratch, Slot(0))?;
                col.push(be.finish(&self.scratch)?.get(Slot(0)));
            }
            // Lines 11-13.
            for (j, &rji) in col.iter().enumerate() {
                be.basis_axpy(&mut self.basis, i, j + 1, T::from_f64(-rji))?;
                self.rhost[j + (i - 1) * m] = T::from_f64(rji);
            }
            // Line 14.
            be.basis_dots(&self.basis, i, i..i + 1, &mut self.scratch, Slot(0))?;
            let nrm = norm(be.finish(&self.scratch)?.get(Slot(0)));
            self.rhost[(i - 1) + (i - 1) * m] = T::from_f64(nrm);
            if nrm > 0.0 {
                be.basis_scale(&mut self.basis, i, T::from_f64(1.0 / nrm))?;
            }
            // Lines 15-16: xi_i = <r, v_i>, r -= xi_i v_i.
            be.basis_dots(&self.basis, rcol, i..i + 1, &mut self.scratch, Slot(0))?;
            let x = be.finish(&self.scratch)?.get(Slot(0));
            be.basis_axpy(&mut self.basis, rcol, i, T::from_f64(-x))?;
            xi.push(x);
        }
        tracker.end_inner(be.counters());
        Ok(xi)
    }
}

/// Solve the leading k x k block of R (column-major, leading dimension `ld`) against `rhs`.
fn back_substitute<T: Scalar>(r: &[T], ld: usize, rhs: &[f64]) -> Vec<f64> {
    let k = rhs.len();
    let mut y = rhs.to_vec();
    for i in (0..k).rev() {
        let mut acc = y[i];
        for j in i + 1..k {
            acc -= r[i + j * ld].to_f64() * y[j];
        }
        y[i] = acc / r[i + i * ld].to_f64();
    }
    y
}
