//! Matrix Market (`.mtx`) reading and writing.
//!
//! Reading accepts the `matrix` object in `coordinate` and `array` format with field `real`,
//! `integer` or `pattern` and symmetry `general`, `symmetric` or `skew-symmetric` (banner
//! keywords are case-insensitive). `complex` and `hermitian` files are refused: this crate only
//! has real scalars. Symmetric files are expanded (`a_ji = a_ij`, the diagonal is not
//! duplicated), skew-symmetric files are expanded with negation (`a_ji = -a_ij`) and may not
//! store diagonal entries.
//!
//! `%` comment lines and blank lines are skipped anywhere after the banner, CRLF line endings,
//! tabs and surrounding whitespace are accepted. Every malformed input is reported as
//! [`Error::MatrixMarket`] with the 1-based line number and a message quoting the offending
//! token and saying what was expected (line 0 for an empty input). Non-finite values (`nan`,
//! `inf`, or a number that overflows the scalar type) are refused.
//!
//! ```
//! use pipekrylov::matrix::matrix_market::{parse_matrix, write_matrix};
//! let text = "%%MatrixMarket matrix coordinate real symmetric\n\
//!             % a 2 x 2 SPD matrix, lower triangle\n\
//!             2 2 3\n1 1 4\n2 1 -1\n2 2 4\n";
//! let a = parse_matrix::<f64>(text).unwrap().to_csr().unwrap();
//! assert_eq!(a.nnz(), 4);
//! assert_eq!(a.values(), &[4.0, -1.0, -1.0, 4.0]);
//!
//! let mut out = Vec::new();
//! write_matrix(&mut out, &a).unwrap();
//! let b = parse_matrix::<f64>(std::str::from_utf8(&out).unwrap()).unwrap().to_csr().unwrap();
//! assert_eq!(a, b);
//! ```

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::{CooMatrix, CsrMatrix};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Storage format named in the banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmFormat {
    /// Sparse: a size line `rows cols nnz` then one `row col [value]` line per entry.
    Coordinate,
    /// Dense, column-major: a size line `rows cols` then one value per line.
    Array,
}

/// Value type named in the banner (`complex` is not representable: it is refused on reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmField {
    /// Floating-point values.
    Real,
    /// Integer values (read into the floating-point scalar type).
    Integer,
    /// No values: every stored entry is 1 (coordinate format only).
    Pattern,
}

/// Symmetry named in the banner (`hermitian` is not representable: it is refused on reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmSymmetry {
    /// Every entry stored.
    General,
    /// Only one triangle stored (the lower one when written by this module); `a_ji = a_ij`.
    Symmetric,
    /// Only the strictly lower triangle stored; `a_ji = -a_ij`, zero diagonal.
    SkewSymmetric,
}

/// The three keywords of a `%%MatrixMarket matrix <format> <field> <symmetry>` banner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MmHeader {
    /// Coordinate (sparse) or array (dense).
    pub format: MmFormat,
    /// Real, integer or pattern.
    pub field: MmField,
    /// General, symmetric or skew-symmetric.
    pub symmetry: MmSymmetry,
}

impl MmFormat {
    /// The banner keyword (`coordinate` or `array`).
    pub fn keyword(self) -> &'static str {
        match self {
            MmFormat::Coordinate => "coordinate",
            MmFormat::Array => "array",
        }
    }
}

impl MmField {
    /// The banner keyword (`real`, `integer` or `pattern`).
    pub fn keyword(self) -> &'static str {
        match self {
            MmField::Real => "real",
            MmField::Integer => "integer",
            MmField::Pattern => "pattern",
        }
    }
}

impl MmSymmetry {
    /// The banner keyword (`general`, `symmetric` or `skew-symmetric`).
    pub fn keyword(self) -> &'static str {
        match self {
            MmSymmetry::General => "general",
            MmSymmetry::Symmetric => "symmetric",
            MmSymmetry::SkewSymmetric => "skew-symmetric",
        }
    }
}

impl fmt::Display for MmFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl fmt::Display for MmField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl fmt::Display for MmSymmetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl fmt::Display for MmHeader {
    /// The banner line, e.g. `%%MatrixMarket matrix coordinate real general`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "%%MatrixMarket matrix {} {} {}",
            self.format, self.field, self.symmetry
        )
    }
}

impl Default for MmHeader {
    /// `coordinate real general`, what [`write_matrix`] writes.
    fn default() -> Self {
        Self::new(MmFormat::Coordinate, MmField::Real, MmSymmetry::General)
    }
}

impl MmHeader {
    /// A header from its three keywords (not validated; see [`MmHeader::validate`]).
    pub const fn new(format: MmFormat, field: MmField, symmetry: MmSymmetry) -> Self {
        Self {
            format,
            field,
            symmetry,
        }
    }

    /// Reject the combinations the Matrix Market specification does not allow: `pattern` with
    /// `array` format and `pattern` with `skew-symmetric`. Errors are
    /// [`Error::InvalidParameter`].
    pub fn validate(&self) -> Result<()> {
        match self.invalid_reason() {
            Some(reason) => Err(Error::param("Matrix Market header", reason)),
            None => Ok(()),
        }
    }

