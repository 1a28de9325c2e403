//! Host implementation of [`ResidentOps`] (the reference the device kernels are tested against;
//! on the host the device-resident mode gains nothing and `auto` does not pick it).

use super::HostBackend;
use crate::backend::buffer::Buffer;
use crate::backend::ops::checks;
use crate::backend::ops::resident::{
    bicgstab_scalars_reference, cg_scalars_reference, check_bicgstab_fused, check_bicgstab_slots,
    check_cg_fused, check_cg_slots, layout,
};
use crate::backend::partials::{sum_slot_f64, sum_slots, Partials, Slot};
use crate::backend::{
    BicgstabFusedVectors, BicgstabSlots, CgFusedVectors, CgSlots, DeviceMatrix, KrylovOps,
    ResidentOps, ResidentState, SpmvDots, SpmvOps, VectorOps,
};
use crate::error::Result;
use crate::scalar::Scalar;

impl ResidentOps for HostBackend {
    fn cg_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        slots: CgSlots,
        hist_index: usize,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
    ) -> Result<()> {
        match self.cg_scalars(state, slots, false, hist_index, partials, &[rr])? {
            None => Ok(()),
            Some([alpha, beta]) => self.cg_update(alpha, beta, x, r, p, ap, partials, rr),
        }
    }

    fn fuses_cg_resident<T: Scalar>(&self, _a: &DeviceMatrix<T>) -> bool {
        true
    }

    fn cg_fused_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        a: &DeviceMatrix<T>,
        hist_index: usize,
        x: &mut Buffer<T>,
        v: CgFusedVectors<'_, T>,
        partials: &mut Partials<T>,
        read: [Slot; 3],
        written: [Slot; 3],
    ) -> Result<bool> {
        check_cg_fused(state, a, hist_index, x, &v, partials, read, written)?;
        let slots = CgSlots {
            rr: read[0],
            ap_ap: read[1],
            p_ap: read[2],
            rz: read[0],
            ap_q: read[0],
        };
        let Some([alpha, beta]) =
            self.cg_scalars(state, slots, false, hist_index, partials, &written)?
        else {
            return Ok(true);
        };
        let CgFusedVectors {
            r,
            p,
            ap,
            r_out,
            p_out,
            ap_out,
        } = v;
        self.copy(r, r_out)?;
        self.copy(p, p_out)?;
        self.cg_update(alpha, beta, x, r_out, p_out, ap, partials, written[0])?;
        let dots = SpmvDots {
            yy: Some(written[1]),
            with: [Some((&*p_out, written[2])), None],
        };
        self.spmv_dots(a, p_out, ap_out, dots, partials)?;
        Ok(true)
    }

    fn pcg_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        slots: CgSlots,
        hist_index: usize,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        z: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        q: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
        rz: Slot,
    ) -> Result<()> {
        match self.cg_scalars(state, slots, true, hist_index, partials, &[rr, rz])? {
            None => Ok(()),
            Some([alpha, beta]) => {
                self.pcg_update(alpha, beta, x, r, z, p, ap, q, partials, rr, rz)
            }
        }
    }

    fn bicgstab_s_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        apr0: Slot,
        ss: Slot,
    ) -> Result<()> {
        checks::bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss)?;
        if state.buffer.host()?[layout::FLAG] != 0.0 {
            // After the flag: nothing written (the fused update before may have written nothing).
            self.counters.launch();
            return Ok(());
        }
        self.bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss)?;
        let finished = partials.buffer().host()?;
        let rho = sum_slot_f64(finished, partials.groups(), rr0);
        let ap_r0 = sum_slot_f64(finished, partials.groups(), apr0);
        let st = state.buffer.host_mut()?;
        st[layout::RHO] = rho;
        st[layout::AP_R0] = ap_r0;
        st[layout::ITER_CUR] = st[layout::ITER];
        st[layout::R_NORM_CUR] = st[layout::R_NORM];
        Ok(())
    }

    fn bicgstab_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        slots: BicgstabSlots,
        hist_index: usize,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        s: &Buffer<T>,
        ap: &Buffer<T>,
        as_: &Buffer<T>,
        phat: Option<&Buffer<T>>,
        shat: Option<&Buffer<T>>,
        r0star: &Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        rr: Slot,
    ) -> Result<()> {
        check_bicgstab_slots(partials, slots, hist_index, state, [rr0, rr])?;
        let sums = sum_slots(
            partials.buffer().host()?,
            partials.groups(),
            partials.slots(),
        );
        let finished = slots.all().map(|k| sums.get(k));
        match bicgstab_scalars_reference(finished, hist_index, state.buffer.host_mut()?) {
            None => {
                self.counters.launch();
                Ok(())
            }
            Some([alpha, omega, beta]) => self.bicgstab_update(
                T::from_f64(alpha),
                T::from_f64(omega),
                T::from_f64(beta),
                x,
                r,
                p,
                s,
                ap,
                as_,
                phat,
                shat,
                r0star,
                partials,
                rr0,
                rr,
            ),
        }
    }

    fn fuses_bicgstab_resident<T: Scalar>(&self, _a: &DeviceMatrix<T>) -> bool {
        true
    }

    fn bicgstab_fused_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        a: &DeviceMatrix<T>,
        hist_index: usize,
        x: &mut Buffer<T>,
        v: BicgstabFusedVectors<'_, T>,
        partials: &mut Partials<T>,
        read: [Slot; 4],
        written: [Slot; 3],
    ) -> Result<bool> {
        check_bicgstab_fused(state, a, hist_index, x, &v, partials, read, written)?;
        let sums = sum_slots(
            partials.buffer().host()?,
            partials.groups(),
            partials.slots(),
        );
        let st = state.buffer.host_mut()?;
        let [ss, as_s, as_as, as_r0] = read.map(|k| sums.get(k));
        let finished = [st[layout::AP_R0], ss, as_s, as_as, as_r0];
        let Some([alpha, omega, beta]) = bicgstab_scalars_reference(finished, hist_index, st)
        else {
            self.counters.launch();
            return Ok(true);
        };
        let BicgstabFusedVectors {
            r,
            p,
            s,
            ap,
            as_,
            r0star,
            p_out,
            ap_out,
        } = v;
        let [rr0, rr, ap_r0] = written;
        self.copy(p, p_out)?;
        self.bicgstab_update(
            T::from_f64(alpha),
            T::from_f64(omega),
            T::from_f64(beta),
            x,
            r,
            p_out,
            s,
            ap,
            as_,
            Some(p),
            Some(s),
            r0star,
            partials,
            rr0,
            rr,
        )?;
        let dots = SpmvDots {
            yy: None,
            with: [Some((r0star, ap_r0)), None],
        };
        self.spmv_dots(a, p_out, ap_out, dots, partials)?;
        Ok(true)
    }
}

impl HostBackend {
    /// The scalars part of the resident CG updates: checks, the reference's decision on the
    /// finished sums, alpha and beta in T when the update runs (else the launch is counted
    /// here).
    fn cg_scalars<T: Scalar>(
        &self,
        state: &mut ResidentState,
        slots: CgSlots,
        with_pc: bool,
        hist_index: usize,
        partials: &Partials<T>,
        written: &[Slot],
    ) -> Result<Option<[T; 2]>> {
        check_cg_slots(partials, slots, with_pc, hist_index, state, written)?;
        let sums = sum_slots(
            partials.buffer().host()?,
            partials.groups(),
            partials.slots(),
        );
        let finished = slots.all().map(|k| sums.get(k));
        let decided = cg_scalars_reference(finished, with_pc, hist_index, state.buffer.host_mut()?);
        if decided.is_none() {
            self.counters.launch();
        }
        Ok(decided.map(|c| c.map(T::from_f64)))
    }
}
