//! CUDA implementation of [`KrylovOps`]: the fused solver updates (`kernels/cg.kc`,
//! `kernels/bicgstab.kc`) and the Krylov-basis kernels of GMRES (`kernels/gmres.kc`).
//! Every method is one launch; `multi_axpy` adds one transfer of its coefficients.

use super::module::Kernel;
use super::spmv::Operand;
use super::{index_arg, len_arg, scalar, Arg, CudaBackend};
use crate::backend::buffer::Buffer;
use crate::backend::matrix::DeviceMatrix;
use crate::backend::ops::checks;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{Basis, KrylovOps};
use crate::error::Result;
use crate::scalar::Scalar;
use std::ops::Range;

/// Element offset of basis column `j`.
fn col_off(j: usize, n: usize) -> u64 {
    (j as u64) * (n as u64)
}

impl KrylovOps for CudaBackend {
    fn cg_update<T: Scalar>(
        &self,
        alpha: T,
        beta: T,
        x: &mut Buffer<T>,
        r: &mut Buffer<T>,
        p: &mut Buffer<T>,
        ap: &Buffer<T>,
        partials: &mut Partials<T>,
        rr: Slot,
    ) -> Result<()> {
        let n = checks::cg_update(x, r, p, ap, partials, rr)?;
        let args = [
            scalar(alpha),
            scalar(beta),
            self.ptr(x)?,
            self.ptr(r)?,
            self.ptr(p)?,
            self.ptr(ap)?,
            len_arg(n)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", rr.0)?,
        ];
        // SAFETY: cg_update(alpha, beta, x, r, p, ap, uint n, partials, uint slot_rr): all
        // vectors hold n elements, the slot is inside the partials (checked), grid = groups.
        unsafe { self.launch::<T>(Kernel::CgUpdate, partials.groups(), &args) }
    }

    fn pcg_update<T: Scalar>(
        &self,
        alpha: T,
        beta: T,
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
        let n = checks::pcg_update(x, r, z, p, ap, q, partials, rr, rz)?;
        let args = [
            scalar(alpha),
            scalar(beta),
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
        ];
        // SAFETY: pcg_update(alpha, beta, x, r, z, p, ap, q, uint n, partials, uint slot_rr,
        // uint slot_rz): all vectors hold n elements, distinct slots inside the partials
        // (checked), grid = groups.
        unsafe { self.launch::<T>(Kernel::PcgUpdate, partials.groups(), &args) }
    }

    fn bicgstab_s_update<T: Scalar>(
        &self,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr0: Slot,
        apr0: Slot,
        ss: Slot,
    ) -> Result<()> {
        let args = self.bicgstab_s_update_args(r, ap, s, partials, rr0, apr0, ss)?;
        // SAFETY: bicgstab_s_update(r, ap, s, uint n, partials, uint slot_rr0,
        // uint slot_apr0, uint slot_ss): see `bicgstab_s_update_args`.
        unsafe { self.launch::<T>(Kernel::BicgstabSUpdate, partials.groups(), &args) }
    }

    fn bicgstab_update<T: Scalar>(
        &self,
        alpha: T,
        omega: T,
        beta: T,
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
        let mut args = vec![scalar(alpha), scalar(omega), scalar(beta)];
        args.extend(
            self.bicgstab_update_args(x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr)?,
        );
        // SAFETY: bicgstab_update(alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star,
        // uint n, partials, uint slot_rr0, uint slot_rr): see `bicgstab_update_args`.
        unsafe { self.launch::<T>(Kernel::BicgstabUpdate, partials.groups(), &args) }
    }

