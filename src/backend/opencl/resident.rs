//! OpenCL implementation of [`ResidentOps`] (kernels in `kernels/resident.kc`).

use super::launch::Arg;
use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::ops::checks;
use crate::backend::ops::krylov::launch as krylov_launch;
use crate::backend::ops::resident::{
    check_bicgstab_fused, check_bicgstab_slots, check_cg_fused, check_cg_slots, check_s_spmv,
};
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{
    BackendInfo, BicgstabFusedVectors, BicgstabSlots, CgFusedVectors, CgSlots, DeviceMatrix,
    ResidentOps, ResidentState,
};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

impl OpenClBackend {
    /// The state is double: refuse devices without fp64 (their program holds float stubs).
    fn check_resident(&self) -> Result<()> {
        if self.supports_f64() {
            Ok(())
        } else {
            Err(Error::Unsupported(
                "device-resident iterations need fp64 on the device".into(),
            ))
        }
    }
}

impl OpenClBackend {
    /// The arguments of a CSR matrix without long rows as the fused resident kernels take them:
    /// row_ptr, col_idx, values, n, k, and `early` (the CUDA twins' early matrix reads, ignored
    /// here).
    fn plain_csr_args<'a, T: Scalar>(
        &self,
        a: &'a DeviceMatrix<T>,
        n: usize,
    ) -> Result<Vec<Arg<'a>>> {
        let (row_ptr, col_idx, values) = a.plain_csr().ok_or_else(|| {
            Error::Unsupported("the fused resident kernels take CSR without long rows".into())
        })?;
        Ok(vec![
            Arg::Mem(self.mem(row_ptr)?),
            Arg::Mem(self.mem(col_idx)?),
            Arg::Mem(self.mem(values)?),
            Arg::uint(Self::len_u32(n)?),
            Arg::uint(self.csr_lanes(a.nnz(), n)),
            Arg::uint(0),
        ])
    }

    /// The arguments of the fused resident iterations (`cg_fused_resident`,
    /// `bicgstab_fused_resident`): the state, the `read` slots, the history entry, the matrix,
    /// the `vectors`, the partials and the `written` slots.
    #[allow(clippy::too_many_arguments)]
    fn fused_args<'a, T: Scalar>(
        &self,
        state: &'a ResidentState,
        read: &[Slot],
        hist_index: usize,
        a: &'a DeviceMatrix<T>,
        n: usize,
        vectors: &[&'a Buffer<T>],
        partials: &'a Partials<T>,
        written: &[Slot],
    ) -> Result<Vec<Arg<'a>>> {
        let mut args = vec![Arg::Mem(self.mem(&state.buffer)?)];
        for slot in read {
            args.push(Self::slot_arg(*slot)?);
        }
        args.push(Arg::uint(Self::len_u32(hist_index)?));
        args.extend(self.plain_csr_args(a, n)?);
        for v in vectors {
            args.push(Arg::Mem(self.mem(v)?));
        }
        args.push(Arg::Mem(self.mem(partials.buffer())?));
        for slot in written {
            args.push(Self::slot_arg(*slot)?);
        }
        Ok(args)
    }
}

impl OpenClBackend {
    /// Launch `cg_sums_resident` for the next CG or PCG update (`CgSlots::finished`) where
    /// `Tuning::cg_sums_kernel_for` picks it for the partials' group count; whether it did (the
    /// update's `sums_ready`).
    fn cg_sums<T: Scalar>(
        &self,
        state: &mut ResidentState,
        partials: &Partials<T>,
        slots: CgSlots,
        with_pc: bool,
    ) -> Result<bool> {
        if !self.tuning().cg_sums_kernel_for(false, partials.groups()) {
            return Ok(false);
        }
        let [rr, curvature, p_ap, rz] = slots.finished(with_pc);
        self.launch::<T>(
            Kernel::CgSumsResident,
            1,
            &[
                Arg::Mem(self.mem(&state.buffer)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Arg::uint(Self::len_u32(partials.groups())?),
                Self::slot_arg(rr)?,
                Self::slot_arg(curvature)?,
                Self::slot_arg(p_ap)?,
                Self::slot_arg(rz)?,
                Arg::uint(u32::from(with_pc)),
            ],
        )?;
        Ok(true)
    }
}

impl ResidentOps for OpenClBackend {
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
        self.check_resident()?;
        check_cg_slots(partials, slots, false, hist_index, state, &[rr])?;
        let n = checks::cg_update(x, r, p, ap, partials, rr)?;
        let sums_ready = self.cg_sums(state, partials, slots, false)?;
        self.launch::<T>(
            Kernel::CgUpdateResident,
            partials.groups(),
            &[
                Arg::Mem(self.mem(&state.buffer)?),
                Self::slot_arg(slots.rr)?,
                Self::slot_arg(slots.ap_ap)?,
                Self::slot_arg(slots.p_ap)?,
                Arg::uint(Self::len_u32(hist_index)?),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(r)?),
                Arg::Mem(self.mem(p)?),
                Arg::Mem(self.mem(ap)?),
                Arg::uint(Self::len_u32(n)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(rr)?,
                Arg::uint(u32::from(sums_ready)),
            ],
        )
    }

