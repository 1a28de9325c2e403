//! One level of the distributed setup on this rank: the one-process numeric phase
//! ([`super::super::numeric`]) on the rank's rows, with the ghost values, ghost rows and
//! Galerkin contributions exchanged between the ranks.

use super::rank_rows::{sum_on_owners, RankRows};
use crate::dist::{Comm, RowPartition};
use crate::error::{Error, Result};
use crate::matrix::spgemm::spgemm;
use crate::matrix::CsrMatrix;
use crate::precond::amg::aggregate::{aggregate, Aggregates, UNAGGREGATED};
use crate::precond::amg::hierarchy::{STALL_DENOMINATOR, STALL_NUMERATOR};
use crate::precond::amg::options::{AmgOptions, Coarsening, Smoother};
use crate::precond::amg::prolongation::{
    filtered_rows, gershgorin_bound, positive_diagonal, power_estimate, scaled_product,
    smoothed_prolongator, tentative_prolongator,
};
use crate::precond::amg::smoother::LevelSmoother;
use crate::precond::amg::strength::strength_graph;
use crate::scalar::Scalar;

/// A level's transfer operators and smoother on this rank, global column numbers, ready for
/// upload.
pub(super) struct RankLevel<T> {
    /// This rank's rows of P (its fine rows; coarse columns).
    pub(super) p: CsrMatrix<T>,
    /// This rank's rows of R = P^T (its coarse rows; fine columns).
    pub(super) r: CsrMatrix<T>,
    /// The partition of the coarse level's rows.
    pub(super) coarse_partition: RowPartition,
    /// The smoother's data for the rank's rows.
    pub(super) smoother: LevelSmoother<T>,
}

/// Level `l` of the rows `a` (strength threshold `eps`), and the next level's rows; `None`
/// when the level does not coarsen (every rank decides alike, from global counts).
/// Collective; a failure on one rank is an error on every rank.
pub(super) fn coarsen<T: Scalar>(
    comm: &Comm,
    a: &RankRows<T>,
    eps: f64,
    l: usize,
    options: &AmgOptions,
) -> Result<Option<(RankLevel<T>, RankRows<T>)>> {
    let n_local = a.n_local();
    // The diagonal, its ghost entries, the strong couplings within the rank and the aggregates
    // (which do not cross ranks).
    let local = (|| {
        let diag = positive_diagonal(&a.ext, l)?;
        let graph = strength_graph(a.local(), eps, 1)?;
        let aggregates = aggregate(&graph)?;
        Ok((diag, graph, aggregates))
    })();
    let (diag, graph, aggregates) = comm.agree("an AMG level's aggregation", local)?;
    let ghost_diag = a.ghost_values(comm, &diag)?;
    let counts: Vec<usize> = comm
        .all_gather_u64(aggregates.count as u64)
        .into_iter()
        .map(|c| c as usize)
        .collect();
    let n_global = a.partition.n();
    let n_coarse: usize = counts.iter().sum();
    if n_coarse == 0 || n_coarse * STALL_DENOMINATOR > n_global * STALL_NUMERATOR {
        return Ok(None);
    }
    if n_coarse >= UNAGGREGATED as usize {
        return Err(Error::IndexOverflow {
            what: "AMG coarse unknowns".into(),
            value: n_coarse,
            max: UNAGGREGATED as usize - 1,
        });
    }
    let mut offsets = vec![0usize];
    for c in &counts {
        offsets.push(offsets.last().copied().unwrap_or(0) + c);
    }
    let coarse_partition = RowPartition::from_offsets(offsets.clone())?;
    // Every node's aggregate in global coarse numbering, the ghost nodes' from their owners.
    let first_coarse = offsets[comm.rank()] as u32;
    let global_of = |g: u32| {
        if g == UNAGGREGATED {
            g
        } else {
            g + first_coarse
        }
    };
    let mut of_node: Vec<u32> = aggregates.of_node.iter().map(|&g| global_of(g)).collect();
    let as_f64: Vec<f64> = of_node
        .iter()
        .map(|&g| if g == UNAGGREGATED { -1.0 } else { g as f64 })
        .collect();
    let ghost_aggregates = a.ghost_values(comm, &as_f64)?;
    let p = match options.coarsening {
        Coarsening::Aggregation => comm.agree(
            "an AMG level's prolongator",
            tentative_prolongator(
                &Aggregates {
                    of_node,
                    count: n_coarse,
                },
                1,
            ),
        )?,
        Coarsening::SmoothedAggregation => {
            of_node.extend(ghost_aggregates.iter().map(|&g| {
                if g < 0.0 {
                    UNAGGREGATED
                } else {
                    g as u32
                }
            }));
            let extended = Aggregates {
                of_node,
                count: n_coarse,
            };
            // Couplings to ghost columns are strong by the one-process measure
            // |a_ij| >= eps sqrt(a_ii a_jj) (read in this direction only: the ranks do not
            // exchange the transposed entries).
            let strong = |i: usize, j: usize| {
                if j < n_local {
                    return graph.is_strong(i, j);
                }
                let (c, v) = a.ext.row(i);
                c.binary_search(&j).is_ok_and(|k| {
                    let aij = v[k].to_f64().abs();
                    aij > 0.0 && aij >= eps * (diag[i] * ghost_diag[j - n_local]).sqrt()
                })
            };
            let filtered = comm.agree(
                "an AMG level's filtered matrix",
                filtered_rows(&a.ext, 1, strong)
                    .and_then(|f| positive_diagonal(&f, l).map(|d| (f, d))),
            )?;
            let (filtered, filtered_diag) = filtered;
            let weight = match options.prolongation_weight {
                Some(w) => w,
                None => {
                    let rho = spectral_radius(comm, a, &filtered, &filtered_diag)?;
                    if rho > 0.0 && rho.is_finite() {
                        4.0 / 3.0 / rho
                    } else {
                        2.0 / 3.0
                    }
                }
            };
            comm.agree(
                "an AMG level's prolongator",
                smoothed_prolongator(&filtered, &extended, 1, weight),
            )?
        }
    };
    // A P from the rank's rows of A and the rows of P its ghost columns name; the rank's
    // share of R (A P) = P^T (A P) and of R = P^T, summed on the coarse rows' owners.
    let ghost_p = a.ghost_rows(comm, &p)?;
    let products = (|| {
        let p_ext = stack(&p, &ghost_p)?;
        let ap = spgemm(&a.ext, &p_ext)?;
        let pt = p.transpose();
        let coarse = spgemm(&pt, &ap)?;
        Ok((pt, coarse))
    })();
    let (pt, coarse) = comm.agree("an AMG level's Galerkin product", products)?;
    let next_rows = sum_on_owners(comm, &coarse, &coarse_partition)?;
    drop(coarse);
    let first = a.first(comm);
    let pt_global = CsrMatrix::new(
        pt.n_rows(),
        n_global,
        pt.row_ptr().to_vec(),
        pt.col_idx().iter().map(|&c| c + first).collect(),
        pt.values().to_vec(),
    );
    let pt_global = comm.agree("an AMG level's restriction", pt_global)?;
    let r = sum_on_owners(comm, &pt_global, &coarse_partition)?;
    // The estimate first, on every rank: it is collective.
    let rho = match options.smoother {
        Smoother::Jacobi | Smoother::Chebyshev { .. } => spectral_radius(comm, a, &a.ext, &diag)?,
        Smoother::L1Jacobi => 0.0,
    };
    let smoother = LevelSmoother::with_radius(
        &a.ext,
        &diag,
        options.smoother,
        options.jacobi_weight,
        || Ok(rho),
    );
    let smoother = comm.agree("an AMG level's smoother", smoother)?;
    let next = RankRows::new(comm, &next_rows, coarse_partition.clone())?;
    Ok(Some((
        RankLevel {
            p,
            r,
            coarse_partition,
            smoother,
        },
        next,
    )))
}

