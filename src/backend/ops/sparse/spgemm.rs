//! The sparse matrix product C = A B on the device, row by row (kernels `spgemm_upper`,
//! `spgemm_symbolic`, `spgemm_symbolic_team`, `spgemm_copy_pattern` and `spgemm_values` of
//! `kernels/sparse.kc`), each with its host reference.
//!
//! The symbolic phase writes every row's sorted distinct columns into a scratch of one `u32`
//! per product. On the large products of a multigrid setup that scratch was the largest
//! buffer of the setup (R (A P) on 3D Poisson: 1.6 times A's bytes), so it holds one block of
//! rows at a time: when the products exceed [`block_budget`], the rows are split into blocks
//! of about that many products, and the symbolic phase runs twice per block (once for the
//! lengths of C's rows, once more to copy the columns into C after their scan).

use super::{launch_items, len, scan_u32, CsrBuffers, CsrRef};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::launch::{KernelArg, KernelRuntime};
use crate::backend::ops::{Kernel, VectorOps};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// Rows of a product with at least this many products get a work-group each in the symbolic
/// phase (kernel `spgemm_symbolic_team`, a hash table in local memory) instead of one
/// work-item (sorted insertion, quadratic in the row's length): the Galerkin products R (A P)
/// of multigrid have rows of 500-3000 products.
const SPGEMM_TEAM_MIN_PRODUCTS: u32 = 128;
/// Rows of more products than this stay with one work-item: none. Up to `SPGEMM_TEAM_TABLE` / 2
/// (`kernels/sparse.kc`) the team's hash table is in local memory, above in the row's slots of
/// the scratch; a row of more distinct columns than the team's keys hold goes back to one
/// work-item. (With blocks of rows, rows of 2048-3000 products left to one work-item each made
/// every block's launch as long as its slowest row: the 3D Poisson setup took 2.6x as long.)
const SPGEMM_TEAM_MAX_PRODUCTS: u32 = u32::MAX;

/// Products below which the symbolic phase runs on all rows at once (a scratch of 4 MiB):
/// fewer, larger launches where the memory is small anyway.
const MIN_BLOCK_PRODUCTS: usize = 1 << 20;

/// The products of one block of rows of the symbolic phase: half the entries of A and B
/// together, at least [`MIN_BLOCK_PRODUCTS`]. The scratch then weighs 2 bytes per entry of the
/// operands, a sixth of their bytes in double precision.
fn block_budget<T: Scalar>(a: CsrRef<'_, T>, b: CsrRef<'_, T>) -> usize {
    MIN_BLOCK_PRODUCTS.max((a.nnz() + b.nnz()) / 2)
}

/// Rows of the symbolic phase done together: their products lie at `first..first + products`
/// of the product numbering (the scan of the rows' bounds).
#[derive(Debug, Clone, PartialEq, Eq)]
struct RowBlock {
    rows: Range<usize>,
    first: usize,
    products: usize,
}

/// The row blocks of a product with `products` products in all, whose scanned bounds are
/// `upper_ptr` (n + 1 entries): one block when they fit `budget`, else consecutive blocks of at
/// most `budget` products each (a row of more alone in its block). Reads `upper_ptr` only then.
fn row_blocks<B: VectorOps + ?Sized>(
    backend: &B,
    upper_ptr: &Buffer<u32>,
    products: usize,
    budget: usize,
) -> Result<Vec<RowBlock>> {
    let n = upper_ptr.len().saturating_sub(1);
    if products <= budget {
        return Ok(vec![RowBlock {
            rows: 0..n,
            first: 0,
            products,
        }]);
    }
    Ok(split_rows(&backend.download(upper_ptr)?, budget))
}

/// [`row_blocks`] on the scanned bounds read back.
fn split_rows(up: &[u32], budget: usize) -> Vec<RowBlock> {
    let n = up.len().saturating_sub(1);
    let mut blocks = Vec::new();
    let mut r0 = 0;
    while r0 < n {
        let target = up[r0] as usize + budget;
        // The last row end r1 with up[r1] <= target (the bounds ascend), at least one row.
        let last = up
            .partition_point(|&v| v as usize <= target)
            .saturating_sub(1);
        let r1 = last.clamp(r0 + 1, n);
        blocks.push(RowBlock {
            rows: r0..r1,
            first: up[r0] as usize,
            products: (up[r1] - up[r0]) as usize,
        });
        r0 = r1;
    }
    blocks
}

