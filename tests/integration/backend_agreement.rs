//! Conformance suite: every kernel of every backend against the host backend on the same inputs
//! (random and structured, awkward sizes 0, 1, 31, 33, 1000, 4099, matrices with empty rows), the
//! host's fused kernels against their default compositions, whole solves against host, and the
//! launch / transfer counts of the pipelined solvers.
//!
//! OpenCL runs in CI on PoCL (feature `opencl`); the CUDA tests need an NVIDIA GPU and are
//! `#[ignore]`d: run them on the device with `--include-ignored`.

use crate::common;

use crate::common::{
    assert_close, assert_scalar_close, rand_vec, random_matrix, single_full_row, with_dense_row,
};
use pipekrylov::backend::host::HostBackend;
use pipekrylov::backend::ops::spmv::reference as sref;
use pipekrylov::backend::ops::{krylov::reference as kref, precond::reference as pref};
use pipekrylov::backend::row_blocks::sell_compact_columns;
use pipekrylov::backend::{
    Backend, Basis, CsrKernel, CsrUpdate, GatherList, GhostBlock, MatrixFormat, Slot, SpmvDots,
};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::{CsrMatrix, SellMatrix};
use pipekrylov::precond::{Jacobi, Preconditioner};
use pipekrylov::solver::{
    BiCgStab, Cg, Gmres, GmresOrthogonalization, Params, SolveReport, Variant,
};
use pipekrylov::Scalar;

const SIZES: &[usize] = &[0, 1, 31, 33, 1000, 4099];

/// Run a fused operation natively or through its default body.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Impl {
    Native,
    Default,
}

/// Outputs of one operation: vectors and finished sums.
#[derive(Debug, Default)]
struct Out {
    vectors: Vec<Vec<f64>>,
    sums: Vec<f64>,
}

fn dl<B: Backend, T: Scalar>(b: &B, v: &pipekrylov::backend::Buffer<T>) -> Vec<f64> {
    b.download(v).unwrap().iter().map(|x| x.to_f64()).collect()
}

fn formats(n: usize) -> Vec<MatrixFormat> {
    let mut f = vec![
        MatrixFormat::Csr,
        MatrixFormat::Sell { c: 32, sigma: 128 },
        MatrixFormat::Sell { c: 4, sigma: 1 },
        MatrixFormat::Ell,
        MatrixFormat::Bsr { block_size: 1 },
    ];
    // Every block size 2..=8 that divides n: n = 1000 puts BSR 2, 4, 5 and 8 on the
    // pathological matrices (a dense row, all nonzeros in one row, power-law, circuit).
    for block_size in 2..=8 {
        if n > 0 && n % block_size == 0 {
            f.push(MatrixFormat::Bsr { block_size });
        }
    }
    f
}

/// Every vector, reduction and update kernel at length n. Names are stable so two runs can be
/// compared entry by entry.
fn vector_ops<B: Backend, T: Scalar>(b: &B, imp: Impl, n: usize) -> Vec<(String, Out)> {
    let mut res = Vec::new();
    let x0 = rand_vec::<T>(n, 1);
    let y0 = rand_vec::<T>(n, 2);
    let z0 = rand_vec::<T>(n, 3);
    let w0 = rand_vec::<T>(n, 4);
    let u0 = rand_vec::<T>(n, 5);
    let v0 = rand_vec::<T>(n, 6);
    let (a, be) = (T::from_f64(0.37), T::from_f64(-1.25));
    let up = |v: &[T]| b.upload(v).unwrap();
    let mut partials = b.partials::<T>(n, 8).unwrap();
    let sums = |p: &pipekrylov::backend::Partials<T>, slots: &[usize]| -> Vec<f64> {
        let s = b.finish(p).unwrap();
        slots.iter().map(|&k| s.get(Slot(k))).collect()
    };

    let mut x = up(&x0);
    b.fill(&mut x, T::from_f64(2.5)).unwrap();
    res.push((
        "fill".into(),
        Out {
            vectors: vec![dl(b, &x)],
            sums: vec![],
        },
    ));

    let (xs, mut ys) = (up(&x0), up(&y0));
    b.copy(&xs, &mut ys).unwrap();
    res.push((
        "copy".into(),
        Out {
            vectors: vec![dl(b, &ys)],
            sums: vec![],
        },
    ));

    let mut ys = up(&y0);
    b.axpby(a, &xs, be, &mut ys).unwrap();
    res.push((
        "axpby".into(),
        Out {
            vectors: vec![dl(b, &ys)],
            sums: vec![],
        },
    ));

    let mut xs2 = up(&x0);
    b.scale(a, &mut xs2).unwrap();
    res.push((
        "scale".into(),
        Out {
            vectors: vec![dl(b, &xs2)],
            sums: vec![],
        },
    ));

    let ys = up(&y0);
    b.dot_partials(&xs, &ys, &mut partials, Slot(5)).unwrap();
    res.push((
        "dot_partials".into(),
        Out {
            vectors: vec![],
            sums: sums(&partials, &[5]),
        },
    ));

    // cg_update
    let (mut x, mut r, mut p, ap) = (up(&x0), up(&y0), up(&z0), up(&w0));
    match imp {
        Impl::Native => b.cg_update(a, be, &mut x, &mut r, &mut p, &ap, &mut partials, Slot(2)),
        Impl::Default => kref::cg_update(
            b,
            a,
            be,
            &mut x,
            &mut r,
            &mut p,
            &ap,
            &mut partials,
            Slot(2),
        ),
    }
    .unwrap();
    res.push((
        "cg_update".into(),
        Out {
            vectors: vec![dl(b, &x), dl(b, &r), dl(b, &p)],
            sums: sums(&partials, &[2]),
        },
    ));

    // pcg_update
    let (mut x, mut r, mut z, mut p, ap, q) =
        (up(&x0), up(&y0), up(&z0), up(&w0), up(&u0), up(&v0));
    match imp {
        Impl::Native => b.pcg_update(
            a,
            be,
            &mut x,
            &mut r,
            &mut z,
            &mut p,
            &ap,
            &q,
            &mut partials,
            Slot(0),
            Slot(7),
        ),
        Impl::Default => kref::pcg_update(
            b,
            a,
            be,
            &mut x,
            &mut r,
            &mut z,
            &mut p,
            &ap,
            &q,
            &mut partials,
            Slot(0),
            Slot(7),
        ),
    }
    .unwrap();
    res.push((
        "pcg_update".into(),
        Out {
            vectors: vec![dl(b, &x), dl(b, &r), dl(b, &z), dl(b, &p)],
            sums: sums(&partials, &[0, 7]),
        },
    ));

    // bicgstab_s_update: slots 1 (r.r0*) and 3 (Ap.r0*) prepared with dots on every backend.
    if n > 0 {
        let (r, ap, r0s) = (up(&x0), up(&y0), up(&z0));
        let mut s = up(&w0);
        b.dot_partials(&r, &r0s, &mut partials, Slot(1)).unwrap();
        b.dot_partials(&ap, &r0s, &mut partials, Slot(3)).unwrap();
        match imp {
            Impl::Native => {
                b.bicgstab_s_update(&r, &ap, &mut s, &mut partials, Slot(1), Slot(3), Slot(4))
            }
            Impl::Default => kref::bicgstab_s_update(
                b,
                &r,
                &ap,
                &mut s,
                &mut partials,
                Slot(1),
                Slot(3),
                Slot(4),
            ),
        }
        .unwrap();
        res.push((
            "bicgstab_s_update".into(),
            Out {
                vectors: vec![dl(b, &s)],
                sums: sums(&partials, &[4]),
            },
        ));
    }

    // bicgstab_update, without and with right preconditioning.
    for precond in [false, true] {
        let (mut x, mut r, mut p) = (up(&x0), up(&y0), up(&z0));
        let (s, ap, as_, r0s) = (up(&w0), up(&u0), up(&v0), up(&y0));
        let (ph, sh) = (up(&v0), up(&x0));
        let (phat, shat) = if precond {
            (Some(&ph), Some(&sh))
        } else {
            (None, None)
        };
        let (om, bt) = (T::from_f64(0.61), T::from_f64(0.83));
        match imp {
            Impl::Native => b.bicgstab_update(
                a,
                om,
                bt,
                &mut x,
                &mut r,
                &mut p,
                &s,
                &ap,
                &as_,
                phat,
                shat,
                &r0s,
                &mut partials,
                Slot(6),
                Slot(5),
            ),
            Impl::Default => kref::bicgstab_update(
                b,
                a,
                om,
                bt,
                &mut x,
                &mut r,
                &mut p,
                &s,
                &ap,
                &as_,
                phat,
                shat,
                &r0s,
                &mut partials,
                Slot(6),
                Slot(5),
            ),
        }
        .unwrap();
        res.push((
            format!("bicgstab_update(precond={precond})"),
            Out {
                vectors: vec![dl(b, &x), dl(b, &r), dl(b, &p)],
                sums: sums(&partials, &[6, 5]),
            },
        ));
    }

    // diag_scale and diag_scale_dot
    let (d, xs) = (up(&x0), up(&y0));
    let mut ys = up(&z0);
    b.diag_scale(&d, &xs, &mut ys).unwrap();
    res.push((
        "diag_scale".into(),
        Out {
            vectors: vec![dl(b, &ys)],
            sums: vec![],
        },
    ));
    let mut ys = up(&z0);
    match imp {
        Impl::Native => b.diag_scale_dot(&d, &xs, &mut ys, &mut partials, Slot(3)),
        Impl::Default => pref::diag_scale_dot(b, &d, &xs, &mut ys, &mut partials, Slot(3)),
    }
    .unwrap();
    res.push((
        "diag_scale_dot".into(),
        Out {
            vectors: vec![dl(b, &ys)],
            sums: sums(&partials, &[3]),
        },
    ));
    res
}

