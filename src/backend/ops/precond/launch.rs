//! The GPU launches of the preconditioner kernels (`kernels/precond.kc`, `trsv.kc`, `bilu.kc`,
//! `isai.kc`, `fsai.kc`, `ip.kc`, `ip_assemble.kc`), written once for every runtime against
//! [`GpuRuntime`](crate::backend::launch::GpuRuntime): the arguments checked (the checks live
//! in the families' files), then one launch by typed name.
//! [`PrecondOps`](super::PrecondOps)'s default bodies call them on a GPU backend.

mod factor;
mod fsai;
mod ip;

pub(crate) use factor::*;
pub(crate) use fsai::afsai_grow;
pub(crate) use fsai::{afsai_compact, afsai_place, fsai_rows, fsai_transpose};
pub(crate) use ip::*;

use crate::backend::buffer::Buffer;
use crate::backend::launch::KernelArg;

/// `b` as a kernel argument.
pub(super) fn buf<T: bytemuck::Pod>(b: &Buffer<T>) -> KernelArg<'_> {
    KernelArg::buffer(b)
}
