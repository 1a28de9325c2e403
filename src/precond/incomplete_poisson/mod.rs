//! Incomplete Poisson (IP) preconditioner, \[Ament10\] Section IV: M^-1 = (I - L D^-1)(I - D^-1 L^T)
//! with A = L + D + L^T, cut to the pattern of A (eq. (15), (24), (28)-(29)). Its application is
//! one SpMV (assembled) or one stencil sweep that stores nothing but three weights
//! (matrix-free), fused with the inner product PCG needs.
//!
//! On a constant-coefficient stencil with diagonal d and neighbour coefficient a per axis the
//! entries are w = -a / d for both neighbours and 1 + sum of w^2 over the lower neighbours on
//! the diagonal. Eq. (29) as printed divides the upper neighbours by *their* diagonal; that is
//! only the same where the diagonal is constant and would make M^-1 nonsymmetric elsewhere,
//! so the entries here follow eq. (15) exactly: (i, j) uses the diagonal of min(i, j).
//!
//! Where the diagonal varies (variable coefficients), eq. (15) cut to A's pattern can be
//! indefinite: on a 3D finite-volume diffusion with 30% of the cells at coefficient 1e4 its
//! smallest eigenvalue is about -0.016 and PCG stops on <r, z> <= 0 (the check is right: the
//! preconditioner is not positive definite). [`IpScaling`] builds the IP of the symmetrically
//! scaled D^-1/2 A D^-1/2 instead, scaled back: (I - D^-1 L) D^-1 (I - L^T D^-1) cut to A's
//! pattern, positive definite for 5- and 7-point M-matrices whatever the diagonal, the same
//! matrix up to the factor 1/d where the diagonal is a constant d. `Auto` (the default) takes
//! it exactly when the diagonal varies.

mod assemble;

use super::device_a::{csr_matrix, DeviceA};
use super::{no_fused_step, Preconditioner, SetupTimes};
use crate::backend::{
    collective_result, Backend, Buffer, DeviceFormat, DeviceMatrix, IpStencil, MatrixFormat,
    Partials, PcgStepVectors, Slot, SpmvDots, StencilCoefficients,
};
use crate::error::{Error, Result};
use crate::matrix::generate::GridStencil;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use std::time::Instant;

/// Whether the assembled IP is built from the symmetrically scaled matrix D^-1/2 A D^-1/2
/// (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum IpScaling {
    /// Scaled where the diagonal of A varies (entries more than 64 ulps apart), as the paper
    /// otherwise (the two differ by a constant factor on a constant diagonal).
    #[default]
    Auto,
    /// The paper's eq. (15) as printed, whatever the diagonal.
    None,
    /// Always the IP of D^-1/2 A D^-1/2, scaled back.
    Symmetric,
}

impl IpScaling {
    /// Whether the IP of `a` is built scaled, and why.
    fn resolve<T: Scalar>(self, a: &CsrMatrix<T>) -> (bool, &'static str) {
        match self {
            IpScaling::None => (false, "requested: the paper's eq. (15)"),
            IpScaling::Symmetric => (true, "requested: IP of D^-1/2 A D^-1/2"),
            IpScaling::Auto if assemble::diagonal_varies(a) => (
                true,
                "auto: the diagonal varies, IP of D^-1/2 A D^-1/2 (positive definite there)",
            ),
            IpScaling::Auto => (false, "auto: constant diagonal, the paper's eq. (15)"),
        }
    }
}

impl std::fmt::Display for IpScaling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IpScaling::Auto => "auto",
            IpScaling::None => "none",
            IpScaling::Symmetric => "symmetric",
        })
    }
}

impl std::str::FromStr for IpScaling {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(IpScaling::Auto),
            "none" => Ok(IpScaling::None),
            "symmetric" => Ok(IpScaling::Symmetric),
            _ => Err(Error::param(
                "ip_scaling",
                format!("'{s}' is not auto, none or symmetric"),
            )),
        }
    }
}

/// How M^-1 is held on the device.
#[derive(Debug)]
enum Storage<T> {
    /// The assembled matrix on A's pattern, applied by the SpMV kernels.
    Assembled(Box<DeviceMatrix<T>>),
    /// Nothing but the stencil weights, applied by the `ip_stencil` kernels.
    MatrixFree(IpStencil<T>),
}

