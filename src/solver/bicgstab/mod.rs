//! BiCGStab: pipelined (\[Rupp16\] Algorithm 4: 4 kernels + 1 transfer per iteration; optionally
//! device-resident, see `resident`) and classical (Algorithm 3), both right-preconditioned
//! (A M^-1 y = b, x = M^-1 y).

mod many;
mod resident;

use super::cg::norm;
use super::common::{check_setup, start_solve, t, Control, Monitor, Tracker};
use super::params::{Execution, Params, Variant};
use super::report::{BreakdownKind, SolveReport, StopReason};
use super::resident::{choose, state_for, Recordings};
use crate::backend::collective_result;
use crate::backend::{Backend, Buffer, DeviceMatrix, Partials, ResidentState, Slot, SpmvDots};
use crate::error::Result;
use crate::precond::Preconditioner;
use crate::scalar::Scalar;
use std::time::Instant;

/// Outcome of checking a convergence claim of the recurrence.
enum Claim {
    /// Stop for this reason (converged, stagnated, or a limit met at the check).
    Holds(StopReason),
    /// Restarted from the true residual of this norm.
    Restarted(f64),
}

/// Restarts from the true residual: the best true residual seen and the restarts in a row that
/// did not improve it by 10%.
#[derive(Debug)]
struct Restarts {
    best: f64,
    no_gain: usize,
}

impl Default for Restarts {
    fn default() -> Self {
        Self {
            best: f64::INFINITY,
            no_gain: 0,
        }
    }
}

/// Reduction slots of one BiCGStab iteration.
mod slot {
    use crate::backend::Slot;
    /// <s_i, s_i> (slot 0: a distributed s update copies it back as the buffer's first
    /// groups, see `DistBackend`'s `bicgstab_s_update`)
    pub const S_S: Slot = Slot(0);
    /// <A p_i, r0*>
    pub const AP_R0: Slot = Slot(1);
    /// <r_i, r0*> (written by the update of the previous iteration)
    pub const R_R0: Slot = Slot(2);
    /// <A s_i, s_i>
    pub const AS_S: Slot = Slot(3);
    /// <A s_i, A s_i>
    pub const AS_AS: Slot = Slot(4);
    /// <A s_i, r0*>
    pub const AS_R0: Slot = Slot(5);
    /// <r_{i+1}, r_{i+1}> (to confirm a convergence claimed by the recurrence)
    pub const R_R: Slot = Slot(6);
    pub const COUNT: usize = 7;
}

/// BiCGStab for nonsymmetric systems.
///
/// ```
/// use pipekrylov::backend::{host::HostBackend, MatrixFormat, SpmvOps, VectorOps};
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::solver::{BiCgStab, Params};
/// let host = HostBackend::new();
/// let p = Generator::ConvDiff3d.generate::<f64>(1000).unwrap();
/// let a = host.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
/// let mut solver = BiCgStab::new(&host, &a, None, Params::default()).unwrap();
/// let b = host.upload(&vec![1.0; a.n_rows()]).unwrap();
/// let mut x = host.alloc(a.n_rows()).unwrap();
/// assert!(solver.solve(&b, &mut x).unwrap().stop_reason.converged());
/// ```
pub struct BiCgStab<'a, B: Backend, T: Scalar> {
    backend: &'a B,
    a: &'a DeviceMatrix<T>,
    precond: Option<&'a dyn Preconditioner<B, T>>,
    params: Params,
    r: Buffer<T>,
    r0star: Buffer<T>,
    p: Buffer<T>,
    s: Buffer<T>,
    ap: Buffer<T>,
    as_: Buffer<T>,
    phat: Buffer<T>,
    shat: Buffer<T>,
    partials: Partials<T>,
    scratch: Partials<T>,
    /// State of the device-resident mode (allocated when it may run).
    resident: Option<ResidentState>,
    /// Recorded batches of the device-resident mode (CUDA graphs), by batch length, x and p.
    recordings: Recordings<(usize, u64, u64)>,
    /// The second p and A p of the fused device-resident iterations (allocated at their first
    /// use, where the backend fuses; see `resident`).
    alt: Option<[Buffer<T>; 2]>,
    setup_seconds: f64,
}

