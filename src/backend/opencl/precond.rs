//! OpenCL implementation of [`PrecondOps`]: kernels of `kernels-cl/precond.cl`.

use super::launch::Arg;
use super::OpenClBackend;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::partials::{Partials, Slot};
use crate::backend::PrecondOps;
use crate::error::Result;
use crate::scalar::Scalar;

impl PrecondOps for OpenClBackend {
    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        let n = d.len();
        check_len("diag_scale: x length", x, n)?;
        check_len("diag_scale: y length", y, n)?;
        self.launch::<T>(
            "diag_scale",
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(d)?),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(y)?),
                Arg::uint(Self::len_u32(n)?),
            ],
        )
    }

    fn diag_scale_dot<T: Scalar>(
        &self,
        d: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        let n = d.len();
        check_len("diag_scale_dot: x length", x, n)?;
        check_len("diag_scale_dot: y length", y, n)?;
        partials.check(slot, n)?;
        self.launch::<T>(
            "diag_scale_dot",
            partials.groups(),
            &[
                Arg::Mem(self.mem(d)?),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(y)?),
                Arg::uint(Self::len_u32(n)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(slot)?,
            ],
        )
    }
}