/// Incomplete Poisson preconditioner (symmetric positive definite, for CG).
///
/// ```
/// use pipekrylov::backend::host::HostBackend;
/// use pipekrylov::backend::MatrixFormat;
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::precond::{IncompletePoisson, Preconditioner};
/// let a = Generator::Poisson2d.generate_with_param::<f64>(8).unwrap().matrix;
/// let host = HostBackend::new();
/// let m = IncompletePoisson::new(&host, &a, MatrixFormat::Csr).unwrap();
/// assert_eq!(Preconditioner::<HostBackend, f64>::launches_per_apply(&m), 1);
/// // A matrix with a positive off-diagonal entry is refused.
/// let bad = pipekrylov::matrix::CsrMatrix::<f64>::from_triplets(
///     2, 2, &[(0, 0, 2.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 2.0)]).unwrap();
/// assert!(IncompletePoisson::new(&host, &bad, MatrixFormat::Csr).is_err());
/// ```
#[derive(Debug)]
pub struct IncompletePoisson<T> {
    n: usize,
    storage: Storage<T>,
    /// Whether the assembled matrix is the scaled IP, and why (`None` matrix-free).
    scaled: Option<(bool, &'static str)>,
    /// The scaling asked for (resolved again for new values).
    scaling: IpScaling,
    times: SetupTimes,
    fingerprint: Option<u64>,
    /// From the first values refresh on, the buffer the next assembly on the device writes
    /// into (the values it replaced: no new memory in a time-stepping loop).
    spare: Option<Buffer<T>>,
}

impl<T: Scalar> IncompletePoisson<T> {
    /// Assemble M^-1 on the pattern of `a` (eq. (15), scaled as [`IpScaling::Auto`] says) and
    /// upload it in `format`.
    ///
    /// Errors: [`Error::NotApplicable`] when `a` is not square and symmetric with a positive
    /// diagonal and nonpositive off-diagonal entries (the class the paper's argument covers;
    /// IP of any other matrix is not guaranteed to be positive definite), or when an entry
    /// overflows; device errors from the upload.
    pub fn new<B: Backend>(backend: &B, a: &CsrMatrix<T>, format: MatrixFormat) -> Result<Self> {
        let local = Self::new_local(backend, a, format, IpScaling::Auto);
        collective_result(backend, "the incomplete Poisson setup", local)
    }

    /// [`IncompletePoisson::new`] (assembled on the host) with the scaling `scaling`.
    pub fn new_with_scaling<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        format: MatrixFormat,
        scaling: IpScaling,
    ) -> Result<Self> {
        let local = Self::new_local(backend, a, format, scaling);
        collective_result(backend, "the incomplete Poisson setup", local)
    }