    fn fuses_cg_resident<T: Scalar>(&self, a: &DeviceMatrix<T>) -> bool {
        self.supports_f64()
            && self.tuning().cg_fused_for(false, a.n_rows())
            && a.plain_csr().is_some()
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
        if !self.fuses_cg_resident(a) {
            return Ok(false);
        }
        let n = check_cg_fused(state, a, hist_index, x, &v, partials, read, written)?;
        let vectors = [&*x, v.r, v.p, v.ap, &*v.r_out, &*v.p_out, &*v.ap_out];
        let args = self.fused_args(state, &read, hist_index, a, n, &vectors, partials, &written)?;
        self.launch::<T>(Kernel::CgFusedResident, partials.groups(), &args)?;
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
        self.check_resident()?;
        check_cg_slots(partials, slots, true, hist_index, state, &[rr, rz])?;
        let n = checks::pcg_update(x, r, z, p, ap, q, partials, rr, rz)?;
        let sums_ready = self.cg_sums(state, partials, slots, true)?;
        self.launch::<T>(
            Kernel::PcgUpdateResident,
            partials.groups(),
            &[
                Arg::Mem(self.mem(&state.buffer)?),
                Self::slot_arg(slots.rr)?,
                Self::slot_arg(slots.p_ap)?,
                Self::slot_arg(slots.rz)?,
                Self::slot_arg(slots.ap_q)?,
                Arg::uint(Self::len_u32(hist_index)?),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(r)?),
                Arg::Mem(self.mem(z)?),
                Arg::Mem(self.mem(p)?),
                Arg::Mem(self.mem(ap)?),
                Arg::Mem(self.mem(q)?),
                Arg::uint(Self::len_u32(n)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(rr)?,
                Self::slot_arg(rz)?,
                Arg::uint(u32::from(sums_ready)),
            ],
        )
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
        self.check_resident()?;
        let mut args = vec![Arg::Mem(self.mem(&state.buffer)?)];
        args.extend(self.kernel_args(&krylov_launch::bicgstab_s_update_args(
            r, ap, s, partials, rr0, apr0, ss,
        )?)?);
        self.launch::<T>(Kernel::BicgstabSUpdateResident, partials.groups(), &args)
    }

    fn bicgstab_s_spmv_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        a: &DeviceMatrix<T>,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &mut Buffer<T>,
        as_: &mut Buffer<T>,
        r0star: &Buffer<T>,
        partials: &mut Partials<T>,
        update_slots: [Slot; 3],
        products: [Slot; 3],
    ) -> Result<bool> {
        if a.plain_csr().is_none() {
            return Ok(false);
        }
        self.check_resident()?;
        let n = check_s_spmv(a, r, ap, s, as_, r0star, partials, update_slots, products)?;
        let [rr0, apr0, ss] = update_slots;
        let mut args = vec![Arg::Mem(self.mem(&state.buffer)?)];
        args.extend(self.plain_csr_args(a, n)?);
        args.extend([
            Arg::Mem(self.mem(r)?),
            Arg::Mem(self.mem(ap)?),
            Arg::Mem(self.mem(s)?),
            Arg::Mem(self.mem(as_)?),
            Arg::Mem(self.mem(r0star)?),
            Arg::Mem(self.mem(partials.buffer())?),
        ]);
        for slot in [rr0, apr0, ss, products[0], products[1], products[2]] {
            args.push(Self::slot_arg(slot)?);
        }
        self.launch::<T>(Kernel::BicgstabSSpmvResident, partials.groups(), &args)?;
        Ok(true)
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
        self.check_resident()?;
        check_bicgstab_slots(partials, slots, hist_index, state, [rr0, rr])?;
        let mut args = vec![Arg::Mem(self.mem(&state.buffer)?)];
        for k in slots.all() {
            args.push(Self::slot_arg(k)?);
        }
        args.push(Arg::uint(Self::len_u32(hist_index)?));
        args.extend(self.kernel_args(&krylov_launch::bicgstab_update_args(
            x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr,
        )?)?);
        self.launch::<T>(Kernel::BicgstabUpdateResident, partials.groups(), &args)
    }

    fn fuses_bicgstab_resident<T: Scalar>(&self, a: &DeviceMatrix<T>) -> bool {
        self.supports_f64()
            && self.tuning().bicgstab_fused_for(false, a.n_rows())
            && a.plain_csr().is_some()
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
        if !self.fuses_bicgstab_resident(a) {
            return Ok(false);
        }
        let n = check_bicgstab_fused(state, a, hist_index, x, &v, partials, read, written)?;
        let vectors = [
            &*x, &*v.r, v.p, v.s, v.ap, v.as_, v.r0star, &*v.p_out, &*v.ap_out,
        ];
        let args = self.fused_args(state, &read, hist_index, a, n, &vectors, partials, &written)?;
        self.launch::<T>(Kernel::BicgstabFusedResident, partials.groups(), &args)?;
        Ok(true)
    }
}
