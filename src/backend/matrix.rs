//! Sparse matrices resident on a backend.

use super::buffer::Buffer;
use super::row_blocks::CsrKernel;
use crate::error::{Error, Result};
use crate::matrix::{BsrMatrix, CsrMatrix, SellMatrix};
use crate::scalar::Scalar;

/// Storage format to use on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatrixFormat {
    /// Compressed sparse row (the default).
    #[default]
    Csr,
    /// SELL-C-sigma: slices of `c` rows, sorted by length within windows of `sigma` rows.
    Sell {
        /// Slice height.
        c: usize,
        /// Sorting window (a multiple of `c`, or 1 for no sorting).
        sigma: usize,
    },
    /// ELLPACK (one slice, column-major).
    Ell,
    /// Block CSR with square column-major blocks.
    Bsr {
        /// Block size.
        block_size: usize,
    },
}

/// The command-line spelling: `csr`, `sell:C:SIGMA`, `ell`, `bsr:S` (no commas, so it can stand
/// in a CSV field as is).
impl std::fmt::Display for MatrixFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatrixFormat::Csr => write!(f, "csr"),
            MatrixFormat::Sell { c, sigma } => write!(f, "sell:{c}:{sigma}"),
            MatrixFormat::Ell => write!(f, "ell"),
            MatrixFormat::Bsr { block_size } => write!(f, "bsr:{block_size}"),
        }
    }
}

impl std::str::FromStr for MatrixFormat {
    type Err = Error;
    /// `csr`, `ell`, `sell` (C = 32, sigma = 256), `sell:C:SIGMA` or `bsr:S` (the command
    /// line's `--format`); the parameters are checked when a matrix is converted.
    fn from_str(s: &str) -> Result<Self> {
        let parts: Vec<&str> = s.split(':').collect();
        let num = |t: &str| {
            t.parse::<usize>()
                .map_err(|_| Error::param("format", format!("'{t}' is not a number")))
        };
        match parts.as_slice() {
            ["csr"] => Ok(MatrixFormat::Csr),
            ["ell"] => Ok(MatrixFormat::Ell),
            ["sell"] => Ok(MatrixFormat::Sell { c: 32, sigma: 256 }),
            ["sell", c, sg] => Ok(MatrixFormat::Sell {
                c: num(c)?,
                sigma: num(sg)?,
            }),
            ["bsr", b] => Ok(MatrixFormat::Bsr {
                block_size: num(b)?,
            }),
            _ => Err(Error::param(
                "format",
                format!("unknown format '{s}' (csr, ell, sell, sell:C:SIGMA, bsr:S)"),
            )),
        }
    }
}

/// The arrays of a device matrix, per format. Indices are `u32`.
#[derive(Debug)]
pub enum DeviceFormat<T> {
    /// CSR arrays.
    Csr {
        /// Row pointers (n_rows + 1).
        row_ptr: Buffer<u32>,
        /// Column indices (nnz).
        col_idx: Buffer<u32>,
        /// Values (nnz).
        values: Buffer<T>,
        /// The rows summed apart on GPUs (see [`LongRows`]); `None` when no row is long or
        /// on the host backend.
        long_rows: Option<Box<LongRows<T>>>,
        /// The row blocks of the stream kernel (see [`RowBlocks`]); `None`: the vector kernel.
        row_blocks: Option<RowBlocks>,
    },
    /// SELL-C-sigma arrays (see [`SellMatrix`]).
    Sell {
        /// Slice height.
        c: usize,
        /// Sorting window: row_perm maps the positions of each window of `sigma` positions
        /// (from 0) onto the rows of the same range; 1: no sorting.
        sigma: usize,
        /// Number of slices.
        n_slices: usize,
        /// Offsets of the slices (n_slices + 1).
        slice_ptr: Buffer<u32>,
        /// Column indices, column-major within each slice.
        col_idx: Buffer<u32>,
        /// Values, column-major within each slice.
        values: Buffer<T>,
        /// Original row of each sorted position.
        row_perm: Buffer<u32>,
        /// True length of the row at each sorted position.
        row_len: Buffer<u32>,
        /// 16-bit column offsets from a per-slice base the kernels read instead of `col_idx`
        /// ([`crate::backend::row_blocks::sell_compact_columns`]), if they fit.
        compact: Option<CompactColumnBuffers>,
    },
    /// BSR arrays (see [`BsrMatrix`]).
    Bsr {
        /// Block size s.
        block_size: usize,
        /// Block-row pointers.
        row_ptr: Buffer<u32>,
        /// Block-column indices.
        col_idx: Buffer<u32>,
        /// Values, s*s per block, column-major.
        values: Buffer<T>,
    },
}

