//! `pipekrylov export`: write a generated or loaded matrix as Matrix Market, or as the raw
//! binary CSR that `benches/cusparse_spmv.cu` (the cuSPARSE reference of the SpMV benchmark)
//! reads without a text parser.
//!
//! Raw layout, little endian: the 8 bytes `PKCSR1\0\0`, then `u64` rows, columns and nonzeros,
//! then `u32` row pointers (rows + 1), `u32` column indices (nnz) and `f64` values (nnz).

use crate::error::{Error, Result};
use crate::matrix::{matrix_market, CsrMatrix};
use std::io::Write;

/// Magic bytes of the raw CSR layout.
pub const RAW_MAGIC: &[u8; 8] = b"PKCSR1\0\0";

/// Write `a` to `path` in the raw CSR layout (module documentation).
pub fn write_raw_csr(path: &str, a: &CsrMatrix<f64>) -> Result<()> {
    let io = |e: std::io::Error| Error::Io {
        path: path.to_string(),
        message: e.to_string(),
    };
    let (row_ptr, col_idx) = a.indices_u32()?;
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::new(file);
    w.write_all(RAW_MAGIC).map_err(io)?;
    for v in [a.n_rows(), a.n_cols(), a.nnz()] {
        w.write_all(&(v as u64).to_le_bytes()).map_err(io)?;
    }
    for v in row_ptr.iter().chain(&col_idx) {
        w.write_all(&v.to_le_bytes()).map_err(io)?;
    }
    for v in a.values() {
        w.write_all(&v.to_le_bytes()).map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Write `a` to `path`: raw CSR when `raw`, Matrix Market otherwise.
pub fn run(a: &CsrMatrix<f64>, path: &str, raw: bool) -> Result<()> {
    if raw {
        write_raw_csr(path, a)
    } else {
        matrix_market::write_matrix_file(path, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_layout_round_trips_by_hand() {
        let a = CsrMatrix::from_triplets(2, 3, &[(0, 2, 1.5), (1, 0, -2.0), (1, 1, 4.0)]).unwrap();
        let dir = std::env::temp_dir().join(format!("pk-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.csr");
        write_raw_csr(path.to_str().unwrap(), &a).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(&bytes[..8], RAW_MAGIC);
        let u64_at =
            |k: usize| u64::from_le_bytes(bytes[8 + 8 * k..16 + 8 * k].try_into().unwrap());
        assert_eq!((u64_at(0), u64_at(1), u64_at(2)), (2, 3, 3));
        let u32s: Vec<u32> = bytes[32..32 + 4 * 6]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(u32s, [0, 1, 3, 2, 0, 1]);
        let vals: Vec<f64> = bytes[56..]
            .chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(vals, [1.5, -2.0, 4.0]);
    }
}
