//! Symmetric reorderings of a square matrix: reverse Cuthill-McKee (RCM).
//!
//! A sparse product gathers `x[j]` for every column `j` of a row. When the rows of a mesh or
//! graph are numbered without regard to its connectivity (many mesh generators, partitioners,
//! graph exports), those gathers jump across the whole vector and miss the caches. RCM
//! (Cuthill and McKee, 1969; reversed by George, 1971) renumbers the unknowns breadth first from
//! a peripheral node, so that neighbours get nearby numbers and the bandwidth
//! `max |i - j|` over the entries shrinks to about the width of a breadth-first level.
//!
//! The ordering is symmetric: solve `(P A P^T) (P x) = P b`, i.e. reorder the matrix with
//! [`Permutation::apply_symmetric`], the right-hand side with [`Permutation::permute`], and the
//! solution back with [`Permutation::unpermute`]. The solution is the same up to rounding. A
//! matrix with uniformly random columns (an expander graph, such as the bench's `powerlaw`) has no
//! ordering with a small bandwidth; RCM then gains little.
//!
//! ```
//! use pipekrylov::matrix::reorder::{bandwidth, rcm};
//! use pipekrylov::matrix::CsrMatrix;
//! // A path 0 - 2 - 1 - 3 numbered badly: bandwidth 2.
//! let a = CsrMatrix::from_triplets(4, 4, &[
//!     (0, 0, 2.0), (1, 1, 2.0), (2, 2, 2.0), (3, 3, 2.0),
//!     (0, 2, -1.0), (2, 0, -1.0), (2, 1, -1.0), (1, 2, -1.0), (1, 3, -1.0), (3, 1, -1.0),
//! ]).unwrap();
//! assert_eq!(bandwidth(&a), 2);
//! let p = rcm(&a).unwrap();
//! // Breadth first from the end node 0 (0, 2, 1, 3), reversed.
//! assert_eq!(p.old_of_new(), &[3, 1, 2, 0]);
//! let b = p.apply_symmetric(&a).unwrap();
//! assert_eq!(bandwidth(&b), 1);
//! // Solve with b, P rhs, then unpermute the solution.
//! let rhs = vec![1.0, 2.0, 3.0, 4.0];
//! assert_eq!(p.unpermute(&p.permute(&rhs).unwrap()).unwrap(), rhs);
//! ```

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::memory::try_with_capacity;
use crate::scalar::Scalar;

/// A permutation of `0..n`: new index `i` holds old index `old_of_new()[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permutation {
    old_of_new: Vec<usize>,
    new_of_old: Vec<usize>,
}

impl Permutation {
    /// The permutation whose new index `i` takes old index `old_of_new[i]`. Errors
    /// ([`Error::InvalidParameter`]) when `old_of_new` is not a permutation of `0..len`.
    pub fn from_old_of_new(old_of_new: Vec<usize>) -> Result<Self> {
        let n = old_of_new.len();
        let mut new_of_old = crate::memory::try_filled("permutation", n, usize::MAX)?;
        for (new, &old) in old_of_new.iter().enumerate() {
            if old >= n || new_of_old[old] != usize::MAX {
                return Err(Error::param(
                    "permutation",
                    format!("entry {new} = {old} is out of range or repeated (n = {n})"),
                ));
            }
            new_of_old[old] = new;
        }
        Ok(Self {
            old_of_new,
            new_of_old,
        })
    }

    /// The identity on `0..n`.
    pub fn identity(n: usize) -> Self {
        Self {
            old_of_new: (0..n).collect(),
            new_of_old: (0..n).collect(),
        }
    }

    /// Number of indices permuted.
    pub fn len(&self) -> usize {
        self.old_of_new.len()
    }

    /// Whether it permutes nothing (n = 0).
    pub fn is_empty(&self) -> bool {
        self.old_of_new.is_empty()
    }

    /// New index -> old index.
    pub fn old_of_new(&self) -> &[usize] {
        &self.old_of_new
    }

    /// Old index -> new index.
    pub fn new_of_old(&self) -> &[usize] {
        &self.new_of_old
    }

    /// The inverse permutation.
    pub fn inverse(&self) -> Self {
        Self {
            old_of_new: self.new_of_old.clone(),
            new_of_old: self.old_of_new.clone(),
        }
    }

    /// `P A P^T`: entry `(i, j)` of the result is entry `(old_of_new[i], old_of_new[j])` of
    /// `a`. Errors when `a` is not square of this permutation's size.
    pub fn apply_symmetric<T: Scalar>(&self, a: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
        let n = self.len();
        if a.n_rows() != n || a.n_cols() != n {
            return Err(Error::dims(
                "apply_symmetric: rows and columns of the matrix",
                n,
                if a.n_rows() != n {
                    a.n_rows()
                } else {
                    a.n_cols()
                },
            ));
        }
        self.gather(a, self.old_of_new.iter().copied())
    }

