//! The device-resident mode of pipelined CG (issue 15; `Execution::DeviceResident`; the batch
//! loop is `solver::resident`).
//!
//! From a step whose alpha and beta the host computed with the ordinary formulas, the host writes
//! them into the device state and enqueues batches of iterations, each three kernels
//! (`cg_update_resident`, the product, `cg_scalars`), reading the state back once per batch.
//! `cg_scalars` computes the next alpha and beta exactly as the host would, or sets the flag at
//! the first iteration the host must decide itself (claimed convergence, residual replacement,
//! breakdown, NaN, divergence, the iteration limit); every later update of the batch does
//! nothing, and the products recompute the same A p from the unchanged p, so the partials of the
//! flagged iteration are intact for the host's finish.

use super::{slot, Cg};
use crate::backend::ops::resident::layout;
use crate::backend::{Backend, Buffer, CgSlots, ResidentState};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::solver::common::Tracker;
use crate::solver::resident::drive;

impl<B: Backend, T: Scalar> Cg<'_, B, T> {
    /// Launch `count` iterations: update, product, scalars (history entries 0..count).
    fn enqueue_batch(
        &mut self,
        state: &mut ResidentState,
        slots: CgSlots,
        x: &mut Buffer<T>,
        count: usize,
    ) -> Result<()> {
        let be = self.backend;
        for k in 0..count {
            match self.precond {
                None => be.cg_update_resident(
                    state,
                    x,
                    &mut self.r,
                    &mut self.p,
                    &self.ap,
                    &mut self.partials,
                    slot::RR,
                )?,
                Some(_) => be.pcg_update_resident(
                    state,
                    x,
                    &mut self.r,
                    &mut self.z,
                    &mut self.p,
                    &self.ap,
                    &self.q,
                    &mut self.partials,
                    slot::RR,
                    slot::RZ,
                )?,
            }
            self.product()?;
            be.cg_scalars(&self.partials, slots, self.precond.is_some(), k, state)?;
        }
        Ok(())
    }

    /// Run the ordinary iterations after `iteration` on the device, the first with `alpha` and
    /// `beta`; record them; return with `iteration` at the last of them, the update and product
    /// of the next one done and its partials in `self.partials`.
    pub(super) fn device_batches(
        &mut self,
        alpha: f64,
        beta: f64,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
        iteration: &mut usize,
    ) -> Result<()> {
        let mut state = self
            .resident
            .take()
            .ok_or_else(|| Error::param("execution", "device-resident state not allocated"))?;
        let result = self.batches(&mut state, alpha, beta, x, tracker, iteration);
        self.resident = Some(state);
        result
    }

    fn batches(
        &mut self,
        state: &mut ResidentState,
        alpha: f64,
        beta: f64,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
        iteration: &mut usize,
    ) -> Result<()> {
        let slots = CgSlots {
            rr: slot::RR,
            ap_ap: slot::AP_AP,
            p_ap: slot::P_AP,
            rz: slot::RZ,
            ap_q: slot::AP_Q,
        };
        let be = self.backend;
        let mut recordings = std::mem::take(&mut self.recordings);
        let result = drive(
            be,
            "CG",
            state,
            &[(layout::ALPHA, alpha), (layout::BETA, beta)],
            self.params.max_iter,
            tracker,
            iteration,
            |state, count| {
                let id = x.identity();
                recordings.run(be, count, id, || self.enqueue_batch(state, slots, x, count))
            },
        );
        self.recordings = recordings;
        result.map(|_| ())
    }
}
