//! The device-to-device halo link between processes of one node ([`PeerLink`], CUDA
//! inter-process memory): each rank exports one device allocation holding its flags and its
//! receive area; its neighbours open it, copy their send entries into it and flag them (on
//! the link's copy stream, beside the local product on the compute stream), so no halo entry
//! passes through the host and the host never waits for one.
//!
//! Layout of a rank's allocation (`ranks` = communicator size): `sent[r]` (u32) at 4 r, the
//! number of the last exchange whose entries rank r has copied in; `consumed[r]` at
//! 4 (ranks + r), the last exchange whose entries this rank's neighbour r has copied out of its
//! own receive area (written by r: "you may send again"); then, from [`FLAGS_ALIGN`], the
//! receive area laid out as the ghost vector. Exchange k (counting from 1, wrapping):
//! - send: for each neighbour r this rank sends to, wait until `consumed[r]` = k - 1 (local),
//!   copy the entries into r's area, then write k to r's `sent[me]`;
//! - receive: for each neighbour r this rank receives from, wait until `sent[r]` = k (local),
//!   copy the area into the ghost vector, then write k to r's `consumed[me]`.
//!
//! The waits are `cuStreamWaitValue32` on this device's own memory (equality: a flag never
//! runs ahead, because a rank writes k + 1 only after its partner has written k); the writes
//! to a neighbour's memory are `cuStreamWriteValue32` through the peer mapping, queued after
//! the copies they announce (its default flags order the write behind every earlier write of
//! the stream, a system-wide fence; the tuning's `halo_flag_write` off writes them with
//! `cuMemsetD32Async` instead, which relies on stream order alone). A link is used only where every pair of devices has peer access
//! (checked by `cuDeviceCanAccessPeer`, then a probe), otherwise the distributed layer keeps
//! the host-staged exchange.
//!
//! A link of two ranks on two devices with small payloads that asks for it at connect
//! ([`PeerOptions::kernels`]: the global sums' link) runs the same protocol in two one-block
//! kernels on the compute stream instead (`halo_link_push`: wait for
//! `consumed`, copy into the neighbour's area, system fence, write `sent` there; `halo_link_pull`:
//! wait for `sent`, copy the area out, write `consumed` there): in a kernel timeline of two H200s
//! (the tuning's `cuda_trace`) the copy-stream path left the device idle about 24 us per exchange
//! (event waits, copy-engine and stream memory-operation latencies in a chain), the kernels about
//! 3. A spinning kernel is only used where no other rank shares the device (see
//! `link_by_kernels`); the tuning's `link_kernels` off keeps the copy stream. The global sums of
//! such a link take one kernel for the whole sum (`halo_sums_link`: the rank's partials
//! finished, pushed, the neighbour's pulled, both added in rank order; `peer_sums_by_kernel`),
//! which saved 10-22 us per BiCGStab iteration against the four kernels of those steps on two
//! H200s. A halo link at two ranks does not exchange by kernels: push and pull kernels of 512 KB
//! cost 12-24 us more per exchange than the host-staged halo (bench/log/, 2026-11-27 (e)).

use super::CudaBackend;
use crate::backend::buffer::Buffer;
use crate::backend::{PeerLink, PeerNeighbor, PeerOptions};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{result as cu, CudaContext, CudaStream};
use std::ops::Range;
use std::sync::Arc;

/// Alignment of the receive area after the flags.
const FLAGS_ALIGN: usize = 256;
/// Bytes of a PCI bus id string in the export.
const BUS_ID_BYTES: usize = 32;
/// Bytes of an export: the memory handle, the PCI bus id.
const EXPORT_BYTES: usize = 64 + BUS_ID_BYTES;

/// One opened neighbour.
struct PeerArea {
    rank: usize,
    /// The neighbour's allocation, opened here (0: not opened).
    base: CUdeviceptr,
    /// Bytes of this rank's send buffer that go to it, and where they land in its area.
    send: Range<usize>,
    dst: CUdeviceptr,
    /// Whether it sends entries to this rank.
    receives_from: bool,
    /// Bytes of this rank's receive area that it sends into.
    recv: Range<usize>,
    /// Whether it runs on another device than this rank.
    other_device: bool,
}