    /// `A P^T`: column `j` of the result is column `old_of_new[j]` of `a`, the rows unchanged.
    /// Errors when `a` does not have this permutation's size of columns.
    pub fn apply_columns<T: Scalar>(&self, a: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
        if a.n_cols() != self.len() {
            return Err(Error::dims(
                "apply_columns: columns of the matrix",
                self.len(),
                a.n_cols(),
            ));
        }
        self.gather(a, 0..a.n_rows())
    }

    /// The rows `rows` of `a`, in that order, with their columns renumbered by `new_of_old`
    /// (and sorted again).
    fn gather<T: Scalar>(
        &self,
        a: &CsrMatrix<T>,
        rows: impl ExactSizeIterator<Item = usize>,
    ) -> Result<CsrMatrix<T>> {
        let n_rows = rows.len();
        let mut row_ptr = try_with_capacity("permuted row pointers", n_rows + 1)?;
        let mut cols = try_with_capacity("permuted column indices", a.nnz())?;
        let mut vals = try_with_capacity("permuted values", a.nnz())?;
        let mut row: Vec<(usize, T)> = Vec::new();
        row_ptr.push(0);
        for old in rows {
            let (c, v) = a.row(old);
            row.clear();
            row.extend(c.iter().map(|&c| self.new_of_old[c]).zip(v.iter().copied()));
            row.sort_unstable_by_key(|&(c, _)| c);
            for &(c, v) in &row {
                cols.push(c);
                vals.push(v);
            }
            row_ptr.push(cols.len());
        }
        CsrMatrix::new(n_rows, self.len(), row_ptr, cols, vals)
    }

    /// `P x`: entry `i` of the result is `x[old_of_new[i]]`. Errors when `x` has another length.
    pub fn permute<T: Copy>(&self, x: &[T]) -> Result<Vec<T>> {
        if x.len() != self.len() {
            return Err(Error::dims("permute: vector length", self.len(), x.len()));
        }
        let mut out = try_with_capacity("permuted vector", x.len())?;
        out.extend(self.old_of_new.iter().map(|&old| x[old]));
        Ok(out)
    }

    /// `P^T y`, the inverse of [`Permutation::permute`]: entry `old_of_new[i]` of the result is
    /// `y[i]`. Errors when `y` has another length.
    pub fn unpermute<T: Copy>(&self, y: &[T]) -> Result<Vec<T>> {
        if y.len() != self.len() {
            return Err(Error::dims("unpermute: vector length", self.len(), y.len()));
        }
        let mut out = try_with_capacity("unpermuted vector", y.len())?;
        out.extend(self.new_of_old.iter().map(|&new| y[new]));
        Ok(out)
    }
}

