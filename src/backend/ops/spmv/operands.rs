//! What the products take besides the matrix and the vectors: the inner products fused into a
//! SpMV, the update fused into `csr_update`, and the checks of their shapes (shared by the
//! launches of `launch.rs` and the other ops families).

use crate::backend::buffer::{check_len, Buffer};
use crate::backend::matrix::DeviceMatrix;
use crate::backend::partials::Slot;
use crate::error::Result;
use crate::scalar::Scalar;

/// Which first-stage inner products a fused SpMV computes on its result `y = A x`.
///
/// `yy` asks for <y, y>; each `with` entry asks for <y, v> with another vector `v` (which may
/// be `x` itself).
#[derive(Debug, Clone, Copy, Default)]
pub struct SpmvDots<'a, T> {
    /// Slot for <y, y>.
    pub yy: Option<Slot>,
    /// Slots for <y, v> with up to two other vectors.
    pub with: [Option<(&'a Buffer<T>, Slot)>; 2],
}

impl<'a, T> SpmvDots<'a, T> {
    /// No inner products.
    pub fn none() -> Self {
        Self {
            yy: None,
            with: [None, None],
        }
    }
}

/// Check the shapes of `y = A x`.
pub(crate) fn check_spmv<T: Scalar>(
    a: &DeviceMatrix<T>,
    x: &Buffer<T>,
    y: &Buffer<T>,
) -> Result<()> {
    check_len("x length vs matrix columns", x, a.n_cols())?;
    check_len("y length vs matrix rows", y, a.n_rows())
}

/// What [`PrecondOps::csr_update`](crate::backend::PrecondOps::csr_update) computes.
#[derive(Clone, Copy)]
pub enum CsrUpdate<'a, T> {
    /// `out = x + s .* (b - A x)`.
    Sweep {
        /// The right-hand side.
        b: &'a Buffer<T>,
        /// The scaled inverse diagonal.
        s: &'a Buffer<T>,
    },
    /// `out = base + A x`, `base` `None`: `out` itself.
    Add {
        /// The vector added to (not `x`).
        base: Option<&'a Buffer<T>>,
    },
}

/// Check the shapes of [`PrecondOps::csr_update`](crate::backend::PrecondOps::csr_update).
pub(crate) fn check_csr_update<T: Scalar>(
    a: &DeviceMatrix<T>,
    x: &Buffer<T>,
    update: CsrUpdate<'_, T>,
    out: &Buffer<T>,
) -> Result<()> {
    check_spmv(a, x, out)?;
    match update {
        CsrUpdate::Sweep { b, s } => {
            check_len("update: b length vs matrix rows", b, a.n_rows())?;
            check_len("update: s length vs matrix rows", s, a.n_rows())
        }
        CsrUpdate::Add { base: Some(base) } => {
            check_len("update: base length vs matrix rows", base, a.n_rows())
        }
        CsrUpdate::Add { base: None } => Ok(()),
    }
}
