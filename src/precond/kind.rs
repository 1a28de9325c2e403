//! Run-time choice of a preconditioner: [`PrecondKind`] names one (the CLI's `--precond`),
//! [`PrecondSpec`] is one with its options (each variant carries exactly the options it reads).

use super::{
    AfsaiOptions, Amg, AmgOptions, Bilu0, Bilu0Options, BlockIsai, Factorization, Fsai,
    FsaiOptions, Ilu, IluOptions, IncompletePoisson, IpScaling, Jacobi, Narrowed, PointBlockJacobi,
    PrecondPrecision, Preconditioner, TriangularSolve,
};
use crate::backend::{Backend, CsrKernel, DeviceMatrix, MatrixFormat};
use crate::error::{Error, Result};
use crate::matrix::generate::GridStencil;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// Which preconditioner to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum PrecondKind {
    /// No preconditioner.
    #[default]
    None,
    /// Point Jacobi.
    Jacobi,
    /// Point-block Jacobi (inverted s x s diagonal blocks).
    PointBlockJacobi,
    /// Block-Jacobi over P subdomains, BILU(0) on each.
    BlockJacobi,
    /// BILU(0) of the whole matrix.
    Bilu0,
    /// Block-ISAI of the BILU(0) factors (two BSpMVs per application).
    Isai,
    /// Incomplete Poisson, assembled on A's pattern (one SpMV per application).
    Ip,
    /// Incomplete Poisson of a generated constant-coefficient stencil, matrix-free.
    IpMatrixFree,
    /// Static factored sparse approximate inverse G^T G (SPD matrices).
    Fsai,
    /// Adaptive FSAI: the pattern grown by the Kaporin gradient (SPD matrices).
    Afsai,
    /// Algebraic multigrid by smoothed aggregation, one V-cycle per application.
    Amg,
    /// Incomplete LU after a matching, scaling and ordering (ILU(0), ILU(k) or ILUT, chosen
    /// for matrices with zero or weak diagonals): [`Ilu`].
    Ilu,
}

impl PrecondKind {
    /// Every preconditioner, in the order the command line's help lists them.
    pub const ALL: [PrecondKind; 12] = [
        Self::None,
        Self::Jacobi,
        Self::PointBlockJacobi,
        Self::BlockJacobi,
        Self::Bilu0,
        Self::Isai,
        Self::Ip,
        Self::IpMatrixFree,
        Self::Fsai,
        Self::Afsai,
        Self::Amg,
        Self::Ilu,
    ];

    /// The name used on the command line and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Jacobi => "jacobi",
            Self::PointBlockJacobi => "point-block-jacobi",
            Self::BlockJacobi => "block-jacobi",
            Self::Bilu0 => "bilu0",
            Self::Isai => "isai",
            Self::Ip => "ip",
            Self::IpMatrixFree => "ip-matrix-free",
            Self::Fsai => "fsai",
            Self::Afsai => "afsai",
            Self::Amg => "amg",
            Self::Ilu => "ilu",
        }
    }
}

impl std::fmt::Display for PrecondKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for PrecondKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|k| k.name()).collect();
                Error::param(
                    "precond",
                    format!("unknown preconditioner '{s}' ({})", names.join(", ")),
                )
            })
    }
}

/// Options of block-ISAI ([`PrecondSpec::Isai`], [`BlockIsai::new_on`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IsaiOptions {
    /// Block size s of the BILU(0) factors (1..=8).
    pub block_size: usize,
    /// Pattern level k (1..=3): the inverses live on the patterns of (I+|L|)^k, (I+|U|)^k.
    pub level: usize,
    /// Where the BILU(0) factors are computed.
    pub factorization: Factorization,
}

impl Default for IsaiOptions {
    fn default() -> Self {
        Self {
            block_size: 1,
            level: 1,
            factorization: Factorization::Host,
        }
    }
}

/// Options of the assembled Incomplete Poisson ([`PrecondSpec::Ip`],
/// [`IncompletePoisson::with_scaling`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IpOptions {
    /// Device format of the assembled IP matrix (default CSR; the command line gives it the
    /// solver's format).
    pub format: MatrixFormat,
    /// Scaling (default [`IpScaling::Auto`]: the IP of D^-1/2 A D^-1/2 where the diagonal
    /// varies).
    pub scaling: IpScaling,
}