/// The row blocks of a CSR matrix run by the stream kernel on GPUs (see
/// [`crate::backend::row_blocks`]).
#[derive(Debug)]
pub struct RowBlocks {
    /// First row of each block, then the number of rows (n_blocks + 1).
    pub block_row: Buffer<u32>,
    /// Number of blocks.
    pub n_blocks: usize,
    /// The 16-bit column offsets the kernel reads instead of the column indices
    /// ([`crate::backend::row_blocks::CompactColumns`]), if any.
    pub compact: Option<CompactColumnBuffers>,
}

/// Device arrays of [`crate::backend::row_blocks::CompactColumns`].
#[derive(Debug)]
pub struct CompactColumnBuffers {
    /// Column offset of every entry from its block's (slice's) base.
    pub offsets: Buffer<u16>,
    /// Base column of every block (slice).
    pub base: Buffer<u32>,
}

impl CompactColumnBuffers {
    /// Bytes of device memory.
    pub fn bytes(&self) -> usize {
        self.offsets.bytes() + self.base.bytes()
    }
}

/// Device arrays of a [`LongRowPlan`](crate::backend::long_rows::LongRowPlan): the rows of a CSR matrix far longer than the mean,
/// summed in chunks by whole work-groups before the main CSR kernel (see
/// [`crate::backend::long_rows`]).
#[derive(Debug)]
pub struct LongRows<T> {
    /// Rows with more than this many entries are long.
    pub min_len: u32,
    /// The long rows, ascending.
    pub rows: Buffer<u32>,
    /// Chunk range of each long row (rows + 1).
    pub chunk_ptr: Buffer<u32>,
    /// First entry of each chunk.
    pub chunk_begin: Buffer<u32>,
    /// One past the last entry of each chunk.
    pub chunk_end: Buffer<u32>,
    /// Scratch: the sum of each chunk (written by every product with the matrix).
    pub chunk_sums: Buffer<T>,
    /// Number of long rows.
    pub n_rows: usize,
    /// Number of chunks.
    pub n_chunks: usize,
}

impl<T: bytemuck::Pod> LongRows<T> {
    /// Bytes of device memory.
    pub fn bytes(&self) -> usize {
        self.rows.bytes()
            + self.chunk_ptr.bytes()
            + self.chunk_begin.bytes()
            + self.chunk_end.bytes()
            + self.chunk_sums.bytes()
    }
}

/// A sparse matrix uploaded to a backend with `SpmvOps::upload_matrix`.
#[derive(Debug)]
pub struct DeviceMatrix<T> {
    pub(crate) n_rows: usize,
    pub(crate) n_cols: usize,
    pub(crate) nnz: usize,
    pub(crate) format: DeviceFormat<T>,
    /// [`CsrMatrix::fingerprint`] of the host matrix it was uploaded from.
    pub(crate) fingerprint: u64,
    /// The ghost block and halo plan of a rank's rows (set by `dist`, feature `mpi`).
    pub(crate) halo: HaloSlot,
    /// Whether only host-to-device copies wrote its arrays (no kernel writes them): the CUDA
    /// CSR kernels then read them before waiting for the previous kernel (`EARLY_MATRIX` in
    /// `kernels/spmv.kc`). False for matrices a kernel builds.
    pub(crate) uploaded: bool,
}

/// Type-erased distributed part of a [`DeviceMatrix`]: `dist::DeviceHalo<T>` when the matrix
/// is one rank's rows of a distributed matrix, empty otherwise. Kept erased so the type of a
/// device matrix is the same with and without the `mpi` feature.
#[derive(Default)]
pub(crate) struct HaloSlot {
    /// Ranks of the communicator it was built on (0 when empty).
    pub(crate) ranks: usize,
    /// The `dist::DeviceHalo<T>`.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) data: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for HaloSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HaloSlot(ranks: {})", self.ranks)
    }
}

