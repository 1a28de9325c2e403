//! OpenCL implementation of [`HaloOps`] (kernels in `kernels-cl/halo.cl`).

use super::launch::Arg;
use super::memory::RawBuffer;
use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{
    check_gather, check_ghost, check_ghost_basis, check_ghost_dcgs2, check_ghost_dots,
    check_partials_finish, check_rank_sums,
};
use crate::backend::{Basis, GatherList, GhostBlock, HaloOps, Partials, Slot, SpmvDots};
use crate::error::Result;
use crate::scalar::Scalar;

impl HaloOps for OpenClBackend {
    fn halo_gather<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        x_off: usize,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        check_gather(list, x, x_off, out)?;
        let n = list.len();
        if n == 0 {
            return Ok(());
        }
        self.launch::<T>(
            "halo_gather",
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(&list.idx)?),
                Arg::Mem(self.mem(x)?),
                Arg::ulong(x_off as u64),
                Arg::Mem(self.mem(out)?),
                Arg::uint(Self::len_u32(n)?),
            ],
        )
    }

    fn halo_partials_finish<T: Scalar>(
        &self,
        partials: &Buffer<T>,
        in_off: usize,
        groups: usize,
        slots: usize,
        out: &mut Buffer<f64>,
        out_off: usize,
    ) -> Result<()> {
        check_partials_finish(partials, in_off, groups, slots, out, out_off)?;
        if slots == 0 {
            return Ok(());
        }
        self.launch::<T>(
            "halo_partials_finish",
            self.elementwise_groups(slots),
            &[
                Arg::Mem(self.mem(partials)?),
                Arg::ulong(in_off as u64),
                Arg::uint(Self::len_u32(groups)?),
                Arg::uint(Self::len_u32(slots)?),
                Arg::Mem(self.mem(out)?),
                Arg::uint(Self::len_u32(out_off)?),
            ],
        )
    }

    fn halo_rank_sums<T: Scalar>(
        &self,
        local: &Buffer<f64>,
        gathered: &Buffer<f64>,
        ranks: usize,
        me: usize,
        count: usize,
        sums: &mut Buffer<T>,
        out_off: usize,
        zero: bool,
    ) -> Result<()> {
        check_rank_sums(local, gathered, ranks, me, count, sums, out_off, zero)?;
        let work = count + usize::from(zero);
        if work == 0 {
            return Ok(());
        }
        self.launch::<T>(
            "halo_rank_sums",
            self.elementwise_groups(work),
            &[
                Arg::Mem(self.mem(local)?),
                Arg::Mem(self.mem(gathered)?),
                Arg::uint(Self::len_u32(ranks)?),
                Arg::uint(Self::len_u32(me)?),
                Arg::uint(Self::len_u32(local.len())?),
                Arg::uint(Self::len_u32(count)?),
                Arg::Mem(self.mem(sums)?),
                Arg::ulong(out_off as u64),
                Arg::uint(u32::from(zero)),
            ],
        )
    }

    fn halo_spmv_add<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        check_ghost(ghost, xg, y)?;
        let n = ghost.n_rows();
        if n == 0 {
            return Ok(());
        }
        self.launch::<T>(
            "halo_spmv_add",
            self.elementwise_groups(n),
            &[
                Arg::Mem(self.mem(&ghost.rows)?),
                Arg::Mem(self.mem(&ghost.row_ptr)?),
                Arg::Mem(self.mem(&ghost.col_idx)?),
                Arg::Mem(self.mem(&ghost.values)?),
                Arg::Mem(self.mem(xg)?),
                Arg::Mem(self.mem(y)?),
                Arg::uint(Self::len_u32(n)?),
            ],
        )
    }

    fn halo_spmv_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        let slots = check_ghost_dots(ghost, xg, y, &dots, partials)?;
        let ym = self.mem(y)?;
        let partner = |k: usize| -> Result<_> {
            match dots.with[k] {
                Some((v, _)) => Ok((self.mem(v)?, 0)),
                None => Ok((ym, 0)),
            }
        };
        let w = [partner(0)?, partner(1)?];
        self.launch_add_dots::<T>(ghost, xg, (ym, 0), w, partials, slots)
    }

    fn halo_basis_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        basis: &mut Basis<T>,
        i: usize,
        partials: &mut Partials<T>,
        prev_slot: Option<Slot>,
        self_slot: Option<Slot>,
    ) -> Result<()> {
        let slots = check_ghost_basis(ghost, xg, basis, i, partials, prev_slot, self_slot)?;
        let (v, n) = (self.mem(&basis.data)?, basis.n() as u64);
        let y = (v, i as u64 * n);
        let w = [(v, (i as u64 - 1) * n), y];
        self.launch_add_dots::<T>(ghost, xg, y, w, partials, slots)
    }

    fn halo_dcgs2_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        basis: &mut Basis<T>,
        ucol: usize,
        pb: &mut Partials<T>,
    ) -> Result<()> {
        check_ghost_dcgs2(ghost, xg, basis, ucol, pb)?;
        if ghost.n_rows() == 0 {
            return Ok(()); // no row changes, no correction
        }
        self.launch::<T>(
            "halo_dcgs2_add_dots",
            pb.groups(),
            &[
                Arg::Mem(self.mem(&ghost.rows)?),
                Arg::Mem(self.mem(&ghost.row_ptr)?),
                Arg::Mem(self.mem(&ghost.col_idx)?),
                Arg::Mem(self.mem(&ghost.values)?),
                Arg::Mem(self.mem(xg)?),
                Arg::Mem(self.mem(&basis.data)?),
                Arg::uint(Self::len_u32(basis.n())?),
                Arg::uint(Self::len_u32(ucol)?),
                Arg::uint(Self::len_u32(ghost.n_rows())?),
                Arg::Mem(self.mem(pb.buffer())?),
            ],
        )
    }
}

impl OpenClBackend {
    /// Launch `halo_spmv_add_dots` on y and the partners (buffer, element offset); the slots
    /// in the order yy, w0, w1.
    fn launch_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: (&RawBuffer, u64),
        w: [(&RawBuffer, u64); 2],
        partials: &Partials<T>,
        slots: [Option<Slot>; 3],
    ) -> Result<()> {
        if ghost.n_rows() == 0 {
            return Ok(()); // no row changes, no correction
        }
        self.launch::<T>(
            "halo_spmv_add_dots",
            partials.groups(),
            &[
                Arg::Mem(self.mem(&ghost.rows)?),
                Arg::Mem(self.mem(&ghost.row_ptr)?),
                Arg::Mem(self.mem(&ghost.col_idx)?),
                Arg::Mem(self.mem(&ghost.values)?),
                Arg::Mem(self.mem(xg)?),
                Arg::Mem(y.0),
                Arg::ulong(y.1),
                Arg::uint(Self::len_u32(ghost.n_rows())?),
                Arg::Mem(w[0].0),
                Arg::ulong(w[0].1),
                Arg::Mem(w[1].0),
                Arg::ulong(w[1].1),
                Arg::Mem(self.mem(partials.buffer())?),
                Arg::int(Self::opt_slot(slots[0])?),
                Arg::int(Self::opt_slot(slots[1])?),
                Arg::int(Self::opt_slot(slots[2])?),
            ],
        )
    }
}