/// A preconditioner and exactly the options it reads, as chosen at run time:
/// `PrecondSpec::from(PrecondKind::Amg)` is AMG with its defaults, and
/// `PrecondSpec::Amg(AmgOptions { strength: 0.1, ..Default::default() })` names the options.
///
/// ```
/// use pipekrylov::precond::{Bilu0Options, PrecondKind, PrecondSpec, TriangularSolve};
/// let spec = PrecondSpec::Bilu0(Bilu0Options {
///     block_size: 3,
///     solve: TriangularSolve::Sweeps(2),
///     ..Default::default()
/// });
/// assert_eq!(spec.kind(), PrecondKind::Bilu0);
/// assert_eq!(spec.block_size(), Some(3));
/// // Another kind keeps the options the two share.
/// assert_eq!(spec.with_kind(PrecondKind::Amg).block_size(), Some(3));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub enum PrecondSpec {
    /// No preconditioner.
    #[default]
    None,
    /// Point Jacobi.
    Jacobi,
    /// Point-block Jacobi: the s x s diagonal blocks inverted.
    PointBlockJacobi {
        /// Block size s (1..=8).
        block_size: usize,
    },
    /// Block-Jacobi over `subdomains` parts, BILU(0) on each ([`Bilu0::block_jacobi_on`]).
    BlockJacobi(Bilu0Options),
    /// BILU(0) of the whole matrix ([`Bilu0::new_on`]).
    Bilu0(Bilu0Options),
    /// Block-ISAI of the BILU(0) factors.
    Isai(IsaiOptions),
    /// Incomplete Poisson assembled on A's pattern.
    Ip(IpOptions),
    /// Incomplete Poisson of a generated constant-coefficient stencil, matrix-free.
    IpMatrixFree {
        /// The stencil (`None`: building it is [`Error::NotApplicable`]; the command line
        /// sets it for its generated problems).
        stencil: Option<GridStencil>,
    },
    /// Static FSAI (SPD matrices).
    Fsai {
        /// Pattern level, prefiltration, setup precision.
        options: FsaiOptions,
        /// The CSR kernel of G and G^T (`Auto`: chosen from their row lengths).
        factor_kernel: CsrKernel,
    },
    /// Adaptive FSAI (SPD matrices).
    Afsai {
        /// The growth and setup options.
        options: AfsaiOptions,
        /// The CSR kernel of G and G^T (`Auto`: chosen from their row lengths).
        factor_kernel: CsrKernel,
    },
    /// Algebraic multigrid, one V-cycle per application.
    Amg(AmgOptions),
    /// Incomplete LU after a matching, scaling and ordering.
    Ilu(IluOptions),
}

impl From<PrecondKind> for PrecondSpec {
    /// The preconditioner `kind` with its default options.
    fn from(kind: PrecondKind) -> Self {
        match kind {
            PrecondKind::None => Self::None,
            PrecondKind::Jacobi => Self::Jacobi,
            PrecondKind::PointBlockJacobi => Self::PointBlockJacobi { block_size: 1 },
            PrecondKind::BlockJacobi => Self::BlockJacobi(Bilu0Options::default()),
            PrecondKind::Bilu0 => Self::Bilu0(Bilu0Options::default()),
            PrecondKind::Isai => Self::Isai(IsaiOptions::default()),
            PrecondKind::Ip => Self::Ip(IpOptions::default()),
            PrecondKind::IpMatrixFree => Self::IpMatrixFree { stencil: None },
            PrecondKind::Fsai => Self::Fsai {
                options: FsaiOptions::default(),
                factor_kernel: CsrKernel::Auto,
            },
            PrecondKind::Afsai => Self::Afsai {
                options: AfsaiOptions::default(),
                factor_kernel: CsrKernel::Auto,
            },
            PrecondKind::Amg => Self::Amg(AmgOptions::default()),
            PrecondKind::Ilu => Self::Ilu(IluOptions::default()),
        }
    }
}

impl PrecondSpec {
    /// Which preconditioner this is.
    pub fn kind(&self) -> PrecondKind {
        match self {
            Self::None => PrecondKind::None,
            Self::Jacobi => PrecondKind::Jacobi,
            Self::PointBlockJacobi { .. } => PrecondKind::PointBlockJacobi,
            Self::BlockJacobi(_) => PrecondKind::BlockJacobi,
            Self::Bilu0(_) => PrecondKind::Bilu0,
            Self::Isai(_) => PrecondKind::Isai,
            Self::Ip(_) => PrecondKind::Ip,
            Self::IpMatrixFree { .. } => PrecondKind::IpMatrixFree,
            Self::Fsai { .. } => PrecondKind::Fsai,
            Self::Afsai { .. } => PrecondKind::Afsai,
            Self::Amg(_) => PrecondKind::Amg,
            Self::Ilu(_) => PrecondKind::Ilu,
        }
    }

