//! The argument checks of the Incomplete Poisson assembly kernels (`kernels/ip_assemble.kc`):
//! [`super::PrecondOps::ip_domain_check`] and [`super::PrecondOps::ip_assemble`].

use crate::backend::buffer::{check_len, Buffer};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{DeviceFormat, DeviceMatrix};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Check the operands of `ip_domain_check` / `ip_assemble` (`m_values`: one per entry of A);
/// A's CSR arrays and n.
#[allow(clippy::type_complexity)]
pub(crate) fn check_ip_assemble<'a, T: Scalar>(
    a: &'a DeviceMatrix<T>,
    m_values: Option<&Buffer<T>>,
    partials: &Partials<T>,
    slot: Slot,
) -> Result<(&'a Buffer<u32>, &'a Buffer<u32>, &'a Buffer<T>, usize)> {
    let n = a.n_rows();
    if a.n_cols() != n {
        return Err(Error::dims("ip_assemble: square matrix", n, a.n_cols()));
    }
    partials.check(slot, n)?;
    if let Some(m) = m_values {
        check_len("ip_assemble: M values (one per entry of A)", m, a.nnz())?;
    }
    match a.format() {
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } if a.ranks() == 1 => Ok((row_ptr, col_idx, values, n)),
        _ => Err(Error::param(
            "ip_assemble",
            "the IP assembly reads A in CSR on one rank",
        )),
    }
}
