//! The multigrid hierarchy built on the host, and its reference V-cycle.

use super::aggregate::{aggregate, Aggregates};
use super::galerkin::ProductPatterns;
use super::numeric::{coarse_level, numeric_level};
use super::options::{AmgOptions, MAX_COARSE_SIZE};
use super::prolongation::positive_diagonal;
use super::restriction::RestrictionPlan;
use super::smoother::{LevelSmoother, SmootherWork};
use super::strength::{strength_graph, StrengthGraph};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::memory::try_filled;
use crate::scalar::Scalar;
use std::sync::{Arc, OnceLock};

/// Coarsening stops when a level would keep more than this fraction of its rows (numerator
/// over [`STALL_DENOMINATOR`]: 9/10): the level becomes the coarsest.
pub const STALL_NUMERATOR: usize = 9;
/// See [`STALL_NUMERATOR`].
pub const STALL_DENOMINATOR: usize = 10;

/// The largest coarsest level accepted for `coarse_size`: a level at which coarsening stops
/// early (it stalls, or `max_levels` is reached) is still inverted densely up to
/// `max(coarse_size, min(4 coarse_size, MAX_COARSE_SIZE))` rows; above that the build is
/// [`Error::NotApplicable`].
pub fn dense_coarse_limit(coarse_size: usize) -> usize {
    coarse_size.max((4 * coarse_size).min(MAX_COARSE_SIZE))
}

/// The symbolic setup of one level, which depends on the values only through the strength of
/// connection: the strong couplings, the aggregates (and so the tentative prolongator, a
/// function of them) and the threshold they were found with. A values-only refresh
/// ([`Hierarchy::refresh`], [`super::Amg`]'s `update_values`) keeps it and recomputes the
/// rest; its first refresh adds the patterns of the Galerkin products, for the numeric phase
/// alone of the next ones.
#[derive(Debug)]
pub(super) struct LevelPattern {
    pub(super) graph: StrengthGraph,
    pub(super) aggregates: Aggregates,
    /// The strength threshold eps_l.
    pub(super) eps: f64,
    /// The patterns of A P and R A P, once a refresh has kept them.
    pub(super) products: OnceLock<ProductPatterns>,
    /// R's pattern and its entries' positions in P, once a refresh has kept them.
    pub(super) restriction: OnceLock<RestrictionPlan>,
}

impl PartialEq for LevelPattern {
    /// The same symbolic setup (whether the product patterns are kept yet aside).
    fn eq(&self, other: &Self) -> bool {
        self.graph == other.graph && self.aggregates == other.aggregates && self.eps == other.eps
    }
}

/// One level above the coarsest: its operator, the transfers to the next level and its
/// smoother.
#[derive(Debug, Clone, PartialEq)]
pub struct Level<T> {
    pub(super) a: CsrMatrix<T>,
    pub(super) p: CsrMatrix<T>,
    pub(super) r: CsrMatrix<T>,
    pub(super) smoother: LevelSmoother<T>,
    /// Shared with the refreshed hierarchies made from this one.
    pub(super) pattern: Arc<LevelPattern>,
    pub(super) prolongation_weight: f64,
}

impl<T: Scalar> Level<T> {
    /// The operator A_l (A_0 the input; A_{l+1} = R_l A_l P_l).
    pub fn a(&self) -> &CsrMatrix<T> {
        &self.a
    }
    /// The prolongator P_l, `rows(A_l) x rows(A_{l+1})`.
    pub fn p(&self) -> &CsrMatrix<T> {
        &self.p
    }
    /// The restriction R_l = P_l^T.
    pub fn r(&self) -> &CsrMatrix<T> {
        &self.r
    }
    /// The smoother's data.
    pub fn smoother(&self) -> &LevelSmoother<T> {
        &self.smoother
    }
    /// The strength threshold this level was aggregated with.
    pub fn strength(&self) -> f64 {
        self.pattern.eps
    }
    /// The strong couplings the level was aggregated by (found on the values it was first
    /// built for; a [`Hierarchy::refresh`] keeps them).
    pub fn strength_graph(&self) -> &StrengthGraph {
        &self.pattern.graph
    }
    /// Every node's aggregate: the tentative prolongator's columns (kept by a
    /// [`Hierarchy::refresh`]).
    pub fn aggregates(&self) -> &Aggregates {
        &self.pattern.aggregates
    }
    /// The weight w of P = (I - w D_f^-1 A_f) P_tent (0 for plain aggregation).
    pub fn prolongation_weight(&self) -> f64 {
        self.prolongation_weight
    }
}

/// The coarsest level: its operator and the explicit inverse.
#[derive(Debug, Clone, PartialEq)]
pub struct CoarseLevel<T> {
    pub(super) a: CsrMatrix<T>,
    pub(super) inverse: CsrMatrix<T>,
}

