//! Matrix Market reader / writer: round trips for every header kind, expansion rules, accepted
//! oddities (comments, blank lines, CRLF) and every error with its line number
//! (RELIABILITY.md rows 21-23).

use pipekrylov::matrix::{matrix_market::*, CooMatrix, CsrMatrix};
use pipekrylov::Error;

// ---------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------

fn csr(text: &str) -> CsrMatrix<f64> {
    parse_matrix::<f64>(text)
        .expect("parse")
        .to_csr()
        .expect("to_csr")
}

/// Dense row-major view of a CSR matrix (small test matrices only).
fn dense<T: pipekrylov::Scalar>(a: &CsrMatrix<T>) -> Vec<Vec<f64>> {
    let mut d = vec![vec![0.0; a.n_cols()]; a.n_rows()];
    for (i, row) in d.iter_mut().enumerate() {
        let (c, v) = a.row(i);
        for (&j, &x) in c.iter().zip(v) {
            row[j] += x.to_f64();
        }
    }
    d
}

/// The line and message of a Matrix Market error; anything else fails the test.
fn mm_error<T: std::fmt::Debug>(r: pipekrylov::Result<T>) -> (usize, String) {
    match r {
        Err(Error::MatrixMarket { line, message }) => (line, message),
        other => panic!("expected Error::MatrixMarket, got {other:?}"),
    }
}

/// Parse `text` as an f64 matrix, expect an error at `line` whose message contains every
/// string of `needles` (case-insensitive).
fn expect_err(text: &str, line: usize, needles: &[&str]) {
    let (got, message) = mm_error(parse_matrix::<f64>(text));
    assert_eq!(got, line, "wrong line for {text:?}: message {message:?}");
    let lower = message.to_lowercase();
    for n in needles {
        assert!(
            lower.contains(&n.to_lowercase()),
            "message {message:?} lacks {n:?} (input {text:?})"
        );
    }
}

fn write_to_string<T: pipekrylov::Scalar>(a: &CsrMatrix<T>, h: MmHeader) -> String {
    let mut out = Vec::new();
    write_matrix_with(&mut out, a, h).expect("write");
    String::from_utf8(out).expect("utf8")
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("pipekrylov-mm-{}-{name}", std::process::id()))
}

/// A general 4x5 matrix with awkward values and an empty row.
fn general_matrix() -> CsrMatrix<f64> {
    let mut a = CooMatrix::new(4, 5);
    let entries = [
        (0, 0, 0.1),
        (0, 4, -1.0e-300),
        (1, 2, std::f64::consts::PI),
        (1, 3, 1.0e300),
        (3, 0, -123_456_789.123_456_79),
        (3, 1, f64::from_bits(1)), // smallest subnormal
        (3, 4, 1.0 / 3.0),
    ];
    for (i, j, v) in entries {
        a.push(i, j, v).unwrap();
    }
    a.to_csr().unwrap()
}

/// Symmetric 4x4 with a full diagonal and off-diagonal entries.
fn symmetric_matrix() -> CsrMatrix<f64> {
    let mut a = CooMatrix::new(4, 4);
    for i in 0..4 {
        a.push(i, i, 4.0 + i as f64 * 0.25).unwrap();
    }
    for (i, j, v) in [(1, 0, -1.5), (3, 1, 0.7), (2, 0, 1e-5)] {
        a.push(i, j, v).unwrap();
        a.push(j, i, v).unwrap();
    }
    a.to_csr().unwrap()
}

/// Skew-symmetric 4x4 (zero diagonal, not stored).
fn skew_matrix() -> CsrMatrix<f64> {
    let mut a = CooMatrix::new(4, 4);
    for (i, j, v) in [(1, 0, 2.5), (3, 0, -1.0), (3, 2, 0.125)] {
        a.push(i, j, v).unwrap();
        a.push(j, i, -v).unwrap();
    }
    a.to_csr().unwrap()
}

/// Integer values through an odd function of the value, so symmetry and skew-symmetry are
/// kept and no value becomes zero.
fn integer_valued(a: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let mut b = a.clone();
    for v in b.values_mut() {
        *v = v.signum() * ((v.abs() * 8.0).round() + 1.0);
    }
    b
}

fn pattern_of(a: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let mut b = a.clone();
    b.values_mut().iter_mut().for_each(|v| *v = 1.0);
    b
}

