//! Solver parameters.

use crate::error::{Error, Result};

/// Pipelined (\[Rupp16\]'s fused algorithms) or classical (the BLAS-style baseline); `Auto`
/// (the default) picks one per solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Variant {
    /// Pipelined, except CG with a preconditioner that does not suit the pipelined
    /// recurrences ([`crate::precond::Preconditioner::suits_pipelined`]: AMG), which runs
    /// classical unless [`Execution::DeviceResident`] is asked for. A solver resolves it when it is set up or given new parameters, so its
    /// [`params`](crate::solver::Cg::params) and reports name the variant that runs.
    #[default]
    Auto,
    /// Fused kernels, one host transfer per iteration (Algorithms 2, 4, 6).
    Pipelined,
    /// One kernel per BLAS operation, one transfer per inner product (Algorithms 1, 3, 5).
    Classical,
}

impl Variant {
    /// Whether the pipelined algorithms run (`Auto` not resolved: yes).
    pub fn is_pipelined(self) -> bool {
        self != Variant::Classical
    }

    /// `Auto` resolved for a solver whose preconditioner suits the pipelined recurrences or
    /// not (`suits_pipelined`); the other variants as they are.
    pub fn resolve(self, suits_pipelined: bool) -> Variant {
        match self {
            Variant::Auto if suits_pipelined => Variant::Pipelined,
            Variant::Auto => Variant::Classical,
            v => v,
        }
    }
}

impl std::str::FromStr for Variant {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Variant::Auto),
            "pipelined" => Ok(Variant::Pipelined),
            "classical" => Ok(Variant::Classical),
            _ => Err(Error::param(
                "variant",
                format!("unknown variant '{s}' (auto, pipelined or classical)"),
            )),
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Variant::Auto => "auto",
            Variant::Pipelined => "pipelined",
            Variant::Classical => "classical",
        })
    }
}

/// Where the iterations of the pipelined solvers are driven from.
///
/// `Synchronous` is the paper's design: every iteration ends with one transfer of the partial
/// sums and the host computes alpha, beta (BiCGStab: and omega) and the stop test.
/// `DeviceResident` computes them on the device (every work-group of the CG and BiCGStab
/// updates finishes the sums itself), so the host enqueues batches of iterations ahead (CUDA:
/// recorded once as CUDA graphs and replayed) and reads back one small state array per batch; the iterates, residual history and stopping iteration are those
/// of the synchronous mode bit for bit (the host takes over at every iteration that is not
/// ordinary). `Auto` picks device-resident on a GPU with one rank and no monitor, synchronous
/// otherwise. A monitor callback forces the synchronous mode (it must see every iteration as it
/// happens). Pipelined GMRES with DCGS2 transfers nothing within a cycle in either mode and
/// stops at the exact step from the cycle's residual estimates; device-resident, each cycle's
/// steps are recorded once per step count and replayed (CUDA graphs; on the other backends the
/// two modes are the same), and a monitor (called at the cycle's end) does not change the mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Execution {
    /// Device-resident on a single GPU without a monitor (n up to
    /// [`Execution::auto_max_n`]) when the preconditioner suits it
    /// ([`crate::precond::Preconditioner::suits_device_resident`]: not AMG), synchronous
    /// otherwise.
    #[default]
    Auto,
    /// One host transfer per iteration (\[Rupp16\]).
    Synchronous,
    /// Scalars and stop test on the device, iterations enqueued ahead in batches.
    DeviceResident,
}

/// Largest system for which [`Execution::Auto`] picks the device-resident mode of CG. Measured
/// on the H200 as time to solution (tol 1e-8, `bench/results/auto-execution-final-*.csv`):
/// resident CG 1.05-2.3x faster than synchronous from 16K to 4.19M unknowns on CUDA and NVIDIA
/// OpenCL, once a short solve no longer records CUDA graphs and the batches stop near the
/// predicted convergence (before, 0.82x at 65K with 99 iterations and 0.99x at 4.1M); the limit
/// is the largest size measured.
pub const RESIDENT_AUTO_MAX_N: usize = 1 << 22;

/// Largest system for which [`Execution::Auto`] picks the device-resident mode of BiCGStab and
/// GMRES (measured on the H200 as above: BiCGStab 1.04-1.9x faster from 16K to 1.05M unknowns,
/// GMRES(30) 0.86-1.11x, on CUDA and NVIDIA OpenCL; the limit is the largest size measured).
pub const RESIDENT_AUTO_MAX_N_NONSYMMETRIC: usize = 1 << 20;

impl Execution {
    /// The largest system for which [`Execution::Auto`] picks the device-resident mode of
    /// `solver` ("cg", "bicgstab" or "gmres"; 0 for anything else).
    pub fn auto_max_n(solver: &str) -> usize {
        match solver {
            "cg" => RESIDENT_AUTO_MAX_N,
            "bicgstab" | "gmres" => RESIDENT_AUTO_MAX_N_NONSYMMETRIC,
            _ => 0,
        }
    }
}

