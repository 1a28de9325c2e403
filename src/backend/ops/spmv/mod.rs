//! Sparse matrix-vector products, plain and fused with the first stage of inner products.

use super::vector::VectorOps;
use crate::backend::buffer::Buffer;
use crate::backend::launch::launch_or_reference;
use crate::backend::long_rows::LongRowPlan;
use crate::backend::matrix::{
    finite_matrix, host_arrays, CompactColumnBuffers, DeviceFormat, DeviceMatrix, HostArrays,
    LongRows, MatrixFormat, RowBlocks,
};
use crate::backend::partials::{Partials, Slot};
use crate::backend::row_blocks::{self, CsrKernel};
use crate::error::Result;
use crate::matrix::{CsrMatrix, CsrView};
use crate::scalar::Scalar;
use enum_dispatch::enum_dispatch;

pub(crate) mod launch;
mod operands;

pub(crate) use operands::{check_csr_update, check_spmv};
pub use operands::{CsrUpdate, SpmvDots};

/// The GPU layouts of a CSR matrix ([`SpmvOps::csr_layouts`]): its long rows and the stream
/// kernel's row blocks.
pub type CsrLayouts<T> = (Option<Box<LongRows<T>>>, Option<RowBlocks>);

/// SpMV kernels for every device format.
#[enum_dispatch]
pub trait SpmvOps: VectorOps {
    /// Whether this backend runs the GPU kernels' own matrix layouts (`backend::row_blocks`: the
    /// CSR stream kernel's row blocks and the 16-bit column offsets of CSR and SELL): the GPU
    /// backends do; the host backend reads the plain arrays with one loop per format.
    fn uses_device_layouts(&self) -> bool {
        true
    }

    /// Whether [`CsrKernel::Auto`] may pick the stream kernel here: the GPU backends on GPUs
    /// (on a CPU OpenCL device the work-group barriers cost more than the balance gains: PoCL
    /// ran CG on the 27-point stencil, n = 110K, at 9.9 ms per iteration with the stream
    /// kernel against 2.3 ms with the vector kernel).
    fn auto_csr_stream(&self) -> bool {
        self.uses_device_layouts()
    }

    /// Upload 16-bit column offsets, if any.
    #[doc(hidden)]
    fn upload_compact(
        &self,
        c: Option<crate::backend::row_blocks::CompactColumns>,
    ) -> Result<Option<crate::backend::matrix::CompactColumnBuffers>> {
        Ok(match c {
            Some(c) => Some(CompactColumnBuffers {
                offsets: self.upload(&c.offsets)?,
                base: self.upload(&c.base)?,
            }),
            None => None,
        })
    }

    /// The CSR kernel this backend runs for rows `rp` when `requested`, rows above `long_len`
    /// entries being summed apart (on GPUs the tuning's
    /// [`csr_kernel`](crate::backend::tuning::Tuning::csr_kernel), else the automatic choice of
    /// [`row_blocks::choose`]; always [`CsrKernel::Vector`] on backends without the GPU
    /// layouts).
    #[doc(hidden)]
    fn resolve_csr_kernel(&self, rp: &[u32], long_len: u32, requested: CsrKernel) -> CsrKernel {
        let forced = self.tuning().csr_kernel;
        match requested {
            _ if !self.uses_device_layouts() => CsrKernel::Vector,
            CsrKernel::Auto if !self.auto_csr_stream() => CsrKernel::Vector,
            CsrKernel::Auto if forced != CsrKernel::Auto => forced,
            requested => row_blocks::choose(rp, long_len, requested),
        }
    }

