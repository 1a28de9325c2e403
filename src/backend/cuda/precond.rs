//! CUDA's own parts of [`PrecondOps`]: the fused CSR update through the CUDA SpMV's launch plan
//! and the choice of the aFSAI growth kernel. Every other preconditioner kernel is launched
//! once for both runtimes (`ops/precond/launch.rs`).

use super::CudaBackend;
use crate::backend::buffer::Buffer;
use crate::backend::{AfsaiGrowKernel, AfsaiGrowth, CsrUpdate, DeviceMatrix, PrecondOps};
use crate::error::Result;
use crate::scalar::Scalar;

impl PrecondOps for CudaBackend {
    fn csr_update<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        update: CsrUpdate<'_, T>,
        out: &mut Buffer<T>,
        scratch: &mut Buffer<T>,
    ) -> Result<()> {
        if self.launch_csr_update(a, x, update, out)? {
            return Ok(());
        }
        crate::backend::ops::precond::reference::csr_update(self, a, x, update, out, scratch)
    }

    fn afsai_grow_kernel(&self, growth: &AfsaiGrowth, mean_row_len: f64) -> AfsaiGrowKernel {
        // Every block is a whole number of warps (WG a multiple of 32, at most 256: the team
        // kernel's shared memory stays under 48 KiB).
        AfsaiGrowKernel::choose(growth, true, mean_row_len, self.tuning().afsai_grow_kernel)
    }
}
