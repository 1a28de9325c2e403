//! A single-precision preconditioner inside a double-precision solve
//! ([`PrecondPrecision::F32`]): the preconditioner built on the matrix rounded to f32, applied
//! to the residual rounded to f32, its result widened.

use super::{check_same_size, Preconditioner, SetupTimes, ValuesRefresh};
use crate::backend::{Backend, Buffer, DeviceMatrix};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use std::sync::Mutex;
use std::time::Instant;

/// A preconditioner of `f32` wrapped for a solve in `T` (f64): z = widen(M32^-1 round(r)),
/// with M32 built from A rounded to f32. Its data (diagonal inverses, factors, approximate
/// inverses) is stored in f32, so an application reads about half the bytes of its matrices
/// (CSR: 8 bytes per entry against 12), at the cost of two conversion kernels (r rounded,
/// z widened). See [`PrecondPrecision::F32`] for when that pays.
pub struct Narrowed<B: Backend, T> {
    inner: Box<dyn Preconditioner<B, f32>>,
    /// The f32 residual and correction of each application.
    vectors: Mutex<(Buffer<f32>, Buffer<f32>)>,
    /// Fingerprint of the matrix in the solve's precision (the solvers compare it with
    /// their device matrix's).
    fingerprint: u64,
    /// Rounding the matrix on the host plus the inner setup.
    times: SetupTimes,
    _solve: std::marker::PhantomData<T>,
}

impl<B: Backend, T> std::fmt::Debug for Narrowed<B, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Narrowed")
            .field("inner", &self.inner.name())
            .field("fingerprint", &self.fingerprint)
            .finish()
    }
}

impl<B: Backend, T: Scalar> Narrowed<B, T> {
    /// The preconditioner that `build` sets up for `a` rounded to f32 (a value beyond f32's
    /// range rounds to infinity, which the inner setup refuses as non-finite), with the f32
    /// vectors of its applications allocated on `backend`.
    pub(crate) fn new(
        backend: &B,
        a: &CsrMatrix<T>,
        build: impl FnOnce(&CsrMatrix<f32>) -> Result<Box<dyn Preconditioner<B, f32>>>,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let a32 = a.cast::<f32>();
        let rounding = t0.elapsed().as_secs_f64();
        let inner = build(&a32)?;
        let n = inner.n();
        let vectors = (backend.alloc::<f32>(n)?, backend.alloc::<f32>(n)?);
        let inner_times = inner.setup_times();
        let host_seconds = rounding + inner_times.host_seconds;
        Ok(Self {
            inner,
            vectors: Mutex::new(vectors),
            fingerprint: a.fingerprint(),
            times: SetupTimes {
                host_seconds,
                device_seconds: (t0.elapsed().as_secs_f64() - host_seconds).max(0.0),
            },
            _solve: std::marker::PhantomData,
        })
    }

