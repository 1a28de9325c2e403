//! The parameters of the multigrid setup: one typed value with measured defaults.

use crate::backend::BackendInfo;
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::PrecondPrecision;
use crate::scalar::Scalar;

/// How a level's prolongator is built from its aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Coarsening {
    /// Smoothed aggregation (Vanek, Mandel, Brezina 1996): the tentative prolongator smoothed by
    /// one damped-Jacobi step of the filtered matrix, P = (I - w D_f^-1 A_f) P_tent. Costs more
    /// nonzeros on the coarse levels and converges in a small, mesh-independent number of cycles.
    #[default]
    SmoothedAggregation,
    /// Plain (unsmoothed) aggregation, P = P_tent: the cheapest setup and the sparsest coarse
    /// levels; a V-cycle converges more slowly and its count grows with the number of levels.
    Aggregation,
}

/// Where the hierarchy is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum AmgSetup {
    /// On the device for a GPU backend and block size 1, on the host otherwise (default).
    #[default]
    Auto,
    /// On the host ([`super::Hierarchy::build`]: greedy aggregation), then uploaded.
    Host,
    /// With the backend's kernels (`kernels/amg_setup.kc`, `kernels/sparse.kc`): aggregation by
    /// a distance-2 maximal independent set of the strong couplings (Bell, Dalton, Olson 2012),
    /// the prolongator, its transpose and the Galerkin products on the device; only the
    /// coarsest level is inverted on the host. Block size 1. On the host backend the kernels'
    /// host references run.
    Device,
}

impl std::fmt::Display for AmgSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Host => "host",
            Self::Device => "device",
        })
    }
}

impl std::str::FromStr for AmgSetup {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "host" => Ok(Self::Host),
            "device" => Ok(Self::Device),
            _ => Err(Error::param(
                "amg setup",
                format!("unknown setup '{s}' (auto, host or device)"),
            )),
        }
    }
}

/// The precision of the hierarchy's operators, transfers, smoother data and cycle: the
/// preconditioners' [`PrecondPrecision`] (its [`PrecondPrecision::F32`] is AMG's own
/// single-precision hierarchy, set up on the device where the setup runs there).
pub type AmgPrecision = PrecondPrecision;

/// The relaxation of every level but the coarsest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Smoother {
    /// Damped Jacobi, x += w D^-1 (b - A x), w = `jacobi_weight / rho` with rho the estimate of
    /// the spectral radius of D^-1 A on each level (by default 4/3 / rho: the weight of the
    /// prolongator smoothing).
    #[default]
    Jacobi,
    /// l1-Jacobi, x += D_l1^-1 (b - A x) with d_l1_i = a_ii + sum_{j != i} |a_ij|: no weight and
    /// no spectral estimate, convergent for every symmetric positive definite matrix.
    L1Jacobi,
    /// Chebyshev polynomial of `degree` (1..=4) in D^-1 A, aimed at the interval
    /// [rho_hat / 5, rho_hat], rho_hat = 1.1 x the spectral radius estimate (see
    /// `CHEBYSHEV_LOWER_RATIO`): `degree` products with A per sweep.
    Chebyshev {
        /// Polynomial degree, 1..=4.
        degree: usize,
    },
}

/// Largest [`AmgOptions::coarse_size`]: the coarsest level is inverted as a dense matrix.
pub const MAX_COARSE_SIZE: usize = 4096;
/// Largest [`AmgOptions::block_size`].
pub const MAX_BLOCK_SIZE: usize = 16;
/// Largest [`AmgOptions::pre_sweeps`] and [`AmgOptions::post_sweeps`].
pub const MAX_SWEEPS: usize = 16;

