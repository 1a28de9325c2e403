//! The values-only refresh of [`Fsai`]: G's values for new values of A on the kept pattern
//! (static or grown), by the setup's row solves, written into the kept factors.

use super::{check_domain, check_rows, named_afsai, scratch_budget, Fsai, FsaiVariant};
use crate::backend::{collective_result, Backend, Buffer, DeviceFormat, DeviceMatrix, FsaiPattern};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::precond::device_a::DeviceA;
use crate::precond::{check_same_size, SetupTimes, ValuesRefresh};
use crate::scalar::{Precision, Scalar};
use std::time::Instant;

/// New values of G and G^T (device), the fingerprint of the matrix they are for and the host
/// seconds of the refresh.
type NewValues<T> = (Buffer<T>, Buffer<T>, u64, f64);

/// What [`Fsai`] keeps from its first values refresh on, for the next ones: the pattern of the
/// row solves (G's entries' positions in G^T, the batches and their scratch layout; built by
/// the first refresh, whatever its outcome, since it depends on the pattern alone) and, for a
/// setup in the solve's precision, the buffers the next refresh writes G's and G^T's values
/// into (the values it replaces become the spares: no new memory in a time-stepping loop).
#[derive(Debug)]
pub(super) struct KeptForRefresh<T> {
    pattern: FsaiPattern,
    spare: Option<(Buffer<T>, Buffer<T>)>,
}

impl<T: Scalar> KeptForRefresh<T> {
    /// Device bytes of its own: G's entries' positions in G^T, the scratch offsets, the
    /// spares, and the pattern's index arrays where they are copies (the host backend; a GPU
    /// shares G's).
    pub(super) fn bytes(&self, shares_g: bool) -> usize {
        let p = &self.pattern;
        let copies = if shares_g {
            0
        } else {
            p.row_ptr.bytes() + p.col_idx.bytes()
        };
        p.gt_pos.bytes()
            + p.scratch_off.bytes()
            + copies
            + self
                .spare
                .as_ref()
                .map_or(0, |(g, gt)| g.bytes() + gt.bytes())
    }
}

impl<T: Scalar> Fsai<T> {
    /// Whether G's values are computed in f32 for a solve in f64 (`setup_in_f32`).
    fn narrow_setup(&self) -> bool {
        let in_f32 = match self.variant {
            FsaiVariant::Static(o) => o.setup_in_f32,
            FsaiVariant::Adaptive(o) => o.setup_in_f32,
        };
        in_f32 && T::PRECISION == Precision::F64
    }

