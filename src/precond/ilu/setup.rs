//! The host part of the `ilu` setup: matching and scaling, ordering, factorization (chosen or
//! given), and the record of every choice and where the time went.

use super::factors::IncompleteLu;
use super::iluk::{iluk, iluk_numeric, iluk_pattern, IlukPattern};
use super::ilut::{ilut, IlutParams, DEFAULT_DROP_TOL, DEFAULT_FILL_FACTOR};
use super::matching::{column_maxima, equilibrate, max_product_matching, weak_diagonal, Scaling};
use super::options::{
    IluMatching, IluOptions, IluOrdering, STABLE_MAX_GROWTH, STABLE_MAX_INVERSE, STABLE_MIN_PIVOT,
    WEAK_DIAGONAL,
};
use super::ordering::amd;
use crate::error::Result;
use crate::matrix::reorder::{rcm, Permutation};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use std::time::Instant;

/// Which incomplete factorization ran.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum IluFactorization {
    /// ILU(k) with this level of fill (k = 0: ILU(0)).
    Level(usize),
    /// ILUT with this drop tolerance and fill factor.
    Threshold {
        /// Drop tolerance tau.
        drop_tol: f64,
        /// Fill factor p.
        fill_factor: f64,
    },
}

impl std::fmt::Display for IluFactorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Level(0) => f.write_str("ilu0"),
            Self::Level(k) => write!(f, "iluk:{k}"),
            Self::Threshold {
                drop_tol,
                fill_factor,
            } => write!(f, "ilut:{drop_tol:e}:{fill_factor}"),
        }
    }
}

/// Every choice of the setup, the factors' size and quality, and where the time went.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IluReport {
    /// "max-product", "equilibration" or "none".
    pub matching: &'static str,
    /// Why (the option, or the weak rows found by `auto`).
    pub matching_reason: String,
    /// Rows of A whose diagonal is zero, missing or weak (|a_ii| < 0.1 max_j |a_ij|).
    pub weak_rows: usize,
    /// The smallest |a_ii| / max_j |a_ij| of A.
    pub smallest_diagonal_ratio: f64,
    /// The ordering applied after the matching.
    pub ordering: IluOrdering,
    /// The factorization that ran.
    pub factorization: IluFactorization,
    /// Why it was chosen (the option, or what ILU(0) met).
    pub factorization_reason: String,
    /// nnz(A).
    pub nnz_a: usize,
    /// nnz(L + U), the diagonal once.
    pub nnz_factors: usize,
    /// nnz(L + U) / nnz(A).
    pub fill_ratio: f64,
    /// Tiny pivots replaced by shifted values.
    pub shifted_pivots: usize,
    /// The smallest pivot relative to its row.
    pub smallest_pivot: f64,
    /// The factors' largest entry over the factored matrix's.
    pub growth: f64,
    /// ||(L U)^-1 1||_inf over the factored matrix's largest entry.
    pub inverse_estimate: f64,
    /// Seconds of the input checks and the matching / scaling.
    pub matching_seconds: f64,
    /// Seconds of the ordering (and the permuted copy).
    pub ordering_seconds: f64,
    /// Seconds of the factorization(s), including a rejected ILU(0).
    pub factorization_seconds: f64,
    /// Seconds of the level analysis and the operators' assembly (set by the preconditioner).
    pub analysis_seconds: f64,
    /// Seconds of the uploads (set by the preconditioner).
    pub upload_seconds: f64,
}

/// The host result of the setup: M^-1 = Dc Q (L U)^-1 Q^T P Dr, with `scaling` giving P, Dr,
/// Dc and `ordering` Q.
#[derive(Debug, Clone)]
pub struct IluHost {
    /// The matching's row permutation and scalings (identity and ones when none ran).
    pub scaling: Scaling,
    /// The symmetric ordering Q of the matched matrix.
    pub ordering: Permutation,
    /// The incomplete factors of Q^T P Dr A Dc Q.
    pub factors: IncompleteLu,
    /// The choices and timings.
    pub report: IluReport,
}

