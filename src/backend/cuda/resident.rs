//! CUDA implementation of [`ResidentOps`] (kernels in `kernels/resident.kc`).

use super::module::Kernel;
use super::{index_arg, len_arg, Arg, CudaBackend};
use crate::backend::buffer::Buffer;
use crate::backend::ops::checks;
use crate::backend::ops::krylov::launch as krylov_launch;
use crate::backend::ops::resident::{
    check_bicgstab_fused, check_bicgstab_slots, check_cg_fused, check_cg_slots, check_s_spmv,
};
use crate::backend::partials::{Partials, Slot};
use crate::backend::{
    BicgstabFusedVectors, BicgstabSlots, CgFusedVectors, CgSlots, DeviceMatrix, ResidentOps,
    ResidentState,
};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

impl CudaBackend {
    /// The arguments of a CSR matrix without long rows as the fused resident kernels take them:
    /// row_ptr, col_idx, values, n, k, early (`spmv::early_bits`).
    fn plain_csr_args<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        n: usize,
        may_start_next: bool,
    ) -> Result<Vec<Arg>> {
        let (row_ptr, col_idx, values) = a.plain_csr().ok_or_else(|| {
            Error::Unsupported("the fused resident kernels take CSR without long rows".into())
        })?;
        Ok(vec![
            self.ptr(row_ptr)?,
            self.ptr(col_idx)?,
            self.ptr(values)?,
            len_arg(n)?,
            Arg::U32(super::spmv::csr_lanes(self.tuning().csr_lanes, a.nnz(), n)),
            Arg::U32(super::spmv::early_bits(self.tuning(), a, may_start_next)),
        ])
    }

    /// The arguments of the fused resident iterations (`cg_fused_resident`,
    /// `bicgstab_fused_resident`): the state, the `read` slots, the history entry, the matrix
    /// (starting the next kernel early), the `vectors`, the partials and the `written` slots.
    #[allow(clippy::too_many_arguments)]
    fn fused_args<T: Scalar>(
        &self,
        state: &ResidentState,
        read: &[Slot],
        hist_index: usize,
        a: &DeviceMatrix<T>,
        n: usize,
        vectors: &[&Buffer<T>],
        partials: &Partials<T>,
        written: &[Slot],
    ) -> Result<Vec<Arg>> {
        let mut args = vec![self.ptr(&state.buffer)?];
        for slot in read {
            args.push(index_arg("slot", slot.0)?);
        }
        args.push(index_arg("hist_index", hist_index)?);
        args.extend(self.plain_csr_args(a, n, true)?);
        for v in vectors {
            args.push(self.ptr(v)?);
        }
        args.push(self.ptr(partials.buffer())?);
        for slot in written {
            args.push(index_arg("slot", slot.0)?);
        }
        Ok(args)
    }
}

impl CudaBackend {
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
        if !self.tuning().cg_sums_kernel_for(true, partials.groups()) {
            return Ok(false);
        }
        let [rr, curvature, p_ap, rz] = slots.finished(with_pc);
        let args = [
            self.ptr(&state.buffer)?,
            self.ptr(partials.buffer())?,
            len_arg(partials.groups())?,
            index_arg("slot", rr.0)?,
            index_arg("slot", curvature.0)?,
            index_arg("slot", p_ap.0)?,
            index_arg("slot", rz.0)?,
            Arg::U32(u32::from(with_pc)),
        ];
        // SAFETY: cg_sums_resident(double* state, partials, uint groups, four uint slots, uint
        // with_pc): the slots were checked inside the partials (check_cg_slots), `groups` is the
        // partials' group count and the state holds layout::SUMS + 4 entries; one block.
        unsafe { self.launch::<T>(Kernel::CgSumsResident, 1, &args) }?;
        Ok(true)
    }
}

impl ResidentOps for CudaBackend {
    fn begin_recording(&self) -> Result<bool> {
        self.begin_capture()
    }

    fn end_recording(&self) -> Result<Option<crate::backend::Recording>> {
        self.end_capture()
    }

