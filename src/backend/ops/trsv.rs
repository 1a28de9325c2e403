//! The block triangular factors of the `trsv` kernels (`kernels/trsv.kc`): their operand
//! [`BlockTriangular`], the largest block size, and the shape checks of
//! [`super::PrecondOps::block_diag_scale`], [`super::PrecondOps::bsr_trsv_sweep`] and
//! [`super::PrecondOps::bsr_trsv_level`].

use crate::backend::buffer::{check_len, Buffer};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// Largest block size of the block kernels (`PK_MAX_BLOCK` in `trsv.cl` / `trsv.cu`).
pub const MAX_BLOCK_SIZE: usize = 8;

/// A block triangular factor resident on a backend, as the `trsv` kernels take it: the strict
/// triangular part in block CSR (column-major `s x s` blocks, like
/// [`crate::matrix::BsrMatrix`]) and the inverted diagonal blocks, or none for a unit
/// diagonal (the L factor of BILU(0)).
#[derive(Debug)]
pub struct BlockTriangular<T> {
    /// Block size s (1..=[`MAX_BLOCK_SIZE`]).
    pub(crate) block_size: usize,
    /// Number of block rows.
    pub(crate) n_block_rows: usize,
    /// Block-row pointers of the strict part (n_block_rows + 1).
    pub(crate) row_ptr: Buffer<u32>,
    /// Block columns of the strict part.
    pub(crate) col_idx: Buffer<u32>,
    /// Blocks of the strict part, s*s each, column-major.
    pub(crate) values: Buffer<T>,
    /// Inverted diagonal blocks (s*s per block row), `None` for a unit diagonal.
    pub(crate) inv_diag: Option<Buffer<T>>,
}

impl<T: Scalar> BlockTriangular<T> {
    /// Check the host arrays of a block triangular factor and upload them: `row_ptr` has
    /// `n_block_rows + 1` non-decreasing entries ending at the number of blocks, every block
    /// column is below `n_block_rows`, `values` holds s*s per block and `inv_diag` (if any)
    /// s*s per block row. Anything else is an [`Error::InvalidMatrix`] (the kernels index
    /// with these arrays unchecked).
    pub fn upload<B: super::VectorOps + ?Sized>(
        backend: &B,
        block_size: usize,
        row_ptr: &[u32],
        col_idx: &[u32],
        values: &[T],
        inv_diag: Option<&[T]>,
    ) -> Result<Self> {
        let n_block_rows = check_pattern(block_size, row_ptr, col_idx)?;
        let ss = block_size * block_size;
        if values.len() != col_idx.len() * ss {
            return Err(Error::dims(
                "block triangular: values (blocks * s * s)",
                col_idx.len() * ss,
                values.len(),
            ));
        }
        if let Some(d) = inv_diag {
            if d.len() != n_block_rows * ss {
                return Err(Error::dims(
                    "block triangular: inverted diagonal (block rows * s * s)",
                    n_block_rows * ss,
                    d.len(),
                ));
            }
        }
        Ok(Self {
            block_size,
            n_block_rows,
            row_ptr: backend.upload(row_ptr)?,
            col_idx: backend.upload(col_idx)?,
            values: backend.upload(values)?,
            inv_diag: inv_diag.map(|d| backend.upload(d)).transpose()?,
        })
    }

    /// A factor with the pattern `row_ptr`, `col_idx` (checked as in [`Self::upload`]) and
    /// zero blocks, with zero inverted diagonal blocks when `with_inv_diag`: the output of a
    /// factorization on the device.
    pub fn with_pattern<B: super::VectorOps + ?Sized>(
        backend: &B,
        block_size: usize,
        row_ptr: &[u32],
        col_idx: &[u32],
        with_inv_diag: bool,
    ) -> Result<Self> {
        let n_block_rows = check_pattern(block_size, row_ptr, col_idx)?;
        let ss = block_size * block_size;
        Ok(Self {
            block_size,
            n_block_rows,
            row_ptr: backend.upload(row_ptr)?,
            col_idx: backend.upload(col_idx)?,
            values: backend.alloc(col_idx.len() * ss)?,
            inv_diag: if with_inv_diag {
                Some(backend.alloc(n_block_rows * ss)?)
            } else {
                None
            },
        })
    }
    /// Block size s.
    pub fn block_size(&self) -> usize {
        self.block_size
    }
    /// Number of block rows.
    pub fn n_block_rows(&self) -> usize {
        self.n_block_rows
    }
    /// Number of stored off-diagonal blocks.
    pub fn n_blocks(&self) -> usize {
        self.col_idx.len()
    }
    /// Scalar dimension (n_block_rows * s).
    pub fn n(&self) -> usize {
        self.n_block_rows * self.block_size
    }
    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.row_ptr.bytes()
            + self.col_idx.bytes()
            + self.values.bytes()
            + self.inv_diag.as_ref().map_or(0, |d| d.bytes())
    }
    /// Check the shapes the kernels rely on.
    pub(crate) fn check(&self) -> Result<()> {
        check_block_size(self.block_size)?;
        let (s, nb) = (self.block_size, self.n_block_rows);
        check_len("block triangular: row_ptr length", &self.row_ptr, nb + 1)?;
        check_len(
            "block triangular: values length (blocks * s * s)",
            &self.values,
            self.col_idx.len() * s * s,
        )?;
        if let Some(d) = &self.inv_diag {
            check_len("block triangular: inverted diagonal length", d, nb * s * s)?;
        }
        Ok(())
    }
}

