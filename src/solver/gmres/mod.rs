//! GMRES(m), right-preconditioned, in four forms:
//!
//! * pipelined (default): Arnoldi with delayed CGS2 (DCGS2), 3 fused kernels per step,
//!   nothing transferred while orthogonalizing (`dcgs2.rs`); device-resident
//!   ([`Execution`](super::Execution)), a cycle (with the previous one's x update and the
//!   restart) is recorded once per shape and replayed (CUDA graphs; elsewhere launched as in
//!   the synchronous mode) before the host has checked the restart's residual: one write, one
//!   replay and one read per cycle;
//! * pipelined with [`GmresOrthogonalization::Cgs2`]: Arnoldi with classical Gram-Schmidt run
//!   twice, 6 fused kernels per step (`arnoldi.rs`);
//! * pipelined with [`GmresOrthogonalization::SimplerCgs`]: the paper's 4-kernel "simpler
//!   GMRES" (\[Rupp16\] Algorithm 6, `simpler.rs`);
//! * classical: textbook Arnoldi with modified Gram-Schmidt and Givens rotations
//!   (`arnoldi.rs`).
//!
//! Every restart starts from the true residual; a cycle that increased it is reported and the
//! best iterate seen at a restart is returned when the solve would end on a worse one.

mod arnoldi;
mod dcgs2;
mod least_squares;
mod many;
mod simpler;

use super::cg::norm;
use super::common::{check_setup, start_solve, Control, Monitor, Tracker};
use super::params::{Execution, GmresOrthogonalization, GmresParams, Params};
use super::report::{SolveReport, StopReason};
use super::resident::{may_run, Recordings};
use crate::backend::collective_result;
use crate::backend::{Backend, Basis, Buffer, DeviceMatrix, Partials, Slot};
use crate::error::Result;
use crate::precond::Preconditioner;
use crate::scalar::Scalar;
use least_squares::CycleSystem;
use std::time::Instant;

/// GMRES(m) for nonsymmetric systems.
///
/// ```
/// use pipekrylov::backend::{host::HostBackend, MatrixFormat, SpmvOps, VectorOps};
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::solver::{Gmres, GmresParams, Params};
/// let host = HostBackend::new();
/// let p = Generator::ConvDiff3d.generate::<f64>(1000).unwrap();
/// let a = host.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
/// let params = Params {
///     gmres: GmresParams { restart: 30, ..GmresParams::default() },
///     ..Params::default()
/// };
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
    /// The restart length asked for, when it was capped to m = min(restart, n, max_iter).
    requested_restart: Option<usize>,
    /// v_0 .. v_m in columns 0..m (simpler form) or 1..m+1 (Arnoldi).
    basis: Basis<T>,
    /// The simpler form's R (m x m, R_{j,i} at (j-1) + (i-1) m), or the Arnoldi H as the
    /// first Gram-Schmidt pass and the norms leave it (leading dimension m + 1).
    rmat: Buffer<T>,
    /// The second Gram-Schmidt pass's coefficients (CGS2), leading dimension m + 1.
    rmat2: Buffer<T>,
    rhost: Vec<T>,
    rhost2: Vec<T>,
    /// DCGS2: the second partials (dots with w), the per-step coefficients (a, c, beta, g; a
    /// row of 2 m + 2 per step, the last column's a and nu in row `steps`) with the true
    /// residual norm the cycle started from (last entry, [`Gmres::rho_at`]), and the update's
    /// coefficients eta on the device (every form).
    partials2: Partials<T>,
    coef: Buffer<T>,
    coef_host: Vec<T>,
    eta: Buffer<T>,
    partials: Partials<T>,
    xi_partials: Partials<T>,
    scratch: Partials<T>,
    tmp: Buffer<T>,
    z: Buffer<T>,
    /// The best iterate seen at a cycle start (by true residual), returned when the solve ends
    /// on a worse one.
    x_best: Buffer<T>,
    /// Recorded DCGS2 cycles of the device-resident mode (CUDA graphs), by step count, the
    /// columns of the x update run first (0: none) and the identities of x and b.
    recordings: Recordings<(usize, usize, u64, u64)>,
    setup_seconds: f64,
}

