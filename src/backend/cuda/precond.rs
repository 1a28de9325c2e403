//! CUDA implementation of [`PrecondOps`] (`kernels-cu/precond.cu`).

use super::module::Kernel;
use super::{index_arg, len_arg, CudaBackend};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::partials::{Partials, Slot};
use crate::backend::PrecondOps;
use crate::error::Result;
use crate::scalar::Scalar;

impl PrecondOps for CudaBackend {
    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        let n = d.len();
        check_len("diag_scale: x length", x, n)?;
        check_len("diag_scale: y length", y, n)?;
        let args = [self.ptr(d)?, self.ptr(x)?, self.ptr(y)?, len_arg(n)?];
        // SAFETY: diag_scale(const SCALAR* d, const SCALAR* x, SCALAR* y, uint n): all three
        // hold n elements (checked).
        unsafe { self.launch::<T>(Kernel::DiagScale, self.grid(n), &args) }
    }

    fn diag_scale_dot<T: Scalar>(
        &self,
        d: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let n = d.len();
        check_len("diag_scale_dot: x length", x, n)?;
        check_len("diag_scale_dot: y length", y, n)?;
        partials.check(slot, n)?;
        let args = [
            self.ptr(d)?,
            self.ptr(x)?,
            self.ptr(y)?,
            len_arg(n)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", slot.0)?,
        ];
        // SAFETY: diag_scale_dot(d, x, y, uint n, partials, uint slot): vectors hold n
        // elements, the slot is inside the partials (checked), grid = groups.
        unsafe { self.launch::<T>(Kernel::DiagScaleDot, partials.groups(), &args) }
    }
}