/// Every format, CSR also with each of its kernels forced (the host backend has one CSR loop:
/// its results are the reference for both GPU kernels).
fn formats_and_kernels(n: usize) -> Vec<(MatrixFormat, CsrKernel)> {
    let mut v = Vec::new();
    for fmt in formats(n) {
        v.push((fmt, CsrKernel::Auto));
        if fmt == MatrixFormat::Csr {
            v.push((fmt, CsrKernel::Vector));
            v.push((fmt, CsrKernel::Stream));
            v.push((fmt, CsrKernel::StreamCompact));
        }
    }
    v
}

/// SpMV kernels for every format on one matrix.
fn spmv_ops<B: Backend, T: Scalar>(b: &B, imp: Impl, a: &CsrMatrix<T>) -> Vec<(String, Out)> {
    let n = a.n_rows();
    let mut res = Vec::new();
    let x0 = rand_vec::<T>(n, 11);
    let w0 = rand_vec::<T>(n, 12);
    let b0 = rand_vec::<T>(n, 13);
    for (fmt, kernel) in formats_and_kernels(n) {
        let m = b.upload_matrix_with(a, fmt, kernel).unwrap();
        // Columns below 2^16 always fit 16-bit offsets; the wide-column matrix (n = 70000,
        // random columns) fits in no block or slice.
        let fits = n <= 1 << 16;
        if b.uses_device_layouts() && kernel != CsrKernel::Auto {
            let want = match kernel {
                CsrKernel::StreamCompact if !fits => CsrKernel::Stream,
                k => k,
            };
            assert_eq!(m.csr_kernel(), Some(want), "the forced CSR kernel runs");
        }
        if b.uses_device_layouts() {
            let sell = match fmt {
                MatrixFormat::Sell { c, sigma } => Some(SellMatrix::from_csr(a, c, sigma).unwrap()),
                MatrixFormat::Ell => Some(SellMatrix::ell_from_csr(a).unwrap()),
                _ => None,
            };
            if let Some(s) = sell {
                let want = sell_compact_columns(&s).is_some();
                assert!(want || !fits || n == 0, "columns below 2^16 fit");
                let compact = m.spmv_kernel().ends_with(":u16");
                assert_eq!(compact, want, "SELL 16-bit offsets: {}", m.spmv_kernel());
            }
        }
        let fmt = format!("{fmt:?} {kernel}");
        let (x, w, rhs) = (
            b.upload(&x0).unwrap(),
            b.upload(&w0).unwrap(),
            b.upload(&b0).unwrap(),
        );
        let mut y = b.alloc::<T>(n).unwrap();
        let mut partials = b.partials::<T>(n, 4).unwrap();
        b.spmv(&m, &x, &mut y).unwrap();
        res.push((
            format!("spmv {fmt}"),
            Out {
                vectors: vec![dl(b, &y)],
                sums: vec![],
            },
        ));
        let dots = SpmvDots {
            yy: Some(Slot(3)),
            with: [Some((&x, Slot(0))), Some((&w, Slot(2)))],
        };
        match imp {
            Impl::Native => b.spmv_dots(&m, &x, &mut y, dots, &mut partials),
            Impl::Default => sref::spmv_dots(b, &m, &x, &mut y, dots, &mut partials),
        }
        .unwrap();
        let s = b.finish(&partials).unwrap();
        res.push((
            format!("spmv_dots {fmt}"),
            Out {
                vectors: vec![dl(b, &y)],
                sums: vec![s.get(Slot(3)), s.get(Slot(0)), s.get(Slot(2))],
            },
        ));
        let mut r = b.alloc::<T>(n).unwrap();
        match imp {
            Impl::Native => b.residual(&m, &x, &rhs, &mut r, &mut partials, Some(Slot(1))),
            Impl::Default => sref::residual(b, &m, &x, &rhs, &mut r, &mut partials, Some(Slot(1))),
        }
        .unwrap();
        let s = b.finish(&partials).unwrap();
        res.push((
            format!("residual {fmt}"),
            Out {
                vectors: vec![dl(b, &r)],
                sums: vec![s.get(Slot(1))],
            },
        ));
        // AMG's fused sweep and correction (csr_update): s = w stands in for D^-1.
        let mut scratch = b.alloc::<T>(n).unwrap();
        let sweep = CsrUpdate::Sweep { b: &rhs, s: &w };
        let add_to_w = CsrUpdate::Add { base: Some(&w) };
        for (label, update, start) in [
            ("sweep", sweep, None),
            ("add", add_to_w, None),
            ("add in place", CsrUpdate::Add { base: None }, Some(&b0)),
        ] {
            let mut out = match start {
                Some(v) => b.upload(v).unwrap(),
                None => b.alloc::<T>(n).unwrap(),
            };
            match imp {
                Impl::Native => b.csr_update(&m, &x, update, &mut out, &mut scratch),
                Impl::Default => pref::csr_update(b, &m, &x, update, &mut out, &mut scratch),
            }
            .unwrap();
            res.push((
                format!("csr_update {label} {fmt}"),
                Out {
                    vectors: vec![dl(b, &out)],
                    sums: vec![],
                },
            ));
        }
    }
    res
}

