//! The device-resident mode of pipelined CG (issue 15; [`Execution`]).
//!
//! From a step whose alpha and beta the host computed with the ordinary formulas, the host writes
//! them into the device state and enqueues batches of iterations, each three kernels
//! (`cg_update_resident`, the product, `cg_scalars`), reading the state back once per batch.
//! `cg_scalars` computes the next alpha and beta exactly as the host would, or sets the flag at
//! the first iteration the host must decide itself (claimed convergence, residual replacement,
//! breakdown, NaN, divergence, the iteration limit); every later update of the batch does
//! nothing, and the products recompute the same A p from the unchanged p, so the partials of the
//! flagged iteration are intact for the host's finish. Batches grow from 4 to [`MAX_BATCH`]
//! iterations while no flag is seen, and never run past the iteration limit.

use super::{slot, Cg};
use crate::backend::ops::resident::layout;
use crate::backend::{Backend, Buffer, CgSlots, ResidentState};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::solver::common::Tracker;
use crate::solver::params::{Execution, Params, Variant, RESIDENT_AUTO_MAX_N};

/// Largest batch (iterations enqueued before the state is read back).
pub(super) const MAX_BATCH: usize = 64;
/// First batch.
const FIRST_BATCH: usize = 4;
/// Recordings kept per solver (batch lengths x solution vectors).
const MAX_RECORDINGS: usize = 16;

/// Whether the parameters may select the device-resident mode on this backend (the state is
/// allocated at setup then).
pub(super) fn may_run<B: Backend>(backend: &B, n: usize, params: &Params) -> bool {
    params.variant == Variant::Pipelined
        && match params.execution {
            Execution::Synchronous => false,
            Execution::DeviceResident => true,
            Execution::Auto => auto_picks(backend, n),
        }
}

fn auto_picks<B: Backend>(backend: &B, n: usize) -> bool {
    backend.is_gpu() && backend.ranks() == 1 && backend.supports_f64() && n <= RESIDENT_AUTO_MAX_N
}

/// Whether this solve runs device-resident (a monitor forces the synchronous mode).
pub(super) fn chosen<B: Backend>(
    backend: &B,
    n: usize,
    params: &Params,
    tracker: &Tracker,
) -> bool {
    may_run(backend, n, params) && !tracker.has_monitor()
}

impl<B: Backend, T: Scalar> Cg<'_, B, T> {
    /// One batch of `count` iterations: replayed from a recording when one was made for this
    /// length and solution vector, else recorded (where the backend records) and replayed, else
    /// launched.
    fn run_batch(
        &mut self,
        state: &mut ResidentState,
        slots: CgSlots,
        x: &mut Buffer<T>,
        count: usize,
    ) -> Result<()> {
        let be = self.backend;
        let key = (count, x.identity());
        if let Some((_, rec)) = self.recordings.iter().find(|(k, _)| *k == key) {
            return be.replay(rec);
        }
        if be.begin_recording()? {
            let enqueued = self.enqueue_batch(state, slots, x, count);
            let recording = be.end_recording();
            enqueued?;
            if let Some(rec) = recording? {
                be.replay(&rec)?;
                if self.recordings.len() >= MAX_RECORDINGS {
                    self.recordings.remove(0);
                }
                self.recordings.push((key, rec));
                return Ok(());
            }
        }
        self.enqueue_batch(state, slots, x, count)
    }

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
        let be = self.backend;
        let mut host = vec![0.0f64; state.buffer().len()];
        host[layout::FLAG] = 0.0;
        host[layout::ALPHA] = alpha;
        host[layout::BETA] = beta;
        host[layout::ITER] = *iteration as f64;
        host[layout::TARGET] = tracker.target;
        host[layout::DTOL_R0] = tracker.divergence_bound();
        host[layout::MAX_ITER] = self.params.max_iter as f64;
        be.write(state.buffer_mut(), &host)?;
        let slots = CgSlots {
            rr: slot::RR,
            ap_ap: slot::AP_AP,
            p_ap: slot::P_AP,
            rz: slot::RZ,
            ap_q: slot::AP_Q,
        };
        let mut batch = FIRST_BATCH.min(state.batch());
        loop {
            // Never past the iteration limit: the device flags iteration max_iter anyway.
            let count = batch.min(self.params.max_iter.saturating_sub(*iteration).max(1));
            self.run_batch(state, slots, x, count)?;
            be.read(state.buffer(), &mut host)?;
            let done = host[layout::ITER] as usize;
            for (k, it) in (*iteration + 1..=done).enumerate() {
                if let Some(reason) = tracker.record(it, host[layout::HISTORY + k]) {
                    return Err(Error::Unsupported(format!(
                        "device-resident CG disagrees with the host's stop test at iteration \
                         {it} ({reason}); use the synchronous mode"
                    )));
                }
            }
            if host[layout::FLAG] != 0.0 {
                *iteration = done;
                return Ok(());
            }
            if done < *iteration + count {
                return Err(Error::Unsupported(format!(
                    "device-resident CG: the device ran {} of {count} iterations without a stop \
                     flag; use the synchronous mode",
                    done - *iteration
                )));
            }
            *iteration = done;
            batch = (batch * 2).min(state.batch());
        }
    }
}
