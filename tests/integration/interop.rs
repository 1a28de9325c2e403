//! Round trips between `CsrMatrix` and the sparse crates of the interop features.
#![cfg(any(feature = "sprs", feature = "nalgebra-sparse", feature = "faer"))]

use crate::common::random_matrix;
use pipekrylov::matrix::CsrMatrix;

#[cfg(feature = "sprs")]
#[test]
fn sprs_round_trip_keeps_every_entry() {
    for (n, per_row, seed) in [(1, 1, 1), (31, 3, 2), (1000, 5, 3)] {
        let a = random_matrix::<f64>(n, per_row, true, seed);
        let m = a.to_sprs().unwrap();
        assert_eq!((m.rows(), m.cols(), m.nnz()), (n, n, a.nnz()));
        let back = CsrMatrix::from_sprs(&m).unwrap();
        assert_eq!(back.row_ptr(), a.row_ptr());
        assert_eq!(back.col_idx(), a.col_idx());
        assert_eq!(back.values(), a.values());
    }
}

#[cfg(feature = "sprs")]
#[test]
fn sprs_csc_and_narrow_indices_convert() {
    let a = random_matrix::<f64>(200, 4, false, 5);
    // CSC storage of the same matrix.
    let csc = a.to_sprs().unwrap().to_csc();
    let from_csc = CsrMatrix::try_from(&csc).unwrap();
    assert_eq!(from_csc.row_ptr(), a.row_ptr());
    assert_eq!(from_csc.col_idx(), a.col_idx());
    assert_eq!(from_csc.values(), a.values());
    // u32 indices and row pointers.
    let rp: Vec<u32> = a.row_ptr().iter().map(|&p| p as u32).collect();
    let ci: Vec<u32> = a.col_idx().iter().map(|&c| c as u32).collect();
    let narrow = sprs::CsMatI::<f64, u32, u32>::new((200, 200), rp, ci, a.values().to_vec());
    let b = CsrMatrix::from_sprs(&narrow).unwrap();
    assert_eq!(b.col_idx(), a.col_idx());
    // A rectangular matrix keeps its shape.
    let r = sprs::CsMat::new((2, 5), vec![0, 1, 2], vec![4, 0], vec![1.0f32, 2.0]);
    let rc = CsrMatrix::from_sprs(&r).unwrap();
    assert_eq!((rc.n_rows(), rc.n_cols(), rc.nnz()), (2, 5, 2));
    assert_eq!(rc.to_sprs().unwrap(), r);
}

#[cfg(feature = "nalgebra-sparse")]
#[test]
fn nalgebra_sparse_round_trip_and_csc() {
    for (n, per_row, seed) in [(1, 1, 1), (31, 3, 2), (1000, 5, 3)] {
        let a = random_matrix::<f64>(n, per_row, true, seed);
        let m = a.to_nalgebra_sparse().unwrap();
        assert_eq!((m.nrows(), m.ncols(), m.nnz()), (n, n, a.nnz()));
        let back = CsrMatrix::from_nalgebra_sparse(&m).unwrap();
        assert_eq!(back.row_ptr(), a.row_ptr());
        assert_eq!(back.col_idx(), a.col_idx());
        assert_eq!(back.values(), a.values());
        let csc = nalgebra_sparse::CscMatrix::from(&m);
        let from_csc = CsrMatrix::from_nalgebra_sparse_csc(&csc).unwrap();
        assert_eq!(from_csc.col_idx(), a.col_idx());
        assert_eq!(from_csc.values(), a.values());
    }
}

#[cfg(feature = "faer")]
#[test]
fn faer_round_trip_csc_narrow_and_uncompressed() {
    use faer::sparse::{SparseRowMat, SymbolicSparseRowMat};
    for (n, per_row, seed) in [(1, 1, 1), (31, 3, 2), (1000, 5, 3)] {
        let a = random_matrix::<f64>(n, per_row, true, seed);
        let m = a.to_faer().unwrap();
        assert_eq!((m.nrows(), m.ncols()), (n, n));
        let back = CsrMatrix::from_faer(m.as_ref()).unwrap();
        assert_eq!(back.row_ptr(), a.row_ptr());
        assert_eq!(back.col_idx(), a.col_idx());
        assert_eq!(back.values(), a.values());
        // Column-major storage of the same matrix.
        let csc = m.to_col_major().unwrap();
        let from_csc = CsrMatrix::from_faer_csc(csc.as_ref()).unwrap();
        assert_eq!(from_csc.row_ptr(), a.row_ptr());
        assert_eq!(from_csc.col_idx(), a.col_idx());
        assert_eq!(from_csc.values(), a.values());
    }
    // u32 indices, uncompressed rows (row_nnz: only the first entries of each row count) and a
    // rectangular shape, in f32.
    let sym = SymbolicSparseRowMat::<u32>::new_checked(
        2,
        5,
        vec![0, 3, 5],
        Some(vec![2, 1]),
        vec![0, 4, 1, 2, 3],
    );
    let m = SparseRowMat::new(sym, vec![1.0f32, 2.0, 9.0, 3.0, 9.0]);
    let a = CsrMatrix::from_faer(m.as_ref()).unwrap();
    assert_eq!((a.n_rows(), a.n_cols(), a.nnz()), (2, 5, 3));
    assert_eq!(a.row(0), (&[0usize, 4][..], &[1.0f32, 2.0][..]));
    assert_eq!(a.row(1), (&[2usize][..], &[3.0f32][..]));
}
