//! OpenCL implementation of [`KrylovOps`]: the fused solver updates of `kernels/cg.kc`,
//! `bicgstab.cl` and the basis kernels of `gmres.cl`, each one launch.

use super::launch::Arg;
use super::raw::RawBuffer;
use super::spmv::{Dots, View};
use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::matrix::DeviceMatrix;
use crate::backend::ops::checks;
use crate::backend::ops::Kernel;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{Basis, KrylovOps};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// A basis column index as a kernel `uint` (checked against the basis by the caller).
fn col(j: usize) -> Arg<'static> {
    Arg::uint(j as u32)
}

impl KrylovOps for OpenClBackend {
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
        self.launch::<T>(
            Kernel::CgUpdate,
            partials.groups(),
            &[
                Arg::scalar(alpha),
                Arg::scalar(beta),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(r)?),
                Arg::Mem(self.mem(p)?),
                Arg::Mem(self.mem(ap)?),
                Arg::uint(Self::len_u32(n)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(rr)?,
            ],
        )
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
        self.launch::<T>(
            Kernel::PcgUpdate,
            partials.groups(),
            &[
                Arg::scalar(alpha),
                Arg::scalar(beta),
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
            ],
        )
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
        self.launch::<T>(Kernel::BicgstabSUpdate, partials.groups(), &args)
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
        let mut args = vec![Arg::scalar(alpha), Arg::scalar(omega), Arg::scalar(beta)];
        args.extend(
            self.bicgstab_update_args(x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr)?,
        );
        self.launch::<T>(Kernel::BicgstabUpdate, partials.groups(), &args)
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
        let bm = self.mem(basis.buffer())?;
        let prev = View::at(bm, (i - 1) * n);
        let x = match src {
            Some(z) => View::at(self.mem(z)?, 0),
            None => prev,
        };
        let y = View::at(bm, i * n);
        let dots = Dots {
            yy: Self::opt_slot(self_slot)?,
            w0: (prev, Self::opt_slot(prev_slot)?),
            w1: (prev, -1),
        };
        let groups = if prev_slot.is_some() || self_slot.is_some() {
            partials.groups()
        } else {
            self.groups_for(n)
        };
        let pm = self.mem(partials.buffer())?;
        self.launch_spmv_dots(a, x, y, dots, pm, groups)
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
        self.launch::<T>(
            Kernel::BasisDots,
            partials.groups(),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(w),
                col(cols.start),
                Arg::uint(count as u32),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(first_slot)?,
            ],
        )
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
        self.launch::<T>(
            Kernel::GmresGramSchmidt,
            partials.groups(),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(i),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(first_slot)?,
                Self::slot_arg(norm_slot)?,
                Arg::Mem(self.mem(rmat)?),
                Arg::ulong(((i - 1) * ld) as u64),
            ],
        )
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
        let read_groups = u32::try_from(partials.groups())
            .map_err(|_| Error::param("partials", "too many groups"))?;
        self.launch::<T>(
            Kernel::GmresNormalize,
            xi_partials.groups(),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(i),
                Arg::Mem(self.mem(partials.buffer())?),
                Arg::uint(read_groups),
                Self::slot_arg(norm_slot)?,
                Arg::Mem(self.mem(rmat)?),
                Arg::ulong(((i - 1) + (i - 1) * ld) as u64),
                Arg::Mem(self.mem(xi_partials.buffer())?),
                Self::slot_arg(xi_slot)?,
            ],
        )
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
        self.launch::<T>(
            Kernel::BasisAxpy,
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(dst),
                col(src),
                Arg::scalar(alpha),
            ],
        )
    }

    fn basis_scale<T: Scalar>(&self, basis: &mut Basis<T>, c: usize, alpha: T) -> Result<()> {
        basis.check_col(c)?;
        let n = basis.n();
        self.launch::<T>(
            Kernel::BasisScale,
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(c),
                Arg::scalar(alpha),
            ],
        )
    }

    fn basis_load<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        c: usize,
        src: &Buffer<T>,
        alpha: T,
    ) -> Result<()> {
        checks::basis_vector("basis_load: source length", basis, c, src)?;
        let n = basis.n();
        self.launch::<T>(
            Kernel::BasisLoad,
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(c),
                Arg::Mem(self.mem(src)?),
                Arg::scalar(alpha),
            ],
        )
    }

    fn basis_load_normalized<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        c: usize,
        src: &Buffer<T>,
        partials: &Partials<T>,
        slot: Slot,
        out: &mut Buffer<T>,
        out_off: usize,
    ) -> Result<()> {
        checks::basis_load_normalized(basis, c, src, partials, slot, out, out_off)?;
        let n = basis.n();
        self.launch::<T>(
            Kernel::BasisLoadNormalized,
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(c),
                Arg::Mem(self.mem(src)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Arg::uint(partials.groups() as u32),
                Arg::uint(slot.0 as u32),
                Arg::Mem(self.mem(out)?),
                Arg::ulong(out_off as u64),
            ],
        )
    }

    fn basis_store<T: Scalar>(
        &self,
        basis: &Basis<T>,
        c: usize,
        dst: &mut Buffer<T>,
    ) -> Result<()> {
        checks::basis_vector("basis_store: destination length", basis, c, dst)?;
        let n = basis.n();
        self.launch::<T>(
            Kernel::BasisStore,
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(c),
                Arg::Mem(self.mem(dst)?),
            ],
        )
    }

    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()> {
        checks::multi_axpy(y, basis, &cols, coeffs)?;
        // The lock is held from the upload to the enqueue, so concurrent callers cannot
        // overwrite coefficients a queued kernel has not read yet (the queue is in order).
        let mut guard = self.coeffs.lock().unwrap_or_else(|p| p.into_inner());
        let cbuf = self.upload_coefficients(&mut guard, coeffs)?;
        self.launch_multi_axpy::<T>(y, basis, cols, cbuf)
    }

    fn multi_axpy_device<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &Buffer<T>,
    ) -> Result<()> {
        checks::multi_axpy_device(y, basis, &cols, coeffs)?;
        self.launch_multi_axpy::<T>(y, basis, cols, self.mem(coeffs)?)
    }

    fn gmres_dcgs2_last_sums<T: Scalar>(
        &self,
        pa: &Partials<T>,
        count: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        checks::gmres_dcgs2_last_sums(pa, count, coef, coef_off)?;
        // gmres_dcgs2_finish with count + 1 groups reads only pa.
        self.launch::<T>(
            Kernel::GmresDcgs2Finish,
            count + 1,
            &[
                Arg::Mem(self.mem(pa.buffer())?),
                Arg::Mem(self.mem(pa.buffer())?),
                Arg::uint(pa.groups() as u32),
                Arg::uint(count as u32),
                Arg::Mem(self.mem(coef)?),
                Arg::ulong(coef_off as u64),
            ],
        )
    }

    fn fuses_dcgs2_spmv_dots<T: Scalar>(&self, a: &DeviceMatrix<T>, ucol: usize) -> bool {
        // CSR: any number of columns (in chunks). SELL: one pass of the group's teams (4
        // columns per team of 32), the sorted positions of a group's tile hold its rows, and
        // only when asked for (measured slower than the two kernels on NVIDIA OpenCL).
        a.plain_csr().is_some()
            || (ucol <= 4 * (self.wg / 32).max(1)
                && a.sell_rows_within_tiles(self.wg)
                && self.tuning().dcgs2_sell_fused_for(false))
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
            // SELL (fuses_dcgs2_spmv_dots: windows within the group's tiles).
            let (_, mut args) = self.matrix_args(a)?;
            args.extend([
                Arg::Mem(self.mem(basis.buffer())?),
                col(ucol),
                Arg::Mem(self.mem(pa.buffer())?),
                Arg::Mem(self.mem(pb.buffer())?),
            ]);
            self.launch::<T>(Kernel::GmresDcgs2SpmvDotsSell, pa.groups(), &args)?;
            return Ok(true);
        };
        self.launch::<T>(
            Kernel::GmresDcgs2SpmvDots,
            pa.groups(),
            &[
                Arg::Mem(self.mem(row_ptr)?),
                Arg::Mem(self.mem(col_idx)?),
                Arg::Mem(self.mem(values)?),
                Arg::uint(self.csr_lanes(a.nnz(), n)),
                // early: the CUDA kernel's early matrix reads (ignored here).
                Arg::uint(0),
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(ucol),
                Arg::Mem(self.mem(pa.buffer())?),
                Arg::Mem(self.mem(pb.buffer())?),
            ],
        )?;
        Ok(true)
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
        self.launch::<T>(
            Kernel::BasisDots2,
            pa.groups(),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(basis.n())?),
                col(wa),
                col(wb),
                col(cols.start),
                Arg::uint(count as u32),
                Arg::uint(count_b as u32),
                Arg::Mem(self.mem(pa.buffer())?),
                Arg::Mem(self.mem(pb.buffer())?),
            ],
        )
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
        if self.tuning().dcgs2_small_for(pa.groups(), count, self.wg) {
            return self.launch::<T>(
                Kernel::GmresDcgs2UpdateSmall,
                pa.groups(),
                &[
                    Arg::Mem(self.mem(basis.buffer())?),
                    Arg::uint(Self::len_u32(n)?),
                    col(ucol),
                    Arg::Mem(self.mem(pa.buffer())?),
                    Arg::Mem(self.mem(pc.buffer())?),
                    Arg::Mem(self.mem(coef)?),
                    Arg::ulong(coef_off as u64),
                    Arg::uint(0),
                ],
            );
        }
        // The step's sums once, then the update reads them (2 launches; every group of a single
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

