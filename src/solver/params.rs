//! Solver parameters.

use crate::error::{Error, Result};

/// Pipelined (seed 001's fused algorithms, the default) or classical (the BLAS-style baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Variant {
    /// Fused kernels, one host transfer per iteration (Algorithms 2, 4, 6).
    #[default]
    Pipelined,
    /// One kernel per BLAS operation, one transfer per inner product (Algorithms 1, 3, 5).
    Classical,
}

impl std::str::FromStr for Variant {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "pipelined" => Ok(Variant::Pipelined),
            "classical" => Ok(Variant::Classical),
            _ => Err(Error::param(
                "variant",
                format!("unknown variant '{s}' (pipelined or classical)"),
            )),
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Variant::Pipelined => "pipelined",
            Variant::Classical => "classical",
        })
    }
}

/// Parameters shared by all solvers.
///
/// The solve stops when the residual norm satisfies `||r|| <= max(rtol ||b||, atol)`, after
/// `max_iter` iterations, or when `||r|| > dtol ||r_0||`.
///
/// ```
/// use pipekrylov::solver::Params;
/// let p = Params { rtol: 1e-10, ..Params::default() };
/// assert!(p.validate().is_ok());
/// assert!(Params { rtol: 1.5, ..p }.validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Params {
    /// Relative tolerance (w.r.t. ||b||), in [0, 1).
    pub rtol: f64,
    /// Absolute tolerance, >= 0.
    pub atol: f64,
    /// Maximum number of iterations (Krylov steps for GMRES).
    pub max_iter: usize,
    /// Divergence tolerance: stop when ||r|| > dtol ||r_0||.
    pub dtol: f64,
    /// GMRES restart length m (ignored by CG and BiCGStab), >= 1.
    pub restart: usize,
    /// Pipelined or classical.
    pub variant: Variant,
    /// Keep the residual history in the report.
    pub record_history: bool,
    /// Factor by which the true residual may miss the tolerance before the report flags loss of
    /// accuracy.
    pub accuracy_factor: f64,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            rtol: 1e-8,
            atol: 0.0,
            max_iter: 10_000,
            dtol: 1e5,
            restart: 30,
            variant: Variant::Pipelined,
            record_history: true,
            accuracy_factor: 10.0,
        }
    }
}

impl Params {
    /// Check every parameter's range (RELIABILITY.md row 11).
    pub fn validate(&self) -> Result<()> {
        if self.rtol.is_nan() || self.rtol < 0.0 || self.rtol >= 1.0 {
            return Err(Error::param("rtol", format!("{} not in [0, 1)", self.rtol)));
        }
        if !self.atol.is_finite() || self.atol < 0.0 {
            return Err(Error::param(
                "atol",
                format!("{} must be finite and >= 0", self.atol),
            ));
        }
        if self.restart == 0 {
            return Err(Error::param("restart", "must be at least 1"));
        }
        if self.dtol.is_nan() || self.dtol <= 1.0 {
            return Err(Error::param("dtol", format!("{} must be > 1", self.dtol)));
        }
        if self.accuracy_factor.is_nan() || self.accuracy_factor < 1.0 {
            return Err(Error::param("accuracy_factor", "must be >= 1"));
        }
        Ok(())
    }
}