/// Parameters of the smoothed-aggregation setup and cycle.
///
/// ```
/// use pipekrylov::precond::AmgOptions;
/// let opts = AmgOptions { coarse_size: 200, ..AmgOptions::default() };
/// assert!(opts.validate().is_ok());
/// assert!(AmgOptions { strength: -1.0, ..opts }.validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct AmgOptions {
    /// Smoothed (default) or plain aggregation.
    pub coarsening: Coarsening,
    /// Strength threshold eps of the finest level: j is a strong neighbour of i when
    /// |a_ij| >= eps sqrt(|a_ii a_jj|) (block norms for a block size above 1), symmetrized.
    /// Multiplied by [`AmgOptions::strength_decay`] on every coarser level. In [0, 1];
    /// default 0.05, not AMGCL's 0.08: measured with CG, the same iteration counts or fewer
    /// (3D Poisson k = 48: 11 and 11, thermal2d k = 128: 11 and 13, jump3d k = 40: 34 and 35,
    /// aniso2d k = 128: 13 and 13) and a lower operator complexity on 3D Poisson (1.57
    /// against 1.62 at k = 48; the coarse levels' weak long-range couplings otherwise slow
    /// their coarsening).
    pub strength: f64,
    /// The factor of the strength threshold from one level to the next coarser one: eps_l =
    /// `strength` `strength_decay`^l. In (0, 1]; default 0.5 (halved, as AMGCL does).
    ///
    /// 1 keeps the threshold on every level, so the coarse levels of a problem with
    /// coefficient jumps do not merge the aggregates of regions coupled only weakly. Measured
    /// with CG to 1e-8, b = A 1, at 1M unknowns (host backend; host setup, then device setup;
    /// `bench/log/2026-11-29-amg-strength-decay.md`): jump3d 61 -> 33 and 83 -> 59 iterations
    /// (37 with a degree-3 Chebyshev smoother), randjump3d 91 -> 40 and 97 -> 42, aniso2d
    /// 16 -> 10 and 20 -> 16; but thermal2d 29 -> 40 and 28 -> 44, 3D Poisson 12 -> 12 and
    /// 11 -> 15 with a higher operator complexity (1.58 -> 1.83 and 1.81 -> 2.03). Hence 0.5
    /// by default and 1 for coefficient jumps.
    pub strength_decay: f64,
    /// Most levels, the coarsest included (default 25; 1 means a direct solve).
    pub max_levels: usize,
    /// Coarsening stops at a level of at most this many rows, which is inverted as a dense
    /// matrix (default 500; at most [`MAX_COARSE_SIZE`]).
    pub coarse_size: usize,
    /// Relaxation of every level but the coarsest (default [`Smoother::Jacobi`]).
    pub smoother: Smoother,
    /// Smoothing sweeps before the coarse correction (default 1).
    pub pre_sweeps: usize,
    /// Smoothing sweeps after the coarse correction (default 1). Equal to `pre_sweeps` the
    /// cycle is symmetric (usable with CG).
    pub post_sweeps: usize,
    /// Damping of [`Smoother::Jacobi`] relative to the spectrum: each level's sweep takes
    /// w = `jacobi_weight / rho`, rho the estimate of the spectral radius of D^-1 A on that
    /// level; in (0, 2). Default 4/3, the weight of the prolongator smoothing (for a matrix
    /// without weak couplings the smoother is then the prolongator's smoothing step). The
    /// coarse operators of smoothed aggregation have rho near 1.3-1.4 against the finest
    /// level's 2, so a fixed weight (the former 0.8, w = 0.8 min(1, 2 / rho)) under-damps
    /// them. CG + AMG to 1e-8, b = A 1, device setup (host backend): 2D Poisson 1M 14 -> 10
    /// iterations, 4.19M 15 -> 11, 3D Poisson 2.1M 12 -> 11, fem2d 1M 14 -> 10, aniso2d 1M
    /// 20 -> 15, thermal2d 1M 25 -> 20, jump3d 1M 81 -> 80, randjump3d 1M 87 -> 91; host
    /// setup: 2D Poisson 1M 11 -> 8, elasticity3d 110K 33 -> 30; convdiff3d 262K BiCGStab
    /// 15 -> 13, GMRES(30) 27 -> 23. 1.2 / rho and 1.4 / rho took 1-4 iterations more than
    /// 4/3 on the 2D families.
    pub jacobi_weight: f64,
    /// The weight w of the prolongator smoothing P = (I - w D_f^-1 A_f) P_tent; `None`
    /// (default): 4/3 / rho with rho the spectral radius of D_f^-1 A_f estimated by power
    /// iterations. A given weight must lie in (0, 2).
    pub prolongation_weight: Option<f64>,
    /// Unknowns per node (default 1). Above 1 the rows `block_size i .. block_size (i + 1)`
    /// form node i: strength on the Frobenius norms of the node blocks, aggregates of nodes,
    /// and the `block_size` unit vectors (one constant per component) as the near nullspace.
    pub block_size: usize,
    /// Where the hierarchy is set up (default [`AmgSetup::Auto`]).
    pub setup: AmgSetup,
    /// The hierarchy's precision (default [`AmgPrecision::Solve`]).
    pub precision: AmgPrecision,
    /// The diagonal contrast (A's largest over its smallest diagonal entry) from which
    /// [`Amg`](crate::precond::Amg) treats A as a high-contrast matrix (default 1e4;
    /// `f64::INFINITY`: never; at least 1). For such a matrix it keeps the strength threshold
    /// on every level (`strength_decay` 1, whatever was set) and smooths with Chebyshev of
    /// degree 3 where [`Smoother::Jacobi`] was set ([`AmgOptions::for_contrast`]); the report
    /// shows the values used. Coefficient jumps of many orders of magnitude make regions that
    /// the halved threshold of the coarse levels merges across the jumps. CG + AMG to 1e-8,
    /// b = A 1, 1M unknowns, the device setup's algorithm (host backend): jump3d (contrast
    /// 1e6) 80 -> 33 iterations, randjump3d (1.3e4) 91 -> 30; thermal2d (1e3, below the
    /// default) would go 20 -> 44 with `strength_decay` 1, Poisson and aniso2d have contrast 1.
    /// Evaluated once at the setup (a values refresh keeps the choice).
    pub high_contrast: f64,
}

