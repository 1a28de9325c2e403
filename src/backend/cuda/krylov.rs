//! CUDA's own parts of [`KrylovOps`]: the coefficient transfer of `multi_axpy` and which
//! matrices and columns the fused DCGS2 product takes. Every operation of the family is
//! launched once for both runtimes (`ops/krylov/launch.rs`, the products `ops/spmv/launch.rs`).

use super::CudaBackend;
use crate::backend::buffer::Buffer;
use crate::backend::launch::{BufferArg, GpuRuntime, KernelArg};
use crate::backend::matrix::DeviceMatrix;
use crate::backend::ops::checks;
use crate::backend::ops::krylov::launch;
use crate::backend::{Basis, KrylovOps};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

impl KrylovOps for CudaBackend {
    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()> {
        checks::multi_axpy(y, basis, &cols, coeffs)?;
        self.check_alive()?;
        if coeffs.is_empty() {
            // SAFETY: no column, so the kernel reads no coefficient (the basis stands in).
            return unsafe {
                launch::launch_multi_axpy(
                    &GpuRuntime(self),
                    y,
                    basis,
                    cols,
                    KernelArg::buffer(basis.buffer()),
                )
            };
        }
        self.with_coefficients(coeffs, |c| {
            // SAFETY: the coefficient buffer holds the cols.len() coefficients copied just
            // before on the same stream, and stays locked until the launch is enqueued.
            unsafe {
                launch::launch_multi_axpy(
                    &GpuRuntime(self),
                    y,
                    basis,
                    cols,
                    KernelArg::Buffer(BufferArg::Cuda(c)),
                )
            }
        })
    }

    fn fuses_dcgs2_spmv_dots<T: Scalar>(&self, a: &DeviceMatrix<T>, ucol: usize) -> bool {
        // The kernels' warps take every column in one pass: 4 per warp. SELL: the sorted
        // positions of a block's tile hold its rows.
        let block = self.block as usize;
        ucol <= 4 * (block / 32)
            && (a.plain_csr().is_some()
                || (a.sell_rows_within_tiles(block) && self.tuning().dcgs2_sell_fused_for(true)))
    }
}
