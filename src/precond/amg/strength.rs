//! Strength of connection: which couplings of a level the aggregation follows.

use crate::error::{Error, Result};
use crate::matrix::spgemm::assemble_rows;
use crate::matrix::CsrMatrix;
use crate::memory::check_budget;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// The strong couplings between the nodes of a level (a node is `block_size` consecutive
/// rows): symmetric, without the diagonal, neighbours sorted ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct StrengthGraph {
    /// Node-by-node pattern; the value of (i, j) is the relative strength
    /// ||A_ij|| / sqrt(||A_ii|| ||A_jj||) (the larger of the two directions).
    graph: CsrMatrix<f64>,
}

impl StrengthGraph {
    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.graph.n_rows()
    }
    /// Number of strong couplings (each direction counted).
    pub fn n_edges(&self) -> usize {
        self.graph.nnz()
    }
    /// The strong neighbours of node `i`, ascending (`i` itself excluded).
    pub fn neighbours(&self, i: usize) -> &[usize] {
        self.graph.row(i).0
    }
    /// Whether `i` and `j` (distinct) are strongly coupled.
    pub fn is_strong(&self, i: usize, j: usize) -> bool {
        self.neighbours(i).binary_search(&j).is_ok()
    }
    /// The pattern with the relative strengths as values.
    pub fn matrix(&self) -> &CsrMatrix<f64> {
        &self.graph
    }
}

/// The strong couplings of `a` at threshold `eps`: nodes i != j (of `block_size` rows each)
/// are strongly coupled when ||A_ij|| >= eps sqrt(||A_ii|| ||A_jj||) and ||A_ij|| > 0 in either
/// direction (Frobenius norms of the node blocks; for `block_size` 1, |a_ij| >= eps
/// sqrt(|a_ii a_jj|), the classical smoothed-aggregation measure). Deterministic.
///
/// Errors: [`Error::InvalidMatrix`] when `a` is not square or its size is not a multiple of
/// `block_size`; [`Error::OutOfMemory`].
pub fn strength_graph<T: Scalar>(
    a: &CsrMatrix<T>,
    eps: f64,
    block_size: usize,
) -> Result<StrengthGraph> {
    let b = block_size.max(1);
    if !a.is_square() || a.n_rows() % b != 0 {
        return Err(Error::InvalidMatrix(format!(
            "strength of connection needs a square matrix of whole {b}-row nodes, got {} x {}",
            a.n_rows(),
            a.n_cols()
        )));
    }
    let nodes = a.n_rows() / b;
    check_budget(
        "AMG strength graph",
        a.nnz().checked_mul(4 * std::mem::size_of::<usize>()),
    )?;
    // Squared Frobenius norms of the node blocks of node i's rows, as (node, sum of squares).
    let gather = |i: usize, blocks: &mut Vec<(usize, f64)>| {
        blocks.clear();
        for r in i * b..(i + 1) * b {
            let (cols, vals) = a.row(r);
            blocks.extend(
                cols.iter()
                    .zip(vals)
                    .map(|(&c, &v)| (c / b, v.to_f64() * v.to_f64())),
            );
        }
        if b > 1 {
            blocks.sort_unstable_by_key(|&(j, _)| j);
            blocks.dedup_by(|next, kept| {
                if next.0 == kept.0 {
                    kept.1 += next.1;
                    true
                } else {
                    false
                }
            });
        }
    };
    let diag_norm: Vec<f64> = (0..nodes)
        .into_par_iter()
        .map_init(Vec::new, |blocks, i| {
            gather(i, blocks);
            blocks
                .iter()
                .find(|&&(j, _)| j == i)
                .map_or(0.0, |&(_, s)| s.sqrt())
        })
        .collect();
    let one_sided = assemble_rows(
        "AMG strength graph",
        nodes,
        nodes,
        || Ok(Vec::new()),
        |i, blocks, cols, vals| {
            gather(i, blocks);
            for &(j, s) in blocks.iter() {
                let norm = s.sqrt();
                let scale = (diag_norm[i] * diag_norm[j]).sqrt();
                if j != i && norm > 0.0 && norm >= eps * scale {
                    cols.push(j);
                    vals.push(if scale > 0.0 {
                        norm / scale
                    } else {
                        f64::INFINITY
                    });
                }
            }
        },
    )?;
    let transposed = one_sided.transpose();
    // S union S^T, row by row (both sorted): the larger strength where both hold the pair.
    let graph = assemble_rows(
        "AMG strength graph",
        nodes,
        nodes,
        || Ok(()),
        |i, _, cols, vals| {
            let (c1, v1) = one_sided.row(i);
            let (c2, v2) = transposed.row(i);
            let (mut p, mut q) = (0, 0);
            while p < c1.len() || q < c2.len() {
                let take1 = q == c2.len() || (p < c1.len() && c1[p] <= c2[q]);
                let take2 = p == c1.len() || (q < c2.len() && c2[q] <= c1[p]);
                match (take1, take2) {
                    (true, true) => {
                        cols.push(c1[p]);
                        vals.push(v1[p].max(v2[q]));
                        p += 1;
                        q += 1;
                    }
                    (true, false) => {
                        cols.push(c1[p]);
                        vals.push(v1[p]);
                        p += 1;
                    }
                    _ => {
                        cols.push(c2[q]);
                        vals.push(v2[q]);
                        q += 1;
                    }
                }
            }
        },
    )?;
    Ok(StrengthGraph { graph })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strength_drops_weak_couplings_and_symmetrizes() {
        // Row 0 couples strongly to 1 (-1 vs sqrt(4*4) = 4: ratio 0.25) and weakly to 2
        // (0.01 / 4); row 2 couples to 0 with -1 (ratio 0.25): symmetrized, 0-2 is strong.
        let a = CsrMatrix::from_triplets(
            3,
            3,
            &[
                (0, 0, 4.0),
                (0, 1, -1.0),
                (0, 2, -0.01),
                (1, 0, -1.0),
                (1, 1, 4.0),
                (2, 0, -1.0),
                (2, 2, 4.0),
            ],
        )
        .unwrap();
        let s = strength_graph(&a, 0.08, 1).unwrap();
        assert_eq!(s.neighbours(0), &[1, 2]);
        assert_eq!(s.neighbours(1), &[0]);
        assert_eq!(s.neighbours(2), &[0]);
        let s = strength_graph(&a, 0.3, 1).unwrap();
        assert_eq!(s.n_edges(), 0);
        // Blocks of 3: one 2-node system.
        let mut t = Vec::new();
        for i in 0..6 {
            t.push((i, i, 4.0));
        }
        t.push((0, 4, -1.0));
        t.push((4, 0, -1.0));
        let a = CsrMatrix::from_triplets(6, 6, &t).unwrap();
        let s = strength_graph(&a, 0.08, 3).unwrap();
        assert_eq!(s.neighbours(0), &[1]);
        assert!(s.is_strong(1, 0));
        assert!(strength_graph(&a, 0.08, 4).is_err());
    }
}