/// C = A B on the device, row by row: the bound of every row's length (its products), their
/// scan, the sorted distinct columns of every row into a scratch (a block of rows at a time,
/// see the module), the scan of the true lengths, the columns copied into C, then the values,
/// every entry of C summed in the order of A's entries and B's (the same order on every
/// backend). The scratch is freed before C's values are allocated.
pub(crate) fn spgemm<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    b: CsrRef<'_, T>,
) -> Result<CsrBuffers<T>> {
    spgemm_in_blocks(backend, a, b, block_budget(a, b))
}

/// [`spgemm`] with blocks of at most `budget` products (a row of more alone in its block).
pub(crate) fn spgemm_in_blocks<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    b: CsrRef<'_, T>,
    budget: usize,
) -> Result<CsrBuffers<T>> {
    if a.n_cols != b.n_rows {
        return Err(Error::dims(
            "spgemm: columns of A vs rows of B",
            a.n_cols,
            b.n_rows,
        ));
    }
    let n = a.n_rows;
    let rt = backend.kernel_runtime();
    let mut upper = backend.alloc::<u32>(n)?;
    if rt.is_host() {
        let (ap, ac, bp) = (a.row_ptr.host()?, a.col_idx.host()?, b.row_ptr.host()?);
        for (i, u) in upper.host_mut()?.iter_mut().enumerate() {
            let products: u64 = (ap[i] as usize..ap[i + 1] as usize)
                .map(|p| u64::from(bp[ac[p] as usize + 1] - bp[ac[p] as usize]))
                .sum();
            *u = u32::try_from(products).unwrap_or(u32::MAX);
        }
    } else {
        launch_items::<T>(
            &rt,
            Kernel::SpgemmUpper,
            n,
            &[
                len("spgemm rows", n)?,
                KernelArg::buffer(a.row_ptr),
                KernelArg::buffer(a.col_idx),
                KernelArg::buffer(b.row_ptr),
                KernelArg::buffer(&upper),
            ],
        )?;
    }
    let mut upper_ptr = backend.alloc::<u32>(n + 1)?;
    let products = scan_u32::<T, B>(backend, "spgemm products", &upper, &mut upper_ptr)?;
    let blocks = row_blocks(backend, &upper_ptr, products, budget)?;
    let largest = blocks.iter().map(|b| b.products).max().unwrap_or(0);
    let mut scratch = backend.alloc::<u32>(largest)?;
    let mut counts = upper;
    let two_passes = blocks.len() > 1;
    let symbolic = |block: &RowBlock, scratch: &mut Buffer<u32>, counts: &mut Buffer<u32>| {
        symbolic_rows(&rt, (a, b), &upper_ptr, block, scratch, counts)
    };
    // Pass 1: the lengths of C's rows (with one block, its columns stay in the scratch).
    for block in &blocks {
        symbolic(block, &mut scratch, &mut counts)?;
    }
    let mut c_ptr = backend.alloc::<u32>(n + 1)?;
    let nnz = scan_u32::<T, B>(backend, "spgemm entries", &counts, &mut c_ptr)?;
    let mut c_cols = backend.alloc::<u32>(nnz)?;
    // Pass 2: each block's columns (again, with several blocks) copied into C.
    for block in &blocks {
        if two_passes {
            symbolic(block, &mut scratch, &mut counts)?;
        }
        copy_pattern::<T>(&rt, &upper_ptr, block, &scratch, &c_ptr, &mut c_cols)?;
    }
    drop((scratch, counts, upper_ptr));
    let mut values = backend.alloc::<T>(nnz)?;
    spgemm_values(backend, a, b, (&c_ptr, &c_cols), &mut values)?;
    Ok(CsrBuffers {
        n_rows: n,
        n_cols: b.n_cols,
        row_ptr: c_ptr,
        col_idx: c_cols,
        values,
    })
}

