//! CUDA's part of [`HaloOps`]: the device-to-device links (`peer.rs`), the send entries copied
//! to page-locked staging on a second stream, and the exchange through that staging. The
//! kernels (`kernels/halo.kc`) are launched by the trait's default bodies, written once for both
//! GPU runtimes (`src/backend/ops/halo/launch.rs`).

use super::memory::HaloStaging;
use super::CudaBackend;
use crate::backend::buffer::Buffer;
use crate::backend::{GatherList, HaloOps};
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
