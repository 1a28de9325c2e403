//! Sparse building blocks on the device, written once (`kernels/sparse.kc`): a fill and an
//! exclusive scan of `u32` arrays, the CSR transpose, row compaction, and the row-by-row
//! sparse matrix product C = A B in a symbolic and a numeric phase (the block kernels of
//! several right-hand sides are in `block`, the product in `spgemm`, the checks of a caller's
//! device arrays in `check`). Each operation checks its arguments, then runs
//! the host reference on the host backend or launches its kernel by [`KernelRuntime`]; the
//! references do what the kernels do, in the same order, so the backends agree bit for bit on
//! indices and to rounding on values.

use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::{KernelArg, KernelRuntime};
use crate::backend::ops::{Kernel, VectorOps};
use crate::backend::{DeviceFormat, DeviceMatrix};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Work-groups of the scan's first and last kernels at most (the middle one adds their
/// totals sequentially).
const SCAN_MAX_GROUPS: usize = 4096;

/// A CSR matrix's device arrays, borrowed (columns ascending in every row, indices in range:
/// what an upload or these operations produce).
#[derive(Clone, Copy)]
pub(crate) struct CsrRef<'a, T> {
    pub(crate) n_rows: usize,
    pub(crate) n_cols: usize,
    pub(crate) row_ptr: &'a Buffer<u32>,
    pub(crate) col_idx: &'a Buffer<u32>,
    pub(crate) values: &'a Buffer<T>,
}

impl<'a, T: Scalar> CsrRef<'a, T> {
    /// The CSR arrays of `m`, or [`Error::InvalidParameter`] for another format.
    pub(crate) fn of(m: &'a DeviceMatrix<T>) -> Result<Self> {
        match m.format() {
            DeviceFormat::Csr {
                row_ptr,
                col_idx,
                values,
                ..
            } => Self::new(m.n_rows(), m.n_cols(), row_ptr, col_idx, values),
            _ => Err(Error::param(
                "device sparse operation",
                "the matrix must be in CSR on the device",
            )),
        }
    }

    /// Arrays checked for their lengths.
    pub(crate) fn new(
        n_rows: usize,
        n_cols: usize,
        row_ptr: &'a Buffer<u32>,
        col_idx: &'a Buffer<u32>,
        values: &'a Buffer<T>,
    ) -> Result<Self> {
        check_len("CSR row pointers", row_ptr, n_rows + 1)?;
        check_len("CSR values", values, col_idx.len())?;
        Ok(Self {
            n_rows,
            n_cols,
            row_ptr,
            col_idx,
            values,
        })
    }

    /// Number of stored entries.
    pub(crate) fn nnz(&self) -> usize {
        self.col_idx.len()
    }
}

/// A CSR matrix's device arrays, owned (built by these operations).
#[derive(Debug)]
pub(crate) struct CsrBuffers<T> {
    pub(crate) n_rows: usize,
    pub(crate) n_cols: usize,
    pub(crate) row_ptr: Buffer<u32>,
    pub(crate) col_idx: Buffer<u32>,
    pub(crate) values: Buffer<T>,
}

impl<T: Scalar> CsrBuffers<T> {
    /// Borrowed.
    pub(crate) fn view(&self) -> CsrRef<'_, T> {
        CsrRef {
            n_rows: self.n_rows,
            n_cols: self.n_cols,
            row_ptr: &self.row_ptr,
            col_idx: &self.col_idx,
            values: &self.values,
        }
    }

    /// A device matrix in CSR, run by the vector kernel (no long-row or row-block plan).
    pub(crate) fn into_matrix(self) -> DeviceMatrix<T> {
        DeviceMatrix {
            n_rows: self.n_rows,
            n_cols: self.n_cols,
            nnz: self.col_idx.len(),
            format: DeviceFormat::Csr {
                row_ptr: self.row_ptr,
                col_idx: self.col_idx,
                values: self.values,
                long_rows: None,
                row_blocks: None,
            },
            fingerprint: 0,
            halo: Default::default(),
            uploaded: false,
        }
    }
}