    fn invalid_reason(&self) -> Option<&'static str> {
        if self.field == MmField::Pattern && self.format == MmFormat::Array {
            Some("field `pattern` is only valid with format `coordinate`, not `array`")
        } else if self.field == MmField::Pattern && self.symmetry == MmSymmetry::SkewSymmetric {
            Some("field `pattern` cannot be `skew-symmetric` (a pattern has no sign)")
        } else {
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

const BANNER_FORM: &str = "`%%MatrixMarket matrix <coordinate|array> <real|integer|pattern> \
                           <general|symmetric|skew-symmetric>`";

fn mm_err(line: usize, message: impl Into<String>) -> Error {
    Error::MatrixMarket {
        line,
        message: message.into(),
    }
}

fn io_err(path: &str, e: &io::Error) -> Error {
    Error::Io {
        path: path.to_string(),
        message: e.to_string(),
    }
}

/// Quote a token or line for an error message, shortened when very long.
fn quote(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        format!("`{s}`")
    } else {
        format!("`{}...`", s.chars().take(MAX).collect::<String>())
    }
}

/// Parse only the banner (first line) of a Matrix Market text.
///
/// Errors: [`Error::MatrixMarket`] at line 1 for a missing or malformed banner, an unknown
/// keyword, `complex` / `hermitian` data, or an invalid combination (see
/// [`MmHeader::validate`]); line 0 for an empty input.
pub fn parse_header(text: &str) -> Result<MmHeader> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(empty_input());
    }
    parse_banner(text.lines().next().unwrap_or(""))
}

fn empty_input() -> Error {
    mm_err(0, format!("empty input: expected a banner {BANNER_FORM}"))
}

fn parse_banner(line: &str) -> Result<MmHeader> {
    let t = line.trim();
    let mut toks = t.split_whitespace();
    match toks.next() {
        Some(first) if first.eq_ignore_ascii_case("%%MatrixMarket") => {}
        _ => {
            return Err(mm_err(
                1,
                format!("expected a banner {BANNER_FORM}, found {}", quote(t)),
            ))
        }
    }
    let rest: Vec<&str> = toks.collect();
    if rest.len() != 4 {
        return Err(mm_err(
            1,
            format!(
                "banner {} has {} keyword(s) after `%%MatrixMarket`, expected 4: {BANNER_FORM}",
                quote(t),
                rest.len()
            ),
        ));
    }
    let kw: Vec<String> = rest.iter().map(|s| s.to_ascii_lowercase()).collect();
    if kw[0] != "matrix" {
        return Err(mm_err(
            1,
            format!("unknown object {}: expected `matrix`", quote(rest[0])),
        ));
    }
    let format = match kw[1].as_str() {
        "coordinate" => MmFormat::Coordinate,
        "array" => MmFormat::Array,
        _ => {
            return Err(mm_err(
                1,
                format!(
                    "unknown format {}: expected `coordinate` or `array`",
                    quote(rest[1])
                ),
            ))
        }
    };
    let field = match kw[2].as_str() {
        "real" => MmField::Real,
        "integer" => MmField::Integer,
        "pattern" => MmField::Pattern,
        "complex" => {
            return Err(mm_err(
                1,
                format!(
                    "field {}: complex data cannot be read into a real matrix \
                     (expected `real`, `integer` or `pattern`)",
                    quote(rest[2])
                ),
            ))
        }
        _ => {
            return Err(mm_err(
                1,
                format!(
                    "unknown field {}: expected `real`, `integer` or `pattern`",
                    quote(rest[2])
                ),
            ))
        }
    };
    let symmetry = match kw[3].as_str() {
        "general" => MmSymmetry::General,
        "symmetric" => MmSymmetry::Symmetric,
        "skew-symmetric" => MmSymmetry::SkewSymmetric,
        "hermitian" => {
            return Err(mm_err(
                1,
                format!(
                    "symmetry {}: complex data cannot be read into a real matrix \
                     (expected `general`, `symmetric` or `skew-symmetric`)",
                    quote(rest[3])
                ),
            ))
        }
        _ => {
            return Err(mm_err(
                1,
                format!(
                    "unknown symmetry {}: expected `general`, `symmetric` or `skew-symmetric`",
                    quote(rest[3])
                ),
            ))
        }
    };
    let header = MmHeader::new(format, field, symmetry);
    if let Some(reason) = header.invalid_reason() {
        return Err(mm_err(1, format!("banner {}: {reason}", quote(t))));
    }
    Ok(header)
}

/// Iterator over the data lines (not blank, not `%` comments) with their 1-based numbers.
struct DataLines<'a> {
    inner: std::iter::Enumerate<std::str::Lines<'a>>,
    /// Number of the last line read (comments and blank lines included).
    last: usize,
}

