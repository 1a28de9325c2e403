//! OpenCL's own parts of [`PrecondOps`]: the choice of the aFSAI growth kernel and the
//! local-memory check of its team kernel. Every preconditioner kernel is launched once for both
//! runtimes (`ops/precond/launch.rs`, the fused CSR update `ops/spmv/launch.rs`).

use super::program::afsai_team_local_bytes;
use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::launch::GpuRuntime;
use crate::backend::{AfsaiGrowKernel, AfsaiGrowth, DeviceMatrix, PrecondOps};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

impl PrecondOps for OpenClBackend {
    fn afsai_grow_kernel(&self, growth: &AfsaiGrowth, mean_row_len: f64) -> AfsaiGrowKernel {
        // The team kernel needs work-groups of whole teams and its local arrays in the
        // device's local memory (sized for f64, the larger precision).
        // GPUs only: a CPU device runs a team's work-items one after another, a barrier per
        // merge round (the tests still run the team kernel there when they name it).
        let team_allowed = self.device.is_gpu
            && super::program::afsai_team_fits(
                self.wg,
                crate::scalar::Precision::F64,
                self.device.local_mem_bytes,
            );
        AfsaiGrowKernel::choose(
            growth,
            team_allowed,
            mean_row_len,
            self.tuning().afsai_grow_kernel,
        )
    }

    fn afsai_grow<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        growth: AfsaiGrowth,
        kernel: AfsaiGrowKernel,
        rows: Range<usize>,
        scratch: &mut Buffer<T>,
        iscratch: &mut Buffer<u32>,
        out_cols: &mut Buffer<u32>,
        out_len: &mut Buffer<u32>,
    ) -> Result<()> {
        // The team kernel's local arrays must fit the device's local memory (on CUDA they
        // always do).
        if kernel == AfsaiGrowKernel::Team
            && !super::program::afsai_team_fits(self.wg, T::PRECISION, self.device.local_mem_bytes)
        {
            return Err(crate::error::Error::Unsupported(format!(
                "afsai_grow_team needs work-groups of whole 32-wide teams and {} bytes of local \
                 memory (work-group {}, {} bytes)",
                afsai_team_local_bytes(self.wg, std::mem::size_of::<T>()),
                self.wg,
                self.device.local_mem_bytes
            )));
        }
        crate::backend::ops::precond::launch::afsai_grow(
            &GpuRuntime(self),
            a,
            growth,
            kernel,
            rows,
            scratch,
            iscratch,
            out_cols,
            out_len,
        )
    }
}
