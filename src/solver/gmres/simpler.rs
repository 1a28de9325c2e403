//! The paper's pipelined GMRES: "simpler GMRES" (Walker and Zhou) with one pass of classical
//! Gram-Schmidt, \[Rupp16\] Algorithm 6 (4 kernels per step, no host transfer during the
//! orthogonalization). Kept as [`GmresOrthogonalization::SimplerCgs`]; only conditionally
//! stable (Jiranek, Rozloznik and Gutknecht 2008).
//!
//! Basis: v_0 = r_0 / rho_0 and v_i = orthonormalized A M^-1 v_{i-1}, so A M^-1 [v_0..v_{k-1}]
//! = [v_1..v_k] R with R upper triangular. With xi_i = <r_0, v_i>, the minimizer is
//! R eta = xi and x_k = x_0 + M^-1 [v_0..v_{k-1}] eta; the residual norms follow from the xi
//! without touching the residual vector: ||r_k|| = ||r_{k-1}|| sqrt(1 - (xi_k/||r_{k-1}||)^2),
//! the product form that keeps relative accuracy when the residual becomes small.
//!
//! [`GmresOrthogonalization::SimplerCgs`]: crate::solver::GmresOrthogonalization::SimplerCgs

use super::least_squares::CycleSystem;
use super::Gmres;
use crate::backend::{Backend, Slot};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::solver::common::Tracker;
use crate::solver::report::{BreakdownKind, StopReason};

impl<B: Backend, T: Scalar> Gmres<'_, B, T> {
    /// Algorithm 6, lines 6-17: four kernels per step, no transfer until the cycle ends.
    pub(super) fn simpler_cycle(
        &mut self,
        steps: usize,
        rho: f64,
        tracker: &mut Tracker<'_>,
    ) -> Result<CycleSystem> {
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
        let xi: Vec<f64> = (0..steps).map(|k| rho * sums.get(Slot(k))).collect();
        let r: Vec<f64> = self.rhost[..m * m].iter().map(|v| v.to_f64()).collect();
        Ok(simpler_system(r, m, steps, xi, rho))
    }
}

/// The residual estimates of the simpler form (product formula) and the first vanishing
/// diagonal of R (breakdown: the step is not taken).
fn simpler_system(r: Vec<f64>, m: usize, steps: usize, xi: Vec<f64>, rho: f64) -> CycleSystem {
    let rscale = r[..steps * m].iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    let mut estimates = Vec::with_capacity(steps);
    let mut stop = None;
    let mut r_prev = rho;
    for k in 1..=steps {
        let rkk = r[(k - 1) + (k - 1) * m];
        if rkk.is_nan() || rkk.abs() <= f64::EPSILON * rscale {
            stop = Some(if rkk.is_finite() {
                StopReason::Breakdown(BreakdownKind::Gmres)
            } else {
                StopReason::NanOrInf
            });
            break;
        }
        let c = (xi[k - 1] / r_prev).clamp(-1.0, 1.0);
        r_prev *= ((1.0 - c) * (1.0 + c)).max(0.0).sqrt();
        estimates.push(r_prev);
    }
    CycleSystem {
        first_col: 0,
        r,
        ld: m,
        rhs: xi,
        estimates,
        stop,
    }
}