fn all_headers() -> Vec<MmHeader> {
    let mut v = Vec::new();
    for format in [MmFormat::Coordinate, MmFormat::Array] {
        for field in [MmField::Real, MmField::Integer, MmField::Pattern] {
            for symmetry in [
                MmSymmetry::General,
                MmSymmetry::Symmetric,
                MmSymmetry::SkewSymmetric,
            ] {
                v.push(MmHeader {
                    format,
                    field,
                    symmetry,
                });
            }
        }
    }
    v
}

fn is_allowed(h: &MmHeader) -> bool {
    h.field != MmField::Pattern
        || (h.format == MmFormat::Coordinate && h.symmetry != MmSymmetry::SkewSymmetric)
}

/// A matrix that can be written faithfully under `h`.
fn matrix_for(h: &MmHeader) -> CsrMatrix<f64> {
    let base = match h.symmetry {
        MmSymmetry::General => general_matrix(),
        MmSymmetry::Symmetric => symmetric_matrix(),
        MmSymmetry::SkewSymmetric => skew_matrix(),
    };
    match h.field {
        MmField::Real => base,
        MmField::Integer => integer_valued(&base),
        MmField::Pattern => pattern_of(&base),
    }
}

// ---------------------------------------------------------------------------------------------
// round trips
// ---------------------------------------------------------------------------------------------

#[test]
fn write_matrix_round_trips_general_real_exactly() {
    let a = general_matrix();
    let mut out = Vec::new();
    write_matrix(&mut out, &a).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real general\n4 5 7\n"));
    let b = csr(&text);
    assert_eq!(a, b);
    // bit-exact, not just ==
    for (x, y) in a.values().iter().zip(b.values()) {
        assert_eq!(x.to_bits(), y.to_bits());
    }
}

#[test]
fn every_header_kind_round_trips() {
    let mut tested = 0;
    for h in all_headers() {
        if !is_allowed(&h) {
            continue;
        }
        let a = matrix_for(&h);
        let text = write_to_string(&a, h);
        assert_eq!(parse_header(&text).unwrap(), h, "{text}");
        assert!(text.starts_with(&h.to_string()));
        let (h2, coo) = parse_matrix_with_header::<f64>(&text).unwrap();
        assert_eq!(h2, h);
        let b = coo.to_csr().unwrap();
        assert_eq!(a, b, "round trip failed for {h}:\n{text}");
        tested += 1;
    }
    // coordinate: 3 real + 3 integer + 2 pattern; array: 3 real + 3 integer
    assert_eq!(tested, 14);
}

#[test]
fn symmetric_and_skew_writers_store_one_triangle() {
    let h = MmHeader {
        format: MmFormat::Coordinate,
        field: MmField::Real,
        symmetry: MmSymmetry::Symmetric,
    };
    let text = write_to_string(&symmetric_matrix(), h);
    // 4 diagonal + 3 lower entries
    assert_eq!(text.lines().nth(1), Some("4 4 7"));
    for l in text.lines().skip(2) {
        let t: Vec<usize> = l.split(' ').take(2).map(|s| s.parse().unwrap()).collect();
        assert!(t[0] >= t[1], "upper entry {l}");
    }
    let h = MmHeader {
        symmetry: MmSymmetry::SkewSymmetric,
        ..h
    };
    let text = write_to_string(&skew_matrix(), h);
    assert_eq!(text.lines().nth(1), Some("4 4 3"));
    for l in text.lines().skip(2) {
        let t: Vec<usize> = l.split(' ').take(2).map(|s| s.parse().unwrap()).collect();
        assert!(t[0] > t[1], "non-strictly-lower entry {l}");
    }
}

#[test]
fn integer_and_pattern_output_format() {
    let a = CsrMatrix::new(2, 2, vec![0, 1, 2], vec![1, 0], vec![3.0, -42.0]).unwrap();
    let h = MmHeader {
        format: MmFormat::Coordinate,
        field: MmField::Integer,
        symmetry: MmSymmetry::General,
    };
    assert_eq!(
        write_to_string(&a, h),
        "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 3\n2 1 -42\n"
    );
    let h = MmHeader {
        field: MmField::Pattern,
        ..h
    };
    assert_eq!(
        write_to_string(&a, h),
        "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n"
    );
    // read back as pattern: every value is 1
    let b = csr(&write_to_string(&a, h));
    assert_eq!(b.values(), &[1.0, 1.0]);
}

