//! The products of several right-hand sides' recurrences with one matrix: the columns
//! multiplied by groups of up to eight with one read of A each (kernel `csr_spmm`), where A is
//! a CSR matrix of one process; one product per column otherwise (other formats, and the rows
//! of a distributed matrix, whose products exchange their halo).

use crate::backend::ops::sparse::{spmm, CsrRef, SPMM_MAX_COLUMNS};
use crate::backend::{Backend, Buffer, DeviceMatrix, Partials};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::solver::common::Tracker;
use crate::solver::report::{SolveReport, StopReason};
use crate::solver::Variant;

/// y_c = A x_c for every column c.
pub(crate) fn products<B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
    x: &[&Buffer<T>],
    y: &mut [&mut Buffer<T>],
) -> Result<()> {
    match CsrRef::of(a) {
        Ok(csr) if a.ranks() <= 1 => {
            for (xs, ys) in x
                .chunks(SPMM_MAX_COLUMNS)
                .zip(y.chunks_mut(SPMM_MAX_COLUMNS))
            {
                spmm(backend, csr, xs, ys)?;
            }
            Ok(())
        }
        _ => {
            for (xc, yc) in x.iter().zip(y.iter_mut()) {
                backend.spmv(a, xc, yc)?;
            }
            Ok(())
        }
    }
}

/// Whether [`products`] reads A once per group of columns (else once per column).
pub(crate) fn shares_matrix_reads<T: Scalar>(a: &DeviceMatrix<T>) -> bool {
    CsrRef::of(a).is_ok() && a.ranks() <= 1
}

/// [`Error::DimensionMismatch`] unless there are as many solutions as right-hand sides.
pub(crate) fn check_columns<T>(b: &[&Buffer<T>], x: &[&mut Buffer<T>]) -> Result<()> {
    if b.len() == x.len() {
        return Ok(());
    }
    Err(Error::dims(
        "solve_many: right-hand sides vs solutions",
        b.len(),
        x.len(),
    ))
}

/// How a column of a block solve ended: its tracker, a residual-sized scratch vector, its
/// iterations and stop reason.
pub(crate) struct ColumnEnd<'m, T> {
    pub(crate) tracker: Tracker<'m>,
    pub(crate) r: Buffer<T>,
    pub(crate) iterations: usize,
    pub(crate) stopped: Option<StopReason>,
}

/// Every column's report (its true residual computed), each with the block's note.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reports<B: Backend, T: Scalar>(
    solver: &'static str,
    backend: &B,
    a: &DeviceMatrix<T>,
    b: &[&Buffer<T>],
    x: &[&mut Buffer<T>],
    ends: Vec<ColumnEnd<'_, T>>,
    scratch: &mut Partials<T>,
    setup_seconds: f64,
) -> Result<Vec<SolveReport>> {
    let k = ends.len();
    let mut reports = Vec::with_capacity(k);
    for (c, end) in ends.into_iter().enumerate() {
        let ColumnEnd {
            tracker,
            mut r,
            iterations,
            stopped,
        } = end;
        // (A block solve's loop ends when every column has stopped.)
        let reason = stopped.unwrap_or(StopReason::MaxIterations);
        let mut report = tracker.report(
            solver,
            Variant::Classical,
            iterations,
            reason,
            backend,
            a,
            b[c],
            x[c],
            &mut r,
            scratch,
            setup_seconds,
            true,
        )?;
        report.notes.push(note(k, a));
        reports.push(report);
    }
    Ok(reports)
}

/// The note every column's report of a block solve carries.
pub(crate) fn note<T: Scalar>(k: usize, a: &DeviceMatrix<T>) -> String {
    format!(
        "one of {k} right-hand sides solved together (classical recurrences; the products {} \
         the matrix reads)",
        if shares_matrix_reads(a) {
            "share"
        } else {
            "do not share"
        }
    )
}
