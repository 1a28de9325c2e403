//! The Krylov basis of GMRES: columns of one buffer.

use crate::backend::buffer::{check_len, Buffer};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// `cols` vectors of length `n` stored contiguously (column `j` at `[j n, (j + 1) n)`): the
/// Krylov basis of GMRES, so that batched dots and multi-AXPY run in one pass.
#[derive(Debug)]
pub struct Basis<T> {
    pub(crate) data: Buffer<T>,
    n: usize,
    cols: usize,
}

impl<T: Scalar> Basis<T> {
    /// Wrap a buffer of `n * cols` elements.
    pub fn from_buffer(data: Buffer<T>, n: usize, cols: usize) -> Result<Self> {
        check_len("basis buffer length (n * cols)", &data, n * cols)?;
        Ok(Self { data, n, cols })
    }
    /// Vector length.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// The underlying buffer.
    pub fn buffer(&self) -> &Buffer<T> {
        &self.data
    }
    pub(crate) fn check_col(&self, j: usize) -> Result<()> {
        if j >= self.cols {
            return Err(Error::param(
                "column",
                format!("basis column {j} out of range ({} columns)", self.cols),
            ));
        }
        Ok(())
    }
    pub(crate) fn check_range(&self, r: &Range<usize>) -> Result<()> {
        if r.start > r.end || r.end > self.cols {
            return Err(Error::param(
                "columns",
                format!("basis columns {r:?} out of range ({} columns)", self.cols),
            ));
        }
        Ok(())
    }
}
