//! The adaptive FSAI pattern grown batch by batch of rows, each batch compacted as soon as it
//! is grown, so that the setup never holds an n x k_max array: the peak memory follows the G
//! being built, not the largest G the growth could give (\[Bernaschi19\]'s memory concern; the issue's
//! bound is 3x the final factors).
//!
//! Per batch: `afsai_grow` (every step of every row of the batch in one launch), its row
//! lengths read back (one transfer per batch, never per row or step), `afsai_compact` into an
//! arena (a device array sized for the rows still to come by the estimate so far; a new one
//! when it is full, so there is no allocation per batch); at the end `afsai_place` joins the
//! arenas' used parts into G's column indices. The rows per batch follow the memory: the batch's scratch stays within the
//! size of the G estimated from the rows grown so far (at least [`BATCH_FLOOR_BYTES`], at most
//! the growth's old fixed budget, n (k_max s + 1) scalars times a factor).

use crate::backend::{AfsaiGrowKernel, AfsaiGrowth, AfsaiStop, Backend, Buffer, DeviceMatrix};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::time::Instant;

/// Batch memory (scratch and outputs) below which a batch is never cut: small problems grow
/// in one launch.
pub(super) const BATCH_FLOOR_BYTES: usize = 32 << 20;

/// Bytes of the final factors for n rows and `nnz` entries of G: G and G^T (values and
/// indices), their row pointers and the application's work vector.
pub(super) fn factor_bytes<T: Scalar>(n: usize, nnz: usize) -> usize {
    let sz = std::mem::size_of::<T>();
    2 * nnz * (sz + 4) + 2 * (n + 1) * 4 + n * sz
}

/// How many rows each `afsai_grow` launch takes.
#[derive(Debug, Clone, Copy)]
pub(super) struct BatchPlan {
    n: usize,
    /// Device bytes per row of a batch: scratch scalars and indices, pattern columns, length.
    row_bytes: usize,
    /// Fewest rows of a batch (the floor's), most rows (the fixed budget's).
    min_rows: usize,
    max_rows: usize,
    stop: AfsaiStop,
    kernel: AfsaiGrowKernel,
}

impl BatchPlan {
    /// The plan for n rows grown by `kernel`; `factor` multiplies the old fixed budget
    /// n (cap + 1) scalars (the most a batch may take), `max_rows` caps every batch (None:
    /// memory decides). A kernel without scratch (the team kernel) holds only its outputs per
    /// row, so its batches are far larger (one to three launches on the H200's problems).
    pub(super) fn new<T: Scalar>(
        n: usize,
        growth: &AfsaiGrowth,
        kernel: AfsaiGrowKernel,
        factor: usize,
        max_rows: Option<usize>,
    ) -> Self {
        let sz = std::mem::size_of::<T>();
        let cap = growth.cap();
        let per_row = kernel.scalars_per_row(growth).max(1);
        let row_bytes =
            kernel.scalars_per_row(growth) * sz + (kernel.indices_per_row(growth) + cap + 1) * 4;
        let fixed_budget = n.saturating_mul(cap + 1).saturating_mul(factor.max(1));
        let mut max_b = (fixed_budget / per_row).max(BATCH_FLOOR_BYTES / row_bytes);
        if let Some(m) = max_rows {
            max_b = max_b.min(m);
        }
        let max_b = max_b.clamp(1, n.max(1));
        Self {
            n,
            row_bytes,
            min_rows: (BATCH_FLOOR_BYTES / row_bytes).clamp(1, max_b),
            max_rows: max_b,
            stop: growth.stop,
            kernel,
        }
    }

    /// The kernel the batches run.
    pub(super) fn kernel(&self) -> AfsaiGrowKernel {
        self.kernel
    }

    /// Rows of the first batch: with eq. (17) rows mostly take every step and G ends near its
    /// largest size, so the fixed budget; with the step rule G can end as small as its
    /// diagonal, so the memory of that G.
    pub(super) fn first<T: Scalar>(&self) -> usize {
        match self.stop {
            AfsaiStop::RatioToInitial => self.max_rows,
            AfsaiStop::StepReduction => self.rows_for(factor_bytes::<T>(self.n, self.n)),
        }
    }

    /// Rows of the next batch after `rows_done` rows holding `entries_done` entries of G
    /// (diagonal included): a batch as large as the G those rows predict.
    pub(super) fn next<T: Scalar>(&self, rows_done: usize, entries_done: usize) -> usize {
        let rows_done = rows_done.max(1);
        let nnz_estimate = (entries_done as f64 / rows_done as f64 * self.n as f64) as usize;
        self.rows_for(factor_bytes::<T>(self.n, nnz_estimate.max(self.n)))
    }

    /// The most rows a batch takes.
    pub(super) fn max_rows(&self) -> usize {
        self.max_rows
    }