    fn replay(&self, recording: &crate::backend::Recording) -> Result<()> {
        self.replay_graph(recording)
    }

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
        check_cg_slots(partials, slots, false, hist_index, state, &[rr])?;
        let n = checks::cg_update(x, r, p, ap, partials, rr)?;
        let sums_ready = self.cg_sums(state, partials, slots, false)?;
        let args = [
            self.ptr(&state.buffer)?,
            index_arg("slot", slots.rr.0)?,
            index_arg("slot", slots.ap_ap.0)?,
            index_arg("slot", slots.p_ap.0)?,
            index_arg("hist_index", hist_index)?,
            self.ptr(x)?,
            self.ptr(r)?,
            self.ptr(p)?,
            self.ptr(ap)?,
            len_arg(n)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", rr.0)?,
            Arg::U32(u32::from(sums_ready)),
        ];
        // SAFETY: cg_update_resident(double* state, uint slot_rr_in, uint slot_apap,
        // uint slot_pap, uint hist_index, x, r, p, ap, uint n, partials, uint slot_rr,
        // uint sums_ready): all
        // vectors hold n elements, the read slots are inside the partials and differ from the
        // written one, the history entry is inside the state (checked); grid = groups.
        unsafe { self.launch::<T>(Kernel::CgUpdateResident, partials.groups(), &args) }
    }

    fn fuses_cg_resident<T: Scalar>(&self, a: &DeviceMatrix<T>) -> bool {
        self.tuning().cg_fused_for(true, a.n_rows()) && a.plain_csr().is_some()
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
        // SAFETY: cg_fused_resident(double* state, three uint slots, uint hist_index, row_ptr,
        // col_idx, values, uint n, uint k, uint early, x, r, p, ap, r_out, p_out, ap_out, partials, three uint
        // slots): a is an n x n CSR matrix without long rows (its arrays as spmv_dots_csr reads
        // them), every vector holds n elements and the written ones are other buffers than the
        // read ones (borrows), the read slots and the history entry are inside the partials and
        // the state, the written slots distinct and apart from them (checked); grid = groups.
        unsafe { self.launch::<T>(Kernel::CgFusedResident, partials.groups(), &args) }?;
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
        check_cg_slots(partials, slots, true, hist_index, state, &[rr, rz])?;
        let n = checks::pcg_update(x, r, z, p, ap, q, partials, rr, rz)?;
        let sums_ready = self.cg_sums(state, partials, slots, true)?;
        let args = [
            self.ptr(&state.buffer)?,
            index_arg("slot", slots.rr.0)?,
            index_arg("slot", slots.p_ap.0)?,
            index_arg("slot", slots.rz.0)?,
            index_arg("slot", slots.ap_q.0)?,
            index_arg("hist_index", hist_index)?,
            self.ptr(x)?,
            self.ptr(r)?,
            self.ptr(z)?,
            self.ptr(p)?,
            self.ptr(ap)?,
            self.ptr(q)?,
            len_arg(n)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", rr.0)?,
            index_arg("slot", rz.0)?,
            Arg::U32(u32::from(sums_ready)),
        ];
        // SAFETY: pcg_update_resident(double* state, uint slot_rr_in, uint slot_pap,
        // uint slot_rz_in, uint slot_apq, uint hist_index, x, r, z, p, ap, q, uint n, partials,
        // uint slot_rr, uint slot_rz, uint sums_ready): as cg_update_resident (checked).
        unsafe { self.launch::<T>(Kernel::PcgUpdateResident, partials.groups(), &args) }
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
        let mut args = vec![self.ptr(&state.buffer)?];
        args.extend(self.kernel_args(&krylov_launch::bicgstab_s_update_args(
            r, ap, s, partials, rr0, apr0, ss,
        )?)?);
        // SAFETY: bicgstab_s_update_resident(double* state, r, ap, s, uint n, partials,
        // uint slot_rr0, uint slot_apr0, uint slot_ss): see `bicgstab_s_update_args`; block 0
        // writes three entries of the state's header.
        unsafe { self.launch::<T>(Kernel::BicgstabSUpdateResident, partials.groups(), &args) }
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
        let n = check_s_spmv(a, r, ap, s, as_, r0star, partials, update_slots, products)?;
        let [rr0, apr0, ss] = update_slots;
        let mut args = vec![self.ptr(&state.buffer)?];
        // Its successor is the fused update where the backend fuses, which reads its matrix
        // before its wait: started early then (the plain update, which waits first, is not).
        args.extend(self.plain_csr_args(a, n, self.fuses_bicgstab_resident(a))?);
        args.extend([
            self.ptr(r)?,
            self.ptr(ap)?,
            self.ptr(s)?,
            self.ptr(as_)?,
            self.ptr(r0star)?,
            self.ptr(partials.buffer())?,
        ]);
        for slot in [rr0, apr0, ss, products[0], products[1], products[2]] {
            args.push(index_arg("slot", slot.0)?);
        }
        // SAFETY: bicgstab_s_spmv_resident(double* state, row_ptr, col_idx, values, uint n,
        // uint k, uint early, r, ap, s, as_, r0star, partials, six uint slots): a is an n x n CSR matrix
        // without long rows (its arrays as spmv_dots_csr reads them), every vector holds n
        // elements, the slots are inside the partials, the written ones distinct from each
        // other and from the read ones (checked); grid = groups, as spmv_dots and
        // bicgstab_s_update use; block 0 writes three entries of the state's header.
        unsafe { self.launch::<T>(Kernel::BicgstabSSpmvResident, partials.groups(), &args) }?;
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
        check_bicgstab_slots(partials, slots, hist_index, state, [rr0, rr])?;
        let mut args = vec![self.ptr(&state.buffer)?];
        for k in slots.all() {
            args.push(index_arg("slot", k.0)?);
        }
        args.push(index_arg("hist_index", hist_index)?);
        args.extend(self.kernel_args(&krylov_launch::bicgstab_update_args(
            x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr,
        )?)?);
        // SAFETY: bicgstab_update_resident(double* state, five slots, uint hist_index, x, r, p,
        // s, ap, as_, phat, shat, r0star, uint n, partials, uint slot_rr0, uint slot_rr): see
        // `bicgstab_update_args`; the finished slots are inside the partials and differ from the
        // written ones, the history entry is inside the state (checked).
        unsafe { self.launch::<T>(Kernel::BicgstabUpdateResident, partials.groups(), &args) }
    }

    fn fuses_bicgstab_resident<T: Scalar>(&self, a: &DeviceMatrix<T>) -> bool {
        self.tuning().bicgstab_fused_for(true, a.n_rows()) && a.plain_csr().is_some()
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
        // SAFETY: bicgstab_fused_resident(double* state, four uint slots, uint hist_index,
        // row_ptr, col_idx, values, uint n, uint k, uint early, x, r, p, s, ap, as_, r0star,
        // p_out, ap_out, partials, three uint slots): a is an n x n CSR matrix without long rows
        // (its arrays as spmv_dots_csr reads them), every vector holds n elements and the written
        // p_out, ap_out are other buffers than the read ones (borrows), the read slots and the
        // history entry are inside the partials and the state, the written slots distinct and
        // apart from them (checked); grid = groups.
        unsafe { self.launch::<T>(Kernel::BicgstabFusedResident, partials.groups(), &args) }?;
        Ok(true)
    }
}
