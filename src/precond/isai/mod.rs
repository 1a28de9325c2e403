//! Block incomplete sparse approximate inverse (block-ISAI) of the BILU(0) factors, \[Ma21b\]
//! Algorithm 1: N_L ~ L^-1 and N_U ~ U^-1 on the block patterns of (I + |L|)^k and
//! (I + |U|)^k, each block column from one small block triangular system gathered from the
//! factor, solved on the device (`isai_solve`); applied as z = N_U (N_L r), two BSpMVs.

mod pattern;

pub(crate) use pattern::{layout_of, power_rows};
pub use pattern::{power_pattern, InverseLayout};

use super::bilu0::{check_options, factor, factor_on, split_pattern, upload_factors, SplitPattern};
use super::device_a::DeviceA;
use super::{Bilu0Options, Factorization, Preconditioner, SetupTimes, TriangularSolve};
use crate::backend::{
    collective_result, Backend, BlockTriangular, Buffer, DeviceFormat, DeviceMatrix,
    InversePattern, Partials, Slot, SpmvDots,
};
use crate::error::{Error, Result};
use crate::matrix::{BsrMatrix, CsrMatrix};
use crate::scalar::Scalar;
use std::sync::Mutex;
use std::time::Instant;

/// Largest pattern level k of [`BlockIsai`].
pub const MAX_ISAI_LEVEL: usize = 3;

/// Where block-ISAI's setup time went (\[Ma21b\] Figures 4, 6, 8, 11), in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct IsaiSetupSplit {
    /// BILU(0) factorization (host).
    pub factor: f64,
    /// Patterns of (I + |L|)^k and (I + |U|)^k and their block CSC/CSR layouts (host).
    pub pattern: f64,
    /// Uploading the factors and patterns (device).
    pub upload: f64,
    /// The gathered triangular systems, solved by `isai_solve` straight into block CSR
    /// (device, synchronized; no separate transpose is needed).
    pub solve: f64,
}

/// Block-ISAI preconditioner built from BILU(0): z = N_U (N_L r).
///
/// ```
/// use pipekrylov::backend::host::HostBackend;
/// use pipekrylov::matrix::generate::Generator;
/// use pipekrylov::precond::{BlockIsai, Preconditioner};
/// let a = Generator::ConvDiff3d.generate_with_param::<f64>(6).unwrap().matrix;
/// let host = HostBackend::new();
/// let m = BlockIsai::new(&host, &a, 2, 2).unwrap();
/// // Two block SpMVs per application.
/// assert_eq!(Preconditioner::<HostBackend, f64>::launches_per_apply(&m), 2);
/// ```
#[derive(Debug)]
pub struct BlockIsai<T> {
    block_size: usize,
    level: usize,
    factorization: Factorization,
    n: usize,
    n_l: DeviceMatrix<T>,
    n_u: DeviceMatrix<T>,
    work: Mutex<Buffer<T>>,
    times: SetupTimes,
    split: IsaiSetupSplit,
    fingerprint: u64,
    /// The patterns of N_L and N_U (host; kept for [`Preconditioner::update_values`]).
    layouts: Box<(InverseLayout, InverseLayout)>,
    /// What the first values refresh with host factors keeps for the next ones.
    kept: Option<Box<KeptForRefresh<T>>>,
}

/// What a values refresh with host factors ([`Factorization::Host`]) keeps after the first one,
/// so that the later ones factor and write values only: BILU(0)'s symbolic part (host), the
/// factors' and the inverse patterns' arrays (device).
#[derive(Debug)]
struct KeptForRefresh<T> {
    symbolic: factor::BiluSymbolic,
    l: BlockTriangular<T>,
    u: BlockTriangular<T>,
    pat_l: InversePattern,
    pat_u: InversePattern,
}

impl<T: Scalar> KeptForRefresh<T> {
    fn device_bytes(&self) -> usize {
        let tri = |t: &BlockTriangular<T>| {
            t.row_ptr.bytes()
                + t.col_idx.bytes()
                + t.values.bytes()
                + t.inv_diag.as_ref().map_or(0, |d| d.bytes())
        };
        tri(&self.l) + tri(&self.u) + self.pat_l.bytes() + self.pat_u.bytes()
    }
}

