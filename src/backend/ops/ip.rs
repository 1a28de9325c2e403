//! The operands of the matrix-free Incomplete Poisson kernels (`kernels/ip.kc`): the
//! stencil, the stencil coefficients `ip_stencil_check` compares a matrix with, the PCG step's
//! vectors, and the argument checks of the `ip_*` methods of [`super::PrecondOps`].

use crate::backend::buffer::{check_len, Buffer};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{DeviceFormat, DeviceMatrix};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// The Incomplete Poisson preconditioner of a constant-coefficient 5/7-point stencil on an
/// `nx x ny x nz` grid, applied matrix-free by the `ip_stencil` kernels: only the three
/// off-diagonal weights w = -a_axis / a_center are stored (\[Ament10\] eq. (29), see `ip.cl`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IpStencil<T> {
    /// Grid points per axis (x fastest).
    pub dims: [usize; 3],
    /// Weights w_x, w_y, w_z of the x, y and z neighbours.
    pub weights: [T; 3],
}

impl<T> IpStencil<T> {
    /// Number of unknowns nx * ny * nz.
    pub fn n(&self) -> usize {
        self.dims.iter().product()
    }
}

/// The coefficients of a constant-coefficient 5/7-point stencil matrix on an `nx x ny x nz`
/// grid (Dirichlet neighbours eliminated, zero coefficients not stored), which the
/// `ip_stencil_check` kernel compares a CSR matrix with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StencilCoefficients<T> {
    /// Grid points per axis (x fastest).
    pub dims: [usize; 3],
    /// The diagonal entry.
    pub center: T,
    /// The x, y and z neighbour coefficients.
    pub neighbours: [T; 3],
}

/// The PCG coefficients and vectors of
/// [`PrecondOps::ip_pcg_update`](super::PrecondOps::ip_pcg_update): x += alpha p,
/// r_next = r - alpha Ap, z = M^-1 r_next, p = z + beta p.
#[derive(Debug)]
pub struct PcgStepVectors<'a, T> {
    /// Step length alpha.
    pub alpha: T,
    /// Direction coefficient beta.
    pub beta: T,
    /// The iterate, updated in place.
    pub x: &'a mut Buffer<T>,
    /// The residual before the step (read at the neighbours of every row).
    pub r: &'a Buffer<T>,
    /// The residual after the step (a buffer other than `r`).
    pub r_next: &'a mut Buffer<T>,
    /// The search direction, updated in place.
    pub p: &'a mut Buffer<T>,
    /// A p.
    pub ap: &'a Buffer<T>,
}

/// Check the `ip_stencil` kernels: the grid fits in 32-bit indices, r and z hold nx*ny*nz.
pub(crate) fn check_ip_stencil<T: Scalar>(
    st: &IpStencil<T>,
    r: &Buffer<T>,
    z: &Buffer<T>,
) -> Result<()> {
    let n = check_ip_grid(st.dims)?;
    check_len("ip_stencil: r length", r, n)?;
    check_len("ip_stencil: z length", z, n)
}

/// Check `ip_stencil_quad`: the grid, v of its length.
pub(crate) fn check_ip_quad<T: Scalar>(st: &IpStencil<T>, v: &Buffer<T>) -> Result<()> {
    check_len("ip_stencil_quad: v length", v, check_ip_grid(st.dims)?)
}

/// The number of points of an `ip_stencil` grid, checked to be positive and below 2^31 (the
/// kernels' chunk bounds, up to n plus the number of groups, stay below 2^32).
pub(crate) fn check_ip_grid(dims: [usize; 3]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n < 1 << 31 && dims.iter().all(|&d| d > 0))
        .ok_or_else(|| {
            Error::param(
                "grid",
                format!("ip stencil grid {dims:?} is empty or has 2^31 points or more"),
            )
        })
}

/// Check `ip_pcg_update`: the grid, every vector of its length, the slots.
pub(crate) fn check_ip_pcg_update<T: Scalar>(
    st: &IpStencil<T>,
    v: &PcgStepVectors<'_, T>,
    partials: &Partials<T>,
    slots: (Slot, Slot),
) -> Result<usize> {
    let n = check_ip_grid(st.dims)?;
    check_len("ip_pcg_update: x length", v.x, n)?;
    check_len("ip_pcg_update: r length", v.r, n)?;
    check_len("ip_pcg_update: r_next length", v.r_next, n)?;
    check_len("ip_pcg_update: p length", v.p, n)?;
    check_len("ip_pcg_update: ap length", v.ap, n)?;
    if slots.0 == slots.1 {
        return Err(Error::param(
            "ip_pcg_update",
            "the <r, r> and <r, z> slots must differ",
        ));
    }
    partials.check(slots.0, n)?;
    partials.check(slots.1, n)?;
    Ok(n)
}

/// Check `ip_stencil_check`: a CSR matrix of the grid's size, the slot. Returns the CSR arrays
/// (row pointers, column indices, values) and n.
#[allow(clippy::type_complexity)]
pub(crate) fn check_ip_stencil_check<'a, T: Scalar>(
    st: &StencilCoefficients<T>,
    a: &'a DeviceMatrix<T>,
    partials: &Partials<T>,
    slot: Slot,
) -> Result<(&'a Buffer<u32>, &'a Buffer<u32>, &'a Buffer<T>, usize)> {
    let n = check_ip_grid(st.dims)?;
    if a.n_rows() != n || a.n_cols() != n {
        return Err(Error::param(
            "ip_stencil_check",
            format!(
                "the matrix is {} x {}, the grid has {n} points",
                a.n_rows(),
                a.n_cols()
            ),
        ));
    }
    partials.check(slot, n)?;
    match a.format() {
        DeviceFormat::Csr {
            row_ptr,
            col_idx,
            values,
            ..
        } => Ok((row_ptr, col_idx, values, n)),
        _ => Err(Error::param(
            "ip_stencil_check",
            "the stencil check reads CSR matrices only",
        )),
    }
}