impl<'a, B: Backend, T: Scalar> BiCgStab<'a, B, T> {
    /// Set up the solver: validate parameters, allocate the workspace.
    pub fn new(
        backend: &'a B,
        a: &'a DeviceMatrix<T>,
        precond: Option<&'a dyn Preconditioner<B, T>>,
        params: Params,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let n = a.n_rows();
        let nm = if precond.is_some() { n } else { 0 };
        let params = Params {
            variant: params.variant.resolve(true),
            ..params
        };
        // Row 25: a check or an allocation that fails on one rank fails every rank here.
        let built = (|| -> Result<Self> {
            check_setup(backend, a, precond, &params)?;
            Ok(Self {
                backend,
                a,
                precond,
                params,
                r: backend.alloc(n)?,
                r0star: backend.alloc(n)?,
                p: backend.alloc(n)?,
                s: backend.alloc(n)?,
                ap: backend.alloc(n)?,
                as_: backend.alloc(n)?,
                phat: backend.alloc(nm)?,
                shat: backend.alloc(nm)?,
                partials: backend.spmv_partials(a, slot::COUNT)?,
                scratch: backend.partials(n, 1)?,
                resident: state_for(
                    backend,
                    "bicgstab",
                    n,
                    &params,
                    precond.map_or(true, |m| m.suits_device_resident()),
                )?,
                recordings: Recordings::default(),
                alt: None,
                setup_seconds: t0.elapsed().as_secs_f64()
                    + precond.map_or(0.0, |m| m.setup_seconds()),
            })
        })();
        collective_result(backend, "the solver's setup", built)
    }

    /// Change the parameters (validated).
    pub fn set_params(&mut self, params: Params) -> Result<()> {
        params.validate()?;
        self.params = Params {
            variant: params.variant.resolve(true),
            ..params
        };
        Ok(())
    }

    /// Solve A x = b starting from the guess in `x`.
    pub fn solve(&mut self, b: &Buffer<T>, x: &mut Buffer<T>) -> Result<SolveReport> {
        self.solve_with_monitor(b, x, None)
    }

    /// [`BiCgStab::solve`] with a callback after every iteration.
    pub fn solve_with_monitor(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        monitor: Monitor<'_>,
    ) -> Result<SolveReport> {
        super::common::with_monitor(monitor, |c| self.solve_with_control(b, x, c))
    }