impl<T: Scalar> CoarseLevel<T> {
    /// The coarsest operator.
    pub fn a(&self) -> &CsrMatrix<T> {
        &self.a
    }
    /// Its inverse, every entry stored (a dense matrix in CSR form: `values()` is the
    /// row-major inverse), so the coarse solve is one SpMV.
    pub fn inverse(&self) -> &CsrMatrix<T> {
        &self.inverse
    }
}

/// Rows and stored entries of one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LevelStats {
    /// Rows of A_l.
    pub rows: usize,
    /// Stored entries of A_l.
    pub nnz: usize,
}

/// A smoothed-aggregation multigrid hierarchy built on the host: the reference of the device
/// setup and, through [`Hierarchy::vcycle_host`], the executable specification of the cycle.
///
/// ```
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::precond::amg::{AmgOptions, Hierarchy};
/// let a = Generator::Poisson2d.generate_with_param::<f64>(40).unwrap().matrix;
/// let h = Hierarchy::build(&a, &AmgOptions { coarse_size: 50, ..AmgOptions::default() }).unwrap();
/// assert!(h.num_levels() >= 2 && h.operator_complexity() < 1.6);
/// let b = vec![1.0; a.n_rows()];
/// let mut x = vec![0.0; a.n_rows()];
/// h.vcycle_host(&b, &mut x).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Hierarchy<T> {
    levels: Vec<Level<T>>,
    coarse: CoarseLevel<T>,
    options: AmgOptions,
    setup_seconds: f64,
}

