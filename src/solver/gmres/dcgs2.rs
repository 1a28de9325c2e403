//! Pipelined Arnoldi with delayed CGS2 (DCGS2): Swirydowicz, Langou, Ananthan, Yang and Thomas,
//! "Low synchronization Gram-Schmidt and GMRES algorithms" (2020), in the form of Bielich et al.
//! (2022) with the normalization lagged one step.
//!
//! Step s (v_k in basis column k + 1): u = v_{s-1} is orthogonalized once but neither
//! reorthogonalized nor normalized. w = A M^-1 u (SpMV with <u, w> fused), the dots
//! a = Q^T u, nu = <u, u> and c = Q^T w (Q = v_0..v_{s-2}, final), then one fused kernel
//! (`gmres_dcgs2_update`): beta = sqrt(nu - |a|^2), v_{s-1} = (u - Q a) / beta (the second
//! pass), g = (d - a.c) / beta, and the next u = (w - Q c - g v_{s-1}) / beta. Because
//! A u = beta A v_{s-1} + A Q a and A Q = Q_{s-1} H, the Hessenberg columns follow on the host
//! from (a, beta, c, g) at the end of the cycle: column s-2 gains a and its subdiagonal beta;
//! column s-1 is (g - H a) / beta. After the last step one more reduction finalizes its
//! column (finished on the device into the coefficient buffer), and the cycle starts on the
//! device too (`basis_load_normalized`: v_0 = r / ||r||, ||r|| stored beside the
//! coefficients), so a cycle costs one read of the coefficients. Device-resident, the next
//! cycle (the previous one's x update with its coefficients written to the device, the
//! restart, the steps) is one recording, replayed before the host has seen the restart's
//! ||r||: one write, one replay and one read per cycle. Four kernels per step (SpMV, `basis_dots2` for the dots of u and w in one pass,
//! `gmres_dcgs2_finish` for their sums, once, and the update; without a preconditioner the GPU
//! backends fuse the first two for CSR matrices, `gmres_dcgs2_spmv_dots`, and for SELL ones on CUDA
//! (`gmres_dcgs2_spmv_dots_sell`; OpenCL with the tuning's `dcgs2_sell_fused`), and for partials of
//! few groups the last two, `gmres_dcgs2_update_small`: two kernels per step), no transfer while
//! orthogonalizing; the basis is read twice per step, as in the paper's CGS1, instead of CGS2's
//! four times. (With the sums finished inside the update, each of its ~500 work-groups summed
//! every partial of 2 (s + 1) slots: on the H200, poisson2d n = 1.05M, 247 us per iteration on
//! CUDA against 138 us with the separate finishing kernel.)

use super::arnoldi::ARNOLDI_FIRST_COL;
use super::least_squares::{arnoldi_givens, CycleSystem};
use super::Gmres;
use crate::backend::{Backend, Buffer, Slot};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::solver::common::Tracker;
use crate::solver::params::Execution;
use crate::solver::report::StopReason;