/// The GMRES basis kernels on one matrix with `cols` basis vectors.
fn basis_ops<B: Backend, T: Scalar>(b: &B, imp: Impl, a: &CsrMatrix<T>) -> Vec<(String, Out)> {
    let n = a.n_rows();
    let cols = 6;
    let ld = 5;
    let mut res = Vec::new();
    let m = b.upload_matrix(a, MatrixFormat::Csr).unwrap();
    let init: Vec<T> = rand_vec(n * cols, 21);
    let mut basis =
        pipekrylov::backend::Basis::from_buffer(b.upload(&init).unwrap(), n, cols).unwrap();
    let mut partials = b.partials::<T>(n, 8).unwrap();
    let mut xi = b.partials::<T>(n, 5).unwrap();
    let mut rmat = b.alloc::<T>(ld * ld).unwrap();
    let z = b.upload(&rand_vec::<T>(n, 22)).unwrap();
    let snap = |basis: &pipekrylov::backend::Basis<T>| dl(b, basis.buffer());

    // v_2 = A v_1 with <v_1, v_2> (slot 0) and <v_2, v_2> (slot 7).
    match imp {
        Impl::Native => b.basis_spmv_dots(
            &m,
            None,
            &mut basis,
            2,
            &mut partials,
            Some(Slot(0)),
            Some(Slot(7)),
        ),
        Impl::Default => kref::basis_spmv_dots(
            b,
            &m,
            None,
            &mut basis,
            2,
            &mut partials,
            Some(Slot(0)),
            Some(Slot(7)),
        ),
    }
    .unwrap();
    let s = b.finish(&partials).unwrap();
    res.push((
        "basis_spmv_dots(v)".into(),
        Out {
            vectors: vec![snap(&basis)],
            sums: vec![s.get(Slot(0)), s.get(Slot(7))],
        },
    ));
    // v_3 = A z with <v_2, v_3> into slot 1.
    match imp {
        Impl::Native => b.basis_spmv_dots(
            &m,
            Some(&z),
            &mut basis,
            3,
            &mut partials,
            Some(Slot(1)),
            None,
        ),
        Impl::Default => kref::basis_spmv_dots(
            b,
            &m,
            Some(&z),
            &mut basis,
            3,
            &mut partials,
            Some(Slot(1)),
            None,
        ),
    }
    .unwrap();
    let s = b.finish(&partials).unwrap();
    res.push((
        "basis_spmv_dots(z)".into(),
        Out {
            vectors: vec![snap(&basis)],
            sums: vec![s.get(Slot(1))],
        },
    ));
    // <v_j, v_4>, j = 1..3 into slots 0..2
    match imp {
        Impl::Native => b.basis_dots(&basis, 4, 1..4, &mut partials, Slot(0)),
        Impl::Default => kref::basis_dots(b, &basis, 4, 1..4, &mut partials, Slot(0)),
    }
    .unwrap();
    let s = b.finish(&partials).unwrap();
    res.push((
        "basis_dots".into(),
        Out {
            vectors: vec![],
            sums: (0..3).map(|k| s.get(Slot(k))).collect(),
        },
    ));
    // Gram-Schmidt of v_4 against v_1..v_3, norm into slot 6.
    match imp {
        Impl::Native => b.gmres_gram_schmidt(
            &mut basis,
            4,
            &mut partials,
            Slot(0),
            Slot(6),
            &mut rmat,
            ld,
        ),
        Impl::Default => kref::gmres_gram_schmidt(
            b,
            &mut basis,
            4,
            &mut partials,
            Slot(0),
            Slot(6),
            &mut rmat,
            ld,
        ),
    }
    .unwrap();
    let s = b.finish(&partials).unwrap();
    res.push((
        "gmres_gram_schmidt".into(),
        Out {
            vectors: vec![snap(&basis), dl(b, &rmat)],
            sums: vec![s.get(Slot(6))],
        },
    ));
    match imp {
        Impl::Native => b.gmres_normalize(
            &mut basis,
            4,
            &partials,
            Slot(6),
            &mut rmat,
            ld,
            &mut xi,
            Slot(3),
        ),
        Impl::Default => kref::gmres_normalize(
            b,
            &mut basis,
            4,
            &partials,
            Slot(6),
            &mut rmat,
            ld,
            &mut xi,
            Slot(3),
        ),
    }
    .unwrap();
    let s = b.finish(&xi).unwrap();
    res.push((
        "gmres_normalize".into(),
        Out {
            vectors: vec![snap(&basis), dl(b, &rmat)],
            sums: vec![s.get(Slot(3))],
        },
    ));
    b.basis_axpy(&mut basis, 5, 2, T::from_f64(-0.7)).unwrap();
    b.basis_scale(&mut basis, 1, T::from_f64(1.5)).unwrap();
    res.push((
        "basis_axpy+scale".into(),
        Out {
            vectors: vec![snap(&basis)],
            sums: vec![],
        },
    ));
    b.basis_load(&mut basis, 0, &z, T::from_f64(0.25)).unwrap();
    let mut out = b.alloc::<T>(n).unwrap();
    b.basis_store(&basis, 3, &mut out).unwrap();
    res.push((
        "basis_load+store".into(),
        Out {
            vectors: vec![snap(&basis), dl(b, &out)],
            sums: vec![],
        },
    ));
    let mut y = b.upload(&rand_vec::<T>(n, 23)).unwrap();
    let coeffs: Vec<T> = [0.5, -1.0, 2.0, 0.125]
        .iter()
        .map(|&v| T::from_f64(v))
        .collect();
    b.multi_axpy(&mut y, &basis, 1..5, &coeffs).unwrap();
    res.push((
        "multi_axpy".into(),
        Out {
            vectors: vec![dl(b, &y)],
            sums: vec![],
        },
    ));
    // The same coefficients from the device (a longer buffer: only the first four are read).
    let mut dev_coeffs = coeffs.clone();
    dev_coeffs.push(T::from_f64(1e30));
    let dev_coeffs = b.upload(&dev_coeffs).unwrap();
    b.multi_axpy_device(&mut y, &basis, 1..5, &dev_coeffs)
        .unwrap();
    res.push((
        "multi_axpy_device".into(),
        Out {
            vectors: vec![dl(b, &y)],
            sums: vec![],
        },
    ));
    // GMRES's restart on the device: rho = ||z|| from the partials of <z, z>, exactly the
    // host's finish and norm; v_0 = z / rho.
    b.dot_partials(&z, &z, &mut partials, Slot(5)).unwrap();
    let mut rho = b.alloc::<T>(4).unwrap();
    b.basis_load_normalized(&mut basis, 0, &z, &partials, Slot(5), &mut rho, 2)
        .unwrap();
    let host_rho = b.finish(&partials).unwrap().get(Slot(5)).sqrt();
    let rho_dl = dl(b, &rho);
    assert_eq!(
        rho_dl[2].to_bits(),
        T::from_f64(host_rho).to_f64().to_bits(),
        "{}: basis_load_normalized's rho against the host's finish",
        b.name()
    );
    res.push((
        "basis_load_normalized".into(),
        Out {
            vectors: vec![snap(&basis), rho_dl],
            sums: vec![],
        },
    ));
    // The last column of a DCGS2 cycle: <v_j, v_4>, j = 1..4 (slot 3 is <v_4, v_4>), finished
    // into a coefficient row at offset 3 (a at 3..6, nu at 3 + 8).
    b.basis_dots(&basis, 4, 1..5, &mut partials, Slot(0))
        .unwrap();
    let mut coef = b.alloc::<T>(12).unwrap();
    b.gmres_dcgs2_last_sums(&partials, 3, &mut coef, 3).unwrap();
    res.push((
        "gmres_dcgs2_last_sums".into(),
        Out {
            vectors: vec![dl(b, &coef)],
            sums: vec![],
        },
    ));
    res
}

/// A ghost block on the local rows `rows` of n: boundary row i holds i mod `spread` entries in
/// columns (13 i + 5 k) mod n_ghost, random values.
fn ghost_block<B: Backend, T: Scalar>(
    b: &B,
    rows: &[u32],
    n: usize,
    n_ghost: usize,
    spread: usize,
) -> GhostBlock<T> {
    let mut row_ptr = vec![0u32];
    let mut cols = Vec::new();
    for i in 0..rows.len() {
        for k in 0..i % spread {
            cols.push(((i * 13 + k * 5) % n_ghost) as u32);
        }
        row_ptr.push(cols.len() as u32);
    }
    let values = rand_vec::<T>(cols.len(), 22);
    GhostBlock::upload(b, rows, &row_ptr, &cols, &values, n, n_ghost).unwrap()
}

