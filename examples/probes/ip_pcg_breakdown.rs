//! Time of each kernel of one pipelined PCG iteration with the matrix-free Incomplete Poisson
//! preconditioner alone (many back-to-back repetitions, one synchronization), against the
//! kernels of plain pipelined CG and of the unfused PCG, with the bandwidth each reaches on its
//! DRAM traffic floor, on each available GPU backend.
//! `cargo run --release --features "cuda opencl" --example ip_pcg_breakdown [n]`

use pipekrylov::backend::{IpStencil, PcgStepVectors, Slot, SpmvDots};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::prelude::*;

mod common;
use common::time;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(16_777_216);
    let g = Generator::Poisson3d;
    let p = g.generate::<f64>(n).unwrap();
    let n = p.matrix.n_rows();
    let k = (n as f64).cbrt().round() as usize;
    let stencil = g.grid_stencil(k).expect("a cubic grid");
    let st = IpStencil {
        dims: stencil.dims,
        weights: stencil.neighbours.map(|a| -a / stencil.center),
    };
    let nnz = p.matrix.nnz();
    let vec_bytes = (n * 8) as f64;
    let matrix_bytes = (nnz * 12 + (n + 1) * 4) as f64;
    println!("poisson3d n = {n}; us per kernel (GB/s on the DRAM floor)");
    let kernels = [
        ("spmv_dots(p)", matrix_bytes + 2.0 * vec_bytes),
        ("cg_update", 7.0 * vec_bytes),
        ("pcg_update", 10.0 * vec_bytes),
        ("ip_stencil_dot", 2.0 * vec_bytes),
        ("ip_stencil_quad", vec_bytes),
        ("ip_pcg_update", 7.0 * vec_bytes),
        ("CG iteration", matrix_bytes + 9.0 * vec_bytes),
        ("IP-PCG iteration", matrix_bytes + 10.0 * vec_bytes),
    ];
    let names: Vec<&str> = kernels.iter().map(|k| k.0).collect();
    println!("backend | {}", names.join(" | "));
    for choice in [BackendChoice::Cuda, BackendChoice::OpenCl] {
        let Ok((be, _)) =
            choice.create_with(&pipekrylov::backend::BackendConfig::from_env().unwrap())
        else {
            continue;
        };
        let a = be.upload_matrix(&p.matrix, MatrixFormat::Csr).unwrap();
        let small: Vec<f64> = (0..n).map(|i| 1e-3 * ((i % 7) as f64 - 3.0)).collect();
        let mut x = be.alloc::<f64>(n).unwrap();
        let mut r = be.upload(&small).unwrap();
        let mut r_next = be.upload(&small).unwrap();
        let mut z = be.upload(&small).unwrap();
        let mut q = be.upload(&small).unwrap();
        let mut pv = be.upload(&small).unwrap();
        let mut ap = be.upload(&small).unwrap();
        let mut partials = be.partials::<f64>(n, 4).unwrap();
        let reps = 50;
        let mut run = |step: &str| match step {
            "spmv_dots(p)" | "spmv_dots(p, Ap)" => {
                let dots = SpmvDots {
                    yy: (step == "spmv_dots(p, Ap)").then_some(Slot(1)),
                    with: [Some((&pv, Slot(2))), None],
                };
                be.spmv_dots(&a, &pv, &mut ap, dots, &mut partials).unwrap()
            }
            "cg_update" => be
                .cg_update(
                    1e-9,
                    1e-9,
                    &mut x,
                    &mut r,
                    &mut pv,
                    &ap,
                    &mut partials,
                    Slot(0),
                )
                .unwrap(),
            "pcg_update" => be
                .pcg_update(
                    1e-9,
                    1e-9,
                    &mut x,
                    &mut r,
                    &mut z,
                    &mut pv,
                    &ap,
                    &q,
                    &mut partials,
                    Slot(0),
                    Slot(1),
                )
                .unwrap(),
            "ip_stencil_dot" => be
                .ip_stencil_dot(&st, &ap, &mut q, &mut partials, Slot(2))
                .unwrap(),
            "ip_stencil_quad" => be
                .ip_stencil_quad(&st, &ap, &mut partials, Slot(3))
                .unwrap(),
            "ip_pcg_update" => {
                let v = PcgStepVectors {
                    alpha: 1e-9,
                    beta: 1e-9,
                    x: &mut x,
                    r: &r,
                    r_next: &mut r_next,
                    p: &mut pv,
                    ap: &ap,
                };
                be.ip_pcg_update(&st, v, &mut partials, (Slot(0), Slot(1)))
                    .unwrap();
                std::mem::swap(&mut r, &mut r_next);
            }
            _ => {
                be.finish(&partials).unwrap();
            }
        };
        let mut cells = Vec::new();
        for (name, bytes) in kernels {
            // An iteration is its kernels in the solver's order and the one transfer.
            let steps: Vec<&str> = match name {
                "CG iteration" => vec!["cg_update", "spmv_dots(p, Ap)", "finish"],
                "IP-PCG iteration" => {
                    vec!["ip_pcg_update", "spmv_dots(p)", "ip_stencil_quad", "finish"]
                }
                kernel => vec![kernel],
            };
            let us = time(5, reps, &be, || steps.iter().for_each(|s| run(s)));
            cells.push(format!("{us:.1} ({:.0})", bytes / us / 1e3));
        }
        println!("{} | {}", be.name(), cells.join(" | "));
    }
}
