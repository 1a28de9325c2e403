//! The identity preconditioner, M = I.

use super::Preconditioner;
use crate::backend::{Backend, Buffer};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// z = r. Solvers given `None` skip the preconditioner entirely (no copy, the unpreconditioned
/// kernels of the paper); `Identity` is for code that always wants a preconditioner object,
/// e.g. to compare against another one through the same code path.
///
/// ```
/// use pipekrylov::precond::{Identity, Preconditioner};
/// use pipekrylov::backend::{host::HostBackend, VectorOps};
/// let host = HostBackend::new();
/// let r = host.upload(&[1.0f64, 2.0]).unwrap();
/// let mut z = host.alloc(2).unwrap();
/// Preconditioner::<HostBackend, f64>::apply(&Identity::new(2), &host, &r, &mut z).unwrap();
/// assert_eq!(host.download(&z).unwrap(), vec![1.0, 2.0]);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Identity {
    n: usize,
}

impl Identity {
    /// The identity for `n` unknowns.
    pub fn new(n: usize) -> Self {
        Self { n }
    }
}

impl<B: Backend, T: Scalar> Preconditioner<B, T> for Identity {
    fn name(&self) -> &'static str {
        "identity"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn apply(&self, backend: &B, r: &Buffer<T>, z: &mut Buffer<T>) -> Result<()> {
        if r.len() != self.n {
            return Err(Error::dims("identity: r length", self.n, r.len()));
        }
        backend.copy(r, z)
    }
    fn launches_per_apply(&self) -> usize {
        1
    }
    fn setup_times(&self) -> super::SetupTimes {
        super::SetupTimes::default()
    }
    fn memory_bytes(&self) -> usize {
        0
    }
    /// Nothing to refresh.
    fn update_values(
        &mut self,
        _backend: &B,
        a: &crate::matrix::CsrMatrix<T>,
        _device: Option<&crate::backend::DeviceMatrix<T>>,
    ) -> Result<super::ValuesRefresh> {
        super::check_same_size("none", self.n, a)?;
        Ok(super::ValuesRefresh::new(super::SetupTimes::default(), ""))
    }
}
