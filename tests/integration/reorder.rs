//! A solve through a reverse Cuthill-McKee ordering (`matrix::reorder`) gives the solution of the
//! original system: CG on the host backend for a 2D Poisson matrix whose unknowns were shuffled,
//! once as given and once reordered (P A P^T, P b, the solution unpermuted).

use crate::common;

use pipekrylov::backend::host::HostBackend;
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::reorder::{bandwidth, rcm, Permutation};
use pipekrylov::prelude::*;

fn cg_solution(a: &CsrMatrix<f64>, b: &[f64]) -> (Vec<f64>, usize) {
    let be = HostBackend::new();
    let m = be.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let rhs = be.upload(b).unwrap();
    let mut x = be.alloc(a.n_rows()).unwrap();
    let params = Params {
        rtol: 1e-13,
        max_iter: 2000,
        ..Params::default()
    };
    let report = Cg::new(&be, &m, None, params)
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap();
    assert_eq!(report.stop_reason, StopReason::Converged);
    (be.download(&x).unwrap(), report.iterations)
}

#[test]
fn a_solve_through_rcm_is_the_solve_of_the_original_system() {
    let a = Generator::Poisson2d.generate::<f64>(2500).unwrap().matrix;
    let n = a.n_rows();
    // Shuffle the unknowns: order[i] = 7 i mod n (7 is prime to n = 2500).
    let shuffle = Permutation::from_old_of_new((0..n).map(|i| 7 * i % n).collect()).unwrap();
    let a = shuffle.apply_symmetric(&a).unwrap();
    let b = common::rand_vec::<f64>(n, 9);
    let (x, _) = cg_solution(&a, &b);

    let p = rcm(&a).unwrap();
    assert!(bandwidth(&p.apply_symmetric(&a).unwrap()) < bandwidth(&a) / 10);
    let (y, _) = cg_solution(&p.apply_symmetric(&a).unwrap(), &p.permute(&b).unwrap());
    let y = p.unpermute(&y).unwrap();
    let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (u, v)) in y.iter().zip(&x).enumerate() {
        assert!((u - v).abs() <= 1e-8 * scale, "x[{i}]: {u} vs {v}");
    }
}