/// The spectral radius estimate of D^-1 M over every rank's rows (`m` this rank's rows in
/// `level`'s extended numbering, `diag` their diagonal): the one-process power iterations with
/// the halo exchanged before each product and the norms summed over the ranks (collective).
fn spectral_radius<T: Scalar>(
    comm: &Comm,
    level: &RankRows<T>,
    m: &CsrMatrix<T>,
    diag: &[f64],
) -> Result<f64> {
    if level.partition.n() == 0 {
        return Ok(0.0);
    }
    let apply = |x: &[f64], y: &mut [f64]| {
        let x = level.extended_values(comm, x)?;
        scaled_product(m, diag, &x, y);
        Ok(())
    };
    let sums = |s: [f64; 2]| {
        let s = comm.sum_slots(&s);
        [s[0], s[1]]
    };
    let max = |m: f64| comm.all_gather_f64(&[m]).into_iter().fold(0.0, f64::max);
    power_estimate(
        diag,
        level.first(comm),
        gershgorin_bound(m, diag),
        apply,
        &sums,
        &max,
    )
}

/// The rows of `top` followed by those of `bottom` (the same width).
fn stack<T: Scalar>(top: &CsrMatrix<T>, bottom: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
    let mut row_ptr = top.row_ptr().to_vec();
    let base = top.nnz();
    row_ptr.extend(bottom.row_ptr()[1..].iter().map(|&p| p + base));
    let mut cols = top.col_idx().to_vec();
    cols.extend_from_slice(bottom.col_idx());
    let mut vals = top.values().to_vec();
    vals.extend_from_slice(bottom.values());
    CsrMatrix::new(
        top.n_rows() + bottom.n_rows(),
        top.n_cols(),
        row_ptr,
        cols,
        vals,
    )
}
