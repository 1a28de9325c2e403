//! GMRES's DCGS2 step on the GPU backends: `gmres_dcgs2_spmv_dots` (one step's product and dots
//! in one kernel) against the two kernels it replaces (`backend_agreement`, `dcgs2_sell_fused`),
//! and a GMRES(20) solve to compare with the host's (`dcgs2_two_kernels`, `dcgs2_sell_fused`).

use super::{assert_scalar_close, rand_vec, random_matrix, with_dense_row};
use pipekrylov::backend::{Backend, Basis, MatrixFormat, Slot};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::solver::{Execution, Gmres, Params, SolveReport};

/// GMRES(20), 40 steps, synchronous, on a 3D convection-diffusion matrix (n = 4096) uploaded in
/// `format`.
pub fn gmres20_solve<B: Backend>(be: &B, format: MatrixFormat) -> SolveReport {
    let a = Generator::ConvDiff3d.generate::<f64>(4096).unwrap().matrix;
    let n = a.n_rows();
    let m = be.upload_matrix(&a, format).unwrap();
    let b = be.upload(&rand_vec::<f64>(n, 3)).unwrap();
    let mut x = be.alloc::<f64>(n).unwrap();
    let params = Params {
        gmres: pipekrylov::solver::GmresParams {
            restart: 20,
            ..Default::default()
        },
        rtol: 0.0,
        max_iter: 40,
        execution: Execution::Synchronous,
        ..Params::default()
    };
    Gmres::new(be, &m, None, params)
        .unwrap()
        .solve(&b, &mut x)
        .unwrap()
}

/// The residual histories of two [`gmres20_solve`]s agree to 1e-8 relative, entry by entry.
pub fn assert_histories_close(label: &str, got: &SolveReport, want: &SolveReport) {
    assert_eq!(
        got.residual_history.len(),
        want.residual_history.len(),
        "{label}"
    );
    for (k, (a, b)) in got
        .residual_history
        .iter()
        .zip(&want.residual_history)
        .enumerate()
    {
        assert!(
            (a - b).abs() <= 1e-8 * b.abs().max(1e-300),
            "{label}: residual {k}: {a:e} vs {b:e}"
        );
    }
}

fn dl<B: Backend>(b: &B, v: &pipekrylov::backend::Buffer<f64>) -> Vec<f64> {
    b.download(v).unwrap()
}

/// Whether a GPU backend fuses the DCGS2 step for SELL as its tuning says
/// (`Tuning::dcgs2_sell_fused`: by default on CUDA only), for the tests' expectations.
pub fn sell_fused_expected<B: Backend>(be: &B) -> bool {
    be.tuning().dcgs2_sell_fused_for(be.name() == "cuda")
}

/// `gmres_dcgs2_spmv_dots` (one DCGS2 step's product and dots in one kernel) against
/// `basis_spmv_dots` + `basis_dots2` on the same backend: w = A u and every other column bit for
/// bit (the same row sums), the finished dots to rounding, for sizes 1..4099 and u in columns
/// 1..30, CSR, ELL and SELL (sorted within windows of 256 and 128, unsorted, and with one dense
/// row), and SELL at n = 300,000 (many tiles per block on a GPU); a CSR matrix with long rows
/// and SELL sorted over windows wider than any block are declined (nothing written). The host
/// declines always; `sell_fused`: the backend fuses SELL (at ucol <= 4) as well as CSR.
pub fn dcgs2_spmv_dots_matches_two_kernels<B: Backend>(b: &B, sell_fused: bool) {
    let gpu = b.name() != "host";
    let sell = |c, sigma| MatrixFormat::Sell { c, sigma };
    let all_columns = [1usize, 2, 7, 30];
    for n in [1usize, 31, 33, 1000, 4099] {
        let a = random_matrix::<f64>(n, 5, true, 7 + n as u64);
        let dense = with_dense_row(&a, n / 2, 5);
        for (a, format) in [
            (&a, MatrixFormat::Csr),
            (&a, MatrixFormat::Ell),
            (&a, sell(32, 256)),
            (&a, sell(32, 128)),
            (&a, sell(4, 1)),
            (&dense, sell(32, 256)),
        ] {
            dcgs2_spmv_dots_case(b, a, format, gpu, sell_fused, &all_columns);
        }
    }
    let large = random_matrix::<f64>(300_000, 5, true, 3);
    dcgs2_spmv_dots_case(b, &large, sell(32, 256), gpu, sell_fused, &[7]);
    // SELL sorted within windows of 512 rows: a block's tile of positions would hold rows of
    // other tiles; declined, the basis untouched.
    let a = random_matrix::<f64>(4099, 5, true, 5);
    let m = b.upload_matrix(&a, sell(32, 512)).unwrap();
    assert!(!b.fuses_dcgs2_spmv_dots(&m, 2), "{}: sell:32:512", b.name());
    let data: Vec<f64> = rand_vec(4099 * 4, 17);
    let mut basis = Basis::from_buffer(b.upload(&data).unwrap(), 4099, 4).unwrap();
    let (mut pa, mut pb) = (
        b.partials::<f64>(4099, 2).unwrap(),
        b.partials::<f64>(4099, 2).unwrap(),
    );
    assert!(!b
        .gmres_dcgs2_spmv_dots(&m, &mut basis, 2, &mut pa, &mut pb)
        .unwrap());
    assert!(
        dl(b, basis.buffer()) == data,
        "{}: sell:32:512 declined, yet written",
        b.name()
    );
    dcgs2_spmv_dots_declines_long_rows(b);
}

