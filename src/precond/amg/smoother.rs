//! The relaxation of one level: its data and the host reference of a sweep.

use super::options::Smoother;
use super::prolongation::spectral_radius;
use crate::error::Result;
use crate::matrix::CsrMatrix;
use crate::memory::try_with_capacity;
use crate::scalar::Scalar;

/// Chebyshev: the upper end of the interval is this factor times the spectral estimate.
pub const CHEBYSHEV_UPPER_FACTOR: f64 = 1.1;
/// Chebyshev: the lower end of the interval is the upper end divided by this. 5, not the 30
/// of AMGCL and PyAMG: measured on Poisson (2D k = 64, 3D k = 20, smoothed aggregation, one
/// sweep each side) the asymptotic residual factor per cycle is 0.24 / 0.20 (degree 2, 2D /
/// 3D) and 0.20 / 0.15 (degree 3) with 5, against 0.59 / 0.59 and 0.36 / 0.35 with 30 (a
/// smoother must damp the upper part of the spectrum; the coarse level takes the rest).
pub const CHEBYSHEV_LOWER_RATIO: f64 = 5.0;

/// The weight w of a damped Jacobi sweep, `jacobi_weight / rho` ([`super::AmgOptions::jacobi_weight`]);
/// `rho`, the estimate of the spectral radius of D^-1 A, taken as 2 (the Laplacian's) when it
/// is not a positive finite number.
pub fn jacobi_scaling(jacobi_weight: f64, rho: f64) -> f64 {
    let rho = if rho > 0.0 && rho.is_finite() {
        rho
    } else {
        2.0
    };
    jacobi_weight / rho
}

/// The data of one level's smoother.
///
/// Every smoother is a polynomial in D^-1 A applied to the residual, so with as many sweeps
/// before as after the coarse correction the V-cycle is symmetric:
///
/// - [`Smoother::Jacobi`] and [`Smoother::L1Jacobi`], one sweep: `x += s .* (b - A x)`
///   with `s` = [`LevelSmoother::scaled_inv_diag`] (w / a_ii, or 1 / (a_ii + sum_{j != i}
///   |a_ij|)); from x = 0 the first sweep is `x = s .* b`.
/// - [`Smoother::Chebyshev`] of degree k, one sweep (Saad, "Iterative methods for sparse
///   linear systems", 2nd ed., algorithm 12.1, on D^-1 A with `s` = 1 / a_ii and the interval
///   [lower, upper] = [`LevelSmoother::bounds`]): theta = (upper + lower) / 2,
///   delta = (upper - lower) / 2, sigma = theta / delta, rho = 1 / sigma;
///   `r = s .* (b - A x)`, `d = r / theta`; then for step 1..=k: `x += d`; unless step = k:
///   `r = s .* (b - A x)`, rho' = 1 / (2 sigma - rho), `d = rho' rho d + (2 rho' / delta) r`,
///   rho = rho'. k products with A per sweep (k - 1 from x = 0).
#[derive(Debug, Clone, PartialEq)]
pub struct LevelSmoother<T> {
    kind: Smoother,
    scaled_inv_diag: Vec<T>,
    spectral_radius: f64,
    bounds: (f64, f64),
}

impl<T: Scalar> LevelSmoother<T> {
    /// The smoother of `kind` for `a` (`diag` its positive diagonal, as f64), Jacobi damped by
    /// [`jacobi_scaling`]`(jacobi_weight, rho)`.
    pub fn new(a: &CsrMatrix<T>, diag: &[f64], kind: Smoother, jacobi_weight: f64) -> Result<Self> {
        Self::with_radius(a, diag, kind, jacobi_weight, || {
            Ok(spectral_radius(a, diag))
        })
    }

    /// [`LevelSmoother::new`] for the rows of `a` (of any width, column `i` being row `i`'s
    /// diagonal), the spectral radius of D^-1 A given by `radius` (called once, by the
    /// smoothers that need it).
    pub(super) fn with_radius(
        a: &CsrMatrix<T>,
        diag: &[f64],
        kind: Smoother,
        jacobi_weight: f64,
        radius: impl FnOnce() -> Result<f64>,
    ) -> Result<Self> {
        let n = a.n_rows();
        let mut scaled_inv_diag = try_with_capacity("AMG smoother diagonal", n)?;
        let mut rho = 0.0;
        let mut bounds = (0.0, 0.0);
        match kind {
            Smoother::Jacobi => {
                rho = radius()?;
                let w = jacobi_scaling(jacobi_weight, rho);
                scaled_inv_diag.extend(diag.iter().map(|&d| T::from_f64(w / d)));
            }
            Smoother::L1Jacobi => {
                scaled_inv_diag.extend((0..n).map(|i| {
                    let (c, v) = a.row(i);
                    let off: f64 = c
                        .iter()
                        .zip(v)
                        .filter(|(&j, _)| j != i)
                        .map(|(_, v)| v.to_f64().abs())
                        .sum();
                    T::from_f64(1.0 / (diag[i] + off))
                }));
            }
            Smoother::Chebyshev { .. } => {
                rho = radius()?;
                let upper = CHEBYSHEV_UPPER_FACTOR * rho;
                bounds = (upper / CHEBYSHEV_LOWER_RATIO, upper);
                scaled_inv_diag.extend(diag.iter().map(|&d| T::from_f64(1.0 / d)));
            }
        }
        Ok(Self {
            kind,
            scaled_inv_diag,
            spectral_radius: rho,
            bounds,
        })
    }

