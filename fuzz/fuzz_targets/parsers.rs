//! The small parsers users type: `--generate NAME:N` (generating only small sizes), the
//! format names, and generator names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pipekrylov::matrix::generate::parse_spec;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((g, n)) = parse_spec(text) {
        // Generate only what a fuzz iteration can afford; large sizes are the size checks'
        // business (tests/integration/hostile_headers.rs).
        if n <= 4096 {
            if let Ok(p) = g.generate::<f64>(n) {
                let a = p.matrix;
                assert_eq!(a.row_ptr()[a.n_rows()], a.nnz());
            }
        }
    }
    let _ = text.parse::<pipekrylov::matrix::generate::Generator>();
});