impl<T: Scalar> BlockIsai<T> {
    /// Factor `a` by BILU(0) with blocks of `block_size` (on the host), build the patterns of level
    /// `level` (1..=3, host) and solve the gathered systems on `backend`.
    ///
    /// Errors: [`Error::InvalidParameter`] for a block size outside 1..=8 or not dividing n,
    /// or a level outside 1..=3; [`Error::SingularPivot`] from the factorization, or naming
    /// the first block column of N_L or N_U whose solution is not finite (overflow in a
    /// gathered system); device errors.
    pub fn new<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        block_size: usize,
        level: usize,
    ) -> Result<Self> {
        Self::new_on(backend, a, None, block_size, level, Factorization::Host)
    }

    /// [`BlockIsai::new`] with the BILU(0) factors computed as `factorization` says: on the
    /// host, or on the backend by fixed-point sweeps ([`Factorization::Sweeps`]) from the
    /// solver's CSR copy of A (`device`, when it is one of `a`; else an upload of its own).
    pub fn new_on<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        block_size: usize,
        level: usize,
        factorization: Factorization,
    ) -> Result<Self> {
        let local = Self::new_on_local(backend, a, device, block_size, level, factorization);
        collective_result(backend, "the block-ISAI setup", local)
    }

    /// The setup on this rank alone.
    fn new_on_local<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        block_size: usize,
        level: usize,
        factorization: Factorization,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let opts = Bilu0Options {
            block_size,
            solve: TriangularSolve::Exact,
            ..Bilu0Options::default()
        };
        check_options(a, &opts)?;
        if !(1..=MAX_ISAI_LEVEL).contains(&level) {
            return Err(Error::param(
                "isai_level",
                format!("level {level} is outside 1..={MAX_ISAI_LEVEL}"),
            ));
        }
        let s = block_size;
        let fingerprint = a.fingerprint();
        let (l, u, pattern, t_factor_device, t_factor_upload) =
            Self::factor(backend, a, device, s, factorization)?;
        // The factorization (host part and device part), without uploads of host factors.
        let t_factor = t0.elapsed().as_secs_f64() - t_factor_upload;

        let t1 = Instant::now();
        // The two patterns are independent: built side by side (each is parallel inside, but
        // its CSC transpose is one pass).
        let (lay_l, lay_u) = rayon::join(
            || power_pattern(&pattern.l_row_ptr, &pattern.l_col_idx, level),
            || power_pattern(&pattern.u_row_ptr, &pattern.u_col_idx, level),
        );
        let (lay_l, lay_u) = (lay_l?, lay_u?);
        let t_pattern = t1.elapsed().as_secs_f64();

        let work = backend.alloc(a.n_rows())?;
        let ((vals_l, vals_u), t_pattern_upload, t_solve) =
            Self::inverses_for(backend, &l, &u, &lay_l, &lay_u, s)?;
        let t_upload = t_factor_upload + t_pattern_upload;

        let t3 = Instant::now();
        let n = a.n_rows();
        let n_l = bsr_matrix(backend, n, s, &lay_l, vals_l)?;
        let n_u = bsr_matrix(backend, n, s, &lay_u, vals_u)?;
        let t_upload = t_upload + t3.elapsed().as_secs_f64();
        Ok(Self {
            block_size: s,
            level,
            factorization,
            n,
            n_l,
            n_u,
            work: Mutex::new(work),
            times: SetupTimes {
                host_seconds: t_factor - t_factor_device + t_pattern,
                device_seconds: t_factor_device + t_upload + t_solve,
            },
            split: IsaiSetupSplit {
                factor: t_factor,
                pattern: t_pattern,
                upload: t_upload,
                solve: t_solve,
            },
            fingerprint,
            layouts: Box::new((lay_l, lay_u)),
            kept: None,
        })
    }

    /// The BILU(0) factors of `a` as `factorization` says, with their pattern, the seconds of
    /// a device factorization and those of uploading host factors.
    #[allow(clippy::type_complexity)]
    fn factor<B: Backend>(
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
        s: usize,
        factorization: Factorization,
    ) -> Result<(
        BlockTriangular<T>,
        BlockTriangular<T>,
        SplitPattern,
        f64,
        f64,
    )> {
        Ok(match factorization {
            Factorization::Host => {
                let f = factor::bilu0_owned(BsrMatrix::from_csr(a, s)?, "isai")?;
                let t = Instant::now();
                let (l, u) = upload_factors(backend, &f)?;
                let t_upload = t.elapsed().as_secs_f64();
                let pattern = SplitPattern {
                    l_row_ptr: f.l_row_ptr,
                    l_col_idx: f.l_col_idx,
                    u_row_ptr: f.u_row_ptr,
                    u_col_idx: f.u_col_idx,
                };
                (l, u, pattern, 0.0, t_upload)
            }
            Factorization::Sweeps(sweeps) => {
                let pattern = split_pattern(a, s, 1, "isai")?;
                let t = Instant::now();
                let a_dev = DeviceA::of(backend, a, device, a.fingerprint())?;
                let (l, u) = factor_on(backend, a_dev.get(), &pattern, s, sweeps, "isai")?;
                backend.synchronize()?;
                (l, u, pattern, t.elapsed().as_secs_f64(), 0.0)
            }
        })
    }

    /// N_L and N_U's values for the factors `l`, `u` on the inverse patterns `lay_l`,
    /// `lay_u`: [\[Ma21b\]] Algorithm 1's batched solves, checked finite; with the seconds of
    /// the pattern uploads and of the solves.
    #[allow(clippy::type_complexity)]
    fn inverses_for<B: Backend>(
        backend: &B,
        l: &BlockTriangular<T>,
        u: &BlockTriangular<T>,
        lay_l: &InverseLayout,
        lay_u: &InverseLayout,
        s: usize,
    ) -> Result<((Buffer<T>, Buffer<T>), f64, f64)> {
        let t2 = Instant::now();
        let (pat_l, pat_u) = upload_patterns(backend, lay_l, lay_u)?;
        backend.synchronize()?;
        let t_upload = t2.elapsed().as_secs_f64();
        let t3 = Instant::now();
        let values = Self::solve_inverses(backend, (l, u), (&pat_l, &pat_u), (lay_l, lay_u), s)?;
        Ok((values, t_upload, t3.elapsed().as_secs_f64()))
    }

    /// N_L and N_U's values for the factors `l`, `u` on the uploaded inverse patterns:
    /// [\[Ma21b\]] Algorithm 1's batched solves, checked finite.
    fn solve_inverses<B: Backend>(
        backend: &B,
        (l, u): (&BlockTriangular<T>, &BlockTriangular<T>),
        (pat_l, pat_u): (&InversePattern, &InversePattern),
        (lay_l, lay_u): (&InverseLayout, &InverseLayout),
        s: usize,
    ) -> Result<(Buffer<T>, Buffer<T>)> {
        let mut vals_l = backend.alloc(lay_l.n_blocks() * s * s)?;
        let mut vals_u = backend.alloc(lay_u.n_blocks() * s * s)?;
        backend.isai_solve(l, false, pat_l, &mut vals_l)?;
        backend.isai_solve(u, true, pat_u, &mut vals_u)?;
        check_finite(backend, &vals_l, lay_l, s, "L")?;
        check_finite(backend, &vals_u, lay_u, s, "U")?;
        Ok((vals_l, vals_u))
    }

    /// A refresh with host factors: the first one factors and uploads as the setup does and
    /// keeps the factors' symbolic part and the device arrays ([`KeptForRefresh`]); the later
    /// ones factor on the kept symbolic part and write the values into the kept arrays. Returns
    /// N_L's and N_U's new values, the seconds of the host factorization, and what to keep (a
    /// first refresh's new state).
    #[allow(clippy::type_complexity)]
    fn refresh_host_factors<B: Backend>(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
    ) -> Result<((Buffer<T>, Buffer<T>), f64, Option<Box<KeptForRefresh<T>>>)> {
        let t0 = Instant::now();
        let s = self.block_size;
        let (lay_l, lay_u) = &*self.layouts;
        let Some(kept) = self.kept.as_mut() else {
            let (f, symbolic) = factor::bilu0_with_symbolic(BsrMatrix::from_csr(a, s)?, "isai")?;
            let t_factor = t0.elapsed().as_secs_f64();
            let (l, u) = upload_factors(backend, &f)?;
            let (pat_l, pat_u) = upload_patterns(backend, lay_l, lay_u)?;
            let values =
                Self::solve_inverses(backend, (&l, &u), (&pat_l, &pat_u), (lay_l, lay_u), s)?;
            let kept = KeptForRefresh {
                symbolic,
                l,
                u,
                pat_l,
                pat_u,
            };
            return Ok((values, t_factor, Some(Box::new(kept))));
        };
        // The blocks of A in block CSR order: for s = 1 the CSR values themselves.
        let blocks = match s {
            1 => a.values().to_vec(),
            _ => BsrMatrix::from_csr(a, s)?.values,
        };
        let (l_values, u_values, inv_diag) = kept.symbolic.refactor(blocks, "isai")?;
        let t_factor = t0.elapsed().as_secs_f64();
        let inv =
            kept.u.inv_diag.as_mut().ok_or_else(|| {
                Error::PreconditionerSetup("block-ISAI: U without a diagonal".into())
            })?;
        backend.write(inv, &inv_diag)?;
        backend.write(&mut kept.l.values, &l_values)?;
        backend.write(&mut kept.u.values, &u_values)?;
        let (l, u, pat_l, pat_u) = (&kept.l, &kept.u, &kept.pat_l, &kept.pat_u);
        let values = Self::solve_inverses(backend, (l, u), (pat_l, pat_u), (lay_l, lay_u), s)?;
        Ok((values, t_factor, None))
    }

    /// The setup time split into factorization, patterns, uploads and the batched solves.
    pub fn setup_split(&self) -> IsaiSetupSplit {
        self.split
    }

    /// Blocks of N_L and N_U.
    pub fn n_blocks(&self) -> (usize, usize) {
        let s2 = self.block_size * self.block_size;
        (self.n_l.nnz() / s2, self.n_u.nnz() / s2)
    }

    /// N_L and N_U as resident on the backend (block CSR).
    pub fn inverses(&self) -> (&DeviceMatrix<T>, &DeviceMatrix<T>) {
        (&self.n_l, &self.n_u)
    }
}

