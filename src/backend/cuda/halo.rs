//! CUDA implementation of [`HaloOps`] (kernels in `kernels/halo.kc`).

use super::memory::HaloStaging;
use super::module::Kernel;
use super::spmv::Operand;
use super::Arg;
use super::{len_arg, opt_slot, CudaBackend};
use crate::backend::buffer::Buffer;
use crate::backend::ops::halo::{
    check_gather, check_ghost, check_ghost_basis, check_ghost_dcgs2, check_ghost_dots,
    check_partials_finish, check_rank_sums,
};
use crate::backend::{Basis, GatherList, GhostBlock, HaloOps, Partials, Slot, SpmvDots};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use cudarc::driver::{result as cu, sys, DriverError};
use std::sync::MutexGuard;

impl HaloOps for CudaBackend {
    fn halo_peer_prepare(
        &self,
        rank: usize,
        ranks: usize,
        recv_bytes: usize,
    ) -> Result<Option<crate::backend::PeerLink>> {
        self.peer_prepare(rank, ranks, recv_bytes)
    }

    fn halo_peer_connect(
        &self,
        link: &mut crate::backend::PeerLink,
        elem: usize,
        neighbors: &[crate::backend::PeerNeighbor],
        options: crate::backend::PeerOptions,
    ) -> Result<()> {
        self.peer_connect(link, elem, neighbors, options)
    }

    fn halo_peer_send<T: Scalar>(
        &self,
        link: &mut crate::backend::PeerLink,
        send: &Buffer<T>,
    ) -> Result<()> {
        self.peer_send(link, send)
    }

    fn halo_peer_receive<T: Scalar>(
        &self,
        link: &mut crate::backend::PeerLink,
        ghost_x: &mut Buffer<T>,
    ) -> Result<()> {
        self.peer_receive(link, ghost_x)
    }

