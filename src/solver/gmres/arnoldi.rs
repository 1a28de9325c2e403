//! Arnoldi GMRES: v_0 = r_0 / rho, w = A M^-1 v_{k-1} orthogonalized against v_0..v_{k-1},
//! H (k+1) x k Hessenberg, reduced by Givens rotations on the host (Saad and Schultz 1986).
//!
//! * Pipelined with `GmresOrthogonalization::Cgs2`: classical Gram-Schmidt twice (CGS2; Giraud, Langou, Rozloznik and
//!   van den Eshof 2005: the second pass brings the loss of orthogonality to O(eps), so the
//!   method is as stable as MGS-GMRES, Paige, Rozloznik and Strakos 2006). Six kernels per
//!   step, all fused as in \[Rupp16\] Algorithm 6 and nothing transferred until the cycle ends:
//!   the SpMV with <v_{k-1}, w>, the batched dots with v_0..v_{k-2}, the fused subtraction
//!   (which also stores the coefficients), the second pass's batched dots and subtraction
//!   (coefficients into a second matrix), and the normalization. H = first + second pass.
//! * Classical: modified Gram-Schmidt, one kernel per BLAS call and one transfer per inner
//!   product (the textbook reference).
//!
//! Both keep v_k in basis column k + 1 (column 0 is unused): the fused kernels orthogonalize
//! against columns 1..i-1.

use super::least_squares::{arnoldi_givens, CycleSystem};
use super::Gmres;
use crate::backend::{Backend, Slot};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::solver::cg::norm;
use crate::solver::common::Tracker;

/// Basis column of v_0 in the Arnoldi cycles.
pub(super) const ARNOLDI_FIRST_COL: usize = 1;

impl<B: Backend, T: Scalar> Gmres<'_, B, T> {
    /// One pipelined CGS2 cycle of `steps` steps from v_0 (already in column 1).
    pub(super) fn cgs2_cycle(
        &mut self,
        steps: usize,
        rho: f64,
        tracker: &mut Tracker<'_>,
    ) -> Result<CycleSystem> {
        let be = self.backend;
        let ld = self.m + 1;
        let norm_slot = Slot(self.m);
        tracker.start_inner(be.counters());
        for s in 1..=steps {
            // w, the future v_s, goes to column i; v_0..v_{s-1} are columns 1..i-1.
            let i = s + 1;
            let pre = self.prepare_source(i)?;
            // w = A M^-1 v_{s-1} with the first stage of <v_{s-1}, w> (slot i-2).
            be.basis_spmv_dots(
                self.a,
                pre.then_some(&self.z),
                &mut self.basis,
                i,
                &mut self.partials,
                Some(Slot(i - 2)),
                None,
            )?;
            // First pass: <v_j, w> for the other columns, then w -= sum_j h_j v_j (h stored).
            if i >= 3 {
                be.basis_dots(&self.basis, i, 1..i - 1, &mut self.partials, Slot(0))?;
            }
            be.gmres_gram_schmidt(
                &mut self.basis,
                i,
                &mut self.partials,
                Slot(0),
                norm_slot,
                &mut self.rmat,
                ld,
            )?;
            // Second pass against all of v_0..v_{s-1}: the corrections go to the second matrix.
            be.basis_dots(&self.basis, i, 1..i, &mut self.partials, Slot(0))?;
            be.gmres_gram_schmidt(
                &mut self.basis,
                i,
                &mut self.partials,
                Slot(0),
                norm_slot,
                &mut self.rmat2,
                ld,
            )?;
            // h_{s, s-1} = ||w||, v_s = w / ||w|| (the xi partial it also computes is unused).
            be.gmres_normalize(
                &mut self.basis,
                i,
                &self.partials,
                norm_slot,
                &mut self.rmat,
                ld,
                &mut self.xi_partials,
                Slot(s - 1),
            )?;
        }
        tracker.end_inner(be.counters());
        be.read(&self.rmat, &mut self.rhost)?;
        be.read(&self.rmat2, &mut self.rhost2)?;
        // rmat column i = s + 1 holds h_{0..s-1, s-1} (rows 0..s-1) and h_{s, s-1} (row s).
        let mut h = vec![0.0; ld * steps];
        for s in 1..=steps {
            for k in 0..=s {
                let idx = k + s * ld;
                let second = if k < s {
                    self.rhost2[idx].to_f64()
                } else {
                    0.0
                };
                h[k + (s - 1) * ld] = self.rhost[idx].to_f64() + second;
            }
        }
        Ok(arnoldi_givens(&h, ld, steps, rho, ARNOLDI_FIRST_COL))
    }

    /// One classical MGS cycle: h_{j,s-1} = <v_j, w>, w -= h_{j,s-1} v_j for j = 0..s-1 in
    /// order, each inner product transferred.
    pub(super) fn mgs_cycle(
        &mut self,
        steps: usize,
        rho: f64,
        tracker: &mut Tracker<'_>,
    ) -> Result<CycleSystem> {
        let be = self.backend;
        let ld = self.m + 1;
        let mut h = vec![0.0; ld * steps];
        tracker.start_inner(be.counters());
        for s in 1..=steps {
            let i = s + 1;
            let pre = self.prepare_source(i)?;
            be.basis_spmv_dots(
                self.a,
                pre.then_some(&self.z),
                &mut self.basis,
                i,
                &mut self.partials,
                None,
                None,
            )?;
            for j in 1..i {
                be.basis_dots(&self.basis, i, j..j + 1, &mut self.scratch, Slot(0))?;
                let hj = be.finish(&self.scratch)?.get(Slot(0));
                be.basis_axpy(&mut self.basis, i, j, T::from_f64(-hj))?;
                h[(j - 1) + (s - 1) * ld] = hj;
            }
            be.basis_dots(&self.basis, i, i..i + 1, &mut self.scratch, Slot(0))?;
            let nrm = norm(be.finish(&self.scratch)?.get(Slot(0)));
            h[s + (s - 1) * ld] = nrm;
            if nrm > 0.0 {
                be.basis_scale(&mut self.basis, i, T::from_f64(1.0 / nrm))?;
            }
        }
        tracker.end_inner(be.counters());
        Ok(arnoldi_givens(&h, ld, steps, rho, ARNOLDI_FIRST_COL))
    }
}