/// The patterns of N_L and N_U uploaded (checked) for the batched solves.
fn upload_patterns<B: Backend>(
    backend: &B,
    lay_l: &InverseLayout,
    lay_u: &InverseLayout,
) -> Result<(InversePattern, InversePattern)> {
    Ok((
        InversePattern::upload(backend, &lay_l.col_ptr, &lay_l.row_idx, &lay_l.dest)?,
        InversePattern::upload(backend, &lay_u.col_ptr, &lay_u.row_idx, &lay_u.dest)?,
    ))
}

/// The inverse's values (written by `isai_solve` into block-CSR order) with its block CSR
/// pattern, as a device matrix for the BSpMV.
fn bsr_matrix<B: Backend, T: Scalar>(
    backend: &B,
    n: usize,
    s: usize,
    lay: &InverseLayout,
    values: Buffer<T>,
) -> Result<DeviceMatrix<T>> {
    Ok(DeviceMatrix {
        n_rows: n,
        n_cols: n,
        nnz: lay.n_blocks() * s * s,
        format: DeviceFormat::Bsr {
            block_size: s,
            row_ptr: backend.upload(&lay.row_ptr)?,
            col_idx: backend.upload(&lay.col_idx)?,
            values,
        },
        fingerprint: 0,
        halo: Default::default(),
        uploaded: false,
    })
}

