//! Host implementation of [`PrecondOps`].

use super::vector::slot_mut;
use super::{chunks, chunks_mut, exec, groups_for, HostBackend};
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::partials::{Partials, Slot};
use crate::backend::PrecondOps;
use crate::error::Result;
use crate::scalar::Scalar;

impl PrecondOps for HostBackend {
    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        let n = d.len();
        check_len("diag_scale: x length", x, n)?;
        check_len("diag_scale: y length", y, n)?;
        self.counters.launch();
        let g = groups_for(n);
        let items: Vec<_> = chunks(d.host()?, g)
            .zip(chunks(x.host()?, g))
            .zip(chunks_mut(y.host_mut()?, g))
            .collect();
        exec(n, items, |((d, x), y)| {
            for i in 0..y.len() {
                y[i] = d[i] * x[i];
            }
        });
        Ok(())
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
        self.counters.launch();
        let g = partials.groups();
        let out = slot_mut(partials, slot)?;
        let items: Vec<_> = chunks(d.host()?, g)
            .zip(chunks(x.host()?, g))
            .zip(chunks_mut(y.host_mut()?, g))
            .zip(out.iter_mut())
            .collect();
        exec(n, items, |(((d, x), y), o)| {
            let mut acc = T::zero();
            for i in 0..y.len() {
                let yi = d[i] * x[i];
                y[i] = yi;
                acc += x[i] * yi;
            }
            *o = acc;
        });
        Ok(())
    }
}