    /// See the `update_values` of [`Fsai`]'s [`crate::precond::Preconditioner`] impl.
    pub(super) fn refresh<B: Backend>(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<ValuesRefresh> {
        let adaptive = matches!(self.variant, FsaiVariant::Adaptive(_));
        let name = if adaptive { "afsai" } else { "fsai" };
        check_same_size(name, self.n, a)?;
        let t0 = Instant::now();
        let mut local = self.new_values(backend, a, device);
        if adaptive {
            local = local.map_err(named_afsai);
        }
        let (mut g, mut gt, fingerprint, host_seconds) =
            collective_result(backend, "the FSAI refresh", local)?;
        std::mem::swap(self.g.values_mut(), &mut g);
        std::mem::swap(self.gt.values_mut(), &mut gt);
        self.fingerprint = fingerprint;
        // The values replaced are the next refresh's buffers (a setup in f32 computes into
        // f32 buffers of its own: no spares).
        let narrow = self.narrow_setup();
        if let Some(kept) = self.kept.as_mut().filter(|_| !narrow) {
            kept.spare = Some((g, gt));
        }
        let per_row = self.g.nnz() as f64 / self.n.max(1) as f64;
        let pattern = match self.variant {
            FsaiVariant::Static(o) => {
                format!(
                    "G's pattern (level {}, {per_row:.1} nonzeros per row)",
                    o.level
                )
            }
            FsaiVariant::Adaptive(_) => {
                format!("G's grown pattern ({per_row:.1} nonzeros per row, not grown again)")
            }
        };
        Ok(ValuesRefresh::new(
            SetupTimes {
                host_seconds,
                device_seconds: t0.elapsed().as_secs_f64() - host_seconds,
            },
            format!(
                "{pattern}, the arrays and kernel layout of G and G^T on the device, and from the \
                 first refresh on the row solves' batches and G^T positions and spare value buffers"
            ),
        ))
    }

    /// G's and G^T's values for `a` on the kept pattern, in the setup's precision (a
    /// single-precision setup computes them in f32 and casts them, as the setup does), this
    /// preconditioner unchanged.
    fn new_values<B: Backend>(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<NewValues<T>> {
        let t0 = Instant::now();
        check_domain(a)?;
        let fingerprint = a.fingerprint();
        let host_seconds = t0.elapsed().as_secs_f64();
        let narrow = self.narrow_setup();
        let (row_ptr, gt_row_ptr) = &*self.host_row_ptrs;
        if self.kept.is_none() {
            let pattern = pattern_of(backend, (&self.g, &self.gt), row_ptr, gt_row_ptr)?;
            self.kept = Some(Box::new(KeptForRefresh {
                pattern,
                spare: None,
            }));
        }
        let Some(kept) = self.kept.as_mut() else {
            return Err(Error::PreconditionerSetup(
                "fsai: no pattern for the refresh".into(),
            ));
        };
        let (pattern, spare) = (&kept.pattern, kept.spare.take());
        let (g, gt) = if narrow {
            let a32 = DeviceA::<f32>::narrowed(backend, a, device, fingerprint)?;
            let (g32, gt32) = rows_on_pattern(backend, a32.get(), pattern, row_ptr, None)?;
            drop(a32);
            let mut g = backend.alloc::<T>(g32.len())?;
            backend.copy_from_f32(&g32, &mut g)?;
            drop(g32);
            let mut gt = backend.alloc::<T>(gt32.len())?;
            backend.copy_from_f32(&gt32, &mut gt)?;
            (g, gt)
        } else {
            let a_dev = DeviceA::of(backend, a, device, fingerprint)?;
            rows_on_pattern(backend, a_dev.get(), pattern, row_ptr, spare)?
        };
        backend.synchronize()?;
        Ok((g, gt, fingerprint, host_seconds))
    }
}

/// The pattern of the row solves on the factors `(g, gt)` (their row pointers on the host:
/// `row_ptr`, `gt_row_ptr`): the position in G^T of every entry of G by the transpose kernels
/// (their result is canonical, so it matches G^T's column order), the batches and their
/// scratch layout.
fn pattern_of<B: Backend, T: Scalar>(
    backend: &B,
    (g, gt): (&DeviceMatrix<T>, &DeviceMatrix<T>),
    row_ptr: &[u32],
    gt_row_ptr: &[u32],
) -> Result<FsaiPattern> {
    let (
        DeviceFormat::Csr {
            row_ptr: g_rp,
            col_idx: g_ci,
            ..
        },
        DeviceFormat::Csr { row_ptr: gt_rp, .. },
    ) = (g.format(), gt.format())
    else {
        return Err(Error::PreconditionerSetup(
            "fsai: the factors are CSR".into(),
        ));
    };
    let n = row_ptr.len().saturating_sub(1);
    let nnz = g_ci.len();
    let rp = index_copy(backend, g_rp)?;
    let ci = index_copy(backend, g_ci)?;
    let mut cursor = backend.upload(&gt_row_ptr[..n])?;
    let mut gt_row_idx = backend.alloc::<u32>(nnz)?;
    let mut gt_entry = backend.alloc::<u32>(nnz)?;
    let mut gt_pos = backend.alloc::<u32>(nnz)?;
    if nnz > 0 {
        backend.fsai_transpose::<T>(
            &rp,
            &ci,
            gt_rp,
            &mut cursor,
            &mut gt_row_idx,
            &mut gt_entry,
            &mut gt_pos,
        )?;
    }
    drop((cursor, gt_row_idx, gt_entry));
    FsaiPattern::from_device(backend, rp, ci, gt_pos, row_ptr, scratch_budget(nnz))
}

/// The values of G and G^T in precision S for the matrix `a` (CSR on the device) on
/// `pattern` (G's row pointers on the host: `row_ptr`), by the setup's batched `fsai_rows`,
/// checked finite; written into `spare` when it is given (buffers of the right lengths).
fn rows_on_pattern<B: Backend, S: Scalar>(
    backend: &B,
    a: &DeviceMatrix<S>,
    pattern: &FsaiPattern,
    row_ptr: &[u32],
    spare: Option<(Buffer<S>, Buffer<S>)>,
) -> Result<(Buffer<S>, Buffer<S>)> {
    let nnz = pattern.col_idx.len();
    if nnz == 0 {
        return Ok((backend.alloc::<S>(0)?, backend.alloc::<S>(0)?));
    }
    let mut scratch = backend.alloc::<S>(pattern.max_scratch().max(1))?;
    let (mut g_vals, mut gt_vals) = match spare {
        Some((g, gt)) if g.len() == nnz && gt.len() == nnz => (g, gt),
        _ => (backend.alloc::<S>(nnz)?, backend.alloc::<S>(nnz)?),
    };
    for batch in 0..pattern.batches() {
        backend.fsai_rows(a, pattern, batch, &mut scratch, &mut g_vals, &mut gt_vals)?;
    }
    check_rows(backend, &g_vals, row_ptr)?;
    Ok((g_vals, gt_vals))
}

/// The index array `src` for a pattern of the refresh's own: shared on the GPU backends (no
/// copy), copied on the host backend.
fn index_copy<B: Backend>(backend: &B, src: &Buffer<u32>) -> Result<Buffer<u32>> {
    if let Some(shared) = src.share() {
        return Ok(shared);
    }
    let mut copy = backend.alloc::<u32>(src.len())?;
    backend.copy_u32(src, &mut copy)?;
    Ok(copy)
}