impl<'a> DataLines<'a> {
    fn next_data(&mut self) -> Option<(usize, &'a str)> {
        for (i, raw) in self.inner.by_ref() {
            self.last = i + 1;
            let t = raw.trim();
            if t.is_empty() || t.starts_with('%') {
                continue;
            }
            return Some((i + 1, t));
        }
        None
    }
}

/// Split into whitespace-separated tokens: the first four and the total count.
fn tokens(t: &str) -> ([&str; 4], usize) {
    let mut toks = [""; 4];
    let mut count = 0;
    for tok in t.split_whitespace() {
        if let Some(slot) = toks.get_mut(count) {
            *slot = tok;
        }
        count += 1;
    }
    (toks, count)
}

/// A dimension or entry count on the size line.
fn parse_size(tok: &str, what: &str, line: usize, text: &str) -> Result<usize> {
    match tok.parse::<usize>() {
        Ok(v) if v <= isize::MAX as usize => Ok(v),
        Ok(_) => Err(mm_err(
            line,
            format!(
                "{what} {} in size line {}: overflow",
                quote(tok),
                quote(text)
            ),
        )),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(mm_err(
            line,
            format!(
                "{what} {} in size line {}: integer overflow",
                quote(tok),
                quote(text)
            ),
        )),
        Err(_) => Err(mm_err(
            line,
            format!(
                "{what} {} in size line {}: expected a non-negative integer",
                quote(tok),
                quote(text)
            ),
        )),
    }
}

/// A 1-based index, returned 0-based.
fn parse_index(tok: &str, what: &str, max: usize, line: usize, text: &str) -> Result<usize> {
    match tok.parse::<usize>() {
        Ok(0) => Err(mm_err(
            line,
            format!(
                "{what} index 0 in {}: Matrix Market indices are 1-based, expected 1..={max}",
                quote(text)
            ),
        )),
        Ok(k) if k > max => Err(mm_err(
            line,
            format!(
                "{what} index {k} in {} out of range: expected 1..={max}",
                quote(text)
            ),
        )),
        Ok(k) => Ok(k - 1),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(mm_err(
            line,
            format!(
                "{what} index {} in {}: integer overflow, expected 1..={max}",
                quote(tok),
                quote(text)
            ),
        )),
        Err(_) => Err(mm_err(
            line,
            format!(
                "{what} index {} in {}: expected a positive integer",
                quote(tok),
                quote(text)
            ),
        )),
    }
}