    /// The f32 preconditioner inside.
    pub fn inner(&self) -> &dyn Preconditioner<B, f32> {
        self.inner.as_ref()
    }
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for Narrowed<B, T> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn n(&self) -> usize {
        self.inner.n()
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        let n = self.inner.n();
        if r.len() != n || z.len() != n {
            return Err(Error::dims(
                "f32 preconditioner: vector length vs rows",
                n,
                r.len(),
            ));
        }
        let mut guard = self.vectors.lock().map_err(|_| {
            Error::PreconditionerSetup("f32 preconditioner workspace poisoned".into())
        })?;
        let (r32, z32) = &mut *guard;
        backend.copy_to_f32(r, r32)?;
        self.inner.apply(backend, r32, z32)?;
        backend.copy_from_f32(z32, z)
    }
    fn launches_per_apply(&self) -> usize {
        self.inner.launches_per_apply() + 2
    }
    fn suits_device_resident(&self) -> bool {
        self.inner.suits_device_resident()
    }
    /// False: the rounding of r and of the f32 data makes the preconditioner not exactly
    /// linear, which the pipelined recurrences amplify (as for [`PrecondPrecision::F32`] AMG).
    fn suits_pipelined(&self) -> bool {
        false
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes() + 2 * self.inner.n() * std::mem::size_of::<f32>()
    }
    fn params(&self) -> serde_json::Value {
        let mut p = self.inner.params();
        match p.as_object_mut() {
            Some(o) => {
                o.insert("precision".into(), "f32".into());
            }
            None => p = serde_json::json!({ "precision": "f32", "inner": p }),
        }
        p
    }
    fn built_for(&self) -> Option<u64> {
        self.inner.built_for().map(|_| self.fingerprint)
    }
    /// The inner preconditioner's refresh on `a` rounded to f32; the solver's device matrix
    /// (in the solve's precision) is not read.
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        _device: Option<&DeviceMatrix<T>>,
    ) -> Result<ValuesRefresh> {
        check_same_size(self.inner.name(), self.inner.n(), a)?;
        let t0 = Instant::now();
        let a32 = a.cast::<f32>();
        let fingerprint = a.fingerprint();
        let rounding = t0.elapsed().as_secs_f64();
        let mut refresh = self.inner.update_values(backend, &a32, None)?;
        self.fingerprint = fingerprint;
        refresh.times.host_seconds += rounding;
        Ok(refresh)
    }
    fn refresh_reads_device_matrix(&self) -> bool {
        false
    }
}

/// The error of [`PrecondPrecision::F32`] without a preconditioner.
pub(crate) fn nothing_to_narrow() -> Error {
    Error::param(
        "precond_precision",
        "f32 applies to a preconditioner, and none is set",
    )
}

impl PrecondPrecision {
    /// Whether a preconditioner of this precision in a solve of `T` is a [`Narrowed`] one.
    pub(crate) fn narrows<T: Scalar>(self) -> bool {
        self == PrecondPrecision::F32 && T::PRECISION == crate::scalar::Precision::F64
    }
}

/// The precision a preconditioner stores its data in and runs its application in
/// ([`crate::SolveOptions::precond_precision`], option `precond_precision`, command line
/// `--precond-precision`; AMG's own [`crate::precond::AmgOptions::precision`] is the same
/// choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum PrecondPrecision {
    /// The solve's precision (default).
    #[default]
    Solve,
    /// Single precision inside a double-precision solve: the preconditioner set up on A
    /// rounded to f32, its data stored in f32 and its application run in f32 on the residual
    /// rounded to f32, the result widened ([`Narrowed`]; AMG: every level and the V-cycle in
    /// f32, set up on the device where the setup runs there). No effect on a
    /// single-precision solve.
    ///
    /// What it saves is the preconditioner's own traffic: matrices read at 8 bytes per entry
    /// instead of 12, f32 work vectors. The rounding and widening cost two passes over r and
    /// z, so it pays for preconditioners whose application reads matrices (AMG, FSAI, ISAI,
    /// block-Jacobi's factors) and not for point Jacobi, whose application is one such pass.
    ///
    /// Use it with the classical Krylov variants ([`crate::solver::Variant::Classical`], which
    /// CG's default [`crate::solver::Variant::Auto`] then runs): the pipelined ones update the
    /// preconditioned vectors by recurrences that assume an exactly linear preconditioner,
    /// which one rounded to f32 is not. Measured with AMG on 2D Poisson 512^2 (host):
    /// classical CG took the f64 hierarchy's 10 / 14 / 17 iterations to 1e-6 / 1e-8 / 1e-10,
    /// pipelined CG 16 / 19 / 23.
    F32,
}

impl std::fmt::Display for PrecondPrecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Solve => "solve",
            Self::F32 => "f32",
        })
    }
}

impl std::str::FromStr for PrecondPrecision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "solve" => Ok(Self::Solve),
            "f32" => Ok(Self::F32),
            _ => Err(Error::param(
                "preconditioner precision",
                format!("unknown precision '{s}' (solve or f32)"),
            )),
        }
    }
}