impl<B: Backend, T: Scalar> Gmres<'_, B, T> {
    /// The `steps` steps of a DCGS2 cycle: four kernels each (the SpMV, `basis_dots2`, and the
    /// finishing kernel and update of `gmres_dcgs2_update`; plus the preconditioner's
    /// application; fewer where the backend fuses), nothing transferred.
    fn dcgs2_steps(&mut self, steps: usize) -> Result<()> {
        let be = self.backend;
        let m = self.m;
        let row = 2 * m + 2;
        for s in 1..=steps {
            let (ucol, wcol) = (s, s + 1);
            let pre = self.prepare_source(wcol)?;
            // Without a preconditioner the GPU backends may do both in one kernel (CSR; SELL on
            // CUDA by default).
            let fused = !pre
                && be.gmres_dcgs2_spmv_dots(
                    self.a,
                    &mut self.basis,
                    ucol,
                    &mut self.partials,
                    &mut self.partials2,
                )?;
            if !fused {
                // w = A M^-1 u with the partial d = <u, w> (slot ucol - 1 of the second
                // partials).
                be.basis_spmv_dots(
                    self.a,
                    pre.then_some(&self.z),
                    &mut self.basis,
                    wcol,
                    &mut self.partials2,
                    Some(Slot(ucol - 1)),
                    None,
                )?;
                // a = Q^T u with nu = <u, u> (column ucol is u itself) and c = Q^T w, one
                // pass.
                be.basis_dots2(
                    &self.basis,
                    ucol,
                    wcol,
                    1..ucol + 1,
                    ucol - 1,
                    &mut self.partials,
                    &mut self.partials2,
                )?;
            }
            be.gmres_dcgs2_update(
                &mut self.basis,
                ucol,
                &self.partials,
                &self.partials2,
                &mut self.coef,
                (s - 1) * row,
            )?;
        }
        Ok(())
    }

    /// Where the coefficient buffer keeps the true residual norm a cycle started from (after
    /// the rows of `m + 1` steps, the last of which may run one value into the next row).
    pub(super) fn rho_at(&self) -> usize {
        (self.m + 2) * (2 * self.m + 2) - 1
    }

    /// Lines 2-4 on the device: r = b - A x, rho = ||r|| (into the coefficient buffer) and
    /// v_0 = r / rho into column 1, nothing transferred.
    fn dcgs2_restart(&mut self, b: &Buffer<T>, x: &Buffer<T>) -> Result<()> {
        let be = self.backend;
        be.residual(
            self.a,
            x,
            b,
            &mut self.tmp,
            &mut self.scratch,
            Some(Slot(0)),
        )?;
        let at = self.rho_at();
        be.basis_load_normalized(
            &mut self.basis,
            ARNOLDI_FIRST_COL,
            &self.tmp,
            &self.scratch,
            Slot(0),
            &mut self.coef,
            at,
        )
    }

    /// [`Self::dcgs2_restart`] and its rho read back (the host decides before the cycle).
    pub(super) fn dcgs2_restart_norm(&mut self, b: &Buffer<T>, x: &Buffer<T>) -> Result<f64> {
        self.dcgs2_restart(b, x)?;
        self.backend.read(&self.coef, &mut self.coef_host)?;
        Ok(self.coef_host[self.rho_at()].to_f64())
    }

    /// What one DCGS2 cycle launches: with `update = Some(k)` first the previous cycle's x
    /// update (k columns, `eta` on the device) and the restart (the device-resident mode runs
    /// the next cycle before the host has seen its rho); then the steps and the last column's
    /// sums (a, nu into the coefficient row `steps`). `inner` marks the steps for the report.
    fn dcgs2_enqueue(
        &mut self,
        steps: usize,
        update: Option<usize>,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        inner: Option<&mut Tracker<'_>>,
    ) -> Result<()> {
        let be = self.backend;
        if let Some(taken) = update {
            self.update_x(x, ARNOLDI_FIRST_COL, taken)?;
            self.dcgs2_restart(b, x)?;
        }
        match inner {
            Some(tracker) => {
                tracker.start_inner(be.counters());
                self.dcgs2_steps(steps)?;
                tracker.end_inner(be.counters());
            }
            None => self.dcgs2_steps(steps)?,
        }
        // Finalize the last vector's column: a = Q^T u, nu = <u, u> for u in column steps + 1.
        be.basis_dots(
            &self.basis,
            steps + 1,
            1..steps + 2,
            &mut self.partials,
            Slot(0),
        )?;
        let row = 2 * self.m + 2;
        be.gmres_dcgs2_last_sums(&self.partials, steps, &mut self.coef, steps * row)
    }

    /// Run a cycle of `steps` steps from v_0 in column 1 (see [`Self::dcgs2_enqueue`] for
    /// `update`) and read its coefficients back: one transfer. Device-resident, the launches
    /// are recorded once per shape and replayed (CUDA graphs).
    pub(super) fn dcgs2_run(
        &mut self,
        steps: usize,
        update: Option<usize>,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
    ) -> Result<()> {
        let be = self.backend;
        if tracker.execution == Execution::DeviceResident {
            tracker.start_inner(be.counters());
            let key = match update {
                Some(taken) => (steps, taken, x.identity(), b.identity()),
                None => (steps, 0, 0, 0),
            };
            let mut recordings = std::mem::take(&mut self.recordings);
            let replayed =
                recordings.run(be, key, || self.dcgs2_enqueue(steps, update, b, x, None));
            self.recordings = recordings;
            replayed?;
            tracker.end_inner(be.counters());
        } else {
            self.dcgs2_enqueue(steps, update, b, x, Some(tracker))?;
        }
        be.read(&self.coef, &mut self.coef_host)
    }

    /// The least-squares system of the cycle of `steps` steps whose coefficients were read back
    /// by [`Self::dcgs2_run`], started from the true residual norm `rho`: the Hessenberg matrix
    /// from (a, beta, c, g) of every step, then Givens rotations.
    pub(super) fn dcgs2_system(&self, steps: usize, rho: f64) -> CycleSystem {
        let m = self.m;
        let row = 2 * m + 2;
        let ld = m + 1;
        let mut h = vec![0.0; ld * steps];
        let mut rho_eff = rho;
        let mut valid = steps;
        let mut non_finite = false;
        for s in 1..=steps {
            let base = (s - 1) * row;
            let co = |k: usize| self.coef_host[base + k].to_f64();
            let count = s - 1;
            let a: Vec<f64> = (0..count).map(co).collect();
            let beta = co(2 * count);
            let gl = co(2 * count + 1);
            if s == 1 {
                rho_eff = rho * beta;
            } else {
                // Column s-2 final: += a, subdiagonal beta.
                for (k, ak) in a.iter().enumerate() {
                    h[k + (s - 2) * ld] += ak;
                }
                h[(s - 1) + (s - 2) * ld] = beta;
            }
            let finite =
                beta.is_finite() && gl.is_finite() && (0..2 * count).all(|k| co(k).is_finite());
            if !finite {
                valid = s - 1;
                non_finite = true;
                break;
            }
            if beta <= 0.0 {
                // v_{s-1} vanished: the Krylov space is invariant after s-1 steps.
                valid = s - 1;
                break;
            }
            // Column s-1 provisional: (g - H[0..s, 0..s-1] a) / beta, g = [c; gl].
            for r in 0..s {
                let g = if r < count { co(count + r) } else { gl };
                let t: f64 = (0..count).map(|k| h[r + k * ld] * a[k]).sum();
                h[r + (s - 1) * ld] = (g - t) / beta;
            }
        }
        if valid == steps {
            let last = |k: usize| self.coef_host[steps * row + k].to_f64();
            let a: Vec<f64> = (0..steps).map(last).collect();
            let nu = last(2 * steps + 2);
            let b2 = nu - a.iter().map(|v| v * v).sum::<f64>();
            for (k, ak) in a.iter().enumerate() {
                h[k + (steps - 1) * ld] += ak;
            }
            h[steps + (steps - 1) * ld] = b2.max(0.0).sqrt();
        }
        let mut sys = arnoldi_givens(&h, ld, valid, rho_eff, ARNOLDI_FIRST_COL);
        if non_finite && sys.stop.is_none() {
            sys.stop = Some(StopReason::NanOrInf);
        }
        sys
    }
}