#[test]
fn vector_round_trip_array() {
    let v = vec![0.1, -2.5e-310, 1.0e308, 0.0, -0.0, std::f64::consts::E];
    let mut out = Vec::new();
    write_vector(&mut out, &v).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix array real general\n6 1\n"));
    let w = parse_vector::<f64>(&text).unwrap();
    assert_eq!(w.len(), v.len());
    for (x, y) in v.iter().zip(&w) {
        assert_eq!(x.to_bits(), y.to_bits());
    }
}

#[test]
fn vector_from_coordinate_fills_zeros() {
    // missing entries are zero, duplicates summed
    let text = "%%MatrixMarket matrix coordinate real general\n5 1 3\n4 1 2.5\n2 1 -1\n4 1 0.5\n";
    assert_eq!(
        parse_vector::<f64>(text).unwrap(),
        vec![0.0, -1.0, 0.0, 3.0, 0.0]
    );
    // an all-zero coordinate vector
    let text = "%%MatrixMarket matrix coordinate real general\n3 1 0\n";
    assert_eq!(parse_vector::<f64>(text).unwrap(), vec![0.0; 3]);
}

#[test]
fn vector_needs_one_column() {
    let text = "%%MatrixMarket matrix array real general\n% c\n2 2\n1\n2\n3\n4\n";
    let (line, msg) = mm_error(parse_vector::<f64>(text));
    assert_eq!(line, 3);
    assert!(msg.contains("2 x 2"), "{msg}");
}

#[test]
fn array_matrix_is_column_major_and_drops_zeros() {
    let text = "%%MatrixMarket matrix array real general\n2 3\n1\n2\n0\n4\n5\n0\n";
    let a = csr(text);
    assert_eq!(dense(&a), vec![vec![1.0, 0.0, 5.0], vec![2.0, 4.0, 0.0]]);
    assert_eq!(a.nnz(), 4);
}

#[test]
fn array_symmetric_reads_lower_triangle() {
    // 3x3 lower triangle column-major: (1,1) (2,1) (3,1) (2,2) (3,2) (3,3)
    let text = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
    let a = csr(text);
    assert_eq!(
        dense(&a),
        vec![
            vec![1.0, 2.0, 3.0],
            vec![2.0, 4.0, 5.0],
            vec![3.0, 5.0, 6.0]
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// expansion
// ---------------------------------------------------------------------------------------------

#[test]
fn symmetric_expansion_does_not_duplicate_diagonal() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n\
                3 3 5\n1 1 4\n2 1 -1\n2 2 5\n3 2 -2\n3 3 6\n";
    let coo = parse_matrix::<f64>(text).unwrap();
    assert_eq!(coo.nnz(), 7); // 3 diagonal + 2 * 2 off-diagonal
    let a = coo.to_csr().unwrap();
    assert_eq!(a.nnz(), 7);
    assert_eq!(a.diagonal(), vec![4.0, 5.0, 6.0]);
    assert_eq!(
        dense(&a),
        vec![
            vec![4.0, -1.0, 0.0],
            vec![-1.0, 5.0, -2.0],
            vec![0.0, -2.0, 6.0]
        ]
    );
}

#[test]
fn symmetric_upper_triangle_file_is_mirrored_too() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 2 3\n2 2 1\n";
    assert_eq!(dense(&csr(text)), vec![vec![0.0, 3.0], vec![3.0, 1.0]]);
}

#[test]
fn symmetric_pattern_expansion() {
    let text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n2 2\n";
    let a = csr(text);
    assert_eq!(a.nnz(), 4);
    assert_eq!(
        dense(&a),
        vec![
            vec![1.0, 0.0, 1.0],
            vec![0.0, 1.0, 0.0],
            vec![1.0, 0.0, 0.0]
        ]
    );
}

#[test]
fn skew_expansion_negates() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 3\n3 1 -2\n";
    let coo = parse_matrix::<f64>(text).unwrap();
    assert_eq!(coo.nnz(), 4);
    let a = coo.to_csr().unwrap();
    assert_eq!(
        dense(&a),
        vec![
            vec![0.0, -3.0, 2.0],
            vec![3.0, 0.0, 0.0],
            vec![-2.0, 0.0, 0.0]
        ]
    );
    assert_eq!(a.diagonal(), vec![0.0; 3]);
}

// ---------------------------------------------------------------------------------------------
// accepted oddities
// ---------------------------------------------------------------------------------------------

