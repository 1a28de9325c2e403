//! The Matrix Market reader on arbitrary text: headers, coordinate and array files of every
//! field and symmetry, vectors. Must return a value or a typed error: never panic, abort or
//! allocate beyond what the input can fill (libFuzzer's -rss_limit_mb catches that).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pipekrylov::matrix::matrix_market::{parse_header, parse_matrix, parse_vector};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_header(text);
    if let Ok(coo) = parse_matrix::<f64>(text) {
        // A parsed matrix converts to CSR (or says why), and the CSR is consistent.
        if let Ok(a) = coo.to_csr() {
            assert_eq!(a.row_ptr().len(), a.n_rows() + 1);
            assert_eq!(a.row_ptr()[a.n_rows()], a.nnz());
            assert!(a.col_idx().iter().all(|&c| c < a.n_cols()));
        }
    }
    let _ = parse_matrix::<f32>(text);
    let _ = parse_vector::<f64>(text);
});