/// The CUDA state behind a [`PeerLink`].
struct CudaPeer {
    ctx: Arc<CudaContext>,
    /// The link's own stream for the copies out and the flags to the neighbours, so that the
    /// compute stream runs the local product meanwhile.
    copy: Arc<CudaStream>,
    /// Recorded on the compute stream after the gather, and on the copy stream after the
    /// copy into the ghost vector (which follows the exchange's copies out on that stream).
    gathered: sys::CUevent,
    received: sys::CUevent,
    base: CUdeviceptr,
    rank: usize,
    ranks: usize,
    recv_bytes: usize,
    areas: Vec<PeerArea>,
    /// Exchanges done (wrapping).
    count: u32,
    /// Whether any exchange ran (`count` wraps to 0).
    used: bool,
    /// Flags written with `cuStreamWriteValue32` (else `cuMemsetD32Async`), from the tuning's
    /// [`halo_flag_write`](crate::backend::tuning::Tuning::halo_flag_write) at prepare.
    fenced_flags: bool,
    /// Exchanges done by `halo_link_push` / `halo_link_pull` on the compute stream instead of
    /// the copy stream's copies and flag operations (set at connect: see [`link_by_kernels`]).
    kernels: bool,
    /// Whether the global sums may take one kernel (`halo_sums_link`): a link by kernels between
    /// two ranks with one neighbour, and the tuning's
    /// [`sums_kernel`](crate::backend::tuning::Tuning::sums_kernel) on (set at connect).
    sums_kernel: bool,
    /// The backend's compute stream, which the link kernels run on.
    compute: Arc<CudaStream>,
}

// SAFETY: the fields are plain device addresses and a context handle that CUDA allows to be
// used from any thread (every call binds the context first).
unsafe impl Send for CudaPeer {}

impl CudaPeer {
    fn sent(&self, base: CUdeviceptr, from: usize) -> CUdeviceptr {
        base + 4 * from as u64
    }
    fn consumed(&self, base: CUdeviceptr, from: usize) -> CUdeviceptr {
        base + 4 * (self.ranks + from) as u64
    }
}

impl Drop for CudaPeer {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_err() {
            return;
        }
        // Only the link's copy stream touches the opened areas and this rank's allocation
        // (the compute stream reads the ghost vector it copies into), or, on a link that
        // exchanges by kernels, those kernels on the compute stream. Waiting for either is
        // bounded: if a neighbour never sends (it failed, or ranks fell out of step), the stream
        // waits on a flag (the kernels for up to HALO_LINK_TIMEOUT_NS), and the link is leaked
        // rather than the host hung.
        if !self.copy_stream_idle() || (self.kernels && !self.kernels_idle()) {
            return;
        }
        // SAFETY: the opened areas and the allocation were made in this context; the queues of
        // this process that touch them are idle.
        unsafe {
            for e in [self.gathered, self.received] {
                let _ = cu::event::destroy(e);
            }
            for a in &self.areas {
                if a.base != 0 {
                    let _ = sys::cuIpcCloseMemHandle(a.base);
                }
            }
            if self.base != 0 && self.neighbours_done() {
                let _ = sys::cuMemFree_v2(self.base);
            }
        }
    }
}

impl CudaPeer {
    /// Whether the link kernels queued so far on the compute stream have completed: `received`
    /// recorded there now, polled for up to [`SETTLE_SECONDS`] (false on a timeout or an error).
    fn kernels_idle(&self) -> bool {
        // SAFETY: the link's event, recorded on a live stream of this (bound) context.
        let r = unsafe { sys::cuEventRecord(self.received, self.compute.cu_stream()) };
        // SAFETY: a query of a live event of this (bound) context.
        r == sys::CUresult::CUDA_SUCCESS && settled(|| unsafe { sys::cuEventQuery(self.received) })
    }

    /// Whether the copy stream has finished everything queued on it, polled for up to
    /// [`SETTLE_SECONDS`] (false on a timeout or an error).
    fn copy_stream_idle(&self) -> bool {
        // SAFETY: a query of a live stream of this (bound) context.
        settled(|| unsafe { sys::cuStreamQuery(self.copy.cu_stream()) })
    }