/// The halo kernels of the distributed SpMV at length n: a gather with repeated indices and a
/// ghost block on every third row with 0..3 entries per row.
fn halo_ops<B: Backend, T: Scalar>(b: &B, n: usize) -> Vec<(String, Out)> {
    let x0 = rand_vec::<T>(n, 21);
    let idx: Vec<u32> = (0..n + n / 2)
        .map(|k| ((k * 7919) % n.max(1)) as u32)
        .collect();
    let idx = if n == 0 { Vec::new() } else { idx };
    let list = GatherList::upload(b, &idx, n).unwrap();
    // x sits at an offset inside a larger buffer (as a GMRES basis column does).
    let x_off = 3 + n / 2;
    let mut padded = rand_vec::<T>(x_off, 20);
    padded.extend_from_slice(&x0);
    let x = b.upload(&padded).unwrap();
    // `out` longer than the list: its tail stays as it was (a partials buffer's slot 0 is
    // gathered that way).
    let tail = T::from_f64(-7.0);
    let mut out = b.upload(&vec![tail; idx.len() + 5]).unwrap();
    b.halo_gather(&list, &x, x_off, &mut out).unwrap();
    assert!(
        dl(b, &out)[idx.len()..].iter().all(|&v| v == tail.to_f64()),
        "a gather must leave out's entries past the list alone"
    );
    assert!(
        b.halo_gather(&list, &x, x_off + 1, &mut out).is_err(),
        "a gather past the end of x must be refused"
    );
    // halo_partials_finish: the bits of the backend's own finish, at an offset; the rest of
    // `out` untouched. halo_rank_sums: rank order in f64, this rank's own sums from `local`.
    let mut partials = b.partials::<T>(n, 5).unwrap();
    let pv: Vec<_> = (0..6)
        .map(|k| b.upload(&rand_vec::<T>(n, 30 + k)).unwrap())
        .collect();
    for k in 0..5 {
        b.dot_partials(&pv[k], &pv[k + 1], &mut partials, Slot(k))
            .unwrap();
    }
    let mut finished = b.upload(&[-1.0f64; 9]).unwrap();
    let (groups, buf) = (partials.groups(), partials.buffer());
    b.halo_partials_finish(buf, 0, groups, 5, &mut finished, 2)
        .unwrap();
    let finished = b.download(&finished).unwrap();
    let own = b.finish(&partials).unwrap().0;
    assert_eq!(
        &finished[2..7],
        &own[..],
        "{} halo_partials_finish vs finish",
        b.name()
    );
    assert!(finished[..2]
        .iter()
        .chain(&finished[7..])
        .all(|&v| v == -1.0));
    // One group from an offset: the values themselves (GMRES's step sums in place).
    let mut single = b.upload(&[-1.0f64; 4]).unwrap();
    b.halo_partials_finish(buf, groups + 1, 1, 3, &mut single, 1)
        .unwrap();
    let single = b.download(&single).unwrap();
    let raw = dl(b, buf);
    assert_eq!(
        &single[1..],
        &raw[groups + 1..groups + 4],
        "{} one group (raw partials depend on the backend's groups: not compared across backends)",
        b.name()
    );
    assert!(b
        .halo_partials_finish(buf, 0, groups, 5, &mut b.upload(&[0.0f64; 6]).unwrap(), 2)
        .is_err());
    assert!(b
        .halo_partials_finish(buf, 1, groups, 5, &mut b.upload(&[0.0f64; 9]).unwrap(), 0)
        .is_err());
    let (ranks, me, stride, count) = (3usize, 1usize, 8usize, 6usize);
    let local: Vec<f64> = rand_vec::<f64>(stride, 40);
    let gathered: Vec<f64> = rand_vec::<f64>(ranks * stride, 41);
    let (local_d, gathered_d) = (b.upload(&local).unwrap(), b.upload(&gathered).unwrap());
    let want_sum = |j: usize| {
        T::from_f64((0..ranks).fold(0.0, |acc, r| {
            acc + if r == me {
                local[j]
            } else {
                gathered[r * stride + j]
            }
        }))
        .to_f64()
    };
    let mut rank_sums = b.upload(&vec![T::from_f64(-7.0); count + 2]).unwrap();
    b.halo_rank_sums(
        &local_d,
        &gathered_d,
        ranks,
        me,
        count,
        &mut rank_sums,
        0,
        true,
    )
    .unwrap();
    let mut rank_sums = dl(b, &rank_sums);
    for (j, &got) in rank_sums.iter().enumerate() {
        let want = match j {
            j if j < count => want_sum(j),
            j if j == count => 0.0,
            _ => -7.0,
        };
        assert_eq!(got, want, "{} halo_rank_sums entry {j}", b.name());
    }
    // At an offset, without the zero.
    let mut placed = b.upload(&vec![T::from_f64(-7.0); count + 4]).unwrap();
    b.halo_rank_sums(
        &local_d,
        &gathered_d,
        ranks,
        me,
        count,
        &mut placed,
        3,
        false,
    )
    .unwrap();
    let placed = dl(b, &placed);
    for (j, &got) in placed.iter().enumerate() {
        let want = if (3..3 + count).contains(&j) {
            want_sum(j - 3)
        } else {
            -7.0
        };
        assert_eq!(
            got,
            want,
            "{} halo_rank_sums at an offset, entry {j}",
            b.name()
        );
    }
    rank_sums.extend_from_slice(&placed);
    let mut short = b.upload(&vec![T::zero(); count + 3]).unwrap();
    assert!(b
        .halo_rank_sums(
            &local_d,
            &gathered_d,
            ranks,
            ranks,
            count,
            &mut short,
            0,
            true
        )
        .is_err());
    assert!(b
        .halo_rank_sums(&local_d, &gathered_d, ranks, me, count, &mut short, 3, true)
        .is_err());
    let n_ghost = 17;
    let rows: Vec<u32> = (0..n as u32).step_by(3).collect();
    let ghost = ghost_block::<_, T>(b, &rows, n, n_ghost, 4);
    let xg = b.upload(&rand_vec::<T>(n_ghost, 23)).unwrap();
    let mut y = b.upload(&rand_vec::<T>(n, 24)).unwrap();
    b.halo_spmv_add(&ghost, &xg, &mut y).unwrap();
    // halo_spmv_add_dots: the partials of the dots of y0 first (as the local product's fused
    // kernel writes them), then the add corrects them to the dots of the new y.
    let (y0, w0, w1) = (
        rand_vec::<T>(n, 25),
        rand_vec::<T>(n, 26),
        rand_vec::<T>(n, 27),
    );
    let mut y2 = b.upload(&y0).unwrap();
    let (w0b, w1b) = (b.upload(&w0).unwrap(), b.upload(&w1).unwrap());
    let mut partials = b.partials::<T>(n, 4).unwrap();
    b.dot_partials(&y2, &y2, &mut partials, Slot(3)).unwrap();
    b.dot_partials(&y2, &w0b, &mut partials, Slot(0)).unwrap();
    b.dot_partials(&y2, &w1b, &mut partials, Slot(1)).unwrap();
    let dots = SpmvDots {
        yy: Some(Slot(3)),
        with: [Some((&w0b, Slot(0))), Some((&w1b, Slot(1)))],
    };
    b.halo_spmv_add_dots(&ghost, &xg, &mut y2, dots, &mut partials)
        .unwrap();
    let s = b.finish(&partials).unwrap();
    let y_new = dl(b, &y2);
    let got = [s.get(Slot(3)), s.get(Slot(0)), s.get(Slot(1))];
    let direct = |v: &[T]| -> (f64, f64) {
        let terms = y_new.iter().zip(v).map(|(a, b)| a * b.to_f64());
        terms.fold((0.0, 0.0), |(s, m), t| (s + t, m + t.abs()))
    };
    let yy = y_new
        .iter()
        .fold((0.0, 0.0), |(s, m), v| (s + v * v, m + v * v));
    let tol = if std::mem::size_of::<T>() == 4 {
        1e-5
    } else {
        1e-13
    };
    for (k, (want, mag)) in [yy, direct(&w0), direct(&w1)].into_iter().enumerate() {
        assert!(
            (got[k] - want).abs() <= tol * mag.max(1e-300) * 10.0,
            "{} halo_spmv_add_dots n={n}: dot {k} = {} vs {want} from the finished y",
            b.name(),
            got[k]
        );
    }
    // halo_basis_add_dots on column 2 of a 3-column basis: partials of <v2, v1> and <v2, v2>
    // first, then the add corrects them.
    let mut basis = Basis::from_buffer(b.upload(&rand_vec::<T>(3 * n, 28)).unwrap(), n, 3).unwrap();
    let mut bp = b.partials::<T>(n, 2).unwrap();
    let basis_sums = if n > 0 {
        b.basis_dots(&basis, 2, 1..2, &mut bp, Slot(0)).unwrap();
        b.basis_dots(&basis, 2, 2..3, &mut bp, Slot(1)).unwrap();
        b.halo_basis_add_dots(
            &ghost,
            &xg,
            &mut basis,
            2,
            &mut bp,
            Some(Slot(0)),
            Some(Slot(1)),
        )
        .unwrap();
        let s = b.finish(&bp).unwrap();
        vec![s.get(Slot(0)), s.get(Slot(1))]
    } else {
        vec![]
    };
    // halo_dcgs2_add_dots with ucol = 10 (two passes of the CUDA kernel's 8 slots): the
    // partials of <v_1..10, w> first (the local fused kernel's), then the add corrects w and
    // all ten.
    let (cols_dcgs2, dcgs2_sums) = dcgs2_add_dots_case(b, n, &ghost, &xg, 10);
    let cols = dl(b, basis.buffer());
    if n > 0 {
        let (v1, v2) = (&cols[n..2 * n], &cols[2 * n..]);
        let want = [
            v2.iter().zip(v1).map(|(a, b)| a * b).sum::<f64>(),
            v2.iter().map(|a| a * a).sum::<f64>(),
        ];
        let mag = [
            v2.iter().zip(v1).map(|(a, b)| (a * b).abs()).sum::<f64>(),
            want[1],
        ];
        let tol = if std::mem::size_of::<T>() == 4 {
            1e-4
        } else {
            1e-12
        };
        for k in 0..2 {
            assert!(
                (basis_sums[k] - want[k]).abs() <= tol * mag[k].max(1e-300),
                "{} halo_basis_add_dots n={n}: dot {k} = {} vs {} from the finished column",
                b.name(),
                basis_sums[k],
                want[k]
            );
        }
    }
    vec![
        (
            "halo_dcgs2_add_dots".into(),
            Out {
                vectors: vec![cols_dcgs2],
                sums: dcgs2_sums,
            },
        ),
        (
            "halo_basis_add_dots".into(),
            Out {
                vectors: vec![cols],
                sums: basis_sums,
            },
        ),
        (
            "halo_gather".into(),
            Out {
                vectors: vec![dl(b, &out)],
                sums: vec![],
            },
        ),
        (
            "halo_partials_finish".into(),
            Out {
                vectors: vec![finished],
                sums: vec![],
            },
        ),
        (
            "halo_rank_sums".into(),
            Out {
                vectors: vec![rank_sums],
                sums: vec![],
            },
        ),
        (
            "halo_spmv_add".into(),
            Out {
                vectors: vec![dl(b, &y)],
                sums: vec![],
            },
        ),
        (
            "halo_spmv_add_dots".into(),
            Out {
                vectors: vec![y_new],
                sums: got.to_vec(),
            },
        ),
    ]
}