impl std::str::FromStr for Execution {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "sync" | "synchronous" => Ok(Self::Synchronous),
            "resident" | "device-resident" => Ok(Self::DeviceResident),
            _ => Err(Error::param(
                "execution",
                format!("unknown execution '{s}' (auto, sync or resident)"),
            )),
        }
    }
}

impl std::fmt::Display for Execution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::Synchronous => "sync",
            Self::DeviceResident => "resident",
        })
    }
}

/// How the pipelined GMRES orthogonalizes (the classical variant is always Arnoldi with
/// modified Gram-Schmidt and Givens rotations, the textbook reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum GmresOrthogonalization {
    /// Arnoldi with classical Gram-Schmidt run twice (CGS2, "twice is enough": Giraud, Langou,
    /// Rozloznik and van den Eshof 2005) and Givens rotations on the host at the end of the
    /// cycle: as stable as MGS-GMRES, 6 kernels per step, no host transfer while
    /// orthogonalizing.
    Cgs2,
    /// Arnoldi with delayed CGS2 (DCGS2; Swirydowicz, Langou, Ananthan, Yang and Thomas 2020):
    /// the second Gram-Schmidt pass of v_{k-1} is done in the same pass over the basis as the
    /// first pass of the next vector, with A applied to the not yet reorthogonalized vector
    /// and H corrected on the host at the end of the cycle. 4 kernels and 2 passes over the basis per step, no transfer
    /// while orthogonalizing (the default).
    #[default]
    Dcgs2,
    /// The paper's "simpler GMRES" (\[Rupp16\] Algorithm 6, Walker and Zhou) with one pass of
    /// classical Gram-Schmidt: 4 kernels per step, only conditionally stable (Jiranek,
    /// Rozloznik and Gutknecht 2008).
    SimplerCgs,
}

impl std::str::FromStr for GmresOrthogonalization {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "cgs2" => Ok(Self::Cgs2),
            "dcgs2" => Ok(Self::Dcgs2),
            "simpler-cgs" => Ok(Self::SimplerCgs),
            _ => Err(Error::param(
                "gmres_orthogonalization",
                format!("unknown orthogonalization '{s}' (cgs2, dcgs2 or simpler-cgs)"),
            )),
        }
    }
}

impl std::fmt::Display for GmresOrthogonalization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Cgs2 => "cgs2",
            Self::Dcgs2 => "dcgs2",
            Self::SimplerCgs => "simpler-cgs",
        })
    }
}

/// GMRES's own parameters ([`Params::gmres`]; CG and BiCGStab ignore them).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct GmresParams {
    /// Restart length m, >= 1. Default 30. GMRES runs min(m, n, max_iter) steps per cycle (a
    /// longer basis cannot be used) and sizes its basis from that; the report's notes say when
    /// it capped m.
    pub restart: usize,
    /// Orthogonalization of the pipelined GMRES (the classical GMRES ignores it). Default
    /// [`GmresOrthogonalization::Dcgs2`].
    pub orthogonalization: GmresOrthogonalization,
}

impl Default for GmresParams {
    fn default() -> Self {
        Self {
            restart: 30,
            orthogonalization: GmresOrthogonalization::Dcgs2,
        }
    }
}

/// Parameters shared by all solvers, with GMRES's own in [`Params::gmres`].
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
    /// Relative tolerance (w.r.t. ||b||), in [0, 1). Default 1e-8.
    pub rtol: f64,
    /// Absolute tolerance, >= 0. Default 0 (the relative tolerance alone decides).
    pub atol: f64,
    /// Maximum number of iterations (Krylov steps for GMRES). Default 10,000.
    pub max_iter: usize,
    /// Divergence tolerance: stop when ||r|| > dtol ||r_0||. Default 1e5.
    pub dtol: f64,
    /// Pipelined, classical or chosen by the solver. Default [`Variant::Auto`].
    pub variant: Variant,
    /// GMRES's restart length and orthogonalization. Default [`GmresParams::default`]
    /// (restart 30, DCGS2).
    pub gmres: GmresParams,
    /// Synchronous or device-resident iterations (pipelined solvers; see [`Execution`]).
    /// Default [`Execution::Auto`].
    pub execution: Execution,
    /// Keep the residual history in the report. Default true.
    pub record_history: bool,
    /// Factor by which the true residual may miss the tolerance before the report flags loss of
    /// accuracy. Default 10.
    pub accuracy_factor: f64,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            rtol: 1e-8,
            atol: 0.0,
            max_iter: 10_000,
            dtol: 1e5,
            variant: Variant::Auto,
            gmres: GmresParams::default(),
            execution: Execution::Auto,
            record_history: true,
            accuracy_factor: 10.0,
        }
    }
}

impl Params {
    /// A hash of every parameter (the ranks of a distributed solve compare it: row 25).
    pub(crate) fn fingerprint(&self) -> u64 {
        crate::matrix::csr::fnv1a(format!("{self:?}").bytes().map(u64::from))
    }

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
        if self.gmres.restart == 0 {
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