    /// Whether every neighbour this rank sent to has flagged the last exchange consumed: its
    /// last write into this allocation (that flag) has landed, so the allocation may be freed.
    /// Polls for up to [`SETTLE_SECONDS`]; on a timeout (or a failed read) the allocation is
    /// left allocated rather than freed under a neighbour's pending write.
    fn neighbours_done(&self) -> bool {
        if !self.used {
            return true;
        }
        let start = std::time::Instant::now();
        let mut flags = vec![0u32; 2 * self.ranks];
        loop {
            // SAFETY: the allocation begins with 2 ranks flags of 4 bytes.
            let r = unsafe {
                sys::cuMemcpyDtoH_v2(
                    flags.as_mut_ptr().cast(),
                    self.base,
                    flags.len() * std::mem::size_of::<u32>(),
                )
            };
            if r != sys::CUresult::CUDA_SUCCESS {
                return false;
            }
            let done = self
                .areas
                .iter()
                .filter(|a| !a.send.is_empty())
                .all(|a| flags[self.ranks + a.rank] == self.count);
            if done {
                return true;
            }
            if start.elapsed().as_secs_f64() > SETTLE_SECONDS {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
}

/// How long dropping a link waits for its copy stream and for its neighbours' last flags.
const SETTLE_SECONDS: f64 = 2.0;

/// Poll `query` (a stream or event query) until it reports success (true), for up to
/// [`SETTLE_SECONDS`] while it reports "not ready" (false on a timeout or another error).
fn settled(query: impl Fn() -> sys::CUresult) -> bool {
    let start = std::time::Instant::now();
    loop {
        match query() {
            sys::CUresult::CUDA_SUCCESS => return true,
            sys::CUresult::CUDA_ERROR_NOT_READY
                if start.elapsed().as_secs_f64() <= SETTLE_SECONDS =>
            {
                std::thread::sleep(std::time::Duration::from_micros(100));
            }
            _ => return false,
        }
    }
}

fn flags_bytes(ranks: usize) -> usize {
    (8 * ranks).div_ceil(FLAGS_ALIGN) * FLAGS_ALIGN
}

impl CudaBackend {
    fn peer_error(&self, call: &str, r: sys::CUresult) -> Error {
        match r.result() {
            Ok(()) => Error::Distributed(format!("{call}: unexpected success")),
            Err(e) => self.driver_error(call, e, 0),
        }
    }

    fn peer_check(&self, call: &str, r: sys::CUresult) -> Result<()> {
        if r == sys::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(self.peer_error(call, r))
        }
    }

    /// See [`crate::backend::HaloOps::halo_peer_prepare`].
    pub(crate) fn peer_prepare(
        &self,
        rank: usize,
        ranks: usize,
        recv_bytes: usize,
    ) -> Result<Option<PeerLink>> {
        self.check_alive()?;
        self.bind()?;
        let bytes = flags_bytes(ranks)
            .checked_add(recv_bytes)
            .ok_or_else(|| Error::param("halo", "receive area size overflows"))?;
        self.counters.check_allocation("cuda", bytes)?;
        let mut base: CUdeviceptr = 0;
        // SAFETY: plain driver calls on this bound context; `base` is freed by CudaPeer's drop.
        let r = unsafe { sys::cuMemAlloc_v2(&mut base, bytes) };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(self.peer_error("cuMemAlloc (halo link)", r));
        }
        let event = || {
            cu::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                .map_err(|e| self.driver_error("cuEventCreate (halo link)", e, 0))
        };
        let made = (|| -> Result<_> {
            let copy = self
                .ctx
                .new_stream()
                .map_err(|e| self.driver_error("cuStreamCreate (halo link)", e, 0))?;
            let gathered = event()?;
            match event() {
                Ok(received) => Ok((copy, gathered, received)),
                Err(e) => {
                    // SAFETY: created above, used nowhere yet.
                    let _ = unsafe { cu::event::destroy(gathered) };
                    Err(e)
                }
            }
        })();
        let (copy, gathered, received) = match made {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: `base` was allocated above and is not shared yet.
                unsafe { sys::cuMemFree_v2(base) };
                return Err(e);
            }
        };
        let peer = CudaPeer {
            ctx: self.ctx.clone(),
            copy,
            gathered,
            received,
            base,
            rank,
            ranks,
            recv_bytes,
            areas: Vec::new(),
            count: 0,
            used: false,
            fenced_flags: self.tuning().halo_flag_write,
            kernels: false,
            sums_kernel: false,
            compute: self.stream.clone(),
        };
        // SAFETY: `base` holds `bytes` bytes. The memset runs on the legacy stream, which the
        // library's streams do not wait for: the context is synchronized before the handle
        // leaves this process.
        self.peer_check("cuMemsetD8 (halo link)", unsafe {
            sys::cuMemsetD8_v2(base, 0, bytes)
        })?;
        // SAFETY: plain driver call on the bound context.
        self.peer_check("cuCtxSynchronize (halo link)", unsafe {
            sys::cuCtxSynchronize()
        })?;
        let mut export = vec![0u8; EXPORT_BYTES];
        let mut handle = std::mem::MaybeUninit::<sys::CUipcMemHandle>::zeroed();
        // SAFETY: `base` is a cuMemAlloc allocation of this context; the handle is 64 bytes.
        self.peer_check("cuIpcGetMemHandle", unsafe {
            sys::cuIpcGetMemHandle(handle.as_mut_ptr(), base)
        })?;
        // SAFETY: initialized by the successful call above.
        let handle = unsafe { handle.assume_init() };
        for (d, s) in export[..64].iter_mut().zip(handle.reserved.iter()) {
            *d = *s as u8;
        }
        let mut bus = [0 as std::ffi::c_char; BUS_ID_BYTES];
        // SAFETY: `bus` holds BUS_ID_BYTES characters, the length passed.
        self.peer_check("cuDeviceGetPCIBusId", unsafe {
            sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), BUS_ID_BYTES as i32, self.ctx.cu_device())
        })?;
        for (d, s) in export[64..].iter_mut().zip(bus.iter()) {
            *d = *s as u8;
        }
        Ok(Some(PeerLink {
            export,
            state: Box::new(peer),
        }))
    }

    /// See [`crate::backend::HaloOps::halo_peer_connect`].
    pub(crate) fn peer_connect(
        &self,
        link: &mut PeerLink,
        elem: usize,
        neighbors: &[PeerNeighbor],
        options: PeerOptions,
    ) -> Result<()> {
        self.check_alive()?;
        self.bind()?;
        let peer = state(link)?;
        for nb in neighbors {
            if nb.export.len() != EXPORT_BYTES || nb.rank >= peer.ranks || nb.rank == peer.rank {
                return Err(Error::Distributed(format!(
                    "halo link: bad export from rank {}",
                    nb.rank
                )));
            }
            // Peer access from this device to the neighbour's.
            let bus: Vec<std::ffi::c_char> = nb.export[64..]
                .iter()
                .map(|&b| b as std::ffi::c_char)
                .chain(std::iter::once(0))
                .collect();
            let mut dev: sys::CUdevice = 0;
            // SAFETY: `bus` is NUL-terminated.
            self.peer_check("cuDeviceGetByPCIBusId", unsafe {
                sys::cuDeviceGetByPCIBusId(&mut dev, bus.as_ptr())
            })?;
            let mine = self.ctx.cu_device();
            if dev == mine && !options.shared_device {
                return Err(Error::Distributed(format!(
                    "halo link: rank {} runs on this rank's device",
                    nb.rank
                )));
            }
            if dev != mine {
                let mut can = 0;
                // SAFETY: both are device handles of this process.
                self.peer_check("cuDeviceCanAccessPeer", unsafe {
                    sys::cuDeviceCanAccessPeer(&mut can, mine, dev)
                })?;
                if can == 0 {
                    return Err(Error::Distributed(format!(
                        "halo link: no peer access to rank {}'s device",
                        nb.rank
                    )));
                }
            }
            let mut handle = sys::CUipcMemHandle { reserved: [0; 64] };
            for (d, s) in handle.reserved.iter_mut().zip(nb.export[..64].iter()) {
                *d = *s as std::ffi::c_char;
            }
            let mut base: CUdeviceptr = 0;
            // SAFETY: the handle came from the neighbour's cuIpcGetMemHandle; closed in drop.
            self.peer_check("cuIpcOpenMemHandle", unsafe {
                sys::cuIpcOpenMemHandle_v2(
                    &mut base,
                    handle,
                    sys::CUipcMem_flags_enum::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
                )
            })?;
            let bytes = |r: &Range<usize>| r.start * elem..r.end * elem;
            let dst = base + (flags_bytes(peer.ranks) + nb.remote_offset * elem) as u64;
            let room = nb.remote_len * elem;
            // Push first, so that drop closes the handle whatever happens next.
            let fits = nb.send.len() == nb.remote_len;
            peer.areas.push(PeerArea {
                rank: nb.rank,
                base,
                send: bytes(&nb.send),
                dst,
                receives_from: !nb.recv.is_empty(),
                recv: bytes(&nb.recv),
                other_device: dev != mine,
            });
            if !fits {
                return Err(Error::Distributed(format!(
                    "halo link: rank {} expects {} bytes from this rank, which sends {}",
                    nb.rank,
                    room,
                    nb.send.len() * elem
                )));
            }
        }
        // Probe: the waits and the flag writes this link will queue, on values that hold now
        // (every flag is 0 until the first exchange); the local wait first, and the stream
        // synchronized on every exit so that no probe write is left in flight.
        let stream = self.stream.cu_stream();
        let (me, ranks) = (peer.rank, peer.ranks);
        let probe = || -> Result<()> {
            let own = peer.sent(peer.base, me);
            // SAFETY: `own` is this rank's own flag, 0: the wait is satisfied at once.
            self.peer_check("cuStreamWaitValue32 (halo link probe)", unsafe {
                sys::cuStreamWaitValue32_v2(
                    stream,
                    own,
                    0,
                    sys::CUstreamWaitValue_flags_enum::CU_STREAM_WAIT_VALUE_EQ as u32,
                )
            })?;
            for a in &peer.areas {
                let at = a.base + 4 * (ranks + me) as u64;
                // SAFETY: `at` is inside the neighbour's flags (opened above); writing 0
                // leaves it as it is.
                unsafe { self.write_flag(peer.fenced_flags, stream, at, 0, true) }?;
            }
            Ok(())
        };
        let probed = probe();
        let synced = self.sync();
        peer.kernels = options.kernels && link_by_kernels(peer, self.tuning().link_kernels);
        peer.sums_kernel =
            peer.kernels && peer.ranks == 2 && peer.areas.len() == 1 && self.tuning().sums_kernel;
        probed.and(synced)
    }

    /// See [`crate::backend::HaloOps::halo_peer_send`]: on the link's copy stream, after the
    /// gather queued on the compute stream.
    pub(crate) fn peer_send<T: Scalar>(&self, link: &mut PeerLink, send: &Buffer<T>) -> Result<()> {
        self.check_alive()?;
        self.bind()?;
        let src = self.raw(send)?.ptr();
        let send_bytes = send.bytes();
        let peer = state(link)?;
        if let Some(a) = peer.areas.iter().find(|a| a.send.end > send_bytes) {
            return Err(Error::dims(
                "halo link: send buffer bytes",
                a.send.end,
                send_bytes,
            ));
        }
        peer.count = peer.count.wrapping_add(1);
        peer.used = true;
        let (k, me) = (peer.count, peer.rank);
        if peer.kernels {
            return self.push_by_kernel::<T>(peer, src, k);
        }
        let (main, copy) = (self.stream.cu_stream(), peer.copy.cu_stream());
        let eq = sys::CUstreamWaitValue_flags_enum::CU_STREAM_WAIT_VALUE_EQ as u32;
        let wait = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT;
        let step = |call: &str, r: sys::CUresult| self.peer_check(call, r);
        // SAFETY: the events and streams are the link's; `consumed` is this rank's flag;
        // `a.dst` has room for the entries (the neighbour's receive area at the offset it
        // gave, its length checked at connect); `src` holds `send_bytes` bytes (checked) and is
        // not rewritten before `received`, which the copy stream records after these copies
        // and the compute stream waits for in peer_receive; `sent_there` is this rank's flag
        // in the neighbour's allocation.
        unsafe {
            step(
                "cuEventRecord (halo link)",
                sys::cuEventRecord(peer.gathered, main),
            )?;
            step(
                "cuStreamWaitEvent (halo link)",
                sys::cuStreamWaitEvent(copy, peer.gathered, wait as u32),
            )?;
            for a in peer.areas.iter().filter(|a| !a.send.is_empty()) {
                let consumed = peer.consumed(peer.base, a.rank);
                let sent_there = a.base + 4 * me as u64;
                step(
                    "cuStreamWaitValue32 (halo link)",
                    sys::cuStreamWaitValue32_v2(copy, consumed, k.wrapping_sub(1), eq),
                )?;
                step(
                    "cuMemcpyDtoDAsync (halo link)",
                    sys::cuMemcpyDtoDAsync_v2(a.dst, src + a.send.start as u64, a.send.len(), copy),
                )?;
                // The flag after the copy: the write's fence makes the copy's data visible
                // to the neighbour before the flag.
                self.write_flag(peer.fenced_flags, copy, sent_there, k, false)?;
            }
            Ok(())
        }
    }

    /// See [`crate::backend::HaloOps::halo_peer_receive`]: on the copy stream, behind this
    /// exchange's copies out, the waits for the neighbours' entries, the copy into the ghost
    /// vector and the flags back to them; the compute stream waits for the copy only (one
    /// event, as for the host-staged upload).
    pub(crate) fn peer_receive<T: Scalar>(
        &self,
        link: &mut PeerLink,
        ghost_x: &mut Buffer<T>,
    ) -> Result<()> {
        self.check_alive()?;
        self.bind()?;
        let dst = self.raw(ghost_x)?.ptr();
        let ghost_bytes = ghost_x.bytes();
        let peer = state(link)?;
        if ghost_bytes != peer.recv_bytes {
            return Err(Error::dims(
                "halo link: ghost vector bytes",
                peer.recv_bytes,
                ghost_bytes,
            ));
        }
        let (k, me) = (peer.count, peer.rank);
        if peer.kernels {
            return self.pull_by_kernel::<T>(peer, dst, ghost_bytes, k);
        }
        let (main, copy) = (self.stream.cu_stream(), peer.copy.cu_stream());
        let eq = sys::CUstreamWaitValue_flags_enum::CU_STREAM_WAIT_VALUE_EQ as u32;
        let wait = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT as u32;
        let step = |call: &str, r: sys::CUresult| self.peer_check(call, r);
        let area = peer.base + flags_bytes(peer.ranks) as u64;
        // SAFETY: `sent` flags are this rank's own; the area and the ghost vector both hold
        // `ghost_bytes` bytes, and the compute stream reads the ghost vector only after
        // `received`; `consumed_there` is this rank's flag in the neighbour's allocation; the
        // events and streams are the link's. The copy stream ran this exchange's copies out
        // before, so `received` also frees the send buffer for the next gather.
        unsafe {
            for a in peer.areas.iter().filter(|a| a.receives_from) {
                let sent = peer.sent(peer.base, a.rank);
                step(
                    "cuStreamWaitValue32 (halo link)",
                    sys::cuStreamWaitValue32_v2(copy, sent, k, eq),
                )?;
            }
            if ghost_bytes > 0 {
                step(
                    "cuMemcpyDtoDAsync (halo link)",
                    sys::cuMemcpyDtoDAsync_v2(dst, area, ghost_bytes, copy),
                )?;
            }
            step(
                "cuEventRecord (halo link)",
                sys::cuEventRecord(peer.received, copy),
            )?;
            for a in peer.areas.iter().filter(|a| a.receives_from) {
                let consumed_there = a.base + 4 * (peer.ranks + me) as u64;
                self.write_flag(peer.fenced_flags, copy, consumed_there, k, false)?;
            }
            step(
                "cuStreamWaitEvent (halo link)",
                sys::cuStreamWaitEvent(main, peer.received, wait),
            )
        }
    }
}