/// `halo_dcgs2_add_dots` on a basis of ucol + 3 columns (w = column ucol + 1): the partials of
/// <v_1..ucol, w> by `basis_dots` first, then the ghost add; its dots checked against the
/// finished columns. Returns the basis and the ucol finished dots.
fn dcgs2_add_dots_case<B: Backend, T: Scalar>(
    b: &B,
    n: usize,
    ghost: &GhostBlock<T>,
    xg: &pipekrylov::backend::Buffer<T>,
    ucol: usize,
) -> (Vec<f64>, Vec<f64>) {
    let cols = ucol + 3;
    let mut basis =
        Basis::from_buffer(b.upload(&rand_vec::<T>(cols * n, 29)).unwrap(), n, cols).unwrap();
    let mut pb = b.partials::<T>(n, ucol).unwrap();
    let sums = if n > 0 {
        b.basis_dots(&basis, ucol + 1, 1..ucol + 1, &mut pb, Slot(0))
            .unwrap();
        b.halo_dcgs2_add_dots(ghost, xg, &mut basis, ucol, &mut pb)
            .unwrap();
        let s = b.finish(&pb).unwrap();
        (0..ucol).map(|j| s.get(Slot(j))).collect::<Vec<_>>()
    } else {
        vec![]
    };
    let all = dl(b, basis.buffer());
    for (j, got) in sums.iter().enumerate() {
        let w = &all[(ucol + 1) * n..(ucol + 2) * n];
        let v = &all[(j + 1) * n..(j + 2) * n];
        let want = v.iter().zip(w).map(|(a, b)| a * b).sum::<f64>();
        let mag = v.iter().zip(w).map(|(a, b)| (a * b).abs()).sum::<f64>();
        let tol = if std::mem::size_of::<T>() == 4 {
            1e-4
        } else {
            1e-12
        };
        assert!(
            (got - want).abs() <= tol * mag.max(1e-300),
            "{} halo_dcgs2_add_dots n={n}: dot {j} = {got} vs {want} from the finished w",
            b.name()
        );
    }
    (all, sums)
}

/// `halo_dcgs2_add_dots` with a boundary of 300,000 rows, every other row of n = 600,000 (row k
/// of the ghost block is local row 2 k + 1, so a kernel that confused a boundary row's position
/// with its row number would fail): more rows than the reduction grid of an H100 or H200 has
/// threads by default (528 x 256 = 135,168), so the CUDA kernel's later grid-stride rows run too
/// (not with a tuning's `reduction_groups_per_sm` of 9 or more).
fn dcgs2_add_dots_long_boundary<B: Backend>(b: &B) -> Vec<(String, Out)> {
    let (n, n_ghost) = (600_000usize, 1000usize);
    let rows: Vec<u32> = (0..n / 2).map(|k| (2 * k + 1) as u32).collect();
    let ghost = ghost_block::<_, f64>(b, &rows, n, n_ghost, 3);
    let xg = b.upload(&rand_vec::<f64>(n_ghost, 23)).unwrap();
    let (basis, sums) = dcgs2_add_dots_case(b, n, &ghost, &xg, 12);
    vec![(
        "halo_dcgs2_add_dots long boundary".into(),
        Out {
            vectors: vec![basis],
            sums,
        },
    )]
}

fn compare(label: &str, got: &[(String, Out)], want: &[(String, Out)], tol: f64) {
    assert_eq!(got.len(), want.len(), "{label}: number of operations");
    for ((name, g), (wname, w)) in got.iter().zip(want) {
        assert_eq!(name, wname);
        assert_eq!(g.vectors.len(), w.vectors.len(), "{label} {name}");
        for (k, (gv, wv)) in g.vectors.iter().zip(&w.vectors).enumerate() {
            assert_close(&format!("{label} {name} output {k}"), gv, wv, tol);
        }
        for (k, (gs, ws)) in g.sums.iter().zip(&w.sums).enumerate() {
            assert_scalar_close(&format!("{label} {name} sum {k}"), *gs, *ws, tol * 100.0);
        }
    }
}

fn matrices<T: Scalar>(n: usize) -> Vec<(String, CsrMatrix<T>)> {
    let mut v = vec![(
        format!("random n={n} (empty rows)"),
        random_matrix::<T>(n, 5, true, 7 + n as u64),
    )];
    if n > 0 {
        v.push((
            format!("dense-ish rows n={n}"),
            random_matrix::<T>(n, 40, false, 9),
        ));
    }
    // Rows far longer than the mean (summed apart in chunks on GPUs): one dense row among short
    // ones, all nonzeros in one row, and the power-law and circuit generators.
    if n >= 100 {
        v.push((
            format!("one dense row n={n}"),
            with_dense_row(&random_matrix::<T>(n, 3, true, 21), n / 2, 22),
        ));
        v.push((
            format!("all nonzeros in one row n={n}"),
            single_full_row::<T>(n, n - 1, 23),
        ));
        for g in [Generator::Powerlaw, Generator::Circuit] {
            v.push((
                format!("{} n={n}", g.name()),
                g.generate::<T>(n).unwrap().matrix,
            ));
        }
    }
    // Columns spread over more than 2^16 in every row block and SELL slice: the 32-bit paths
    // of the stream and SELL kernels where 16-bit offsets are the default.
    if n == 4099 {
        v.push((
            "random wide columns n=70000".into(),
            random_matrix::<T>(70_000, 4, true, 41),
        ));
    }
    // A row longer than the stream kernel's row block (2048 entries) that the long-row path
    // does not take (8 x the mean of ~300 is more): summed by a whole work-group.
    if n == 1000 {
        v.push((
            "wide row, mean 300, n=2200".into(),
            with_dense_row(&random_matrix::<T>(2200, 300, false, 31), 1100, 32),
        ));
    }
    v
}