    fn rows_for(&self, bytes: usize) -> usize {
        (bytes / self.row_bytes).clamp(self.min_rows, self.max_rows)
    }
}

/// The grown pattern laid out as G's rows on the device, with what the rest of the setup
/// needs on the host.
pub(super) struct GrownPattern {
    /// G's row pointers on the host (prefix sum of the row lengths plus the diagonal).
    pub(super) row_ptr: Vec<u32>,
    /// G's row pointers and column indices (rows sorted, the diagonal last) on the device.
    pub(super) g_row_ptr: Buffer<u32>,
    pub(super) g_col_idx: Buffer<u32>,
    /// Entries per column of G (the row lengths of G^T) on the device.
    pub(super) col_count: Buffer<u32>,
    /// Seconds in the growth launches, in the layout (compaction, joining) and on the host
    /// (row lengths, prefix sums).
    pub(super) growth_s: f64,
    pub(super) layout_s: f64,
    pub(super) host_s: f64,
    /// Device bytes held at the peak of this stage (A's own copy counted by the caller's
    /// `held` bytes).
    pub(super) peak_bytes: usize,
    /// Growth launches.
    pub(super) batches: usize,
}

/// The scratch and outputs of one batch, sized for `rows` rows.
struct BatchBuffers<T> {
    rows: usize,
    scratch: Buffer<T>,
    iscratch: Buffer<u32>,
    out_cols: Buffer<u32>,
    out_len: Buffer<u32>,
}

impl<T: Scalar> BatchBuffers<T> {
    fn alloc<B: Backend>(
        backend: &B,
        growth: &AfsaiGrowth,
        kernel: AfsaiGrowKernel,
        rows: usize,
    ) -> Result<Self> {
        Ok(Self {
            rows,
            scratch: backend.alloc::<T>((rows * kernel.scalars_per_row(growth)).max(1))?,
            iscratch: backend.alloc::<u32>((rows * kernel.indices_per_row(growth)).max(1))?,
            out_cols: backend.alloc::<u32>((rows * growth.cap()).max(1))?,
            out_len: backend.alloc::<u32>(rows)?,
        })
    }

    fn bytes(&self) -> usize {
        self.scratch.bytes() + self.iscratch.bytes() + self.out_cols.bytes() + self.out_len.bytes()
    }
}