/// Whether a connected link exchanges by kernels: two ranks on two devices (a kernel spinning
/// on a flag would hold a device that another rank's context shares until the time slice ends),
/// small payloads both ways (one block copies them), fenced flag writes on the copy-stream path
/// (so that a kernel reading a flag the other end wrote that way also sees the data before it),
/// and `link_kernels` (the tuning's
/// [`link_kernels`](crate::backend::tuning::Tuning::link_kernels)); only asked for by a link that
/// allows it ([`PeerOptions::kernels`]: not a halo link, whose copies overlap the local product
/// on the copy stream, where a push kernel would precede it on the compute stream). The two ends
/// of a link may decide differently: both paths keep the same flags and areas.
fn link_by_kernels(peer: &CudaPeer, link_kernels: bool) -> bool {
    let areas: Vec<(bool, usize)> = peer
        .areas
        .iter()
        .map(|a| (a.other_device, a.send.len()))
        .collect();
    kernels_rule(
        link_kernels && peer.fenced_flags,
        peer.ranks,
        &areas,
        peer.recv_bytes,
    )
}

/// [`link_by_kernels`] on plain values: `allowed` (tuning and fenced flags), the
/// communicator's ranks, each opened neighbour's (on another device, bytes sent to it), and the
/// receive area's bytes.
fn kernels_rule(allowed: bool, ranks: usize, areas: &[(bool, usize)], recv_bytes: usize) -> bool {
    use crate::backend::tuning::LINK_KERNELS_MAX_BYTES;
    let small = |bytes: usize| bytes <= LINK_KERNELS_MAX_BYTES && bytes % 4 == 0;
    allowed
        && ranks == 2
        && areas.len() == 1
        && areas.iter().all(|&(other, send)| other && small(send))
        && small(recv_bytes)
}