    fn basis_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        src: Option<&Buffer<T>>,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        prev_slot: Option<Slot>,
        self_slot: Option<Slot>,
    ) -> Result<()> {
        let n = checks::basis_spmv_dots(a, src, basis, i, partials, prev_slot, self_slot)?;
        let v = self.ptr(&basis.data)?;
        let prev = Operand {
            ptr: v,
            off: col_off(i - 1, n),
        };
        let x = match src {
            Some(z) => Operand {
                ptr: self.ptr(z)?,
                off: 0,
            },
            None => prev,
        };
        let y = Operand {
            ptr: v,
            off: col_off(i, n),
        };
        let w0 = if prev_slot.is_some() {
            prev
        } else {
            Operand::NONE
        };
        let pp = if prev_slot.is_some() || self_slot.is_some() {
            self.ptr(partials.buffer())?
        } else {
            Arg::Ptr(0)
        };
        // SAFETY: spmv_dots_<fmt> with x = z or column i-1, y = column i, w0 = column i-1 of
        // the basis (columns i-1 and i exist, the matrix is n x n: checked), so y never
        // overlaps what is read; <y, y> into self_slot and <y, v_{i-1}> into prev_slot,
        // distinct and inside the partials (checked); grid = groups when a slot is set.
        unsafe {
            self.launch_spmv_dots(
                a,
                x,
                y,
                [w0, Operand::NONE],
                pp,
                [self_slot, prev_slot, None],
                partials.groups(),
            )
        }
    }

    fn basis_dots<T: Scalar>(
        &self,
        basis: &Basis<T>,
        w: usize,
        cols: Range<usize>,
        partials: &mut Partials<T>,
        first_slot: Slot,
    ) -> Result<()> {
        let n = basis.n();
        let count = checks::basis_dots(basis, w, &cols, partials, first_slot)?;
        if count == 0 {
            return Ok(());
        }
        let args = [
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", w)?,
            index_arg("column", cols.start)?,
            index_arg("columns", count)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", first_slot.0)?,
        ];
        // SAFETY: basis_dots(basis, uint n, uint w, uint first_col, uint count, partials,
        // uint first_slot): columns w and first_col .. first_col + count exist and slots
        // first_slot .. first_slot + count lie inside the partials (checked); grid = groups.
        unsafe { self.launch::<T>(Kernel::BasisDots, partials.groups(), &args) }
    }

    fn gmres_gram_schmidt<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        first_slot: Slot,
        norm_slot: Slot,
        rmat: &mut Buffer<T>,
        ld: usize,
    ) -> Result<()> {
        checks::gmres_gram_schmidt(basis, i, partials, first_slot, norm_slot, rmat, ld)?;
        let n = basis.n();
        let args = [
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", i)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", first_slot.0)?,
            index_arg("slot", norm_slot.0)?,
            self.ptr(rmat)?,
            Arg::U64(((i - 1) * ld) as u64),
        ];
        // SAFETY: gmres_gram_schmidt(basis, uint n, uint i, partials, uint first_slot,
        // uint norm_slot, rmat, ulong r_off): columns 1..=i exist; slots first_slot ..
        // first_slot + i - 1 and norm_slot are inside the partials and norm_slot is not read
        // (checked); rmat[r_off .. r_off + i - 1] is inside rmat (ld >= i, len >= ld i);
        // grid = groups, which the kernel uses as the number of partials per slot.
        unsafe { self.launch::<T>(Kernel::GmresGramSchmidt, partials.groups(), &args) }
    }

    fn gmres_normalize<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        i: usize,
        partials: &Partials<T>,
        norm_slot: Slot,
        rmat: &mut Buffer<T>,
        ld: usize,
        xi_partials: &mut Partials<T>,
        xi_slot: Slot,
    ) -> Result<()> {
        checks::gmres_normalize(
            basis,
            i,
            partials,
            norm_slot,
            rmat,
            ld,
            xi_partials,
            xi_slot,
        )?;
        let n = basis.n();
        let args = [
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", i)?,
            self.ptr(partials.buffer())?,
            index_arg("groups", partials.groups())?,
            index_arg("slot", norm_slot.0)?,
            self.ptr(rmat)?,
            Arg::U64(((i - 1) + (i - 1) * ld) as u64),
            self.ptr(xi_partials.buffer())?,
            index_arg("slot", xi_slot.0)?,
        ];
        // SAFETY: gmres_normalize(basis, uint n, uint i, partials, uint read_groups,
        // uint norm_slot, rmat, ulong r_idx, xi_partials, uint xi_slot): columns 0 and i
        // exist; norm_slot with read_groups partials is read from one buffer and xi_slot of
        // another (distinct borrows) is written, both checked; r_idx < ld i <= rmat.len();
        // grid = xi_partials.groups().
        unsafe { self.launch::<T>(Kernel::GmresNormalize, xi_partials.groups(), &args) }
    }

    fn basis_axpy<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        dst: usize,
        src: usize,
        alpha: T,
    ) -> Result<()> {
        checks::basis_axpy(basis, dst, src)?;
        let n = basis.n();
        let args = [
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", dst)?,
            index_arg("column", src)?,
            scalar(alpha),
        ];
        // SAFETY: basis_axpy(basis, uint n, uint dst, uint src, SCALAR alpha): two distinct
        // existing columns (checked).
        unsafe { self.launch::<T>(Kernel::BasisAxpy, self.grid(n), &args) }
    }

    fn basis_scale<T: Scalar>(&self, basis: &mut Basis<T>, col: usize, alpha: T) -> Result<()> {
        basis.check_col(col)?;
        let n = basis.n();
        let args = [
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", col)?,
            scalar(alpha),
        ];
        // SAFETY: basis_scale(basis, uint n, uint col, SCALAR alpha): an existing column.
        unsafe { self.launch::<T>(Kernel::BasisScale, self.grid(n), &args) }
    }

    fn basis_load<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        col: usize,
        src: &Buffer<T>,
        alpha: T,
    ) -> Result<()> {
        checks::basis_vector("basis_load: source length", basis, col, src)?;
        let n = basis.n();
        let args = [
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", col)?,
            self.ptr(src)?,
            scalar(alpha),
        ];
        // SAFETY: basis_load(basis, uint n, uint col, const SCALAR* src, SCALAR alpha): an
        // existing column and a source of n elements (checked).
        unsafe { self.launch::<T>(Kernel::BasisLoad, self.grid(n), &args) }
    }

    fn basis_load_normalized<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        col: usize,
        src: &Buffer<T>,
        partials: &Partials<T>,
        slot: Slot,
        out: &mut Buffer<T>,
        out_off: usize,
    ) -> Result<()> {
        checks::basis_load_normalized(basis, col, src, partials, slot, out, out_off)?;
        let n = basis.n();
        let args = [
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", col)?,
            self.ptr(src)?,
            self.ptr(partials.buffer())?,
            index_arg("groups", partials.groups())?,
            index_arg("slot", slot.0)?,
            self.ptr(out)?,
            Arg::U64(out_off as u64),
        ];
        // SAFETY: basis_load_normalized(basis, uint n, uint col, src, partials, uint groups,
        // uint slot, out, ulong out_off): an existing column, a source of n elements, a slot
        // of `groups` partials inside the buffer and out_off inside `out` (checked).
        unsafe { self.launch::<T>(Kernel::BasisLoadNormalized, self.grid(n), &args) }
    }

    fn basis_store<T: Scalar>(
        &self,
        basis: &Basis<T>,
        col: usize,
        dst: &mut Buffer<T>,
    ) -> Result<()> {
        checks::basis_vector("basis_store: destination length", basis, col, dst)?;
        let n = basis.n();
        let args = [
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", col)?,
            self.ptr(dst)?,
        ];
        // SAFETY: basis_store(const SCALAR* basis, uint n, uint col, SCALAR* dst): an
        // existing column and a destination of n elements (checked).
        unsafe { self.launch::<T>(Kernel::BasisStore, self.grid(n), &args) }
    }

    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()> {
        checks::multi_axpy(y, basis, &cols, coeffs)?;
        self.check_alive()?;
        let coeff_ptr = if coeffs.is_empty() {
            0
        } else {
            self.upload_coefficients(coeffs)?
        };
        // SAFETY: the backend's coefficient buffer holds the count coefficients copied just
        // before on the same stream.
        unsafe { self.launch_multi_axpy(y, basis, cols, Arg::Ptr(coeff_ptr)) }
    }

    fn multi_axpy_device<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &Buffer<T>,
    ) -> Result<()> {
        checks::multi_axpy_device(y, basis, &cols, coeffs)?;
        // SAFETY: coeffs holds at least count values (checked).
        unsafe { self.launch_multi_axpy(y, basis, cols, self.ptr(coeffs)?) }
    }

    fn gmres_dcgs2_last_sums<T: Scalar>(
        &self,
        pa: &Partials<T>,
        count: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_last_sums(pa, count, coef, coef_off)?;
        let args = [
            self.ptr(pa.buffer())?,
            self.ptr(pa.buffer())?,
            index_arg("groups", pa.groups())?,
            index_arg("columns", count)?,
            self.ptr(coef)?,
            Arg::U64(coef_off as u64),
        ];
        // SAFETY: gmres_dcgs2_finish(pa, pc, uint read_groups, uint count, coef, ulong
        // coef_off) launched with count + 1 blocks reads only pa (slots 0..=count, checked)
        // and writes coef[coef_off + k], k < count, and coef[coef_off + 2 count + 2] (inside
        // `coef`, checked).
        unsafe { self.launch::<T>(Kernel::GmresDcgs2Finish, count + 1, &args) }
    }

    fn basis_dots2<T: Scalar>(
        &self,
        basis: &Basis<T>,
        wa: usize,
        wb: usize,
        cols: Range<usize>,
        count_b: usize,
        pa: &mut Partials<T>,
        pb: &mut Partials<T>,
    ) -> Result<()> {
        let count = checks::basis_dots2(basis, wa, wb, &cols, count_b, pa, pb)?;
        if count == 0 {
            return Ok(());
        }
        let args = [
            self.ptr(&basis.data)?,
            len_arg(basis.n())?,
            index_arg("column", wa)?,
            index_arg("column", wb)?,
            index_arg("column", cols.start)?,
            index_arg("columns", count)?,
            index_arg("columns", count_b)?,
            self.ptr(pa.buffer())?,
            self.ptr(pb.buffer())?,
        ];
        // SAFETY: basis_dots2(basis, uint n, uint wa, uint wb, uint first_col, uint count_a,
        // uint count_b, pa, pb): the columns exist, count_b <= count_a and the slots lie inside
        // both partials, which have the launch's group count (checked).
        unsafe { self.launch::<T>(Kernel::BasisDots2, pa.groups(), &args) }
    }

    fn fuses_dcgs2_spmv_dots<T: Scalar>(&self, a: &DeviceMatrix<T>, ucol: usize) -> bool {
        // The kernels' warps take every column in one pass: 4 per warp. SELL: the sorted
        // positions of a block's tile hold its rows.
        let block = self.block as usize;
        ucol <= 4 * (block / 32)
            && (a.plain_csr().is_some()
                || (a.sell_rows_within_tiles(block) && self.tuning().dcgs2_sell_fused_for(true)))
    }

    fn gmres_dcgs2_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        basis: &mut Basis<T>,
        ucol: usize,
        pa: &mut Partials<T>,
        pb: &mut Partials<T>,
    ) -> Result<bool> {
        if !self.fuses_dcgs2_spmv_dots(a, ucol) {
            return Ok(false);
        }
        let n = checks::gmres_dcgs2_spmv_dots(a, basis, ucol, pa, pb)?;
        let Some((row_ptr, col_idx, values)) = a.plain_csr() else {
            // SELL (fuses_dcgs2_spmv_dots: windows within the block's tiles).
            let (mut args, _, _) = super::spmv::matrix_args(self, a)?;
            args.extend([
                self.ptr(&basis.data)?,
                index_arg("column", ucol)?,
                self.ptr(pa.buffer())?,
                self.ptr(pb.buffer())?,
            ]);
            // SAFETY: gmres_dcgs2_spmv_dots_sell(SELL arguments of spmv_dots_sell up to
            // slice_col, basis, uint ucol, pa, pb): a is an n x n SELL matrix whose sorting
            // windows divide the block size, columns 1..=ucol + 1 exist, slots 0..ucol-1 of
            // pa and pb exist with the launch's group count, ucol <= the columns one pass of
            // the block's warps takes (checked).
            unsafe { self.launch::<T>(Kernel::GmresDcgs2SpmvDotsSell, pa.groups(), &args) }?;
            return Ok(true);
        };
        let args = [
            self.ptr(row_ptr)?,
            self.ptr(col_idx)?,
            self.ptr(values)?,
            Arg::U32(super::spmv::csr_lanes(self.tuning().csr_lanes, a.nnz(), n)),
            Arg::U32(super::spmv::early_bits(self.tuning(), a, false)),
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", ucol)?,
            self.ptr(pa.buffer())?,
            self.ptr(pb.buffer())?,
        ];
        // SAFETY: gmres_dcgs2_spmv_dots(row_ptr, col_idx, values, uint k, uint early, basis, uint n,
        // uint ucol, pa, pb): a is an n x n CSR matrix without long rows, columns 1..=ucol + 1
        // exist (u = ucol is read, w = ucol + 1 written, never read as a column), slots
        // 0..ucol-1 of pa and pb exist and both partials have the launch's group count, ucol
        // <= the columns one pass of the block's warps takes (checked).
        unsafe { self.launch::<T>(Kernel::GmresDcgs2SpmvDots, pa.groups(), &args) }?;
        Ok(true)
    }

    fn gmres_dcgs2_update<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        pa: &Partials<T>,
        pc: &Partials<T>,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_update(basis, ucol, pa, pc, coef, coef_off)?;
        let n = basis.n();
        let count = ucol - 1;
        if self
            .tuning()
            .dcgs2_small_for(pa.groups(), count, self.block as usize)
        {
            let args = [
                self.ptr(&basis.data)?,
                len_arg(n)?,
                index_arg("column", ucol)?,
                self.ptr(pa.buffer())?,
                self.ptr(pc.buffer())?,
                self.ptr(coef)?,
                Arg::U64(coef_off as u64),
                Arg::U32(self.dcgs2_start_next(pa.groups())),
            ];
            // SAFETY: gmres_dcgs2_update_small(basis, uint n, uint ucol, pa, pc, coef,
            // ulong coef_off, uint start_next): columns 1..=ucol+1 exist, both partials hold slots 0..=count with
            // `groups` blocks (the grid), 2 (count + 1) <= the block size, and coef holds
            // 2 count + 4 values at coef_off (checked).
            return unsafe { self.launch::<T>(Kernel::GmresDcgs2UpdateSmall, pa.groups(), &args) };
        }
        // The step's sums once, then the update reads them (2 launches; every block of a single
        // fused kernel re-summing all 2 (count + 1) slots cost more than a launch).
        self.launch_dcgs2_finish(pa, pc, count, coef, coef_off)?;
        self.launch_dcgs2_update(basis, ucol, coef, coef_off, pa.groups())
    }

    fn gmres_dcgs2_sums<T: Scalar>(
        &self,
        basis: &Basis<T>,
        ucol: usize,
        pa: &Partials<T>,
        pc: &Partials<T>,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_update(basis, ucol, pa, pc, coef, coef_off)?;
        self.launch_dcgs2_finish(pa, pc, ucol - 1, coef, coef_off)
    }

    fn gmres_dcgs2_apply<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_apply(basis, ucol, coef, coef_off)?;
        let groups = self.groups_for(basis.n());
        self.launch_dcgs2_update(basis, ucol, coef, coef_off, groups)
    }
}