/// The symbolic phase on the rows of `block`: their sorted distinct columns into the scratch
/// from position `upper_ptr[i] - block.first`, their number into `counts`.
fn symbolic_rows<T: Scalar>(
    rt: &KernelRuntime<'_>,
    (a, b): (CsrRef<'_, T>, CsrRef<'_, T>),
    upper_ptr: &Buffer<u32>,
    block: &RowBlock,
    scratch: &mut Buffer<u32>,
    counts: &mut Buffer<u32>,
) -> Result<()> {
    check_scratch(scratch, block)?;
    let rows = block.rows.clone();
    if rt.is_host() {
        let (ap, ac, bp, bc) = (
            a.row_ptr.host()?,
            a.col_idx.host()?,
            b.row_ptr.host()?,
            b.col_idx.host()?,
        );
        let up = upper_ptr.host()?;
        let (s, c) = (scratch.host_mut()?, counts.host_mut()?);
        for i in rows {
            let base = up[i] as usize - block.first;
            let row = &mut s[base..base + (up[i + 1] - up[i]) as usize];
            let mut m = 0;
            for &k in &ac[ap[i] as usize..ap[i + 1] as usize] {
                let k = k as usize;
                for &j in &bc[bp[k] as usize..bp[k + 1] as usize] {
                    if let Err(at) = row[..m].binary_search(&j) {
                        row.copy_within(at..m, at + 1);
                        row[at] = j;
                        m += 1;
                    }
                }
            }
            c[i] = m as u32;
        }
        return Ok(());
    }
    // Rows of SPGEMM_TEAM_MIN_PRODUCTS..=SPGEMM_TEAM_MAX_PRODUCTS products by a work-group
    // each, the others (and those the team leaves) by one work-item each (the same output).
    let args = [
        len("spgemm rows", rows.start)?,
        len("spgemm rows", rows.end)?,
        KernelArg::buffer(a.row_ptr),
        KernelArg::buffer(a.col_idx),
        KernelArg::buffer(b.row_ptr),
        KernelArg::buffer(b.col_idx),
        KernelArg::buffer(upper_ptr),
        len("spgemm products", block.first)?,
        KernelArg::U32(SPGEMM_TEAM_MIN_PRODUCTS),
        KernelArg::U32(SPGEMM_TEAM_MAX_PRODUCTS),
        KernelArg::buffer(scratch),
        KernelArg::buffer(counts),
    ];
    // SAFETY: rows of A index rows of B (a.n_cols == b.n_rows checked by spgemm); row i of
    // the block writes at most upper[i] columns from upper_ptr[i] - first, inside the scratch
    // of the block's products (checked); the team kernel loops over the rows by group, any
    // group count.
    unsafe { rt.launch::<T>(Kernel::SpgemmSymbolicTeam, rows.len().clamp(1, 8192), &args)? };
    launch_items::<T>(rt, Kernel::SpgemmSymbolic, rows.len(), &args)
}

/// The scratch holds the products of `block` (it is sized for the largest block).
fn check_scratch(scratch: &Buffer<u32>, block: &RowBlock) -> Result<()> {
    if scratch.len() < block.products {
        return Err(Error::dims(
            "spgemm scratch (at least)",
            block.products,
            scratch.len(),
        ));
    }
    Ok(())
}

/// C's columns of the rows of `block`, copied from the scratch the symbolic phase filled.
fn copy_pattern<T: Scalar>(
    rt: &KernelRuntime<'_>,
    upper_ptr: &Buffer<u32>,
    block: &RowBlock,
    scratch: &Buffer<u32>,
    c_ptr: &Buffer<u32>,
    c_cols: &mut Buffer<u32>,
) -> Result<()> {
    check_scratch(scratch, block)?;
    if rt.is_host() {
        let (up, s, cp) = (upper_ptr.host()?, scratch.host()?, c_ptr.host()?);
        let cc = c_cols.host_mut()?;
        for i in block.rows.clone() {
            let (dst, l) = (cp[i] as usize, (cp[i + 1] - cp[i]) as usize);
            let from = up[i] as usize - block.first;
            cc[dst..dst + l].copy_from_slice(&s[from..from + l]);
        }
        return Ok(());
    }
    // SAFETY (launch_items): row i of C has c_ptr[i+1] - c_ptr[i] entries, which the symbolic
    // phase of this block wrote from upper_ptr[i] - first in the scratch.
    launch_items::<T>(
        rt,
        Kernel::SpgemmCopyPattern,
        block.rows.len(),
        &[
            len("spgemm rows", block.rows.start)?,
            len("spgemm rows", block.rows.end)?,
            KernelArg::buffer(upper_ptr),
            len("spgemm products", block.first)?,
            KernelArg::buffer(scratch),
            KernelArg::buffer(c_ptr),
            KernelArg::buffer(c_cols),
        ],
    )
}