impl CudaBackend {
    /// The send of exchange `k` by `halo_link_push` on the compute stream (after the kernel
    /// that wrote `src`): wait until the neighbour consumed exchange k - 1, copy, flag k.
    fn push_by_kernel<T: Scalar>(&self, peer: &CudaPeer, src: CUdeviceptr, k: u32) -> Result<()> {
        use super::module::Kernel;
        use super::Arg;
        let Some(a) = peer.areas.first().filter(|a| !a.send.is_empty()) else {
            return Ok(());
        };
        let args = [
            Arg::Ptr(src + a.send.start as u64),
            Arg::U32((a.send.len() / 4) as u32),
            Arg::Ptr(a.dst),
            Arg::Ptr(peer.consumed(peer.base, a.rank)),
            Arg::U32(k.wrapping_sub(1)),
            Arg::Ptr(a.base + 4 * peer.rank as u64),
            Arg::U32(k),
        ];
        // SAFETY: halo_link_push(const uint* src, uint words, uint* dst, const uint* consumed,
        // uint expect, uint* sent_there, uint k): `src` holds the send range (checked by the
        // caller against the send buffer), `dst` the neighbour's room for it (checked at
        // connect), `consumed` is this rank's flag and `sent_there` this rank's flag in the
        // neighbour's opened allocation; one block.
        unsafe { self.launch::<T>(Kernel::HaloLinkPush, 1, &args) }
    }