impl IluHost {
    /// Run the host setup for `a` with `opts`.
    ///
    /// Errors: [`crate::Error::DimensionMismatch`] for a matrix that is not square,
    /// [`crate::Error::NonFinite`] for NaN or infinity, [`crate::Error::SingularPivot`] for an
    /// empty row or column, a structurally singular matrix (when matching) and a tiny pivot
    /// (unless `opts.shift`), [`crate::Error::InvalidParameter`] for a negative drop
    /// tolerance or a fill factor that is not positive.
    pub fn new<T: Scalar>(a: &CsrMatrix<T>, opts: &IluOptions) -> Result<Self> {
        let t0 = Instant::now();
        let a = a.cast::<f64>();
        column_maxima(&a, "ilu")?;
        let n = a.n_rows();
        let (weak, smallest) = weak_diagonal(&a, WEAK_DIAGONAL);
        let weak_note = format!(
            "{weak} of {n} rows with |a_ii| < {WEAK_DIAGONAL} max_j |a_ij| (smallest ratio \
             {smallest:.2e})"
        );
        let (matching, matching_reason, scaling) = match opts.matching {
            IluMatching::Auto if weak > 0 => (
                "max-product",
                format!("auto: {weak_note}"),
                max_product_matching(&a)?,
            ),
            IluMatching::On => ("max-product", "requested".into(), max_product_matching(&a)?),
            IluMatching::Equilibrate => ("equilibration", "requested".into(), equilibrate(&a)?),
            IluMatching::Auto | IluMatching::Off => (
                "none",
                if opts.matching == IluMatching::Off {
                    "requested".into()
                } else {
                    format!("auto: no weak diagonal ({weak_note})")
                },
                Scaling {
                    row_of_col: (0..n).collect(),
                    row_scale: vec![1.0; n],
                    col_scale: vec![1.0; n],
                },
            ),
        };
        let matched = if matching == "none" {
            a.clone()
        } else {
            scaling.apply(&a)?
        };
        let matching_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let chosen = match opts.ordering {
            IluOrdering::Auto if matching == "none" => IluOrdering::Rcm,
            IluOrdering::Auto => IluOrdering::Amd,
            fixed => fixed,
        };
        let ordering = match chosen {
            IluOrdering::None | IluOrdering::Auto => Permutation::identity(n),
            IluOrdering::Rcm => rcm(&matched)?,
            IluOrdering::Amd => amd(&matched)?,
        };
        let m = if chosen == IluOrdering::None {
            matched
        } else {
            ordering.apply_symmetric(&matched)?
        };
        let ordering_seconds = t1.elapsed().as_secs_f64();
        let t2 = Instant::now();
        let (factorization, factorization_reason, factors) = factor(&m, opts)?;
        let factorization_seconds = t2.elapsed().as_secs_f64();
        let m_max = m.values().iter().fold(0.0f64, |x, v| x.max(v.abs()));
        let nnz_factors = factors.nnz();
        let report = IluReport {
            matching,
            matching_reason,
            weak_rows: weak,
            smallest_diagonal_ratio: smallest,
            ordering: chosen,
            factorization,
            factorization_reason,
            nnz_a: a.nnz(),
            nnz_factors,
            fill_ratio: nnz_factors as f64 / a.nnz().max(1) as f64,
            shifted_pivots: factors.shifted_pivots,
            smallest_pivot: factors.smallest_pivot,
            growth: factors.growth,
            inverse_estimate: factors.inverse_estimate() * m_max.max(f64::MIN_POSITIVE),
            matching_seconds,
            ordering_seconds,
            factorization_seconds,
            analysis_seconds: 0.0,
            upload_seconds: 0.0,
        };
        Ok(Self {
            scaling,
            ordering,
            factors,
            report,
        })
    }

    /// The operator applied before the triangular solves, Q^T P Dr, as a CSR matrix with one
    /// entry per row (row k: column `row_of_col[q(k)]`, value Dr of that row).
    pub fn left_operator(&self) -> Result<CsrMatrix<f64>> {
        let s = &self.scaling;
        let n = s.row_of_col.len();
        let cols: Vec<usize> = self
            .ordering
            .old_of_new()
            .iter()
            .map(|&q| s.row_of_col[q])
            .collect();
        let vals = cols.iter().map(|&r| s.row_scale[r]).collect();
        CsrMatrix::new(n, n, (0..=n).collect(), cols, vals)
    }

    /// The operator applied after them, Dc Q Qc, one entry per row (row i: column
    /// qc^-1(q^-1(i)), value Dc_i), Qc the factors' column order (ILUTP; else I).
    pub fn right_operator(&self) -> Result<CsrMatrix<f64>> {
        let n = self.scaling.col_scale.len();
        let mut cols = self.ordering.new_of_old().to_vec();
        if let Some(order) = &self.factors.column_order {
            let columns = Permutation::from_old_of_new(order.clone())?;
            for c in &mut cols {
                *c = columns.new_of_old()[*c];
            }
        }
        CsrMatrix::new(
            n,
            n,
            (0..=n).collect(),
            cols,
            self.scaling.col_scale.clone(),
        )
    }

