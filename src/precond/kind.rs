//! Run-time choice of a preconditioner (the CLI's `--precond`, `--trisolve`, `--block-size`,
//! `--subdomains`, `--isai-level`, `--ilu-*`).

use super::{
    AfsaiOptions, Amg, AmgOptions, Bilu0, Bilu0Options, BlockIsai, Factorization, Fsai,
    FsaiOptions, Ilu, IluOptions, IncompletePoisson, IpScaling, Jacobi, PointBlockJacobi,
    Preconditioner, TriangularSolve,
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
        match s {
            "none" => Ok(Self::None),
            "jacobi" => Ok(Self::Jacobi),
            "point-block-jacobi" => Ok(Self::PointBlockJacobi),
            "block-jacobi" => Ok(Self::BlockJacobi),
            "bilu0" => Ok(Self::Bilu0),
            "isai" => Ok(Self::Isai),
            "ip" => Ok(Self::Ip),
            "ip-matrix-free" => Ok(Self::IpMatrixFree),
            "fsai" => Ok(Self::Fsai),
            "afsai" => Ok(Self::Afsai),
            "amg" => Ok(Self::Amg),
            "ilu" => Ok(Self::Ilu),
            _ => Err(Error::param(
                "precond",
                format!(
                    "unknown preconditioner '{s}' (none, jacobi, point-block-jacobi, \
                     block-jacobi, bilu0, isai, ip, ip-matrix-free, fsai, afsai, amg or ilu)"
                ),
            )),
        }
    }
}

/// A preconditioner and its parameters, as chosen at run time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrecondSpec {
    /// Which one.
    pub kind: PrecondKind,
    /// Block size s (point-block Jacobi, block-Jacobi, BILU(0)).
    pub block_size: usize,
    /// Triangular solve (block-Jacobi, BILU(0); default [`TriangularSolve::Auto`]).
    pub solve: TriangularSolve,
    /// Subdomains P (block-Jacobi).
    pub subdomains: usize,
    /// Where the BILU(0) / block-Jacobi factors are computed.
    pub factorization: Factorization,
    /// Pattern level k of block-ISAI (1..=3).
    pub isai_level: usize,
    /// Device format of an assembled IP matrix.
    pub format: MatrixFormat,
    /// Scaling of the assembled IP (default [`IpScaling::Auto`]: the IP of D^-1/2 A D^-1/2
    /// where the diagonal varies).
    pub ip_scaling: IpScaling,
    /// The stencil of a generated problem (matrix-free IP needs it).
    pub stencil: Option<GridStencil>,
    /// FSAI pattern level and prefiltration.
    pub fsai: FsaiOptions,
    /// Adaptive FSAI growth parameters.
    pub afsai: AfsaiOptions,
    /// Algebraic multigrid parameters (its block size is [`PrecondSpec::block_size`]).
    pub amg: AmgOptions,
    /// The CSR kernel of the FSAI factors G and G^T ([`Fsai::with_factor_kernel`]; `Auto`:
    /// chosen from their row lengths by the setup).
    pub fsai_kernel: CsrKernel,
    /// Incomplete LU options (its triangular solve is [`PrecondSpec::solve`]).
    pub ilu: IluOptions,
}

impl Default for PrecondSpec {
    fn default() -> Self {
        Self {
            kind: PrecondKind::None,
            block_size: 1,
            solve: TriangularSolve::Auto,
            subdomains: 1,
            factorization: Factorization::Host,
            isai_level: 1,
            format: MatrixFormat::Csr,
            ip_scaling: IpScaling::Auto,
            stencil: None,
            fsai: FsaiOptions::default(),
            afsai: AfsaiOptions::default(),
            amg: AmgOptions::default(),
            fsai_kernel: CsrKernel::Auto,
            ilu: IluOptions::default(),
        }
    }
}

/// Build the preconditioner `spec` names for `a` on `backend` (`None` for
/// [`PrecondKind::None`]).
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
    let opts = Bilu0Options {
        block_size: spec.block_size,
        solve: spec.solve,
        subdomains: spec.subdomains,
        factorization: spec.factorization,
    };
    Ok(match spec.kind {
        PrecondKind::None => None,
        PrecondKind::Jacobi => Some(Box::new(Jacobi::new(backend, a)?)),
        PrecondKind::PointBlockJacobi => Some(Box::new(PointBlockJacobi::new(
            backend,
            a,
            spec.block_size,
        )?)),
        PrecondKind::BlockJacobi => {
            Some(Box::new(Bilu0::block_jacobi_on(backend, a, device, opts)?))
        }
        PrecondKind::Bilu0 => Some(Box::new(Bilu0::new_on(backend, a, device, opts)?)),
        PrecondKind::Isai => Some(Box::new(BlockIsai::new_on(
            backend,
            a,
            device,
            spec.block_size,
            spec.isai_level,
            spec.factorization,
        )?)),
        PrecondKind::Ip => Some(Box::new(IncompletePoisson::with_scaling(
            backend,
            a,
            device,
            spec.format,
            spec.ip_scaling,
        )?)),
        PrecondKind::IpMatrixFree => {
            let stencil = spec.stencil.ok_or_else(|| Error::NotApplicable {
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
        PrecondKind::Fsai => Some(Box::new(with_fsai_kernel(
            backend,
            Fsai::new_on(backend, a, device, spec.fsai)?,
            spec.fsai_kernel,
        )?)),
        PrecondKind::Afsai => Some(Box::new(with_fsai_kernel(
            backend,
            Fsai::adaptive_on(backend, a, device, spec.afsai)?,
            spec.fsai_kernel,
        )?)),
        PrecondKind::Amg => Some(Box::new(Amg::new_on(
            backend,
            a,
            device,
            AmgOptions {
                block_size: spec.block_size,
                ..spec.amg
            },
        )?)),
        PrecondKind::Ilu => Some(Box::new(Ilu::new(
            backend,
            a,
            IluOptions {
                solve: spec.solve,
                ..spec.ilu
            },
        )?)),
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