fn is_integer_token(tok: &str) -> bool {
    let digits = tok.strip_prefix(['+', '-']).unwrap_or(tok);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A value token, checked to be finite as `f64` and as `T`.
fn parse_value<T: Scalar>(tok: &str, field: MmField, line: usize) -> Result<T> {
    let v = match field {
        MmField::Pattern => return Ok(T::one()),
        MmField::Integer => {
            if !is_integer_token(tok) {
                return Err(mm_err(
                    line,
                    format!(
                        "value {}: expected an integer (field `integer`)",
                        quote(tok)
                    ),
                ));
            }
            tok.parse::<f64>().ok()
        }
        // Fortran-style exponents (`1.5D+02`) appear in old files: accepted.
        MmField::Real => tok
            .parse::<f64>()
            .ok()
            .or_else(|| tok.replace(['d', 'D'], "e").parse::<f64>().ok()),
    };
    let Some(v) = v else {
        return Err(mm_err(
            line,
            format!("value {}: expected a real number", quote(tok)),
        ));
    };
    if !v.is_finite() {
        // A numeric literal can only become infinite by overflow; `nan` / `inf` have no digit.
        return Err(if v.is_nan() || !tok.bytes().any(|b| b.is_ascii_digit()) {
            mm_err(
                line,
                format!(
                    "value {}: non-finite values (NaN, Inf) are not accepted, expected a finite number",
                    quote(tok)
                ),
            )
        } else {
            mm_err(
                line,
                format!("value {}: overflow, out of range for f64", quote(tok)),
            )
        });
    }
    let x = T::from_f64(v);
    if !x.is_finite() {
        return Err(mm_err(
            line,
            format!(
                "value {}: overflow, out of range for {}",
                quote(tok),
                T::PRECISION
            ),
        ));
    }
    Ok(x)
}

/// Receiver of parsed entries (matrix or vector).
trait Sink<T> {
    /// Called once with the header and the size line.
    fn start(
        &mut self,
        header: MmHeader,
        rows: usize,
        cols: usize,
        hint: usize,
        line: usize,
    ) -> Result<()>;
    /// One (already expanded) entry, 0-based.
    fn push(&mut self, row: usize, col: usize, val: T, line: usize) -> Result<()>;
    /// Called once after the last entry.
    fn finish(&mut self, line: usize) -> Result<()>;
}

fn parse_with<T: Scalar, S: Sink<T>>(text: &str, sink: &mut S) -> Result<MmHeader> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(empty_input());
    }
    let mut lines = DataLines {
        inner: text.lines().enumerate(),
        last: 0,
    };
    let banner = lines.inner.next().map(|(_, l)| l).unwrap_or("");
    lines.last = 1;
    let header = parse_banner(banner)?;
    let (sym, field) = (header.symmetry, header.field);

    // Size line.
    let (size_form, size_len) = match header.format {
        MmFormat::Coordinate => ("`rows cols nnz`", 3),
        MmFormat::Array => ("`rows cols`", 2),
    };
    let Some((size_line, size_text)) = lines.next_data() else {
        return Err(mm_err(
            lines.last,
            format!("missing size line: expected {size_form} after the banner, found end of input"),
        ));
    };
    let (toks, count) = tokens(size_text);
    if count != size_len {
        return Err(mm_err(
            size_line,
            format!(
                "size line {} has {count} token(s), expected {size_len} integers {size_form} \
                 for {} format",
                quote(size_text),
                header.format
            ),
        ));
    }
    let rows = parse_size(toks[0], "row count", size_line, size_text)?;
    let cols = parse_size(toks[1], "column count", size_line, size_text)?;
    if sym != MmSymmetry::General && rows != cols {
        return Err(mm_err(
            size_line,
            format!("a {sym} matrix must be square, but the size line declares {rows} x {cols}"),
        ));
    }
    let overflow = || {
        mm_err(
            size_line,
            format!(
                "size line {}: number of array entries overflows",
                quote(size_text)
            ),
        )
    };
    let expected = match header.format {
        MmFormat::Coordinate => parse_size(toks[2], "entry count", size_line, size_text)?,
        MmFormat::Array => match sym {
            MmSymmetry::General => rows.checked_mul(cols).ok_or_else(overflow)?,
            MmSymmetry::Symmetric => {
                rows.checked_add(1)
                    .and_then(|m| m.checked_mul(rows))
                    .ok_or_else(overflow)?
                    / 2
            }
            MmSymmetry::SkewSymmetric => {
                rows.checked_mul(rows.saturating_sub(1))
                    .ok_or_else(overflow)?
                    / 2
            }
        },
    };
    let expanded = match sym {
        MmSymmetry::General => expected,
        _ => expected.saturating_mul(2),
    };
    // Never trust the header for a big allocation: an entry takes at least two bytes.
    let hint = expanded.min(text.len() / 2 + 1);
    sink.start(header, rows, cols, hint, size_line)?;

    let more = |line: usize, t: &str| {
        mm_err(
            line,
            format!(
                "more entries than the {expected} declared on line {size_line}: unexpected {}",
                quote(t)
            ),
        )
    };
    let mut found = 0usize;
    match header.format {
        MmFormat::Coordinate => {
            let (ntok, form) = match field {
                MmField::Pattern => (2, "`row col`"),
                _ => (3, "`row col value`"),
            };
            // Which triangle a symmetric file stores, and where that was first seen.
            let mut side: Option<(bool, usize)> = None;
            while let Some((ln, t)) = lines.next_data() {
                if found == expected {
                    return Err(more(ln, t));
                }
                let (toks, count) = tokens(t);
                if count != ntok {
                    return Err(mm_err(
                        ln,
                        format!(
                            "entry {} has {count} token(s), expected {ntok}: {form}",
                            quote(t)
                        ),
                    ));
                }
                let i = parse_index(toks[0], "row", rows, ln, t)?;
                let j = parse_index(toks[1], "column", cols, ln, t)?;
                let v = parse_value::<T>(toks[2], field, ln)?;
                if sym == MmSymmetry::General {
                    sink.push(i, j, v, ln)?;
                } else if i == j {
                    if sym == MmSymmetry::SkewSymmetric {
                        return Err(mm_err(
                            ln,
                            format!(
                                "diagonal entry {} in a skew-symmetric file: the diagonal is \
                                 zero and must not be stored, expected only entries with row > col",
                                quote(t)
                            ),
                        ));
                    }
                    sink.push(i, j, v, ln)?;
                } else {
                    let lower = i > j;
                    match side {
                        None => side = Some((lower, ln)),
                        Some((s, first)) if s != lower => {
                            let (here, there) = if lower {
                                ("below", "above")
                            } else {
                                ("above", "below")
                            };
                            return Err(mm_err(
                                ln,
                                format!(
                                    "entry {} is {here} the diagonal but line {first} has an \
                                     entry {there} it: a {sym} file must store one triangle only",
                                    quote(t)
                                ),
                            ));
                        }
                        Some(_) => {}
                    }
                    let mirror = if sym == MmSymmetry::SkewSymmetric {
                        -v
                    } else {
                        v
                    };
                    sink.push(i, j, v, ln)?;
                    sink.push(j, i, mirror, ln)?;
                }
                found += 1;
            }
        }
        MmFormat::Array => {
            // Column-major position of the next value.
            let first_row = |c: usize| match sym {
                MmSymmetry::General => 0,
                MmSymmetry::Symmetric => c,
                MmSymmetry::SkewSymmetric => c + 1,
            };
            let (mut r, mut c) = (first_row(0), 0usize);
            while let Some((ln, t)) = lines.next_data() {
                if found == expected {
                    return Err(more(ln, t));
                }
                let (toks, count) = tokens(t);
                if count != 1 {
                    return Err(mm_err(
                        ln,
                        format!(
                            "array entry {} has {count} tokens, expected one value per line",
                            quote(t)
                        ),
                    ));
                }
                let v = parse_value::<T>(toks[0], field, ln)?;
                sink.push(r, c, v, ln)?;
                if r != c && sym != MmSymmetry::General {
                    let mirror = if sym == MmSymmetry::SkewSymmetric {
                        -v
                    } else {
                        v
                    };
                    sink.push(c, r, mirror, ln)?;
                }
                found += 1;
                r += 1;
                if r >= rows {
                    c += 1;
                    r = first_row(c);
                }
            }
        }
    }
    if found < expected {
        return Err(mm_err(
            lines.last,
            format!(
                "truncated input: expected {expected} entries (declared on line {size_line}), \
                 found {found}"
            ),
        ));
    }
    sink.finish(lines.last)?;
    Ok(header)
}