    /// [`BiCgStab::solve`] with a callback after every iteration that may stop the solve
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
        choose(
            self.backend,
            "bicgstab",
            self.a.n_rows(),
            &self.params,
            self.precond.map_or(true, |m| m.suits_device_resident()),
            &mut tracker,
            &mut self.resident,
        )?;
        let (iterations, reason) = match self.params.variant {
            Variant::Classical => self.classical(b, x, &mut tracker)?,
            Variant::Pipelined | Variant::Auto => self.pipelined(b, x, &mut tracker)?,
        };
        tracker.report(
            "bicgstab",
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

    /// \[Rupp16\] Algorithm 4.
    fn pipelined(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
    ) -> Result<(usize, StopReason)> {
        let (be, pc) = (self.backend, self.precond);
        // Lines 1-4: r0 = b - A x0, r0* = r0, p0 = r0; <r0, r0*> = <r0, r0>, its partials
        // already in the slot the first s-update reads.
        let mut r0star_norm = self.restart(b, x)?;
        if let Some(reason) = tracker.record(0, r0star_norm) {
            return Ok((0, reason));
        }
        let mut r_norm = r0star_norm;
        tracker.start_loop(be.counters());
        let mut iteration = 0;
        let mut restarts = Restarts::default();
        loop {
            if tracker.execution == Execution::DeviceResident {
                // The ordinary iterations from here on run on the device; it stops at the first
                // one the host has to decide, whose lines 6-12 have run: its partials are as
                // after `products` below.
                if let Some(r) =
                    self.device_batches(r_norm, r0star_norm, x, tracker, &mut iteration)?
                {
                    r_norm = r;
                }
            } else {
                self.products(None)?;
            }
            // The one transfer of the iteration.
            let sums = be.finish(&self.partials)?;
            let rho = sums.get(slot::R_R0);
            let ap_r0 = sums.get(slot::AP_R0);
            if !(rho.is_finite() && ap_r0.is_finite()) {
                return Ok((iteration, StopReason::NanOrInf));
            }
            // Checked before the other sums: with <Ap, r0*> = 0 the s-update divided by zero.
            if ap_r0 == 0.0 {
                return Ok((
                    iteration,
                    StopReason::Breakdown(BreakdownKind::AlphaDenominator),
                ));
            }
            let eps = T::EPSILON.to_f64();
            if rho.abs() <= eps * eps * r_norm * r0star_norm {
                return Ok((iteration, StopReason::Breakdown(BreakdownKind::Rho)));
            }
            let p_eff = if pc.is_some() { &self.phat } else { &self.p };
            let later = [slot::S_S, slot::AS_S, slot::AS_AS, slot::AS_R0];
            if later.iter().any(|&k| !sums.get(k).is_finite()) {
                return Ok((iteration, StopReason::NanOrInf));
            }
            // Line 8 on the host (the kernel did the same from the same partials).
            let alpha = rho / ap_r0;
            let ss = sums.get(slot::S_S);
            if tracker.passes(norm(ss)) {
                // s = 0 (to tolerance): converged at the half step, x += alpha p^; the claim is
                // checked against b - A x (a restart from there when it does not hold).
                be.axpby(t(alpha), p_eff, T::one(), x)?;
                iteration += 1;
                match self.check_claim(b, x, tracker, &mut restarts, iteration)? {
                    Claim::Holds(reason) => return Ok((iteration, reason)),
                    Claim::Restarted(r) => {
                        (r0star_norm, r_norm) = (r, r);
                        continue;
                    }
                }
            }
            let (as_s, as_as) = (sums.get(slot::AS_S), sums.get(slot::AS_AS));
            let omega = if as_as > 0.0 { as_s / as_as } else { 0.0 };
            if omega == 0.0 {
                return Ok((iteration, StopReason::Breakdown(BreakdownKind::Omega)));
            }
            // Line 13: beta = -<As, r0*> / <Ap, r0*>.
            let beta = -sums.get(slot::AS_R0) / ap_r0;
            // Lines 15, 16, 19 and the first stage of line 20.
            be.bicgstab_update(
                t(alpha),
                t(omega),
                t(beta),
                x,
                &mut self.r,
                &mut self.p,
                &self.s,
                &self.ap,
                &self.as_,
                pc.map(|_| &self.phat),
                pc.map(|_| &self.shat),
                &self.r0star,
                &mut self.partials,
                slot::R_R0,
                slot::R_R,
            )?;
            iteration += 1;
            // ||r_{i+1}||^2 = <s, s> - 2 omega <s, As> + omega^2 <As, As>.
            let mut rr = ss - 2.0 * omega * as_s + omega * omega * as_as;
            if tracker.passes(norm(rr)) {
                // Confirm a claim of the recurrence with the partial <r, r> of the update.
                rr = be.finish(&self.partials)?.get(slot::R_R);
            }
            r_norm = norm(rr);
            if tracker.passes(r_norm) {
                match self.check_claim(b, x, tracker, &mut restarts, iteration)? {
                    Claim::Holds(reason) => return Ok((iteration, reason)),
                    Claim::Restarted(r) => {
                        (r0star_norm, r_norm) = (r, r);
                        continue;
                    }
                }
            }
            if let Some(reason) = tracker.record(iteration, r_norm) {
                return Ok((iteration, reason));
            }
        }
    }

    /// Lines 6-12 of one iteration: A p_i (right-preconditioned: A M^-1 p_i) with the partial
    /// <Ap, r0*>; s = r - alpha Ap with alpha finished in every work-group, partial <s, s>
    /// (device-resident: also rho and <Ap, r0*> into the `state`); A s_i with <As, s>,
    /// <As, As>, <As, r0*> (device-resident without a preconditioner: s and A s_i in one kernel
    /// where the backend has it).
    fn products(&mut self, state: Option<&mut ResidentState>) -> Result<()> {
        self.ap_product()?;
        self.s_products(state)
    }

    /// Lines 6-7: A p_i (right-preconditioned: A M^-1 p_i) with the partial <Ap, r0*>.
    fn ap_product(&mut self) -> Result<()> {
        let (be, a, pc) = (self.backend, self.a, self.precond);
        if let Some(m) = pc {
            m.apply(be, &self.p, &mut self.phat)?;
        }
        let p_eff = if pc.is_some() { &self.phat } else { &self.p };
        be.spmv_dots(
            a,
            p_eff,
            &mut self.ap,
            SpmvDots {
                yy: None,
                with: [Some((&self.r0star, slot::AP_R0)), None],
            },
            &mut self.partials,
        )
    }

    /// Lines 8-12 (see `products`).
    fn s_products(&mut self, state: Option<&mut ResidentState>) -> Result<()> {
        let (be, a, pc) = (self.backend, self.a, self.precond);
        // Lines 8-9.
        let (r, ap, s, partials) = (&self.r, &self.ap, &mut self.s, &mut self.partials);
        let (rr0, apr0, ss) = (slot::R_R0, slot::AP_R0, slot::S_S);
        match state {
            None => be.bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss)?,
            Some(st) => {
                // Device-resident without a preconditioner: lines 8-12 in one kernel where the
                // backend and the matrix allow (the same results as the kernels below).
                if pc.is_none()
                    && be.bicgstab_s_spmv_resident(
                        st,
                        a,
                        r,
                        ap,
                        s,
                        &mut self.as_,
                        &self.r0star,
                        partials,
                        [rr0, apr0, ss],
                        [slot::AS_AS, slot::AS_S, slot::AS_R0],
                    )?
                {
                    return Ok(());
                }
                be.bicgstab_s_update_resident(st, r, ap, s, partials, rr0, apr0, ss)?
            }
        }
        // Lines 10-12.
        if let Some(m) = pc {
            m.apply(be, &self.s, &mut self.shat)?;
        }
        let s_eff = if pc.is_some() { &self.shat } else { &self.s };
        be.spmv_dots(
            a,
            s_eff,
            &mut self.as_,
            SpmvDots {
                yy: Some(slot::AS_AS),
                with: [
                    Some((&self.s, slot::AS_S)),
                    Some((&self.r0star, slot::AS_R0)),
                ],
            },
            &mut self.partials,
        )
    }

