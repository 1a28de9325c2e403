//! The small least-squares problems of a GMRES cycle, on the host: an upper triangular R with
//! its right-hand side, from which the residual estimates of every step and the coefficients
//! of the update follow.

use crate::scalar::Scalar;
use crate::solver::common::Tracker;
use crate::solver::report::{BreakdownKind, StopReason};

/// What a cycle leaves for the host: R (upper triangular, column-major, leading dimension
/// `ld`), the right-hand side of R eta = rhs, the residual-norm estimate after every valid
/// step, and why the cycle stopped short (breakdown or NaN) if it did.
#[derive(Debug)]
pub(super) struct CycleSystem {
    /// Basis column of the first direction v_0.
    pub first_col: usize,
    pub r: Vec<f64>,
    pub ld: usize,
    pub rhs: Vec<f64>,
    /// ||r_k|| estimates, k = 1..=valid steps.
    pub estimates: Vec<f64>,
    /// Set when the cycle ends early: after `estimates.len()` steps, for this reason.
    pub stop: Option<StopReason>,
}

impl CycleSystem {
    /// The cycle's residual estimates recorded by `tracker` from iteration `*iteration` + 1 on
    /// (advanced for each): the steps taken and the stop reason (the tracker's, else the
    /// cycle's own early stop).
    pub fn record_estimates(
        &self,
        tracker: &mut Tracker<'_>,
        iteration: &mut usize,
    ) -> (usize, Option<StopReason>) {
        let mut taken = 0;
        for &rk in &self.estimates {
            taken += 1;
            *iteration += 1;
            if let Some(r) = tracker.record(*iteration, rk) {
                return (taken, Some(r));
            }
        }
        (taken, self.stop)
    }

    /// The update's coefficients eta of the first `taken` steps (Alg. 6 line 20), padded with
    /// zeros to `m` entries, in the solve's precision.
    pub fn eta<T: Scalar>(&self, taken: usize, m: usize) -> Vec<T> {
        let mut eta: Vec<T> = self
            .coefficients(taken)
            .iter()
            .map(|&v| T::from_f64(v))
            .collect();
        eta.resize(m, T::zero());
        eta
    }

    /// eta solving the leading k x k block of R eta = rhs (back substitution).
    pub fn coefficients(&self, k: usize) -> Vec<f64> {
        let mut y = self.rhs[..k].to_vec();
        for i in (0..k).rev() {
            let mut acc = y[i];
            for (j, yj) in y.iter().enumerate().take(k).skip(i + 1) {
                acc -= self.r[i + j * self.ld] * yj;
            }
            y[i] = acc / self.r[i + i * self.ld];
        }
        y
    }
}

/// Arnoldi: `h` is the (steps+1) x steps Hessenberg matrix (column-major, leading dimension
/// `ld` >= steps + 1, H(k, c) at k + c ld), rho = ||r_0||. Givens rotations reduce it to R with
/// g = Q^T (rho e_1); ||r_k|| = |g_k|. A vanishing subdiagonal entry is a happy breakdown (the
/// step is valid and exact); a vanishing diagonal of R a singular one (the step is not taken).
pub(super) fn arnoldi_givens(
    h: &[f64],
    ld: usize,
    steps: usize,
    rho: f64,
    first_col: usize,
) -> CycleSystem {
    let mut r = vec![0.0; ld * steps.max(1)];
    let mut g = vec![0.0; steps + 1];
    g[0] = rho;
    let (mut cs, mut sn) = (vec![0.0; steps], vec![0.0; steps]);
    let mut estimates = Vec::with_capacity(steps);
    let mut stop = None;
    let mut scale: f64 = 0.0;
    for c in 0..steps {
        let mut col: Vec<f64> = (0..=c + 1).map(|k| h[k + c * ld]).collect();
        if col.iter().any(|v| !v.is_finite()) {
            stop = Some(StopReason::NanOrInf);
            break;
        }
        scale = col.iter().fold(scale, |a, v| a.max(v.abs()));
        let tiny = f64::EPSILON * scale;
        let sub = col[c + 1];
        for q in 0..c {
            let (a, b) = (col[q], col[q + 1]);
            col[q] = cs[q] * a + sn[q] * b;
            col[q + 1] = -sn[q] * a + cs[q] * b;
        }
        let d = col[c].hypot(sub);
        if d <= tiny {
            // R would be singular: the Krylov space stopped growing without solving.
            stop = Some(StopReason::Breakdown(BreakdownKind::Gmres));
            break;
        }
        cs[c] = col[c] / d;
        sn[c] = sub / d;
        col[c] = d;
        for k in 0..=c {
            r[k + c * ld] = col[k];
        }
        g[c + 1] = -sn[c] * g[c];
        g[c] *= cs[c];
        estimates.push(g[c + 1].abs());
        if sub.abs() <= tiny {
            // Happy breakdown: the space is invariant, this step solves the system.
            stop = Some(StopReason::Breakdown(BreakdownKind::Gmres));
            break;
        }
    }
    CycleSystem {
        first_col,
        r,
        ld,
        rhs: g,
        estimates,
        stop,
    }
}