    /// Whether the left and right operators are identities (no matching, scaling, ordering
    /// or column pivoting ran), so the application skips them.
    pub fn is_unpermuted(&self) -> bool {
        let s = &self.scaling;
        self.factors.column_order.is_none()
            && self
                .ordering
                .old_of_new()
                .iter()
                .enumerate()
                .all(|(i, &q)| i == q)
            && s.row_of_col.iter().enumerate().all(|(i, &r)| i == r)
            && s.row_scale.iter().chain(&s.col_scale).all(|&d| d == 1.0)
    }

    /// z = M^-1 r on the host, the reference of the device application.
    pub fn apply(&self, r: &[f64]) -> Result<Vec<f64>> {
        let n = r.len();
        let mut y = vec![0.0; n];
        self.left_operator()?.mul_vec(r, &mut y)?;
        let f = &self.factors.factors;
        for i in 0..n {
            let (a, b) = (f.l_row_ptr[i] as usize, f.l_row_ptr[i + 1] as usize);
            let s: f64 = (a..b)
                .map(|p| f.l_values[p] * y[f.l_col_idx[p] as usize])
                .sum();
            y[i] -= s;
        }
        for i in (0..n).rev() {
            let (a, b) = (f.u_row_ptr[i] as usize, f.u_row_ptr[i + 1] as usize);
            let s: f64 = (a..b)
                .map(|p| f.u_values[p] * y[f.u_col_idx[p] as usize])
                .sum();
            y[i] = (y[i] - s) * f.u_inv_diag[i];
        }
        let mut z = vec![0.0; n];
        self.right_operator()?.mul_vec(&y, &mut z)?;
        Ok(z)
    }
}

/// The factorization `opts` asks for, or the automatic choice, with its reason.
fn factor(
    m: &CsrMatrix<f64>,
    opts: &IluOptions,
) -> Result<(IluFactorization, String, IncompleteLu)> {
    let ilut_params = IlutParams {
        drop_tol: opts.drop_tol.unwrap_or(DEFAULT_DROP_TOL),
        fill_factor: opts.max_fill.unwrap_or(DEFAULT_FILL_FACTOR),
        shift: opts.shift,
        pivot_threshold: opts.pivot_threshold,
    };
    let threshold = IluFactorization::Threshold {
        drop_tol: ilut_params.drop_tol,
        fill_factor: ilut_params.fill_factor,
    };
    if let Some(k) = opts.fill_level {
        return Ok((
            IluFactorization::Level(k),
            "requested".into(),
            iluk(m, k, opts.shift)?,
        ));
    }
    if opts.drop_tol.is_some() || opts.max_fill.is_some() {
        return Ok((threshold, "requested".into(), ilut(m, ilut_params)?));
    }
    let m_max = m.values().iter().fold(0.0f64, |x, v| x.max(v.abs()));
    let why_not = match iluk(m, 0, false) {
        Err(e) => format!("ILU(0) failed: {e}"),
        Ok(f) => {
            let inverse = f.inverse_estimate() * m_max;
            if f.smallest_pivot < STABLE_MIN_PIVOT {
                format!(
                    "ILU(0) pivot {:.1e} of its row < {STABLE_MIN_PIVOT:e}",
                    f.smallest_pivot
                )
            } else if f.growth > STABLE_MAX_GROWTH {
                format!("ILU(0) growth {:.1e} > {STABLE_MAX_GROWTH:e}", f.growth)
            } else if inverse.is_nan() || inverse > STABLE_MAX_INVERSE {
                format!("ILU(0) ||(LU)^-1 1|| {inverse:.1e} > {STABLE_MAX_INVERSE:e}")
            } else {
                return Ok((
                    IluFactorization::Level(0),
                    format!(
                        "auto: ILU(0) is stable (smallest pivot {:.1e} of its row, growth \
                         {:.1e}, ||(LU)^-1 1|| {inverse:.1e})",
                        f.smallest_pivot, f.growth
                    ),
                    f,
                ));
            }
        }
    };
    let (f, shifted_after) = ilut_shifting(m, ilut_params)?;
    let reason = match shifted_after {
        None => format!("auto: ILUT, since {why_not}"),
        Some(row) => format!(
            "auto: ILUT, since {why_not}; ILUT met a tiny pivot in row {row}, so {} pivots \
             were shifted",
            f.shifted_pivots
        ),
    };
    Ok((threshold, reason, f))
}