    fn halo_sums_by_kernel<T: Scalar>(
        &self,
        link: &mut crate::backend::PeerLink,
        partials: Option<&Buffer<T>>,
        in_off: usize,
        groups: usize,
        slots: usize,
        sums: &mut Buffer<T>,
        out: (usize, usize, usize),
    ) -> Result<bool> {
        self.peer_sums_by_kernel(link, partials, in_off, groups, slots, sums, out)
    }

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
        let args = [
            self.ptr(&list.idx)?,
            self.ptr(x)?,
            Arg::U64(x_off as u64),
            self.ptr(out)?,
            len_arg(n)?,
        ];
        // SAFETY: halo_gather(const uint* idx, const SCALAR* x, ulong x_off, SCALAR* out,
        // uint n): idx and out hold n elements, every idx below the list's bound (checked when
        // the list was built) and x_off + bound within x (checked above).
        unsafe { self.launch::<T>(Kernel::HaloGather, self.grid(n), &args) }
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
        let warps = (self.block_size() / 32).max(1) as usize;
        let args = [
            self.ptr(partials)?,
            Arg::U64(in_off as u64),
            len_arg(groups)?,
            len_arg(slots)?,
            self.ptr(out)?,
            len_arg(out_off)?,
        ];
        // SAFETY: halo_partials_finish(const SCALAR* partials, ulong in_off, uint groups,
        // uint slots, double* out, uint out_off): partials hold in_off + groups x slots entries
        // and out at least out_off + slots (both checked); one warp per slot.
        unsafe { self.launch::<T>(Kernel::HaloPartialsFinish, slots.div_ceil(warps), &args) }
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
        let args = [
            self.ptr(local)?,
            self.ptr(gathered)?,
            len_arg(ranks)?,
            len_arg(me)?,
            len_arg(local.len())?,
            len_arg(count)?,
            self.ptr(sums)?,
            Arg::U64(out_off as u64),
            Arg::U32(u32::from(zero)),
        ];
        // SAFETY: halo_rank_sums(const double* own, const double* gathered, uint ranks, uint me,
        // uint stride, uint count, SCALAR* sums, ulong out_off, uint zero): own holds stride >=
        // count entries, gathered ranks x stride, sums out_off + count (+ 1 with zero), all
        // checked.
        unsafe { self.launch::<T>(Kernel::HaloRankSums, self.grid(work), &args) }
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
        let args = [
            self.ptr(&ghost.rows)?,
            self.ptr(&ghost.row_ptr)?,
            self.ptr(&ghost.col_idx)?,
            self.ptr(&ghost.values)?,
            self.ptr(xg)?,
            self.ptr(y)?,
            len_arg(n)?,
        ];
        // SAFETY: halo_spmv_add(rows, row_ptr, col_idx, values, xg, y, uint n_rows): rows are
        // distinct and below y's length, row_ptr monotone up to the entry count, columns below
        // xg's length (all checked when the block was built; lengths checked above).
        unsafe { self.launch::<T>(Kernel::HaloSpmvAdd, self.grid(n), &args) }
    }

    fn halo_overlaps(&self) -> bool {
        true
    }

    /// Gather on the compute stream; the copy stream waits for the gather and copies the
    /// entries into page-locked memory, so the local product queued next runs meanwhile.
    fn halo_send_start<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        x_off: usize,
        send: &mut Buffer<T>,
    ) -> Result<()> {
        self.halo_gather(list, x, x_off, send)?;
        let bytes = std::mem::size_of::<T>() * send.len();
        if bytes == 0 {
            return Ok(());
        }
        let src = self.raw(send)?.ptr();
        self.counters.transfer();
        let main = self.stream.cu_stream();
        self.with_halo(|st| {
            let copy = st.copy.cu_stream();
            let staged = HaloStaging::staging(&st.ctx, &mut st.send, bytes)?;
            // SAFETY: the events and streams are live; `src` holds `bytes` bytes (the send
            // buffer, checked by the gather); the page-locked staging holds at least `bytes`
            // and is not touched by the host until `sent` has completed (halo_exchange).
            unsafe {
                cu::event::record(st.gathered, main)?;
                cu::stream::wait_event(
                    copy,
                    st.gathered,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )?;
                cu::memcpy_dtoh_async(staged.bytes_mut(bytes), src, copy)?;
                cu::event::record(st.sent, copy)
            }
        })
    }

    /// MPI reads the send entries from and writes the ghost entries into the page-locked
    /// staging; the upload runs on the copy stream and the compute stream waits for it on the
    /// device, so the host never waits for the local product.
    fn halo_exchange<T: Scalar>(
        &self,
        send: &Buffer<T>,
        ghost_x: &mut Buffer<T>,
        _host_send: &mut [T],
        _host_recv: &mut [T],
        exchange: &mut crate::backend::HaloMessages<'_, T>,
    ) -> Result<()> {
        let elem = std::mem::size_of::<T>();
        let (send_bytes, recv_bytes) = (send.len() * elem, ghost_x.len() * elem);
        let dst = self.raw(ghost_x)?.ptr();
        let mut guard = self.halo_staging()?;
        let st = guard.as_mut().ok_or_else(|| self.lock_poisoned())?;
        let copy = st.copy.cu_stream();
        let staging_error = |e| self.driver_error("halo exchange staging", e, 0);
        // SAFETY: `sent` and `received` are live events; waiting on `received` makes sure the
        // previous upload no longer reads the receive staging that MPI is about to overwrite.
        unsafe {
            cu::event::synchronize(st.sent).map_err(staging_error)?;
            cu::event::synchronize(st.received).map_err(staging_error)?;
        }
        // Empty sides get empty element slices (an empty byte array need not be aligned).
        let send_elems: &mut [T] = if send_bytes == 0 {
            &mut []
        } else {
            staged_elems(
                HaloStaging::staging(&st.ctx, &mut st.send, send_bytes)
                    .map_err(staging_error)?
                    .bytes_mut(send_bytes),
            )?
        };
        let recv_elems: &mut [T] = if recv_bytes == 0 {
            &mut []
        } else {
            staged_elems(
                HaloStaging::staging(&st.ctx, &mut st.recv, recv_bytes)
                    .map_err(staging_error)?
                    .bytes_mut(recv_bytes),
            )?
        };
        exchange(send_elems, recv_elems)?;
        if recv_bytes == 0 {
            return Ok(());
        }
        self.counters.transfer();
        let main = self.stream.cu_stream();
        let recv_staged = HaloStaging::staging(&st.ctx, &mut st.recv, recv_bytes)
            .map_err(staging_error)?
            .bytes_mut(recv_bytes);
        // SAFETY: `dst` holds recv_bytes bytes (the ghost buffer); the staging stays untouched
        // by the host until `received` completes (waited for above at the next exchange, and
        // in drop by synchronizing the copy stream).
        unsafe {
            cu::memcpy_htod_async(dst, &*recv_staged, copy).map_err(staging_error)?;
            cu::event::record(st.received, copy).map_err(staging_error)?;
            cu::stream::wait_event(
                main,
                st.received,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
            .map_err(staging_error)
        }
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
        let yo = Operand {
            ptr: self.ptr(y)?,
            off: 0,
        };
        let partner = |k: usize| -> Result<Operand> {
            match dots.with[k] {
                Some((v, _)) => Ok(Operand {
                    ptr: self.ptr(v)?,
                    off: 0,
                }),
                None => Ok(yo),
            }
        };
        let w = [partner(0)?, partner(1)?];
        // SAFETY: y and the partners hold n_local elements (checked).
        unsafe { self.launch_add_dots::<T>(ghost, xg, yo, w, partials, slots) }
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
        let (v, n) = (self.ptr(&basis.data)?, basis.n() as u64);
        let y = Operand {
            ptr: v,
            off: i as u64 * n,
        };
        let prev = Operand {
            ptr: v,
            off: (i as u64 - 1) * n,
        };
        // SAFETY: columns i-1 and i of the basis exist and hold n = n_local elements each
        // (checked); y = column i is written, column i-1 only read.
        unsafe { self.launch_add_dots::<T>(ghost, xg, y, [prev, y], partials, slots) }
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
        let args = [
            self.ptr(&ghost.rows)?,
            self.ptr(&ghost.row_ptr)?,
            self.ptr(&ghost.col_idx)?,
            self.ptr(&ghost.values)?,
            self.ptr(xg)?,
            self.ptr(&basis.data)?,
            len_arg(basis.n())?,
            len_arg(ucol)?,
            len_arg(ghost.n_rows())?,
            self.ptr(pb.buffer())?,
        ];
        // SAFETY: halo_dcgs2_add_dots(rows, row_ptr, col_idx, values, xg, basis, uint n,
        // uint ucol, uint n_rows, pb): the ghost block as in halo_spmv_add (checked when
        // built), xg of its ghost length, columns 1..=ucol+1 of n = n_local elements and
        // slots 0..ucol of pb exist (checked); the grid is pb's groups.
        unsafe { self.launch::<T>(Kernel::HaloDcgs2AddDots, pb.groups(), &args) }
    }
}

