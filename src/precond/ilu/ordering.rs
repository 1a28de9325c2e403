//! Fill-reducing ordering on the symmetrized pattern: approximate minimum degree (P. R.
//! Amestoy, T. A. Davis and I. S. Duff, "An approximate minimum degree ordering algorithm",
//! SIAM J. Matrix Anal. Appl. 17(4), 1996) on the quotient graph, with element absorption,
//! aggressive absorption and the approximate external degree bound of that paper (without
//! supervariables or mass elimination: simpler, but its work grows with the fronts: 3.2 s on
//! convdiff3d at n = 97K on a 2-core host; supervariables are the next step).
//!
//! Elimination of a variable p turns it into an element whose variable list L_p is the union
//! of p's variable neighbours and of its elements' lists; the elements adjacent to p are
//! absorbed. The degree of every i in L_p is then bounded (paper's eq. (4)) by
//! |A_i| + |L_p \ i| + sum over the other elements e of i of |L_e \ L_p|, and by its old degree
//! plus |L_p|, and by the number of variables left.

use crate::error::Result;
use crate::matrix::reorder::Permutation;
use crate::matrix::CsrMatrix;
use crate::memory::try_filled;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The symmetrized pattern of `a` without the diagonal: sorted, duplicate-free neighbour
/// lists.
fn symmetric_adjacency(a: &CsrMatrix<f64>) -> Vec<Vec<usize>> {
    let n = a.n_rows();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for &j in a.row(i).0 {
            if j != i && j < n {
                adj[i].push(j);
                adj[j].push(i);
            }
        }
    }
    for row in &mut adj {
        row.sort_unstable();
        row.dedup();
    }
    adj
}

/// The approximate minimum degree ordering of the pattern of `a + a^T` (square): new index k
/// holds the k-th eliminated unknown. Ties go to the smaller index, so the ordering is
/// deterministic.
pub fn amd(a: &CsrMatrix<f64>) -> Result<Permutation> {
    let n = a.n_rows();
    let mut vars = symmetric_adjacency(a);
    let mut elems: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut lists: Vec<Vec<usize>> = vec![Vec::new(); n];
    // 0: variable, 1: element, 2: absorbed element.
    let mut state = try_filled("AMD states", n, 0u8)?;
    let mut degree: Vec<usize> = vars.iter().map(Vec::len).collect();
    // The variables by (degree, index), smallest first: a heap whose stale entries (an older
    // degree, an eliminated variable) are skipped when popped, rebuilt from the variables left
    // when it holds more than 4 entries per unknown (a balanced-tree set spent 65% of the
    // ordering's time in its inserts and removals: 12.6 s on convdiff3d at n = 97K).
    let mut queue: BinaryHeap<Reverse<(usize, usize)>> =
        (0..n).map(|i| Reverse((degree[i], i))).collect();
    let mut mark = try_filled("AMD marks", n, usize::MAX)?;
    let mut w = try_filled("AMD element weights", n, usize::MAX)?;
    let mut order = Vec::with_capacity(n);
    let mut lp: Vec<usize> = Vec::new();
    for k in 0..n {
        let Some(p) = pop_live(&mut queue, &state, &degree) else {
            break;
        };
        order.push(p);
        // L_p: p's variables and the variables of its elements, p itself left out.
        lp.clear();
        mark[p] = k;
        for &i in &vars[p] {
            if state[i] == 0 && mark[i] != k {
                mark[i] = k;
                lp.push(i);
            }
        }
        for &e in &elems[p] {
            if state[e] != 1 {
                continue;
            }
            for &i in &lists[e] {
                if state[i] == 0 && mark[i] != k {
                    mark[i] = k;
                    lp.push(i);
                }
            }
            // Absorbed into p.
            state[e] = 2;
            lists[e] = Vec::new();
        }
        state[p] = 1;
        vars[p] = Vec::new();
        elems[p] = Vec::new();
        // |L_e \ L_p| for the elements of L_p's variables: start at |L_e|, minus one for each
        // variable of L_p it holds.
        let mut seen: Vec<usize> = Vec::new();
        for &i in &lp {
            for &e in &elems[i] {
                if state[e] == 1 {
                    if w[e] == usize::MAX {
                        // Eliminated variables leave the list for good (later passes over
                        // it only want the variables left).
                        lists[e].retain(|&v| state[v] == 0);
                        w[e] = lists[e].len();
                        seen.push(e);
                    }
                    w[e] = w[e].saturating_sub(1);
                }
            }
        }
        // Aggressive absorption: an element inside L_p is absorbed.
        for &e in &seen {
            if w[e] == 0 {
                state[e] = 2;
                lists[e] = Vec::new();
            }
        }
        let left = n - k - 1;
        for &i in &lp {
            // Prune: p and the variables of L_p are reached through element p now.
            vars[i].retain(|&j| state[j] == 0 && mark[j] != k);
            elems[i].retain(|&e| state[e] == 1);
            let external: usize = elems[i].iter().map(|&e| w[e]).sum();
            elems[i].push(p);
            let bound = vars[i].len() + (lp.len() - 1) + external;
            let d = bound.min(degree[i] + lp.len()).min(left.saturating_sub(1));
            if d != degree[i] {
                degree[i] = d;
                queue.push(Reverse((d, i)));
            }
        }
        for &e in &seen {
            w[e] = usize::MAX;
        }
        lists[p] = std::mem::take(&mut lp);
        lp = Vec::new();
        if queue.len() > 4 * n + 16 {
            queue = (0..n)
                .filter(|&i| state[i] == 0)
                .map(|i| Reverse((degree[i], i)))
                .collect();
        }
    }
    Permutation::from_old_of_new(order)
}

/// The variable of smallest (degree, index) in `queue`, its stale entries dropped on the way.
fn pop_live(
    queue: &mut BinaryHeap<Reverse<(usize, usize)>>,
    state: &[u8],
    degree: &[usize],
) -> Option<usize> {
    while let Some(Reverse((d, i))) = queue.pop() {
        if state[i] == 0 && degree[i] == d {
            return Some(i);
        }
    }
    None
}

/// Nonzeros of the Cholesky factor of the symmetrized pattern of `a` (diagonal included):
/// the fill an ordering leaves, by the elimination tree and row subtrees (Liu's algorithm),
/// for comparing orderings.
pub fn cholesky_fill(a: &CsrMatrix<f64>) -> usize {
    let n = a.n_rows();
    let adj = symmetric_adjacency(a);
    // Elimination tree (Liu), with path compression through `ancestor`.
    let mut parent = vec![usize::MAX; n];
    let mut ancestor = vec![usize::MAX; n];
    for (i, row) in adj.iter().enumerate() {
        for &j in row.iter().filter(|&&j| j < i) {
            let mut x = j;
            while x != usize::MAX && x != i {
                let next = ancestor[x];
                ancestor[x] = i;
                if next == usize::MAX {
                    parent[x] = i;
                }
                x = next;
            }
        }
    }
    // Row i of L: the union of the tree paths from its lower neighbours up to i.
    let mut mark = vec![usize::MAX; n];
    let mut count = n;
    for (i, row) in adj.iter().enumerate() {
        mark[i] = i;
        for &j in row.iter().filter(|&&j| j < i) {
            let mut x = j;
            while x != usize::MAX && mark[x] != i {
                mark[x] = i;
                count += 1;
                x = parent[x];
            }
        }
    }
    count
}
