//! The launches of the Incomplete Poisson kernels (`kernels/ip.kc`, `ip_assemble.kc`).

// The launches take what their kernels take.
#![allow(clippy::too_many_arguments)]

use super::buf;
use crate::backend::buffer::Buffer;
use crate::backend::launch::{GpuRuntime, KernelArg};
use crate::backend::ops::ip::{
    check_ip_pcg_update, check_ip_quad, check_ip_stencil, check_ip_stencil_check,
};
use crate::backend::ops::ip_assemble::check_ip_assemble;
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{DeviceMatrix, IpStencil, PcgStepVectors, StencilCoefficients};
use crate::error::Result;
use crate::scalar::Scalar;

/// Kernel `ip_domain_check`.
pub(crate) fn ip_domain_check<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let (row_ptr, col_idx, values, n) = check_ip_assemble(a, None, partials, slot)?;
    let args = [
        KernelArg::len("vector length", n)?,
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: ip_domain_check(n, row_ptr, col_idx, values, partials, slot): a is a square
    // CSR matrix validated at upload (row pointers ascending inside the arrays, columns
    // below n), the slot is inside the partials (checked).
    unsafe { rt.launch::<T>(Kernel::IpDomainCheck, partials.groups(), &args) }
}

/// Kernel `ip_assemble`.
pub(crate) fn ip_assemble<T: Scalar>(
    rt: &GpuRuntime<'_>,
    a: &DeviceMatrix<T>,
    scaled: bool,
    m_values: &mut Buffer<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let (row_ptr, col_idx, values, n) = check_ip_assemble(a, Some(m_values), partials, slot)?;
    let args = [
        KernelArg::len("vector length", n)?,
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        buf(m_values),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
        KernelArg::index("scaled", usize::from(scaled))?,
    ];
    // SAFETY: ip_assemble(n, row_ptr, col_idx, values, m_values, partials, slot, scaled): as
    // ip_domain_check, and m_values holds one value per entry of A (checked). A row without
    // its diagonal only gives a wrong value (the search returns the row's end, inside the
    // arrays for every row but the last, where it is the array's end: the caller runs
    // ip_domain_check first).
    unsafe { rt.launch::<T>(Kernel::IpAssemble, partials.groups(), &args) }
}

/// Kernel `ip_stencil`.
pub(crate) fn ip_stencil<T: Scalar>(
    rt: &GpuRuntime<'_>,
    st: &IpStencil<T>,
    r: &Buffer<T>,
    z: &mut Buffer<T>,
) -> Result<()> {
    check_ip_stencil(st, r, z)?;
    let [nx, ny, nz, wx, wy, wz] = ip_args(st);
    let args = [nx, ny, nz, wx, wy, wz, buf(r), buf(z)];
    // SAFETY: ip_stencil(nx, ny, nz, wx, wy, wz, r, z): r and z hold nx*ny*nz < 2^31
    // elements (checked).
    unsafe { rt.launch::<T>(Kernel::IpStencil, rt.elementwise_groups(r.len()), &args) }
}