    /// Lines 1-4 from the current x: r = b - A x, r0* = r, p = r, with the partial of
    /// <r, r0*> = <r, r> in the slot the first s-update reads. Returns ||r||.
    fn restart(&mut self, b: &Buffer<T>, x: &Buffer<T>) -> Result<f64> {
        let be = self.backend;
        be.residual(
            self.a,
            x,
            b,
            &mut self.r,
            &mut self.partials,
            Some(slot::R_R0),
        )?;
        be.copy(&self.r, &mut self.r0star)?;
        be.copy(&self.r, &mut self.p)?;
        Ok(norm(be.finish(&self.partials)?.get(slot::R_R0)))
    }

    /// The recurrence claims convergence after `iteration`: check b - A x. If it passes, the
    /// solve converged (the check is not counted as iteration work); otherwise restart from
    /// the true residual (counted as a residual replacement), or stop as stagnated after three
    /// restarts in a row without a 10% gain.
    fn check_claim(
        &mut self,
        b: &Buffer<T>,
        x: &Buffer<T>,
        tracker: &mut Tracker<'_>,
        restarts: &mut Restarts,
        iteration: usize,
    ) -> Result<Claim> {
        let before = self.backend.counters();
        let r = self.restart(b, x)?;
        if tracker.passes(r) {
            tracker.end_loop(before);
            tracker.record(iteration, r);
            return Ok(Claim::Holds(StopReason::Converged));
        }
        tracker.residual_replacements += 1;
        if r < 0.9 * restarts.best {
            restarts.best = r;
            restarts.no_gain = 0;
        } else {
            restarts.no_gain += 1;
        }
        if restarts.no_gain >= 3 {
            tracker.record(iteration, r);
            return Ok(Claim::Holds(StopReason::Stagnated));
        }
        if let Some(reason) = tracker.record(iteration, r) {
            return Ok(Claim::Holds(reason));
        }
        Ok(Claim::Restarted(r))
    }