/// Element-wise launch of `kernel` over `n` items.
fn launch_items<T: Scalar>(
    rt: &KernelRuntime<'_>,
    kernel: Kernel,
    n: usize,
    args: &[KernelArg<'_>],
) -> Result<()> {
    // SAFETY: every caller checks the lengths of the buffers it passes against the sizes the
    // kernel reads (documented at each call) and passes the parameter list of `kernels/sparse.kc`.
    unsafe { rt.launch_items::<T>(kernel, n, args) }
}

/// A `u32` length or count argument.
fn len(what: &str, n: usize) -> Result<KernelArg<'static>> {
    KernelArg::len(what, n)
}

/// Kernel `fill_u32`: x_i = value. `T` is the precision of the program launched (the kernel
/// has no scalar: the one the caller's setup runs in, whose kernels are built).
pub(crate) fn fill_u32<T: Scalar, B: VectorOps + ?Sized>(
    backend: &B,
    x: &mut Buffer<u32>,
    value: u32,
) -> Result<()> {
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        x.host_mut()?.fill(value);
        return Ok(());
    }
    let n = x.len();
    launch_items::<T>(
        &rt,
        Kernel::FillU32,
        n,
        &[
            len("fill_u32", n)?,
            KernelArg::buffer(x),
            KernelArg::U32(value),
        ],
    )
}

/// A zeroed `u32` array (`T` as for [`fill_u32`]).
pub(crate) fn zeros_u32<T: Scalar, B: VectorOps + ?Sized>(
    backend: &B,
    n: usize,
) -> Result<Buffer<u32>> {
    let mut x = backend.alloc::<u32>(n)?;
    fill_u32::<T, B>(backend, &mut x, 0)?;
    Ok(x)
}

/// Kernels `scan_u32_local`, `scan_u32_totals`, `scan_u32_add`: `out` (n + 1 entries) = the
/// exclusive prefix sums of `input` (n entries) with out\[n\] the total, which is returned (one
/// blocking 8-byte read). A total of 2^32 or more is [`Error::IndexOverflow`] (`what` names
/// it). `T` as for [`fill_u32`].
pub(crate) fn scan_u32<T: Scalar, B: VectorOps + ?Sized>(
    backend: &B,
    what: &str,
    input: &Buffer<u32>,
    out: &mut Buffer<u32>,
) -> Result<usize> {
    let n = input.len();
    check_len("scan output (n + 1)", out, n + 1)?;
    let overflow = |total: u64| Error::IndexOverflow {
        what: what.into(),
        value: total as usize,
        max: u32::MAX as usize,
    };
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (x, y) = (input.host()?, out.host_mut()?);
        let mut total = 0u64;
        for (yi, &xi) in y.iter_mut().zip(x) {
            *yi = total as u32;
            total += u64::from(xi);
        }
        y[n] = total as u32;
        return u32::try_from(total)
            .map(|t| t as usize)
            .map_err(|_| overflow(total));
    }
    let groups = rt.elementwise_groups(n).min(SCAN_MAX_GROUPS);
    let group_totals = backend.alloc::<u64>(groups)?;
    let total = backend.alloc::<u64>(1)?;
    let n_arg = len("scan length", n)?;
    // SAFETY: scan_u32_local(n, in, out, group_totals) reads in[0..n), writes out[0..n) and
    // group_totals[0..groups) (lengths checked or allocated here); scan_u32_totals(groups,
    // group_totals, n, out, total) with one group writes out[n] and total[0];
    // scan_u32_add(n, out, group_totals) with the same groups.
    unsafe {
        rt.launch::<T>(
            Kernel::ScanU32Local,
            groups,
            &[
                n_arg,
                KernelArg::buffer(input),
                KernelArg::buffer(out),
                KernelArg::buffer(&group_totals),
            ],
        )?;
        rt.launch::<T>(
            Kernel::ScanU32Totals,
            1,
            &[
                KernelArg::U32(groups as u32),
                KernelArg::buffer(&group_totals),
                len("scan length", n)?,
                KernelArg::buffer(out),
                KernelArg::buffer(&total),
            ],
        )?;
        rt.launch::<T>(
            Kernel::ScanU32Add,
            groups,
            &[
                len("scan length", n)?,
                KernelArg::buffer(out),
                KernelArg::buffer(&group_totals),
            ],
        )?;
    }
    let mut t = [0u64];
    backend.read(&total, &mut t)?;
    u32::try_from(t[0])
        .map(|t| t as usize)
        .map_err(|_| overflow(t[0]))
}

