//! Preconditioner kernels.

use super::krylov::KrylovOps;
use crate::backend::buffer::Buffer;
use crate::backend::partials::{Partials, Slot};
use crate::error::Result;
use crate::scalar::Scalar;
use enum_dispatch::enum_dispatch;

/// Kernels used by the preconditioners.
#[enum_dispatch]
pub trait PrecondOps: KrylovOps {
    /// Kernel `diag_scale` (Jacobi): y_i = d_i x_i.
    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()>;

    /// Kernel `diag_scale_dot`: y_i = d_i x_i with the partial <x, y> into `slot` (Jacobi
    /// applied inside pipelined PCG: q = M^-1 Ap and <Ap, q> in one pass).
    fn diag_scale_dot<T: Scalar>(
        &self,
        d: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        reference::diag_scale_dot(self, d, x, y, partials, slot)
    }
}

/// Default bodies of the fused preconditioner kernels.
pub mod reference {
    use super::*;

    /// `diag_scale_dot` as diag_scale and a dot.
    pub fn diag_scale_dot<B: PrecondOps + ?Sized, T: Scalar>(
        b: &B,
        d: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        b.diag_scale(d, x, y)?;
        b.dot_partials(x, y, partials, slot)
    }
}
