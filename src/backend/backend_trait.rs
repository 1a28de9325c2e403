//! The one [`Backend`] trait: [`super::BackendInfo`] and the traits of every kernel family in
//! [`super::ops`], implemented for every type that implements them all.

use super::info::BackendInfo;
use super::ops::{FaultInjection, HaloOps, KrylovOps, PrecondOps, ResidentOps, SpmvOps, VectorOps};

/// Everything a solver needs from a backend.
pub trait Backend:
    BackendInfo + VectorOps + SpmvOps + KrylovOps + PrecondOps + HaloOps + ResidentOps + FaultInjection
{
}
impl<
        B: BackendInfo
            + VectorOps
            + SpmvOps
            + KrylovOps
            + PrecondOps
            + HaloOps
            + ResidentOps
            + FaultInjection,
    > Backend for B
{
}