impl Default for AmgOptions {
    fn default() -> Self {
        Self {
            coarsening: Coarsening::SmoothedAggregation,
            strength: 0.05,
            strength_decay: 0.5,
            max_levels: 25,
            coarse_size: 500,
            smoother: Smoother::Jacobi,
            pre_sweeps: 1,
            post_sweeps: 1,
            jacobi_weight: 4.0 / 3.0,
            prolongation_weight: None,
            block_size: 1,
            setup: AmgSetup::Auto,
            precision: AmgPrecision::Solve,
            high_contrast: 1e4,
        }
    }
}

impl AmgOptions {
    /// Whether the hierarchy is set up on `backend`'s device ([`AmgSetup::Auto`]: on a GPU for
    /// block size 1). That setup reads the solver's CSR copy of A when it is given one, and the
    /// cycle shares it; any other device format of the operator makes it upload a CSR copy of
    /// its own (one more A in memory).
    pub fn sets_up_on_device<B: BackendInfo + ?Sized>(&self, backend: &B) -> bool {
        match self.setup {
            AmgSetup::Host => false,
            AmgSetup::Device => true,
            AmgSetup::Auto => backend.is_gpu() && self.block_size == 1,
        }
    }

    /// The options for a matrix of diagonal contrast `contrast` (largest over smallest
    /// diagonal entry): for `contrast >= high_contrast` a strength decay of 1, and Chebyshev of
    /// degree 3 in place of damped Jacobi (see [`AmgOptions::high_contrast`]); otherwise these.
    pub fn for_contrast(&self, contrast: f64) -> Self {
        if contrast.is_nan() || contrast < self.high_contrast {
            return *self;
        }
        let smoother = match self.smoother {
            Smoother::Jacobi => Smoother::Chebyshev { degree: 3 },
            other => other,
        };
        Self {
            strength_decay: 1.0,
            smoother,
            ..*self
        }
    }