    /// The GPU layouts of CSR rows `rp` for `requested` (resolved by
    /// [`SpmvOps::resolve_csr_kernel`]): the long-row plan and, for the stream kernels, the
    /// row blocks. The 16-bit column offsets of [`CsrKernel::StreamCompact`] need the column
    /// indices `ci`; without them (or when they do not fit) the stream kernel reads the 32-bit
    /// indices.
    #[doc(hidden)]
    fn csr_layouts<T: Scalar>(
        &self,
        rp: &[u32],
        ci: Option<&[u32]>,
        requested: CsrKernel,
    ) -> Result<CsrLayouts<T>> {
        let factor = self.tuning().long_row_factor;
        let vector_plan = LongRowPlan::plan_with(rp, factor);
        let long_len = vector_plan.as_ref().map_or(u32::MAX, |p| p.min_len);
        let kernel = self.resolve_csr_kernel(rp, long_len, requested);
        let stream = self.uses_device_layouts() && kernel != CsrKernel::Vector;
        let long_plan = if stream {
            LongRowPlan::plan_for_stream_with(rp, factor)
        } else {
            vector_plan
        };
        let row_blocks = if stream {
            let starts = row_blocks::row_blocks(rp);
            let compact = match (kernel, ci) {
                (CsrKernel::StreamCompact, Some(ci)) => {
                    row_blocks::compact_columns(rp, ci, &starts)
                }
                _ => None,
            };
            Some(RowBlocks {
                n_blocks: starts.len().saturating_sub(1),
                block_row: self.upload(&starts)?,
                compact: self.upload_compact(compact)?,
            })
        } else {
            None
        };
        let long_rows = match long_plan {
            Some(plan) => Some(Box::new(LongRows {
                min_len: plan.min_len,
                rows: self.upload(&plan.rows)?,
                chunk_ptr: self.upload(&plan.chunk_ptr)?,
                chunk_begin: self.upload(&plan.chunk_begin)?,
                chunk_end: self.upload(&plan.chunk_end)?,
                chunk_sums: self.alloc(plan.n_chunks())?,
                n_rows: plan.rows.len(),
                n_chunks: plan.n_chunks(),
            })),
            None => None,
        };
        Ok((long_rows, row_blocks))
    }

    /// Convert `a` to `format` and upload it (setup; not counted per iteration). A CSR matrix
    /// gets the CSR kernel chosen from its row lengths ([`CsrKernel::Auto`]).
    fn upload_matrix<T: Scalar>(
        &self,
        a: &CsrMatrix<T>,
        format: MatrixFormat,
    ) -> Result<DeviceMatrix<T>> {
        self.upload_matrix_with(a, format, CsrKernel::Auto)
    }

    /// [`SpmvOps::upload_matrix`] with the CSR kernel given (ignored for other formats and on
    /// backends without the GPU layouts, see [`SpmvOps::uses_device_layouts`]).
    fn upload_matrix_with<T: Scalar>(
        &self,
        a: &CsrMatrix<T>,
        format: MatrixFormat,
        csr_kernel: CsrKernel,
    ) -> Result<DeviceMatrix<T>> {
        let format = match host_arrays(a, format)? {
            HostArrays::Csr(rp, ci) => self.csr_format(&rp, &ci, a.values(), csr_kernel)?,
            HostArrays::Sell(s) => DeviceFormat::Sell {
                compact: match self.uses_device_layouts() && self.tuning().sell_compact {
                    true => self.upload_compact(row_blocks::sell_compact_columns(&s))?,
                    false => None,
                },
                c: s.c,
                sigma: s.sigma,
                n_slices: s.n_slices(),
                slice_ptr: self.upload(&s.slice_ptr)?,
                col_idx: self.upload(&s.col_idx)?,
                values: self.upload(&s.values)?,
                row_perm: self.upload(&s.row_perm)?,
                row_len: self.upload(&s.row_len)?,
            },
            HostArrays::Bsr(block_size, rp, ci, v) => DeviceFormat::Bsr {
                block_size,
                row_ptr: self.upload(&rp)?,
                col_idx: self.upload(&ci)?,
                values: self.upload(&v)?,
            },
        };
        Ok(DeviceMatrix {
            n_rows: a.n_rows(),
            n_cols: a.n_cols(),
            nnz: a.nnz(),
            format,
            fingerprint: a.fingerprint(),
            halo: Default::default(),
            uploaded: true,
        })
    }

    /// Upload a borrowed CSR matrix as CSR, its arrays sent as they are (no host copy), with
    /// the CSR kernel chosen from its row lengths ([`CsrKernel::Auto`]). Errors as
    /// [`SpmvOps::upload_matrix`]'s.
    fn upload_view<T: Scalar>(&self, a: &CsrView<'_, T>) -> Result<DeviceMatrix<T>> {
        finite_matrix(a.first_non_finite())?;
        Ok(DeviceMatrix {
            n_rows: a.n_rows(),
            n_cols: a.n_cols(),
            nnz: a.nnz(),
            format: self.csr_format(a.row_ptr(), a.col_idx(), a.values(), CsrKernel::Auto)?,
            fingerprint: a.fingerprint(),
            halo: Default::default(),
            uploaded: true,
        })
    }