impl<'a, B: Backend, T: Scalar> Gmres<'a, B, T> {
    /// Set up the solver with restart length m = min(`params.gmres.restart`, n, `params.max_iter`)
    /// (at least 1): a basis longer than the system or than the iterations allowed cannot be
    /// used, so every allocation is sized from the capped m (SciPy caps at n too). The report's
    /// notes say when m was capped.
    pub fn new(
        backend: &'a B,
        a: &'a DeviceMatrix<T>,
        precond: Option<&'a dyn Preconditioner<B, T>>,
        params: Params,
    ) -> Result<Self> {
        let t0 = Instant::now();
        // Row 25: a check that fails on one rank fails every rank before the collective sum of
        // the rows (the restart's cap), and an allocation that fails on one rank fails every
        // rank at the end.
        collective_result(
            backend,
            "the solver's checks",
            check_setup(backend, a, precond, &params),
        )?;
        let n_global = global_rows(backend, a)?;
        let built = (|| -> Result<Self> {
            let n = a.n_rows();
            let m = params
                .gmres
                .restart
                .min(n_global)
                .min(params.max_iter)
                .max(1);
            let requested_restart = (m != params.gmres.restart).then_some(params.gmres.restart);
            let params = Params {
                gmres: GmresParams {
                    restart: m,
                    ..params.gmres
                },
                variant: params.variant.resolve(true),
                ..params
            };
            let hsize = (m + 1) * (m + 1);
            let mut basis = backend.basis(n, m + 2)?;
            // Column 0 is unused by the Arnoldi forms but read by `gmres_normalize`: zero it.
            let mut zero = backend.alloc::<T>(n)?;
            backend.fill(&mut zero, T::zero())?;
            backend.basis_load(&mut basis, 0, &zero, T::one())?;
            drop(zero);
            let mut rmat = backend.alloc(hsize)?;
            let mut rmat2 = backend.alloc(hsize)?;
            backend.fill(&mut rmat, T::zero())?;
            backend.fill(&mut rmat2, T::zero())?;
            Ok(Self {
                backend,
                a,
                precond,
                params,
                m,
                requested_restart,
                basis,
                rmat,
                rmat2,
                rhost: vec![T::zero(); hsize],
                rhost2: vec![T::zero(); hsize],
                partials2: backend.partials(n, m + 1)?,
                coef: backend.alloc((m + 2) * (2 * m + 2))?,
                coef_host: vec![T::zero(); (m + 2) * (2 * m + 2)],
                eta: backend.alloc(m)?,
                partials: backend.partials(n, m + 1)?,
                xi_partials: backend.partials(n, m)?,
                scratch: backend.partials(n, 1)?,
                tmp: backend.alloc(n)?,
                z: backend.alloc(if precond.is_some() { n } else { 0 })?,
                x_best: backend.alloc(n)?,
                recordings: Recordings::default(),
                setup_seconds: t0.elapsed().as_secs_f64()
                    + precond.map_or(0.0, |m| m.setup_seconds()),
            })
        })();
        collective_result(backend, "the solver's setup", built)
    }

    /// Change the parameters (validated; the restart length is fixed at construction: the
    /// one asked for then, or the m it was capped to).
    pub fn set_params(&mut self, params: Params) -> Result<()> {
        params.validate()?;
        let asked = self.requested_restart.unwrap_or(self.m);
        if params.gmres.restart != self.m && params.gmres.restart != asked {
            return Err(crate::Error::param(
                "restart",
                "the restart length is fixed when the solver is built",
            ));
        }
        self.params = Params {
            gmres: GmresParams {
                restart: self.m,
                ..params.gmres
            },
            variant: params.variant.resolve(true),
            ..params
        };
        Ok(())
    }

    /// The restart length m the solver runs with (after the cap).
    pub fn restart(&self) -> usize {
        self.m
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
        super::common::with_monitor(monitor, |c| self.solve_with_control(b, x, c))
    }

