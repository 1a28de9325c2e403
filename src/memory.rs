//! Host allocations whose size comes from user input (file headers, generator sizes): checked
//! against the memory the machine has before anything is allocated or touched, and fallible,
//! so a hostile size is an [`Error::OutOfMemory`] within milliseconds, never an abort or a
//! machine thrashing for minutes (RELIABILITY.md rows 16 and 22).

use crate::error::{Error, Result};

/// Bytes of memory available to this process now (Linux: `MemAvailable` of /proc/meminfo),
/// or `None` where that is not known.
pub fn available_bytes() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// [`Error::OutOfMemory`] for `bytes` of `what` on the host.
pub(crate) fn host_oom(what: &str, bytes: usize, detail: impl Into<String>) -> Error {
    Error::OutOfMemory {
        device: "host".into(),
        bytes,
        detail: format!("{what}: {}", detail.into()),
    }
}

/// Check that `bytes` (the sum of what an operation is about to allocate) fits in the
/// available memory (from 16 MiB on); `None` bytes means the size overflowed.
pub(crate) fn check_budget(what: &str, bytes: Option<usize>) -> Result<()> {
    let Some(bytes) = bytes else {
        return Err(host_oom(
            what,
            usize::MAX,
            "the size overflows the address space",
        ));
    };
    // Below this size the check is skipped: reading /proc/meminfo costs about 6 us, more than
    // the allocation, and a failure of one that small is caught by `try_reserve_exact`.
    const CHECKED_FROM_BYTES: usize = 16 << 20;
    if bytes < CHECKED_FROM_BYTES {
        return Ok(());
    }
    if let Some(avail) = available_bytes() {
        if bytes > avail {
            return Err(host_oom(
                what,
                bytes,
                format!("{bytes} bytes needed, {avail} available"),
            ));
        }
    }
    Ok(())
}

/// A vector of `len` copies of `value`, or [`Error::OutOfMemory`].
pub(crate) fn try_filled<T: Clone>(what: &str, len: usize, value: T) -> Result<Vec<T>> {
    let bytes = len.checked_mul(std::mem::size_of::<T>());
    check_budget(what, bytes)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|e| host_oom(what, bytes.unwrap_or(usize::MAX), e.to_string()))?;
    v.resize(len, value);
    Ok(v)
}

/// An empty vector with room for `len` elements, or [`Error::OutOfMemory`].
pub(crate) fn try_with_capacity<T>(what: &str, len: usize) -> Result<Vec<T>> {
    let bytes = len.checked_mul(std::mem::size_of::<T>());
    check_budget(what, bytes)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|e| host_oom(what, bytes.unwrap_or(usize::MAX), e.to_string()))?;
    Ok(v)
}

/// Elements per piece of [`try_concat`]'s parallel copy.
const COPY_PIECE: usize = 1 << 16;

/// `parts` one after another in one new vector (one fallible allocation, else
/// [`Error::OutOfMemory`]), copied in parallel in pieces of at most [`COPY_PIECE`] elements,
/// so that the copy and the first touch of the new pages spread over the threads (a serial
/// copy of a matrix's arrays was most of the AMG refresh's serial time).
pub(crate) fn try_concat<T: Copy + Send + Sync>(what: &str, parts: &[&[T]]) -> Result<Vec<T>> {
    use rayon::prelude::*;
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut out: Vec<T> = try_with_capacity(what, total)?;
    if total <= COPY_PIECE {
        for p in parts {
            out.extend_from_slice(p);
        }
        return Ok(out);
    }
    // The destination of every piece of every part, in order: they partition 0..total.
    let mut pieces: Vec<(&mut [std::mem::MaybeUninit<T>], &[T])> = Vec::new();
    let mut rest = &mut out.spare_capacity_mut()[..total];
    for p in parts {
        for src in p.chunks(COPY_PIECE) {
            let (dst, tail) = rest.split_at_mut(src.len());
            pieces.push((dst, src));
            rest = tail;
        }
    }
    pieces.into_par_iter().for_each(|(dst, src)| {
        for (d, &v) in dst.iter_mut().zip(src) {
            d.write(v);
        }
    });
    // SAFETY: the pieces partition the first `total` elements of the capacity (taken in order
    // from one slice of that length) and each was written in full above.
    unsafe { out.set_len(total) };
    Ok(out)
}

/// [`try_filled`] for plain values, filled in parallel in pieces of [`COPY_PIECE`] elements
/// (the first touch of the new pages spread over the threads, as [`try_concat`]'s copy).
pub(crate) fn try_filled_in_parallel<T: Copy + Send + Sync>(
    what: &str,
    len: usize,
    value: T,
) -> Result<Vec<T>> {
    use rayon::prelude::*;
    let mut out: Vec<T> = try_with_capacity(what, len)?;
    out.spare_capacity_mut()[..len]
        .par_chunks_mut(COPY_PIECE)
        .for_each(|piece| {
            for d in piece {
                d.write(value);
            }
        });
    // SAFETY: the pieces cover the first `len` elements of the capacity, each written above.
    unsafe { out.set_len(len) };
    Ok(out)
}

