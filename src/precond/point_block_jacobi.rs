//! Point-block Jacobi: M = blockdiag(A_II), the s x s diagonal blocks inverted at setup.

use super::bilu0::factor_singular;
use super::block_dense::invert;
use super::{Preconditioner, SetupTimes};
use crate::backend::{collective_result, Backend, Buffer, MAX_BLOCK_SIZE};
use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::time::Instant;

/// Point-block Jacobi, z_I = A_II^-1 r_I for every block row I, applied by the
/// `block_diag_scale` kernel (one launch).
///
/// ```
/// use pipekrylov::backend::host::HostBackend;
/// use pipekrylov::matrix::CsrMatrix;
/// use pipekrylov::precond::PointBlockJacobi;
/// let a = CsrMatrix::<f64>::identity(6);
/// let m = PointBlockJacobi::new(&HostBackend::new(), &a, 3).unwrap();
/// # let _ = m;
/// ```
#[derive(Debug)]
pub struct PointBlockJacobi<T> {
    block_size: usize,
    inv_blocks: Buffer<T>,
    times: SetupTimes,
    fingerprint: u64,
}

impl<T: Scalar> PointBlockJacobi<T> {
    /// Invert the `block_size` x `block_size` diagonal blocks of `a`. Errors:
    /// [`Error::InvalidParameter`] for a block size outside 1..=8 or one that does not divide
    /// n; [`Error::SingularPivot`] naming the first singular (or non-finite) block.
    /// With a distributed backend a failure on any rank is an error on every rank.
    pub fn new<B: Backend>(backend: &B, a: &CsrMatrix<T>, block_size: usize) -> Result<Self> {
        let local = Self::build_local(backend, a, block_size);
        collective_result(backend, "the point-block Jacobi setup", local)
    }

    /// The setup on this rank alone.
    fn build_local<B: Backend>(backend: &B, a: &CsrMatrix<T>, block_size: usize) -> Result<Self> {
        let t0 = Instant::now();
        let s = block_size;
        if !a.is_square() {
            return Err(Error::dims(
                "point-block Jacobi: square matrix",
                a.n_rows(),
                a.n_cols(),
            ));
        }
        if s == 0 || s > MAX_BLOCK_SIZE || a.n_rows() % s != 0 {
            return Err(Error::param(
                "block_size",
                format!(
                    "block size {s} must be in 1..={MAX_BLOCK_SIZE} and divide n = {}",
                    a.n_rows()
                ),
            ));
        }
        let nb = a.n_rows() / s;
        let mut inv = vec![T::zero(); nb * s * s];
        // Every block row gathered and inverted in parallel; the first singular block (in row
        // order) is the error, whatever the thread count.
        let failure = inv
            .par_chunks_mut(s * s)
            .enumerate()
            .filter_map(|(br, out)| {
                let mut block = [T::zero(); MAX_BLOCK_SIZE * MAX_BLOCK_SIZE];
                let block = &mut block[..s * s];
                for i in 0..s {
                    let (cols, vals) = a.row(br * s + i);
                    for (&c, &v) in cols.iter().zip(vals) {
                        if c / s == br {
                            block[(c % s) * s + i] += v;
                        }
                    }
                }
                match invert(block, s) {
                    Ok(bi) => {
                        out.copy_from_slice(&bi[..s * s]);
                        None
                    }
                    Err(why) => Some((br, why)),
                }
            })
            .min_by_key(|&(br, _)| br);
        if let Some((br, why)) = failure {
            return Err(factor_singular("point-block-jacobi", br, why));
        }
        let fingerprint = a.fingerprint();
        let host_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let inv_blocks = backend.upload(&inv)?;
        backend.synchronize()?;
        Ok(Self {
            block_size: s,
            inv_blocks,
            times: SetupTimes {
                host_seconds,
                device_seconds: t1.elapsed().as_secs_f64(),
            },
            fingerprint,
        })
    }
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for PointBlockJacobi<T> {
    fn name(&self) -> &'static str {
        "point-block-jacobi"
    }
    fn n(&self) -> usize {
        self.inv_blocks.len() / self.block_size
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        backend.block_diag_scale(self.block_size, &self.inv_blocks, r, z)
    }
    fn launches_per_apply(&self) -> usize {
        1
    }
    fn setup_times(&self) -> SetupTimes {
        self.times
    }
    fn memory_bytes(&self) -> usize {
        self.inv_blocks.bytes()
    }
    fn params(&self) -> serde_json::Value {
        serde_json::json!({ "block_size": self.block_size })
    }
    fn built_for(&self) -> Option<u64> {
        Some(self.fingerprint)
    }
    fn refresh_reads_device_matrix(&self) -> bool {
        false
    }
    /// No symbolic phase: the new diagonal blocks inverted, in place of the old ones.
    fn update_values(
        &mut self,
        backend: &B,
        a: &CsrMatrix<T>,
        _device: Option<&crate::backend::DeviceMatrix<T>>,
    ) -> Result<super::ValuesRefresh> {
        super::check_same_size("point-block-jacobi", Preconditioner::<B, T>::n(self), a)?;
        *self = Self::new(backend, a, self.block_size)?;
        Ok(super::ValuesRefresh::new(self.times, ""))
    }
}