/// The arrays of a CSR device matrix that has no long rows: row pointers, column indices,
/// values (what the fused kernels that read rows in place of a vector accept).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) type PlainCsr<'a, T> = (&'a Buffer<u32>, &'a Buffer<u32>, &'a Buffer<T>);

impl<T: Scalar> DeviceMatrix<T> {
    /// The CSR arrays when this is a CSR matrix without long rows run by the vector kernel,
    /// else `None` (the fused kernels that read rows sum them as `spmv_dots_csr` does, so a
    /// solve gives the same bits with and without them).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn plain_csr(&self) -> Option<PlainCsr<'_, T>> {
        match &self.format {
            DeviceFormat::Csr {
                row_ptr,
                col_idx,
                values,
                long_rows: None,
                row_blocks: None,
            } => Some((row_ptr, col_idx, values)),
            _ => None,
        }
    }
    /// Whether this is a SELL matrix whose sorted positions of each aligned range of `tile`
    /// positions hold the rows of the same range (sorting window 1 or a divisor of `tile`): the
    /// fused kernels that stage a tile of rows (`gmres_dcgs2_spmv_dots_sell`) need it.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    pub(crate) fn sell_rows_within_tiles(&self, tile: usize) -> bool {
        match &self.format {
            DeviceFormat::Sell { sigma, .. } => *sigma == 1 || (*sigma > 0 && tile % *sigma == 0),
            _ => false,
        }
    }
    /// A second matrix on the same device arrays (none copied) with the same CSR kernel
    /// layout, for a reader that never writes them (AMG's finest level reads the solver's
    /// copy): `None` on the host backend, for other formats and for a matrix with long rows
    /// (their plan holds scratch of its own).
    pub(crate) fn share_csr(&self) -> Option<Self> {
        let DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            long_rows: None,
            row_blocks,
        } = &self.format
        else {
            return None;
        };
        let row_blocks = match row_blocks {
            None => None,
            Some(b) => Some(RowBlocks {
                block_row: b.block_row.share()?,
                n_blocks: b.n_blocks,
                compact: match &b.compact {
                    None => None,
                    Some(c) => Some(CompactColumnBuffers {
                        offsets: c.offsets.share()?,
                        base: c.base.share()?,
                    }),
                },
            }),
        };
        Some(Self {
            n_rows: self.n_rows,
            n_cols: self.n_cols,
            nnz: self.nnz,
            format: DeviceFormat::Csr {
                row_ptr: row_ptr.share()?,
                col_idx: col_idx.share()?,
                values: values.share()?,
                long_rows: None,
                row_blocks,
            },
            fingerprint: self.fingerprint,
            halo: HaloSlot::default(),
            uploaded: self.uploaded,
        })
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }
    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }
    /// [`CsrMatrix::fingerprint`] of the host matrix it was uploaded from (preconditioners
    /// built from another matrix are refused by the solvers).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }
    /// Stored nonzeros of the original matrix.
    pub fn nnz(&self) -> usize {
        self.nnz
    }
    /// Number of ranks the rows of this matrix are distributed over: 1 for a whole matrix,
    /// the communicator size for one rank's rows of a `dist::RankMatrix` (feature `mpi`),
    /// which only the distributed backend of that communicator may multiply with.
    pub fn ranks(&self) -> usize {
        self.halo.ranks.max(1)
    }
    /// The device arrays.
    pub fn format(&self) -> &DeviceFormat<T> {
        &self.format
    }
    /// The format tag.
    pub fn format_kind(&self) -> MatrixFormat {
        match &self.format {
            DeviceFormat::Csr { .. } => MatrixFormat::Csr,
            DeviceFormat::Sell { c, sigma, .. } => MatrixFormat::Sell {
                c: *c,
                sigma: *sigma,
            },
            DeviceFormat::Bsr { block_size, .. } => MatrixFormat::Bsr {
                block_size: *block_size,
            },
        }
    }
    /// The CSR kernel the GPU backends run for this matrix (`None` for other formats;
    /// [`CsrKernel::Vector`] on the host backend, which has one CSR loop).
    pub fn csr_kernel(&self) -> Option<CsrKernel> {
        match &self.format {
            DeviceFormat::Csr {
                row_blocks: Some(b),
                ..
            } => Some(match b.compact {
                Some(_) => CsrKernel::StreamCompact,
                None => CsrKernel::Stream,
            }),
            DeviceFormat::Csr { .. } => Some(CsrKernel::Vector),
            _ => None,
        }
    }
    /// The fused SpMV kernel a GPU backend runs for this matrix (`spmv_dots_csr`,
    /// `spmv_dots_csr_stream`, `spmv_dots_sell` or `spmv_dots_bsr`; `spmv_dots_csr_stream:u16`
    /// when that kernel reads 16-bit column offsets; reported by `solve --json` and the bench
    /// CSV).
    pub fn spmv_kernel(&self) -> &'static str {
        match (&self.format, self.csr_kernel()) {
            (DeviceFormat::Csr { .. }, Some(CsrKernel::Stream)) => "spmv_dots_csr_stream",
            (DeviceFormat::Csr { .. }, Some(CsrKernel::StreamCompact)) => {
                "spmv_dots_csr_stream:u16"
            }
            (DeviceFormat::Csr { .. }, _) => "spmv_dots_csr",
            (DeviceFormat::Sell { compact: None, .. }, _) => "spmv_dots_sell",
            (DeviceFormat::Sell { .. }, _) => "spmv_dots_sell:u16",
            (DeviceFormat::Bsr { .. }, _) => "spmv_dots_bsr",
        }
    }
    /// Write the values of `a` into this matrix's value array, in its device format, in
    /// place: `a` must have the pattern of the matrix it was uploaded from (the caller
    /// compares [`CsrMatrix::pattern_fingerprint`]; here sizes and nonzeros are checked). The
    /// layouts computed from the pattern (SELL's sorting, long rows, row blocks, compact
    /// columns) are kept. Errors: [`Error::PatternMismatch`] for other sizes,
    /// [`Error::NonFinite`] for a NaN or infinite value (nothing written), one rank's rows of a
    /// distributed matrix ([`Error::Unsupported`]), device errors.
    pub fn update_values<B: super::VectorOps>(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
    ) -> Result<()> {
        if self.halo.ranks > 0 {
            return Err(Error::Unsupported(
                "new values for one rank's rows of a distributed matrix".into(),
            ));
        }
        if a.n_rows() != self.n_rows || a.n_cols() != self.n_cols || a.nnz() != self.nnz {
            return Err(Error::PatternMismatch(format!(
                "the device matrix is {} x {} with {} nonzeros, the new one {} x {} with {}",
                self.n_rows,
                self.n_cols,
                self.nnz,
                a.n_rows(),
                a.n_cols(),
                a.nnz()
            )));
        }
        if let Some(k) = a.first_non_finite() {
            return Err(Error::NonFinite {
                what: "matrix".into(),
                index: k,
            });
        }
        self.write_values(backend, a)
    }
    /// [`DeviceMatrix::update_values`] after its checks (the caller made them: a local,
    /// undistributed matrix, `a` of its size and nonzeros, every value finite).
    pub(crate) fn write_values<B: super::VectorOps>(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
    ) -> Result<()> {
        match &mut self.format {
            DeviceFormat::Csr { values, .. } => backend.write(values, a.values())?,
            DeviceFormat::Sell {
                c, sigma, values, ..
            } => {
                // ELL is the one slice of every row, unsorted.
                let s = if *c == a.n_rows().max(1) && *sigma == 1 {
                    SellMatrix::ell_from_csr(a)?
                } else {
                    SellMatrix::from_csr(a, *c, *sigma)?
                };
                backend.write(values, &s.values)?
            }
            DeviceFormat::Bsr {
                block_size, values, ..
            } => backend.write(values, &BsrMatrix::from_csr(a, *block_size)?.values)?,
        }
        self.fingerprint = a.fingerprint();
        Ok(())
    }
    /// The value array in its device format.
    pub(crate) fn values(&self) -> &Buffer<T> {
        match &self.format {
            DeviceFormat::Csr { values, .. }
            | DeviceFormat::Sell { values, .. }
            | DeviceFormat::Bsr { values, .. } => values,
        }
    }
    /// The value array in its device format (what [`DeviceMatrix::update_values`] writes).
    pub(crate) fn values_mut(&mut self) -> &mut Buffer<T> {
        match &mut self.format {
            DeviceFormat::Csr { values, .. }
            | DeviceFormat::Sell { values, .. }
            | DeviceFormat::Bsr { values, .. } => values,
        }
    }
    /// Bytes of device memory used by the matrix.
    pub fn device_bytes(&self) -> usize {
        match &self.format {
            DeviceFormat::Csr {
                row_ptr,
                col_idx,
                values,
                long_rows,
                row_blocks,
            } => {
                row_ptr.bytes()
                    + col_idx.bytes()
                    + values.bytes()
                    + long_rows.as_ref().map_or(0, |l| l.bytes())
                    + row_blocks.as_ref().map_or(0, |b| {
                        b.block_row.bytes() + b.compact.as_ref().map_or(0, |c| c.bytes())
                    })
            }
            DeviceFormat::Sell {
                slice_ptr,
                col_idx,
                values,
                row_perm,
                row_len,
                compact,
                ..
            } => {
                slice_ptr.bytes()
                    + col_idx.bytes()
                    + values.bytes()
                    + row_perm.bytes()
                    + row_len.bytes()
                    + compact.as_ref().map_or(0, |c| c.bytes())
            }
            DeviceFormat::Bsr {
                row_ptr,
                col_idx,
                values,
                ..
            } => row_ptr.bytes() + col_idx.bytes() + values.bytes(),
        }
    }
}

