//! One rank's rows split into the local block (columns it owns, renumbered from 0) and the
//! ghost block (columns other ranks own, renumbered 0..n_ghost in increasing global order, so
//! the ghost entries of each owner are contiguous).

use super::partition::RowPartition;
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// The two blocks of a rank's rows, on the host.
#[derive(Debug, Clone)]
pub struct LocalSplit<T> {
    /// Rows x owned columns (square for a square matrix: the rank's diagonal block), local
    /// numbering.
    pub local: CsrMatrix<T>,
    /// Global column of each ghost entry, increasing.
    pub ghost_columns: Vec<usize>,
    /// Local rows that have ghost entries, increasing.
    pub ghost_rows: Vec<u32>,
    /// Row pointers of the compressed ghost block (one row per `ghost_rows` entry).
    pub ghost_row_ptr: Vec<u32>,
    /// Ghost-numbered columns of the ghost block.
    pub ghost_col_idx: Vec<u32>,
    /// Values of the ghost block.
    pub ghost_values: Vec<T>,
}

impl<T: Scalar> LocalSplit<T> {
    /// Split `rows` (rank `rank`'s rows of the global matrix, global column numbers,
    /// `rows.n_cols()` = global n) by the partition's column ownership.
    pub fn new(rows: &CsrMatrix<T>, partition: &RowPartition, rank: usize) -> Result<Self> {
        Self::with_columns(rows, partition.rows(rank).len(), partition, rank)
    }

    /// [`LocalSplit::new`] for `n_rows` rows of a rectangular matrix whose columns are
    /// distributed by `columns` (an AMG level's prolongator or restriction): the local block is
    /// `n_rows` x the columns `rank` owns.
    pub fn with_columns(
        rows: &CsrMatrix<T>,
        n_rows: usize,
        columns: &RowPartition,
        rank: usize,
    ) -> Result<Self> {
        let owned = columns.rows(rank);
        if rows.n_rows() != n_rows || rows.n_cols() != columns.n() {
            return Err(Error::Distributed(format!(
                "rank {rank}: {} x {} rows do not match the partition ({n_rows} rows, {} \
                 columns)",
                rows.n_rows(),
                rows.n_cols(),
                columns.n()
            )));
        }
        let mut ghost_columns: Vec<usize> = rows
            .col_idx()
            .iter()
            .copied()
            .filter(|c| !owned.contains(c))
            .collect();
        ghost_columns.sort_unstable();
        ghost_columns.dedup();
        let to_u32 = |v: usize, what: &str| {
            u32::try_from(v).map_err(|_| Error::IndexOverflow {
                what: what.into(),
                value: v,
                max: u32::MAX as usize,
            })
        };
        let (mut rp, mut ci, mut va) = (vec![0usize], Vec::new(), Vec::new());
        let (mut grows, mut grp, mut gci, mut gva) =
            (Vec::new(), vec![0u32], Vec::new(), Vec::new());
        for r in 0..rows.n_rows() {
            let (cols, vals) = rows.row(r);
            let before = gci.len();
            for (&c, &v) in cols.iter().zip(vals) {
                if owned.contains(&c) {
                    ci.push(c - owned.start);
                    va.push(v);
                } else {
                    // Present by construction of ghost_columns.
                    let g = ghost_columns.partition_point(|&x| x < c);
                    gci.push(to_u32(g, "ghost column")?);
                    gva.push(v);
                }
            }
            rp.push(ci.len());
            if gci.len() > before {
                grows.push(to_u32(r, "local row")?);
                grp.push(to_u32(gci.len(), "ghost entries")?);
            }
        }
        Ok(Self {
            local: CsrMatrix::new(n_rows, owned.len(), rp, ci, va)?,
            ghost_columns,
            ghost_rows: grows,
            ghost_row_ptr: grp,
            ghost_col_idx: gci,
            ghost_values: gva,
        })
    }

    /// Ghost entries needed from each rank (`ranks` counts, this rank's is 0).
    pub fn needed_from(&self, partition: &RowPartition) -> Vec<usize> {
        let mut counts = vec![0; partition.ranks()];
        for &c in &self.ghost_columns {
            counts[partition.owner(c)] += 1;
        }
        counts
    }
}

/// Rows `range` of `a` with global column numbers (what each rank keeps of a global matrix).
pub fn row_block<T: Scalar>(
    a: &CsrMatrix<T>,
    range: std::ops::Range<usize>,
) -> Result<CsrMatrix<T>> {
    let rp = a.row_ptr();
    let (s, e) = (rp[range.start], rp[range.end]);
    CsrMatrix::new(
        range.len(),
        a.n_cols(),
        rp[range.clone()]
            .iter()
            .chain(std::iter::once(&e))
            .map(|&p| p - s)
            .collect(),
        a.col_idx()[s..e].to_vec(),
        a.values()[s..e].to_vec(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generate::Generator;

    #[test]
    fn local_plus_ghost_product_is_the_global_product() {
        let a = Generator::Poisson2d.generate::<f64>(200).unwrap().matrix;
        let n = a.n_rows();
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut y = vec![0.0; n];
        a.mul_vec(&x, &mut y).unwrap();
        for ranks in [1, 2, 3, 5] {
            let part = RowPartition::balanced_by_nnz(a.row_ptr(), ranks).unwrap();
            for r in 0..ranks {
                let rows = part.rows(r);
                let s = LocalSplit::new(&row_block(&a, rows.clone()).unwrap(), &part, r).unwrap();
                let mut yl = vec![0.0; rows.len()];
                s.local.mul_vec(&x[rows.clone()], &mut yl).unwrap();
                let xg: Vec<f64> = s.ghost_columns.iter().map(|&c| x[c]).collect();
                for (i, &row) in s.ghost_rows.iter().enumerate() {
                    let (a0, a1) = (s.ghost_row_ptr[i] as usize, s.ghost_row_ptr[i + 1] as usize);
                    for k in a0..a1 {
                        yl[row as usize] += s.ghost_values[k] * xg[s.ghost_col_idx[k] as usize];
                    }
                }
                for (i, v) in yl.iter().enumerate() {
                    assert!((v - y[rows.start + i]).abs() < 1e-12);
                }
                assert_eq!(s.needed_from(&part)[r], 0);
                assert_eq!(
                    s.needed_from(&part).iter().sum::<usize>(),
                    s.ghost_columns.len()
                );
            }
        }
    }
}
