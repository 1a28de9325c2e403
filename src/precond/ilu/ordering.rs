//! Fill-reducing ordering on the symmetrized pattern: approximate minimum degree (P. R.
//! Amestoy, T. A. Davis and I. S. Duff, "An approximate minimum degree ordering algorithm",
//! SIAM J. Matrix Anal. Appl. 17(4), 1996) on the quotient graph, with element absorption,
//! aggressive absorption, supervariables (indistinguishable variables found by hashing their
//! lists, eliminated together) and the approximate external degree bound of that paper; dense
//! rows (more than max(16, 10 sqrt(n)) neighbours, SuiteSparse AMD's rule) are left out and
//! ordered last. Without mass elimination.
//!
//! Elimination of a variable p turns it into an element whose variable list L_p is the union
//! of p's variable neighbours and of its elements' lists; the elements adjacent to p are
//! absorbed. The degree of every i in L_p is then bounded (paper's eq. (4)) by
//! |A_i| + |L_p \ i| + sum over the other elements e of i of |L_e \ L_p|, and by its old degree
//! plus |L_p|, and by the number of variables left (every count weighted by the supervariables'
//! sizes).

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

/// A node of the quotient graph: a (principal) variable ...
const VARIABLE: u8 = 0;
/// ... an element (an eliminated variable) ...
const ELEMENT: u8 = 1;
/// ... an element absorbed into another ...
const ABSORBED: u8 = 2;
/// ... a variable merged into an indistinguishable one (ordered right after it) ...
const MERGED: u8 = 3;
/// ... or a dense row, left out of the graph and ordered last.
const DENSE: u8 = 4;

/// Whether the duplicate-free lists `x` and `y` hold the same entries (`tag`: scratch of the
/// graph's size, `stamp` a value not in it yet).
fn same_set(x: &[usize], y: &[usize], tag: &mut [usize], stamp: usize) -> bool {
    if x.len() != y.len() {
        return false;
    }
    for &v in x {
        tag[v] = stamp;
    }
    y.iter().all(|&v| tag[v] == stamp)
}