impl<T: Scalar> Hierarchy<T> {
    /// Build the hierarchy of `a` (computing in `T`, the spectral estimates and the coarsest
    /// inverse in f64).
    ///
    /// Level l (eps_l = `strength` `strength_decay`^l) is coarsened while it has more than
    /// `coarse_size` rows and fewer than `max_levels` levels exist: strength graph, greedy
    /// aggregation, P (smoothed or tentative), R = P^T, A_{l+1} = R (A_l P) by two host
    /// SpGEMMs. Coarsening stops early when a level keeps more than 9/10 of its rows; the
    /// last level is inverted densely when it has at most
    /// [`dense_coarse_limit`]`(coarse_size)` rows. The options are first adapted to `a`'s
    /// diagonal contrast ([`AmgOptions::for_contrast`]); [`Hierarchy::options`] returns those
    /// used.
    ///
    /// Errors: invalid options ([`Error::InvalidParameter`]); `a` not square
    /// ([`Error::DimensionMismatch`]) or its size not a multiple of `block_size`
    /// ([`Error::InvalidParameter`]); a NaN or infinite entry ([`Error::NonFinite`]); a zero
    /// or missing diagonal entry on a smoothed level ([`Error::SingularPivot`] naming the row)
    /// or a negative one ([`Error::NotApplicable`] naming the row); a matrix that does not
    /// coarsen to a dense-invertible size ([`Error::NotApplicable`]); a singular coarsest
    /// matrix ([`Error::SingularPivot`]); [`Error::OutOfMemory`]. An empty matrix gives an
    /// empty hierarchy (no level, a 0 x 0 coarsest level); a 1 x 1 matrix a coarsest level
    /// only.
    pub fn build(a: &CsrMatrix<T>, options: &AmgOptions) -> Result<Self> {
        let start = std::time::Instant::now();
        options.validate()?;
        if !a.is_square() {
            return Err(Error::dims(
                "AMG: matrix columns vs rows",
                a.n_rows(),
                a.n_cols(),
            ));
        }
        let b = options.block_size;
        if a.n_rows() % b != 0 {
            return Err(Error::param(
                "amg block_size",
                format!(
                    "the matrix has {} rows, not a multiple of the block size {b}",
                    a.n_rows()
                ),
            ));
        }
        if let Some(index) = a.first_non_finite() {
            return Err(Error::NonFinite {
                what: "matrix".into(),
                index,
            });
        }
        // Every level is smoothed with D^-1: the input's diagonal must be positive whatever
        // its size (the same contract for every size).
        positive_diagonal(a, 0)?;
        // A high-contrast matrix's rule (`AmgOptions::high_contrast`), as `Amg` applies it.
        let options = &options.for_contrast(super::options::diagonal_contrast(a));
        let mut levels: Vec<Level<T>> = Vec::new();
        let mut current = a.try_clone()?;
        let mut eps = options.strength;
        loop {
            let l = levels.len();
            let n = current.n_rows();
            if n <= options.coarse_size || l + 1 >= options.max_levels {
                break;
            }
            let strength = strength_graph(&current, eps, b)?;
            let aggregates = aggregate(&strength)?;
            let n_coarse = aggregates.count * b;
            if n_coarse == 0 || n_coarse * STALL_DENOMINATOR > n * STALL_NUMERATOR {
                break;
            }
            let pattern = LevelPattern {
                graph: strength,
                aggregates,
                eps,
                products: OnceLock::new(),
                restriction: OnceLock::new(),
            };
            let (level, next) = numeric_level(current, Arc::new(pattern), l, options, false)?;
            levels.push(level);
            current = next;
            eps *= options.strength_decay;
        }
        let limit = dense_coarse_limit(options.coarse_size);
        if current.n_rows() > limit {
            return Err(Error::NotApplicable {
                preconditioner: "amg".into(),
                reason: format!(
                    "the matrix does not coarsen: level {} has {} rows (nonzeros {}), more than \
                     the {limit} a dense coarse solve takes (coarse_size {}, max_levels {}; a \
                     matrix whose rows are nearly all decoupled, like a diagonal one, does not \
                     coarsen)",
                    levels.len(),
                    current.n_rows(),
                    current.nnz(),
                    options.coarse_size,
                    options.max_levels
                ),
            });
        }
        let coarse = coarse_level(current, levels.len())?;
        Ok(Self {
            levels,
            coarse,
            options: *options,
            setup_seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// The hierarchy of new values `a` of the matrix this one was built from (same size and
    /// pattern), on this one's symbolic setup: every level's strong couplings and aggregates
    /// (so the tentative prolongators, the level count and the coarse sizes) are kept, and the
    /// numeric phase of [`Hierarchy::build`] runs again on them: the filtered matrix, the
    /// prolongator's weight by the power iterations and the smoothed prolongator, R = P^T, the
    /// coarse operators R (A P), the smoothers' data and the coarsest inverse. The first
    /// refresh of a hierarchy runs the host SpGEMM and the transpose and keeps, on the levels
    /// it shares with `self`, the patterns of A P and R A P and R's pattern with each of its
    /// entries' position in P (host memory: index arrays of nnz(A P) + nnz(A_{l+1}) + 2
    /// nnz(P) words, and R's row pointers, per level); the next refreshes of either run only
    /// the products' numeric phase on them and gather R's values from P's. Where a fresh
    /// build on `a` would find the same strong couplings, the result equals it bit for bit.
    /// `self` is not changed but for those kept patterns.
    ///
    /// A matrix of another pattern is accepted too (its levels are then aggregated as the old
    /// one was, and their patterns may differ from this hierarchy's).
    ///
    /// Errors: `a` of another size ([`Error::PatternMismatch`]); a NaN or infinite entry
    /// ([`Error::NonFinite`]); a zero, missing or negative diagonal entry on a level
    /// ([`Error::SingularPivot`] or [`Error::NotApplicable`], naming the row, as the build);
    /// a singular coarsest matrix ([`Error::SingularPivot`]); [`Error::OutOfMemory`].
    pub fn refresh(&self, a: &CsrMatrix<T>) -> Result<Self> {
        Self::numeric(a, &self.options, &self.patterns(), self.n())
    }

    /// The numeric phase of the hierarchy of `a` on the kept symbolic setup of its levels
    /// (`patterns`, finest first; see [`Hierarchy::refresh`]), built for n x n matrices.
    pub(super) fn numeric(
        a: &CsrMatrix<T>,
        options: &AmgOptions,
        patterns: &[Arc<LevelPattern>],
        n: usize,
    ) -> Result<Self> {
        let start = std::time::Instant::now();
        if !a.is_square() || a.n_rows() != n {
            return Err(Error::PatternMismatch(format!(
                "amg: built for {n} x {n}, new values for {} x {}",
                a.n_rows(),
                a.n_cols()
            )));
        }
        if let Some(index) = a.first_non_finite() {
            return Err(Error::NonFinite {
                what: "matrix".into(),
                index,
            });
        }
        positive_diagonal(a, 0)?;
        let mut levels: Vec<Level<T>> = Vec::with_capacity(patterns.len());
        let mut current = a.try_clone()?;
        for (l, pattern) in patterns.iter().enumerate() {
            let (level, next) = numeric_level(current, pattern.clone(), l, options, true)?;
            levels.push(level);
            current = next;
        }
        let coarse = coarse_level(current, levels.len())?;
        Ok(Self {
            levels,
            coarse,
            options: *options,
            setup_seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// The symbolic setup of every level, finest first (what a refresh keeps).
    pub(super) fn patterns(&self) -> Vec<Arc<LevelPattern>> {
        self.levels.iter().map(|l| l.pattern.clone()).collect()
    }

    /// Dimension of the finest level.
    pub fn n(&self) -> usize {
        self.levels
            .first()
            .map_or(self.coarse.a.n_rows(), |l| l.a.n_rows())
    }
    /// The levels above the coarsest, finest first.
    pub fn levels(&self) -> &[Level<T>] {
        &self.levels
    }
    /// The coarsest level.
    pub fn coarsest(&self) -> &CoarseLevel<T> {
        &self.coarse
    }
    /// Number of levels, the coarsest included.
    pub fn num_levels(&self) -> usize {
        self.levels.len() + 1
    }
    /// The options it was built with (adapted to the matrix's contrast).
    pub fn options(&self) -> &AmgOptions {
        &self.options
    }
    /// Seconds [`Hierarchy::build`] took.
    pub fn setup_seconds(&self) -> f64 {
        self.setup_seconds
    }
    /// Rows and nonzeros of every level, finest first, the coarsest last.
    pub fn level_stats(&self) -> Vec<LevelStats> {
        self.levels
            .iter()
            .map(|l| &l.a)
            .chain(std::iter::once(&self.coarse.a))
            .map(|a| LevelStats {
                rows: a.n_rows(),
                nnz: a.nnz(),
            })
            .collect()
    }
    /// Sum of the nonzeros of every level's operator over the finest level's (1 for an empty
    /// matrix).
    pub fn operator_complexity(&self) -> f64 {
        self.complexity(|s| s.nnz)
    }
    /// Sum of the rows of every level over the finest level's (1 for an empty matrix).
    pub fn grid_complexity(&self) -> f64 {
        self.complexity(|s| s.rows)
    }
    /// Sum of `size` over the levels divided by the finest level's (1 when that is 0).
    fn complexity(&self, size: impl Fn(&LevelStats) -> usize) -> f64 {
        let stats = self.level_stats();
        let fine = stats.first().map_or(0, &size);
        if fine == 0 {
            return 1.0;
        }
        stats.iter().map(&size).sum::<usize>() as f64 / fine as f64
    }
    /// Host bytes held by the operators, transfers, smoother data and the coarse inverse.
    pub fn host_bytes(&self) -> usize {
        let csr = |m: &CsrMatrix<T>| {
            (m.n_rows() + 1) * std::mem::size_of::<usize>()
                + m.nnz() * (std::mem::size_of::<usize>() + std::mem::size_of::<T>())
        };
        self.levels
            .iter()
            .map(|l| {
                csr(&l.a)
                    + csr(&l.p)
                    + csr(&l.r)
                    + std::mem::size_of_val(l.smoother.scaled_inv_diag())
            })
            .sum::<usize>()
            + csr(&self.coarse.a)
            + csr(&self.coarse.inverse)
    }

    /// One V-cycle x = M^-1 b on the host (the reference; `x` is overwritten, the cycle
    /// starts from zero). On level l: `pre_sweeps` smoothing sweeps from x_l = 0,
    /// r_l = b_l - A_l x_l, b_{l+1} = R_l r_l, x_{l+1} = the cycle on level l + 1,
    /// x_l += P_l x_{l+1}, `post_sweeps` smoothing sweeps; on the coarsest level
    /// x = A_c^-1 b by the dense inverse. With `pre_sweeps == post_sweeps` M^-1 is symmetric
    /// for a symmetric A (every smoother is a symmetric polynomial in D^-1 A times D^-1).
    pub fn vcycle_host(&self, b: &[T], x: &mut [T]) -> Result<()> {
        let n = self.n();
        if b.len() != n {
            return Err(Error::dims("AMG V-cycle: b length vs rows", n, b.len()));
        }
        if x.len() != n {
            return Err(Error::dims("AMG V-cycle: x length vs rows", n, x.len()));
        }
        self.cycle(0, b, x)
    }

    /// The V-cycle from level `l` down.
    fn cycle(&self, l: usize, b: &[T], x: &mut [T]) -> Result<()> {
        let Some(level) = self.levels.get(l) else {
            // x = A_c^-1 b
            return self.coarse.inverse.mul_vec(b, x);
        };
        let n = level.a.n_rows();
        let n_coarse = level.p.n_cols();
        let mut work = SmootherWork::new(n)?;
        x.fill(T::zero());
        level
            .smoother
            .smooth_host(&level.a, b, x, self.options.pre_sweeps, true, &mut work)?;
        // r = b - A x
        let mut r = try_filled("AMG V-cycle residual", n, T::zero())?;
        level.a.mul_vec(x, &mut r)?;
        for (ri, &bi) in r.iter_mut().zip(b) {
            *ri = bi - *ri;
        }
        // b_c = R r
        let mut b_coarse = try_filled("AMG V-cycle coarse vector", n_coarse, T::zero())?;
        level.r.mul_vec(&r, &mut b_coarse)?;
        let mut x_coarse = try_filled("AMG V-cycle coarse vector", n_coarse, T::zero())?;
        self.cycle(l + 1, &b_coarse, &mut x_coarse)?;
        // x += P x_c
        level.p.mul_vec(&x_coarse, &mut r)?;
        for (xi, &ci) in x.iter_mut().zip(&r) {
            *xi += ci;
        }
        level
            .smoother
            .smooth_host(&level.a, b, x, self.options.post_sweeps, false, &mut work)
    }
}

#[cfg(test)]
mod tests {
    use super::super::options::{Coarsening, Smoother};
    use super::*;
    use crate::matrix::generate::Generator;
    use crate::matrix::spgemm::spgemm;

    fn dot(x: &[f64], y: &[f64]) -> f64 {
        x.iter().zip(y).map(|(a, b)| a * b).sum()
    }

    fn norm(x: &[f64]) -> f64 {
        dot(x, x).sqrt()
    }

    /// Preconditioned CG with the V-cycle, x0 = 0, b = A 1: iterations to ||r|| <= tol ||b||.
    fn pcg(a: &CsrMatrix<f64>, h: &Hierarchy<f64>, tol: f64, max_it: usize) -> usize {
        let n = a.n_rows();
        let mut b = vec![0.0; n];
        a.mul_vec(&vec![1.0; n], &mut b).unwrap();
        let mut x = vec![0.0; n];
        let mut r = b.clone();
        let mut z = vec![0.0; n];
        h.vcycle_host(&r, &mut z).unwrap();
        let mut p = z.clone();
        let mut rz = dot(&r, &z);
        let mut q = vec![0.0; n];
        let bnorm = norm(&b);
        for it in 1..=max_it {
            a.mul_vec(&p, &mut q).unwrap();
            let alpha = rz / dot(&p, &q);
            for i in 0..n {
                x[i] += alpha * p[i];
                r[i] -= alpha * q[i];
            }
            // The true residual decides.
            if norm(&r) <= tol * bnorm {
                let mut ax = vec![0.0; n];
                a.mul_vec(&x, &mut ax).unwrap();
                let true_res: f64 =
                    norm(&b.iter().zip(&ax).map(|(b, y)| b - y).collect::<Vec<_>>());
                if true_res <= tol * bnorm {
                    return it;
                }
            }
            h.vcycle_host(&r, &mut z).unwrap();
            let rz_next = dot(&r, &z);
            let beta = rz_next / rz;
            rz = rz_next;
            for i in 0..n {
                p[i] = z[i] + beta * p[i];
            }
        }
        usize::MAX
    }

    /// Residual reduction per cycle of the stationary iteration x += M (b - A x) (b = A 1,
    /// x0 = 0): the geometric mean of ||r_k+1|| / ||r_k|| over cycles `WARM_UP + 1 ..=
    /// WARM_UP + cycles`. The first cycles are left out: the initial error (all ones) is
    /// smooth and the first cycle removes 95-98% of it, which would hide the asymptotic factor.
    fn stationary_factor(a: &CsrMatrix<f64>, h: &Hierarchy<f64>, cycles: usize) -> f64 {
        const WARM_UP: usize = 2;
        let n = a.n_rows();
        let mut b = vec![0.0; n];
        a.mul_vec(&vec![1.0; n], &mut b).unwrap();
        let mut x = vec![0.0; n];
        let mut r = b.clone();
        let mut c = vec![0.0; n];
        let mut r_start = norm(&r);
        for cycle in 0..WARM_UP + cycles {
            if cycle == WARM_UP {
                r_start = norm(&r);
            }
            h.vcycle_host(&r, &mut c).unwrap();
            for i in 0..n {
                x[i] += c[i];
            }
            a.mul_vec(&x, &mut r).unwrap();
            for i in 0..n {
                r[i] = b[i] - r[i];
            }
        }
        (norm(&r) / r_start).powf(1.0 / cycles as f64)
    }

    fn describe(name: &str, h: &Hierarchy<f64>) -> String {
        let stats: Vec<String> = h
            .level_stats()
            .iter()
            .map(|s| format!("{}/{}", s.rows, s.nnz))
            .collect();
        format!(
            "{name}: {} levels (rows/nnz {}), operator complexity {:.3}, grid complexity {:.3}, \
             setup {:.3} s",
            h.num_levels(),
            stats.join(" "),
            h.operator_complexity(),
            h.grid_complexity(),
            h.setup_seconds()
        )
    }

    fn is_symmetric(m: &CsrMatrix<f64>) -> bool {
        let t = m.transpose();
        let scale = m.values().iter().fold(0.0f64, |s, v| s.max(v.abs()));
        t.row_ptr() == m.row_ptr()
            && t.col_idx() == m.col_idx()
            && t.values()
                .iter()
                .zip(m.values())
                .all(|(x, y)| (x - y).abs() <= 1e-13 * scale)
    }

    #[test]
    fn amg_galerkin_operators_are_symmetric_and_prolongators_have_no_zero_row() {
        for (gen, k, block) in [
            (Generator::Poisson2d, 40, 1),
            (Generator::Thermal2d, 24, 1),
            (Generator::Elasticity3d, 4, 3),
        ] {
            let a = gen.generate_with_param::<f64>(k).unwrap().matrix;
            for coarsening in [Coarsening::SmoothedAggregation, Coarsening::Aggregation] {
                let opts = AmgOptions {
                    coarse_size: 20,
                    coarsening,
                    block_size: block,
                    ..AmgOptions::default()
                };
                let h = Hierarchy::build(&a, &opts).unwrap();
                assert!(h.num_levels() >= 3, "{}", describe(gen.name(), &h));
                for (l, level) in h.levels().iter().enumerate() {
                    assert!(is_symmetric(level.a()), "{} level {l}", gen.name());
                    assert_eq!(level.r(), &level.p().transpose());
                    for i in 0..level.p().n_rows() {
                        assert!(!level.p().row(i).0.is_empty(), "level {l} row {i}");
                    }
                    // The next level is R A P (compared with a sequential dense-free product).
                    let next = h.levels().get(l + 1).map_or(h.coarsest().a(), |n| n.a());
                    let rap = spgemm(&spgemm(level.r(), level.a()).unwrap(), level.p()).unwrap();
                    let scale = rap.values().iter().fold(0.0f64, |s, v| s.max(v.abs()));
                    assert_eq!(rap.col_idx(), next.col_idx());
                    for (x, y) in rap.values().iter().zip(next.values()) {
                        assert!((x - y).abs() <= 1e-12 * scale);
                    }
                }
                assert!(is_symmetric(h.coarsest().a()));
            }
        }
    }

    #[test]
    fn amg_vcycle_is_symmetric() {
        let a = Generator::Poisson2d
            .generate_with_param::<f64>(33)
            .unwrap()
            .matrix;
        let n = a.n_rows();
        let u: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 101) as f64 / 50.0 - 1.0)
            .collect();
        let v: Vec<f64> = (0..n)
            .map(|i| ((i * 104729) % 97) as f64 / 48.0 - 1.0)
            .collect();
        for smoother in [
            Smoother::Jacobi,
            Smoother::L1Jacobi,
            Smoother::Chebyshev { degree: 3 },
        ] {
            for sweeps in [1, 2] {
                let opts = AmgOptions {
                    coarse_size: 30,
                    smoother,
                    pre_sweeps: sweeps,
                    post_sweeps: sweeps,
                    ..AmgOptions::default()
                };
                let h = Hierarchy::build(&a, &opts).unwrap();
                let (mut mu, mut mv) = (vec![0.0; n], vec![0.0; n]);
                h.vcycle_host(&u, &mut mu).unwrap();
                h.vcycle_host(&v, &mut mv).unwrap();
                let (x, y) = (dot(&u, &mv), dot(&mu, &v));
                assert!(
                    (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
                    "{smoother:?} x{sweeps}: {x} vs {y}"
                );
                // Positive definite on these vectors.
                assert!(dot(&u, &mu) > 0.0 && dot(&v, &mv) > 0.0);
            }
        }
    }

    #[test]
    fn amg_poisson_stationary_cycle_reduces_the_residual_below_0_3() {
        for (gen, k) in [(Generator::Poisson2d, 64), (Generator::Poisson3d, 20)] {
            let a = gen.generate_with_param::<f64>(k).unwrap().matrix;
            let mut report = Vec::new();
            for (label, smoother, sweeps) in [
                ("jacobi(1,1)", Smoother::Jacobi, 1),
                ("jacobi(2,2)", Smoother::Jacobi, 2),
                ("l1-jacobi(1,1)", Smoother::L1Jacobi, 1),
                ("chebyshev2(1,1)", Smoother::Chebyshev { degree: 2 }, 1),
                ("chebyshev3(1,1)", Smoother::Chebyshev { degree: 3 }, 1),
            ] {
                let opts = AmgOptions {
                    smoother,
                    pre_sweeps: sweeps,
                    post_sweeps: sweeps,
                    ..AmgOptions::default()
                };
                let h = Hierarchy::build(&a, &opts).unwrap();
                let factor = stationary_factor(&a, &h, 10);
                report.push((label, factor));
                if label == "jacobi(1,1)" {
                    println!("{}", describe(&format!("{} k={k}", gen.name()), &h));
                    assert!(
                        h.operator_complexity() <= 1.6,
                        "{}",
                        h.operator_complexity()
                    );
                }
            }
            println!("{} k={k}: stationary factors {report:?}", gen.name());
            // Chebyshev of degree 2, one sweep each side (two products with A per sweep, the
            // cost of Jacobi(2,2)): below 0.3.
            assert!(report[3].1 < 0.3, "{report:?}");
            // The default cycle, damped Jacobi(1,1), is a weaker stationary iteration (about
            // 0.45, see the module's report) but a good CG preconditioner: guard against
            // regressions only.
            assert!(report[0].1 < 0.55, "{report:?}");
        }
    }

    #[test]
    fn amg_pcg_converges_in_at_most_15_iterations_on_poisson() {
        for (gen, k) in [(Generator::Poisson2d, 128), (Generator::Poisson3d, 24)] {
            let a = gen.generate_with_param::<f64>(k).unwrap().matrix;
            let h = Hierarchy::build(&a, &AmgOptions::default()).unwrap();
            let its = pcg(&a, &h, 1e-8, 100);
            println!(
                "{}; PCG {its} iterations",
                describe(&format!("{} k={k}", gen.name()), &h)
            );
            assert!(its <= 15, "{its}");
        }
    }

    #[test]
    fn amg_f32_hierarchy_preconditions_cg() {
        let a = Generator::Poisson2d
            .generate_with_param::<f32>(48)
            .unwrap()
            .matrix;
        let h = Hierarchy::build(&a, &AmgOptions::default()).unwrap();
        let h64 = Hierarchy::build(&a.cast::<f64>(), &AmgOptions::default()).unwrap();
        assert_eq!(h.level_stats(), h64.level_stats());
        // Stationary iteration in f32 reaches 1e-4 (b = A 1, so the rounding floor of the
        // residual, eps ||A|| ||x||, is small against ||b||).
        let n = a.n_rows();
        let mut b = vec![0.0f32; n];
        a.mul_vec(&vec![1.0; n], &mut b).unwrap();
        let bnorm = b.iter().map(|v| v * v).sum::<f32>().sqrt();
        let mut x = vec![0.0f32; n];
        let mut r = b.clone();
        let mut c = vec![0.0f32; n];
        for _ in 0..12 {
            h.vcycle_host(&r, &mut c).unwrap();
            for i in 0..n {
                x[i] += c[i];
            }
            a.mul_vec(&x, &mut r).unwrap();
            for i in 0..n {
                r[i] = b[i] - r[i];
            }
        }
        let rel = r.iter().map(|v| v * v).sum::<f32>().sqrt() / bnorm;
        assert!(rel < 1e-4, "{rel}");
    }

    #[test]
    fn amg_bad_input_gives_typed_errors() {
        let d = AmgOptions::default();
        // Not square.
        let a = CsrMatrix::<f64>::from_triplets(2, 3, &[(0, 0, 1.0), (1, 1, 1.0)]).unwrap();
        assert!(matches!(
            Hierarchy::build(&a, &d),
            Err(Error::DimensionMismatch { .. })
        ));
        // Non-finite.
        let a = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, f64::NAN)]).unwrap();
        assert!(matches!(
            Hierarchy::build(&a, &d),
            Err(Error::NonFinite { index: 1, .. })
        ));
        // Zero (missing) and negative diagonal, named by row.
        let mut t = Vec::new();
        for i in 0..10 {
            if i != 6 {
                t.push((i, i, 2.0));
            }
            if i > 0 {
                t.push((i, i - 1, -1.0));
                t.push((i - 1, i, -1.0));
            }
        }
        let a = CsrMatrix::from_triplets(10, 10, &t).unwrap();
        match Hierarchy::build(&a, &d) {
            Err(Error::SingularPivot { block_row: 6, .. }) => {}
            other => panic!("{other:?}"),
        }
        let a = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, -1.0)]).unwrap();
        match Hierarchy::build(&a, &d) {
            Err(Error::NotApplicable { reason, .. }) => assert!(reason.contains("row 1")),
            other => panic!("{other:?}"),
        }
        // Block size not dividing n.
        let a = Generator::Poisson2d
            .generate_with_param::<f64>(5)
            .unwrap()
            .matrix;
        assert!(matches!(
            Hierarchy::build(&a, &AmgOptions { block_size: 2, ..d }),
            Err(Error::InvalidParameter { .. })
        ));
        // Bad options.
        assert!(Hierarchy::build(&a, &AmgOptions { strength: 2.0, ..d }).is_err());
        // A diagonal matrix does not coarsen (every node isolated).
        let t: Vec<_> = (0..5000).map(|i| (i, i, 1.0 + i as f64)).collect();
        let a = CsrMatrix::from_triplets(5000, 5000, &t).unwrap();
        match Hierarchy::build(
            &a,
            &AmgOptions {
                coarse_size: 10,
                ..d
            },
        ) {
            Err(Error::NotApplicable { reason, .. }) => {
                assert!(reason.contains("does not coarsen"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        // The 1D Neumann Laplacian: its nullspace reaches the coarsest level.
        let n = 200;
        let mut t = Vec::new();
        for i in 0..n {
            let deg = if i == 0 || i == n - 1 { 1.0 } else { 2.0 };
            t.push((i, i, deg));
            if i > 0 {
                t.push((i, i - 1, -1.0));
                t.push((i - 1, i, -1.0));
            }
        }
        let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
        assert!(matches!(
            Hierarchy::build(
                &a,
                &AmgOptions {
                    coarse_size: 10,
                    ..d
                }
            ),
            Err(Error::SingularPivot { .. })
        ));
    }

    #[test]
    fn amg_empty_and_tiny_matrices_build() {
        let d = AmgOptions::default();
        let empty = CsrMatrix::<f64>::new(0, 0, vec![0], vec![], vec![]).unwrap();
        let h = Hierarchy::build(&empty, &d).unwrap();
        assert_eq!(
            (h.n(), h.num_levels(), h.operator_complexity()),
            (0, 1, 1.0)
        );
        h.vcycle_host(&[], &mut []).unwrap();
        let one = CsrMatrix::from_triplets(1, 1, &[(0, 0, 4.0)]).unwrap();
        let h = Hierarchy::build(&one, &d).unwrap();
        let mut x = [0.0];
        h.vcycle_host(&[2.0], &mut x).unwrap();
        assert_eq!(x, [0.5]);
        assert!(h.vcycle_host(&[2.0, 1.0], &mut x).is_err());
        // max_levels = 1: a direct solve.
        let a = Generator::Poisson2d
            .generate_with_param::<f64>(10)
            .unwrap()
            .matrix;
        let h = Hierarchy::build(&a, &AmgOptions { max_levels: 1, ..d }).unwrap();
        assert_eq!(h.num_levels(), 1);
        let b = vec![1.0; 100];
        let mut x = vec![0.0; 100];
        h.vcycle_host(&b, &mut x).unwrap();
        let mut ax = vec![0.0; 100];
        a.mul_vec(&x, &mut ax).unwrap();
        assert!(ax.iter().all(|v| (v - 1.0).abs() < 1e-12));
    }

    #[test]
    fn amg_hierarchy_is_deterministic_across_thread_counts() {
        let a = Generator::Poisson3d
            .generate_with_param::<f64>(16)
            .unwrap()
            .matrix;
        let h1 = Hierarchy::build(&a, &AmgOptions::default()).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let h2 = pool
            .install(|| Hierarchy::build(&a, &AmgOptions::default()))
            .unwrap();
        // Bit for bit (not assert_eq!: the failure message would print whole matrices).
        assert!(h1.levels() == h2.levels());
        assert!(h1.coarsest() == h2.coarsest());
    }

    /// Not an assertion of targets: the counts on the harder generated problems, printed.
    #[test]
    fn amg_report_counts_on_the_generated_problem_families() {
        let cases = [
            (Generator::Poisson2d, 128, 1),
            (Generator::Poisson3d, 24, 1),
            (Generator::Jump3d, 24, 1),
            (Generator::Aniso2d, 64, 1),
            (Generator::Thermal2d, 64, 1),
            (Generator::Elasticity3d, 6, 3),
            (Generator::Elasticity3d, 6, 1),
            (Generator::Poisson3d, 48, 1),
            (Generator::Jump3d, 40, 1),
            (Generator::Elasticity3d, 10, 3),
        ];
        for (gen, k, block) in cases {
            let a = gen.generate_with_param::<f64>(k).unwrap().matrix;
            for (label, opts) in [
                (
                    "sa jacobi",
                    AmgOptions {
                        block_size: block,
                        ..AmgOptions::default()
                    },
                ),
                (
                    "sa jacobi(2,2)",
                    AmgOptions {
                        block_size: block,
                        pre_sweeps: 2,
                        post_sweeps: 2,
                        ..AmgOptions::default()
                    },
                ),
                (
                    "sa chebyshev2",
                    AmgOptions {
                        block_size: block,
                        smoother: Smoother::Chebyshev { degree: 2 },
                        ..AmgOptions::default()
                    },
                ),
                (
                    "sa chebyshev3",
                    AmgOptions {
                        block_size: block,
                        smoother: Smoother::Chebyshev { degree: 3 },
                        ..AmgOptions::default()
                    },
                ),
                (
                    "sa l1-jacobi",
                    AmgOptions {
                        block_size: block,
                        smoother: Smoother::L1Jacobi,
                        ..AmgOptions::default()
                    },
                ),
                (
                    "plain aggregation",
                    AmgOptions {
                        block_size: block,
                        coarsening: Coarsening::Aggregation,
                        ..AmgOptions::default()
                    },
                ),
            ] {
                match Hierarchy::build(&a, &opts) {
                    Ok(h) => {
                        let its = pcg(&a, &h, 1e-8, 500);
                        let factor = stationary_factor(&a, &h, 10);
                        println!(
                            "REPORT {} (block {block}) {label}: PCG {} its, stationary factor \
                             {factor:.3}; {}",
                            gen.name(),
                            if its == usize::MAX {
                                ">500".to_string()
                            } else {
                                its.to_string()
                            },
                            describe(&format!("k={k}"), &h)
                        );
                    }
                    Err(e) => println!("REPORT {} {label}: {e}", gen.name()),
                }
            }
        }
    }
}