    /// [`IncompletePoisson::new_on`] (assembled on the device where it can be) with the
    /// scaling `scaling` (see [`IpScaling`]); the preconditioner's parameters report which was
    /// built and why.
    pub fn with_scaling<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        format: MatrixFormat,
        scaling: IpScaling,
    ) -> Result<Self> {
        let local = Self::new_on_local(backend, a, device, format, scaling);
        collective_result(backend, "the incomplete Poisson setup", local)
    }

    /// The host assembly on this rank alone.
    fn new_local<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        format: MatrixFormat,
        scaling: IpScaling,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let scaled = scaling.resolve(a);
        let m = ip_checked(a, scaled.0)?;
        let fingerprint = a.fingerprint();
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let dm = backend.upload_matrix(&m, format)?;
        backend.synchronize()?;
        Ok(Self {
            n: a.n_rows(),
            storage: Storage::Assembled(Box::new(dm)),
            scaled: Some(scaled),
            scaling,
            times: SetupTimes {
                host_seconds,
                device_seconds: t1.elapsed().as_secs_f64(),
            },
            fingerprint: Some(fingerprint),
            spare: None,
        })
    }

    /// [`IncompletePoisson::new`] with the solver's device copy of `a`: with `format` CSR the
    /// domain check and the assembly run on the device (kernels `ip_domain_check` and
    /// `ip_assemble`, one pass each; the same bits as the host assembly) from that copy, or
    /// from an upload of `a` when `device` is not a CSR upload of it; M^-1 gets a copy of A's
    /// pattern made on the device. Other formats, and CSR matrices whose product needs long
    /// rows or row blocks, are assembled on the host as by [`IncompletePoisson::new`].
    ///
    /// Errors: as [`IncompletePoisson::new`] (the host check names the first offending entry
    /// when the device check counts any).
    pub fn new_on<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        format: MatrixFormat,
    ) -> Result<Self> {
        Self::with_scaling(backend, a, device, format, IpScaling::Auto)
    }

    /// The setup on this rank alone.
    fn new_on_local<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        format: MatrixFormat,
        scaling: IpScaling,
    ) -> Result<Self> {
        if format != MatrixFormat::Csr || !a.is_square() {
            return Self::new_local(backend, a, format, scaling);
        }
        let t0 = Instant::now();
        let scaled = scaling.resolve(a);
        let fingerprint = a.fingerprint();
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let a_dev = DeviceA::of(backend, a, device, fingerprint)?;
        let ad = a_dev.get();
        let (row_ptr, col_idx) = match ad.format() {
            DeviceFormat::Csr {
                row_ptr,
                col_idx,
                long_rows: None,
                row_blocks: None,
                ..
            } => (row_ptr, col_idx),
            _ => return Self::new_local(backend, a, format, scaling),
        };
        let n = a.n_rows();
        let m_values = assemble_on_device(backend, a, ad, scaled.0, None)?;
        let mut m_row_ptr = backend.alloc::<u32>(n + 1)?;
        backend.afsai_place::<T>(row_ptr, n + 1, &mut m_row_ptr, 0)?;
        let mut m_col_idx = backend.alloc::<u32>(a.nnz())?;
        backend.afsai_place::<T>(col_idx, a.nnz(), &mut m_col_idx, 0)?;
        let dm = csr_matrix(n, m_row_ptr, m_col_idx, m_values);
        backend.synchronize()?;
        Ok(Self {
            n,
            storage: Storage::Assembled(Box::new(dm)),
            scaled: Some(scaled),
            scaling,
            times: SetupTimes {
                host_seconds,
                device_seconds: t1.elapsed().as_secs_f64(),
            },
            fingerprint: Some(fingerprint),
            spare: None,
        })
    }

    /// The matrix-free IP of a constant-coefficient stencil (\[Ament10\] eq. (29)): no matrix is
    /// stored. It is not tied to an assembled matrix, so the solvers cannot check that it was
    /// built for theirs; [`IncompletePoisson::matrix_free_for`] checks the stencil against one.
    ///
    /// Errors: [`Error::NotApplicable`] for a non-positive diagonal or a positive neighbour
    /// coefficient; [`Error::InvalidParameter`] for an empty grid or one of 2^31 points or more.
    pub fn matrix_free(stencil: &GridStencil) -> Result<Self> {
        let t0 = Instant::now();
        let not = |reason: String| Error::NotApplicable {
            preconditioner: "ip-matrix-free".into(),
            reason,
        };
        if !(stencil.center > 0.0 && stencil.center.is_finite()) {
            return Err(not(format!(
                "stencil diagonal {} is not positive",
                stencil.center
            )));
        }
        if let Some(a) = stencil.neighbours.iter().find(|a| a.is_nan() || **a > 0.0) {
            return Err(not(format!("neighbour coefficient {a} is not nonpositive")));
        }
        let weights = stencil.neighbours.map(|a| T::from_f64(-a / stencil.center));
        let st = IpStencil {
            dims: stencil.dims,
            weights,
        };
        let n = stencil
            .dims
            .iter()
            .try_fold(1usize, |p, &d| p.checked_mul(d))
            .filter(|&n| n > 0 && n < 1 << 31)
            .ok_or_else(|| {
                Error::param(
                    "grid",
                    format!("grid {:?} is empty or too large", stencil.dims),
                )
            })?;
        Ok(Self {
            n,
            storage: Storage::MatrixFree(st),
            scaled: None,
            scaling: IpScaling::Auto,
            times: SetupTimes {
                host_seconds: t0.elapsed().as_secs_f64(),
                device_seconds: 0.0,
            },
            fingerprint: None,
            spare: None,
        })
    }

    /// [`IncompletePoisson::matrix_free`] after checking that `a` is the matrix of `stencil`
    /// (same size, and each row's entries those of the stencil with the Dirichlet neighbours
    /// dropped): [`Error::NotApplicable`] otherwise. The result is tied to `a`'s fingerprint.
    pub fn matrix_free_for(a: &CsrMatrix<T>, stencil: &GridStencil) -> Result<Self> {
        let t0 = Instant::now();
        let mut m = Self::matrix_free(stencil)?;
        if let Some(reason) = stencil_mismatch(a, stencil) {
            return Err(Error::NotApplicable {
                preconditioner: "ip-matrix-free".into(),
                reason,
            });
        }
        m.fingerprint = Some(a.fingerprint());
        m.times.host_seconds = t0.elapsed().as_secs_f64();
        Ok(m)
    }

    /// [`IncompletePoisson::matrix_free`] after checking on the device that the solver's CSR
    /// matrix `a` is the matrix of `stencil` (kernel `ip_stencil_check`: one pass over the
    /// matrix, one reduction); the result is tied to `a`'s fingerprint, so a solver refuses any
    /// other matrix. [`Error::NotApplicable`] when `a` differs from the stencil (the count of
    /// differing rows is given) or is not held in CSR ([`IncompletePoisson::matrix_free_for`]
    /// checks a host matrix instead).
    pub fn matrix_free_on<B: Backend>(
        backend: &B,
        a: &DeviceMatrix<T>,
        stencil: &GridStencil,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let mut m = Self::matrix_free(stencil)?;
        let not = |reason: String| Error::NotApplicable {
            preconditioner: "ip-matrix-free".into(),
            reason,
        };
        if a.n_rows() != m.n || a.n_cols() != m.n {
            return Err(not(format!(
                "the matrix is {} x {}, the grid has {} points",
                a.n_rows(),
                a.n_cols(),
                m.n
            )));
        }
        if !matches!(a.format(), DeviceFormat::Csr { .. }) {
            return Err(not(
                "the device check of the stencil reads a CSR matrix; check the host matrix \
                 (IncompletePoisson::matrix_free_for) instead"
                    .into(),
            ));
        }
        let coefficients = StencilCoefficients {
            dims: stencil.dims,
            center: T::from_f64(stencil.center),
            neighbours: stencil.neighbours.map(T::from_f64),
        };
        let mut partials = backend.partials::<T>(m.n, 1)?;
        backend.ip_stencil_check(&coefficients, a, &mut partials, Slot(0))?;
        let differing = local_count(backend, &partials)?;
        if differing != 0.0 {
            return Err(not(format!(
                "{differing} of the matrix's {} rows differ from the stencil",
                m.n
            )));
        }
        m.fingerprint = Some(a.fingerprint());
        m.times = SetupTimes {
            host_seconds: 0.0,
            device_seconds: t0.elapsed().as_secs_f64(),
        };
        Ok(m)
    }

    /// Whether no matrix is stored.
    pub fn is_matrix_free(&self) -> bool {
        matches!(self.storage, Storage::MatrixFree(_))
    }
}