impl CudaBackend {
    /// Launch `gmres_dcgs2_finish` (2 (count + 1) blocks) on partials and coefficients the
    /// caller checked (`checks::gmres_dcgs2_update`).
    fn launch_dcgs2_finish<T: Scalar>(
        &self,
        pa: &Partials<T>,
        pc: &Partials<T>,
        count: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        let finish_args = [
            self.ptr(pa.buffer())?,
            self.ptr(pc.buffer())?,
            index_arg("groups", pa.groups())?,
            index_arg("columns", count)?,
            self.ptr(coef)?,
            Arg::U64(coef_off as u64),
        ];
        // SAFETY: gmres_dcgs2_finish(pa, pc, uint read_groups, uint count, coef, ulong coef_off):
        // both partials hold slots 0..=count with read_groups groups and coef holds
        // 2 count + 4 values at coef_off (checked by the callers); one block per slot.
        unsafe { self.launch::<T>(Kernel::GmresDcgs2Finish, 2 * (count + 1), &finish_args) }
    }

    /// The `start_next` argument of the DCGS2 updates launched with `groups` blocks: 1 (let the
    /// fused product that follows be scheduled right after the update's wait) only where the
    /// update and that product, each with `groups` blocks, fit on separate multiprocessors.
    /// With the product's blocks sharing the update's multiprocessors, GMRES(30) was 2-3 us
    /// per iteration slower at n = 32K-65K (bench/log/, issue 15, 2026-11-27).
    fn dcgs2_start_next(&self, groups: usize) -> u32 {
        u32::from(2 * groups <= self.state.device.multiprocessors)
    }