/// T = A^T on the device (kernels `csr_transpose_count`, `csr_transpose_fill`,
/// `csr_rank_rows`): the atomics fill T's rows in any order, then every entry is moved to its
/// rank within its row (one work-item per entry), so the rows are sorted by column and the
/// result does not depend on the order the atomics took. The fill's arrays (T's nonzeros
/// again) are held until then.
pub(crate) fn transpose<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
) -> Result<CsrBuffers<T>> {
    let nnz = a.nnz();
    let mut counts = zeros_u32::<T, B>(backend, a.n_cols)?;
    let mut t_ptr = backend.alloc::<u32>(a.n_cols + 1)?;
    let mut t_cols = backend.alloc::<u32>(nnz)?;
    let mut t_vals = backend.alloc::<T>(nnz)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let c = counts.host_mut()?;
        for &j in a.col_idx.host()? {
            c[j as usize] += 1;
        }
    } else {
        launch_items::<T>(
            &rt,
            Kernel::CsrTransposeCount,
            a.n_rows,
            &[
                len("transpose rows", a.n_rows)?,
                KernelArg::buffer(a.row_ptr),
                KernelArg::buffer(a.col_idx),
                KernelArg::buffer(&counts),
            ],
        )?;
    }
    scan_u32::<T, B>(backend, "transpose entries", &counts, &mut t_ptr)?;
    let mut cursor = counts;
    fill_u32::<T, B>(backend, &mut cursor, 0)?;
    if rt.is_host() {
        let (rp, ci, v) = (a.row_ptr.host()?, a.col_idx.host()?, a.values.host()?);
        let tp = t_ptr.host()?.to_vec();
        let (cur, tc, tv) = (cursor.host_mut()?, t_cols.host_mut()?, t_vals.host_mut()?);
        for i in 0..a.n_rows {
            for p in rp[i] as usize..rp[i + 1] as usize {
                let j = ci[p] as usize;
                let pos = (tp[j] + cur[j]) as usize;
                cur[j] += 1;
                tc[pos] = i as u32;
                tv[pos] = v[p];
            }
        }
        // Rows of T are filled in ascending row order: already sorted.
    } else {
        let fill_cols = backend.alloc::<u32>(nnz)?;
        let fill_vals = backend.alloc::<T>(nnz)?;
        launch_items::<T>(
            &rt,
            Kernel::CsrTransposeFill,
            a.n_rows,
            &[
                len("transpose rows", a.n_rows)?,
                KernelArg::buffer(a.row_ptr),
                KernelArg::buffer(a.col_idx),
                KernelArg::buffer(a.values),
                KernelArg::buffer(&t_ptr),
                KernelArg::buffer(&cursor),
                KernelArg::buffer(&fill_cols),
                KernelArg::buffer(&fill_vals),
            ],
        )?;
        launch_items::<T>(
            &rt,
            Kernel::CsrRankRows,
            nnz,
            &[
                len("transpose columns", a.n_cols)?,
                len("transpose entries", nnz)?,
                KernelArg::buffer(&t_ptr),
                KernelArg::buffer(&fill_cols),
                KernelArg::buffer(&fill_vals),
                KernelArg::buffer(&t_cols),
                KernelArg::buffer(&t_vals),
            ],
        )?;
    }
    Ok(CsrBuffers {
        n_rows: a.n_cols,
        n_cols: a.n_rows,
        row_ptr: t_ptr,
        col_idx: t_cols,
        values: t_vals,
    })
}