struct CooSink<T> {
    m: CooMatrix<T>,
    drop_zeros: bool,
}

impl<T: Scalar> Sink<T> for CooSink<T> {
    fn start(
        &mut self,
        h: MmHeader,
        rows: usize,
        cols: usize,
        hint: usize,
        _: usize,
    ) -> Result<()> {
        self.m = CooMatrix::with_capacity(rows, cols, hint);
        self.drop_zeros = h.format == MmFormat::Array;
        Ok(())
    }
    fn push(&mut self, row: usize, col: usize, val: T, _: usize) -> Result<()> {
        if self.drop_zeros && val == T::zero() {
            return Ok(());
        }
        self.m.push(row, col, val)
    }
    fn finish(&mut self, _: usize) -> Result<()> {
        Ok(())
    }
}

struct VecSink<T> {
    v: Vec<T>,
    rows: usize,
}

impl<T: Scalar> VecSink<T> {
    fn grow(&mut self, len: usize, line: usize) -> Result<()> {
        if len > self.v.len() {
            self.v.try_reserve(len - self.v.len()).map_err(|_| {
                mm_err(
                    line,
                    format!("cannot allocate a vector of {} entries", self.rows),
                )
            })?;
            self.v.resize(len, T::zero());
        }
        Ok(())
    }

    fn grow_by_one(&mut self, line: usize) -> Result<()> {
        self.v.try_reserve(1).map_err(|_| {
            mm_err(
                line,
                format!("cannot allocate a vector of {} entries", self.rows),
            )
        })
    }
}

impl<T: Scalar> Sink<T> for VecSink<T> {
    fn start(
        &mut self,
        _: MmHeader,
        rows: usize,
        cols: usize,
        hint: usize,
        line: usize,
    ) -> Result<()> {
        if cols != 1 {
            return Err(mm_err(
                line,
                format!(
                    "a vector must have one column, but the size line declares {rows} x {cols} \
                     (expected `n 1`)"
                ),
            ));
        }
        // A coordinate vector with far fewer entries than slots is refused before the zeros are
        // allocated (hint: the declared entries; an array file stores every slot).
        let bytes = rows.saturating_mul(std::mem::size_of::<T>());
        crate::memory::check_sparse_fill("Matrix Market vector", rows, bytes, hint)?;
        self.rows = rows;
        self.v = Vec::with_capacity(hint.min(rows));
        Ok(())
    }
    fn push(&mut self, row: usize, _: usize, val: T, line: usize) -> Result<()> {
        if let Some(slot) = self.v.get_mut(row) {
            // A duplicate coordinate entry: summed, as in a matrix.
            *slot += val;
        } else {
            // Stored as is (not added to 0, which would turn -0 into +0).
            self.grow(row, line)?;
            self.grow_by_one(line)?;
            self.v.push(val);
        }
        Ok(())
    }
    fn finish(&mut self, line: usize) -> Result<()> {
        self.grow(self.rows, line)
    }
}

/// Parse a Matrix Market matrix and also return its header (to know, for instance, that the
/// file declared the matrix symmetric).
pub fn parse_matrix_with_header<T: Scalar>(text: &str) -> Result<(MmHeader, CooMatrix<T>)> {
    let mut sink = CooSink {
        m: CooMatrix::new(0, 0),
        drop_zeros: false,
    };
    let header = parse_with::<T, _>(text, &mut sink)?;
    Ok((header, sink.m))
}

/// Parse a Matrix Market matrix (coordinate or array format) into COO.
///
/// Symmetric and skew-symmetric files are expanded to the full matrix; pattern entries get the
/// value 1; zeros of an array (dense) file are not stored. Duplicate coordinate entries are
/// kept and summed by [`CooMatrix::to_csr`]. Errors: [`Error::MatrixMarket`] with the line
/// number (see the module documentation).
pub fn parse_matrix<T: Scalar>(text: &str) -> Result<CooMatrix<T>> {
    parse_matrix_with_header(text).map(|(_, m)| m)
}

