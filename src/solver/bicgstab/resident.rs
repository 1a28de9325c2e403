//! The device-resident mode of pipelined BiCGStab (issue 15; `Execution::DeviceResident`; the
//! batch loop is `solver::resident`).
//!
//! An iteration on the device is four kernels (plus the preconditioner's applications), as in
//! the synchronous mode less the transfer: lines 6-12 (`products`, whose s-update also stores
//! rho and <Ap, r0*> in the state; without a preconditioner the GPU backends fuse the s-update
//! into the product with s, `bicgstab_s_spmv_resident`, for CSR matrices without long rows),
//! then `bicgstab_update_resident`, whose every work-group finishes the other five sums and
//! computes alpha, omega, beta and the recurrence's ||r_{i+1}|| exactly as the host would, then
//! runs lines 15, 16, 19 and the first stage of line 20 -- or, at the first iteration the host
//! must decide itself (NaN, a breakdown, s or r_{i+1} claiming convergence, divergence, the
//! iteration limit), does nothing and sets the flag. After the flag the updates and the s-updates
//! do nothing and the products recompute the same A p from the unchanged p, so the partials of
//! the flagged iteration are intact for the host's finish.
//!
//! Without a preconditioner, where the backend fuses (`ResidentOps::fuses_bicgstab_resident`),
//! the update and the next iteration's A p are one kernel, `bicgstab_fused_resident`: two kernels
//! per iteration with the fused s-update and product. Its product reads the old p and A p at
//! every row's neighbours, so the new ones go to a second pair of vectors: batch position k reads
//! the solver's p and A p when k is even and the second pair when odd, and writes the other. The
//! A p of the first device iteration is computed before the batches; a position that stops writes
//! nothing, so the host takes over from that position's inputs (swapped into the solver's vectors
//! when it is odd).

use super::{slot, BiCgStab};
use crate::backend::ops::resident::layout;
use crate::backend::{Backend, BicgstabFusedVectors, BicgstabSlots, Buffer, ResidentState};
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

/// The slots `bicgstab_fused_resident` finishes (<Ap, r0*> comes from the state).
const FUSED_READ: [crate::backend::Slot; 4] = [slot::S_S, slot::AS_S, slot::AS_AS, slot::AS_R0];

/// The slots `bicgstab_fused_resident` writes: <r, r0*>, <r, r>, <Ap, r0*>.
const FUSED_WRITTEN: [crate::backend::Slot; 3] = [slot::R_R0, slot::R_R, slot::AP_R0];

impl<B: Backend, T: Scalar> BiCgStab<'_, B, T> {
    /// Launch `count` iterations (history entries 0..count): fused where `fused` (the A p of
    /// the first one already computed), else four kernels each (three with the fused s-update
    /// and product).
    fn enqueue_batch(
        &mut self,
        state: &mut ResidentState,
        x: &mut Buffer<T>,
        count: usize,
        fused: bool,
    ) -> Result<()> {
        if fused {
            return self.enqueue_fused_batch(state, x, count);
        }
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

    /// Launch `count` fused batch positions: lines 8-12, then `bicgstab_fused_resident` (the
    /// update and the next A p). Odd positions read the second p and A p (swapped in for the
    /// position, so the host's vectors are as before when the batch is enqueued).
    fn enqueue_fused_batch(
        &mut self,
        state: &mut ResidentState,
        x: &mut Buffer<T>,
        count: usize,
    ) -> Result<()> {
        let be = self.backend;
        for k in 0..count {
            let odd = k % 2 == 1;
            if odd {
                self.swap_second_pair();
            }
            self.s_products(Some(&mut *state))?;
            let [p2, ap2] = self
                .alt
                .as_mut()
                .ok_or_else(|| Error::param("execution", "fused BiCGStab vectors not allocated"))?;
            let v = BicgstabFusedVectors {
                r: &mut self.r,
                p: &self.p,
                s: &self.s,
                ap: &self.ap,
                as_: &self.as_,
                r0star: &self.r0star,
                p_out: p2,
                ap_out: ap2,
            };
            let fused = be.bicgstab_fused_resident(
                state,
                self.a,
                k,
                x,
                v,
                &mut self.partials,
                FUSED_READ,
                FUSED_WRITTEN,
            );
            if odd {
                self.swap_second_pair();
            }
            if !fused? {
                return Err(Error::Unsupported(
                    "device-resident BiCGStab: the fused update stopped being available".into(),
                ));
            }
        }
        Ok(())
    }

    /// Exchange p and A p with the second pair.
    fn swap_second_pair(&mut self) {
        if let Some([p2, ap2]) = self.alt.as_mut() {
            std::mem::swap(&mut self.p, p2);
            std::mem::swap(&mut self.ap, ap2);
        }
    }

    /// Whether the batches run fused: no preconditioner, the backend fuses on this matrix and
    /// the second pair is allocated (once; a failed allocation leaves the unfused kernels).
    fn fused_ready(&mut self) -> bool {
        let be = self.backend;
        if self.precond.is_some() || !be.fuses_bicgstab_resident(self.a) {
            return false;
        }
        if self.alt.is_none() {
            let n = self.a.n_rows();
            self.alt = (|| Ok::<_, Error>([be.alloc(n)?, be.alloc(n)?]))().ok();
        }
        self.alt.is_some()
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
        let fused = self.fused_ready();
        if fused {
            // Lines 6-7 of the first device iteration (the fused updates compute the others').
            if let Err(e) = self.ap_product() {
                self.resident = Some(state);
                return Err(e);
            }
        }
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
                let key = (count, x.identity(), self.p.identity());
                recordings.run(be, key, || self.enqueue_batch(state, x, count, fused))
            },
        );
        self.recordings = recordings;
        self.resident = Some(state);
        let (last, position) = result?;
        // A fused position that stops writes nothing: the host goes on from its inputs, in the
        // second pair when it is odd.
        if fused && position % 2 == 1 {
            self.swap_second_pair();
        }
        Ok(last)
    }
}
