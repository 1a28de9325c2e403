//! OpenCL's policy for the SpMV family (`kernels/spmv.kc`, launched once for both runtimes by
//! `ops/spmv/launch.rs`): the work-items per CSR row, whether the stream kernel may be chosen,
//! and the grids of the products.

use super::OpenClBackend;
use crate::backend::matrix::{DeviceFormat, DeviceMatrix};
use crate::backend::SpmvOps;
use crate::scalar::Scalar;
use std::sync::atomic::Ordering;

impl OpenClBackend {
    /// Work-items per CSR row: 1 on CPUs; on GPUs the largest power of two not above
    /// mean-nonzeros-per-row / 8, between 1 and min(32, WG). Measured on the H200 (NVIDIA
    /// OpenCL): one work-item per row wins clearly up to ~15 nonzeros per row (2D/3D Poisson:
    /// 1.6x faster than 4 lanes, the barriers of the lane reduction cost more than the
    /// uncoalesced reads); 3D elasticity (~43 per row) is fastest with 4 lanes.
    pub(super) fn csr_lanes(&self, nnz: usize, rows: usize) -> u32 {
        let forced = self.csr_lanes_override.load(Ordering::Relaxed);
        if forced != 0 {
            return forced;
        }
        if !self.is_gpu() || rows == 0 {
            return 1;
        }
        if let Some(k) = self.tuning().csr_lanes {
            return k.min(self.work_group_size() as u32);
        }
        let k = (nnz / rows / 8).max(1);
        let pow = 1usize << (usize::BITS - 1 - k.leading_zeros());
        pow.min(32).min(self.work_group_size()) as u32
    }
}

impl SpmvOps for OpenClBackend {
    fn auto_csr_stream(&self) -> bool {
        self.is_gpu()
    }

    /// SELL on GPUs: the element-wise grid (8 groups per compute unit) instead of the
    /// reduction plan's 4, as on CUDA (measured on the H200 with NVIDIA OpenCL,
    /// `bench/results/groups-sell-h200.csv`: CG on the 27-point stencil, SELL-32-256, n = 4.1M,
    /// 488 us per iteration against 627). CPUs keep the reduction plan.
    ///
    /// The CSR stream kernel gets the element-wise grid over its row blocks too (as on CUDA;
    /// NVIDIA OpenCL on the H200, `bench/results/stream-grid-h200.csv`: CG on the 27-point
    /// stencil 468 against 631 us per iteration, power-law 808 against 837).
    ///
    /// Products that write no partials (the plain SpMV, the residual) use the same grid. SELL's
    /// plain product ran on the reduction plan until 2026-11-24 (i): on the H200 its SpMV alone
    /// took 534 us on the 27-point stencil at n = 4.1M, 366 on this grid (CUDA: 342).
    ///
    /// Plain CSR gets the reduction plan over its rows times their lanes. It had the plan over
    /// its rows alone until 2026-11-30: a matrix of long rows ran on a few groups (AMG's
    /// coarsest level, 479 dense rows of 32 lanes each, on 2 work-groups: 251 us against CUDA's
    /// 8 per product). The element-wise grid over rows times lanes (CUDA's `grid(work)`) was as
    /// fast on AMG's coarse levels but 3-7% slower per CG + AMG iteration at 16.8M, where the
    /// finest products (one lane) got twice the groups (`bench/log/2026-11-30-amg-jacobi-weight.md`).
    fn spmv_reduction_groups<T: Scalar>(&self, a: &DeviceMatrix<T>) -> usize {
        match a.format() {
            DeviceFormat::Sell { .. } => self.elementwise_groups(a.n_rows()),
            DeviceFormat::Csr {
                row_blocks: Some(blocks),
                ..
            } => self.elementwise_groups(blocks.n_blocks.saturating_mul(self.wg)),
            DeviceFormat::Csr { .. } => self.groups_for(
                a.n_rows()
                    .saturating_mul(self.csr_lanes(a.nnz(), a.n_rows()) as usize),
            ),
            _ => self.groups_for(a.n_rows()),
        }
    }
}