    /// The block size, for the preconditioners that have one.
    pub fn block_size(&self) -> Option<usize> {
        let mut copy = *self;
        copy.block_size_mut().copied()
    }

    /// The triangular solve (BILU(0), block-Jacobi, ILU).
    pub fn triangular_solve(&self) -> Option<TriangularSolve> {
        let mut copy = *self;
        copy.triangular_solve_mut().copied()
    }

    /// Where the BILU(0) factors are computed (BILU(0), block-Jacobi, block-ISAI).
    pub fn factorization(&self) -> Option<Factorization> {
        let mut copy = *self;
        copy.factorization_mut().copied()
    }

    /// The FSAI factors' CSR kernel (static and adaptive FSAI).
    pub fn factor_kernel(&self) -> Option<CsrKernel> {
        let mut copy = *self;
        copy.factor_kernel_mut().copied()
    }

    /// The block size's field, for the preconditioners that have one.
    pub fn block_size_mut(&mut self) -> Option<&mut usize> {
        match self {
            Self::PointBlockJacobi { block_size } => Some(block_size),
            Self::BlockJacobi(o) | Self::Bilu0(o) => Some(&mut o.block_size),
            Self::Isai(o) => Some(&mut o.block_size),
            Self::Amg(o) => Some(&mut o.block_size),
            _ => None,
        }
    }

    /// The triangular solve's field (BILU(0), block-Jacobi, ILU).
    pub fn triangular_solve_mut(&mut self) -> Option<&mut TriangularSolve> {
        match self {
            Self::BlockJacobi(o) | Self::Bilu0(o) => Some(&mut o.solve),
            Self::Ilu(o) => Some(&mut o.solve),
            _ => None,
        }
    }

    /// Where the BILU(0) factors are computed (BILU(0), block-Jacobi, block-ISAI).
    pub fn factorization_mut(&mut self) -> Option<&mut Factorization> {
        match self {
            Self::BlockJacobi(o) | Self::Bilu0(o) => Some(&mut o.factorization),
            Self::Isai(o) => Some(&mut o.factorization),
            _ => None,
        }
    }

    /// The FSAI factors' CSR kernel's field (static and adaptive FSAI).
    pub fn factor_kernel_mut(&mut self) -> Option<&mut CsrKernel> {
        match self {
            Self::Fsai { factor_kernel, .. } | Self::Afsai { factor_kernel, .. } => {
                Some(factor_kernel)
            }
            _ => None,
        }
    }

    /// The preconditioner `kind` with its defaults, except for the options it shares with
    /// this one (block size, triangular solve, factorization, FSAI kernel), which it keeps.
    pub fn with_kind(self, kind: PrecondKind) -> Self {
        let mut to = Self::from(kind);
        if let (Some(s), Some(t)) = (self.block_size(), to.block_size_mut()) {
            *t = s;
        }
        if let (Some(s), Some(t)) = (self.triangular_solve(), to.triangular_solve_mut()) {
            *t = s;
        }
        if let (Some(s), Some(t)) = (self.factorization(), to.factorization_mut()) {
            *t = s;
        }
        if let (Some(s), Some(t)) = (self.factor_kernel(), to.factor_kernel_mut()) {
            *t = s;
        }
        to
    }
}

/// Build the preconditioner `spec` names for `a` on `backend` (`None` for
/// [`PrecondSpec::None`]).
pub fn build<B: Backend + 'static, T: Scalar>(
    backend: &B,
    a: &CsrMatrix<T>,
    spec: PrecondSpec,
) -> Result<Option<Box<dyn Preconditioner<B, T>>>> {
    build_on(backend, a, None, spec)
}

/// [`build`] with the solver's device copy of `a`: preconditioners whose setup reads A on the
/// device in CSR (static and adaptive FSAI) use `device` instead of uploading their own copy
/// when it is a CSR upload of `a`.
pub fn build_on<B: Backend + 'static, T: Scalar>(
    backend: &B,
    a: &CsrMatrix<T>,
    device: Option<&DeviceMatrix<T>>,
    spec: PrecondSpec,
) -> Result<Option<Box<dyn Preconditioner<B, T>>>> {
    build_in(backend, a, device, spec, PrecondPrecision::Solve)
}