/// Grow the adaptive pattern of the n x n CSR matrix `a` on `backend` batch by batch and lay
/// it out (see the module's text). `held` is the device memory the caller holds meanwhile
/// (A's own copy), counted in the peak.
///
/// Errors: [`Error::SingularPivot`] (through `not_spd`) naming the first row whose growth met a
/// non-positive pivot; [`Error::PreconditionerSetup`] for a row longer than the growth allows;
/// [`Error::IndexOverflow`] when G's entries pass 2^32; device errors.
pub(super) fn grow_in_batches<B: Backend, T: Scalar>(
    backend: &B,
    a: &DeviceMatrix<T>,
    growth: AfsaiGrowth,
    plan: BatchPlan,
    held: usize,
    not_spd: impl Fn(usize) -> Error,
) -> Result<GrownPattern> {
    let n = a.n_rows();
    let cap = growth.cap();
    let (mut growth_s, mut layout_s, mut host_s) = (0.0, 0.0, 0.0);
    let mut col_count = backend.alloc::<u32>(n)?;
    let overflow = || Error::IndexOverflow {
        what: "aFSAI pattern entries".into(),
        value: usize::MAX,
        max: u32::MAX as usize,
    };
    // Arenas of compacted rows (buffer, entries used) and the batch's row pointers into the
    // current arena (rewritten in place while the batch size stays).
    let mut arenas: Vec<(Buffer<u32>, usize)> = Vec::new();
    let mut arenas_bytes = 0usize;
    let mut ptr_buf: Option<Buffer<u32>> = None;
    let mut row_ptr: Vec<u32> = Vec::with_capacity(n + 1);
    row_ptr.push(0);
    let mut buffers: Option<BatchBuffers<T>> = None;
    let mut peak = held + col_count.bytes();
    let mut batches = 0usize;
    let mut start = 0usize;
    while start < n {
        let want = if start == 0 {
            plan.first::<T>()
        } else {
            plan.next::<T>(start, row_ptr[start] as usize)
        };
        let end = (start + want).min(n);
        let rows = end - start;
        // 1. The batch's buffers: reused while large enough, else replaced (the old ones
        //    freed first).
        let t0 = Instant::now();
        if !buffers.as_ref().is_some_and(|b| b.rows >= rows) {
            // A quarter more than asked: the estimate creeps up by a few rows from batch to
            // batch, and a new allocation (and the free of the old one, which waits for the
            // device) per batch cost 4x the growth itself on the H200.
            drop(buffers.take());
            let alloc_rows = (rows + rows / 4).min(plan.max_rows()).max(rows);
            buffers = Some(BatchBuffers::alloc(
                backend,
                &growth,
                plan.kernel(),
                alloc_rows,
            )?);
        }
        let Some(buf) = buffers.as_mut() else {
            return Err(Error::PreconditionerSetup(
                "afsai: growth buffers missing".into(),
            ));
        };
        backend.afsai_grow(
            a,
            growth,
            plan.kernel(),
            start..end,
            &mut buf.scratch,
            &mut buf.iscratch,
            &mut buf.out_cols,
            &mut buf.out_len,
        )?;
        // 2. The batch's row lengths (the one read of the batch; it waits for the growth).
        let mut lens = vec![0u32; buf.out_len.len()];
        backend.read(&buf.out_len, &mut lens)?;
        growth_s += t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let base = row_ptr[start];
        let mut local_ptr = Vec::with_capacity(rows + 1);
        local_ptr.push(0u32);
        for (t, &len) in lens[..rows].iter().enumerate() {
            if len == u32::MAX {
                return Err(not_spd(start + t));
            }
            if len as usize > cap {
                return Err(Error::PreconditionerSetup(format!(
                    "afsai: row {} reports {len} pattern entries, more than {cap}",
                    start + t
                )));
            }
            let next = local_ptr[t]
                .checked_add(len + 1)
                .filter(|&e| base.checked_add(e).is_some())
                .ok_or_else(overflow)?;
            local_ptr.push(next);
            row_ptr.push(base + next);
        }
        let entries = local_ptr[rows] as usize;
        host_s += t1.elapsed().as_secs_f64();
        // 3. The batch compacted into the current arena (its rows sorted, the diagonal last),
        //    or into a new one sized for the rows to come when it is full.
        let t2 = Instant::now();
        let room = arenas.last().map_or(0, |(arena, used)| arena.len() - used);
        if room < entries {
            let rows_left = n - start;
            let predicted = (row_ptr[end] as f64 / end as f64 * rows_left as f64 * 1.05) as usize;
            let size = predicted.max(entries).min(u32::MAX as usize);
            let arena = backend.alloc::<u32>(size)?;
            arenas_bytes += arena.bytes();
            arenas.push((arena, 0));
        }
        let Some((arena, used)) = arenas.last_mut() else {
            return Err(Error::PreconditionerSetup("afsai: arena missing".into()));
        };
        let at = *used as u32;
        for p in local_ptr.iter_mut() {
            *p = p.checked_add(at).ok_or_else(overflow)?;
        }
        // The row pointers in a buffer sized for the batch buffers' rows, padded with the
        // last pointer (the kernel reads the first rows + 1).
        local_ptr.resize(buf.rows + 1, local_ptr[rows]);
        match ptr_buf.as_mut() {
            Some(ptrs) if ptrs.len() == local_ptr.len() => backend.write(ptrs, &local_ptr)?,
            _ => {
                drop(ptr_buf.take());
                ptr_buf = Some(backend.upload(&local_ptr)?);
            }
        }
        let Some(ptrs) = ptr_buf.as_ref() else {
            return Err(Error::PreconditionerSetup(
                "afsai: row pointers missing".into(),
            ));
        };
        peak = peak.max(held + col_count.bytes() + buf.bytes() + arenas_bytes + ptrs.bytes());
        backend.afsai_compact::<T>(
            cap,
            start..end,
            &buf.out_cols,
            &buf.out_len,
            ptrs,
            arena,
            &mut col_count,
        )?;
        *used += entries;
        layout_s += t2.elapsed().as_secs_f64();
        batches += 1;
        start = end;
    }
    drop((buffers, ptr_buf));

    // 4. The arenas' used parts joined into G's column indices (the only arena taken as it is
    //    when it is exactly full).
    let t3 = Instant::now();
    let nnz = row_ptr[n] as usize;
    let g_row_ptr = backend.upload(&row_ptr)?;
    let g_col_idx = match arenas.as_slice() {
        [(arena, used)] if *used == nnz && arena.len() == nnz => {
            let Some((arena, _)) = arenas.pop() else {
                return Err(Error::PreconditionerSetup("afsai: arena missing".into()));
            };
            arena
        }
        _ => {
            let mut g_col_idx = backend.alloc::<u32>(nnz)?;
            peak = peak.max(
                held + col_count.bytes() + arenas_bytes + g_row_ptr.bytes() + g_col_idx.bytes(),
            );
            let mut offset = 0usize;
            for (arena, used) in &arenas {
                backend.afsai_place::<T>(arena, *used, &mut g_col_idx, offset)?;
                offset += used;
            }
            g_col_idx
        }
    };
    backend.synchronize()?;
    drop(arenas);
    layout_s += t3.elapsed().as_secs_f64();
    Ok(GrownPattern {
        row_ptr,
        g_row_ptr,
        g_col_idx,
        col_count,
        growth_s,
        layout_s,
        host_s,
        peak_bytes: peak,
        batches,
    })
}
