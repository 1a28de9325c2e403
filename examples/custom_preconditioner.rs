//! A preconditioner of your own, written once against the `Backend` trait so that it runs on the
//! host, OpenCL and CUDA alike, and handed to the library's solvers like the built-in ones.
//!
//! The example: one Richardson step on top of Jacobi, a degree-1 polynomial preconditioner,
//!
//!   M^-1 r = D^-1 r + D^-1 (r - A D^-1 r) = 2 t - D^-1 A t,   t = D^-1 r,
//!
//! symmetric and positive definite when the Jacobi-scaled matrix has its spectrum in (0, 2)
//! (diagonally dominant matrices), so it suits CG. One application is four backend kernels
//! (`diag_scale`, `spmv`, `diag_scale`, `axpby`) and no host transfer; it needs A and D^-1 on the
//! device and two work vectors.
//!
//! `cargo run --release --example custom_preconditioner [K] [BACKEND]` (defaults 200 and `auto`):
//! CG on the 2D Poisson matrix of a K x K grid without a preconditioner, with Jacobi and with
//! this one; it checks that every solve converges and that the polynomial preconditioner needs
//! fewer iterations than Jacobi.

use pipekrylov::backend::{
    Backend, BackendChoice, BackendInfo, Buffer, DeviceMatrix, MatrixFormat,
};
use pipekrylov::matrix::generate::Generator;
use pipekrylov::matrix::CsrMatrix;
use pipekrylov::precond::{Jacobi, Preconditioner, SetupTimes};
use pipekrylov::solver::{Cg, Params, SolveReport};
use pipekrylov::{Error, Result};
use std::sync::Mutex;
use std::time::Instant;

/// M^-1 = 2 D^-1 - D^-1 A D^-1 (one Richardson step on Jacobi).
struct JacobiRichardson {
    a: DeviceMatrix<f64>,
    inv_diag: Buffer<f64>,
    /// t = D^-1 r and u = A t; a Mutex because `apply` takes `&self`.
    work: Mutex<(Buffer<f64>, Buffer<f64>)>,
    times: SetupTimes,
    fingerprint: u64,
}

impl JacobiRichardson {
    fn new<B: Backend>(backend: &B, a: &CsrMatrix<f64>) -> Result<Self> {
        let t0 = Instant::now();
        let mut inv = a.diagonal();
        for (row, d) in inv.iter_mut().enumerate() {
            if *d <= 0.0 || !d.is_finite() {
                return Err(Error::PreconditionerSetup(format!(
                    "Jacobi-Richardson: diagonal entry {d} in row {row} is not positive"
                )));
            }
            *d = 1.0 / *d;
        }
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let pc = Self {
            a: backend.upload_matrix(a, MatrixFormat::Csr)?,
            inv_diag: backend.upload(&inv)?,
            work: Mutex::new((backend.alloc(a.n_rows())?, backend.alloc(a.n_rows())?)),
            times: SetupTimes {
                host_seconds,
                device_seconds: 0.0,
            },
            fingerprint: a.fingerprint(),
        };
        backend.synchronize()?;
        Ok(Self {
            times: SetupTimes {
                host_seconds,
                device_seconds: t1.elapsed().as_secs_f64(),
            },
            ..pc
        })
    }
}

impl<B: Backend> Preconditioner<B, f64> for JacobiRichardson {
    fn name(&self) -> &'static str {
        "jacobi-richardson"
    }
    fn n(&self) -> usize {
        self.a.n_rows()
    }
    fn apply(&self, backend: &B, r: &Buffer<f64>, z: &mut Buffer<f64>) -> Result<()> {
        let mut work = self
            .work
            .lock()
            .map_err(|_| Error::PreconditionerSetup("workspace poisoned".into()))?;
        let (t, u) = &mut *work;
        backend.diag_scale(&self.inv_diag, r, t)?; // t = D^-1 r
        backend.spmv(&self.a, t, u)?; // u = A t
        backend.diag_scale(&self.inv_diag, u, z)?; // z = D^-1 u
        backend.axpby(2.0, t, -1.0, z) // z = 2 t - z
    }
    fn launches_per_apply(&self) -> usize {
        4
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        self.a.device_bytes()
            + self.inv_diag.bytes()
            + self.work.lock().map_or(0, |w| w.0.bytes() + w.1.bytes())
    }
    fn built_for(&self) -> Option<u64> {
        Some(self.fingerprint)
    }
}

fn solve<B: Backend>(
    backend: &B,
    a: &CsrMatrix<f64>,
    pc: Option<&dyn Preconditioner<B, f64>>,
) -> Result<SolveReport> {
    let m = backend.upload_matrix(a, MatrixFormat::Csr)?;
    let mut rhs = vec![0.0; a.n_rows()];
    a.mul_vec(&vec![1.0; a.n_rows()], &mut rhs)?;
    let b = backend.upload(&rhs)?;
    let mut x = backend.alloc(a.n_rows())?;
    let params = Params {
        rtol: 1e-8,
        ..Params::default()
    };
    Cg::new(backend, &m, pc, params)?.solve(&b, &mut x)
}

/// Bad arguments and solver errors end the program with the error's message and exit code 1.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let k: usize = args.next().map_or(Ok(200), |s| {
        s.parse()
            .map_err(|_| pipekrylov::Error::param("K", format!("'{s}' is not a whole number")))
    })?;
    let choice: BackendChoice = args.next().as_deref().unwrap_or("auto").parse()?;
    let (backend, _skipped) = choice.create()?;
    let a = Generator::Poisson2d.generate_with_param::<f64>(k)?.matrix;
    println!(
        "2D Poisson, n = {}, on {} ({})",
        a.n_rows(),
        backend.name(),
        backend.device_name()
    );
    let plain = solve(&backend, &a, None)?;
    let jacobi = Jacobi::new(&backend, &a)?;
    let with_jacobi = solve(&backend, &a, Some(&jacobi))?;
    let mine = JacobiRichardson::new(&backend, &a)?;
    let with_mine = solve(&backend, &a, Some(&mine))?;
    for (name, r) in [
        ("none", &plain),
        ("jacobi", &with_jacobi),
        ("jacobi-richardson", &with_mine),
    ] {
        println!(
            "{name:>18}: {:5} iterations, {}, true relative residual {:.2e}",
            r.iterations, r.stop_reason, r.relative_true_residual
        );
        assert!(r.stop_reason.converged() && r.relative_true_residual <= 1.1e-8);
    }
    assert!(with_mine.iterations < with_jacobi.iterations);
    Ok(())
}