/// Every kernel of `t` against the host backend.
fn agree_with_host<B: Backend>(t: &B) {
    let h = HostBackend::new();
    for &n in SIZES {
        compare(
            &format!("{} f64 n={n}", t.name()),
            &vector_ops::<_, f64>(t, Impl::Native, n),
            &vector_ops::<_, f64>(&h, Impl::Native, n),
            1e-12,
        );
        compare(
            &format!("{} halo n={n}", t.name()),
            &halo_ops::<_, f64>(t, n),
            &halo_ops::<_, f64>(&h, n),
            1e-12,
        );
        for (label, a) in matrices::<f64>(n) {
            compare(
                &format!("{} {label}", t.name()),
                &spmv_ops(t, Impl::Native, &a),
                &spmv_ops(&h, Impl::Native, &a),
                1e-12,
            );
            if n > 0 {
                compare(
                    &format!("{} basis {label}", t.name()),
                    &basis_ops(t, Impl::Native, &a),
                    &basis_ops(&h, Impl::Native, &a),
                    1e-11,
                );
            }
        }
    }
    compare(
        &format!("{} halo long boundary", t.name()),
        &dcgs2_add_dots_long_boundary(t),
        &dcgs2_add_dots_long_boundary(&h),
        1e-12,
    );
    for &n in &[33usize, 4099] {
        compare(
            &format!("{} f32 halo n={n}", t.name()),
            &halo_ops::<_, f32>(t, n),
            &halo_ops::<_, f32>(&h, n),
            2e-5,
        );
        compare(
            &format!("{} f32 n={n}", t.name()),
            &vector_ops::<_, f32>(t, Impl::Native, n),
            &vector_ops::<_, f32>(&h, Impl::Native, n),
            2e-5,
        );
        let a = Generator::Poisson2d.generate::<f32>(n).unwrap().matrix;
        compare(
            &format!("{} f32 poisson", t.name()),
            &spmv_ops(t, Impl::Native, &a),
            &spmv_ops(&h, Impl::Native, &a),
            2e-5,
        );
    }
}

#[test]
fn host_fused_kernels_equal_their_default_compositions() {
    let h = HostBackend::new();
    for &n in SIZES {
        compare(
            &format!("fused vs default n={n}"),
            &vector_ops::<_, f64>(&h, Impl::Native, n),
            &vector_ops::<_, f64>(&h, Impl::Default, n),
            1e-13,
        );
        for (label, a) in matrices::<f64>(n) {
            compare(
                &format!("fused vs default {label}"),
                &spmv_ops(&h, Impl::Native, &a),
                &spmv_ops(&h, Impl::Default, &a),
                1e-13,
            );
            if n > 0 {
                compare(
                    &format!("fused vs default basis {label}"),
                    &basis_ops(&h, Impl::Native, &a),
                    &basis_ops(&h, Impl::Default, &a),
                    1e-13,
                );
            }
        }
    }
}

#[test]
fn the_comparison_can_fail() {
    // Guard against a vacuous suite: a perturbed result must be detected.
    let h = HostBackend::new();
    let mut a = vector_ops::<_, f64>(&h, Impl::Native, 33);
    let b = vector_ops::<_, f64>(&h, Impl::Native, 33);
    a[2].1.vectors[0][5] += 1e-6;
    let r = std::panic::catch_unwind(|| compare("perturbed", &a, &b, 1e-12));
    assert!(r.is_err());
}

/// Whole solves: same iterations (within one) and residuals as host.
fn solves_agree_with_host<B: Backend>(t: &B) {
    let h = HostBackend::new();
    let sell = MatrixFormat::Sell { c: 32, sigma: 256 };
    let mut cases = vec![
        (Generator::Fem2d, 3969usize, "cg", MatrixFormat::Csr),
        (Generator::ConvDiff3d, 4096, "bicgstab", MatrixFormat::Csr),
        (Generator::ConvDiff3d, 4096, "gmres", MatrixFormat::Csr),
        (Generator::Elasticity3d, 300, "cg", MatrixFormat::Csr),
        (Generator::Fem2d, 3969, "cg", sell),
    ];
    if t.is_gpu() {
        // Large enough that the solvers' partials for SELL have more groups than the
        // reduction plan (`SpmvOps::spmv_reduction_groups`).
        assert!(
            t.spmv_reduction_groups(
                &t.upload_matrix(
                    &Generator::Poisson3d
                        .generate::<f64>(262_144)
                        .unwrap()
                        .matrix,
                    sell
                )
                .unwrap()
            ) > t.reduction_groups(262_144)
        );
        cases.push((Generator::Poisson3d, 262_144, "cg", sell));
        cases.push((Generator::ConvDiff3d, 262_144, "bicgstab", sell));
    }
    for (g, n, solver, format) in cases {
        let p = g.generate::<f64>(n).unwrap();
        for variant in [Variant::Pipelined, Variant::Classical] {
            for precond in [false, true] {
                let rt = solve_on(t, &p.matrix, solver, variant, precond, format);
                let rh = solve_on(&h, &p.matrix, solver, variant, precond, format);
                let label = format!(
                    "{} {solver} {variant} precond={precond} {format} on {}",
                    t.name(),
                    p.description
                );
                assert!(rt.stop_reason.converged(), "{label}: {:?}", rt.stop_reason);
                let d = rt.iterations.abs_diff(rh.iterations);
                assert!(
                    d <= 1 || d * 100 <= rh.iterations,
                    "{label}: {} vs host {} iterations",
                    rt.iterations,
                    rh.iterations
                );
                assert!(
                    rt.relative_true_residual < 1e-7,
                    "{label}: true residual {}",
                    rt.relative_true_residual
                );
            }
        }
    }
}

fn solve_on<B: Backend>(
    b: &B,
    a: &CsrMatrix<f64>,
    solver: &str,
    variant: Variant,
    precond: bool,
    format: MatrixFormat,
) -> SolveReport {
    let m = b.upload_matrix(a, format).unwrap();
    let n = a.n_rows();
    let jac = Jacobi::new(b, a).unwrap();
    let pc: Option<&dyn Preconditioner<B, f64>> = if precond { Some(&jac) } else { None };
    let params = Params {
        variant,
        rtol: 1e-8,
        max_iter: 5000,
        ..Params::default()
    };
    let rhs = b.upload(&rand_vec::<f64>(n, 99)).unwrap();
    let mut x = b.alloc(n).unwrap();
    match solver {
        "cg" => Cg::new(b, &m, pc, params).unwrap().solve(&rhs, &mut x),
        "bicgstab" => BiCgStab::new(b, &m, pc, params)
            .unwrap()
            .solve(&rhs, &mut x),
        _ => Gmres::new(b, &m, pc, params).unwrap().solve(&rhs, &mut x),
    }
    .unwrap()
}