#[test]
fn comments_blank_lines_crlf_tabs_and_whitespace_accepted() {
    let text = concat!(
        "%%MatrixMarket matrix coordinate real general\r\n",
        "% a comment\r\n",
        "\r\n",
        "   %indented comment\r\n",
        "\t 2 3 3 \t\r\n",
        "\r\n",
        "1\t1\t1.5\r\n",
        "% comment between entries\r\n",
        "  2 3 -2e0  \r\n",
        "   \t \r\n",
        "2 1 +7\r\n",
        "% trailing comment\r\n",
        "\r\n",
    );
    let a = csr(text);
    assert_eq!(dense(&a), vec![vec![1.5, 0.0, 0.0], vec![7.0, 0.0, -2.0]]);
}

#[test]
fn banner_keywords_case_insensitive() {
    let text = "%%MATRIXMARKET Matrix COORDINATE Real GENERAL\n1 1 1\n1 1 2\n";
    assert_eq!(csr(text).values(), &[2.0]);
}

#[test]
fn duplicate_entries_are_summed() {
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n1 1 2\n2 2 5\n";
    assert_eq!(csr(text).values(), &[3.0, 5.0]);
}

#[test]
fn integer_field_and_empty_matrix() {
    let text = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 -3\n2 2 +12\n";
    assert_eq!(csr(text).values(), &[-3.0, 12.0]);
    let empty = csr("%%MatrixMarket matrix coordinate real general\n3 4 0\n");
    assert_eq!((empty.n_rows(), empty.n_cols(), empty.nnz()), (3, 4, 0));
}

#[test]
fn f32_reading_works() {
    let text =
        "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 0.1\n2 1 1e30\n2 2 -3.25\n";
    let a = parse_matrix::<f32>(text).unwrap().to_csr().unwrap();
    assert_eq!(a.values(), &[0.1f32, 1e30f32, -3.25f32]);
    let v =
        parse_vector::<f32>("%%MatrixMarket matrix array real general\n2 1\n0.3\n-7\n").unwrap();
    assert_eq!(v, vec![0.3f32, -7.0]);
    // a value finite in f64 but not in f32
    expect_err_f32(
        "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e300\n",
        3,
    );
}

fn expect_err_f32(text: &str, line: usize) {
    let (got, msg) = mm_error(parse_matrix::<f32>(text));
    assert_eq!(got, line, "{msg}");
    assert!(msg.contains("overflow"), "{msg}");
}

#[test]
fn f32_matrix_round_trips_exactly() {
    let mut coo = CooMatrix::<f32>::new(3, 3);
    let entries = [
        (0, 0, 0.1f32),
        (0, 2, f32::MAX),
        (1, 1, f32::from_bits(1)), // smallest f32 subnormal
        (2, 0, -1.0 / 3.0),
        (2, 2, f32::MIN_POSITIVE),
    ];
    for (i, j, v) in entries {
        coo.push(i, j, v).unwrap();
    }
    let a = coo.to_csr().unwrap();
    let mut out = Vec::new();
    write_matrix(&mut out, &a).unwrap();
    let b = parse_matrix::<f32>(std::str::from_utf8(&out).unwrap())
        .unwrap()
        .to_csr()
        .unwrap();
    assert_eq!(a, b);
    for (x, y) in a.values().iter().zip(b.values()) {
        assert_eq!(x.to_bits(), y.to_bits());
    }
}

// ---------------------------------------------------------------------------------------------
// errors, each with its line number
// ---------------------------------------------------------------------------------------------

const GEN: &str = "%%MatrixMarket matrix coordinate real general\n";

#[test]
fn empty_input_rejected() {
    expect_err("", 0, &["empty"]);
    expect_err("  \n\n \r\n", 0, &["empty"]);
}