    /// The receive of exchange `k` by `halo_link_pull` on the compute stream: wait for the
    /// neighbour's flag k, copy the receive area into the ghost vector at `dst`, flag it
    /// consumed in the neighbour's memory. The compute stream's later kernels follow it.
    fn pull_by_kernel<T: Scalar>(
        &self,
        peer: &CudaPeer,
        dst: CUdeviceptr,
        ghost_bytes: usize,
        k: u32,
    ) -> Result<()> {
        use super::module::Kernel;
        use super::Arg;
        let Some(a) = peer.areas.first().filter(|a| a.receives_from) else {
            return Ok(());
        };
        let args = [
            Arg::Ptr(peer.sent(peer.base, a.rank)),
            Arg::U32(k),
            Arg::Ptr(peer.base + flags_bytes(peer.ranks) as u64),
            Arg::U32((ghost_bytes / 4) as u32),
            Arg::Ptr(dst),
            Arg::Ptr(a.base + 4 * (peer.ranks + peer.rank) as u64),
        ];
        // SAFETY: halo_link_pull(const uint* sent, uint k, const uint* area, uint words,
        // uint* ghost, uint* consumed_there): `sent` is the neighbour's flag in this rank's
        // allocation, whose receive area and the ghost vector both hold `ghost_bytes` bytes
        // (checked by the caller); `consumed_there` is this rank's flag in the neighbour's
        // opened allocation; one block.
        unsafe { self.launch::<T>(Kernel::HaloLinkPull, 1, &args) }
    }