impl OpenClBackend {
    /// Enqueue `gmres_dcgs2_finish` (2 (count + 1) groups) on partials and coefficients the
    /// caller checked.
    fn launch_dcgs2_finish<T: Scalar>(
        &self,
        pa: &Partials<T>,
        pc: &Partials<T>,
        count: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        self.launch::<T>(
            Kernel::GmresDcgs2Finish,
            2 * (count + 1),
            &[
                Arg::Mem(self.mem(pa.buffer())?),
                Arg::Mem(self.mem(pc.buffer())?),
                Arg::uint(pa.groups() as u32),
                Arg::uint(count as u32),
                Arg::Mem(self.mem(coef)?),
                Arg::ulong(coef_off as u64),
            ],
        )
    }

    /// Enqueue `gmres_dcgs2_update` with `groups` groups (it strides over n) on columns and
    /// coefficients the caller checked.
    fn launch_dcgs2_update<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
        groups: usize,
    ) -> Result<()> {
        self.launch::<T>(
            Kernel::GmresDcgs2Update,
            groups,
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(basis.n())?),
                col(ucol),
                Arg::Mem(self.mem(coef)?),
                Arg::ulong(coef_off as u64),
                Arg::uint(0),
            ],
        )
    }

    /// Enqueue `multi_axpy` on y and columns the caller checked, with `coeffs` holding at
    /// least `cols.len()` coefficients.
    fn launch_multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &RawBuffer,
    ) -> Result<()> {
        let n = basis.n();
        self.launch::<T>(
            Kernel::MultiAxpy,
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(y)?),
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(cols.start),
                Arg::uint(cols.len() as u32),
                Arg::Mem(coeffs),
            ],
        )
    }

    /// The arguments of `bicgstab_s_update` and (after the state) `bicgstab_s_update_resident`,
    /// checked.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bicgstab_s_update_args<'a, T: Scalar>(
        &self,
        r: &'a Buffer<T>,
        ap: &'a Buffer<T>,
        s: &'a Buffer<T>,
        partials: &'a Partials<T>,
        rr0: Slot,
        apr0: Slot,
        ss: Slot,
    ) -> Result<Vec<Arg<'a>>> {
        let n = checks::bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss)?;
        Ok(vec![
            Arg::Mem(self.mem(r)?),
            Arg::Mem(self.mem(ap)?),
            Arg::Mem(self.mem(s)?),
            Arg::uint(Self::len_u32(n)?),
            Arg::Mem(self.mem(partials.buffer())?),
            Self::slot_arg(rr0)?,
            Self::slot_arg(apr0)?,
            Self::slot_arg(ss)?,
        ])
    }

    /// The arguments of `bicgstab_update` and `bicgstab_update_resident` after their first
    /// (the scalars or the state), checked. Without preconditioning p^ = p and s^ = s: the
    /// kernel reads p_i before writing it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bicgstab_update_args<'a, T: Scalar>(
        &self,
        x: &'a Buffer<T>,
        r: &'a Buffer<T>,
        p: &'a Buffer<T>,
        s: &'a Buffer<T>,
        ap: &'a Buffer<T>,
        as_: &'a Buffer<T>,
        phat: Option<&'a Buffer<T>>,
        shat: Option<&'a Buffer<T>>,
        r0star: &'a Buffer<T>,
        partials: &'a Partials<T>,
        rr0: Slot,
        rr: Slot,
    ) -> Result<Vec<Arg<'a>>> {
        let n =
            checks::bicgstab_update(x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr)?;
        let pm = self.mem(p)?;
        let sm = self.mem(s)?;
        Ok(vec![
            Arg::Mem(self.mem(x)?),
            Arg::Mem(self.mem(r)?),
            Arg::Mem(pm),
            Arg::Mem(sm),
            Arg::Mem(self.mem(ap)?),
            Arg::Mem(self.mem(as_)?),
            Arg::Mem(phat.map_or(Ok(pm), |v| self.mem(v))?),
            Arg::Mem(shat.map_or(Ok(sm), |v| self.mem(v))?),
            Arg::Mem(self.mem(r0star)?),
            Arg::uint(Self::len_u32(n)?),
            Arg::Mem(self.mem(partials.buffer())?),
            Self::slot_arg(rr0)?,
            Self::slot_arg(rr)?,
        ])
    }
}