    /// Check every parameter; an [`Error::InvalidParameter`] names the first one out of range.
    pub fn validate(&self) -> Result<()> {
        if !(self.strength.is_finite() && (0.0..=1.0).contains(&self.strength)) {
            return Err(Error::param(
                "amg strength",
                format!("must lie in [0, 1], got {}", self.strength),
            ));
        }
        if !(self.strength_decay.is_finite()
            && self.strength_decay > 0.0
            && self.strength_decay <= 1.0)
        {
            return Err(Error::param(
                "amg strength_decay",
                format!("must lie in (0, 1], got {}", self.strength_decay),
            ));
        }
        if self.max_levels == 0 {
            return Err(Error::param("amg max_levels", "must be at least 1"));
        }
        if !(1..=MAX_COARSE_SIZE).contains(&self.coarse_size) {
            return Err(Error::param(
                "amg coarse_size",
                format!(
                    "must lie in 1..={MAX_COARSE_SIZE} (the coarsest level is inverted densely), \
                     got {}",
                    self.coarse_size
                ),
            ));
        }
        if let Smoother::Chebyshev { degree } = self.smoother {
            if !(1..=4).contains(&degree) {
                return Err(Error::param(
                    "amg chebyshev degree",
                    format!("must lie in 1..=4, got {degree}"),
                ));
            }
        }
        for (name, sweeps) in [
            ("amg pre_sweeps", self.pre_sweeps),
            ("amg post_sweeps", self.post_sweeps),
        ] {
            if sweeps > MAX_SWEEPS {
                return Err(Error::param(
                    name,
                    format!("at most {MAX_SWEEPS}, got {sweeps}"),
                ));
            }
        }
        if self.pre_sweeps + self.post_sweeps == 0 {
            return Err(Error::param(
                "amg pre_sweeps",
                "pre_sweeps + post_sweeps must be at least 1",
            ));
        }
        if self.high_contrast.is_nan() || self.high_contrast < 1.0 {
            return Err(Error::param(
                "amg high_contrast",
                format!(
                    "must be at least 1 (infinity: never), got {}",
                    self.high_contrast
                ),
            ));
        }
        if !(self.jacobi_weight.is_finite() && self.jacobi_weight > 0.0 && self.jacobi_weight < 2.0)
        {
            return Err(Error::param(
                "amg jacobi_weight",
                format!("must lie in (0, 2), got {}", self.jacobi_weight),
            ));
        }
        if let Some(w) = self.prolongation_weight {
            if !(w.is_finite() && w > 0.0 && w < 2.0) {
                return Err(Error::param(
                    "amg prolongation_weight",
                    format!("must lie in (0, 2), got {w}"),
                ));
            }
        }
        if !(1..=MAX_BLOCK_SIZE).contains(&self.block_size) {
            return Err(Error::param(
                "amg block_size",
                format!("must lie in 1..={MAX_BLOCK_SIZE}, got {}", self.block_size),
            ));
        }
        Ok(())
    }
}

impl std::str::FromStr for Coarsening {
    type Err = Error;
    /// `sa` (or `smoothed-aggregation`) or `aggregation`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "sa" | "smoothed-aggregation" => Ok(Coarsening::SmoothedAggregation),
            "aggregation" | "plain" => Ok(Coarsening::Aggregation),
            _ => Err(Error::param(
                "amg coarsening",
                format!("'{s}' is not sa or aggregation"),
            )),
        }
    }
}

