//! The device-resident mode of pipelined CG (issue 15; `Execution::DeviceResident`; the batch
//! loop is `solver::resident`).
//!
//! After a step the host ran itself (update and product), every batch position is two kernels:
//! `cg_update_resident` (or `pcg_update_resident`), whose every work-group finishes the last
//! iteration's sums and computes the stop test, alpha and beta exactly as the host would, then
//! runs the update with them; and the product. At the first iteration the host must decide
//! itself (claimed convergence, residual replacement, breakdown, NaN, divergence, the iteration
//! limit) the update does nothing and sets the flag; every later update does nothing, and the
//! products recompute the same A p from the unchanged p, so the partials of the flagged iteration
//! are intact for the host's finish. An update writes its partials <r, r> (and <r, z>) while
//! other work-groups still read the previous ones, so the positions alternate between two slot
//! sets: position k reads the canonical slots when k is even and writes the second set, and the
//! other way round when k is odd (a batch has an even length unless the iteration limit ends it).

use super::{slot, Cg};
use crate::backend::ops::resident::layout;
use crate::backend::{Backend, Buffer, CgFusedVectors, CgSlots, ResidentState, Slot};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::solver::common::Tracker;
use crate::solver::resident::drive;

/// The slots <r, r> and <r, z> that batch position `k` reads, and those it writes.
fn alternating(k: usize) -> ((Slot, Slot), (Slot, Slot)) {
    let canonical = (slot::RR, slot::RZ);
    let second = (slot::RR_ALT, slot::RZ_ALT);
    if k % 2 == 0 {
        (canonical, second)
    } else {
        (second, canonical)
    }
}

/// The slots <r, r>, <Ap, Ap>, <p, Ap> that fused batch position `k` reads, and those it writes.
fn alternating_fused(k: usize) -> ([Slot; 3], [Slot; 3]) {
    let canonical = [slot::RR, slot::AP_AP, slot::P_AP];
    let second = [slot::RR_ALT, slot::AP_AP_ALT, slot::P_AP_ALT];
    if k % 2 == 0 {
        (canonical, second)
    } else {
        (second, canonical)
    }
}

impl<B: Backend, T: Scalar> Cg<'_, B, T> {
    /// Launch `count` batch positions as one fused kernel each (`cg_fused_resident`): position k
    /// reads r, p, A p from the solver's vectors when k is even and from `alt` when odd, and
    /// writes the others. `Ok(false)` when the backend does not fuse (nothing launched).
    fn enqueue_fused_batch(
        &mut self,
        state: &mut ResidentState,
        x: &mut Buffer<T>,
        count: usize,
    ) -> Result<bool> {
        let be = self.backend;
        let Some([r2, p2, ap2]) = self.alt.as_mut() else {
            return Ok(false);
        };
        for k in 0..count {
            let (read, written) = alternating_fused(k);
            let v = if k % 2 == 0 {
                CgFusedVectors {
                    r: &self.r,
                    p: &self.p,
                    ap: &self.ap,
                    r_out: &mut *r2,
                    p_out: &mut *p2,
                    ap_out: &mut *ap2,
                }
            } else {
                CgFusedVectors {
                    r: &*r2,
                    p: &*p2,
                    ap: &*ap2,
                    r_out: &mut self.r,
                    p_out: &mut self.p,
                    ap_out: &mut self.ap,
                }
            };
            let fused =
                be.cg_fused_resident(state, self.a, k, x, v, &mut self.partials, read, written)?;
            if !fused {
                if k == 0 {
                    return Ok(false);
                }
                return Err(Error::Unsupported(
                    "device-resident CG: the fused iteration stopped being available mid-batch"
                        .into(),
                ));
            }
        }
        Ok(true)
    }

    /// Launch `count` batch positions (history entries 0..count): fused where the backend can,
    /// else two kernels each.
    fn enqueue_batch(
        &mut self,
        state: &mut ResidentState,
        x: &mut Buffer<T>,
        count: usize,
    ) -> Result<()> {
        self.fused_batches = self.precond.is_none() && self.enqueue_fused_batch(state, x, count)?;
        if self.fused_batches {
            return Ok(());
        }
        let be = self.backend;
        for k in 0..count {
            let ((rr_in, rz_in), (rr_out, rz_out)) = alternating(k);
            let slots = CgSlots {
                rr: rr_in,
                ap_ap: slot::AP_AP,
                p_ap: slot::P_AP,
                rz: rz_in,
                ap_q: slot::AP_Q,
            };
            match self.precond {
                None => be.cg_update_resident(
                    state,
                    slots,
                    k,
                    x,
                    &mut self.r,
                    &mut self.p,
                    &self.ap,
                    &mut self.partials,
                    rr_out,
                )?,
                Some(_) => be.pcg_update_resident(
                    state,
                    slots,
                    k,
                    x,
                    &mut self.r,
                    &mut self.z,
                    &mut self.p,
                    &self.ap,
                    &self.q,
                    &mut self.partials,
                    rr_out,
                    rz_out,
                )?,
            }
            self.product()?;
        }
        Ok(())
    }

    /// Decide `iteration` (whose update and product ran, its partials in `self.partials`) and
    /// the ordinary ones after it on the device, recording them; return with `iteration` at the
    /// first one the host must decide, its partials in `self.partials`, and whether its <r, r>
    /// and <r, z> are in the second slot set (`slot::RR_ALT`, `slot::RZ_ALT`), and whether its
    /// <Ap, Ap> and <p, Ap> are (`slot::AP_AP_ALT`, `slot::P_AP_ALT`: fused positions, whose
    /// r, p and A p are then swapped back into the solver's vectors here).
    pub(super) fn device_batches(
        &mut self,
        x: &mut Buffer<T>,
        tracker: &mut Tracker<'_>,
        iteration: &mut usize,
    ) -> Result<(bool, bool)> {
        let mut state = self
            .resident
            .take()
            .ok_or_else(|| Error::param("execution", "device-resident state not allocated"))?;
        let be = self.backend;
        // The fused iterations' second vectors, once, where the backend fuses (a failed
        // allocation leaves two kernels per iteration).
        if self.precond.is_none() && self.alt.is_none() && be.fuses_cg_resident(self.a) {
            let n = self.a.n_rows();
            self.alt = (|| Ok::<_, Error>([be.alloc(n)?, be.alloc(n)?, be.alloc(n)?]))().ok();
        }
        let mut done = iteration.saturating_sub(1);
        let mut recordings = std::mem::take(&mut self.recordings);
        let result = drive(
            be,
            "CG",
            &mut state,
            &[(layout::ITER_PAR, done as f64)],
            self.params.max_iter,
            tracker,
            &mut done,
            |state, count| {
                let key = (count, x.identity(), self.r.identity());
                recordings.run(be, key, || self.enqueue_batch(state, x, count))
            },
        );
        self.recordings = recordings;
        self.resident = Some(state);
        let (_, position) = result?;
        *iteration = done + 1;
        // A fused position that stops writes nothing, so the host's vectors and sums are those
        // the stopping position read: the second set when it is odd.
        let fused = self.fused_batches;
        let second = position % 2 == 1;
        if fused && second {
            if let Some([r2, p2, ap2]) = self.alt.as_mut() {
                std::mem::swap(&mut self.r, r2);
                std::mem::swap(&mut self.p, p2);
                std::mem::swap(&mut self.ap, ap2);
            }
        }
        Ok((second, fused && second))
    }
}
