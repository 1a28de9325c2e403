//! OpenCL implementation of [`HaloOps`] (kernels in `kernels/halo.kc`).

use super::launch::Arg;
use super::raw::RawBuffer;
use super::OpenClBackend;
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{
    check_gather, check_ghost, check_ghost_basis, check_ghost_dcgs2, check_ghost_dots,
    check_partials_finish, check_rank_sums,
};
use crate::backend::ops::Kernel;
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
            Kernel::HaloGather,
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
            Kernel::HaloPartialsFinish,
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
            Kernel::HaloRankSums,
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
            Kernel::HaloSpmvAdd,
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
            Kernel::HaloDcgs2AddDots,
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
            Kernel::HaloSpmvAddDots,
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

#[cfg(test)]
mod tests {
    //! `halo_sums_link` is launched only by the CUDA link; its OpenCL twin runs here on one
    //! device, with the neighbour's side of the exchange written by the test: its flags and
    //! sums set before the launch, this rank's sends and flags read after it.
    use super::*;
    use crate::backend::{BackendInfo, VectorOps};

    /// What one launch of the twin left: the sums, this rank's sends into the "neighbour's
    /// area", and the two flags it raises there (sent, consumed).
    struct Outcome {
        sums: Vec<f64>,
        sent_to: Vec<f64>,
        flags: (u32, u32),
    }

    /// Launch the twin as rank `me` of two, exchange `k`, with the neighbour's "consumed" and
    /// "sent" flags at the given values and its finished sums `theirs`.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        cl: &OpenClBackend,
        partials: &[f64],
        groups: usize,
        slots: usize,
        theirs: &[f64],
        me: u32,
        k: u32,
        (consumed, sent): (u32, u32),
        (stride, len): (usize, usize),
    ) -> Outcome {
        let p = cl.upload(partials).unwrap();
        let dst = cl.upload(&vec![-7.0f64; slots]).unwrap();
        let consumed = cl.upload(&[consumed]).unwrap();
        let sent_there = cl.upload(&[0u32]).unwrap();
        let sent = cl.upload(&[sent]).unwrap();
        let area = cl.upload(theirs).unwrap();
        let consumed_there = cl.upload(&[0u32]).unwrap();
        let sums = cl.upload(&vec![-5.0f64; len]).unwrap();
        cl.launch::<f64>(
            Kernel::HaloSumsLink,
            1,
            &[
                Arg::Mem(cl.mem(&p).unwrap()),
                Arg::ulong(0),
                Arg::uint(groups as u32),
                Arg::uint(slots as u32),
                Arg::Mem(cl.mem(&dst).unwrap()),
                Arg::Mem(cl.mem(&consumed).unwrap()),
                Arg::uint(k - 1),
                Arg::Mem(cl.mem(&sent_there).unwrap()),
                Arg::uint(k),
                Arg::Mem(cl.mem(&sent).unwrap()),
                Arg::Mem(cl.mem(&area).unwrap()),
                Arg::Mem(cl.mem(&consumed_there).unwrap()),
                Arg::uint(me),
                Arg::Mem(cl.mem(&sums).unwrap()),
                Arg::ulong(0),
                Arg::uint(stride as u32),
                Arg::uint(len as u32),
            ],
        )
        .unwrap();
        Outcome {
            sums: cl.download(&sums).unwrap(),
            sent_to: cl.download(&dst).unwrap(),
            flags: (
                cl.download(&sent_there).unwrap()[0],
                cl.download(&consumed_there).unwrap()[0],
            ),
        }
    }

    #[test]
    fn the_sums_link_twin_finishes_sends_and_adds_in_rank_order() {
        let cl = OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)");
        if !cl.supports_f64() {
            return;
        }
        let (groups, slots) = (37, 3);
        let partials: Vec<f64> = (0..groups * slots)
            .map(|i| ((i * 7919 % 1013) as f64 - 500.0) * 1e-3 + 1.0 / (i + 3) as f64)
            .collect();
        let theirs = [0.125, -3.5, 1e-9];
        // This rank's finished sums, as halo_partials_finish gives them.
        let p = cl.upload(&partials).unwrap();
        let mut finished = cl.upload(&[0.0f64; 3]).unwrap();
        cl.halo_partials_finish(&p, 0, groups, slots, &mut finished, 0)
            .unwrap();
        let own = cl.download(&finished).unwrap();
        for me in [0u32, 1] {
            // Exchange 9 with the neighbour's flags ready, into the layout (stride, length).
            let run = |layout| {
                launch(
                    &cl,
                    &partials,
                    groups,
                    slots,
                    &theirs,
                    me,
                    9,
                    (8, 9),
                    layout,
                )
            };
            // The copy's layout: sum j at j * groups, zeros elsewhere.
            let len = groups * slots + 5;
            let got = run((groups, len));
            assert_eq!(got.sent_to, own, "rank {me}: the sums sent");
            assert_eq!(got.flags, (9, 9), "rank {me}: sent and consumed raised");
            for (i, v) in got.sums.iter().enumerate() {
                let want = if i % groups == 0 && i / groups < slots {
                    let j = i / groups;
                    let (first, second) = if me == 0 {
                        (own[j], theirs[j])
                    } else {
                        (theirs[j], own[j])
                    };
                    (0.0 + first) + second
                } else {
                    0.0
                };
                assert_eq!(v.to_bits(), want.to_bits(), "rank {me}, entry {i}");
            }
            // Stride 1 and one entry more: the sums, then a 0.
            let got = run((1, 4));
            assert_eq!(got.sums[3], 0.0);
            assert!(got.sums[..3].iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn the_sums_link_twin_gives_up_without_its_neighbour() {
        let cl = OpenClBackend::from_env().expect("an OpenCL device (PoCL in CI)");
        if !cl.supports_f64() {
            return;
        }
        let partials = vec![1.0f64; 8 * 2];
        // The neighbour never consumed exchange k - 1 nor sent exchange k: nothing is sent,
        // no flag raised, the sums are NaN (the zero entries stay zero).
        let got = launch(&cl, &partials, 8, 2, &[1.0, 2.0], 1, 4, (2, 3), (1, 3));
        assert_eq!(got.sent_to, vec![-7.0, -7.0]);
        assert_eq!(got.flags, (0, 0));
        assert!(got.sums[..2].iter().all(|v| v.is_nan()), "{:?}", got.sums);
        assert_eq!(got.sums[2], 0.0);
    }
}