    /// Which smoother.
    pub fn kind(&self) -> Smoother {
        self.kind
    }
    /// The diagonal scaling `s` of a sweep: w / a_ii (Jacobi), 1 / (a_ii + sum_{j != i}
    /// |a_ij|) (l1-Jacobi), 1 / a_ii (Chebyshev).
    pub fn scaled_inv_diag(&self) -> &[T] {
        &self.scaled_inv_diag
    }
    /// The spectral radius estimate of D^-1 A (0 for l1-Jacobi, which needs none).
    pub fn spectral_radius(&self) -> f64 {
        self.spectral_radius
    }
    /// The Chebyshev interval (lower, upper) of D^-1 A ((0, 0) for the Jacobi smoothers).
    pub fn bounds(&self) -> (f64, f64) {
        self.bounds
    }
    /// Products with A of `sweeps` sweeps (from a nonzero x).
    pub fn spmvs_per_sweep(&self) -> usize {
        match self.kind {
            Smoother::Chebyshev { degree } => degree,
            _ => 1,
        }
    }

    /// `sweeps` sweeps on `A x = b` (host reference); `x_is_zero` when x holds zeros, which
    /// saves the first product. `work` is scratch for a level of this size.
    pub(crate) fn smooth_host(
        &self,
        a: &CsrMatrix<T>,
        b: &[T],
        x: &mut [T],
        sweeps: usize,
        mut x_is_zero: bool,
        work: &mut SmootherWork<T>,
    ) -> Result<()> {
        let s = &self.scaled_inv_diag;
        for _ in 0..sweeps {
            // r = s .* (b - A x)
            scaled_residual(a, b, x, s, x_is_zero, &mut work.r)?;
            match self.kind {
                Smoother::Jacobi | Smoother::L1Jacobi => {
                    // x += s .* (b - A x)
                    for (xi, &ri) in x.iter_mut().zip(&work.r) {
                        *xi += ri;
                    }
                }
                Smoother::Chebyshev { degree } => {
                    let (lower, upper) = self.bounds;
                    let theta = (upper + lower) / 2.0;
                    let delta = (upper - lower) / 2.0;
                    let sigma = theta / delta;
                    let mut rho = 1.0 / sigma;
                    // d = r / theta
                    let inv_theta = T::from_f64(1.0 / theta);
                    for (di, &ri) in work.d.iter_mut().zip(&work.r) {
                        *di = ri * inv_theta;
                    }
                    for step in 1..=degree {
                        // x += d
                        for (xi, &di) in x.iter_mut().zip(&work.d) {
                            *xi += di;
                        }
                        if step == degree {
                            break;
                        }
                        // r = s .* (b - A x)
                        scaled_residual(a, b, x, s, false, &mut work.r)?;
                        let rho_next = 1.0 / (2.0 * sigma - rho);
                        // d = rho' rho d + (2 rho' / delta) r
                        let (c1, c2) = (
                            T::from_f64(rho_next * rho),
                            T::from_f64(2.0 * rho_next / delta),
                        );
                        for (di, &ri) in work.d.iter_mut().zip(&work.r) {
                            *di = c1 * *di + c2 * ri;
                        }
                        rho = rho_next;
                    }
                }
            }
            x_is_zero = false;
        }
        Ok(())
    }
}

/// Scratch vectors of [`LevelSmoother::smooth_host`].
pub(crate) struct SmootherWork<T> {
    r: Vec<T>,
    d: Vec<T>,
}

impl<T: Scalar> SmootherWork<T> {
    /// Scratch for a level of `n` rows.
    pub(crate) fn new(n: usize) -> Result<Self> {
        Ok(Self {
            r: crate::memory::try_filled("AMG smoother scratch", n, T::zero())?,
            d: crate::memory::try_filled("AMG smoother scratch", n, T::zero())?,
        })
    }
}

/// `r = s .* (b - A x)` (`A x` skipped when `x_is_zero`).
fn scaled_residual<T: Scalar>(
    a: &CsrMatrix<T>,
    b: &[T],
    x: &[T],
    s: &[T],
    x_is_zero: bool,
    r: &mut [T],
) -> Result<()> {
    if x_is_zero {
        for ((ri, &bi), &si) in r.iter_mut().zip(b).zip(s) {
            *ri = si * bi;
        }
    } else {
        a.mul_vec(x, r)?;
        for ((ri, &bi), &si) in r.iter_mut().zip(b).zip(s) {
            *ri = si * (bi - *ri);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generate::Generator;

    #[test]
    fn jacobi_weight_is_relative_to_each_levels_spectral_radius() {
        assert!((jacobi_scaling(4.0 / 3.0, 1.5) - 8.0 / 9.0).abs() < 1e-15);
        // An estimate that is not a positive finite number counts as the Laplacian's 2.
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(jacobi_scaling(4.0 / 3.0, bad), 2.0 / 3.0);
        }
        // The level's scaling is w / a_ii with w = 4/3 / rho of its own estimate (not capped
        // at a fixed weight when rho < 2, as the former 0.8 min(1, 2 / rho) was).
        let a = Generator::Poisson2d
            .generate_with_param::<f64>(20)
            .unwrap()
            .matrix;
        let diag: Vec<f64> = a.diagonal().iter().map(|d| d.to_f64()).collect();
        let s = LevelSmoother::with_radius(&a, &diag, Smoother::Jacobi, 4.0 / 3.0, || Ok(1.25))
            .unwrap();
        assert_eq!(s.spectral_radius(), 1.25);
        for (i, &si) in s.scaled_inv_diag().iter().enumerate() {
            assert!(
                (si * diag[i] - 4.0 / 3.0 / 1.25).abs() < 1e-14,
                "row {i}: {si}"
            );
        }
    }
}