/// [`Error::SingularPivot`] naming the first block column of the inverse with a non-finite
/// entry ([`super::first_non_finite`]).
fn check_finite<B: Backend, T: Scalar>(
    backend: &B,
    values: &Buffer<T>,
    lay: &InverseLayout,
    s: usize,
    factor: &str,
) -> Result<()> {
    let Some(pos) = super::first_non_finite(backend, values)? else {
        return Ok(());
    };
    let bad_block = pos / (s * s);
    let column = lay.col_idx.get(bad_block).copied().unwrap_or(0) as usize;
    Err(Error::SingularPivot {
        preconditioner: "isai".into(),
        block_row: column,
        detail: format!(
            "block column {column} of the approximate inverse of {factor} is not finite \
             (the gathered triangular system overflows)"
        ),
    })
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for BlockIsai<T> {
    fn name(&self) -> &'static str {
        "isai"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        let mut f = self
            .work
            .lock()
            .map_err(|_| Error::PreconditionerSetup("block-ISAI workspace poisoned".into()))?;
        // Algorithm 1, phase 2: f = N_L r, z = N_U f.
        backend.spmv(&self.n_l, r, &mut f)?;
        backend.spmv(&self.n_u, &f, z)
    }
    fn apply_dot(
        &self,
        backend: &B,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let mut f = self
            .work
            .lock()
            .map_err(|_| Error::PreconditionerSetup("block-ISAI workspace poisoned".into()))?;
        backend.spmv(&self.n_l, r, &mut f)?;
        let dots = SpmvDots {
            yy: None,
            with: [Some((r, slot)), None],
        };
        backend.spmv_dots(&self.n_u, &f, z, dots, partials)
    }
    fn launches_per_apply(&self) -> usize {
        2
    }
    fn fuses_dot(&self) -> bool {
        true
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        self.n_l.device_bytes()
            + self.n_u.device_bytes()
            + self.work.lock().map_or(0, |w| w.bytes())
            + self.kept.as_ref().map_or(0, |k| k.device_bytes())
    }
    fn params(&self) -> serde_json::Value {
        let (bl, bu) = self.n_blocks();
        serde_json::json!({
            "block_size": self.block_size,
            "level": self.level,
            "factorization": self.factorization.to_string(),
            "blocks_l": bl,
            "blocks_u": bu,
            "setup_split_seconds": self.split,
        })
    }
    fn built_for(&self) -> Option<u64> {
        Some(self.fingerprint)
    }
    /// The host factorization reads `a` alone; the device sweeps read the solver's copy.
    fn refresh_reads_device_matrix(&self) -> bool {
        !matches!(self.factorization, Factorization::Host)
    }
    /// The BILU(0) factors of the new values (as at setup: host, or device sweeps), then N_L
    /// and N_U's values on the kept patterns of (I + |L|)^k and (I + |U|)^k by the same
    /// batched solves; the new values replace the old ones once both are computed and finite.
    /// With host factors the first refresh keeps BILU(0)'s symbolic part (host) and the
    /// factors' and patterns' arrays (device, counted in `memory_bytes`): the later refreshes
    /// factor on the kept pattern and write values only.
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        device: Option<&DeviceMatrix<T>>,
    ) -> Result<super::ValuesRefresh> {
        super::check_same_size("isai", self.n, a)?;
        let t0 = Instant::now();
        let s = self.block_size;
        let local = match self.factorization {
            Factorization::Host => self.refresh_host_factors(backend, a),
            Factorization::Sweeps(_) => Self::factor(backend, a, device, s, self.factorization)
                .and_then(|(l, u, _, t_factor_device, _)| {
                    // The host part of the device factorization: A's split pattern.
                    let t_host = t0.elapsed().as_secs_f64() - t_factor_device;
                    let (lay_l, lay_u) = &*self.layouts;
                    Self::inverses_for(backend, &l, &u, lay_l, lay_u, s)
                        .map(|(values, _, _)| (values, t_host, None))
                }),
        };
        let ((mut vals_l, mut vals_u), t_factor_host, kept) =
            collective_result(backend, "the block-ISAI refresh", local)?;
        if kept.is_some() {
            self.kept = kept;
        }
        std::mem::swap(self.n_l.values_mut(), &mut vals_l);
        std::mem::swap(self.n_u.values_mut(), &mut vals_u);
        self.fingerprint = a.fingerprint();
        let total = t0.elapsed().as_secs_f64();
        let (bl, bu) = self.n_blocks();
        Ok(super::ValuesRefresh::new(
            // Device: the device factorization or the host factors' upload, the patterns'
            // upload and the batched solves.
            SetupTimes {
                host_seconds: t_factor_host,
                device_seconds: total - t_factor_host,
            },
            format!(
                "the patterns of N_L and N_U (level {}, {bl} + {bu} blocks){}",
                self.level,
                match self.kept {
                    Some(_) =>
                        "; BILU(0)'s symbolic part and the device arrays of L, U and the \
                                patterns, kept since the first refresh",
                    None => "",
                }
            ),
        ))
    }
}