/// Launch and transfer counts of the pipelined solvers (\[Rupp16\] section 3).
fn pipelined_counts<B: Backend>(b: &B) {
    let p = Generator::Poisson2d.generate::<f64>(4096).unwrap();
    let m = b.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
    let n = m.n_rows();
    let rhs = b.upload(&vec![1.0; n]).unwrap();
    let params = Params {
        rtol: 0.0,
        max_iter: 30,
        gmres: pipekrylov::solver::GmresParams {
            restart: 30,
            ..Default::default()
        },
        // The paper's counts: one transfer per iteration (no device-resident batches).
        execution: pipekrylov::solver::Execution::Synchronous,
        ..Params::default()
    };
    let mut x = b.alloc(n).unwrap();
    let r = Cg::new(b, &m, None, params)
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap();
    assert_eq!(r.iterations, 30);
    assert_eq!(
        (r.loop_counters.launches, r.loop_counters.transfers),
        (60, 30),
        "CG: 2 launches + 1 transfer per iteration"
    );
    let mut x = b.alloc(n).unwrap();
    let r = BiCgStab::new(b, &m, None, params)
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap();
    assert_eq!(r.iterations, 30);
    assert_eq!(
        (r.loop_counters.launches, r.loop_counters.transfers),
        (120, 30),
        "BiCGStab: 4 launches + 1 transfer per iteration"
    );
    let mut x = b.alloc(n).unwrap();
    let r = Gmres::new(b, &m, None, params)
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap();
    assert_eq!(r.iterations, 30);
    // DCGS2 Arnoldi (the default): 4 kernels per step (SpMV, the dots of u and w in one pass,
    // the sums finished once, the fused update), one less when the partials have few groups
    // (the update sums them itself; work-groups of 64 or more on every backend tested), one
    // less again on the GPU backends, which fuse the SpMV with the dots (CSR, no
    // preconditioner); nothing transferred while orthogonalizing.
    let small = b.tuning().dcgs2_small_for(b.reduction_groups(n), 29, 256);
    let fused = b.name() != "host";
    assert_eq!(
        r.inner_counters.launches,
        (4 - usize::from(small) - usize::from(fused)) as u64 * 30,
        "GMRES (DCGS2) launches per cycle"
    );
    assert_eq!(
        r.inner_counters.transfers, 0,
        "GMRES (DCGS2): no transfer inside the orthogonalization"
    );
    // CGS2: step 1 has 5 kernels (no batched dots of a first pass), steps 2..30 six each.
    let cgs2 = Params {
        gmres: pipekrylov::solver::GmresParams {
            orthogonalization: GmresOrthogonalization::Cgs2,
            ..Default::default()
        },
        ..params
    };
    let mut x = b.alloc(n).unwrap();
    let r = Gmres::new(b, &m, None, cgs2)
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap();
    assert_eq!(r.iterations, 30);
    assert_eq!(
        r.inner_counters.launches,
        5 + 6 * 29,
        "GMRES (CGS2) launches per cycle"
    );
    assert_eq!(r.inner_counters.transfers, 0);
    // The paper's simpler GMRES ([Rupp16] Algorithm 6): step 1: 2 kernels, step 2: 3, steps
    // 3..30: 4 each.
    let simpler = Params {
        gmres: pipekrylov::solver::GmresParams {
            orthogonalization: GmresOrthogonalization::SimplerCgs,
            ..Default::default()
        },
        ..params
    };
    let mut x = b.alloc(n).unwrap();
    let r = Gmres::new(b, &m, None, simpler)
        .unwrap()
        .solve(&rhs, &mut x)
        .unwrap();
    assert_eq!(r.iterations, 30);
    assert_eq!(
        r.inner_counters.launches,
        2 + 3 + 4 * 28,
        "simpler GMRES launches per cycle"
    );
    assert_eq!(r.inner_counters.transfers, 0);
}

#[test]
fn host_pipelined_counts() {
    pipelined_counts(&HostBackend::new());
}

#[test]
fn host_solves_are_deterministic() {
    let h = HostBackend::new();
    let p = Generator::ConvDiff3d.generate::<f64>(40_000).unwrap();
    let a = || {
        solve_on(
            &h,
            &p.matrix,
            "bicgstab",
            Variant::Pipelined,
            false,
            MatrixFormat::Csr,
        )
    };
    let (r1, r2) = (a(), a());
    assert_eq!(r1.iterations, r2.iterations);
    assert_eq!(
        r1.residual_history, r2.residual_history,
        "bit-identical residual history"
    );
}

#[test]
fn host_declines_the_fused_dcgs2_product() {
    common::dcgs2::dcgs2_spmv_dots_matches_two_kernels(&HostBackend::new(), false);
}

/// `basis_dots2` (both targets against the same columns in one pass) against `basis_dots` of
/// each target, with more columns than one pass of the GPU kernels takes (32) and awkward
/// sizes: the finished dots agree to rounding.
fn basis_dots2_matches_basis_dots<B: Backend>(b: &B) {
    for n in [1usize, 33, 1000, 4099] {
        for count_a in [1usize, 7, 33, 40] {
            let count_b = count_a - 1;
            let cols = count_a + 3;
            let (wa, wb) = (count_a + 1, count_a + 2);
            let data: Vec<f64> = rand_vec(n * cols, 17 + count_a as u64);
            let basis = Basis::from_buffer(b.upload(&data).unwrap(), n, cols).unwrap();
            let (mut pa, mut pb) = (
                b.partials::<f64>(n, count_a).unwrap(),
                b.partials::<f64>(n, count_a).unwrap(),
            );
            b.basis_dots2(&basis, wa, wb, 1..count_a + 1, count_b, &mut pa, &mut pb)
                .unwrap();
            let (mut ra, mut rb) = (
                b.partials::<f64>(n, count_a).unwrap(),
                b.partials::<f64>(n, count_a).unwrap(),
            );
            b.basis_dots(&basis, wa, 1..count_a + 1, &mut ra, Slot(0))
                .unwrap();
            if count_b > 0 {
                b.basis_dots(&basis, wb, 1..count_b + 1, &mut rb, Slot(0))
                    .unwrap();
            }
            let (sa, sb) = (b.finish(&pa).unwrap(), b.finish(&pb).unwrap());
            let (qa, qb) = (b.finish(&ra).unwrap(), b.finish(&rb).unwrap());
            let label = format!("{} n={n} columns={count_a}", b.name());
            for k in 0..count_a {
                let tol = 1e-12 * n as f64;
                assert_scalar_close(
                    &format!("{label}: a {k}"),
                    sa.get(Slot(k)),
                    qa.get(Slot(k)),
                    tol,
                );
                if k < count_b {
                    assert_scalar_close(
                        &format!("{label}: b {k}"),
                        sb.get(Slot(k)),
                        qb.get(Slot(k)),
                        tol,
                    );
                }
            }
        }
    }
}

#[test]
fn host_basis_dots2_matches_basis_dots() {
    basis_dots2_matches_basis_dots(&HostBackend::new());
}

#[cfg(feature = "opencl")]
mod opencl {
    use super::*;
    use pipekrylov::backend::opencl::OpenClBackend;