/// The bandwidth of `a`: the largest `|i - j|` over its stored entries (0 for a diagonal or
/// empty matrix).
pub fn bandwidth<T: Scalar>(a: &CsrMatrix<T>) -> usize {
    (0..a.n_rows())
        .map(|r| {
            let (c, _) = a.row(r);
            c.iter().map(|&c| c.abs_diff(r)).max().unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

/// The reverse Cuthill-McKee ordering of the pattern of `a + a^T` (values and the diagonal are
/// ignored; an unsymmetric pattern is symmetrized). Each connected component, in the order of
/// its lowest-numbered node, is numbered breadth first from a pseudo-peripheral node (George
/// and Liu's search from a node of least degree), the neighbours of a node by increasing degree
/// (ties by index), and the whole order is reversed. Deterministic. Errors when `a` is not
/// square, or ([`Error::OutOfMemory`]) when the symmetrized pattern cannot be allocated.
pub fn rcm<T: Scalar>(a: &CsrMatrix<T>) -> Result<Permutation> {
    if !a.is_square() {
        return Err(Error::dims(
            "rcm: columns of a square matrix",
            a.n_rows(),
            a.n_cols(),
        ));
    }
    let graph = Graph::symmetric_pattern(a)?;
    let n = graph.n();
    let mut order = try_with_capacity("RCM order", n)?;
    let mut visited = crate::memory::try_filled("RCM visited flags", n, false)?;
    let mut scratch = Bfs::new(n)?;
    for seed in 0..n {
        if visited[seed] {
            continue;
        }
        let start = graph.pseudo_peripheral(seed, &mut scratch);
        graph.cuthill_mckee(start, &mut visited, &mut order);
    }
    order.reverse();
    Permutation::from_old_of_new(order)
}

/// The adjacency of `a + a^T` without the diagonal, each list sorted by (degree, index).
struct Graph {
    ptr: Vec<usize>,
    adj: Vec<usize>,
}

impl Graph {
    fn symmetric_pattern<T: Scalar>(a: &CsrMatrix<T>) -> Result<Self> {
        let n = a.n_rows();
        let (t_ptr, t_cols) = transposed_pattern(a)?;
        let mut ptr = try_with_capacity("RCM adjacency pointers", n + 1)?;
        let mut adj = try_with_capacity("RCM adjacency", 2 * a.nnz())?;
        ptr.push(0);
        for r in 0..n {
            let (x, _) = a.row(r);
            let y = &t_cols[t_ptr[r]..t_ptr[r + 1]];
            // Merge two sorted lists, skipping the diagonal and duplicates.
            let (mut i, mut j) = (0, 0);
            while i < x.len() || j < y.len() {
                let c = match (x.get(i), y.get(j)) {
                    (Some(&p), Some(&q)) if p == q => {
                        i += 1;
                        j += 1;
                        p
                    }
                    (Some(&p), Some(&q)) if p < q => {
                        i += 1;
                        p
                    }
                    (Some(_), Some(&q)) => {
                        j += 1;
                        q
                    }
                    (Some(&p), None) => {
                        i += 1;
                        p
                    }
                    (None, Some(&q)) => {
                        j += 1;
                        q
                    }
                    (None, None) => break,
                };
                if c != r {
                    adj.push(c);
                }
            }
            ptr.push(adj.len());
        }
        let mut g = Self { ptr, adj };
        let mut degree = crate::memory::try_filled("RCM degrees", n, 0usize)?;
        for (v, d) in degree.iter_mut().enumerate() {
            *d = g.degree(v);
        }
        for v in 0..n {
            let (b, e) = (g.ptr[v], g.ptr[v + 1]);
            g.adj[b..e].sort_unstable_by_key(|&u| (degree[u], u));
        }
        Ok(g)
    }

    fn n(&self) -> usize {
        self.ptr.len() - 1
    }

    fn degree(&self, v: usize) -> usize {
        self.ptr[v + 1] - self.ptr[v]
    }

    fn neighbours(&self, v: usize) -> &[usize] {
        &self.adj[self.ptr[v]..self.ptr[v + 1]]
    }

    /// George and Liu's pseudo-peripheral node of the component of `seed`: from the component's
    /// node of least degree, repeatedly move to the least-degree node of the last breadth-first
    /// level while the number of levels grows.
    fn pseudo_peripheral(&self, seed: usize, bfs: &mut Bfs) -> usize {
        let least_degree = |nodes: &[usize], fallback: usize| {
            nodes
                .iter()
                .copied()
                .min_by_key(|&v| (self.degree(v), v))
                .unwrap_or(fallback)
        };
        let mut start = least_degree(bfs.levels(self, seed), seed);
        bfs.levels(self, start);
        let mut depth = bfs.depth();
        loop {
            let candidate = least_degree(bfs.last_level(), start);
            bfs.levels(self, candidate);
            let d = bfs.depth();
            if d <= depth {
                return start;
            }
            start = candidate;
            depth = d;
        }
    }

    /// Cuthill-McKee from `start`: breadth first, each node's unvisited neighbours in the order
    /// of its (degree-sorted) adjacency list, appended to `order` (which serves as the queue).
    fn cuthill_mckee(&self, start: usize, visited: &mut [bool], order: &mut Vec<usize>) {
        let mut head = order.len();
        visited[start] = true;
        order.push(start);
        while head < order.len() {
            let v = order[head];
            head += 1;
            for &u in self.neighbours(v) {
                if !visited[u] {
                    visited[u] = true;
                    order.push(u);
                }
            }
        }
    }
}

/// The pattern of `a^T` (row pointers, sorted column indices), without values.
fn transposed_pattern<T: Scalar>(a: &CsrMatrix<T>) -> Result<(Vec<usize>, Vec<usize>)> {
    let n = a.n_cols();
    let mut ptr = crate::memory::try_filled("RCM transposed pointers", n + 1, 0usize)?;
    for &c in a.col_idx() {
        ptr[c + 1] += 1;
    }
    for i in 0..n {
        ptr[i + 1] += ptr[i];
    }
    let mut next = crate::memory::try_filled("RCM transposed cursor", n, 0usize)?;
    next.copy_from_slice(&ptr[..n]);
    let mut cols = crate::memory::try_filled("RCM transposed pattern", a.nnz(), 0usize)?;
    for r in 0..a.n_rows() {
        for &c in a.row(r).0 {
            cols[next[c]] = r;
            next[c] += 1;
        }
    }
    Ok((ptr, cols))
}

/// Breadth-first level structure scratch, reused across searches.
struct Bfs {
    mark: Vec<usize>,
    stamp: usize,
    nodes: Vec<usize>,
    level_start: Vec<usize>,
}

impl Bfs {
    fn new(n: usize) -> Result<Self> {
        Ok(Self {
            mark: crate::memory::try_filled("RCM search marks", n, 0)?,
            stamp: 0,
            nodes: try_with_capacity("RCM search nodes", n)?,
            level_start: try_with_capacity("RCM search levels", n)?,
        })
    }

    /// The nodes reachable from `root`, level by level (kept for `last_level` and `depth`).
    fn levels(&mut self, g: &Graph, root: usize) -> &[usize] {
        self.stamp += 1;
        self.nodes.clear();
        self.level_start.clear();
        self.mark[root] = self.stamp;
        self.nodes.push(root);
        let mut begin = 0;
        while begin < self.nodes.len() {
            let end = self.nodes.len();
            self.level_start.push(begin);
            for k in begin..end {
                let v = self.nodes[k];
                for &u in g.neighbours(v) {
                    if self.mark[u] != self.stamp {
                        self.mark[u] = self.stamp;
                        self.nodes.push(u);
                    }
                }
            }
            begin = end;
        }
        &self.nodes
    }

    /// The number of levels of the last search.
    fn depth(&self) -> usize {
        self.level_start.len()
    }

    /// The last level of the last search.
    fn last_level(&self) -> &[usize] {
        let begin = self.level_start.last().copied().unwrap_or(0);
        &self.nodes[begin..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generate::Generator;

    #[test]
    fn apply_columns_moves_columns_only() {
        let a =
            CsrMatrix::from_triplets(2, 3, &[(0, 0, 1.0), (0, 2, 2.0), (1, 1, 3.0), (1, 2, 4.0)])
                .unwrap();
        let p = Permutation::from_old_of_new(vec![2, 0, 1]).unwrap();
        let b = p.apply_columns(&a).unwrap();
        let mut y = vec![0.0; 2];
        // Column j of b is column old_of_new[j] of a: b e_j = a e_{old_of_new[j]}.
        for j in 0..3 {
            let mut e = vec![0.0; 3];
            e[j] = 1.0;
            b.mul_vec(&e, &mut y).unwrap();
            let mut want = vec![0.0; 2];
            let mut ea = vec![0.0; 3];
            ea[p.old_of_new()[j]] = 1.0;
            a.mul_vec(&ea, &mut want).unwrap();
            assert_eq!(y, want, "column {j}");
        }
        assert!(Permutation::identity(2).apply_columns(&a).is_err());
    }

    /// A deterministic shuffle of 0..n (Fisher-Yates on an LCG).
    fn shuffled(n: usize, seed: u64) -> Permutation {
        let mut order: Vec<usize> = (0..n).collect();
        let mut s = seed;
        for i in (1..n).rev() {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            order.swap(i, (s >> 33) as usize % (i + 1));
        }
        Permutation::from_old_of_new(order).unwrap()
    }

    #[test]
    fn rcm_restores_a_small_bandwidth_to_a_scrambled_grid() {
        let k = 40;
        let a = Generator::Poisson2d.generate::<f64>(k * k).unwrap().matrix;
        assert_eq!(a.n_rows(), k * k);
        let scrambled = shuffled(k * k, 7).apply_symmetric(&a).unwrap();
        assert!(bandwidth(&scrambled) > 10 * k, "{}", bandwidth(&scrambled));
        let p = rcm(&scrambled).unwrap();
        let b = p.apply_symmetric(&scrambled).unwrap();
        // Breadth-first levels of a k x k grid from a corner hold at most k nodes.
        assert!(
            bandwidth(&b) <= 2 * k,
            "bandwidth {} after RCM",
            bandwidth(&b)
        );
        assert_eq!(b.nnz(), a.nnz());
    }

    /// The lower envelope: sum over rows of the distance from the diagonal to the row's first
    /// entry left of it.
    fn envelope(a: &CsrMatrix<f64>) -> usize {
        (0..a.n_rows())
            .map(|r| a.row(r).0.first().map_or(0, |&c| r.saturating_sub(c)))
            .sum()
    }

    /// The envelopes of `a` in the RCM order and in the Cuthill-McKee order it reverses.
    fn envelopes(a: &CsrMatrix<f64>) -> (usize, usize) {
        let p = rcm(a).unwrap();
        let mut cm_order = p.old_of_new().to_vec();
        cm_order.reverse();
        let cm = Permutation::from_old_of_new(cm_order).unwrap();
        (
            envelope(&p.apply_symmetric(a).unwrap()),
            envelope(&cm.apply_symmetric(a).unwrap()),
        )
    }

    #[test]
    fn the_reversal_does_not_grow_the_envelope() {
        // RCM's envelope is at most that of the Cuthill-McKee order it reverses (Liu and
        // Sherman, 1976): equal on a shuffled FEM grid, far smaller on a star (centre 0 and
        // 12 leaves: Cuthill-McKee from a leaf puts the centre second, so every later leaf
        // reaches back to it).
        let k = 30;
        let a = Generator::Fem2d.generate::<f64>(k * k).unwrap().matrix;
        let a = shuffled(a.n_rows(), 11).apply_symmetric(&a).unwrap();
        let (e_rcm, e_cm) = envelopes(&a);
        assert!(
            e_rcm <= e_cm,
            "grid: envelope RCM {e_rcm}, Cuthill-McKee {e_cm}"
        );
        let mut t: Vec<(usize, usize, f64)> = (0..13).map(|i| (i, i, 2.0)).collect();
        for leaf in 1..13 {
            t.extend([(0, leaf, -1.0), (leaf, 0, -1.0)]);
        }
        let star = CsrMatrix::from_triplets(13, 13, &t).unwrap();
        let (e_rcm, e_cm) = envelopes(&star);
        // Cuthill-McKee: 1 for the centre, 1 + 2 + ... + 11 for the other leaves; RCM: 11 for
        // the centre (its first neighbour is new index 0), 1 for the first leaf.
        assert_eq!(
            (e_rcm, e_cm),
            (12, 67),
            "star: envelopes of RCM and Cuthill-McKee"
        );
    }

    #[test]
    fn the_permuted_matrix_times_the_permuted_vector_is_the_permuted_product() {
        let a = Generator::ConvDiff3d.generate::<f64>(1000).unwrap().matrix;
        let p = shuffled(a.n_rows(), 3);
        let b = p.apply_symmetric(&a).unwrap();
        let x: Vec<f64> = (0..a.n_rows()).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut ax = vec![0.0; a.n_rows()];
        a.mul_vec(&x, &mut ax).unwrap();
        let mut bpx = vec![0.0; a.n_rows()];
        b.mul_vec(&p.permute(&x).unwrap(), &mut bpx).unwrap();
        let back = p.unpermute(&bpx).unwrap();
        for (i, (u, v)) in back.iter().zip(&ax).enumerate() {
            assert!(
                (u - v).abs() <= 1e-12 * v.abs().max(1.0),
                "row {i}: {u} vs {v}"
            );
        }
        assert_eq!(p.inverse().old_of_new(), p.new_of_old());
    }

    #[test]
    fn components_isolated_nodes_and_unsymmetric_patterns_are_numbered_once() {
        // Two paths (0-5-2, 4-1 by an upper entry only), node 3 isolated, an empty row 6.
        let t = vec![
            (0, 0, 1.0),
            (0, 5, -1.0),
            (5, 0, -1.0),
            (5, 2, -1.0),
            (2, 5, -1.0),
            (1, 4, -1.0),
            (3, 3, 1.0),
        ];
        let a = CsrMatrix::from_triplets(7, 7, &t).unwrap();
        let p = rcm(&a).unwrap();
        let mut seen = p.old_of_new().to_vec();
        seen.sort_unstable();
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
        // Each path gets consecutive numbers.
        let b = p.apply_symmetric(&a).unwrap();
        assert_eq!(bandwidth(&b), 1);
    }

    #[test]
    fn bad_input_is_an_error() {
        let rect = CsrMatrix::<f64>::from_triplets(2, 3, &[(0, 2, 1.0)]).unwrap();
        assert!(matches!(rcm(&rect), Err(Error::DimensionMismatch { .. })));
        assert!(matches!(
            Permutation::from_old_of_new(vec![0, 2, 0]),
            Err(Error::InvalidParameter { .. })
        ));
        let p = Permutation::identity(3);
        assert!(p.permute(&[1.0, 2.0]).is_err());
        assert!(p.unpermute(&[1.0; 4]).is_err());
        let a = CsrMatrix::<f64>::identity(4);
        assert!(p.apply_symmetric(&a).is_err());
        let empty = CsrMatrix::<f64>::from_triplets(0, 0, &[]).unwrap();
        assert!(rcm(&empty).unwrap().is_empty());
    }
}