#[test]
fn bad_or_missing_banner_at_line_1() {
    expect_err("3 3 1\n1 1 1\n", 1, &["%%MatrixMarket", "`3 3 1`"]);
    expect_err(
        "% just a comment\n3 3 1\n1 1 1\n",
        1,
        &["expected a banner"],
    );
    expect_err(
        "%%MatrixMarkt matrix coordinate real general\n1 1 0\n",
        1,
        &["%%MatrixMarkt"],
    );
    expect_err(
        "%%MatrixMarket matrix coordinate real\n1 1 0\n",
        1,
        &["expected 4"],
    );
    expect_err(
        "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n",
        1,
        &["expected 4"],
    );
    expect_err(
        "%%MatrixMarket vector coordinate real general\n1 1 0\n",
        1,
        &["`vector`", "`matrix`"],
    );
    expect_err(
        "%%MatrixMarket matrix sparse real general\n1 1 0\n",
        1,
        &["`sparse`", "coordinate"],
    );
    expect_err(
        "%%MatrixMarket matrix coordinate double general\n1 1 0\n",
        1,
        &["`double`", "real"],
    );
    expect_err(
        "%%MatrixMarket matrix coordinate real diagonal\n1 1 0\n",
        1,
        &["`diagonal`", "symmetric"],
    );
}

#[test]
fn complex_and_hermitian_rejected() {
    expect_err(
        "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
        1,
        &["complex data cannot be read into a real matrix"],
    );
    expect_err(
        "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
        1,
        &["complex data cannot be read into a real matrix"],
    );
    let (line, _) = mm_error(parse_vector::<f64>(
        "%%MatrixMarket matrix array complex general\n1 1\n1 0\n",
    ));
    assert_eq!(line, 1);
}

#[test]
fn invalid_header_combinations_rejected() {
    expect_err(
        "%%MatrixMarket matrix array pattern general\n1 1\n",
        1,
        &["pattern", "array"],
    );
    expect_err(
        "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n",
        1,
        &["pattern", "skew"],
    );
}

#[test]
fn size_line_errors() {
    expect_err(&format!("{GEN}% c\n3 x 1\n1 1 1\n"), 3, &["`x`", "integer"]);
    expect_err(
        &format!("{GEN}3 3\n1 1 1\n"),
        2,
        &["2 token", "rows cols nnz"],
    );
    expect_err(
        &format!("{GEN}3 3 1 1\n1 1 1\n"),
        2,
        &["4 token", "rows cols nnz"],
    );
    expect_err(&format!("{GEN}3 -3 1\n"), 2, &["`-3`"]);
    expect_err(
        &format!("{GEN}99999999999999999999999 3 1\n1 1 1\n"),
        2,
        &["overflow"],
    );
    expect_err(
        "%%MatrixMarket matrix array real general\n3 3 9\n",
        2,
        &["rows cols"],
    );
    // missing size line: reported at the last line
    expect_err(
        &format!("{GEN}% only comments\n\n"),
        3,
        &["missing size line"],
    );
    expect_err(GEN, 1, &["missing size line"]);
}

#[test]
fn symmetric_needs_square() {
    expect_err(
        "%%MatrixMarket matrix coordinate real symmetric\n\n2 3 1\n1 1 1\n",
        3,
        &["square", "2 x 3"],
    );
    expect_err(
        "%%MatrixMarket matrix array real skew-symmetric\n3 2\n1\n",
        2,
        &["square"],
    );
}

#[test]
fn entry_token_count_errors() {
    expect_err(
        &format!("{GEN}2 2 2\n1 1 1\n2 2\n"),
        4,
        &["2 token", "row col value"],
    );
    expect_err(&format!("{GEN}2 2 2\n1 1 1 0\n2 2 1\n"), 3, &["4 token"]);
    expect_err(
        "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n",
        3,
        &["3 token", "row col"],
    );
    expect_err(
        "%%MatrixMarket matrix array real general\n2 1\n1 2\n3\n",
        3,
        &["one value per line"],
    );
}

#[test]
fn non_numeric_tokens() {
    expect_err(&format!("{GEN}2 2 1\na 1 1\n"), 3, &["row index `a`"]);
    expect_err(
        &format!("{GEN}2 2 1\n1 1.0 1\n"),
        3,
        &["column index `1.0`"],
    );
    expect_err(&format!("{GEN}2 2 1\n1 -1 1\n"), 3, &["`-1`"]);
    expect_err(
        &format!("{GEN}2 2 1\n1 1 abc\n"),
        3,
        &["`abc`", "real number"],
    );
    expect_err(&format!("{GEN}2 2 1\n1 1 1.5.2\n"), 3, &["`1.5.2`"]);
    expect_err(
        "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
        3,
        &["`1.5`", "integer"],
    );
    expect_err(
        "%%MatrixMarket matrix array real general\n2 1\n1\nx\n",
        4,
        &["`x`"],
    );
}