/// The values of M^-1 (scaled or not) on the pattern of `a`, assembled on the device from its
/// plain CSR copy `ad` after the domain check there (kernels `ip_domain_check`, `ip_assemble`).
fn assemble_on_device<B: Backend, T: Scalar>(
    backend: &B,
    a: &CsrMatrix<T>,
    ad: &DeviceMatrix<T>,
    scaled: bool,
    spare: Option<Buffer<T>>,
) -> Result<Buffer<T>> {
    let not = |reason: String| Error::NotApplicable {
        preconditioner: "ip".into(),
        reason,
    };
    let mut partials = backend.partials::<T>(a.n_rows(), 1)?;
    backend.ip_domain_check(ad, &mut partials, Slot(0))?;
    let outside = local_count(backend, &partials)?;
    if outside != 0.0 {
        return Err(not(assemble::outside_domain(a).unwrap_or_else(|| {
            format!(
                "{outside} rows are outside IP's domain (a symmetric matrix with a positive \
                 diagonal and nonpositive off-diagonal entries)"
            )
        })));
    }
    // (`ip_assemble` writes every entry: a spare needs no clearing.)
    let mut m_values = match spare {
        Some(b) if b.len() == a.nnz() => b,
        _ => backend.alloc::<T>(a.nnz())?,
    };
    backend.ip_assemble(ad, scaled, &mut m_values, &mut partials, Slot(0))?;
    let overflowing = local_count(backend, &partials)?;
    if overflowing != 0.0 {
        return Err(not(format!(
            "the IP entries of {overflowing} rows overflow"
        )));
    }
    Ok(m_values)
}

/// New values of an assembled IP, before they replace the old ones.
enum NewValues<T> {
    /// Assembled on the device, in the kept CSR layout.
    Device(Buffer<T>),
    /// Assembled on the host, to be written in the kept device format.
    Host(CsrMatrix<T>),
}

