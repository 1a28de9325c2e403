//! CUDA's policy for the SpMV family (`kernels/spmv.kc`, launched once for both runtimes by
//! `ops/spmv/launch.rs`): the lanes per CSR row, the early starts of the CSR kernels, and the
//! grid of the partials of products with SELL and stream matrices.

use super::CudaBackend;
use crate::backend::matrix::{DeviceFormat, DeviceMatrix};
use crate::backend::SpmvOps;
use crate::scalar::Scalar;

/// Threads per CSR row: the largest power of two not above (mean nonzeros per row) / 6,
/// between 1 and 32. Measured on the H200 (pipelined CG, f64): rows of 5-7 entries run
/// fastest with one thread per row (Poisson 2D, n = 4.2M: 184 us per iteration against 314
/// with 4 threads), rows of 43 entries with 4-8 threads (elasticity 3D: 97-98 us against 153
/// with one and 171 with 32). The SpMV alone prefers more threads (mean / 3: 3D Poisson 115
/// against 127 us, elasticity 3D 56 against 74, `bench/results/spmv-sweeps-h200.csv`), but the
/// fused `spmv_dots` of CG does not: with mean / 3, CG at n = 4.1M took 242 us per iteration
/// on 3D Poisson (202 with mean / 6) and 737 on the 27-point stencil (590), so the rule stays
/// (`bench/results/poisson3d-lanes2-h200.csv`, `irregular-*-csr-sorted-h200.csv`).
/// `forced` (the tuning's [`csr_lanes`](crate::backend::tuning::Tuning::csr_lanes)) replaces
/// the rule.
pub(crate) fn csr_lanes(forced: Option<u32>, nnz: usize, rows: usize) -> u32 {
    if let Some(k) = forced {
        return k;
    }
    if rows == 0 {
        return 1;
    }
    let per_thread = (nnz / rows / 6).clamp(1, 32);
    1u32 << (usize::BITS - 1 - per_thread.leading_zeros())
}

/// `EARLY_MATRIX` of the `early` argument of the CSR kernels (`kernels/spmv.kc`).
const EARLY_MATRIX: u32 = 1;
/// `EARLY_NEXT` of the `early` argument.
const EARLY_NEXT: u32 = 2;

/// Most rows of a product that starts its next kernel early (`EARLY_NEXT`). Measured on the H200
/// (bench/log/, issue 15, 2026-11-25 (h)): the early start gained 0.4-1.1 us per BiCGStab
/// iteration up to 65K unknowns and cost pipelined CG 1.6-1.8% per iteration at 1M and 4.19M,
/// where the products fill the device.
const EARLY_NEXT_MAX_ROWS: usize = 1 << 17;

/// The `early` argument of a CSR kernel reading a matrix of `rows` rows (see the tuning's
/// [`cuda_early_start`](crate::backend::tuning::Tuning::cuda_early_start)): its first rows read
/// before the wait when the matrix was uploaded (`uploaded`, level 2 and up), and, for a product
/// that may start the next kernel early (`may_start_next`), that at level 3 up to
/// [`EARLY_NEXT_MAX_ROWS`] rows.
pub(crate) fn early_bits(
    tuning: &crate::backend::tuning::Tuning,
    rows: usize,
    uploaded: bool,
    may_start_next: bool,
) -> u32 {
    let level = tuning.early_start_level();
    let matrix = if uploaded && level >= 2 {
        EARLY_MATRIX
    } else {
        0
    };
    let next = if may_start_next && level >= 3 && rows <= EARLY_NEXT_MAX_ROWS {
        EARLY_NEXT
    } else {
        0
    };
    matrix | next
}

impl SpmvOps for CudaBackend {
    /// SELL: a full-occupancy grid (every SM full of blocks) instead of the reduction plan's 4
    /// blocks per SM. Measured on the H200 with every partials buffer at 8 blocks per SM
    /// (`bench/results/groups-sell-h200.csv`, SELL-32-256, n = 4.1M): CG on the 27-point
    /// stencil 478 us per iteration against 594, BiCGStab 949 against 1155, 3D Poisson CG 204
    /// against 244; CSR did not gain (3D Poisson CG 215 against 196, `groups-h200.csv`) and
    /// GMRES lost (its kernels sum the partials in every block), so only the partials of
    /// products with SELL matrices (CG, BiCGStab) get the larger grid.
    ///
    /// The CSR stream kernel gets the full-occupancy grid too (its blocks wait on a barrier
    /// between staging and summing, and 4 blocks per SM leave the loads' latency exposed): on
    /// the H200 (`bench/results/stream-grid-h200.csv`, n = 4.1M) CG took 543 against 825 us
    /// per iteration on the 27-point stencil and 661 against 749 on the power-law matrix.
    fn spmv_reduction_groups<T: Scalar>(&self, a: &DeviceMatrix<T>) -> usize {
        match a.format() {
            DeviceFormat::Sell { .. } => self.grid(a.n_rows()),
            DeviceFormat::Csr {
                row_blocks: Some(blocks),
                ..
            } => self.grid(blocks.n_blocks.saturating_mul(self.block as usize)),
            _ => self.groups_for(a.n_rows()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::csr_lanes;

    #[test]
    fn lanes_follow_the_mean_row_length() {
        assert_eq!(csr_lanes(None, 0, 0), 1);
        assert_eq!(csr_lanes(None, 0, 10), 1);
        assert_eq!(csr_lanes(None, 50, 10), 1);
        assert_eq!(csr_lanes(None, 70, 10), 1);
        assert_eq!(csr_lanes(None, 120, 10), 2);
        assert_eq!(csr_lanes(None, 435, 10), 4);
        assert_eq!(csr_lanes(None, 810, 10), 8);
        assert_eq!(csr_lanes(None, 10_000, 10), 32);
    }
}