    /// See [`crate::backend::HaloOps::halo_sums_by_kernel`]: `halo_sums_link`, one block on the
    /// compute stream, where this link exchanges by kernels with its one neighbour and the sums
    /// fit both ways.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn peer_sums_by_kernel<T: Scalar>(
        &self,
        link: &mut PeerLink,
        partials: Option<&Buffer<T>>,
        in_off: usize,
        groups: usize,
        slots: usize,
        sums: &mut Buffer<T>,
        out: (usize, usize, usize),
    ) -> Result<bool> {
        use super::module::Kernel;
        use super::Arg;
        use crate::backend::ops::halo::{check_sums_by_kernel, SUMS_LINK_MAX_SLOTS};
        self.check_alive()?;
        self.bind()?;
        let peer = state(link)?;
        let bytes = slots.checked_mul(8);
        let Some(a) = peer.areas.first().filter(|a| {
            peer.sums_kernel
                && slots <= SUMS_LINK_MAX_SLOTS
                && bytes.is_some_and(|b| b <= a.send.len() && b <= a.recv.len())
        }) else {
            return Ok(false);
        };
        let partials_len = partials.map(|p| p.len());
        check_sums_by_kernel(partials_len, in_off, groups, slots, sums.len(), out)?;
        let (out_off, out_stride, out_len) = out;
        let out_ptr = self.raw(sums)?.ptr();
        let input = match partials {
            Some(p) => self.raw(p)?.ptr(),
            None => out_ptr,
        };
        peer.count = peer.count.wrapping_add(1);
        peer.used = true;
        let (k, me) = (peer.count, peer.rank);
        let area = peer.base + (flags_bytes(peer.ranks) + a.recv.start) as u64;
        let args = [
            Arg::Ptr(input),
            Arg::U64(in_off as u64),
            Arg::U32(groups as u32),
            Arg::U32(slots as u32),
            Arg::Ptr(a.dst),
            Arg::Ptr(peer.consumed(peer.base, a.rank)),
            Arg::U32(k.wrapping_sub(1)),
            Arg::Ptr(a.base + 4 * me as u64),
            Arg::U32(k),
            Arg::Ptr(peer.sent(peer.base, a.rank)),
            Arg::Ptr(area),
            Arg::Ptr(a.base + 4 * (peer.ranks + me) as u64),
            Arg::U32(me as u32),
            Arg::Ptr(out_ptr),
            Arg::U64(out_off as u64),
            Arg::U32(out_stride as u32),
            Arg::U32(out_len as u32),
        ];
        // SAFETY: halo_sums_link(const SCALAR* partials, ulong in_off, uint groups, uint slots,
        // double* dst, const uint* consumed, uint expect, uint* sent_there, uint k, const uint*
        // sent, const double* area, uint* consumed_there, uint me, SCALAR* sums, ulong out_off,
        // uint out_stride, uint out_len): the partials and the sums hold the ranges read and
        // written (checked above; the kernel reads every partial before it writes a sum, so they
        // may share a buffer); `dst` is the neighbour's room for this rank's sends and `area` this
        // rank's room for the neighbour's, both of at least `slots` doubles (checked above against
        // the ranges agreed at connect); the flags are this rank's own (`consumed`, `sent`) and its
        // flags in the neighbour's opened allocation; one block, slots <= HALO_SUMS_LINK_MAX (256).
        unsafe { self.launch::<T>(Kernel::HaloSumsLink, 1, &args) }?;
        Ok(true)
    }

    /// Queue the write of `value` to the flag at `at` on `stream`: `cuStreamWriteValue32` with
    /// its default (fenced) flags when `fenced`, else `cuMemsetD32Async`. `probe` names the call
    /// in errors.
    ///
    /// # Safety
    /// `at` must be a 4-byte flag of a live allocation this context can write (its own or a
    /// neighbour's opened one) and `stream` a stream of this context.
    unsafe fn write_flag(
        &self,
        fenced: bool,
        stream: sys::CUstream,
        at: CUdeviceptr,
        value: u32,
        probe: bool,
    ) -> Result<()> {
        if fenced {
            let call = if probe {
                "cuStreamWriteValue32 (halo link probe)"
            } else {
                "cuStreamWriteValue32 (halo link)"
            };
            let default = sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32;
            self.peer_check(
                call,
                sys::cuStreamWriteValue32_v2(stream, at, value, default),
            )
        } else {
            let call = if probe {
                "cuMemsetD32Async (halo link probe)"
            } else {
                "cuMemsetD32Async (halo link)"
            };
            self.peer_check(call, sys::cuMemsetD32Async(at, value, 1, stream))
        }
    }
}