/// Parse a Matrix Market vector: array format `n 1`, or coordinate format `n 1` where missing
/// entries are zero (duplicates summed).
///
/// Errors: [`Error::MatrixMarket`] with the line number, also when the size line does not
/// declare exactly one column.
pub fn parse_vector<T: Scalar>(text: &str) -> Result<Vec<T>> {
    let mut sink = VecSink {
        v: Vec::new(),
        rows: 0,
    };
    parse_with::<T, _>(text, &mut sink)?;
    Ok(sink.v)
}

/// The longest line a text file read by the crate may have, in bytes (its newline excluded).
/// A Matrix Market data line holds at most four numbers, and no comment a writer emits comes
/// near this; a longer line is an error naming it, so that a file whose line never ends
/// (`/dev/zero`, a binary file) fails after reading this much instead of filling memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Read the text file at `path` line by line, refusing a line longer than
/// [`MAX_LINE_BYTES`] ([`Error::MatrixMarket`] naming the line) and text that is not UTF-8.
/// Every file the crate reads (matrices, vectors, the CLI's CSV) goes through here.
pub fn read_text_file(path: impl AsRef<Path>) -> Result<String> {
    read_text(path.as_ref())
}

fn read_text(path: &Path) -> Result<String> {
    use std::io::{BufRead, Read};
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| io_err(&shown, &e))?;
    let mut reader = io::BufReader::new(file);
    let mut bytes = Vec::new();
    let mut line = 1usize;
    loop {
        let start = bytes.len();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| io_err(&shown, &e))?;
        if read == 0 {
            break;
        }
        let ended = bytes.last() == Some(&b'\n');
        let len = bytes.len() - start - usize::from(ended);
        if len > MAX_LINE_BYTES {
            return Err(mm_err(
                line,
                format!(
                    "line longer than {MAX_LINE_BYTES} bytes in {shown} (a Matrix Market line \
                     holds a few numbers: is this a text file?)"
                ),
            ));
        }
        line += 1;
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = e
            .as_bytes()
            .get(..valid)
            .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
            + 1;
        mm_err(
            line,
            format!("invalid UTF-8 at byte {valid} of {shown}: expected ASCII text"),
        )
    })
}

/// Read a Matrix Market matrix file into COO (see [`parse_matrix`]). I/O failures are
/// [`Error::Io`] naming the path.
pub fn read_matrix<T: Scalar>(path: impl AsRef<Path>) -> Result<CooMatrix<T>> {
    parse_matrix(&read_text(path.as_ref())?)
}

/// Read a Matrix Market matrix file straight into CSR: [`read_matrix`] then
/// [`CooMatrix::to_csr`] (columns sorted, duplicates summed).
pub fn read_csr<T: Scalar>(path: impl AsRef<Path>) -> Result<CsrMatrix<T>> {
    read_matrix(path)?.to_csr()
}