impl<T: Scalar> IncompletePoisson<T> {
    /// M^-1 of the new values `a` with the kept scaling, on this rank alone: on the device
    /// when M^-1 is held in CSR and `device` is a plain CSR copy of `a` (as at setup), else on
    /// the host.
    fn refresh_local<B: Backend>(
        &self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        scaled: bool,
        spare: Option<Buffer<T>>,
    ) -> Result<NewValues<T>> {
        let plain_csr = |d: &DeviceMatrix<T>| {
            matches!(
                d.format(),
                DeviceFormat::Csr {
                    long_rows: None,
                    row_blocks: None,
                    ..
                }
            )
        };
        match (&self.storage, device) {
            (Storage::Assembled(m), Some(d))
                if plain_csr(m) && plain_csr(d) && d.fingerprint() == a.fingerprint() =>
            {
                assemble_on_device(backend, a, d, scaled, spare).map(NewValues::Device)
            }
            _ => ip_checked(a, scaled).map(NewValues::Host),
        }
    }
}

/// The Incomplete Poisson matrix of `a` on the host as the paper prints it (eq. (15)):
/// M^-1 = (I - L D^-1)(I - D^-1 L^T) on the pattern of `a` (what [`IncompletePoisson::new`]
/// uploads for a constant diagonal), with the same errors.
pub fn incomplete_poisson_matrix<T: Scalar>(a: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
    ip_checked(a, false)
}

/// The Incomplete Poisson matrix of D^-1/2 A D^-1/2 scaled back, on the host:
/// M^-1 = (I - D^-1 L) D^-1 (I - L^T D^-1) on the pattern of `a` ([`IpScaling::Symmetric`];
/// what [`IncompletePoisson::new`] uploads where the diagonal varies), with the same errors.
pub fn incomplete_poisson_matrix_scaled<T: Scalar>(a: &CsrMatrix<T>) -> Result<CsrMatrix<T>> {
    ip_checked(a, true)
}

/// The domain check, then the IP matrix of `a` (scaled or not).
fn ip_checked<T: Scalar>(a: &CsrMatrix<T>, scaled: bool) -> Result<CsrMatrix<T>> {
    if let Some(reason) = assemble::outside_domain(a) {
        return Err(Error::NotApplicable {
            preconditioner: "ip".into(),
            reason,
        });
    }
    assemble::ip_matrix(a, scaled)
}

/// The sum of slot 0's partials of a count kernel, read on this process only: under MPI
/// `finish` would be a collective, which ranks that take different setup paths must not enter
/// (each rank checks its own rows; the caller agrees on the outcome).
fn local_count<B: Backend, T: Scalar>(backend: &B, partials: &Partials<T>) -> Result<f64> {
    let g = partials.groups();
    Ok(backend.download(partials.buffer())?[..g]
        .iter()
        .map(|v| v.to_f64())
        .sum())
}