    /// The device arrays of a CSR matrix and its GPU layouts for `csr_kernel` (the arrays
    /// unchecked: [`SpmvOps::upload_matrix`] and [`SpmvOps::upload_view`] check them).
    #[doc(hidden)]
    fn csr_format<T: Scalar>(
        &self,
        row_ptr: &[u32],
        col_idx: &[u32],
        values: &[T],
        csr_kernel: CsrKernel,
    ) -> Result<DeviceFormat<T>> {
        let (long_rows, row_blocks) = self.csr_layouts::<T>(row_ptr, Some(col_idx), csr_kernel)?;
        Ok(DeviceFormat::Csr {
            row_blocks,
            long_rows,
            row_ptr: self.upload(row_ptr)?,
            col_idx: self.upload(col_idx)?,
            values: self.upload(values)?,
        })
    }

    /// Groups of the partials of a solver whose reductions are fused into products with `a`
    /// (every kernel writing those partials runs on this grid, the fused SpMV included): the
    /// reduction plan of its rows by default. The GPU backends give SELL matrices a
    /// full-occupancy grid (see their implementations). A function of the matrix's format and
    /// size and of the device only, so reductions stay deterministic.
    fn spmv_reduction_groups<T: Scalar>(&self, a: &DeviceMatrix<T>) -> usize {
        self.reduction_groups(a.n_rows())
    }

    /// A partials buffer with `slots` slots for the reductions fused into products with `a`
    /// ([`SpmvOps::spmv_reduction_groups`] groups).
    fn spmv_partials<T: Scalar>(&self, a: &DeviceMatrix<T>, slots: usize) -> Result<Partials<T>> {
        self.spmv_partials_at_least(a, slots, 0)
    }

    /// [`SpmvOps::spmv_partials`] with at least `min_groups` groups (for the products a
    /// preconditioner fuses a reduction into: [`crate::precond::Preconditioner::fused_reduction_groups`]).
    fn spmv_partials_at_least<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        slots: usize,
        min_groups: usize,
    ) -> Result<Partials<T>> {
        let groups = self.spmv_reduction_groups(a).max(min_groups);
        let buffer = self.alloc::<T>(groups.saturating_mul(slots.max(1)))?;
        Ok(Partials::from_buffer(buffer, a.n_rows(), groups, slots))
    }

    /// Kernel `spmv_dots` (per format: `spmv_dots_csr`, `_csr_stream`, `_sell`, `_bsr`) with
    /// every slot off: y = A x. The host backend implements it with its own loops.
    fn spmv<T: Scalar>(&self, a: &DeviceMatrix<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        launch::spmv(self.kernel_runtime().gpu("spmv")?, a, x, y)
    }

    /// Kernel `spmv_dots` (per format): y = A x fused with the first stage of the inner products
    /// in `dots` (\[Rupp16\]: CG Alg. 2 lines 13-14, BiCGStab Alg. 4 lines 6-7 and 10-12, GMRES
    /// Alg. 6 line 7).
    fn spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        launch_or_reference!(self, spmv_dots(a, x, y, dots, partials))
    }

    /// Kernel `residual` (per format): r = b - A x, with the first stage of <r, r> when a slot
    /// is given.
    fn residual<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        b: &Buffer<T>,
        r: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr: Option<Slot>,
    ) -> Result<()> {
        launch_or_reference!(self, residual(a, x, b, r, partials, rr))
    }
}

/// Default bodies of the fused SpMV kernels, composed of primitives.
pub mod reference {
    use super::*;

    /// `spmv_dots` as spmv followed by separate `dot_partials`.
    pub fn spmv_dots<B: SpmvOps + ?Sized, T: Scalar>(
        b: &B,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        b.spmv(a, x, y)?;
        if let Some(s) = dots.yy {
            b.dot_partials(y, y, partials, s)?;
        }
        for (v, s) in dots.with.into_iter().flatten() {
            b.dot_partials(y, v, partials, s)?;
        }
        Ok(())
    }

    /// `residual` as spmv, axpby and dot.
    pub fn residual<B: SpmvOps + ?Sized, T: Scalar>(
        b: &B,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        rhs: &Buffer<T>,
        r: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr: Option<Slot>,
    ) -> Result<()> {
        b.spmv(a, x, r)?;
        b.axpby(T::one(), rhs, -T::one(), r)?;
        if let Some(s) = rr {
            b.dot_partials(r, r, partials, s)?;
        }
        Ok(())
    }
}