/// Bytes per piece of [`copy_in_parallel`]; a shorter copy runs on the calling thread.
const COPY_PIECE_BYTES: usize = 1 << 20;

/// `dst.copy_from_slice(src)` for plain data, in pieces of 1 MiB on the thread pool when it is
/// longer than one piece (a host backend's write of a matrix's values: a serial copy of 56 MB
/// was a tenth of the host AMG refresh on 16 cores). Panics when the lengths differ, as
/// `copy_from_slice` does.
pub(crate) fn copy_in_parallel<T: bytemuck::Pod>(dst: &mut [T], src: &[T]) {
    use rayon::prelude::*;
    let (dst, src): (&mut [u8], &[u8]) = (bytemuck::cast_slice_mut(dst), bytemuck::cast_slice(src));
    if dst.len() <= COPY_PIECE_BYTES {
        dst.copy_from_slice(src);
        return;
    }
    assert_eq!(dst.len(), src.len(), "copy_in_parallel: lengths differ");
    dst.par_chunks_mut(COPY_PIECE_BYTES)
        .zip(src.par_chunks(COPY_PIECE_BYTES))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// A copy of `src` made by [`try_concat`].
pub(crate) fn try_copy<T: Copy + Send + Sync>(what: &str, src: &[T]) -> Result<Vec<T>> {
    try_concat(what, &[src])
}

/// Rows per stored entry beyond which a row-pointer array larger than [`SPARSE_ROWS_BYTES`]
/// is refused up front: a file declaring 3e9 rows and 2 entries needs a 24 GB row-pointer
/// array, and filling it would take longer than any user waits for an answer.
pub const MAX_ROWS_PER_ENTRY: usize = 64;
/// See [`MAX_ROWS_PER_ENTRY`]: 16 MiB (2M rows), so that converting such a file stays under
/// 100 MB (the conversion holds two row-sized arrays). It was 1 GiB until the Matrix Market fuzz
/// target found a 79-byte file (1e8 rows, one entry) that took over 10 s and 1.2 GB to convert.
pub const SPARSE_ROWS_BYTES: usize = 16 << 20;

/// Refuse a CSR row-pointer array for `n_rows` rows holding only `nnz` entries when it is both
/// large and mostly empty (see [`MAX_ROWS_PER_ENTRY`]).
pub(crate) fn check_row_pointers(n_rows: usize, nnz: usize) -> Result<()> {
    let bytes = n_rows
        .saturating_add(1)
        .saturating_mul(std::mem::size_of::<usize>());
    check_sparse_fill("CSR row pointers", n_rows, bytes, nnz)
}

/// Refuse an array of `len` slots (`bytes` in all) that only `entries` stored values fill, when
/// it is both large and mostly empty (the rule of [`MAX_ROWS_PER_ENTRY`]): a Matrix Market
/// coordinate vector declaring 1.7e9 entries with none stored (found by the fuzz target) would
/// otherwise allocate 13.7 GB of zeros.
pub(crate) fn check_sparse_fill(
    what: &str,
    len: usize,
    bytes: usize,
    entries: usize,
) -> Result<()> {
    if bytes > SPARSE_ROWS_BYTES && len > MAX_ROWS_PER_ENTRY.saturating_mul(entries.max(1)) {
        return Err(host_oom(
            what,
            bytes,
            format!(
                "{len} rows hold only {entries} entries: the array alone would take {bytes} bytes \
                 (more than {MAX_ROWS_PER_ENTRY} empty rows per entry and more than 16 MiB); \
                 refused before allocating"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel concatenation equals the serial one, for parts below, at and above a
    /// piece's size, empty parts included.
    #[test]
    fn try_concat_equals_the_serial_concatenation() {
        let a: Vec<u64> = (0..(3 * COPY_PIECE as u64 + 5)).collect();
        let b: Vec<u64> = (0..17).map(|x| x * 7).collect();
        let c: Vec<u64> = (0..COPY_PIECE as u64).rev().collect();
        let parts: [&[u64]; 5] = [&a, &[], &b, &c, &a[..3]];
        let serial: Vec<u64> = parts.concat();
        assert_eq!(try_concat("test", &parts).unwrap(), serial);
        assert_eq!(try_copy("test", &a).unwrap(), a);
        assert_eq!(try_concat::<u64>("test", &[]).unwrap(), Vec::<u64>::new());
        assert_eq!(try_copy("test", &b).unwrap(), b);
    }

    /// The parallel fill and copy equal the serial ones below, at and above a piece's size.
    #[test]
    fn parallel_fill_and_copy_equal_the_serial_ones() {
        for len in [0, 5, COPY_PIECE, 3 * COPY_PIECE + 7] {
            let filled = try_filled_in_parallel("test", len, 2.5f64).unwrap();
            assert_eq!(filled, vec![2.5f64; len]);
        }
        let bytes = COPY_PIECE_BYTES / std::mem::size_of::<f64>();
        for len in [0, 9, bytes, 3 * bytes + 11] {
            let src: Vec<f64> = (0..len).map(|i| i as f64 * 0.5 - 3.0).collect();
            let mut dst = vec![0.0f64; len];
            copy_in_parallel(&mut dst, &src);
            assert_eq!(dst, src);
        }
    }
}
