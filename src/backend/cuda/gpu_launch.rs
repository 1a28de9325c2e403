//! The CUDA backend as the runtime of the operations written once ([`GpuLaunch`]): the grids,
//! the typed launch, and the per-runtime answers (the CSR lanes and early starts, the tuning's
//! CUDA defaults).

use super::module::Kernel;
use super::{spmv, Arg, CudaBackend};
use crate::backend::launch::{GpuLaunch, KernelArg};
use crate::error::Result;
use crate::scalar::Precision;

impl GpuLaunch for CudaBackend {
    fn elementwise_groups(&self, n: usize) -> usize {
        self.grid(n)
    }

    fn reduction_groups(&self, n: usize) -> usize {
        self.groups_for(n)
    }

    fn work_group_size(&self) -> usize {
        self.block as usize
    }

    fn row_product_groups(&self, n: usize) -> usize {
        self.grid(n)
    }

    /// Only where the kernel's blocks and the next one's fit on separate multiprocessors: with
    /// the next kernel's blocks sharing the multiprocessors, GMRES(30)'s DCGS2 update was 2-3 us
    /// per iteration slower at n = 32K-65K (bench/log/, issue 15, 2026-11-27).
    fn starts_next_early(&self, groups: usize) -> bool {
        2 * groups <= self.state.device.multiprocessors
    }

    fn tuned_as_cuda(&self) -> bool {
        true
    }

    fn csr_lanes_and_early(
        &self,
        nnz: usize,
        rows: usize,
        uploaded: bool,
        may_start_next: bool,
    ) -> (u32, u32) {
        let tuning = self.tuning();
        (
            spmv::csr_lanes(tuning.csr_lanes, nnz, rows),
            spmv::early_bits(tuning, rows, uploaded, may_start_next),
        )
    }

    unsafe fn launch_kernel(
        &self,
        kernel: Kernel,
        precision: Precision,
        groups: usize,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        // Converted on the stack: this is every launch of the operations written once.
        crate::backend::launch::check_arg_count(kernel, args.len())?;
        let mut converted = [Arg::U32(0); crate::backend::launch::MAX_KERNEL_ARGS];
        for (out, a) in converted.iter_mut().zip(args) {
            *out = self.kernel_arg(a)?;
        }
        let args = &converted[..args.len()];
        // SAFETY: as for `GpuLaunch::launch_kernel`.
        match precision {
            Precision::F32 => unsafe { self.launch::<f32>(kernel, groups, args) },
            Precision::F64 => unsafe { self.launch::<f64>(kernel, groups, args) },
        }
    }
}