/// ILUT as the automatic choice runs it: the tiny pivots that static pivoting leaves (the
/// complete LU of rajat19 and nnc1374 after the matching meets exact zeros) are shifted,
/// counted in the report, with the row of the first one (`Some`) when shifting was not asked
/// for; an explicit choice fails instead unless shifting was asked for.
fn ilut_shifting(m: &CsrMatrix<f64>, params: IlutParams) -> Result<(IncompleteLu, Option<usize>)> {
    match ilut(m, params) {
        Ok(f) => Ok((f, None)),
        Err(crate::error::Error::SingularPivot { block_row, .. }) if !params.shift => {
            let f = ilut(
                m,
                IlutParams {
                    shift: true,
                    ..params
                },
            )?;
            Ok((f, Some(block_row)))
        }
        Err(e) => Err(e),
    }
}

/// What a values-only refresh of `ilu` keeps from the first setup: the matching's
/// permutation and scalings, the ordering, the factorization chosen (and ILU(k)'s pattern once
/// computed), and the options.
#[derive(Debug, Clone)]
pub(crate) struct IluSymbolic {
    scaling: Option<Scaling>,
    ordering: Option<Permutation>,
    factorization: IluFactorization,
    /// Whether the automatic choice picked ILUT (then tiny pivots are shifted as there).
    automatic: bool,
    opts: IluOptions,
    /// ILU(k)'s pattern of the matched and ordered matrix (computed at the first refresh).
    pattern: Option<IlukPattern>,
    /// The column order of the first factors (ILUTP), kept by the refresh.
    columns: Option<Vec<usize>>,
}

impl IluSymbolic {
    /// The part of `host` (set up with `opts`) a refresh keeps.
    pub(crate) fn of(host: &IluHost, opts: &IluOptions) -> Self {
        let r = &host.report;
        Self {
            scaling: (r.matching != "none").then(|| host.scaling.clone()),
            ordering: (r.ordering != IluOrdering::None).then(|| host.ordering.clone()),
            factorization: r.factorization,
            automatic: r.factorization_reason.starts_with("auto"),
            opts: *opts,
            pattern: None,
            columns: host.factors.column_order.clone(),
        }
    }

    /// The factors of new values `a` (the first matrix's pattern) with the kept matching,
    /// scalings, ordering and factorization: ILU(k) on its kept pattern (numeric phase
    /// only); ILUT again, whose pattern follows the values.
    pub(crate) fn refactor<T: Scalar>(&mut self, a: &CsrMatrix<T>) -> Result<IncompleteLu> {
        let a = a.cast::<f64>();
        let matched = match &self.scaling {
            Some(s) => s.apply(&a)?,
            None => a,
        };
        let m = match &self.ordering {
            Some(q) => q.apply_symmetric(&matched)?,
            None => matched,
        };
        match self.factorization {
            IluFactorization::Level(k) => {
                if self.pattern.is_none() {
                    self.pattern = Some(iluk_pattern(&m, k)?);
                }
                let pattern = self.pattern.as_ref().ok_or_else(|| {
                    crate::error::Error::PreconditionerSetup("ILU(k): no pattern".into())
                })?;
                iluk_numeric(
                    &m,
                    pattern,
                    self.opts.shift,
                    if k == 0 { "ilu0" } else { "iluk" },
                )
            }
            IluFactorization::Threshold {
                drop_tol,
                fill_factor,
            } => {
                // The first factorization's column order is kept (the device's right operator
                // holds it): the new values are factored in it without pivoting.
                let m = match &self.columns {
                    Some(order) => {
                        Permutation::from_old_of_new(order.clone())?.apply_columns(&m)?
                    }
                    None => m,
                };
                let params = IlutParams {
                    drop_tol,
                    fill_factor,
                    shift: self.opts.shift,
                    pivot_threshold: 0.0,
                };
                let mut f = match self.automatic {
                    true => ilut_shifting(&m, params).map(|(f, _)| f),
                    false => ilut(&m, params),
                }?;
                f.column_order = self.columns.clone();
                Ok(f)
            }
        }
    }

    /// Whether refreshed factors keep the first factors' pattern (ILU(k)).
    pub(crate) fn keeps_factor_pattern(&self) -> bool {
        matches!(self.factorization, IluFactorization::Level(_))
    }

    /// What is kept, for reports.
    pub(crate) fn kept(&self) -> String {
        let mut parts = Vec::new();
        if self.scaling.is_some() {
            parts.push("the matching and its scalings");
        }
        if self.ordering.is_some() {
            parts.push("the ordering");
        }
        let factor = match self.factorization {
            IluFactorization::Level(_) => "the factors' pattern and levels",
            IluFactorization::Threshold { .. } => {
                "ILUT's parameters (its pattern follows the values)"
            }
        };
        parts.push(factor);
        parts.join(", ")
    }
}