/// The values of C = A B into `values` on C's kept pattern `(row_ptr, col_idx)` (kernel
/// `spgemm_values`, one work-item per entry): a numeric refresh of a product whose symbolic
/// phase ran before. Entries of the pattern with no product get zero.
pub(crate) fn spgemm_values<B: VectorOps + ?Sized, T: Scalar>(
    backend: &B,
    a: CsrRef<'_, T>,
    b: CsrRef<'_, T>,
    (c_ptr, c_cols): (&Buffer<u32>, &Buffer<u32>),
    values: &mut Buffer<T>,
) -> Result<()> {
    let n = a.n_rows;
    if a.n_cols != b.n_rows {
        return Err(Error::dims(
            "spgemm: columns of A vs rows of B",
            a.n_cols,
            b.n_rows,
        ));
    }
    check_len("spgemm row pointers of C", c_ptr, n + 1)?;
    check_len("spgemm values of C", values, c_cols.len())?;
    let rt = backend.kernel_runtime();
    if rt.is_host() {
        let (ap, ac, av) = (a.row_ptr.host()?, a.col_idx.host()?, a.values.host()?);
        let (bp, bc, bv) = (b.row_ptr.host()?, b.col_idx.host()?, b.values.host()?);
        let (cp, cc) = (c_ptr.host()?, c_cols.host()?);
        let cv = values.host_mut()?;
        for i in 0..n {
            let (lo, hi) = (cp[i] as usize, cp[i + 1] as usize);
            if hi < lo || hi > cc.len() {
                return Err(Error::param(
                    "spgemm",
                    "the row pointers of C are not ascending within its columns",
                ));
            }
            cv[lo..hi].fill(T::zero());
            for p in ap[i] as usize..ap[i + 1] as usize {
                let k = ac[p] as usize;
                for q in bp[k] as usize..bp[k + 1] as usize {
                    if let Ok(at) = cc[lo..hi].binary_search(&bc[q]) {
                        cv[lo + at] += av[p] * bv[q];
                    }
                }
            }
        }
        return Ok(());
    }
    // One work-item per entry of C (a row-by-row product left the long rows of R (A P) to one
    // work-item each); the same sums in the same order. SAFETY (launch_items): the entries'
    // columns index B's columns, the rows of A index B's rows (checked shapes); C's pattern is
    // one these operations built for a product of these shapes.
    let nnz = c_cols.len();
    launch_items::<T>(
        &rt,
        Kernel::SpgemmValues,
        nnz,
        &[
            len("spgemm entries", nnz)?,
            len("spgemm rows", n)?,
            KernelArg::buffer(a.row_ptr),
            KernelArg::buffer(a.col_idx),
            KernelArg::buffer(a.values),
            KernelArg::buffer(b.row_ptr),
            KernelArg::buffer(b.col_idx),
            KernelArg::buffer(b.values),
            KernelArg::buffer(c_ptr),
            KernelArg::buffer(c_cols),
            KernelArg::buffer(values),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::{split_rows, RowBlock};

    fn block(rows: std::ops::Range<usize>, first: usize, products: usize) -> RowBlock {
        RowBlock {
            rows,
            first,
            products,
        }
    }

    #[test]
    fn rows_split_into_blocks_of_at_most_the_budget() {
        // Rows of 3, 3, 0, 5, 2 and 9 products; a row of more than the budget alone.
        let up = [0, 3, 6, 6, 11, 13, 22];
        assert_eq!(
            split_rows(&up, 6),
            vec![
                block(0..3, 0, 6),
                block(3..4, 6, 5),
                block(4..5, 11, 2),
                block(5..6, 13, 9)
            ]
        );
        assert_eq!(split_rows(&up, 22), vec![block(0..6, 0, 22)]);
        assert_eq!(split_rows(&[0, 0, 0], 1), vec![block(0..2, 0, 0)]);
        assert_eq!(split_rows(&[0], 1), vec![]);
    }
}