    /// [`Gmres::solve`] with a callback after every iteration that may stop the solve
    /// ([`StopReason::Interrupted`](crate::solver::StopReason::Interrupted)).
    pub fn solve_with_control(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        monitor: Control<'_>,
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
        // Device-resident: the DCGS2 steps transfer nothing anyway, so a monitor (called at the
        // cycle's end) does not force the synchronous mode here.
        if self.params.gmres.orthogonalization == GmresOrthogonalization::Dcgs2
            && may_run(
                self.backend,
                "gmres",
                self.a.n_rows(),
                &self.params,
                self.precond.map_or(true, |m| m.suits_device_resident()),
            )
        {
            tracker.execution = Execution::DeviceResident;
        }
        let (iterations, reason) = self.cycles(b, x, &mut tracker)?;
        if let Some(asked) = self.requested_restart {
            tracker.notes.push(format!(
                "restart capped at {} = min(restart {asked}, n, max_iter)",
                self.m
            ));
        }
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
        // DCGS2 starts its cycles on the device (v_0 = r / ||r|| without the host); device-
        // resident, a cycle whose predecessor claimed no stop runs ahead with that
        // predecessor's x update before the host has seen the restart's rho (its steps leave
        // x alone, so a stop at the restart discards them): `ahead` is its step count.
        let dcgs2 = self.params.variant.is_pipelined()
            && self.params.gmres.orthogonalization == GmresOrthogonalization::Dcgs2;
        let mut ahead: Option<usize> = None;
        tracker.start_loop(be.counters());
        loop {
            // Lines 2-4: r = b - A x, rho = ||r||, v_0 = r / rho.
            let rho = if ahead.is_some() {
                self.coef_host[self.rho_at()].to_f64()
            } else if dcgs2 {
                self.dcgs2_restart_norm(b, x)?
            } else {
                be.residual(
                    self.a,
                    x,
                    b,
                    &mut self.tmp,
                    &mut self.scratch,
                    Some(Slot(0)),
                )?;
                norm(be.finish(&self.scratch)?.get(Slot(0)))
            };
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
            let pipelined = self.params.variant.is_pipelined();
            let sys: CycleSystem = match (pipelined, self.params.gmres.orthogonalization) {
                (true, GmresOrthogonalization::SimplerCgs) => {
                    self.load_v0(0, rho)?;
                    self.simpler_cycle(steps, rho, tracker)?
                }
                (true, GmresOrthogonalization::Cgs2) => {
                    self.load_v0(arnoldi::ARNOLDI_FIRST_COL, rho)?;
                    self.cgs2_cycle(steps, rho, tracker)?
                }
                (true, GmresOrthogonalization::Dcgs2) => {
                    // v_0 is in column 1 already; a cycle run ahead has its coefficients read.
                    if ahead.take() != Some(steps) {
                        self.dcgs2_run(steps, None, b, x, tracker)?;
                    }
                    self.dcgs2_system(steps, rho)
                }
                (false, _) => {
                    self.load_v0(arnoldi::ARNOLDI_FIRST_COL, rho)?;
                    self.mgs_cycle(steps, rho, tracker)?
                }
            };
            // Record the residual estimates of the valid steps.
            let (taken, reason) = sys.record_estimates(tracker, &mut iteration);
            // Solve R eta = rhs (Alg. 6 line 20), x += M^-1 [v_0 .. v_{k-1}] eta.
            if taken > 0 {
                be.write(&mut self.eta, &sys.eta::<T>(taken, self.m))?;
                let next = self.m.min(self.params.max_iter.saturating_sub(iteration));
                if dcgs2
                    && tracker.execution == Execution::DeviceResident
                    && reason.is_none()
                    && taken == steps
                    && next > 0
                {
                    // The next cycle runs ahead, starting with this one's x update.
                    self.dcgs2_run(next, Some(taken), b, x, tracker)?;
                    ahead = Some(next);
                    continue;
                }
                self.update_x(x, sys.first_col, taken)?;
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

    /// At the end of a solve: [`restore_best`] with this solver's best iterate.
    fn restore_best(
        &mut self,
        x: &mut Buffer<T>,
        rho: f64,
        rho_best: f64,
        increases: usize,
        tracker: &mut Tracker<'_>,
    ) -> Result<()> {
        let best = BestIterate {
            x: &self.x_best,
            rho: rho_best,
            increases,
        };
        restore_best(self.backend, best, x, rho, tracker)
    }

    /// Lines 20-21 with the coefficients the host wrote to `eta`: x += M^-1 [v_0 .. v_{k-1}]
    /// eta, k = `taken`, v_0 in basis column `first_col`.
    fn update_x(&mut self, x: &mut Buffer<T>, first_col: usize, taken: usize) -> Result<()> {
        let be = self.backend;
        let cols = first_col..first_col + taken;
        match self.precond {
            None => be.multi_axpy_device(x, &self.basis, cols, &self.eta),
            Some(pc) => {
                be.fill(&mut self.tmp, T::zero())?;
                be.multi_axpy_device(&mut self.tmp, &self.basis, cols, &self.eta)?;
                pc.apply(be, &self.tmp, &mut self.z)?;
                be.axpby(T::one(), &self.z, T::one(), x)
            }
        }
    }

    /// v_0 = r / rho (r in `tmp`) into basis column `col`.
    fn load_v0(&mut self, col: usize, rho: f64) -> Result<()> {
        self.backend
            .basis_load(&mut self.basis, col, &self.tmp, T::from_f64(1.0 / rho))
    }

    /// The source of the step filling column i: v = column i-1, or z = M^-1 v (right
    /// preconditioning).
    fn prepare_source(&mut self, i: usize) -> Result<bool> {
        if let Some(pc) = self.precond {
            self.backend
                .basis_store(&self.basis, i - 1, &mut self.tmp)?;
            pc.apply(self.backend, &self.tmp, &mut self.z)?;
            return Ok(true);
        }
        Ok(false)
    }
}

/// The best iterate seen at a cycle start of a solve, its true residual norm, and the cycles
/// that ended with a larger true residual than they started from.
pub(super) struct BestIterate<'b, T> {
    pub(super) x: &'b Buffer<T>,
    pub(super) rho: f64,
    pub(super) increases: usize,
}

/// At the end of a solve: warn when cycles increased the true residual, and return the best
/// iterate seen at a cycle start when the final one (true residual `rho`) is worse.
pub(super) fn restore_best<B: Backend, T: Scalar>(
    backend: &B,
    best: BestIterate<'_, T>,
    x: &mut Buffer<T>,
    rho: f64,
    tracker: &mut Tracker<'_>,
) -> Result<()> {
    if best.increases == 0 {
        return Ok(());
    }
    let mut w = format!(
        "loss of orthogonality: {} restart cycle(s) ended with a larger true residual than \
         they started from",
        best.increases
    );
    if rho.is_nan() || rho > best.rho {
        backend.copy(best.x, x)?;
        w += &format!(
            "; the best iterate seen at a cycle start (||b - Ax|| = {:.3e} against {rho:.3e} at \
             the end) is returned",
            best.rho
        );
    }
    tracker.solver_warning = Some(w);
    Ok(())
}

/// The rows of the whole system: n, or under MPI the sum of every rank's rows (one reduction,
/// at setup), so every rank caps the restart length alike.
fn global_rows<B: Backend, T: Scalar>(backend: &B, a: &DeviceMatrix<T>) -> Result<usize> {
    if a.ranks() == 1 {
        return Ok(a.n_rows());
    }
    let prepared = (|| -> Result<(Buffer<T>, Partials<T>)> {
        let mut ones = backend.alloc::<T>(a.n_rows())?;
        backend.fill(&mut ones, T::one())?;
        Ok((ones, backend.partials(a.n_rows(), 1)?))
    })();
    // Row 25: an allocation that fails on one rank fails every rank before the reduction.
    let (ones, mut sums) = collective_result(backend, "the restart cap's buffers", prepared)?;
    backend.dot_partials(&ones, &ones, &mut sums, Slot(0))?;
    Ok(backend.finish(&sums)?.get(Slot(0)).round() as usize)
}