/// [`build_on`] in `precision`: [`PrecondPrecision::F32`] in a double-precision solve builds
/// AMG's single-precision hierarchy ([`AmgOptions::precision`]) and wraps every other
/// preconditioner, set up on `a` rounded to f32, in [`Narrowed`] (the device copy of `a` is
/// then not read). Errors: those of the setup; [`PrecondSpec::None`] with
/// [`PrecondPrecision::F32`] is [`Error::InvalidParameter`].
pub fn build_in<B: Backend + 'static, T: Scalar>(
    backend: &B,
    a: &CsrMatrix<T>,
    device: Option<&DeviceMatrix<T>>,
    spec: PrecondSpec,
    precision: PrecondPrecision,
) -> Result<Option<Box<dyn Preconditioner<B, T>>>> {
    if precision.narrows::<T>() {
        return match spec {
            PrecondSpec::None => Err(super::narrow::nothing_to_narrow()),
            PrecondSpec::Amg(options) => build_on(
                backend,
                a,
                device,
                PrecondSpec::Amg(AmgOptions {
                    precision: PrecondPrecision::F32,
                    ..options
                }),
            ),
            spec => Ok(Some(Box::new(Narrowed::<B, T>::new(backend, a, |a32| {
                build_on(backend, a32, None, spec)?.ok_or_else(|| {
                    Error::PreconditionerSetup("the f32 preconditioner was not built".into())
                })
            })?))),
        };
    }
    Ok(match spec {
        PrecondSpec::None => None,
        PrecondSpec::Jacobi => Some(Box::new(Jacobi::new(backend, a)?)),
        PrecondSpec::PointBlockJacobi { block_size } => {
            Some(Box::new(PointBlockJacobi::new(backend, a, block_size)?))
        }
        PrecondSpec::BlockJacobi(opts) => {
            Some(Box::new(Bilu0::block_jacobi_on(backend, a, device, opts)?))
        }
        PrecondSpec::Bilu0(opts) => Some(Box::new(Bilu0::new_on(backend, a, device, opts)?)),
        PrecondSpec::Isai(o) => Some(Box::new(BlockIsai::new_on(
            backend,
            a,
            device,
            o.block_size,
            o.level,
            o.factorization,
        )?)),
        PrecondSpec::Ip(o) => Some(Box::new(IncompletePoisson::with_scaling(
            backend, a, device, o.format, o.scaling,
        )?)),
        PrecondSpec::IpMatrixFree { stencil } => {
            let stencil = stencil.ok_or_else(|| Error::NotApplicable {
                preconditioner: "ip-matrix-free".into(),
                reason: "the problem is not a generated constant-coefficient stencil \
                         (poisson2d, poisson3d or aniso2d); use --precond ip"
                    .into(),
            })?;
            // The solver's CSR copy is checked on the device (one pass); otherwise the host
            // matrix on the host.
            match device {
                Some(d) if matches!(d.format(), crate::backend::DeviceFormat::Csr { .. }) => Some(
                    Box::new(IncompletePoisson::matrix_free_on(backend, d, &stencil)?),
                ),
                _ => Some(Box::new(IncompletePoisson::matrix_free_for(a, &stencil)?)),
            }
        }
        PrecondSpec::Fsai {
            options,
            factor_kernel,
        } => Some(Box::new(with_fsai_kernel(
            backend,
            Fsai::new_on(backend, a, device, options)?,
            factor_kernel,
        )?)),
        PrecondSpec::Afsai {
            options,
            factor_kernel,
        } => Some(Box::new(with_fsai_kernel(
            backend,
            Fsai::adaptive_on(backend, a, device, options)?,
            factor_kernel,
        )?)),
        PrecondSpec::Amg(options) => Some(Box::new(Amg::new_on(backend, a, device, options)?)),
        PrecondSpec::Ilu(options) => Some(Box::new(Ilu::new(backend, a, options)?)),
    })
}

/// `m` with its factors run by `kernel` when one is forced (the setup laid them out for the
/// automatic choice already).
fn with_fsai_kernel<B: Backend, T: Scalar>(
    backend: &B,
    m: Fsai<T>,
    kernel: CsrKernel,
) -> Result<Fsai<T>> {
    match kernel {
        CsrKernel::Auto => Ok(m),
        forced => m.with_factor_kernel(backend, forced),
    }
}
