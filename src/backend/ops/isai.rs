//! The operand of the `isai_solve` kernel (`kernels/isai.kc`): the block pattern of an
//! approximate inverse, and the shape checks of [`super::PrecondOps::isai_solve`].

use super::trsv::BlockTriangular;
use crate::backend::buffer::{check_len, Buffer};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// The block pattern of an approximate inverse N ~ T^-1 as the `isai_solve` kernel takes it,
/// resident on a backend: block column j holds the rows `row_idx[col_ptr[j]..col_ptr[j+1]]`
/// (ascending), and `dest[e]` is the position of CSC entry e in the block CSR of N that the
/// kernel writes (so no transpose is needed afterwards).
#[derive(Debug)]
pub struct InversePattern {
    pub(crate) n_block_cols: usize,
    pub(crate) col_ptr: Buffer<u32>,
    pub(crate) row_idx: Buffer<u32>,
    pub(crate) dest: Buffer<u32>,
}

impl InversePattern {
    /// Check and upload: `col_ptr` has n_block_cols + 1 non-decreasing entries ending at the
    /// number of entries, the rows of each column are strictly ascending and below
    /// n_block_cols, and `dest` is a permutation of 0..entries (every block of N written by
    /// exactly one column). Anything else is an [`Error::InvalidMatrix`].
    pub fn upload<B: super::VectorOps + ?Sized>(
        backend: &B,
        col_ptr: &[u32],
        row_idx: &[u32],
        dest: &[u32],
    ) -> Result<Self> {
        let bad = |m: String| Error::InvalidMatrix(format!("inverse pattern: {m}"));
        let n_block_cols = col_ptr
            .len()
            .checked_sub(1)
            .ok_or_else(|| bad("empty column pointer array".into()))?;
        if col_ptr[0] != 0 || col_ptr.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad(
                "column pointers must start at 0 and never decrease".into()
            ));
        }
        let entries = row_idx.len();
        if col_ptr[n_block_cols] as usize != entries || dest.len() != entries {
            return Err(bad(format!(
                "last column pointer {}, {} rows and {} destinations disagree",
                col_ptr[n_block_cols],
                entries,
                dest.len()
            )));
        }
        for j in 0..n_block_cols {
            let rows = &row_idx[col_ptr[j] as usize..col_ptr[j + 1] as usize];
            if rows.windows(2).any(|w| w[0] >= w[1])
                || rows.iter().any(|&r| r as usize >= n_block_cols)
            {
                return Err(bad(format!(
                    "rows of block column {j} are not ascending inside 0..{n_block_cols}"
                )));
            }
        }
        let mut seen = vec![false; entries];
        for &d in dest {
            match seen.get_mut(d as usize) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(bad(format!(
                        "destination {d} repeated or outside 0..{entries}"
                    )))
                }
            }
        }
        Ok(Self {
            n_block_cols,
            col_ptr: backend.upload(col_ptr)?,
            row_idx: backend.upload(row_idx)?,
            dest: backend.upload(dest)?,
        })
    }
    /// Number of block columns (and rows) of N.
    pub fn n_block_cols(&self) -> usize {
        self.n_block_cols
    }
    /// Number of blocks of N.
    pub fn n_blocks(&self) -> usize {
        self.row_idx.len()
    }
    /// Device bytes held.
    pub fn bytes(&self) -> usize {
        self.col_ptr.bytes() + self.row_idx.bytes() + self.dest.bytes()
    }
}

/// Check `isai_solve`: factor and pattern of the same size, `out` sized for every block of N.
pub(crate) fn check_isai<T: Scalar>(
    t: &BlockTriangular<T>,
    pattern: &InversePattern,
    out: &Buffer<T>,
) -> Result<()> {
    t.check()?;
    if pattern.n_block_cols != t.n_block_rows {
        return Err(Error::dims(
            "isai_solve: pattern block columns vs factor block rows",
            t.n_block_rows,
            pattern.n_block_cols,
        ));
    }
    let s = t.block_size;
    check_len(
        "isai_solve: pattern column pointers",
        &pattern.col_ptr,
        pattern.n_block_cols + 1,
    )?;
    check_len(
        "isai_solve: destinations",
        &pattern.dest,
        pattern.n_blocks(),
    )?;
    check_len(
        "isai_solve: output (blocks * s * s)",
        out,
        pattern.n_blocks() * s * s,
    )
}