/// Read a Matrix Market vector file (see [`parse_vector`]). I/O failures are [`Error::Io`]
/// naming the path.
pub fn read_vector<T: Scalar>(path: impl AsRef<Path>) -> Result<Vec<T>> {
    parse_vector(&read_text(path.as_ref())?)
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

const WRITER: &str = "<writer>";

fn lookup<T: Scalar>(a: &CsrMatrix<T>, i: usize, j: usize) -> Option<T> {
    let (cols, vals) = a.row(i);
    cols.binary_search(&j)
        .ok()
        .and_then(|k| vals.get(k).copied())
}

/// Check that `a` can be written faithfully under `h`.
fn check_writable<T: Scalar>(a: &CsrMatrix<T>, h: MmHeader) -> Result<()> {
    h.validate()?;
    if h.field != MmField::Pattern {
        if let Some(index) = a.first_non_finite() {
            return Err(Error::NonFinite {
                what: "matrix".into(),
                index,
            });
        }
    }
    if h.symmetry != MmSymmetry::General && !a.is_square() {
        return Err(Error::dims(
            format!("columns vs rows of a matrix written as {}", h.symmetry),
            a.n_rows(),
            a.n_cols(),
        ));
    }
    for i in 0..a.n_rows() {
        let (cols, vals) = a.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            let (r, c) = (i + 1, j + 1);
            if h.field == MmField::Integer && v.to_f64().fract() != 0.0 {
                return Err(Error::InvalidMatrix(format!(
                    "entry ({r}, {c}) = {v} is not an integer: cannot write field `integer`"
                )));
            }
            match (h.symmetry, h.field) {
                (MmSymmetry::General, _) => {}
                (MmSymmetry::Symmetric, MmField::Pattern) => {
                    if i != j && lookup(a, j, i).is_none() {
                        return Err(Error::InvalidMatrix(format!(
                            "pattern not symmetric: ({r}, {c}) is stored but ({c}, {r}) is not"
                        )));
                    }
                }
                (MmSymmetry::Symmetric, _) => {
                    let u = lookup(a, j, i).unwrap_or_else(T::zero);
                    if u != v {
                        return Err(Error::InvalidMatrix(format!(
                            "matrix not symmetric: a({r}, {c}) = {v} but a({c}, {r}) = {u}"
                        )));
                    }
                }
                (MmSymmetry::SkewSymmetric, _) => {
                    let u = lookup(a, j, i).unwrap_or_else(T::zero);
                    if i == j && v != T::zero() {
                        return Err(Error::InvalidMatrix(format!(
                            "matrix not skew-symmetric: diagonal entry a({r}, {r}) = {v} is not 0"
                        )));
                    }
                    if u != -v {
                        return Err(Error::InvalidMatrix(format!(
                            "matrix not skew-symmetric: a({r}, {c}) = {v} but a({c}, {r}) = {u}"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

fn write_value<W: Write>(w: &mut W, v: f64, field: MmField) -> io::Result<()> {
    match field {
        // Integral f64 values display without fraction or exponent.
        MmField::Integer => write!(w, "{v}"),
        // Shortest representation that round-trips, exponent form.
        _ => write!(w, "{v:e}"),
    }
}

fn emit_matrix<T: Scalar, W: Write>(w: &mut W, a: &CsrMatrix<T>, h: MmHeader) -> io::Result<()> {
    writeln!(w, "{h}")?;
    let keep = |i: usize, j: usize| match h.symmetry {
        MmSymmetry::General => true,
        MmSymmetry::Symmetric => j <= i,
        MmSymmetry::SkewSymmetric => j < i,
    };
    match h.format {
        MmFormat::Coordinate => {
            let count: usize = (0..a.n_rows())
                .map(|i| a.row(i).0.iter().filter(|&&j| keep(i, j)).count())
                .sum();
            writeln!(w, "{} {} {count}", a.n_rows(), a.n_cols())?;
            for i in 0..a.n_rows() {
                let (cols, vals) = a.row(i);
                for (&j, &v) in cols.iter().zip(vals) {
                    if !keep(i, j) {
                        continue;
                    }
                    write!(w, "{} {}", i + 1, j + 1)?;
                    if h.field != MmField::Pattern {
                        w.write_all(b" ")?;
                        write_value(w, v.to_f64(), h.field)?;
                    }
                    w.write_all(b"\n")?;
                }
            }
        }
        MmFormat::Array => {
            writeln!(w, "{} {}", a.n_rows(), a.n_cols())?;
            let at = a.transpose();
            for j in 0..a.n_cols() {
                let (rows, vals) = at.row(j);
                let start = match h.symmetry {
                    MmSymmetry::General => 0,
                    MmSymmetry::Symmetric => j,
                    MmSymmetry::SkewSymmetric => j + 1,
                };
                let mut k = rows.partition_point(|&r| r < start);
                for i in start..a.n_rows() {
                    let v = if rows.get(k) == Some(&i) {
                        k += 1;
                        vals.get(k - 1).map_or(0.0, |v| v.to_f64())
                    } else {
                        0.0
                    };
                    write_value(w, v, h.field)?;
                    w.write_all(b"\n")?;
                }
            }
        }
    }
    Ok(())
}

fn emit_vector<T: Scalar, W: Write>(w: &mut W, v: &[T]) -> io::Result<()> {
    writeln!(
        w,
        "{}",
        MmHeader::new(MmFormat::Array, MmField::Real, MmSymmetry::General)
    )?;
    writeln!(w, "{} 1", v.len())?;
    for x in v {
        writeln!(w, "{:e}", x.to_f64())?;
    }
    Ok(())
}

fn check_vector<T: Scalar>(v: &[T]) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(Error::NonFinite {
            what: "vector".into(),
            index,
        }),
        None => Ok(()),
    }
}

/// Write `a` as `coordinate real general` with values that round-trip exactly (shortest
/// `{:e}` representation of the `f64` value).
///
/// Errors: [`Error::NonFinite`] for a NaN/Inf value, [`Error::Io`] (path `<writer>`) when the
/// writer fails.
pub fn write_matrix<T: Scalar>(w: &mut impl Write, a: &CsrMatrix<T>) -> Result<()> {
    write_matrix_with(w, a, MmHeader::default())
}

/// Write `a` under any header: `symmetric` writes the lower triangle with the diagonal,
/// `skew-symmetric` the strictly lower triangle, `pattern` only the indices, `integer` the
/// values without fraction, `array` the dense column-major values (only the triangle for
/// symmetric / skew-symmetric).
///
/// Nothing is written unless the matrix fits the header, so no information is silently lost:
/// [`Error::InvalidParameter`] for a header the format does not allow (`pattern` with `array`
/// or `skew-symmetric`), [`Error::DimensionMismatch`] for a non-square matrix with a symmetric
/// header, [`Error::InvalidMatrix`] for a matrix that is not (skew-)symmetric (structurally,
/// for `pattern`) or has a non-integer value for `integer`, [`Error::NonFinite`] for NaN/Inf
/// values. Writer failures are [`Error::Io`] (path `<writer>`).
pub fn write_matrix_with<T: Scalar>(
    w: &mut impl Write,
    a: &CsrMatrix<T>,
    header: MmHeader,
) -> Result<()> {
    check_writable(a, header)?;
    emit_matrix(w, a, header).map_err(|e| io_err(WRITER, &e))
}

fn write_file(
    path: &Path,
    emit: impl FnOnce(&mut BufWriter<std::fs::File>) -> io::Result<()>,
) -> Result<()> {
    let shown = path.display().to_string();
    let file = std::fs::File::create(path).map_err(|e| io_err(&shown, &e))?;
    let mut w = BufWriter::new(file);
    emit(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| io_err(&shown, &e))
}

/// Write `a` to a file as `coordinate real general` (see [`write_matrix`]). I/O failures are
/// [`Error::Io`] naming the path; the file is not created when the matrix is refused.
pub fn write_matrix_file<T: Scalar>(path: impl AsRef<Path>, a: &CsrMatrix<T>) -> Result<()> {
    write_matrix_file_with(path, a, MmHeader::default())
}

/// Write `a` to a file under any header (see [`write_matrix_with`]). I/O failures are
/// [`Error::Io`] naming the path; the file is not created when the matrix is refused.
pub fn write_matrix_file_with<T: Scalar>(
    path: impl AsRef<Path>,
    a: &CsrMatrix<T>,
    header: MmHeader,
) -> Result<()> {
    check_writable(a, header)?;
    write_file(path.as_ref(), |w| emit_matrix(w, a, header))
}

/// Write a vector as `array real general` with size line `n 1` and values that round-trip
/// exactly. Errors: [`Error::NonFinite`] for NaN/Inf, [`Error::Io`] (path `<writer>`).
pub fn write_vector<T: Scalar>(w: &mut impl Write, v: &[T]) -> Result<()> {
    check_vector(v)?;
    emit_vector(w, v).map_err(|e| io_err(WRITER, &e))
}

/// Write a vector to a file (see [`write_vector`]). I/O failures are [`Error::Io`] naming the
/// path; the file is not created when the vector is refused.
pub fn write_vector_file<T: Scalar>(path: impl AsRef<Path>, v: &[T]) -> Result<()> {
    check_vector(v)?;
    write_file(path.as_ref(), |w| emit_vector(w, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_of<T: std::fmt::Debug>(r: Result<T>) -> usize {
        match r {
            Err(Error::MatrixMarket { line, .. }) => line,
            other => panic!("expected a Matrix Market error, got {other:?}"),
        }
    }

    #[test]
    fn banner_is_case_insensitive_and_displayed_canonically() {
        let h = parse_header("%%matrixmarket MATRIX Coordinate Integer Skew-Symmetric\n").unwrap();
        assert_eq!(
            h,
            MmHeader::new(
                MmFormat::Coordinate,
                MmField::Integer,
                MmSymmetry::SkewSymmetric
            )
        );
        assert_eq!(
            h.to_string(),
            "%%MatrixMarket matrix coordinate integer skew-symmetric"
        );
        assert_eq!(line_of(parse_header("")), 0);
        assert_eq!(line_of(parse_header("%%MatrixMarket matrix coordinate")), 1);
    }

    #[test]
    fn tokens_counts_all() {
        let (t, n) = tokens(" 1\t2  3 4 5 ");
        assert_eq!(n, 5);
        assert_eq!(t, ["1", "2", "3", "4"]);
    }

    #[test]
    fn values_checked_for_overflow_and_non_finite() {
        assert_eq!(
            parse_value::<f64>("1.5D+02", MmField::Real, 1).unwrap(),
            150.0
        );
        assert_eq!(parse_value::<f64>("-7", MmField::Integer, 1).unwrap(), -7.0);
        assert!(parse_value::<f64>("7.0", MmField::Integer, 1).is_err());
        for bad in ["nan", "NaN", "inf", "-Infinity", "1e999", "-1e400"] {
            assert_eq!(
                line_of(parse_value::<f64>(bad, MmField::Real, 9)),
                9,
                "{bad}"
            );
        }
        assert!(parse_value::<f32>("1e300", MmField::Real, 1).is_err());
        assert!(parse_value::<f64>("1e300", MmField::Real, 1).is_ok());
    }

    #[test]
    fn array_skew_positions() {
        // 3x3 skew: strictly lower triangle column-major: (2,1) (3,1) (3,2)
        let text = "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n";
        let a = parse_matrix::<f64>(text).unwrap().to_csr().unwrap();
        assert_eq!(a.row_ptr(), &[0, 2, 4, 6]);
        assert_eq!(a.col_idx(), &[1, 2, 0, 2, 0, 1]);
        assert_eq!(a.values(), &[-1.0, -2.0, 1.0, -3.0, 2.0, 3.0]);
    }

    #[test]
    fn write_refuses_non_symmetric() {
        let a = CsrMatrix::new(2, 2, vec![0, 1, 1], vec![1], vec![1.0]).unwrap();
        let h = MmHeader::new(MmFormat::Coordinate, MmField::Real, MmSymmetry::Symmetric);
        let mut out = Vec::new();
        assert!(matches!(
            write_matrix_with(&mut out, &a, h),
            Err(Error::InvalidMatrix(_))
        ));
        assert!(out.is_empty());
    }
}
