//! Conjugate gradients: pipelined (seed 001 Algorithm 2, with an optional preconditioner) and
//! classical (Algorithm 1, the BLAS-style baseline).
//!
//! The preconditioned pipelined form keeps z = M^-1 r and q = M^-1 Ap as recurrences, so that
//! (Alg. 2, eq. 3 generalized) gamma_{i+1} = <r_{i+1}, z_{i+1}> = alpha_i^2 <Ap_i, q_i> - gamma_i
//! and beta_i = gamma_{i+1} / gamma_i need only inner products available in the same
//! transfer: one global synchronization per iteration, as in the Chronopoulos-Gear /
//! Ghysels-Vanroose single-reduction PCG. Without a preconditioner it is exactly Algorithm 2.

use super::common::{check_operator, start_solve, t, Monitor, Tracker};
use super::params::{Params, Variant};
use super::report::{SolveReport, StopReason};
use crate::backend::{Backend, Buffer, DeviceMatrix, Partials, Slot, SpmvDots};
use crate::error::Result;
use crate::precond::Preconditioner;
use crate::scalar::Scalar;
use std::time::Instant;

/// Reduction slots of one CG iteration.
mod slot {
    use crate::backend::Slot;
    /// <r, r>
    pub const RR: Slot = Slot(0);
    /// <Ap, Ap>
    pub const AP_AP: Slot = Slot(1);
    /// <p, Ap>
    pub const P_AP: Slot = Slot(2);
    /// <r, z>
    pub const RZ: Slot = Slot(3);
    /// <Ap, q>
    pub const AP_Q: Slot = Slot(4);
    pub const COUNT: usize = 5;
}

/// Conjugate gradients for symmetric positive definite systems.
///
/// Built once for a matrix (all workspace allocated here), then solves any number of
/// right-hand sides.
///
/// ```
/// use pipekrylov::backend::{host::HostBackend, MatrixFormat, SpmvOps, VectorOps};
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::solver::{Cg, Params};
/// let host = HostBackend::new();
/// let p = Generator::Poisson2d.generate::<f64>(100).unwrap();
/// let a = host.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
/// let mut cg = Cg::new(&host, &a, None, Params::default()).unwrap();
/// let b = host.upload(&vec![1.0; a.n_rows()]).unwrap();
/// let mut x = host.alloc(a.n_rows()).unwrap();
/// let report = cg.solve(&b, &mut x).unwrap();
/// assert!(report.stop_reason.converged());
/// assert!(report.relative_true_residual < 1e-8);
/// ```
pub struct Cg<'a, B: Backend, T: Scalar> {
    backend: &'a B,
    a: &'a DeviceMatrix<T>,
    precond: Option<&'a dyn Preconditioner<B, T>>,
    params: Params,
    r: Buffer<T>,
    p: Buffer<T>,
    ap: Buffer<T>,
    z: Buffer<T>,
    q: Buffer<T>,
    partials: Partials<T>,
    scratch: Partials<T>,
    setup_seconds: f64,
}