    /// \[Rupp16\] Algorithm 3, BLAS style.
    fn classical(
        &mut self,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
    ) -> Result<(usize, StopReason)> {
        let (be, a, pc) = (self.backend, self.a, self.precond);
        be.residual(a, x, b, &mut self.r, &mut self.scratch, Some(Slot(0)))?;
        let mut rho = be.finish(&self.scratch)?.get(Slot(0));
        let r0star_norm = norm(rho);
        if let Some(reason) = tracker.record(0, r0star_norm) {
            return Ok((0, reason));
        }
        be.copy(&self.r, &mut self.r0star)?;
        be.copy(&self.r, &mut self.p)?;
        let mut r_norm = r0star_norm;
        tracker.start_loop(be.counters());
        let eps = T::EPSILON.to_f64();
        let mut iteration = 0;
        loop {
            if !rho.is_finite() {
                return Ok((iteration, StopReason::NanOrInf));
            }
            if rho.abs() <= eps * eps * r_norm * r0star_norm {
                return Ok((iteration, StopReason::Breakdown(BreakdownKind::Rho)));
            }
            if let Some(m) = pc {
                m.apply(be, &self.p, &mut self.phat)?;
            }
            let p_eff = if pc.is_some() { &self.phat } else { &self.p };
            // Lines 6-8.
            be.spmv(a, p_eff, &mut self.ap)?;
            let ap_r0 = dot(be, &self.ap, &self.r0star, &mut self.scratch)?;
            if !ap_r0.is_finite() {
                return Ok((iteration, StopReason::NanOrInf));
            }
            if ap_r0 == 0.0 {
                return Ok((
                    iteration,
                    StopReason::Breakdown(BreakdownKind::AlphaDenominator),
                ));
            }
            let alpha = rho / ap_r0;
            // Line 9: s = r - alpha Ap.
            be.copy(&self.r, &mut self.s)?;
            be.axpby(t(-alpha), &self.ap, T::one(), &mut self.s)?;
            let ss = dot(be, &self.s, &self.s, &mut self.scratch)?;
            if tracker.passes(norm(ss)) {
                be.axpby(t(alpha), p_eff, T::one(), x)?;
                iteration += 1;
                let reason = tracker.record(iteration, norm(ss));
                return Ok((iteration, reason.unwrap_or(StopReason::Converged)));
            }
            // Lines 10-14.
            if let Some(m) = pc {
                m.apply(be, &self.s, &mut self.shat)?;
            }
            let s_eff = if pc.is_some() { &self.shat } else { &self.s };
            be.spmv(a, s_eff, &mut self.as_)?;
            let as_s = dot(be, &self.as_, &self.s, &mut self.scratch)?;
            let as_as = dot(be, &self.as_, &self.as_, &mut self.scratch)?;
            if !(as_s.is_finite() && as_as.is_finite()) {
                return Ok((iteration, StopReason::NanOrInf));
            }
            let omega = if as_as > 0.0 { as_s / as_as } else { 0.0 };
            if omega == 0.0 {
                return Ok((iteration, StopReason::Breakdown(BreakdownKind::Omega)));
            }
            // Lines 15-16.
            be.axpby(t(alpha), p_eff, T::one(), x)?;
            be.axpby(t(omega), s_eff, T::one(), x)?;
            be.copy(&self.s, &mut self.r)?;
            be.axpby(t(-omega), &self.as_, T::one(), &mut self.r)?;
            iteration += 1;
            let rr = dot(be, &self.r, &self.r, &mut self.scratch)?;
            r_norm = norm(rr);
            if let Some(reason) = tracker.record(iteration, r_norm) {
                return Ok((iteration, reason));
            }
            // Lines 17-19.
            let rho_new = dot(be, &self.r, &self.r0star, &mut self.scratch)?;
            let beta = rho_new / rho * alpha / omega;
            rho = rho_new;
            be.axpby(t(-omega), &self.ap, T::one(), &mut self.p)?;
            be.axpby(T::one(), &self.r, t(beta), &mut self.p)?;
        }
    }
}

/// One inner product with its own transfer (the classical variants).
pub(crate) fn dot<B: Backend, T: Scalar>(
    be: &B,
    x: &Buffer<T>,
    y: &Buffer<T>,
    scratch: &mut Partials<T>,
) -> Result<f64> {
    be.dot_partials(x, y, scratch, Slot(0))?;
    Ok(be.finish(scratch)?.get(Slot(0)))
}