/// Kernel `ip_stencil_dot`.
pub(crate) fn ip_stencil_dot<T: Scalar>(
    rt: &GpuRuntime<'_>,
    st: &IpStencil<T>,
    r: &Buffer<T>,
    z: &mut Buffer<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    check_ip_stencil(st, r, z)?;
    partials.check(slot, r.len())?;
    let [nx, ny, nz, wx, wy, wz] = ip_args(st);
    let args = [
        nx,
        ny,
        nz,
        wx,
        wy,
        wz,
        buf(r),
        buf(z),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: ip_stencil_dot(nx, ny, nz, wx, wy, wz, r, z, partials, slot): r and z hold
    // nx*ny*nz < 2^31 elements, the slot is inside the partials (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::IpStencilDot, partials.groups(), &args) }
}

/// Kernel `ip_stencil_quad`.
pub(crate) fn ip_stencil_quad<T: Scalar>(
    rt: &GpuRuntime<'_>,
    st: &IpStencil<T>,
    v: &Buffer<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    check_ip_quad(st, v)?;
    partials.check(slot, v.len())?;
    let [nx, ny, nz, wx, wy, wz] = ip_args(st);
    let args = [
        nx,
        ny,
        nz,
        wx,
        wy,
        wz,
        buf(v),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: ip_stencil_quad(nx, ny, nz, wx, wy, wz, v, partials, slot): v holds
    // nx*ny*nz < 2^31 elements, the slot is inside the partials (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::IpStencilQuad, partials.groups(), &args) }
}

/// Kernel `ip_pcg_update`.
pub(crate) fn ip_pcg_update<T: Scalar>(
    rt: &GpuRuntime<'_>,
    st: &IpStencil<T>,
    v: PcgStepVectors<'_, T>,
    partials: &mut Partials<T>,
    slots: (Slot, Slot),
) -> Result<()> {
    check_ip_pcg_update(st, &v, partials, slots)?;
    let [nx, ny, nz, wx, wy, wz] = ip_args(st);
    let args = [
        nx,
        ny,
        nz,
        wx,
        wy,
        wz,
        KernelArg::scalar(v.alpha),
        KernelArg::scalar(v.beta),
        buf(v.x),
        buf(v.r),
        buf(v.r_next),
        buf(v.p),
        buf(v.ap),
        buf(partials.buffer()),
        KernelArg::index("slot", slots.0 .0)?,
        KernelArg::index("slot", slots.1 .0)?,
    ];
    // SAFETY: ip_pcg_update(nx, ny, nz, wx, wy, wz, alpha, beta, x, r, r_next, p, ap,
    // partials, slot_rr, slot_rz): every vector holds nx*ny*nz < 2^31 elements, r_next is
    // not r, the slots are distinct and inside the partials (checked), grid = groups.
    unsafe { rt.launch::<T>(Kernel::IpPcgUpdate, partials.groups(), &args) }
}

/// Kernel `ip_stencil_check`.
pub(crate) fn ip_stencil_check<T: Scalar>(
    rt: &GpuRuntime<'_>,
    st: &StencilCoefficients<T>,
    a: &DeviceMatrix<T>,
    partials: &mut Partials<T>,
    slot: Slot,
) -> Result<()> {
    let (row_ptr, col_idx, values, _) = check_ip_stencil_check(st, a, partials, slot)?;
    let [nx, ny, nz] = st.dims;
    let [ax, ay, az] = st.neighbours;
    let args = [
        KernelArg::U32(nx as u32),
        KernelArg::U32(ny as u32),
        KernelArg::U32(nz as u32),
        KernelArg::scalar(st.center),
        KernelArg::scalar(ax),
        KernelArg::scalar(ay),
        KernelArg::scalar(az),
        buf(row_ptr),
        buf(col_idx),
        buf(values),
        buf(partials.buffer()),
        KernelArg::slot(slot)?,
    ];
    // SAFETY: ip_stencil_check(nx, ny, nz, d, ax, ay, az, row_ptr, col_idx, values,
    // partials, slot): a is a CSR matrix of nx*ny*nz < 2^31 rows validated at upload (row
    // pointers ascending inside the arrays), the slot is inside the partials (checked).
    unsafe { rt.launch::<T>(Kernel::IpStencilCheck, partials.groups(), &args) }
}

/// The grid and weights of the `ip_stencil` kernels (the grid was checked to fit in 32 bits).
fn ip_args<T: Scalar>(st: &IpStencil<T>) -> [KernelArg<'static>; 6] {
    let [nx, ny, nz] = st.dims;
    let [wx, wy, wz] = st.weights;
    [
        KernelArg::U32(nx as u32),
        KernelArg::U32(ny as u32),
        KernelArg::U32(nz as u32),
        KernelArg::scalar(wx),
        KernelArg::scalar(wy),
        KernelArg::scalar(wz),
    ]
}
