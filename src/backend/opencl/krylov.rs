//! OpenCL implementation of [`KrylovOps`]: the fused solver updates of `kernels-cl/cg.cl`,
//! `bicgstab.cl` and the basis kernels of `gmres.cl`, each one launch.

use super::launch::Arg;
use super::spmv::{Dots, View};
use super::OpenClBackend;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::matrix::DeviceMatrix;
use crate::backend::partials::{Partials, Slot};
use crate::backend::{Basis, KrylovOps};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

fn same_len<T: Scalar>(n: usize, bufs: &[(&str, &Buffer<T>)]) -> Result<()> {
    for (what, b) in bufs {
        check_len(what, b, n)?;
    }
    Ok(())
}

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
        let n = x.len();
        same_len(
            n,
            &[
                ("cg_update: r", r),
                ("cg_update: p", p),
                ("cg_update: Ap", ap),
            ],
        )?;
        partials.check(rr, n)?;
        self.launch::<T>(
            "cg_update",
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
        let n = x.len();
        same_len(
            n,
            &[
                ("pcg_update: r", r),
                ("pcg_update: z", z),
                ("pcg_update: p", p),
            ],
        )?;
        same_len(n, &[("pcg_update: Ap", ap), ("pcg_update: q", q)])?;
        partials.check(rr, n)?;
        partials.check(rz, n)?;
        if rr == rz {
            return Err(Error::param("slots", "pcg_update slots must differ"));
        }
        self.launch::<T>(
            "pcg_update",
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
        let n = r.len();
        same_len(
            n,
            &[("bicgstab_s_update: Ap", ap), ("bicgstab_s_update: s", s)],
        )?;
        for slot in [rr0, apr0, ss] {
            partials.check(slot, n)?;
        }
        if ss == rr0 || ss == apr0 {
            return Err(Error::param("slots", "bicgstab_s_update: ss must differ"));
        }
        self.launch::<T>(
            "bicgstab_s_update",
            partials.groups(),
            &[
                Arg::Mem(self.mem(r)?),
                Arg::Mem(self.mem(ap)?),
                Arg::Mem(self.mem(s)?),
                Arg::uint(Self::len_u32(n)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(rr0)?,
                Self::slot_arg(apr0)?,
                Self::slot_arg(ss)?,
            ],
        )
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
        let n = x.len();
        same_len(
            n,
            &[
                ("bicgstab_update: r", r),
                ("bicgstab_update: p", p),
                ("bicgstab_update: s", s),
                ("bicgstab_update: Ap", ap),
                ("bicgstab_update: As", as_),
                ("bicgstab_update: r0*", r0star),
            ],
        )?;
        if let Some(v) = phat {
            check_len("bicgstab_update: phat", v, n)?;
        }
        if let Some(v) = shat {
            check_len("bicgstab_update: shat", v, n)?;
        }
        partials.check(rr0, n)?;
        partials.check(rr, n)?;
        if rr0 == rr {
            return Err(Error::param("slots", "bicgstab_update slots must differ"));
        }
        let pm = self.mem(p)?;
        let sm = self.mem(s)?;
        // Without preconditioning p^ = p and s^ = s: the kernel reads p_i before writing it.
        let phm = match phat {
            Some(v) => self.mem(v)?,
            None => pm,
        };
        let shm = match shat {
            Some(v) => self.mem(v)?,
            None => sm,
        };
        self.launch::<T>(
            "bicgstab_update",
            partials.groups(),
            &[
                Arg::scalar(alpha),
                Arg::scalar(omega),
                Arg::scalar(beta),
                Arg::Mem(self.mem(x)?),
                Arg::Mem(self.mem(r)?),
                Arg::Mem(pm),
                Arg::Mem(sm),
                Arg::Mem(self.mem(ap)?),
                Arg::Mem(self.mem(as_)?),
                Arg::Mem(phm),
                Arg::Mem(shm),
                Arg::Mem(self.mem(r0star)?),
                Arg::uint(Self::len_u32(n)?),
                Arg::Mem(self.mem(partials.buffer())?),
                Self::slot_arg(rr0)?,
                Self::slot_arg(rr)?,
            ],
        )
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
        if i == 0 {
            return Err(Error::param("i", "basis_spmv_dots needs i >= 1"));
        }
        basis.check_col(i)?;
        let n = basis.n();
        if a.n_rows() != n || a.n_cols() != n {
            return Err(Error::dims("basis length vs square matrix", n, a.n_rows()));
        }
        if let Some(z) = src {
            check_len("basis_spmv_dots: source length", z, n)?;
        }
        for s in prev_slot.iter().chain(self_slot.iter()) {
            partials.check(*s, n)?;
        }
        if prev_slot.is_some() && prev_slot == self_slot {
            return Err(Error::param("slots", "basis_spmv_dots slots must differ"));
        }
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
        basis.check_col(w)?;
        basis.check_range(&cols)?;
        let n = basis.n();
        let count = cols.len();
        if count == 0 {
            return Ok(());
        }
        partials.check(Slot(first_slot.0 + count - 1), n)?;
        self.launch::<T>(
            "basis_dots",
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
        basis.check_col(i)?;
        let n = basis.n();
        partials.check(norm_slot, n)?;
        if i >= 2 {
            partials.check(Slot(first_slot.0 + i - 2), n)?;
        }
        if i == 0 || ld < i || rmat.len() < ld * i {
            return Err(Error::param("rmat", "R matrix too small for column i"));
        }
        // Every work-group reads the coefficient slots while others write the norm slot.
        if i >= 2 && (first_slot.0..first_slot.0 + i - 1).contains(&norm_slot.0) {
            return Err(Error::param(
                "slots",
                "gmres_gram_schmidt: norm_slot must differ from the coefficient slots",
            ));
        }
        self.launch::<T>(
            "gmres_gram_schmidt",
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
        basis.check_col(i)?;
        let n = basis.n();
        if i == 0 || ld < i || rmat.len() < ld * i {
            return Err(Error::param("rmat", "R matrix too small for column i"));
        }
        partials.check(norm_slot, n)?;
        xi_partials.check(xi_slot, n)?;
        let read_groups = u32::try_from(partials.groups())
            .map_err(|_| Error::param("partials", "too many groups"))?;
        self.launch::<T>(
            "gmres_normalize",
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
        basis.check_col(dst)?;
        basis.check_col(src)?;
        if dst == src {
            return Err(Error::param(
                "columns",
                "basis_axpy: dst and src must differ",
            ));
        }
        let n = basis.n();
        self.launch::<T>(
            "basis_axpy",
            self.groups_for(n),
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
            "basis_scale",
            self.groups_for(n),
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
        basis.check_col(c)?;
        let n = basis.n();
        check_len("basis_load: source length", src, n)?;
        self.launch::<T>(
            "basis_load",
            self.groups_for(n),
            &[
                Arg::Mem(self.mem(basis.buffer())?),
                Arg::uint(Self::len_u32(n)?),
                col(c),
                Arg::Mem(self.mem(src)?),
                Arg::scalar(alpha),
            ],
        )
    }

    fn basis_store<T: Scalar>(
        &self,
        basis: &Basis<T>,
        c: usize,
        dst: &mut Buffer<T>,
    ) -> Result<()> {
        basis.check_col(c)?;
        let n = basis.n();
        check_len("basis_store: destination length", dst, n)?;
        self.launch::<T>(
            "basis_store",
            self.groups_for(n),
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
        basis.check_range(&cols)?;
        let n = basis.n();
        check_len("multi_axpy: y length", y, n)?;
        if coeffs.len() != cols.len() {
            return Err(Error::dims(
                "multi_axpy: coefficients vs columns",
                cols.len(),
                coeffs.len(),
            ));
        }
        let (ym, bm) = (self.mem(y)?, self.mem(basis.buffer())?);
        let n32 = Self::len_u32(n)?;
        // The lock is held from the upload to the enqueue, so concurrent callers cannot
        // overwrite coefficients a queued kernel has not read yet (the queue is in order).
        let mut guard = self.coeffs.lock().unwrap_or_else(|p| p.into_inner());
        let bytes = std::mem::size_of_val(coeffs);
        if !matches!(guard.as_ref(), Some(b) if b.bytes >= bytes) {
            *guard = Some(self.create_raw::<T>(coeffs.len().max(64))?);
        }
        let Some(cbuf) = guard.as_ref() else {
            return Err(Error::Unsupported(
                "multi_axpy coefficient buffer missing".into(),
            ));
        };
        self.counters.transfer();
        self.write_raw(cbuf, coeffs)?;
        self.launch::<T>(
            "multi_axpy",
            self.groups_for(n),
            &[
                Arg::Mem(ym),
                Arg::Mem(bm),
                Arg::uint(n32),
                col(cols.start),
                Arg::uint(cols.len() as u32),
                Arg::Mem(cbuf),
            ],
        )
    }
}