/// Host arrays of a matrix converted to a device format, ready for upload.
pub(crate) enum HostArrays<T> {
    /// Row pointers and column indices (the values are the matrix's own).
    Csr(Vec<u32>, Vec<u32>),
    Sell(SellMatrix<T>),
    Bsr(usize, Vec<u32>, Vec<u32>, Vec<T>),
}

/// [`Error::NonFinite`] for a matrix whose first NaN or infinite value is at this position.
pub(crate) fn finite_matrix(first_non_finite: Option<usize>) -> Result<()> {
    match first_non_finite {
        Some(k) => Err(Error::NonFinite {
            what: "matrix".into(),
            index: k,
        }),
        None => Ok(()),
    }
}

/// Convert a CSR matrix to the arrays of `format`, checking the 32-bit index limits.
pub(crate) fn host_arrays<T: Scalar>(
    a: &CsrMatrix<T>,
    format: MatrixFormat,
) -> Result<HostArrays<T>> {
    finite_matrix(a.first_non_finite())?;
    Ok(match format {
        MatrixFormat::Csr => {
            let (rp, ci) = a.indices_u32()?;
            HostArrays::Csr(rp, ci)
        }
        MatrixFormat::Sell { c, sigma } => HostArrays::Sell(SellMatrix::from_csr(a, c, sigma)?),
        MatrixFormat::Ell => HostArrays::Sell(SellMatrix::ell_from_csr(a)?),
        MatrixFormat::Bsr { block_size } => {
            let b = BsrMatrix::from_csr(a, block_size)?;
            let (rp, ci) = b.indices_u32()?;
            HostArrays::Bsr(block_size, rp, ci, b.values.clone())
        }
    })
}

/// A CSR matrix of `n` rows whose column indices lie far outside any x (multiplying by it is an
/// illegal address on a GPU): the GPU backends' sticky-fault tests.
#[cfg(all(test, any(feature = "cuda", feature = "opencl")))]
pub(crate) fn out_of_bounds_csr<B: crate::backend::VectorOps>(
    b: &B,
    n: usize,
) -> DeviceMatrix<f64> {
    let rp: Vec<u32> = (0..=n as u32).collect();
    DeviceMatrix {
        n_rows: n,
        n_cols: n,
        nnz: n,
        format: DeviceFormat::Csr {
            row_ptr: b.upload(&rp).unwrap(),
            col_idx: b.upload(&vec![0x7fff_0000u32; n]).unwrap(),
            values: b.upload(&vec![1.0f64; n]).unwrap(),
            long_rows: None,
            row_blocks: None,
        },
        fingerprint: 0,
        halo: Default::default(),
        uploaded: true,
    }
}
