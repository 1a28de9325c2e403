//! Greedy aggregation of the strength graph (Vanek, Mandel, Brezina, "Algebraic multigrid by
//! smoothed aggregation for second and fourth order elliptic problems", Computing 56 (1996),
//! section 3, the three-pass algorithm).

use super::strength::StrengthGraph;
use crate::error::{Error, Result};
use crate::memory::try_filled;

/// The marker of a node not (yet) in an aggregate.
pub const UNAGGREGATED: u32 = u32::MAX;

/// Every node's aggregate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregates {
    /// `of_node[i]`: the aggregate of node i, in `0..count`, or [`UNAGGREGATED`] for a node
    /// without strong neighbours (left to the smoother: its row of P is zero).
    pub of_node: Vec<u32>,
    /// Number of aggregates.
    pub count: usize,
}

/// Aggregate the nodes of `strength`, sequentially in node order (deterministic):
///
/// 1. every node that has strong neighbours, none of them aggregated yet, becomes the root of
///    a new aggregate made of itself and its strong neighbours;
/// 2. every node left that has a strong neighbour aggregated in pass 1 joins the aggregate of
///    its first such neighbour (lowest index);
/// 3. every node still left starts a new aggregate with its strong neighbours that are still
///    unaggregated.
///
/// A node without strong neighbours (isolated: a decoupled row, a Dirichlet row, or couplings
/// all below the threshold) joins no aggregate, as in AMGCL: its row of the prolongator is
/// zero and the smoother alone treats it (its row is dominated by its diagonal). Keeping such
/// nodes as aggregates of their own stalled the coarsening of the 3D jump problem
/// `randjump3d` (a low-conductivity cell next to high ones has only weak couplings): its level
/// 4 kept 2434 rows.
///
/// Errors: [`Error::IndexOverflow`] when the aggregates do not fit 32-bit indices;
/// [`Error::OutOfMemory`].
pub fn aggregate(strength: &StrengthGraph) -> Result<Aggregates> {
    let n = strength.n_nodes();
    if n >= UNAGGREGATED as usize {
        return Err(Error::IndexOverflow {
            what: "AMG nodes".into(),
            value: n,
            max: UNAGGREGATED as usize - 1,
        });
    }
    let mut of_node = try_filled("AMG aggregates", n, UNAGGREGATED)?;
    let mut count = 0u32;
    // Pass 1: roots whose whole strong neighbourhood is free.
    for i in 0..n {
        let nbrs = strength.neighbours(i);
        if of_node[i] != UNAGGREGATED || nbrs.is_empty() {
            continue;
        }
        if nbrs.iter().all(|&j| of_node[j] == UNAGGREGATED) {
            of_node[i] = count;
            for &j in nbrs {
                of_node[j] = count;
            }
            count += 1;
        }
    }
    // Pass 2: attach to an aggregate of pass 1 (those numbered below `from_pass1`); a node
    // attached in this pass is not followed by its neighbours (it is marked apart until the
    // pass ends).
    let from_pass1 = count;
    let mut attached = Vec::new();
    for i in 0..n {
        if of_node[i] != UNAGGREGATED {
            continue;
        }
        if let Some(&j) = strength
            .neighbours(i)
            .iter()
            .find(|&&j| of_node[j] < from_pass1)
        {
            attached.push((i, of_node[j]));
        }
    }
    // Attach after the scan: the targets were read from pass-1 aggregates only.
    for (i, agg) in attached {
        of_node[i] = agg;
    }
    // Pass 3: the remaining nodes with their free neighbours; isolated nodes stay out.
    for i in 0..n {
        if of_node[i] != UNAGGREGATED || strength.neighbours(i).is_empty() {
            continue;
        }
        of_node[i] = count;
        for &j in strength.neighbours(i) {
            if of_node[j] == UNAGGREGATED {
                of_node[j] = count;
            }
        }
        count += 1;
    }
    Ok(Aggregates {
        of_node,
        count: count as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::super::strength::strength_graph;
    use super::*;
    use crate::matrix::generate::Generator;
    use crate::matrix::CsrMatrix;

    #[test]
    fn aggregation_covers_every_node_and_a_line_is_cut_into_triples() {
        // 1D Laplacian on 9 nodes. Pass 1: root 0 takes {0, 1}; 2 has an aggregated
        // neighbour; root 3 takes {2, 3, 4}; root 6 takes {5, 6, 7}. Pass 2 attaches 8 to
        // its neighbour 7's aggregate.
        let n = 9;
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 2.0));
            if i > 0 {
                t.push((i, i - 1, -1.0));
            }
            if i + 1 < n {
                t.push((i, i + 1, -1.0));
            }
        }
        let a = CsrMatrix::from_triplets(n, n, &t).unwrap();
        let s = strength_graph(&a, 0.08, 1).unwrap();
        let agg = aggregate(&s).unwrap();
        assert_eq!(agg.of_node, vec![0, 0, 1, 1, 1, 2, 2, 2, 2]);
        assert_eq!(agg.count, 3);
    }

    #[test]
    fn isolated_nodes_join_no_aggregate() {
        let a = CsrMatrix::from_triplets(
            4,
            4,
            &[
                (0, 0, 1.0),
                (1, 1, 2.0),
                (1, 2, -1.0),
                (2, 1, -1.0),
                (2, 2, 2.0),
                (3, 3, 5.0),
            ],
        )
        .unwrap();
        let agg = aggregate(&strength_graph(&a, 0.08, 1).unwrap()).unwrap();
        assert_eq!(agg.of_node, vec![UNAGGREGATED, 0, 0, UNAGGREGATED]);
        assert_eq!(agg.count, 1);
    }

    #[test]
    fn poisson_aggregates_are_connected_and_about_nine_nodes() {
        let a = Generator::Poisson2d
            .generate_with_param::<f64>(40)
            .unwrap()
            .matrix;
        let s = strength_graph(&a, 0.08, 1).unwrap();
        let agg = aggregate(&s).unwrap();
        assert!(agg.of_node.iter().all(|&g| (g as usize) < agg.count));
        let ratio = a.n_rows() as f64 / agg.count as f64;
        assert!((4.0..12.0).contains(&ratio), "{ratio}");
        // Deterministic.
        assert_eq!(agg, aggregate(&s).unwrap());
    }
}
