//! CUDA's own part of [`PrecondOps`]: the choice of the aFSAI growth kernel. Every
//! preconditioner kernel is launched once for both runtimes (`ops/precond/launch.rs`, the fused
//! CSR update `ops/spmv/launch.rs`).

use super::CudaBackend;
use crate::backend::{AfsaiGrowKernel, AfsaiGrowth, PrecondOps};

impl PrecondOps for CudaBackend {
    fn afsai_grow_kernel(&self, growth: &AfsaiGrowth, mean_row_len: f64) -> AfsaiGrowKernel {
        // Every block is a whole number of warps (WG a multiple of 32, at most 256: the team
        // kernel's shared memory stays under 48 KiB).
        AfsaiGrowKernel::choose(growth, true, mean_row_len, self.tuning().afsai_grow_kernel)
    }
}
