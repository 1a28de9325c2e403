//! OpenCL's own parts of [`KrylovOps`]: the coefficient transfer of `multi_axpy` and which
//! matrices and columns the fused DCGS2 product takes. Every operation of the family is
//! launched once for both runtimes (`ops/krylov/launch.rs`, the products `ops/spmv/launch.rs`).

use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::launch::{BufferArg, GpuRuntime, KernelArg};
use crate::backend::matrix::DeviceMatrix;
use crate::backend::ops::checks;
use crate::backend::ops::krylov::launch;
use crate::backend::{Basis, KrylovOps};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

impl KrylovOps for OpenClBackend {
    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()> {
        checks::multi_axpy(y, basis, &cols, coeffs)?;
        // The lock is held from the upload to the enqueue, so concurrent callers cannot
        // overwrite coefficients a queued kernel has not read yet (the queue is in order).
        let mut guard = self.coeffs.lock().unwrap_or_else(|p| p.into_inner());
        let cbuf = self.upload_coefficients(&mut guard, coeffs)?;
        // SAFETY: the coefficient buffer holds the cols.len() coefficients just written, in
        // queue order before the launch.
        unsafe {
            launch::launch_multi_axpy(
                &GpuRuntime(self),
                y,
                basis,
                cols,
                KernelArg::Buffer(BufferArg::OpenCl(cbuf)),
            )
        }
    }

    fn fuses_dcgs2_spmv_dots<T: Scalar>(&self, a: &DeviceMatrix<T>, ucol: usize) -> bool {
        // CSR: any number of columns (in chunks). SELL: one pass of the group's teams (4
        // columns per team of 32), the sorted positions of a group's tile hold its rows, and
        // only when asked for (measured slower than the two kernels on NVIDIA OpenCL).
        a.plain_csr().is_some()
            || (ucol <= 4 * (self.wg / 32).max(1)
                && a.sell_rows_within_tiles(self.wg)
                && self.tuning().dcgs2_sell_fused_for(false))
    }
}