/// The approximate minimum degree ordering of the pattern of `a + a^T` (square): new index k
/// holds the k-th eliminated unknown. Ties go to the smaller index, so the ordering is
/// deterministic.
pub fn amd(a: &CsrMatrix<f64>) -> Result<Permutation> {
    let n = a.n_rows();
    let mut vars = symmetric_adjacency(a);
    let mut state = try_filled("AMD states", n, VARIABLE)?;
    let dense_limit = 16usize.max((10.0 * (n as f64).sqrt()) as usize);
    let dense: Vec<usize> = (0..n).filter(|&i| vars[i].len() > dense_limit).collect();
    for &i in &dense {
        state[i] = DENSE;
        vars[i] = Vec::new();
    }
    if !dense.is_empty() {
        for list in &mut vars {
            list.retain(|&j| state[j] == VARIABLE);
        }
    }
    let mut elems: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut lists: Vec<Vec<usize>> = vec![Vec::new(); n];
    // Supervariables: the number of unknowns a principal variable stands for (0 once merged)
    // and the unknowns merged into it.
    let mut size = try_filled("AMD supervariable sizes", n, 1usize)?;
    let mut merged: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut degree: Vec<usize> = vars.iter().map(Vec::len).collect();
    // The variables by (degree, index), smallest first: a heap whose stale entries (an older
    // degree, an eliminated or merged variable) are skipped when popped, rebuilt from the
    // variables left when it holds more than 4 entries per unknown (a balanced-tree set spent
    // 65% of the ordering's time in its inserts and removals: 12.6 s on convdiff3d at n = 97K).
    let mut queue: BinaryHeap<Reverse<(usize, usize)>> = (0..n)
        .filter(|&i| state[i] == VARIABLE)
        .map(|i| Reverse((degree[i], i)))
        .collect();
    let mut mark = try_filled("AMD marks", n, usize::MAX)?;
    let mut tag = try_filled("AMD tags", n, usize::MAX)?;
    let mut w = try_filled("AMD element weights", n, usize::MAX)?;
    let mut order = Vec::with_capacity(n);
    let mut lp: Vec<usize> = Vec::new();
    let in_graph = n - dense.len();
    let mut eliminated = 0usize;
    let mut stamp = 0usize;
    let mut k = 0usize;
    while eliminated < in_graph {
        let Some(p) = pop_live(&mut queue, &state, &degree) else {
            break;
        };
        k += 1;
        order.push(p);
        order.append(&mut merged[p]);
        eliminated += size[p];
        // L_p: p's variables and the variables of its elements, p itself left out.
        lp.clear();
        mark[p] = k;
        for &i in &vars[p] {
            if state[i] == VARIABLE && mark[i] != k {
                mark[i] = k;
                lp.push(i);
            }
        }
        for &e in &elems[p] {
            if state[e] != ELEMENT {
                continue;
            }
            for &i in &lists[e] {
                if state[i] == VARIABLE && mark[i] != k {
                    mark[i] = k;
                    lp.push(i);
                }
            }
            // Absorbed into p.
            state[e] = ABSORBED;
            lists[e] = Vec::new();
        }
        state[p] = ELEMENT;
        vars[p] = Vec::new();
        elems[p] = Vec::new();
        let lp_size: usize = lp.iter().map(|&i| size[i]).sum();
        // |L_e \ L_p| for the elements of L_p's variables: start at |L_e|, minus the size of
        // each variable of L_p it holds.
        let mut seen: Vec<usize> = Vec::new();
        for &i in &lp {
            for &e in &elems[i] {
                if state[e] == ELEMENT {
                    if w[e] == usize::MAX {
                        // Eliminated and merged variables leave the list for good (later
                        // passes over it only want the principal variables left).
                        lists[e].retain(|&v| state[v] == VARIABLE);
                        w[e] = lists[e].iter().map(|&v| size[v]).sum();
                        seen.push(e);
                    }
                    w[e] = w[e].saturating_sub(size[i]);
                }
            }
        }
        // Aggressive absorption: an element inside L_p is absorbed.
        for &e in &seen {
            if w[e] == 0 {
                state[e] = ABSORBED;
                lists[e] = Vec::new();
            }
        }
        // Prune: p and the variables of L_p are reached through element p now.
        for &i in &lp {
            vars[i].retain(|&j| state[j] == VARIABLE && mark[j] != k);
            elems[i].retain(|&e| state[e] == ELEMENT);
        }
        // Supervariables: variables of L_p with the same variables and elements (element p
        // among them for all) are indistinguishable; the later merges into the earlier.
        let mut keyed: Vec<(usize, usize)> = lp
            .iter()
            .map(|&i| {
                let h = vars[i]
                    .iter()
                    .chain(&elems[i])
                    .fold(vars[i].len(), |h, &v| h.wrapping_add(v));
                (h, i)
            })
            .collect();
        keyed.sort_unstable();
        for g in keyed.chunk_by(|x, y| x.0 == y.0) {
            for (at, &(_, i)) in g.iter().enumerate() {
                if state[i] != VARIABLE {
                    continue;
                }
                for &(_, j) in &g[at + 1..] {
                    if state[j] != VARIABLE {
                        continue;
                    }
                    stamp += 2;
                    if same_set(&vars[i], &vars[j], &mut tag, stamp)
                        && same_set(&elems[i], &elems[j], &mut tag, stamp + 1)
                    {
                        size[i] += size[j];
                        size[j] = 0;
                        state[j] = MERGED;
                        let mut moved = std::mem::take(&mut merged[j]);
                        merged[i].push(j);
                        merged[i].append(&mut moved);
                        vars[j] = Vec::new();
                        elems[j] = Vec::new();
                    }
                }
            }
        }
        lp.retain(|&i| state[i] == VARIABLE);
        let left = in_graph - eliminated;
        for &i in &lp {
            let external: usize = elems[i].iter().map(|&e| w[e]).sum();
            elems[i].push(p);
            let own: usize = vars[i].iter().map(|&j| size[j]).sum();
            let bound = own + (lp_size - size[i]) + external;
            let d = bound
                .min(degree[i] + lp_size)
                .min(left.saturating_sub(size[i]));
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
                .filter(|&i| state[i] == VARIABLE)
                .map(|i| Reverse((degree[i], i)))
                .collect();
        }
    }
    // What the loop left (none unless the queue ran dry), then the dense rows.
    for i in 0..n {
        if state[i] == VARIABLE {
            order.push(i);
            order.append(&mut merged[i]);
        }
    }
    order.extend(dense);
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
