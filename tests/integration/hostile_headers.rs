//! Matrix Market files whose headers declare absurd sizes (issue: a 99999999999999-row header
//! aborted the process; 3e9 rows with 2 entries thrashed past 11 GB): each is a typed error
//! within a fraction of a second and without touching the memory the header asks for.

use pipekrylov::matrix::matrix_market::{parse_matrix, parse_vector};
use pipekrylov::matrix::CooMatrix;
use pipekrylov::Error;
use std::time::{Duration, Instant};

fn coo(text: &str) -> Result<CooMatrix<f64>, Error> {
    parse_matrix::<f64>(text)
}

fn quick<R>(what: &str, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "{what}: {:?}",
        t.elapsed()
    );
    r
}

#[test]
fn huge_sparse_headers_are_refused_before_allocating() {
    // The last one was found by the fuzz target (fuzz/corpus/matrix_market/rows_1e8_one_entry.mtx):
    // a 79-byte file whose conversion took over 10 s and 1.2 GB before the limit was lowered.
    for (rows, entries) in [
        ("99999999999999", 1),
        ("3000000000", 2),
        ("200000000", 3),
        ("99999999", 1),
        ("4000000", 2),
    ] {
        let mut text =
            format!("%%MatrixMarket matrix coordinate real general\n{rows} {rows} {entries}\n");
        for k in 1..=entries {
            text += &format!("{k} {k} 1.0\n");
        }
        let r = quick(rows, || coo(&text).and_then(|m| m.to_csr()));
        match r {
            Err(Error::OutOfMemory { bytes, detail, .. }) => {
                assert!(bytes > 16 << 20, "{rows}: {bytes}");
                assert!(detail.contains("refused before allocating"), "{detail}");
            }
            other => panic!(
                "{rows} rows: expected OutOfMemory, got {:?}",
                other.map(|m| m.n_rows())
            ),
        }
    }
}

#[test]
fn contradictory_entry_counts_are_typed_errors() {
    // More entries declared than present, or than the matrix can hold.
    let texts = [
        "%%MatrixMarket matrix coordinate real general\n3000 3000 99999999999999\n1 1 1.0\n",
        "%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1.0\n",
        "%%MatrixMarket matrix array real general\n99999999999 1\n1.0\n",
    ];
    for t in texts {
        let r = quick(t, || coo(t));
        assert!(
            matches!(r, Err(Error::MatrixMarket { .. })),
            "{t}: {:?}",
            r.map(|m| m.nnz())
        );
    }
    let v = quick("vector", || {
        parse_vector::<f64>("%%MatrixMarket matrix array real general\n99999999999 1\n1.0\n")
    });
    // 1e11 slots that the 3-byte body cannot fill: refused before the zeros are allocated.
    assert!(
        matches!(v, Err(Error::OutOfMemory { ref detail, .. }) if detail.contains("refused before allocating")),
        "{:?}",
        v.map(|v| v.len())
    );
}

#[test]
fn a_large_but_sensible_matrix_still_converts() {
    // 100k rows with one entry each: dense enough, well under every limit.
    let n = 100_000;
    let mut text = format!("%%MatrixMarket matrix coordinate real general\n{n} {n} {n}\n");
    for k in 1..=n {
        text += &format!("{k} {k} 2.0\n");
    }
    let a = coo(&text).unwrap().to_csr().unwrap();
    assert_eq!((a.n_rows(), a.nnz()), (n, n));
}

#[test]
fn a_generator_size_beyond_the_machine_is_refused_up_front() {
    use pipekrylov::matrix::generate::Generator;
    // 2^31 unknowns of the 7-point stencil: about 257 GB of CSR in f64.
    let need: usize = 257 << 30;
    match pipekrylov::memory::available_bytes() {
        Some(avail) if avail < need => {
            let r = quick("poisson3d 2^31", || {
                Generator::Poisson3d.generate::<f64>(1 << 31)
            });
            assert!(
                matches!(r, Err(Error::OutOfMemory { .. })),
                "{:?}",
                r.map(|p| p.param)
            );
        }
        // A machine with that much memory (or without /proc/meminfo) has nothing to show.
        _ => {}
    }
}

#[test]
fn a_huge_mostly_empty_vector_is_refused_before_allocating() {
    // Found by the fuzz target (fuzz/corpus/matrix_market/vector_1e9_no_entries.mtx): a 64-byte
    // file whose vector reading filled 13.7 GB of zeros.
    let t = "%%MatrixMarket matrix coordinate real general\n00001713234149 1 0\n";
    let v = quick("vector 1.7e9", || parse_vector::<f64>(t));
    match v {
        Err(Error::OutOfMemory { bytes, detail, .. }) => {
            assert_eq!(bytes, 1_713_234_149 * 8);
            assert!(detail.contains("refused before allocating"), "{detail}");
        }
        other => panic!("expected OutOfMemory, got {:?}", other.map(|v| v.len())),
    }
    // The matrix of the same file is refused the same way (row pointers).
    let m = quick("matrix 1.7e9", || coo(t).and_then(|m| m.to_csr()));
    assert!(matches!(m, Err(Error::OutOfMemory { .. })));
    // A small sparse vector is still read (the zeros are cheap).
    let ok =
        parse_vector::<f64>("%%MatrixMarket matrix coordinate real general\n100000 1 1\n7 1 2.5\n")
            .unwrap();
    assert_eq!((ok.len(), ok[6]), (100_000, 2.5));
}