impl CudaBackend {
    /// Launch `halo_spmv_add_dots` on y and the partners; the slots in the order yy, w0, w1.
    ///
    /// # Safety
    /// y and the partners must hold the ghost block's n_local elements from their offsets;
    /// the ghost block and the partials as checked by `check_ghost_dots`.
    unsafe fn launch_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: Operand,
        w: [Operand; 2],
        partials: &Partials<T>,
        slots: [Option<Slot>; 3],
    ) -> Result<()> {
        if ghost.n_rows() == 0 {
            return Ok(()); // no row changes, no correction
        }
        let args = [
            self.ptr(&ghost.rows)?,
            self.ptr(&ghost.row_ptr)?,
            self.ptr(&ghost.col_idx)?,
            self.ptr(&ghost.values)?,
            self.ptr(xg)?,
            y.ptr,
            Arg::U64(y.off),
            len_arg(ghost.n_rows())?,
            w[0].ptr,
            Arg::U64(w[0].off),
            w[1].ptr,
            Arg::U64(w[1].off),
            self.ptr(partials.buffer())?,
            opt_slot(slots[0])?,
            opt_slot(slots[1])?,
            opt_slot(slots[2])?,
        ];
        // SAFETY: halo_spmv_add_dots(rows, row_ptr, col_idx, values, xg, y, ulong y_off,
        // uint n_rows, w0, ulong w0_off, w1, ulong w1_off, partials, int slot_yy, int slot_w0,
        // int slot_w1): the ghost block as in halo_spmv_add (checked when built), the vectors
        // as the caller promises, the slots distinct and inside the partials buffer (checked);
        // the grid is its groups.
        unsafe { self.launch::<T>(Kernel::HaloSpmvAddDots, partials.groups(), &args) }
    }
}

/// Page-locked staging bytes as elements (the staging is page-aligned, so this only fails on
/// a driver that breaks that promise).
fn staged_elems<T: Scalar>(bytes: &mut [u8]) -> Result<&mut [T]> {
    bytemuck::try_cast_slice_mut(bytes).map_err(|e| Error::Driver {
        backend: "cuda".into(),
        call: "halo staging".into(),
        message: format!("page-locked staging not usable as elements: {e}"),
    })
}

impl CudaBackend {
    /// The halo staging, created on first use.
    fn with_halo<R>(
        &self,
        f: impl FnOnce(&mut HaloStaging) -> std::result::Result<R, DriverError>,
    ) -> Result<R> {
        let mut guard = self.halo_staging()?;
        let st = guard.as_mut().ok_or_else(|| self.lock_poisoned())?;
        f(st).map_err(|e| self.driver_error("halo exchange copy", e, 0))
    }

    /// The locked halo staging (created on first use; always `Some` in the guard), with the
    /// device checked alive and the context bound to this thread.
    fn halo_staging(&self) -> Result<MutexGuard<'_, Option<HaloStaging>>> {
        self.check_alive()?;
        self.bind()?;
        let mut guard = self.lock(&self.state.halo, "halo staging")?;
        if guard.is_none() {
            *guard = Some(
                HaloStaging::new(&self.ctx)
                    .map_err(|e| self.driver_error("halo staging (stream, events)", e, 0))?,
            );
        }
        Ok(guard)
    }
}