#[test]
fn index_out_of_range() {
    expect_err(
        &format!("{GEN}3 4 2\n1 1 1\n0 2 1\n"),
        4,
        &["row index 0", "1-based"],
    );
    expect_err(
        &format!("{GEN}3 4 1\n1 0 1\n"),
        3,
        &["column index 0", "1-based"],
    );
    expect_err(
        &format!("{GEN}3 4 1\n4 1 1\n"),
        3,
        &["row index 4", "1..=3"],
    );
    expect_err(
        &format!("{GEN}3 4 1\n3 5 1\n"),
        3,
        &["column index 5", "1..=4"],
    );
    // the last valid indices are fine
    assert_eq!(csr(&format!("{GEN}3 4 1\n3 4 1\n")).nnz(), 1);
}

#[test]
fn index_integer_overflow() {
    expect_err(
        &format!("{GEN}3 3 1\n99999999999999999999999 1 1\n"),
        3,
        &["overflow"],
    );
    expect_err(
        &format!("{GEN}3 3 1\n1 18446744073709551616 1\n"),
        3,
        &["overflow"],
    );
}

#[test]
fn more_entries_than_declared() {
    expect_err(
        &format!("{GEN}2 2 2\n1 1 1\n2 2 1\n% c\n1 2 1\n"),
        6,
        &["more entries", "2 declared"],
    );
    expect_err(
        "%%MatrixMarket matrix array real general\n2 1\n1\n2\n3\n",
        5,
        &["more entries"],
    );
}

#[test]
fn truncated_file_reports_last_line_and_counts() {
    expect_err(
        &format!("{GEN}% header comment\n3 3 5\n1 1 1\n2 2 1\n3 3 1\n"),
        6,
        &["expected 5 entries", "found 3"],
    );
    // trailing comments count as lines: the last line is reported
    expect_err(
        &format!("{GEN}3 3 2\n1 1 1\n% end\n\n"),
        5,
        &["expected 2 entries", "found 1"],
    );
    expect_err(
        "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3",
        5,
        &["expected 4 entries", "found 3"],
    );
    // truncated in the middle of a line: the line has too few tokens
    expect_err(&format!("{GEN}3 3 2\n1 1 1\n2 2"), 4, &["2 token"]);
}

#[test]
fn overflow_and_non_finite_values() {
    expect_err(
        &format!("{GEN}1 1 1\n1 1 1e999\n"),
        3,
        &["`1e999`", "overflow"],
    );
    expect_err(&format!("{GEN}1 1 1\n1 1 -1.7e309\n"), 3, &["overflow"]);
    for tok in ["nan", "NaN", "inf", "-inf", "+Infinity"] {
        expect_err(&format!("{GEN}1 1 1\n1 1 {tok}\n"), 3, &[tok, "finite"]);
    }
    expect_err(
        "%%MatrixMarket matrix array real general\n1 1\nnan\n",
        3,
        &["finite"],
    );
    let (line, _) = mm_error(parse_vector::<f64>(
        "%%MatrixMarket matrix array real general\n2 1\n1\ninf\n",
    ));
    assert_eq!(line, 4);
    // integer field: a 400-digit integer overflows f64
    let huge = "9".repeat(400);
    expect_err(
        &format!("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 {huge}\n"),
        3,
        &["overflow"],
    );
}

#[test]
fn skew_diagonal_entry_rejected() {
    expect_err(
        "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 0\n",
        4,
        &["diagonal", "skew"],
    );
}

#[test]
fn symmetric_file_mixing_triangles_rejected() {
    // (2,1) and (1,2) would otherwise both be mirrored and summed into wrong values
    expect_err(
        "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n% c\n1 2 1\n",
        5,
        &["above the diagonal", "line 3"],
    );
}

#[test]
fn error_display_names_the_line() {
    let e = parse_matrix::<f64>(&format!("{GEN}2 2 1\n3 1 1\n")).unwrap_err();
    let s = e.to_string();
    assert!(s.contains("line 3"), "{s}");
    assert!(s.contains("`3 1 1`"), "{s}");
}

// ---------------------------------------------------------------------------------------------
// writer refusals
// ---------------------------------------------------------------------------------------------