impl<'a, B: Backend, T: Scalar> Cg<'a, B, T> {
    /// Set up the solver: validate parameters, allocate the workspace.
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
        let with_m = precond.is_some();
        Ok(Self {
            backend,
            a,
            precond,
            params,
            r: backend.alloc(n)?,
            p: backend.alloc(n)?,
            ap: backend.alloc(n)?,
            z: backend.alloc(if with_m { n } else { 0 })?,
            q: backend.alloc(if with_m { n } else { 0 })?,
            partials: backend.partials(n, slot::COUNT)?,
            scratch: backend.partials(n, 1)?,
            setup_seconds: t0.elapsed().as_secs_f64() + precond.map_or(0.0, |m| m.setup_seconds()),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Change the parameters (validated).
    pub fn set_params(&mut self, params: Params) -> Result<()> {
        params.validate()?;
        self.params = params;
        Ok(())
    }

    /// Solve A x = b starting from the guess in `x`; `x` holds the last iterate afterwards.
    pub fn solve(&mut self, b: &Buffer<T>, x: &mut Buffer<T>) -> Result<SolveReport> {
        self.solve_with_monitor(b, x, None)
    }

    /// [`Cg::solve`] with a callback after every iteration.
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
        let (iterations, reason) = match self.params.variant {
            Variant::Pipelined => self.pipelined(b, x, &mut tracker)?,
            Variant::Classical => self.classical(b, x, &mut tracker)?,
        };
        tracker.report(
            "cg",
            self.params.variant,
            iterations,
            reason,
            self.backend,
            self.a,
            b,
            x,
            &mut self.r,
            &mut self.scratch,
            self.setup_seconds,
            true,
        )
    }

    /// Seed 001 Algorithm 2 (2 kernels + 1 transfer per iteration without preconditioner).
    fn pipelined(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
    ) -> Result<(usize, StopReason)> {
        let (be, a) = (self.backend, self.a);
        let pc = self.precond;
        // Lines 1-2: r0 = b - A x0 (with <r0, r0>); z0 = M^-1 r0 (with <r0, z0>).
        be.residual(a, x, b, &mut self.r, &mut self.partials, Some(slot::RR))?;
        if let Some(m) = pc {
            m.apply_dot(be, &self.r, &mut self.z, &mut self.partials, slot::RZ)?;
        }
        let sums = be.finish(&self.partials)?;
        if let Some(reason) = tracker.record(0, norm(sums.get(slot::RR))) {
            return Ok((0, reason));
        }
        let mut gamma = match pc {
            Some(_) => sums.get(slot::RZ),
            None => sums.get(slot::RR),
        };
        // p0 = z0; line 3: Ap0 with <Ap0, Ap0> and <p0, Ap0>; q0 = M^-1 Ap0 with <Ap0, q0>.
        be.copy(if pc.is_some() { &self.z } else { &self.r }, &mut self.p)?;
        self.product()?;
        let mut sums = be.finish(&self.partials)?;
        tracker.start_loop(be.counters());
        let mut iteration = 0;
        loop {
            let delta = sums.get(slot::P_AP);
            let curvature = match pc {
                Some(_) => sums.get(slot::AP_Q),
                None => sums.get(slot::AP_AP),
            };
            if !(delta.is_finite() && gamma.is_finite() && curvature.is_finite()) {
                return Ok((iteration, StopReason::NanOrInf));
            }
            if pc.is_some() && gamma <= 0.0 {
                return Ok((iteration, StopReason::IndefinitePreconditioner));
            }
            if delta <= 0.0 {
                return Ok((iteration, StopReason::IndefiniteMatrix));
            }
            // Lines 4-5 and 16-17: alpha = gamma / <p, Ap>,
            // beta = alpha^2 <Ap, M^-1 Ap> / gamma - 1.
            let alpha = gamma / delta;
            let beta = alpha * alpha * curvature / gamma - 1.0;
            iteration += 1;
            // Lines 10-12 and the first stage of line 15, one kernel.
            match pc {
                None => be.cg_update(
                    t(alpha),
                    t(beta),
                    x,
                    &mut self.r,
                    &mut self.p,
                    &self.ap,
                    &mut self.partials,
                    slot::RR,
                )?,
                Some(_) => be.pcg_update(
                    t(alpha),
                    t(beta),
                    x,
                    &mut self.r,
                    &mut self.z,
                    &mut self.p,
                    &self.ap,
                    &self.q,
                    &mut self.partials,
                    slot::RR,
                    slot::RZ,
                )?,
            }
            // Lines 13-14: Ap_i with the first stage of <Ap, Ap> and <p, Ap>, one kernel.
            self.product()?;
            // The one transfer of the iteration: line 15's <r, r> and line 14's products.
            sums = be.finish(&self.partials)?;
            if let Some(reason) = tracker.record(iteration, norm(sums.get(slot::RR))) {
                return Ok((iteration, reason));
            }
            gamma = match pc {
                Some(_) => sums.get(slot::RZ),
                None => sums.get(slot::RR),
            };
        }
    }

    /// Ap = A p with its first-stage products; with a preconditioner also q = M^-1 Ap.
    fn product(&mut self) -> Result<()> {
        let be = self.backend;
        match self.precond {
            None => be.spmv_dots(
                self.a,
                &self.p,
                &mut self.ap,
                SpmvDots {
                    yy: Some(slot::AP_AP),
                    with: [Some((&self.p, slot::P_AP)), None],
                },
                &mut self.partials,
            ),
            Some(m) => {
                be.spmv_dots(
                    self.a,
                    &self.p,
                    &mut self.ap,
                    SpmvDots {
                        yy: None,
                        with: [Some((&self.p, slot::P_AP)), None],
                    },
                    &mut self.partials,
                )?;
                m.apply_dot(be, &self.ap, &mut self.q, &mut self.partials, slot::AP_Q)
            }
        }
    }

    /// Seed 001 Algorithm 1, one BLAS call per line and one transfer per inner product.
    fn classical(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
    ) -> Result<(usize, StopReason)> {
        let (be, a) = (self.backend, self.a);
        let pc = self.precond;
        // Line 2: r0 = b - A x0.
        be.residual(a, x, b, &mut self.r, &mut self.scratch, Some(Slot(0)))?;
        let rr = be.finish(&self.scratch)?.get(Slot(0));
        if let Some(reason) = tracker.record(0, norm(rr)) {
            return Ok((0, reason));
        }
        let mut gamma = match pc {
            Some(m) => {
                m.apply(be, &self.r, &mut self.z)?;
                self.dot_r_z()?
            }
            None => rr,
        };
        be.copy(if pc.is_some() { &self.z } else { &self.r }, &mut self.p)?;
        tracker.start_loop(be.counters());
        let mut iteration = 0;
        loop {
            // Lines 7-8: Ap and <p, Ap>.
            be.spmv(a, &self.p, &mut self.ap)?;
            be.dot_partials(&self.p, &self.ap, &mut self.scratch, Slot(0))?;
            let delta = be.finish(&self.scratch)?.get(Slot(0));
            if !(delta.is_finite() && gamma.is_finite()) {
                return Ok((iteration, StopReason::NanOrInf));
            }
            if pc.is_some() && gamma <= 0.0 {
                return Ok((iteration, StopReason::IndefinitePreconditioner));
            }
            if delta <= 0.0 {
                return Ok((iteration, StopReason::IndefiniteMatrix));
            }
            // Lines 9-11.
            let alpha = gamma / delta;
            be.axpby(t(alpha), &self.p, T::one(), x)?;
            be.axpby(t(-alpha), &self.ap, T::one(), &mut self.r)?;
            iteration += 1;
            // Line 15: <r, r>.
            be.dot_partials(&self.r, &self.r, &mut self.scratch, Slot(0))?;
            let rr = be.finish(&self.scratch)?.get(Slot(0));
            if let Some(reason) = tracker.record(iteration, norm(rr)) {
                return Ok((iteration, reason));
            }
            // Lines 17-18 (with z = M^-1 r when preconditioned).
            let gamma_new = match pc {
                Some(m) => {
                    m.apply(be, &self.r, &mut self.z)?;
                    self.dot_r_z()?
                }
                None => rr,
            };
            let beta = gamma_new / gamma;
            gamma = gamma_new;
            be.axpby(
                T::one(),
                if pc.is_some() { &self.z } else { &self.r },
                t(beta),
                &mut self.p,
            )?;
        }
    }

    fn dot_r_z(&mut self) -> Result<f64> {
        self.backend
            .dot_partials(&self.r, &self.z, &mut self.scratch, Slot(0))?;
        Ok(self.backend.finish(&self.scratch)?.get(Slot(0)))
    }
}

/// sqrt of a finished <r, r>, keeping NaN (f64::max would turn NaN into 0 and fake convergence).
pub(crate) fn norm(sq: f64) -> f64 {
    if sq.is_nan() {
        f64::NAN
    } else {
        sq.max(0.0).sqrt()
    }
}