    fn backend() -> OpenClBackend {
        OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)")
    }
    #[test]
    fn opencl_kernels_agree_with_host() {
        agree_with_host(&backend());
    }

    /// The bench's traffic model follows the layout that runs: the stream kernel with 16-bit
    /// column offsets moves fewer bytes than the CSR floor, with 32-bit indices a little more.
    #[test]
    fn moved_bytes_of_the_stream_layouts() {
        use pipekrylov::backend::SpmvOps;
        use pipekrylov::bench::floor::{moved_spmv_bytes, spmv_bytes};
        let be = backend();
        let a = Generator::Stencil27
            .generate::<f64>(1 << 15)
            .unwrap()
            .matrix;
        let (n, nnz) = (a.n_rows(), a.nnz());
        let csr_floor = spmv_bytes(MatrixFormat::Csr, n, nnz, nnz, 8);
        let moved = |kernel| {
            let m = be
                .upload_matrix_with(&a, MatrixFormat::Csr, kernel)
                .unwrap();
            (m.spmv_kernel().to_string(), moved_spmv_bytes(&m, nnz, 8))
        };
        let (k16, b16) = moved(CsrKernel::StreamCompact);
        let (k32, b32) = moved(CsrKernel::Stream);
        let (kv, bv) = moved(CsrKernel::Vector);
        assert!(k16.ends_with(":u16"), "{k16}");
        assert!(!k32.ends_with(":u16"), "{k32}");
        assert_eq!(bv, csr_floor, "{kv}");
        assert!(
            b16 < csr_floor && b16 > csr_floor - 2.0 * nnz as f64 - 1.0,
            "{b16} vs {csr_floor}"
        );
        assert!(
            b32 > csr_floor && b32 < csr_floor + 0.01 * csr_floor,
            "{b32} vs {csr_floor}"
        );
    }
    #[test]
    fn opencl_solves_agree_with_host() {
        solves_agree_with_host(&backend());
    }
    #[test]
    fn opencl_pipelined_counts() {
        pipelined_counts(&backend());
    }
    #[test]
    fn opencl_dcgs2_spmv_dots_matches_two_kernels() {
        // SELL fused by default on CUDA only (tests/integration/dcgs2_sell_fused.rs forces it on OpenCL).
        let be = backend();
        let sell_fused = common::dcgs2::sell_fused_expected(&be);
        common::dcgs2::dcgs2_spmv_dots_matches_two_kernels(&be, sell_fused);
    }
    #[test]
    fn opencl_basis_dots2_matches_basis_dots() {
        basis_dots2_matches_basis_dots(&backend());
    }

    /// The kernels once more with buffers passed as device addresses (`-D PK_ADDRESS_ARGS`,
    /// packed: the default on NVIDIA GPUs; PoCL supports it too), every kernel against the host
    /// again.
    mod address_args {
        use super::*;

        fn backend() -> OpenClBackend {
            let mut tuning = pipekrylov::backend::Tuning::default();
            tuning.opencl_address_args = Some(true);
            let device = pipekrylov::backend::DeviceSelector::from_env();
            let be =
                OpenClBackend::with_tuning(device, tuning).expect("an OpenCL device (PoCL in CI)");
            assert_eq!(be.tuning().opencl_address_args, Some(true));
            be
        }
        #[test]
        fn opencl_address_args_kernels_agree_with_host() {
            let be = backend();
            agree_with_host(&be);
            assert_eq!(
                be.uses_address_args(),
                Some(true),
                "the address check failed"
            );
        }
        #[test]
        fn opencl_address_args_solves_agree_with_host() {
            solves_agree_with_host(&backend());
        }
        #[test]
        fn opencl_address_args_pipelined_counts() {
            pipelined_counts(&backend());
        }
        #[test]
        fn opencl_address_args_dcgs2_spmv_dots_matches_two_kernels() {
            let be = backend();
            let sell_fused = common::dcgs2::sell_fused_expected(&be);
            common::dcgs2::dcgs2_spmv_dots_matches_two_kernels(&be, sell_fused);
        }
        #[test]
        fn opencl_address_args_basis_dots2_matches_basis_dots() {
            basis_dots2_matches_basis_dots(&backend());
        }
    }
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use pipekrylov::backend::cuda::CudaBackend;

    fn backend() -> CudaBackend {
        CudaBackend::from_env().expect("a CUDA device")
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_kernels_agree_with_host() {
        agree_with_host(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_solves_agree_with_host() {
        solves_agree_with_host(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_pipelined_counts() {
        pipelined_counts(&backend());
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_dcgs2_spmv_dots_matches_two_kernels() {
        let be = backend();
        let sell_fused = common::dcgs2::sell_fused_expected(&be);
        common::dcgs2::dcgs2_spmv_dots_matches_two_kernels(&be, sell_fused);
    }
    #[test]
    #[ignore = "needs an NVIDIA GPU (run on the device with --include-ignored)"]
    fn cuda_basis_dots2_matches_basis_dots() {
        basis_dots2_matches_basis_dots(&backend());
    }
}

#[test]
fn host_agrees_with_itself_through_the_generic_harness() {
    // Exercises agree_with_host and solves_agree_with_host in CI even without GPU features.
    agree_with_host(&HostBackend::new());
    solves_agree_with_host(&HostBackend::new());
}

/// The pathological matrices above do reach the long-row path: a dense row among short ones is
/// split into chunks at upload, regular matrices are not.
#[test]
fn long_rows_are_split_at_upload() {
    use pipekrylov::backend::{DeviceFormat, SpmvOps};
    let h = HostBackend::new();
    let long = |a: &CsrMatrix<f64>| match h.upload_matrix(a, MatrixFormat::Csr).unwrap().format() {
        DeviceFormat::Csr { long_rows, .. } => long_rows.as_ref().map(|l| (l.n_rows, l.n_chunks)),
        _ => unreachable!("uploaded as CSR"),
    };
    let dense = with_dense_row(&random_matrix::<f64>(4099, 3, true, 21), 2049, 22);
    assert_eq!(long(&dense), Some((1, 3)));
    assert_eq!(long(&single_full_row::<f64>(1000, 999, 23)), Some((1, 1)));
    let poisson = Generator::Poisson2d.generate::<f64>(4096).unwrap().matrix;
    assert_eq!(long(&poisson), None);
    assert_eq!(long(&random_matrix::<f64>(4099, 40, false, 9)), None);
}

/// The stream kernel's choice and plan on the matrices above: from 2^20 entries, the
/// power-law rows and the long rows of the 27-point stencil and elasticity choose it, Poisson
/// and circuit rows keep the vector kernel; a dense row above the long-row threshold is
/// read back from the long-row path, and the wide row of the agreement matrices is not (its
/// work-group sums it).
#[test]
fn the_stream_kernel_is_chosen_for_unequal_rows() {
    use pipekrylov::backend::long_rows::LongRowPlan;
    use pipekrylov::backend::row_blocks::{choose, compact_columns, row_blocks, STREAM_CAP};
    let row_ptr = |a: &CsrMatrix<f64>| a.indices_u32().unwrap().0;
    let kernel = |a: &CsrMatrix<f64>| {
        let rp = row_ptr(a);
        let long_len = LongRowPlan::plan(&rp).map_or(u32::MAX, |p| p.min_len);
        choose(&rp, long_len, CsrKernel::Auto)
    };
    let g = |g: Generator, n: usize| g.generate::<f64>(n).unwrap().matrix;
    for (gen, n, want) in [
        (Generator::Powerlaw, 1 << 17, CsrKernel::StreamCompact),
        (Generator::Stencil27, 1 << 16, CsrKernel::StreamCompact),
        (Generator::Elasticity3d, 1 << 15, CsrKernel::StreamCompact),
        (Generator::Poisson2d, 1 << 18, CsrKernel::Vector),
        (Generator::Poisson3d, 1 << 18, CsrKernel::Vector),
        (Generator::Circuit, 1 << 18, CsrKernel::Vector),
        // Below 2^20 entries the latency kernels keep the vector layout.
        (Generator::Powerlaw, 1 << 14, CsrKernel::Vector),
    ] {
        assert_eq!(kernel(&g(gen, n)), want, "{}", gen.name());
    }
    let wide = with_dense_row(&random_matrix::<f64>(2200, 300, false, 31), 1100, 32);
    let rp = row_ptr(&wide);
    assert!(rp[1101] - rp[1100] > STREAM_CAP as u32);
    assert!(LongRowPlan::plan_for_stream(&rp).is_none());
    assert!(row_blocks(&rp).windows(2).any(|w| w == [1100, 1101]));
    let dense = with_dense_row(&random_matrix::<f64>(4099, 3, true, 21), 2049, 22);
    let plan = LongRowPlan::plan_for_stream(&row_ptr(&dense)).unwrap();
    assert_eq!(plan.rows, vec![2049]);
    // The wide-column agreement matrix runs the 32-bit paths: no 16-bit offsets for its row
    // blocks, its SELL-32 slices or its ELL form.
    let spread = random_matrix::<f64>(70_000, 4, true, 41);
    let (rp, ci) = spread.indices_u32().unwrap();
    assert!(compact_columns(&rp, &ci, &row_blocks(&rp)).is_none());
    let sell = SellMatrix::from_csr(&spread, 32, 128).unwrap();
    assert!(sell_compact_columns(&sell).is_none());
    assert!(sell_compact_columns(&SellMatrix::ell_from_csr(&spread).unwrap()).is_none());
}