/// Why `a` is not the matrix of `stencil`, or `None`.
fn stencil_mismatch<T: Scalar>(a: &CsrMatrix<T>, s: &GridStencil) -> Option<String> {
    let [nx, ny, nz] = s.dims;
    let n = nx * ny * nz;
    if a.n_rows() != n || a.n_cols() != n {
        return Some(format!(
            "the matrix is {} x {}, the grid has {n} points",
            a.n_rows(),
            a.n_cols()
        ));
    }
    let plane = nx * ny;
    let [ax, ay, az] = s.neighbours.map(T::from_f64);
    let d = T::from_f64(s.center);
    use rayon::prelude::*;
    (0..n).into_par_iter().find_map_first(|i| {
        let (zc, yc, xc) = (i / plane, (i % plane) / nx, i % nx);
        let mut want: Vec<(usize, T)> = Vec::with_capacity(7);
        let mut push = |present: bool, j: usize, v: T| {
            if present && v != T::zero() {
                want.push((j, v));
            }
        };
        push(zc > 0, i.wrapping_sub(plane), az);
        push(yc > 0, i.wrapping_sub(nx), ay);
        push(xc > 0, i.wrapping_sub(1), ax);
        push(true, i, d);
        push(xc + 1 < nx, i + 1, ax);
        push(yc + 1 < ny, i + nx, ay);
        push(zc + 1 < nz, i + plane, az);
        let (cols, vals) = a.row(i);
        let got = cols.iter().copied().zip(vals.iter().copied());
        (!got.eq(want.iter().copied())).then(|| format!("row {i} differs from the stencil"))
    })
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for IncompletePoisson<T> {
    fn name(&self) -> &'static str {
        match self.storage {
            Storage::Assembled(_) => "ip",
            Storage::MatrixFree(_) => "ip-matrix-free",
        }
    }
    fn n(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        match &self.storage {
            Storage::Assembled(m) => backend.spmv(m, r, z),
            Storage::MatrixFree(st) => backend.ip_stencil(st, r, z),
        }
    }
    fn apply_dot(
        &self,
        backend: &B,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        match &self.storage {
            Storage::Assembled(m) => {
                let dots = SpmvDots {
                    yy: None,
                    with: [Some((r, slot)), None],
                };
                backend.spmv_dots(m, r, z, dots, partials)
            }
            Storage::MatrixFree(st) => backend.ip_stencil_dot(st, r, z, partials, slot),
        }
    }
    fn launches_per_apply(&self) -> usize {
        1
    }
    fn fuses_dot(&self) -> bool {
        true
    }
    fn fuses_pcg_update(&self) -> bool {
        self.is_matrix_free()
    }
    fn quad_dot(
        &self,
        backend: &B,
        v: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        match &self.storage {
            Storage::MatrixFree(st) => backend.ip_stencil_quad(st, v, partials, slot),
            Storage::Assembled(_) => Err(no_fused_step("ip")),
        }
    }
    fn pcg_update(
        &self,
        backend: &B,
        vectors: PcgStepVectors<'_, T>,
        partials: &mut Partials<T>,
        slots: (Slot, Slot),
    ) -> Result<()> {
        match &self.storage {
            Storage::MatrixFree(st) => backend.ip_pcg_update(st, vectors, partials, slots),
            Storage::Assembled(_) => Err(no_fused_step("ip")),
        }
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        match &self.storage {
            Storage::Assembled(m) => {
                m.device_bytes() + self.spare.as_ref().map_or(0, |b| b.bytes())
            }
            Storage::MatrixFree(_) => 0,
        }
    }
    fn params(&self) -> serde_json::Value {
        match &self.storage {
            Storage::Assembled(m) => {
                let (scaled, why) = self.scaled.unwrap_or((false, ""));
                serde_json::json!({
                    "format": format!("{:?}", m.format_kind()),
                    "scaling": if scaled { "symmetric" } else { "none" },
                    "scaling_reason": why,
                })
            }
            Storage::MatrixFree(st) => serde_json::json!({
                "grid": st.dims,
                "weights": st.weights.map(|w| w.to_f64()),
            }),
        }
    }
    fn built_for(&self) -> Option<u64> {
        self.fingerprint
    }
    /// The assembled IP: M^-1 of the new values on the kept pattern (A's), the scaling
    /// asked for resolved again for them ([`IpScaling::Auto`] looks at the diagonal), assembled where it was (device or host) and written over the old
    /// values once it is complete. The matrix-free IP is its stencil's: new values are
    /// [`Error::NotApplicable`] (unless they are the old ones).
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<super::ValuesRefresh> {
        super::check_same_size("ip", self.n, a)?;
        let t0 = Instant::now();
        let Some(_) = self.scaled else {
            if self.fingerprint == Some(a.fingerprint()) {
                return Ok(super::ValuesRefresh::new(
                    SetupTimes::default(),
                    "the stencil",
                ));
            }
            return Err(Error::NotApplicable {
                preconditioner: "ip-matrix-free".into(),
                reason: "the matrix-free IP is that of a fixed stencil and cannot take new \
                         values (use --precond ip)"
                    .into(),
            });
        };
        let resolved = self.scaling.resolve(a);
        let scaled = resolved.0;
        let spare = self.spare.take();
        let local = self.refresh_local(backend, a, device, scaled, spare);
        let new = collective_result(backend, "the incomplete Poisson refresh", local)?;
        // The assembly's time is the device's when it ran there.
        let (host_seconds, assembly_on_device) = match new {
            NewValues::Device(_) => (0.0, t0.elapsed().as_secs_f64()),
            NewValues::Host(_) => (t0.elapsed().as_secs_f64(), 0.0),
        };
        let t1 = Instant::now();
        let Storage::Assembled(m) = &mut self.storage else {
            return Err(Error::PreconditionerSetup("IP: no assembled matrix".into()));
        };
        match new {
            NewValues::Device(mut values) => {
                std::mem::swap(m.values_mut(), &mut values);
                self.spare = Some(values);
            }
            NewValues::Host(host) => m.update_values(backend, &host)?,
        }
        backend.synchronize()?;
        self.fingerprint = Some(a.fingerprint());
        self.scaled = Some(resolved);
        Ok(super::ValuesRefresh::new(
            SetupTimes {
                host_seconds,
                device_seconds: assembly_on_device + t1.elapsed().as_secs_f64(),
            },
            "A's pattern",
        ))
    }
}