/// Check a block triangular pattern (block size, row pointers from 0 never decreasing and
/// ending at the block count, block columns below the block rows); the number of block rows.
fn check_pattern(block_size: usize, row_ptr: &[u32], col_idx: &[u32]) -> Result<usize> {
    check_block_size(block_size)?;
    let n_block_rows = row_ptr
        .len()
        .checked_sub(1)
        .ok_or_else(|| Error::InvalidMatrix("block triangular: empty row pointer array".into()))?;
    let bad = |m: String| Error::InvalidMatrix(format!("block triangular: {m}"));
    if row_ptr[0] != 0 || row_ptr.windows(2).any(|w| w[0] > w[1]) {
        return Err(bad("row pointers must start at 0 and never decrease".into()));
    }
    if row_ptr[n_block_rows] as usize != col_idx.len() {
        return Err(bad(format!(
            "last row pointer {} vs {} blocks",
            row_ptr[n_block_rows],
            col_idx.len()
        )));
    }
    if let Some(&c) = col_idx.iter().find(|&&c| c as usize >= n_block_rows) {
        return Err(bad(format!("block column {c} outside 0..{n_block_rows}")));
    }
    Ok(n_block_rows)
}

/// Block sizes the kernels support: 1..=[`MAX_BLOCK_SIZE`].
pub(crate) fn check_block_size(s: usize) -> Result<()> {
    if s == 0 || s > MAX_BLOCK_SIZE {
        return Err(Error::param(
            "block_size",
            format!("block size {s} is outside 1..={MAX_BLOCK_SIZE}"),
        ));
    }
    Ok(())
}

/// Check the shapes of the `trsv` kernels.
pub(crate) fn check_trsv<T: Scalar>(
    t: &BlockTriangular<T>,
    b: &Buffer<T>,
    x: &Buffer<T>,
) -> Result<()> {
    t.check()?;
    check_len("triangular solve: b length", b, t.n())?;
    check_len("triangular solve: x length", x, t.n())
}

/// Check the shapes of `block_diag_scale`: x and y of the same length, a multiple of s, and s*s
/// inverted-block entries per block row.
pub(crate) fn check_block_diag_scale<T: Scalar>(
    s: usize,
    inv_blocks: &Buffer<T>,
    x: &Buffer<T>,
    y: &Buffer<T>,
) -> Result<()> {
    check_block_size(s)?;
    let n = x.len();
    if n % s != 0 {
        return Err(Error::param(
            "block_size",
            format!("vector length {n} is not a multiple of the block size {s}"),
        ));
    }
    check_len("block_diag_scale: y length", y, n)?;
    check_len("block_diag_scale: inverted blocks", inv_blocks, n * s)
}

/// Check the shapes of `bsr_trsv_sweep`.
pub(crate) fn check_sweep<T: Scalar>(
    t: &BlockTriangular<T>,
    b: &Buffer<T>,
    x_old: Option<&Buffer<T>>,
    x_new: &Buffer<T>,
) -> Result<()> {
    check_trsv(t, b, x_new)?;
    if let Some(x) = x_old {
        check_len("triangular sweep: x_old length", x, t.n())?;
    }
    Ok(())
}

/// Check a level range against the level-rows array.
pub(crate) fn check_level(level_rows: &Buffer<u32>, level: &Range<usize>) -> Result<()> {
    if level.start > level.end || level.end > level_rows.len() {
        return Err(Error::param(
            "level",
            format!(
                "level rows {}..{} outside 0..{}",
                level.start,
                level.end,
                level_rows.len()
            ),
        ));
    }
    Ok(())
}
