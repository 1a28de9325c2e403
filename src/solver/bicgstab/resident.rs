//! The device-resident mode of pipelined BiCGStab (issue 15; `Execution::DeviceResident`; the
//! batch loop is `solver::resident`).
//!
//! An iteration on the device is four kernels (plus the preconditioner's applications), as in
//! the synchronous mode less the transfer: lines 6-12 (`products`, whose s-update also stores
//! rho in the state; without a preconditioner the GPU backends fuse the s-update into the
//! product with s, `bicgstab_s_spmv_resident`, for CSR matrices without long rows: three
//! kernels, the same results), then `bicgstab_update_resident`, whose every work-group finishes the other
//! five sums and computes alpha, omega, beta and the recurrence's ||r_{i+1}|| exactly as the
//! host would, then runs lines 15, 16, 19 and the first stage of line 20 -- or, at the first
//! iteration the host must decide itself (NaN, a breakdown, s or r_{i+1} claiming convergence,
//! divergence, the iteration limit), does nothing and sets the flag. After the flag the updates
//! do nothing and the products recompute the same vectors from the unchanged p and r, so the
//! partials of the flagged iteration are intact for the host's finish.

use super::{slot, BiCgStab};
use crate::backend::ops::resident::layout;
use crate::backend::{Backend, BicgstabSlots, Buffer, ResidentState};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::solver::common::Tracker;
use crate::solver::resident::drive;

/// The slots `bicgstab_update_resident` finishes.
const SLOTS: BicgstabSlots = BicgstabSlots {
    ap_r0: slot::AP_R0,
    s_s: slot::S_S,
    as_s: slot::AS_S,
    as_as: slot::AS_AS,
    as_r0: slot::AS_R0,
};

impl<B: Backend, T: Scalar> BiCgStab<'_, B, T> {
    /// Launch `count` iterations (history entries 0..count).
    fn enqueue_batch(
        &mut self,
        state: &mut ResidentState,
        x: &mut Buffer<T>,
        count: usize,
    ) -> Result<()> {
        let be = self.backend;
        let preconditioned = self.precond.is_some();
        for k in 0..count {
            self.products(Some(state))?;
            be.bicgstab_update_resident(
                state,
                SLOTS,
                k,
                x,
                &mut self.r,
                &mut self.p,
                &self.s,
                &self.ap,
                &self.as_,
                preconditioned.then_some(&self.phat),
                preconditioned.then_some(&self.shat),
                &self.r0star,
                &mut self.partials,
                slot::R_R0,
                slot::R_R,
            )?;
        }
        Ok(())
    }

    /// Run the ordinary iterations after `iteration` on the device (`r_norm` = ||r_i||,
    /// `r0star_norm` = ||r0*||, for the rho breakdown test) and record them; return with
    /// `iteration` at the last of them, lines 6-12 of the next one done (its partials in
    /// `self.partials`), and ||r|| of the last ordinary iteration when there was one.
    pub(super) fn device_batches(
        &mut self,
        r_norm: f64,
        r0star_norm: f64,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
        iteration: &mut usize,
    ) -> Result<Option<f64>> {
        let mut state = self
            .resident
            .take()
            .ok_or_else(|| Error::param("execution", "device-resident state not allocated"))?;
        let eps = T::EPSILON.to_f64();
        let be = self.backend;
        let mut recordings = std::mem::take(&mut self.recordings);
        let result = drive(
            be,
            "BiCGStab",
            &mut state,
            &[
                (layout::R_NORM, r_norm),
                (layout::R0STAR_NORM, r0star_norm),
                (layout::EPS2, eps * eps),
            ],
            self.params.max_iter,
            tracker,
            iteration,
            |state, count| {
                let id = x.identity();
                recordings.run(be, (count, id), || self.enqueue_batch(state, x, count))
            },
        );
        self.recordings = recordings;
        self.resident = Some(state);
        result.map(|(last, _)| last)
    }
}