/// The values of T = A^T into `t_vals` on T's kept pattern `(t_ptr, t_cols)` (kernel
/// `csr_transpose_values`): a values-only refresh of [`transpose`]'s result after A's values
/// changed on the same pattern. An entry of the pattern that A lacks gets zero.
pub(crate) fn transpose_values<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    (t_ptr, t_cols): (&Buffer<u32>, &Buffer<u32>),
    t_vals: &mut Buffer<T>,
) -> Result<()> {
    check_len("transpose row pointers", t_ptr, a.n_cols + 1)?;
    check_len("transpose values", t_vals, t_cols.len())?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (rp, ci, v) = (a.row_ptr.host()?, a.col_idx.host()?, a.values.host()?);
        let (tp, tc) = (t_ptr.host()?, t_cols.host()?);
        let tv = t_vals.host_mut()?;
        for j in 0..a.n_cols {
            for e in tp[j] as usize..tp[j + 1] as usize {
                let i = tc[e] as usize;
                if i >= a.n_rows {
                    return Err(Error::param(
                        "transpose values",
                        "a column of the transpose's pattern is not a row of A",
                    ));
                }
                let (lo, hi) = (rp[i] as usize, rp[i + 1] as usize);
                tv[e] = match ci[lo..hi].binary_search(&(j as u32)) {
                    Ok(at) => v[lo + at],
                    Err(_) => T::zero(),
                };
            }
        }
        return Ok(());
    }
    // SAFETY (launch_items): T's pattern is one `transpose` built from a matrix of A's shape
    // (its columns are rows of A), T's row pointers and values checked against it.
    launch_items::<T>(
        &rt,
        Kernel::CsrTransposeValues,
        a.n_cols,
        &[
            len("transpose columns", a.n_cols)?,
            KernelArg::buffer(a.row_ptr),
            KernelArg::buffer(a.col_idx),
            KernelArg::buffer(a.values),
            KernelArg::buffer(t_ptr),
            KernelArg::buffer(t_cols),
            KernelArg::buffer(t_vals),
        ],
    )
}

/// Rows of `n_rows` entries built in a scratch area (row i at `src_ptr[i] + src_shift * i`,
/// `counts[i]` entries) copied to a compact CSR matrix of `n_cols` columns (kernel
/// `csr_compact`, after the scan of the counts).
pub(crate) fn compact_rows<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    (n_rows, n_cols): (usize, usize),
    (src_ptr, src_shift): (&Buffer<u32>, usize),
    counts: &Buffer<u32>,
    (src_cols, src_vals): (&Buffer<u32>, &Buffer<T>),
) -> Result<CsrBuffers<T>> {
    check_len("compaction counts", counts, n_rows)?;
    check_len("compaction source pointers", src_ptr, n_rows + 1)?;
    check_len("compaction source values", src_vals, src_cols.len())?;
    let mut row_ptr = backend.alloc::<u32>(n_rows + 1)?;
    let nnz = scan_u32::<T, B>(backend, "compacted entries", counts, &mut row_ptr)?;
    let mut cols = backend.alloc::<u32>(nnz)?;
    let mut vals = backend.alloc::<T>(nnz)?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (sp, sc, sv, rp) = (
            src_ptr.host()?,
            src_cols.host()?,
            src_vals.host()?,
            row_ptr.host()?,
        );
        let (c, v) = (cols.host_mut()?, vals.host_mut()?);
        for i in 0..n_rows {
            let (dst, l) = (rp[i] as usize, (rp[i + 1] - rp[i]) as usize);
            let src = sp[i] as usize + src_shift * i;
            c[dst..dst + l].copy_from_slice(&sc[src..src + l]);
            v[dst..dst + l].copy_from_slice(&sv[src..src + l]);
        }
    } else {
        // The source rows must lie inside the scratch: the callers size it from the same
        // bounds the rows were built in (src_ptr[i] + src_shift i + counts[i] <= its length).
        launch_items::<T>(
            &rt,
            Kernel::CsrCompact,
            n_rows,
            &[
                len("compaction rows", n_rows)?,
                KernelArg::buffer(src_ptr),
                KernelArg::U32(u32::try_from(src_shift).map_err(|_| {
                    Error::param("compaction", "the source shift does not fit 32 bits")
                })?),
                KernelArg::buffer(src_cols),
                KernelArg::buffer(src_vals),
                KernelArg::buffer(&row_ptr),
                KernelArg::buffer(&cols),
                KernelArg::buffer(&vals),
            ],
        )?;
    }
    Ok(CsrBuffers {
        n_rows,
        n_cols,
        row_ptr,
        col_idx: cols,
        values: vals,
    })
}

mod block;
mod check;
mod spgemm;
#[cfg(test)]
mod tests;

pub(crate) use block::{block_cg_update, block_xpby, spmm, spmm_dots, SPMM_MAX_COLUMNS};
pub(crate) use check::{abs_extremes, csr_check};
#[cfg(test)]
use spgemm::spgemm_in_blocks;
pub(crate) use spgemm::{spgemm, spgemm_values};