fn state(link: &mut PeerLink) -> Result<&mut CudaPeer> {
    link.state
        .downcast_mut::<CudaPeer>()
        .ok_or_else(|| Error::Distributed("halo link made by another backend".into()))
}

#[cfg(test)]
mod tests {
    use super::kernels_rule;

    #[test]
    fn link_kernels_only_between_two_ranks_on_two_devices_with_small_payloads() {
        // The sums link at two ranks: 256 f64 each way, 2 x 256 received.
        assert!(kernels_rule(true, 2, &[(true, 2048)], 4096));
        // Turned off, or flags unfenced.
        assert!(!kernels_rule(false, 2, &[(true, 2048)], 4096));
        // A neighbour on this rank's device: a spinning kernel would hold the shared GPU.
        assert!(!kernels_rule(true, 2, &[(false, 2048)], 4096));
        // More ranks (another rank may share the device), or two neighbours.
        assert!(!kernels_rule(true, 3, &[(true, 2048)], 4096));
        assert!(!kernels_rule(true, 2, &[(true, 8), (true, 8)], 16));
        // A halo of 512 KB: too much for one block.
        assert!(!kernels_rule(true, 2, &[(true, 1 << 19)], 1 << 19));
        assert!(!kernels_rule(true, 2, &[(true, 8)], 1 << 19));
        // Payloads the kernels copy as 4-byte words.
        assert!(!kernels_rule(true, 2, &[(true, 6)], 8));
        assert!(kernels_rule(true, 2, &[(true, 0)], 0));
    }
}