    /// Launch `gmres_dcgs2_update` with `groups` blocks on columns and coefficients the caller
    /// checked (`checks::gmres_dcgs2_update` or `checks::gmres_dcgs2_apply`).
    fn launch_dcgs2_update<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
        groups: usize,
    ) -> Result<()> {
        let args = [
            self.ptr(&basis.data)?,
            len_arg(basis.n())?,
            index_arg("column", ucol)?,
            self.ptr(coef)?,
            Arg::U64(coef_off as u64),
            Arg::U32(self.dcgs2_start_next(groups)),
        ];
        // SAFETY: gmres_dcgs2_update(basis, uint n, uint ucol, coef, ulong coef_off,
        // uint start_next): columns
        // 1..=ucol+1 exist and coef holds the 2 count + 4 values at coef_off that
        // gmres_dcgs2_finish (or the ranks' sums) wrote, on the same stream (checked); the
        // kernel strides over n, any grid works.
        unsafe { self.launch::<T>(Kernel::GmresDcgs2Update, groups, &args) }
    }

    /// Launch `multi_axpy` (y, basis, uint n, uint first_col, uint count, coeffs) on y and
    /// columns the caller checked.
    ///
    /// # Safety
    /// `coeffs` must be a device address of at least `cols.len()` coefficients, valid until
    /// the kernel has run on this stream.
    unsafe fn launch_multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: Arg,
    ) -> Result<()> {
        let n = basis.n();
        let args = [
            self.ptr(y)?,
            self.ptr(&basis.data)?,
            len_arg(n)?,
            index_arg("column", cols.start)?,
            index_arg("columns", cols.len())?,
            coeffs,
        ];
        // SAFETY: multi_axpy(y, basis, uint n, uint first_col, uint count, coeffs): y holds n
        // elements and the columns exist (checked by the callers); the coefficients are the
        // caller's promise.
        unsafe { self.launch::<T>(Kernel::MultiAxpy, self.grid(n), &args) }
    }

    /// The arguments of `bicgstab_s_update` and (after the state) `bicgstab_s_update_resident`,
    /// checked: vectors hold n elements; the read slots and the written slot differ (so no
    /// block overwrites a partial another block still reads) and lie inside the partials;
    /// launched with grid = groups, which the kernel also uses as the number of partials to
    /// finish.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bicgstab_s_update_args<T: Scalar>(
        &self,
        r: &Buffer<T>,
        ap: &Buffer<T>,
        s: &Buffer<T>,
        partials: &Partials<T>,
        rr0: Slot,
        apr0: Slot,
        ss: Slot,
    ) -> Result<Vec<Arg>> {
        let n = checks::bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss)?;
        Ok(vec![
            self.ptr(r)?,
            self.ptr(ap)?,
            self.ptr(s)?,
            len_arg(n)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", rr0.0)?,
            index_arg("slot", apr0.0)?,
            index_arg("slot", ss.0)?,
        ])
    }

    /// The arguments of `bicgstab_update` and `bicgstab_update_resident` after their first
    /// (the scalars or the state), checked: every vector holds n elements; without
    /// preconditioning phat = p (each thread reads phat_i before it writes p_i) and shat = s;
    /// distinct slots inside the partials; launched with grid = groups.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bicgstab_update_args<T: Scalar>(
        &self,
        x: &Buffer<T>,
        r: &Buffer<T>,
        p: &Buffer<T>,
        s: &Buffer<T>,
        ap: &Buffer<T>,
        as_: &Buffer<T>,
        phat: Option<&Buffer<T>>,
        shat: Option<&Buffer<T>>,
        r0star: &Buffer<T>,
        partials: &Partials<T>,
        rr0: Slot,
        rr: Slot,
    ) -> Result<Vec<Arg>> {
        let n =
            checks::bicgstab_update(x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr)?;
        let p_ptr = self.ptr(p)?;
        let s_ptr = self.ptr(s)?;
        Ok(vec![
            self.ptr(x)?,
            self.ptr(r)?,
            p_ptr,
            s_ptr,
            self.ptr(ap)?,
            self.ptr(as_)?,
            phat.map_or(Ok(p_ptr), |v| self.ptr(v))?,
            shat.map_or(Ok(s_ptr), |v| self.ptr(v))?,
            self.ptr(r0star)?,
            len_arg(n)?,
            self.ptr(partials.buffer())?,
            index_arg("slot", rr0.0)?,
            index_arg("slot", rr.0)?,
        ])
    }
}