#[test]
fn writer_refuses_what_it_cannot_represent() {
    let h = |format, field, symmetry| MmHeader {
        format,
        field,
        symmetry,
    };
    let mut out = Vec::new();
    let g = general_matrix();
    // non-square / non-symmetric under a symmetric header
    assert!(matches!(
        write_matrix_with(
            &mut out,
            &g,
            h(MmFormat::Coordinate, MmField::Real, MmSymmetry::Symmetric)
        ),
        Err(Error::DimensionMismatch { .. })
    ));
    let s = symmetric_matrix();
    assert!(matches!(
        write_matrix_with(
            &mut out,
            &s,
            h(
                MmFormat::Coordinate,
                MmField::Real,
                MmSymmetry::SkewSymmetric
            )
        ),
        Err(Error::InvalidMatrix(_))
    ));
    let mut ns = s.clone();
    ns.values_mut()[1] += 1.0;
    assert!(matches!(
        write_matrix_with(
            &mut out,
            &ns,
            h(MmFormat::Array, MmField::Real, MmSymmetry::Symmetric)
        ),
        Err(Error::InvalidMatrix(_))
    ));
    // non-integer values under `integer`
    assert!(matches!(
        write_matrix_with(
            &mut out,
            &g,
            h(MmFormat::Coordinate, MmField::Integer, MmSymmetry::General)
        ),
        Err(Error::InvalidMatrix(_))
    ));
    // header combinations the format forbids
    assert!(matches!(
        write_matrix_with(
            &mut out,
            &g,
            h(MmFormat::Array, MmField::Pattern, MmSymmetry::General)
        ),
        Err(Error::InvalidParameter { .. })
    ));
    // non-finite values
    let mut nf = g.clone();
    nf.values_mut()[2] = f64::NAN;
    assert!(matches!(
        write_matrix(&mut out, &nf),
        Err(Error::NonFinite { index: 2, .. })
    ));
    assert!(matches!(
        write_vector(&mut out, &[1.0, f64::INFINITY]),
        Err(Error::NonFinite { index: 1, .. })
    ));
    assert!(out.is_empty(), "a refused write must not emit anything");
}

// ---------------------------------------------------------------------------------------------
// files
// ---------------------------------------------------------------------------------------------

#[test]
fn file_round_trips_and_io_errors() {
    let mpath = temp_path("a.mtx");
    let vpath = temp_path("b.mtx");
    let a = symmetric_matrix();
    write_matrix_file(&mpath, &a).unwrap();
    assert_eq!(read_csr::<f64>(&mpath).unwrap(), a);
    assert_eq!(read_matrix::<f64>(&mpath).unwrap().to_csr().unwrap(), a);
    let h = MmHeader {
        format: MmFormat::Coordinate,
        field: MmField::Real,
        symmetry: MmSymmetry::Symmetric,
    };
    write_matrix_file_with(&mpath, &a, h).unwrap();
    assert_eq!(read_csr::<f64>(&mpath).unwrap(), a);
    let v = vec![1.0f32, -0.5, 3.0e-7];
    write_vector_file(&vpath, &v).unwrap();
    assert_eq!(read_vector::<f32>(&vpath).unwrap(), v);
    std::fs::remove_file(&mpath).unwrap();
    std::fs::remove_file(&vpath).unwrap();

    // a missing file is an I/O error naming the path
    match read_matrix::<f64>(&mpath) {
        Err(Error::Io { path, .. }) => assert!(path.contains("a.mtx"), "{path}"),
        other => panic!("expected Error::Io, got {other:?}"),
    }
    match read_vector::<f64>(&vpath) {
        Err(Error::Io { path, .. }) => assert!(path.contains("b.mtx"), "{path}"),
        other => panic!("expected Error::Io, got {other:?}"),
    }
    // writing into a directory that does not exist
    let bad = temp_path("no-such-dir").join("x.mtx");
    match write_matrix_file(&bad, &a) {
        Err(Error::Io { path, .. }) => assert!(path.contains("x.mtx"), "{path}"),
        other => panic!("expected Error::Io, got {other:?}"),
    }
}

#[test]
fn invalid_utf8_file_reports_line() {
    let path = temp_path("bad-utf8.mtx");
    let mut bytes = format!("{GEN}1 1 1\n").into_bytes();
    bytes.extend_from_slice(b"1 1 \xff\n");
    std::fs::write(&path, bytes).unwrap();
    let r = read_matrix::<f64>(&path);
    std::fs::remove_file(&path).unwrap();
    let (line, msg) = mm_error(r);
    assert_eq!(line, 3);
    assert!(msg.contains("UTF-8"), "{msg}");
}