impl std::str::FromStr for Smoother {
    type Err = Error;
    /// `jacobi`, `l1-jacobi` or `chebyshev:K` (K in 1..=4; `chebyshev` alone is degree 2).
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::param(
                "amg smoother",
                format!("'{s}' is not jacobi, l1-jacobi or chebyshev:K with K in 1..=4"),
            )
        };
        match s.split_once(':') {
            None if s == "jacobi" => Ok(Smoother::Jacobi),
            None if s == "l1-jacobi" => Ok(Smoother::L1Jacobi),
            None if s == "chebyshev" => Ok(Smoother::Chebyshev { degree: 2 }),
            Some(("chebyshev", k)) => match k.parse::<usize>() {
                Ok(degree) if (1..=4).contains(&degree) => Ok(Smoother::Chebyshev { degree }),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

/// The smallest and the largest magnitude of the nonzero diagonal entries of the rows of `a`,
/// row `r`'s diagonal entry being the one in column `r + column_offset` (a rank's rows of a
/// distributed matrix); `None` without any.
pub(crate) fn diagonal_extremes<T: Scalar>(
    a: &CsrMatrix<T>,
    column_offset: usize,
) -> Option<(f64, f64)> {
    use rayon::prelude::*;
    (0..a.n_rows())
        .into_par_iter()
        .filter_map(|r| {
            let (cols, vals) = a.row(r);
            let k = cols.binary_search(&(r + column_offset)).ok()?;
            let v = vals[k].to_f64().abs();
            (v > 0.0).then_some((v, v))
        })
        .reduce_with(|x, y| (x.0.min(y.0), x.1.max(y.1)))
}

/// A's diagonal contrast: its largest over its smallest nonzero diagonal magnitude (1 without
/// a nonzero diagonal entry; see [`AmgOptions::high_contrast`]).
pub(crate) fn diagonal_contrast<T: Scalar>(a: &CsrMatrix<T>) -> f64 {
    diagonal_extremes(a, 0).map_or(1.0, |(lo, hi)| hi / lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_high_contrast_matrix_gets_decay_1_and_chebyshev_3() {
        let d = AmgOptions::default();
        assert_eq!(d.for_contrast(9.9e3), d);
        assert_eq!(d.for_contrast(f64::NAN), d);
        let high = d.for_contrast(1e4);
        assert_eq!(high.strength_decay, 1.0);
        assert_eq!(high.smoother, Smoother::Chebyshev { degree: 3 });
        assert_eq!(
            AmgOptions {
                strength_decay: 1.0,
                smoother: Smoother::Chebyshev { degree: 3 },
                ..d
            },
            high
        );
        let l1 = AmgOptions {
            smoother: Smoother::L1Jacobi,
            ..d
        };
        assert_eq!(
            l1.for_contrast(1e6).smoother,
            Smoother::L1Jacobi,
            "only Jacobi is replaced"
        );
        let never = AmgOptions {
            high_contrast: f64::INFINITY,
            ..d
        };
        assert!(never.validate().is_ok());
        assert_eq!(never.for_contrast(1e300), never);
    }

    #[test]
    fn the_diagonal_contrast_skips_zero_and_missing_diagonal_entries() {
        // Rows: diagonal 2, -1e5 (magnitude counts), 0 (stored zero), none stored, 4.
        let a = CsrMatrix::<f64>::from_triplets(
            5,
            5,
            &[
                (0, 0, 2.0),
                (1, 1, -1e5),
                (1, 0, 3.0),
                (2, 2, 0.0),
                (3, 1, 1.0),
                (4, 4, 4.0),
            ],
        )
        .unwrap();
        assert_eq!(diagonal_extremes(&a, 0), Some((2.0, 1e5)));
        assert_eq!(diagonal_contrast(&a), 5e4);
        // Rows 0-1 of a rank whose rows start at column 3: the diagonal is in columns 3, 4.
        let rows = CsrMatrix::<f64>::from_triplets(2, 5, &[(0, 3, 8.0), (0, 0, 1e9), (1, 4, 2.0)])
            .unwrap();
        assert_eq!(diagonal_extremes(&rows, 3), Some((2.0, 8.0)));
        let empty = CsrMatrix::<f64>::from_triplets(2, 2, &[(0, 1, 1.0)]).unwrap();
        assert_eq!(diagonal_contrast(&empty), 1.0);
    }

    #[test]
    fn amg_defaults_validate_and_each_bad_parameter_is_named() {
        let d = AmgOptions::default();
        assert!(d.validate().is_ok());
        let bad = [
            (
                AmgOptions {
                    strength: f64::NAN,
                    ..d
                },
                "strength",
            ),
            (AmgOptions { strength: 1.5, ..d }, "strength"),
            (
                AmgOptions {
                    strength_decay: 0.0,
                    ..d
                },
                "strength_decay",
            ),
            (
                AmgOptions {
                    strength_decay: 1.5,
                    ..d
                },
                "strength_decay",
            ),
            (AmgOptions { max_levels: 0, ..d }, "max_levels"),
            (
                AmgOptions {
                    high_contrast: 0.5,
                    ..d
                },
                "high_contrast",
            ),
            (
                AmgOptions {
                    high_contrast: f64::NAN,
                    ..d
                },
                "high_contrast",
            ),
            (
                AmgOptions {
                    coarse_size: 0,
                    ..d
                },
                "coarse_size",
            ),
            (
                AmgOptions {
                    coarse_size: 100_000,
                    ..d
                },
                "coarse_size",
            ),
            (
                AmgOptions {
                    smoother: Smoother::Chebyshev { degree: 5 },
                    ..d
                },
                "degree",
            ),
            (
                AmgOptions {
                    pre_sweeps: 0,
                    post_sweeps: 0,
                    ..d
                },
                "pre_sweeps",
            ),
            (
                AmgOptions {
                    post_sweeps: 99,
                    ..d
                },
                "post_sweeps",
            ),
            (
                AmgOptions {
                    jacobi_weight: 0.0,
                    ..d
                },
                "jacobi_weight",
            ),
            (
                AmgOptions {
                    prolongation_weight: Some(f64::INFINITY),
                    ..d
                },
                "prolongation_weight",
            ),
            (AmgOptions { block_size: 0, ..d }, "block_size"),
        ];
        for (opts, name) in bad {
            match opts.validate() {
                Err(Error::InvalidParameter { name: n, .. }) => assert!(n.contains(name), "{n}"),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
