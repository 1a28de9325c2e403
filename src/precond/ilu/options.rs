//! The options of the `ilu` preconditioner (the CLI's `--ilu-*` flags) and the thresholds of
//! its automatic choices.

use crate::error::{Error, Result};
use crate::precond::TriangularSolve;

/// A row's diagonal is weak when |a_ii| < this times max_j |a_ij|; [`IluMatching::Auto`]
/// matches and scales when some row's is.
pub const WEAK_DIAGONAL: f64 = 0.1;

/// The automatic choice keeps ILU(0) only when its smallest pivot is at least this times its
/// row's largest entry ...
pub const STABLE_MIN_PIVOT: f64 = 1e-3;

/// ... its entries grow by at most this factor over the factored matrix's ...
pub const STABLE_MAX_GROWTH: f64 = 1e3;

/// ... and ||(L U)^-1 1||_inf, relative to the factored matrix's largest entry, stays below
/// this (else it factors by ILUT).
pub const STABLE_MAX_INVERSE: f64 = 1e6;

/// Default [`IluOptions::pivot_threshold`]: SuperLU's ILU default (`ILU_DiagPivotThresh`
/// 0.1), which SciPy's `spilu` runs.
pub const DEFAULT_PIVOT_THRESHOLD: f64 = 0.1;

/// Static pivoting and scaling before the factorization (`--ilu-matching`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IluMatching {
    /// The maximum-product matching with its scalings where some row's diagonal is zero or
    /// weak ([`WEAK_DIAGONAL`]), nothing otherwise.
    #[default]
    Auto,
    /// Always the maximum-product matching with its scalings.
    On,
    /// Neither permutation nor scaling.
    Off,
    /// Row and column equilibration only (no permutation): the cheap option.
    Equilibrate,
}

/// The symmetric ordering applied after the matching (`--ilu-ordering`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IluOrdering {
    /// Chosen at setup: [`IluOrdering::Amd`] after a matching (the matched zero-diagonal
    /// matrices: nnc1374 converges with AMD and not with RCM), else [`IluOrdering::Rcm`] (fast,
    /// and ILU(0) in RCM order beat AMD order on the others: olm500/olm1000 17 against 1-17
    /// iterations, 2D Poisson far fewer; the AMD here orders 3D problems of 100K unknowns in
    /// 0.4-0.5 s on a 2-core host, 2.6 s before it had supervariables).
    #[default]
    Auto,
    /// The matched matrix's order.
    None,
    /// Reverse Cuthill-McKee on the symmetrized pattern.
    Rcm,
    /// Approximate minimum degree on the symmetrized pattern (fill-reducing).
    Amd,
}

/// Options of [`super::Ilu`]. The factorization is ILU(k) when `fill_level` is given, ILUT
/// when `drop_tol` or `max_fill` is, else chosen: ILU(0) when it factors stably, ILUT with
/// SciPy's `spilu` defaults otherwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IluOptions {
    /// Matching and scaling (default [`IluMatching::Auto`]).
    pub matching: IluMatching,
    /// Ordering (default [`IluOrdering::Auto`]).
    pub ordering: IluOrdering,
    /// ILU(k) with this level of fill (`--ilu-fill k`).
    pub fill_level: Option<usize>,
    /// ILUT's drop tolerance (`--ilu-drop tau`; default [`super::DEFAULT_DROP_TOL`]).
    pub drop_tol: Option<f64>,
    /// ILUT's fill factor (`--ilu-max-fill p`; default [`super::DEFAULT_FILL_FACTOR`]).
    pub max_fill: Option<f64>,
    /// Replace tiny pivots by shifted values, counted in the report (`--ilu-shift`), instead
    /// of failing with [`Error::SingularPivot`].
    pub shift: bool,
    /// ILUT's column pivoting (`--ilu-pivot t`, ILUTP): row i pivots on its largest entry
    /// right of the diagonal when |u_ii| < t times it. In [0, 1]; 0 never pivots; default
    /// [`DEFAULT_PIVOT_THRESHOLD`]. ILU(k) does not pivot.
    pub pivot_threshold: f64,
    /// The triangular solves (set from the preconditioner spec's `--trisolve`).
    pub solve: TriangularSolve,
}

impl Default for IluOptions {
    fn default() -> Self {
        Self {
            matching: IluMatching::Auto,
            ordering: IluOrdering::Auto,
            fill_level: None,
            drop_tol: None,
            max_fill: None,
            shift: false,
            pivot_threshold: DEFAULT_PIVOT_THRESHOLD,
            solve: TriangularSolve::Auto,
        }
    }
}

impl std::fmt::Display for IluMatching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::On => "on",
            Self::Off => "off",
            Self::Equilibrate => "equilibrate",
        })
    }
}

impl std::str::FromStr for IluMatching {
    type Err = Error;
    /// `auto`, `on`, `off` or `equilibrate`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "on" => Ok(Self::On),
            "off" => Ok(Self::Off),
            "equilibrate" => Ok(Self::Equilibrate),
            _ => Err(Error::param(
                "ilu-matching",
                format!("'{s}' is not a matching (auto, on, off or equilibrate)"),
            )),
        }
    }
}

impl std::fmt::Display for IluOrdering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::None => "none",
            Self::Rcm => "rcm",
            Self::Amd => "amd",
        })
    }
}

impl std::str::FromStr for IluOrdering {
    type Err = Error;
    /// `auto`, `none`, `rcm` or `amd`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "none" => Ok(Self::None),
            "rcm" => Ok(Self::Rcm),
            "amd" => Ok(Self::Amd),
            _ => Err(Error::param(
                "ilu-ordering",
                format!("'{s}' is not an ordering (auto, none, rcm or amd)"),
            )),
        }
    }
}
