//! The adaptive FSAI pattern growth of one row (\[Bernaschi19\] Algorithm 1) in the arithmetic order
//! of the `afsai_grow` kernel (`kernels/fsai.kc`): the host backend's implementation and the
//! reference the GPU kernels are tested against (identical patterns).

use crate::backend::AfsaiGrowth;
use crate::scalar::Scalar;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// a > b (false when either is NaN), the kernel's `a > b`.
fn greater<T: PartialOrd>(a: T, b: T) -> bool {
    a > b
}

/// The off-diagonal pattern of row `i` of the adaptive FSAI factor in insertion order
/// (columns < i), or `None` when a Cholesky pivot is not positive (A is not SPD).
///
/// From G~ = I (psi_0 = a_ii), each of at most `growth.max_steps` steps: the Kaporin gradient
/// grad_j = sum over r in P + {i} of G~(i, r) a_rj for j < i not in P (eq. 16; a multiple-arrays
/// merge of the rows r through a heap keyed (column, list), equal columns summed in P's
/// insertion order, then i), the
/// `growth.per_step` largest |grad_j| > 0 join P (ties to the smaller column), the Cholesky
/// factor of A[P, P] and y = L^-1 (-A[P, i]) are extended row by row, psi = a_ii - y.y, and
/// G~(i, P) = L^-T y; the row stops by `growth.stop` (psi <= eps psi_0, eq. 17, or
/// psi_prev - psi <= eps psi_prev) or when nothing can be added.
/// A is CSR with ascending columns (`arp`, `aci`, `av`) and symmetric.
pub(crate) fn afsai_row<T: Scalar>(
    arp: &[u32],
    aci: &[u32],
    av: &[T],
    i: usize,
    growth: &AfsaiGrowth,
) -> Option<Vec<u32>> {
    let cap = growth.cap();
    let s_max = growth.per_step;
    let eps = T::from_f64(growth.eps);
    let row = |r: usize| arp[r] as usize..arp[r + 1] as usize;
    let entry = |r: usize, c: u32| -> T {
        let span = row(r);
        match aci[span.clone()].binary_search(&c) {
            Ok(k) => av[span.start + k],
            Err(_) => T::zero(),
        }
    };
    let psi0 = entry(i, i as u32);
    let mut psi = psi0;
    let mut p: Vec<u32> = Vec::with_capacity(cap);
    let mut sorted: Vec<u32> = Vec::with_capacity(cap);
    // Packed rows of L: row a at a (a + 1) / 2.
    let mut l: Vec<T> = Vec::with_capacity(cap * (cap + 1) / 2);
    let mut y: Vec<T> = Vec::with_capacity(cap);
    let mut g: Vec<T> = Vec::with_capacity(cap);
    let mut cur: Vec<usize> = Vec::with_capacity(cap + 1);
    let mut sel: Vec<(T, u32)> = Vec::with_capacity(s_max);
    let i32_ = i as u32;
    let step_rule = growth.stop == crate::backend::AfsaiStop::StepReduction;
    for _step in 0..growth.max_steps {
        let psi_prev = psi;
        let m = p.len();
        // 1. The gradient by the multiple-arrays merge, 2. the selection.
        cur.clear();
        cur.extend(p.iter().map(|&r| arp[r as usize] as usize));
        cur.push(arp[i] as usize);
        let list = |a: usize| if a < m { p[a] as usize } else { i };
        // The heap of the lists' current columns below i, keyed (column, list): equal columns
        // come out in list order, the kernel's summation order.
        let mut heap: BinaryHeap<Reverse<(u32, usize)>> = (0..=m)
            .filter_map(|a| {
                let c = cur[a];
                (c < arp[list(a) + 1] as usize && aci[c] < i32_).then_some(Reverse((aci[c], a)))
            })
            .collect();
        sel.clear();
        let mut sp = 0;
        while let Some(&Reverse((jmin, _))) = heap.peek() {
            let mut acc: Option<T> = None;
            while let Some(&Reverse((col, a))) = heap.peek() {
                if col != jmin {
                    break;
                }
                heap.pop();
                let c = cur[a];
                let w = if a < m { g[a] } else { T::one() };
                let term = w * av[c];
                acc = Some(match acc {
                    None => term,
                    Some(s) => s + term,
                });
                cur[a] = c + 1;
                if c + 1 < arp[list(a) + 1] as usize && aci[c + 1] < i32_ {
                    heap.push(Reverse((aci[c + 1], a)));
                }
            }
            while sp < m && sorted[sp] < jmin {
                sp += 1;
            }
            if sp < m && sorted[sp] == jmin {
                continue;
            }
            let v = acc.unwrap_or_else(T::zero).abs();
            if !greater(v, T::zero()) || (sel.len() == s_max && !greater(v, sel[s_max - 1].0)) {
                continue;
            }
            if sel.len() == s_max {
                sel.pop();
            }
            // Before the first strictly smaller value: equal values keep the smaller column first.
            let pos = sel.iter().position(|&(sv, _)| v > sv).unwrap_or(sel.len());
            sel.insert(pos, (v, jmin));
        }
        if sel.is_empty() {
            break; // the pattern stops growing
        }
        // 3. Extend L, y and psi by the selected columns in rank order.
        for &(_, j) in &sel {
            let m = p.len();
            let mut d = entry(j as usize, j);
            let mut yv = -entry(i, j);
            let lm = l.len(); // row m of L starts here
            for a in 0..m {
                let mut v = entry(j as usize, p[a]);
                let la = a * (a + 1) / 2;
                for k in 0..a {
                    v -= l[la + k] * l[lm + k];
                }
                v = v / l[la + a];
                l.push(v);
                d -= v * v;
                yv -= v * y[a];
            }
            if !greater(d, T::zero()) || !d.is_finite() {
                return None;
            }
            let dm = d.sqrt();
            l.push(dm);
            yv = yv / dm;
            y.push(yv);
            psi -= yv * yv;
            p.push(j);
            let at = sorted.partition_point(|&c| c < j);
            sorted.insert(at, j);
        }
        // G~(i, P) = L^-T y, backward.
        let m = p.len();
        g.clear();
        g.resize(m, T::zero());
        for a in (0..m).rev() {
            let mut v = y[a];
            for k in a + 1..m {
                v -= l[k * (k + 1) / 2 + a] * g[k];
            }
            g[a] = v / l[a * (a + 1) / 2 + a];
        }
        // 4. Eq. (17), or the step's relative reduction.
        let done = if step_rule {
            psi_prev - psi <= eps * psi_prev
        } else {
            psi <= eps * psi0
        };
        if done {
            break;
        }
    }
    Some(p)
}