/// One matrix and format of [`dcgs2_spmv_dots_matches_two_kernels`].
fn dcgs2_spmv_dots_case<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    format: MatrixFormat,
    gpu: bool,
    sell_fused: bool,
    columns: &[usize],
) {
    let n = a.n_rows();
    let m = b.upload_matrix(a, format).unwrap();
    {
        for &ucol in columns {
            let cols = ucol + 2;
            let data: Vec<f64> = rand_vec(n * cols, 11 + ucol as u64);
            let basis = || Basis::from_buffer(b.upload(&data).unwrap(), n, cols).unwrap();
            let partials = || b.partials::<f64>(n, ucol).unwrap();
            let (mut b1, mut pa1, mut pb1) = (basis(), partials(), partials());
            b.basis_spmv_dots(
                &m,
                None,
                &mut b1,
                ucol + 1,
                &mut pb1,
                Some(Slot(ucol - 1)),
                None,
            )
            .unwrap();
            b.basis_dots2(
                &b1,
                ucol,
                ucol + 1,
                1..ucol + 1,
                ucol - 1,
                &mut pa1,
                &mut pb1,
            )
            .unwrap();
            let (mut b2, mut pa2, mut pb2) = (basis(), partials(), partials());
            let fused = b
                .gmres_dcgs2_spmv_dots(&m, &mut b2, ucol, &mut pa2, &mut pb2)
                .unwrap();
            let label = format!("{} {format} n={n} ucol={ucol}", b.name());
            assert_eq!(fused, b.fuses_dcgs2_spmv_dots(&m, ucol), "{label}: fused");
            // Every GPU block or group takes at least 4 columns in one pass.
            if ucol <= 4 {
                let expected = gpu && (format == MatrixFormat::Csr || sell_fused);
                assert_eq!(fused, expected, "{label}: fused");
            }
            if !fused {
                continue;
            }
            let bits = |v: &Basis<f64>| -> Vec<u64> {
                dl(b, v.buffer()).iter().map(|x| x.to_bits()).collect()
            };
            assert!(bits(&b1) == bits(&b2), "{label}: basis");
            let (sa1, sa2) = (b.finish(&pa1).unwrap(), b.finish(&pa2).unwrap());
            let (sb1, sb2) = (b.finish(&pb1).unwrap(), b.finish(&pb2).unwrap());
            for k in 0..ucol {
                let tol = 1e-12 * n as f64;
                assert_scalar_close(
                    &format!("{label}: a {k}"),
                    sa2.get(Slot(k)),
                    sa1.get(Slot(k)),
                    tol,
                );
                assert_scalar_close(
                    &format!("{label}: c/d {k}"),
                    sb2.get(Slot(k)),
                    sb1.get(Slot(k)),
                    tol,
                );
            }
        }
    }
}

/// CSR with a long row (one dense row): declined, the basis untouched.
fn dcgs2_spmv_dots_declines_long_rows<B: Backend>(b: &B) {
    let n = 4099;
    let a = with_dense_row(&random_matrix::<f64>(n, 5, false, 3), 17, 5);
    let m = b.upload_matrix(&a, MatrixFormat::Csr).unwrap();
    let data: Vec<f64> = rand_vec(n * 4, 13);
    let mut basis = Basis::from_buffer(b.upload(&data).unwrap(), n, 4).unwrap();
    let (mut pa, mut pb) = (
        b.partials::<f64>(n, 2).unwrap(),
        b.partials::<f64>(n, 2).unwrap(),
    );
    assert!(!b
        .gmres_dcgs2_spmv_dots(&m, &mut basis, 2, &mut pa, &mut pb)
        .unwrap());
    assert!(
        dl(b, basis.buffer()) == data,
        "{}: declined, yet written",
        b.name()
    );
}
