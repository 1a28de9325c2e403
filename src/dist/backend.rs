//! [`DistBackend`]: any backend, distributed over MPI ranks.
//!
//! Why a wrapper backend rather than distributed matrix and vector types: the solvers are
//! generic over `B: Backend` and see vectors only through kernels, so a backend whose kernels
//! act on the rank's rows and whose reduction finish sums over the ranks runs every solver
//! unchanged (CG, BiCGStab, GMRES, pipelined and classical, with any per-rank
//! preconditioner). Vectors are the rank's rows; element-wise kernels and first-stage partials
//! are the inner backend's; only three things change:
//! - `finish` sums the per-rank slot sums over the ranks: one collective per finish, so a
//!   pipelined CG iteration costs one global reduction, as on one GPU it costs one transfer;
//! - products with a distributed [`DeviceMatrix`] start the local product, exchange the halo
//!   meanwhile and add the ghost block's product (`halo_gather`, `halo_spmv_add`); the fused
//!   first-stage dots come from the local product's fused kernel, corrected for the boundary
//!   rows by the ghost add (`halo_spmv_add_dots`), so they cost no pass of their own;
//! - the fused kernels that finish a reduction inside the kernel (BiCGStab's s update,
//!   GMRES's Gram-Schmidt and normalization) are given a copy of the partials whose slots
//!   hold the global sums (group 0) and zeros, so every work-group of every rank reads the
//!   global value; the copy is built on the device from the few global sums. That is one
//!   collective more per such kernel: BiCGStab needs two global reductions per iteration, as
//!   every BiCGStab does. GMRES's DCGS2 step runs in its two halves instead
//!   (`gmres_dcgs2_sums`, `gmres_dcgs2_apply`): the step's 2 count + 2 sums are formed on the
//!   device and only they are summed over the ranks. On two ranks of one node with linked
//!   devices (by default; the tuning's
//!   [`sums_peer`](crate::backend::tuning::Tuning::sums_peer) chooses, see
//!   [`crate::backend::tuning::SUMS_PEER_MAX_RANKS`]) these sums go device to device instead
//!   ([`SumsPath`]: `halo_partials_finish`, a full-mesh link between the ranks' devices,
//!   `halo_rank_sums` in rank order), so the host neither reads the partials nor waits for
//!   them.

use super::comm::Comm;
use super::matrix::{device_halo, DeviceHalo, ExchangeBuffers, PeerMode};
use crate::backend::{
    AfsaiGrowKernel, AfsaiGrowth, BackendInfo, Basis, BiluParts, BlockTriangular, Buffer,
    CounterSnapshot, DeviceMatrix, FsaiPattern, GatherList, GhostBlock, HaloOps, InversePattern,
    IpStencil, KrylovOps, Partials, PcgStepVectors, PeerNeighbor, PeerOptions, PrecondOps, Slot,
    SpmvDots, SpmvOps, StencilCoefficients, Sums, VectorOps,
};
use crate::backend::{CgSlots, CsrUpdate, FaultInjection, ResidentOps, ResidentState};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use bytemuck::Pod;
use std::cell::Cell;
use std::ops::Range;
use std::time::Instant;

/// Time a distributed solve spent communicating, as seen by the host of this rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct CommStats {
    /// Halo exchanges.
    pub exchanges: u64,
    /// Of those, the exchanges that went device to device over a [`crate::backend::PeerLink`]
    /// (the others went through page-locked host memory and MPI).
    pub peer_exchanges: u64,
    /// Global reductions (finishes and globalized partials).
    pub reductions: u64,
    /// Of those, the reductions summed on the devices over a [`crate::backend::PeerLink`]
    /// (globalized partials only: a finish the host needs goes through MPI).
    pub device_reductions: u64,
    /// Host seconds in the halo outside the local product: packing and reading the send
    /// entries, waiting for the messages after the local product was started, uploading the
    /// ghost entries (the exchange time the local product did not hide, on a GPU). Where the
    /// backend overlaps (CUDA), the wait for the send entries also waits for the device work
    /// queued before the gather, so this is host time, not exposed device time.
    pub halo_seconds: f64,
    /// Host seconds inside the reduction collectives (waiting for the slowest rank included).
    pub reduce_seconds: f64,
    /// Host seconds spent handing global sums to kernels that finish a reduction inside
    /// their work-groups (BiCGStab's s update, GMRES's Gram-Schmidt steps), outside the
    /// collective: reading this rank's partials and writing the global sums back to the
    /// device. Outside profiling mode the read also waits for the work queued before it.
    pub globalize_seconds: f64,
    /// Seconds of the local products of distributed SpMVs, measured only in profiling mode
    /// ([`DistBackend::set_profiling`]: the device is synchronized around each local product,
    /// which serializes it with the exchange); 0 otherwise.
    pub local_spmv_seconds: f64,
}

/// Index lists that turn a vector of global sums into a partials buffer (see
/// [`DistBackend`]'s `globalized`), kept per shape: `(len, groups, slots, first, zero)` maps
/// to the list of `len` entries whose entry `s * groups` is `first + s` and every other entry
/// `zero` (the index of a 0 in the sums vector).
type ScatterLists = std::collections::HashMap<(usize, usize, usize, usize, usize), GatherList>;

/// Finished sums a [`SumsPath::Device`] link carries per rank and reduction: more slots than
/// that (GMRES(m) with m above about 125) take the host path for that reduction.
const SUMS_LINK_SLOTS: usize = crate::backend::ops::halo::SUMS_LINK_MAX_SLOTS;

/// How [`DistBackend`]'s globalized partials are summed over the ranks, decided collectively at
/// the first such reduction.
enum SumsPath {
    /// Not decided yet.
    Undecided,
    /// Read back, summed with MPI, uploaded.
    Host,
    /// On the devices: each rank finishes its partials (`halo_partials_finish`), the finished
    /// sums go to every other rank over a device-to-device link, and each rank adds them in
    /// rank order (`halo_rank_sums`); no host involvement, so the device queue does not drain.
    Device(Box<SumsLink>),
}

/// The link of [`SumsPath::Device`] and its buffers (the link first: it drops before the
/// buffers its copies use).
struct SumsLink {
    link: crate::backend::PeerLink,
    /// This rank's finished sums ([`SUMS_LINK_SLOTS`]).
    local: Buffer<f64>,
    /// Every rank's, as the link delivers them (`ranks x SUMS_LINK_SLOTS`; this rank's part
    /// unused).
    gathered: Buffer<f64>,
}

/// A backend distributed over the ranks of a communicator (see the module doc).
pub struct DistBackend<B> {
    /// How globalized partials are summed over the ranks (first: its link drops before the
    /// backend whose streams its copies follow).
    sums_path: std::cell::RefCell<SumsPath>,
    inner: B,
    comm: Comm,
    stats: Cell<CommStats>,
    profiling: Cell<bool>,
    scatter: std::cell::RefCell<ScatterLists>,
    /// Identity index lists of `groups` entries (a partials buffer's slot 0), per `groups`.
    prefixes: std::cell::RefCell<std::collections::HashMap<usize, GatherList>>,
}

impl<B: VectorOps> DistBackend<B> {
    /// Wrap `inner` (this rank's device) for the ranks of `comm`.
    pub fn new(inner: B, comm: Comm) -> Self {
        Self {
            sums_path: std::cell::RefCell::new(SumsPath::Undecided),
            inner,
            comm,
            stats: Cell::new(CommStats::default()),
            profiling: Cell::new(false),
            scatter: std::cell::RefCell::new(ScatterLists::new()),
            prefixes: std::cell::RefCell::new(std::collections::HashMap::new()),
        }
    }
    /// Profiling mode: synchronize the device around every local product to time it
    /// ([`CommStats::local_spmv_seconds`]), and before the reads of partials, so that
    /// [`CommStats::halo_seconds`] and [`CommStats::globalize_seconds`] count communication
    /// only. It removes the overlap of the exchange with the local product, so time solves
    /// without it.
    pub fn set_profiling(&self, on: bool) {
        self.profiling.set(on);
    }
    /// The communicator.
    pub fn comm(&self) -> &Comm {
        &self.comm
    }
    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }
    /// Communication statistics so far.
    pub fn comm_stats(&self) -> CommStats {
        self.stats.get()
    }
    /// Reset the statistics.
    pub fn reset_comm_stats(&self) {
        self.stats.set(CommStats::default());
    }

    /// In profiling mode, wait for the queued device work, so that the time measured next is
    /// communication only.
    fn sync_when_profiling(&self) -> Result<()> {
        if self.profiling.get() {
            self.inner.synchronize()?;
        }
        Ok(())
    }

    fn record(&self, f: impl FnOnce(&mut CommStats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }

    /// Global slot sums (one collective).
    fn reduce(&self, local: &[f64]) -> Vec<f64> {
        let t = Instant::now();
        let out = self.comm.sum_slots(local);
        self.record(|s| {
            s.reductions += 1;
            s.reduce_seconds += t.elapsed().as_secs_f64();
        });
        out
    }

    /// Copies of `parts` whose slots hold the global sums in group 0 and zeros elsewhere, so
    /// that a kernel finishing a slot inside its work-groups reads the global value (one
    /// collective for all of them). The global sums come from the devices where the ranks
    /// agreed on a sums link ([`SumsPath::Device`]: nothing read back, the device queue keeps
    /// running); otherwise each part costs one read of its partials (the backend's finish), an
    /// MPI sum, and the sums go up as one small vector. Either way a gather with a cached index
    /// list spreads them over the groups, instead of a groups x slots upload.
    fn globalized<T: Scalar>(&self, parts: &[&Partials<T>]) -> Result<Vec<Partials<T>>>
    where
        B: HaloOps + SpmvOps,
    {
        self.sync_when_profiling()?;
        let t = Instant::now();
        let total: usize = parts.iter().map(|p| p.slots()).sum();
        // One part: the global sums written straight into the copy's layout by one kernel,
        // where the link runs so. A failed allocation here takes the steps below instead,
        // which exchange all the same (the other ranks' devices wait for this rank's flags)
        // and report it.
        let on_devices = matches!(*self.sums_path_decided()?, SumsPath::Device(_));
        if let ([part], true) = (parts, on_devices) {
            let (len, groups) = (part.buffer().len(), part.groups());
            let stride = groups.max(1);
            let fits = total.checked_mul(stride).is_some_and(|used| used <= len);
            if let (true, Ok(mut copy)) = (fits, self.inner.alloc::<T>(len)) {
                let input = (Some(part.buffer()), 0, groups, total);
                if self.device_sums_by_kernel(input, &mut copy, (0, stride, len))? == Some(true) {
                    self.record(|s| s.globalize_seconds += t.elapsed().as_secs_f64());
                    return Ok(vec![Partials::from_buffer(copy, part.n(), groups, total)]);
                }
            }
        }
        let (sums, reduce_seconds) = match self.device_sums(parts, total)? {
            Some(sums) => (sums, 0.0),
            None => {
                let mut local = Vec::new();
                for p in parts {
                    local.extend(self.inner.finish(p)?.0);
                }
                let before_reduce = Instant::now();
                let global = self.reduce(&local);
                let reduce_seconds = before_reduce.elapsed().as_secs_f64();
                // The sums, then one zero that every group but the first reads.
                let mut sums: Vec<T> = global.iter().map(|&v| T::from_f64(v)).collect();
                sums.push(T::zero());
                (self.inner.upload(&sums)?, reduce_seconds)
            }
        };
        let zero = total;
        let mut lists = self.scatter.borrow_mut();
        let mut at = 0;
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            let (len, groups, slots) = (p.buffer().len(), p.groups(), p.slots());
            let key = (len, groups, slots, at, zero);
            let list = match lists.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    let idx: Vec<u32> = (0..len)
                        .map(|i| {
                            if i < slots * groups && i % groups.max(1) == 0 {
                                at + i / groups.max(1)
                            } else {
                                zero
                            }
                        })
                        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                        .collect();
                    e.insert(GatherList::upload(&self.inner, &idx, zero + 1)?)
                }
            };
            let mut buf = self.inner.alloc::<T>(len)?;
            self.inner.halo_gather(list, &sums, 0, &mut buf)?;
            out.push(Partials::from_buffer(buf, p.n(), groups, slots));
            at += slots;
        }
        self.record(|s| {
            s.globalize_seconds += t.elapsed().as_secs_f64() - reduce_seconds;
        });
        Ok(out)
    }

    fn halo_of<'m, T: Scalar>(&self, a: &'m DeviceMatrix<T>) -> Result<Option<&'m DeviceHalo<T>>> {
        match device_halo(a) {
            Some(h) if h.size != self.comm.size() || h.rank != self.comm.rank() => {
                Err(Error::Distributed(format!(
                    "matrix built for rank {} of {}, used on rank {} of {}",
                    h.rank,
                    h.size,
                    self.comm.rank(),
                    self.comm.size()
                )))
            }
            Some(h) if h.size > 1 => Ok(Some(h)),
            _ => Ok(None),
        }
    }
}

impl<B: HaloOps + SpmvOps> DistBackend<B> {
    /// y = A x for a rank's rows: pack the send entries, start the exchange, run the local
    /// product while the messages travel, then add the ghost block's product. With `dots`,
    /// the local product is the fused `spmv_dots` and the ghost add corrects its partials
    /// (`halo_spmv_add_dots`), so the dots cost no pass of their own.
    fn product<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        h: &DeviceHalo<T>,
        ex: &mut ExchangeBuffers<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: Option<(SpmvDots<'_, T>, &mut Partials<T>)>,
    ) -> Result<()> {
        self.sync_when_profiling()?;
        let t = Instant::now();
        self.send_start(h, ex, x, 0)?;
        let mut dots = dots;
        self.exchange_around(h, ex, t, || match dots.as_mut() {
            Some((d, partials)) => self.inner.spmv_dots(a, x, y, *d, partials),
            None => self.inner.spmv(a, x, y),
        })?;
        match dots {
            Some((d, partials)) => {
                self.inner
                    .halo_spmv_add_dots(&h.ghost, &ex.ghost_x, y, d, partials)
            }
            None => self.inner.halo_spmv_add(&h.ghost, &ex.ghost_x, y),
        }
    }

    /// The start of an exchange: pack the entries of `x` (from `x_off`) that other ranks need
    /// and start sending them (device to device over a [`PeerLink`] where the ranks agreed on
    /// one at their first exchange, otherwise towards the host).
    fn send_start<T: Scalar>(
        &self,
        h: &DeviceHalo<T>,
        ex: &mut ExchangeBuffers<T>,
        x: &Buffer<T>,
        x_off: usize,
    ) -> Result<()> {
        if matches!(ex.peer, PeerMode::Undecided) {
            ex.peer = self.agree_on_peer_link(h, ex)?;
        }
        match &mut ex.peer {
            PeerMode::Peer(link) => {
                self.inner.halo_gather(&h.gather, x, x_off, &mut ex.send)?;
                self.inner.halo_peer_send(link, &ex.send)
            }
            _ => self
                .inner
                .halo_send_start(&h.gather, x, x_off, &mut ex.send),
        }
    }

    /// Collective, once per matrix: a device-to-device link if every rank's backend makes one
    /// ([`HaloOps::halo_peer_prepare`]), all ranks run on one node, the inner backend's
    /// [`halo_peer`](crate::backend::tuning::Tuning::halo_peer) asks for it on every rank (by
    /// default: from three ranks on, see
    /// [`HALO_PEER_MIN_RANKS`](crate::backend::tuning::HALO_PEER_MIN_RANKS)), and every rank
    /// connects to its neighbours; otherwise the
    /// host-staged exchange. Not an error when the link fails; but a sticky device fault
    /// during the connection probe poisons that rank's backend, whose next operation then
    /// fails with it.
    fn agree_on_peer_link<T: Scalar>(
        &self,
        h: &DeviceHalo<T>,
        ex: &ExchangeBuffers<T>,
    ) -> Result<PeerMode> {
        let elem = std::mem::size_of::<T>();
        let enabled = self.inner.tuning().halo_peer_for(self.comm.size());
        let neighbours: Vec<_> = h
            .plan
            .neighbors
            .iter()
            .map(|nb| (nb.rank, nb.send.clone(), nb.recv.clone()))
            .collect();
        Ok(
            match self.agree_on_link(
                "halo link",
                enabled,
                ex.ghost_x.len(),
                elem,
                &neighbours,
                // Its copies overlap the local product on the link's stream: no push kernel
                // before it on the compute stream.
                PeerOptions {
                    shared_device: true,
                    kernels: false,
                },
            ) {
                Some(l) => PeerMode::Peer(l),
                None => PeerMode::Host,
            },
        )
    }

    /// Collective: a device-to-device link whose receive area holds `recv_len` elements of
    /// `elem` bytes, with `neighbours` as `(rank, entries of the send buffer that go to it,
    /// entries of the receive buffer that come from it)`, if every rank's backend makes one,
    /// `enabled` holds on every rank, all ranks run on one node and every rank connects
    /// with `options` ([`PeerOptions`]: a neighbour on the rank's own device accepted or not,
    /// exchanges by kernels allowed or not); `None` otherwise
    /// (not an error).
    fn agree_on_link(
        &self,
        what: &str,
        enabled: bool,
        recv_len: usize,
        elem: usize,
        neighbours: &[(usize, Range<usize>, Range<usize>)],
        options: PeerOptions,
    ) -> Option<crate::backend::PeerLink> {
        let comm = &self.comm;
        let prepared = if enabled {
            recv_len
                .checked_mul(elem)
                .ok_or_else(|| Error::param("halo", "receive area size overflows"))
                .and_then(|bytes| {
                    self.inner
                        .halo_peer_prepare(comm.rank(), comm.size(), bytes)
                })
        } else {
            Ok(None)
        };
        let mut link = match prepared {
            Ok(Some(l)) => Some(l),
            _ => None,
        };
        let nodes = comm.all_gather_u64(comm.node_hash());
        let one_node = nodes.iter().all(|&v| v == nodes[0]);
        let have = comm.agree(
            what,
            link.as_ref().map(|_| ()).ok_or(Error::Unsupported(format!(
                "no device-to-device {what} on this rank"
            ))),
        );
        let mut l = link.take().filter(|_| have.is_ok() && one_node)?;
        // Each rank tells each neighbour where the neighbour's entries land in its receive
        // buffer, and how to open its receive area.
        let mut to = vec![Vec::new(); comm.size()];
        for (rank, _, recv) in neighbours {
            let mut msg = vec![recv.start as u64, recv.len() as u64, l.export.len() as u64];
            msg.extend(l.export.chunks(8).map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(b)
            }));
            to[*rank] = msg;
        }
        let from = comm.all_to_all_lists(&to);
        let peers: Result<Vec<PeerNeighbor>> = neighbours
            .iter()
            .map(|(rank, send, recv)| {
                let msg = &from[*rank];
                if msg.len() < 3 {
                    return Err(Error::Distributed(format!(
                        "{what}: no export from rank {rank}"
                    )));
                }
                let len = msg[2] as usize;
                let export: Vec<u8> = msg[3..]
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .take(len)
                    .collect();
                Ok(PeerNeighbor {
                    rank: *rank,
                    export,
                    send: send.clone(),
                    remote_offset: msg[0] as usize,
                    remote_len: msg[1] as usize,
                    recv: recv.clone(),
                })
            })
            .collect();
        let connected = peers.and_then(|n| self.inner.halo_peer_connect(&mut l, elem, &n, options));
        comm.agree(&format!("{what} connection"), connected)
            .ok()
            .map(|()| l)
    }

    /// Collective, at the first globalized reduction: [`SumsPath::Device`] when every rank
    /// makes a full-mesh link for [`SUMS_LINK_SLOTS`] finished sums (see [`Self::agree_on_link`];
    /// the tuning's `sums_peer` chooses, `Tuning::sums_peer_for`; by default only
    /// between ranks on distinct devices, since ranks sharing a GPU would wait for each
    /// other's contexts at every reduction), else the host path.
    fn agree_on_sums_link(&self) -> SumsPath {
        let (ranks, me) = (self.comm.size(), self.comm.rank());
        let k = SUMS_LINK_SLOTS;
        let wanted = self.inner.tuning().sums_peer_for(ranks);
        let buffers = (|| -> Result<(Buffer<f64>, Buffer<f64>)> {
            if !wanted {
                return Err(Error::Unsupported(
                    "global sums on the devices not asked for".into(),
                ));
            }
            let local = self.inner.upload(&vec![0.0f64; k])?;
            let gathered = self.inner.upload(&vec![0.0f64; k * ranks])?;
            Ok((local, gathered))
        })();
        let enabled = buffers.is_ok();
        let neighbours: Vec<_> = (0..ranks)
            .filter(|&r| r != me)
            .map(|r| (r, 0..k, r * k..(r + 1) * k))
            .collect();
        match (
            self.agree_on_link(
                "sums link",
                enabled,
                k * ranks,
                8,
                &neighbours,
                PeerOptions {
                    shared_device: self.inner.tuning().sums_peer_forced(),
                    kernels: true,
                },
            ),
            buffers,
        ) {
            (Some(link), Ok((local, gathered))) => SumsPath::Device(Box::new(SumsLink {
                link,
                local,
                gathered,
            })),
            _ => SumsPath::Host,
        }
    }

    /// The global sums of every slot of `parts` (in order) and a 0 after them, summed on the
    /// devices when [`SumsPath::Device`] was agreed and they fit its link; `None` for the host
    /// path. Collective: every rank calls it with the same shapes.
    fn device_sums<T: Scalar>(
        &self,
        parts: &[&Partials<T>],
        total: usize,
    ) -> Result<Option<Buffer<T>>>
    where
        B: HaloOps,
    {
        let inputs: Vec<_> = parts
            .iter()
            .map(|p| (p.buffer(), 0, p.groups(), p.slots()))
            .collect();
        let Some(link) = self.device_sums_start(&inputs, total)? else {
            return Ok(None);
        };
        let mut sums = self.inner.alloc::<T>(total + 1);
        let done = match &mut sums {
            Ok(sums) => self.device_sums_end(link, total, sums, 0, true),
            Err(_) => self.device_sums_end_nowhere(link),
        };
        let sums = sums?;
        done?;
        Ok(Some(sums))
    }

    /// The path of the global sums, agreed by all ranks at the first call (collective then).
    fn sums_path_decided(&self) -> Result<std::cell::RefMut<'_, SumsPath>>
    where
        B: HaloOps,
    {
        let mut path = self
            .sums_path
            .try_borrow_mut()
            .map_err(|_| Error::Distributed("global sums re-entered".into()))?;
        if matches!(*path, SumsPath::Undecided) {
            *path = self.agree_on_sums_link();
        }
        Ok(path)
    }

    /// The device-to-device global sums of one input `(partials, offset, groups, slots)` (the
    /// partials of `sums` itself when `None`) in one kernel where the link exchanges by kernels
    /// ([`HaloOps::halo_sums_by_kernel`], `out` = (offset, stride, length) in `sums`):
    /// `Some(true)` done, `Some(false)` nothing done (the caller takes the steps of
    /// [`Self::device_sums_start`] and [`Self::device_sums_end`]), `None` for the host path.
    /// Collective, as those are.
    fn device_sums_by_kernel<T: Scalar>(
        &self,
        input: (Option<&Buffer<T>>, usize, usize, usize),
        sums: &mut Buffer<T>,
        out: (usize, usize, usize),
    ) -> Result<Option<bool>>
    where
        B: HaloOps,
    {
        let (partials, in_off, groups, slots) = input;
        let mut path = self.sums_path_decided()?;
        let SumsPath::Device(l) = &mut *path else {
            return Ok(None);
        };
        if slots > l.local.len() {
            return Ok(None);
        }
        let done = self.inner.halo_sums_by_kernel(
            &mut l.link,
            partials,
            in_off,
            groups,
            slots,
            sums,
            out,
        )?;
        if done {
            self.record(|s| {
                s.reductions += 1;
                s.device_reductions += 1;
            });
        }
        Ok(Some(done))
    }

    /// The first half of the device-to-device global sums: the slots of `inputs` (`(buffer,
    /// offset, groups, slots)` each) finished into the link's buffer in order (`total` slots in
    /// all) and sent to every rank, their sums received. `None` (nothing done) for the host
    /// path: no link agreed, or more than [`SUMS_LINK_SLOTS`] sums. Collective; the caller must
    /// follow with [`Self::device_sums_end`].
    fn device_sums_start<T: Scalar>(
        &self,
        inputs: &[(&Buffer<T>, usize, usize, usize)],
        total: usize,
    ) -> Result<Option<std::cell::RefMut<'_, SumsLink>>>
    where
        B: HaloOps,
    {
        let path = self.sums_path_decided()?;
        let Ok(mut l) = std::cell::RefMut::filter_map(path, |p| match p {
            SumsPath::Device(l) if total <= l.local.len() => Some(&mut **l),
            _ => None,
        }) else {
            return Ok(None);
        };
        let l_ref = &mut *l;
        let mut at = 0;
        let mut finished = Ok(());
        for &(buffer, in_off, groups, slots) in inputs {
            finished = finished.and_then(|()| {
                self.inner
                    .halo_partials_finish(buffer, in_off, groups, slots, &mut l_ref.local, at)
            });
            at += slots;
        }
        // The send and the receive are queued even when a step failed: the other ranks' devices
        // wait for this rank's flags.
        let sent = self.inner.halo_peer_send(&mut l_ref.link, &l_ref.local);
        let received = self
            .inner
            .halo_peer_receive(&mut l_ref.link, &mut l_ref.gathered);
        finished?;
        sent?;
        received?;
        Ok(Some(l))
    }

    /// The second half: the ranks' sums added in rank order into `sums[out_off..out_off +
    /// total]` (and a 0 after them with `zero`).
    fn device_sums_end<T: Scalar>(
        &self,
        l: std::cell::RefMut<'_, SumsLink>,
        total: usize,
        sums: &mut Buffer<T>,
        out_off: usize,
        zero: bool,
    ) -> Result<()>
    where
        B: HaloOps,
    {
        self.inner.halo_rank_sums(
            &l.local,
            &l.gathered,
            self.comm.size(),
            self.comm.rank(),
            total,
            sums,
            out_off,
            zero,
        )?;
        self.record(|s| {
            s.reductions += 1;
            s.device_reductions += 1;
        });
        Ok(())
    }

    /// The second half without an output (its allocation failed): the exchange already ran,
    /// so only the count is kept.
    fn device_sums_end_nowhere(&self, l: std::cell::RefMut<'_, SumsLink>) -> Result<()> {
        drop(l);
        self.record(|s| {
            s.reductions += 1;
            s.device_reductions += 1;
        });
        Ok(())
    }

    /// The middle of a distributed product, after `send_start`: run `local` (the local
    /// product) and the exchange in the order the backend overlaps best, then upload the
    /// ghost entries; records the halo time since `t` and, when profiling, the local time.
    fn exchange_around<T: Scalar>(
        &self,
        h: &DeviceHalo<T>,
        ex: &mut ExchangeBuffers<T>,
        t: Instant,
        local: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let profiling = self.profiling.get();
        if let PeerMode::Peer(link) = &mut ex.peer {
            // Device to device: the local product is queued behind the copies out, the copies
            // in behind it; the device orders both against the neighbours.
            if profiling {
                self.inner.synchronize()?;
            }
            let tl = Instant::now();
            // The receive is queued even when the local product failed: the neighbours'
            // next copies wait for its flags, and the send buffer for its event.
            let local_result = local();
            let local_result = match local_result {
                Ok(()) if profiling => self.inner.synchronize(),
                r => r,
            };
            let local_seconds = tl.elapsed().as_secs_f64();
            let received = self.inner.halo_peer_receive(link, &mut ex.ghost_x);
            local_result?;
            received?;
            self.record(|s| {
                s.exchanges += 1;
                s.peer_exchanges += 1;
                s.halo_seconds += t.elapsed().as_secs_f64() - local_seconds;
                if profiling {
                    s.local_spmv_seconds += local_seconds;
                }
            });
            return Ok(());
        }
        let mut local_seconds = 0.0;
        let mut pending = Some(local);
        // Runs the local product once (later calls do nothing), timed.
        let mut run_local = |seconds: &mut f64| -> Result<()> {
            let Some(local) = pending.take() else {
                return Ok(());
            };
            if profiling {
                self.inner.synchronize()?;
            }
            let t = Instant::now();
            local()?;
            if profiling {
                self.inner.synchronize()?;
            }
            *seconds = t.elapsed().as_secs_f64();
            Ok(())
        };
        if self.inner.halo_overlaps() {
            // The local product is queued behind the gather before the host waits for the
            // send entries (copied on the backend's second queue), so the device computes
            // while the host waits, exchanges and uploads.
            run_local(&mut local_seconds)?;
        }
        // Otherwise (one queue) the send entries are read first and the local product is
        // queued while the messages travel.
        let (comm, plan, elem) = (&self.comm, &h.plan, std::mem::size_of::<T>());
        self.inner.halo_exchange(
            &ex.send,
            &mut ex.ghost_x,
            &mut ex.host_send,
            &mut ex.host_recv,
            &mut |send, recv| {
                comm.exchange(
                    plan,
                    bytemuck::cast_slice(send),
                    bytemuck::cast_slice_mut(recv),
                    elem,
                    || run_local(&mut local_seconds),
                )
            },
        )?;
        self.record(|s| {
            s.exchanges += 1;
            s.halo_seconds += t.elapsed().as_secs_f64() - local_seconds;
            if profiling {
                s.local_spmv_seconds += local_seconds;
            }
        });
        Ok(())
    }
}

fn poisoned() -> Error {
    Error::Distributed("halo work buffers poisoned by an earlier panic".into())
}

impl<B: BackendInfo> BackendInfo for DistBackend<B> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn device_name(&self) -> String {
        format!(
            "{} (rank {} of {})",
            self.inner.device_name(),
            self.comm.rank(),
            self.comm.size()
        )
    }
    fn supports_f64(&self) -> bool {
        self.inner.supports_f64()
    }
    fn tuning(&self) -> &crate::backend::tuning::Tuning {
        self.inner.tuning()
    }
    fn ranks(&self) -> usize {
        self.comm.size()
    }
    fn agree_across_ranks(&self, what: &str, failed_here: bool) -> Result<()> {
        let local = if failed_here {
            Err(Error::Distributed(format!("{what} failed on this rank")))
        } else {
            Ok(())
        };
        self.comm.agree(what, local)
    }
    fn same_across_ranks(&self, what: &str, value: u64) -> Result<()> {
        self.comm.check_same(what, value)
    }
    fn is_gpu(&self) -> bool {
        self.inner.is_gpu()
    }
    fn kernel_runtime(&self) -> crate::backend::launch::KernelRuntime<'_> {
        self.inner.kernel_runtime()
    }
    fn prepare_kernels(&self, precision: crate::scalar::Precision) -> Result<()> {
        self.inner.prepare_kernels(precision)
    }
}

impl<B: VectorOps> VectorOps for DistBackend<B> {
    fn alloc<T: Pod>(&self, len: usize) -> Result<Buffer<T>> {
        self.inner.alloc(len)
    }
    fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>> {
        self.inner.upload(data)
    }
    fn write<T: Pod>(&self, dst: &mut Buffer<T>, data: &[T]) -> Result<()> {
        self.inner.write(dst, data)
    }
    fn read<T: Pod>(&self, src: &Buffer<T>, out: &mut [T]) -> Result<()> {
        self.inner.read(src, out)
    }
    fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }
    fn fill<T: Scalar>(&self, x: &mut Buffer<T>, value: T) -> Result<()> {
        self.inner.fill(x, value)
    }
    fn copy<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        self.inner.copy(x, y)
    }
    fn copy_from_f32<T: Scalar>(&self, x: &Buffer<f32>, y: &mut Buffer<T>) -> Result<()> {
        self.inner.copy_from_f32(x, y)
    }
    fn copy_to_f32<T: Scalar>(&self, x: &Buffer<T>, y: &mut Buffer<f32>) -> Result<()> {
        self.inner.copy_to_f32(x, y)
    }
    fn copy_u32(&self, x: &Buffer<u32>, y: &mut Buffer<u32>) -> Result<()> {
        self.inner.copy_u32(x, y)
    }
    fn axpby<T: Scalar>(&self, alpha: T, x: &Buffer<T>, beta: T, y: &mut Buffer<T>) -> Result<()> {
        self.inner.axpby(alpha, x, beta, y)
    }
    fn scale<T: Scalar>(&self, alpha: T, x: &mut Buffer<T>) -> Result<()> {
        self.inner.scale(alpha, x)
    }
    fn dot_partials<T: Scalar>(
        &self,
        x: &Buffer<T>,
        y: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.inner.dot_partials(x, y, partials, slot)
    }
    fn reduction_groups(&self, n: usize) -> usize {
        self.inner.reduction_groups(n)
    }
    /// The inner finish (one transfer of this rank's partials), then the sums over the ranks
    /// (one collective).
    fn finish<T: Scalar>(&self, partials: &Partials<T>) -> Result<Sums> {
        let local = self.inner.finish(partials)?;
        Ok(Sums(self.reduce(&local.0)))
    }
    fn finish_local<T: Scalar>(&self, partials: &Partials<T>) -> Result<Sums> {
        self.inner.finish(partials)
    }
    fn counters(&self) -> CounterSnapshot {
        self.inner.counters()
    }
    fn memory_use(&self) -> crate::backend::MemoryUse {
        self.inner.memory_use()
    }
    fn reset_peak_memory(&self) {
        self.inner.reset_peak_memory()
    }
}

impl<B: SpmvOps + HaloOps> SpmvOps for DistBackend<B> {
    fn uses_device_layouts(&self) -> bool {
        self.inner.uses_device_layouts()
    }
    fn auto_csr_stream(&self) -> bool {
        self.inner.auto_csr_stream()
    }

    fn spmv<T: Scalar>(&self, a: &DeviceMatrix<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        let Some(h) = self.halo_of(a)? else {
            return self.inner.spmv(a, x, y);
        };
        let mut work = h.work.lock().map_err(|_| poisoned())?;
        self.product(a, h, &mut work.exchange, x, y, None)
    }

    fn spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        let Some(h) = self.halo_of(a)? else {
            return self.inner.spmv_dots(a, x, y, dots, partials);
        };
        let mut work = h.work.lock().map_err(|_| poisoned())?;
        self.product(a, h, &mut work.exchange, x, y, Some((dots, partials)))
    }

    fn residual<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        b: &Buffer<T>,
        r: &mut Buffer<T>,
        partials: &mut Partials<T>,
        rr: Option<Slot>,
    ) -> Result<()> {
        if self.halo_of(a)?.is_none() {
            return self.inner.residual(a, x, b, r, partials, rr);
        }
        self.spmv(a, x, r)?;
        self.inner.axpby(T::one(), b, -T::one(), r)?;
        if let Some(s) = rr {
            self.inner.dot_partials(r, r, partials, s)?;
        }
        Ok(())
    }
}

impl<B: KrylovOps + HaloOps> KrylovOps for DistBackend<B> {
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
        self.inner.cg_update(alpha, beta, x, r, p, ap, partials, rr)
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
        self.inner
            .pcg_update(alpha, beta, x, r, z, p, ap, q, partials, rr, rz)
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
        if self.comm.size() == 1 {
            return self
                .inner
                .bicgstab_s_update(r, ap, s, partials, rr0, apr0, ss);
        }
        let mut global = self.globalized(&[partials])?;
        self.inner
            .bicgstab_s_update(r, ap, s, &mut global[0], rr0, apr0, ss)?;
        if ss != Slot(0) {
            return self.inner.dot_partials(s, s, partials, ss);
        }
        // The update wrote this rank's <s, s> partials into slot 0 of the copy, the first
        // `groups` entries of its buffer: a gather of those entries into the same places of
        // `partials` (whose other slots keep this rank's partials for the finish) costs one
        // small launch instead of a pass over s.
        let groups = partials.groups();
        let mut lists = self.prefixes.borrow_mut();
        let list = match lists.entry(groups) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let idx: Vec<u32> = (0..groups)
                    .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                    .collect();
                e.insert(GatherList::upload(&self.inner, &idx, groups)?)
            }
        };
        self.inner
            .halo_gather(list, global[0].buffer(), 0, &mut partials.buffer)
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
        self.inner.bicgstab_update(
            alpha, omega, beta, x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr,
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
        let Some(h) = self.halo_of(a)? else {
            return self
                .inner
                .basis_spmv_dots(a, src, basis, i, partials, prev_slot, self_slot);
        };
        if i == 0 || i >= basis.cols() {
            return Err(Error::param(
                "i",
                format!("basis_spmv_dots needs 1 <= i < {}", basis.cols()),
            ));
        }
        // Gather from z or column i-1, the local half writes column i with its fused dots,
        // the ghost half corrects them on the boundary rows: no copies, no extra dot passes.
        let mut work = h.work.lock().map_err(|_| poisoned())?;
        let ex = &mut work.exchange;
        self.sync_when_profiling()?;
        let t = Instant::now();
        match src {
            Some(z) => self.send_start(h, ex, z, 0)?,
            None => {
                let off = (i - 1) * basis.n();
                self.send_start(h, ex, basis.buffer(), off)?
            }
        }
        self.exchange_around(h, ex, t, || {
            self.inner
                .basis_spmv_dots(a, src, basis, i, partials, prev_slot, self_slot)
        })?;
        self.inner.halo_basis_add_dots(
            &h.ghost,
            &ex.ghost_x,
            basis,
            i,
            partials,
            prev_slot,
            self_slot,
        )
    }

    fn basis_dots<T: Scalar>(
        &self,
        basis: &Basis<T>,
        w: usize,
        cols: Range<usize>,
        partials: &mut Partials<T>,
        first_slot: Slot,
    ) -> Result<()> {
        self.inner.basis_dots(basis, w, cols, partials, first_slot)
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
        if self.comm.size() == 1 {
            return self
                .inner
                .gmres_gram_schmidt(basis, i, partials, first_slot, norm_slot, rmat, ld);
        }
        let mut global = self.globalized(&[partials])?;
        self.inner
            .gmres_gram_schmidt(basis, i, &mut global[0], first_slot, norm_slot, rmat, ld)?;
        self.inner
            .basis_dots(basis, i, i..i + 1, partials, norm_slot)
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
        if self.comm.size() == 1 {
            return self.inner.gmres_normalize(
                basis,
                i,
                partials,
                norm_slot,
                rmat,
                ld,
                xi_partials,
                xi_slot,
            );
        }
        let global = self.globalized(&[partials])?;
        self.inner.gmres_normalize(
            basis,
            i,
            &global[0],
            norm_slot,
            rmat,
            ld,
            xi_partials,
            xi_slot,
        )
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
        self.inner.basis_dots2(basis, wa, wb, cols, count_b, pa, pb)
    }

    fn fuses_dcgs2_spmv_dots<T: Scalar>(&self, a: &DeviceMatrix<T>, ucol: usize) -> bool {
        self.inner.fuses_dcgs2_spmv_dots(a, ucol)
    }

    /// The fused product and dots on the local block while the halo travels, then the ghost
    /// half (`halo_dcgs2_add_dots`): w's boundary rows and the dots that involve w corrected,
    /// no copies and no extra passes, as on one device.
    fn gmres_dcgs2_spmv_dots<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        basis: &mut Basis<T>,
        ucol: usize,
        pa: &mut Partials<T>,
        pb: &mut Partials<T>,
    ) -> Result<bool> {
        let Some(h) = self.halo_of(a)? else {
            return self.inner.gmres_dcgs2_spmv_dots(a, basis, ucol, pa, pb);
        };
        if !self.inner.fuses_dcgs2_spmv_dots(a, ucol) {
            return Ok(false);
        }
        let mut work = h.work.lock().map_err(|_| poisoned())?;
        let ex = &mut work.exchange;
        self.sync_when_profiling()?;
        let t = Instant::now();
        let off = ucol
            .checked_mul(basis.n())
            .ok_or_else(|| Error::param("ucol", "column offset overflows"))?;
        self.send_start(h, ex, basis.buffer(), off)?;
        let mut fused = false;
        self.exchange_around(h, ex, t, || {
            fused = self.inner.gmres_dcgs2_spmv_dots(a, basis, ucol, pa, pb)?;
            Ok(())
        })?;
        if !fused {
            // The inner backend said it fuses: declining now would make this rank exchange
            // twice in this step while others exchange once (mismatched messages).
            return Err(Error::Distributed(
                "the inner backend declined the fused DCGS2 step after saying it fuses".into(),
            ));
        }
        self.inner
            .halo_dcgs2_add_dots(&h.ghost, &ex.ghost_x, basis, ucol, pb)?;
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
        if self.comm.size() == 1 {
            return self
                .inner
                .gmres_dcgs2_update(basis, ucol, pa, pc, coef, coef_off);
        }
        self.gmres_dcgs2_sums(basis, ucol, pa, pc, coef, coef_off)?;
        self.inner.gmres_dcgs2_apply(basis, ucol, coef, coef_off)
    }

    /// This rank's sums on the device, then the 2 count + 2 of them summed over the ranks (one
    /// read and one write of the small coefficient buffer, one collective): the partials
    /// themselves never leave the device.
    fn gmres_dcgs2_sums<T: Scalar>(
        &self,
        basis: &Basis<T>,
        ucol: usize,
        pa: &Partials<T>,
        pc: &Partials<T>,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        let len = ucol
            .checked_sub(1)
            .and_then(|count| count.checked_mul(2))
            .and_then(|c| c.checked_add(4))
            .ok_or_else(|| Error::param("ucol", "the DCGS2 step needs ucol >= 1"))?;
        if coef_off
            .checked_add(len)
            .map_or(true, |end| end > coef.len())
        {
            return Err(Error::dims(
                "gmres_dcgs2_sums: coefficient buffer vs the step's row",
                coef_off.saturating_add(len),
                coef.len(),
            ));
        }
        self.inner
            .gmres_dcgs2_sums(basis, ucol, pa, pc, coef, coef_off)?;
        if self.comm.size() == 1 {
            return Ok(());
        }
        self.sync_when_profiling()?;
        let t = Instant::now();
        let count = ucol - 1;
        // On the devices: the step's sums (one group each) summed over the ranks in place.
        // beta and g (positions 2 count, 2 count + 1) get the sum of what the ranks hold there;
        // the update writes them before anything reads them.
        let fused =
            self.device_sums_by_kernel((None, coef_off, 1, len), coef, (coef_off, 1, len))?;
        if fused == Some(true) {
            self.record(|s| {
                s.globalize_seconds += t.elapsed().as_secs_f64();
            });
            return Ok(());
        }
        if let Some(link) = self.device_sums_start(&[(&*coef, coef_off, 1, len)], len)? {
            self.device_sums_end(link, len, coef, coef_off, false)?;
            self.record(|s| {
                s.globalize_seconds += t.elapsed().as_secs_f64();
            });
            return Ok(());
        }
        let mut host = self.inner.download(coef)?;
        let step = &mut host[coef_off..coef_off + 2 * count + 4];
        // beta and g (positions 2 count, 2 count + 1) are the update's to write.
        let local: Vec<f64> = step
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if i == 2 * count || i == 2 * count + 1 {
                    0.0
                } else {
                    v.to_f64()
                }
            })
            .collect();
        let before_reduce = Instant::now();
        let global = self.reduce(&local);
        let reduce_seconds = before_reduce.elapsed().as_secs_f64();
        for (v, g) in step.iter_mut().zip(&global) {
            *v = T::from_f64(*g);
        }
        self.inner.write(coef, &host)?;
        self.record(|s| {
            s.globalize_seconds += t.elapsed().as_secs_f64() - reduce_seconds;
        });
        Ok(())
    }

    fn gmres_dcgs2_apply<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        ucol: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        self.inner.gmres_dcgs2_apply(basis, ucol, coef, coef_off)
    }

    fn basis_axpy<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        dst: usize,
        src: usize,
        alpha: T,
    ) -> Result<()> {
        self.inner.basis_axpy(basis, dst, src, alpha)
    }

    fn basis_scale<T: Scalar>(&self, basis: &mut Basis<T>, col: usize, alpha: T) -> Result<()> {
        self.inner.basis_scale(basis, col, alpha)
    }

    fn basis_load<T: Scalar>(
        &self,
        basis: &mut Basis<T>,
        col: usize,
        src: &Buffer<T>,
        alpha: T,
    ) -> Result<()> {
        self.inner.basis_load(basis, col, src, alpha)
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
        if self.comm.size() == 1 {
            return self
                .inner
                .basis_load_normalized(basis, col, src, partials, slot, out, out_off);
        }
        let global = self.globalized(&[partials])?;
        self.inner
            .basis_load_normalized(basis, col, src, &global[0], slot, out, out_off)
    }

    fn basis_store<T: Scalar>(
        &self,
        basis: &Basis<T>,
        col: usize,
        dst: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.basis_store(basis, col, dst)
    }

    fn multi_axpy<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &[T],
    ) -> Result<()> {
        self.inner.multi_axpy(y, basis, cols, coeffs)
    }

    fn multi_axpy_device<T: Scalar>(
        &self,
        y: &mut Buffer<T>,
        basis: &Basis<T>,
        cols: Range<usize>,
        coeffs: &Buffer<T>,
    ) -> Result<()> {
        self.inner.multi_axpy_device(y, basis, cols, coeffs)
    }

    fn gmres_dcgs2_last_sums<T: Scalar>(
        &self,
        pa: &Partials<T>,
        count: usize,
        coef: &mut Buffer<T>,
        coef_off: usize,
    ) -> Result<()> {
        if self.comm.size() == 1 {
            return self.inner.gmres_dcgs2_last_sums(pa, count, coef, coef_off);
        }
        let global = self.globalized(&[pa])?;
        self.inner
            .gmres_dcgs2_last_sums(&global[0], count, coef, coef_off)
    }
}

impl<B: PrecondOps + HaloOps> PrecondOps for DistBackend<B> {
    fn csr_update<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        x: &Buffer<T>,
        update: CsrUpdate<'_, T>,
        out: &mut Buffer<T>,
        scratch: &mut Buffer<T>,
    ) -> Result<()> {
        // A rank's own matrix (AMG's levels): the inner kernel; with a halo, the composition
        // of this backend's halo-aware product.
        if self.halo_of(a)?.is_none() {
            return self.inner.csr_update(a, x, update, out, scratch);
        }
        crate::backend::ops::precond::reference::csr_update(self, a, x, update, out, scratch)
    }
    fn diag_scale<T: Scalar>(&self, d: &Buffer<T>, x: &Buffer<T>, y: &mut Buffer<T>) -> Result<()> {
        self.inner.diag_scale(d, x, y)
    }
    fn diag_scale_dot<T: Scalar>(
        &self,
        d: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.inner.diag_scale_dot(d, x, y, partials, slot)
    }
    fn block_diag_scale<T: Scalar>(
        &self,
        block_size: usize,
        inv_blocks: &Buffer<T>,
        x: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.block_diag_scale(block_size, inv_blocks, x, y)
    }
    fn bsr_trsv_sweep<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        b: &Buffer<T>,
        x_old: Option<&Buffer<T>>,
        x_new: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.bsr_trsv_sweep(t, b, x_old, x_new)
    }
    fn bsr_trsv_level<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        level_rows: &Buffer<u32>,
        level: Range<usize>,
        b: &Buffer<T>,
        x: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.bsr_trsv_level(t, level_rows, level, b, x)
    }
    fn bilu0_scatter<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        l: &mut BlockTriangular<T>,
        u: &mut BlockTriangular<T>,
        diag: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.bilu0_scatter(a, l, u, diag)
    }
    fn bilu0_sweep<T: Scalar>(
        &self,
        a: &BiluParts<'_, T>,
        old: Option<&BiluParts<'_, T>>,
        report: bool,
        l: &mut BlockTriangular<T>,
        u: &mut BlockTriangular<T>,
        bad_row: &mut Buffer<u32>,
    ) -> Result<()> {
        self.inner.bilu0_sweep(a, old, report, l, u, bad_row)
    }
    fn ip_domain_check<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.inner.ip_domain_check(a, partials, slot)
    }
    fn ip_assemble<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        scaled: bool,
        m_values: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.inner.ip_assemble(a, scaled, m_values, partials, slot)
    }
    fn isai_solve<T: Scalar>(
        &self,
        t: &BlockTriangular<T>,
        upper: bool,
        pattern: &InversePattern,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.isai_solve(t, upper, pattern, out)
    }
    fn fsai_rows<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        pattern: &FsaiPattern,
        batch: usize,
        scratch: &mut Buffer<T>,
        g_values: &mut Buffer<T>,
        gt_values: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner
            .fsai_rows(a, pattern, batch, scratch, g_values, gt_values)
    }
    fn afsai_grow_kernel(&self, growth: &AfsaiGrowth, mean_row_len: f64) -> AfsaiGrowKernel {
        self.inner.afsai_grow_kernel(growth, mean_row_len)
    }
    fn afsai_grow<T: Scalar>(
        &self,
        a: &DeviceMatrix<T>,
        growth: AfsaiGrowth,
        kernel: AfsaiGrowKernel,
        rows: Range<usize>,
        scratch: &mut Buffer<T>,
        iscratch: &mut Buffer<u32>,
        out_cols: &mut Buffer<u32>,
        out_len: &mut Buffer<u32>,
    ) -> Result<()> {
        self.inner.afsai_grow(
            a, growth, kernel, rows, scratch, iscratch, out_cols, out_len,
        )
    }
    fn afsai_compact<T: Scalar>(
        &self,
        cap: usize,
        rows: Range<usize>,
        out_cols: &Buffer<u32>,
        out_len: &Buffer<u32>,
        g_row_ptr: &Buffer<u32>,
        g_col_idx: &mut Buffer<u32>,
        col_count: &mut Buffer<u32>,
    ) -> Result<()> {
        self.inner.afsai_compact::<T>(
            cap, rows, out_cols, out_len, g_row_ptr, g_col_idx, col_count,
        )
    }
    fn afsai_place<T: Scalar>(
        &self,
        src: &Buffer<u32>,
        len: usize,
        dst: &mut Buffer<u32>,
        offset: usize,
    ) -> Result<()> {
        self.inner.afsai_place::<T>(src, len, dst, offset)
    }
    fn fsai_transpose<T: Scalar>(
        &self,
        g_row_ptr: &Buffer<u32>,
        g_col_idx: &Buffer<u32>,
        gt_col_ptr: &Buffer<u32>,
        cursor: &mut Buffer<u32>,
        gt_row_idx: &mut Buffer<u32>,
        gt_entry: &mut Buffer<u32>,
        gt_pos: &mut Buffer<u32>,
    ) -> Result<()> {
        self.inner.fsai_transpose::<T>(
            g_row_ptr, g_col_idx, gt_col_ptr, cursor, gt_row_idx, gt_entry, gt_pos,
        )
    }
    fn ip_stencil<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.ip_stencil(st, r, z)
    }
    fn ip_stencil_dot<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        r: &Buffer<T>,
        z: &mut Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.inner.ip_stencil_dot(st, r, z, partials, slot)
    }
    fn ip_stencil_quad<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: &Buffer<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.inner.ip_stencil_quad(st, v, partials, slot)
    }
    fn ip_pcg_update<T: Scalar>(
        &self,
        st: &IpStencil<T>,
        v: PcgStepVectors<'_, T>,
        partials: &mut Partials<T>,
        slots: (Slot, Slot),
    ) -> Result<()> {
        self.inner.ip_pcg_update(st, v, partials, slots)
    }
    fn ip_stencil_check<T: Scalar>(
        &self,
        st: &StencilCoefficients<T>,
        a: &DeviceMatrix<T>,
        partials: &mut Partials<T>,
        slot: Slot,
    ) -> Result<()> {
        self.inner.ip_stencil_check(st, a, partials, slot)
    }
}

/// Device-resident iterations finish their reductions on each device, not over the ranks: with
/// one rank they are the inner backend's; on more the solvers' `auto` mode never picks them and
/// asking for them is an error.
impl<B: ResidentOps> ResidentOps for DistBackend<B> {
    fn begin_recording(&self) -> Result<bool> {
        if self.comm.size() > 1 {
            return Ok(false);
        }
        self.inner.begin_recording()
    }
    fn end_recording(&self) -> Result<Option<crate::backend::Recording>> {
        if self.comm.size() > 1 {
            return Ok(None);
        }
        self.inner.end_recording()
    }
    fn replay(&self, recording: &crate::backend::Recording) -> Result<()> {
        if self.comm.size() > 1 {
            return Err(resident_unsupported());
        }
        self.inner.replay(recording)
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
        if self.comm.size() > 1 {
            return Err(resident_unsupported());
        }
        self.inner
            .cg_update_resident(state, slots, hist_index, x, r, p, ap, partials, rr)
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
        if self.comm.size() > 1 {
            return Err(resident_unsupported());
        }
        self.inner.pcg_update_resident(
            state, slots, hist_index, x, r, z, p, ap, q, partials, rr, rz,
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
        if self.comm.size() > 1 {
            return Err(resident_unsupported());
        }
        self.inner
            .bicgstab_s_update_resident(state, r, ap, s, partials, rr0, apr0, ss)
    }
    fn bicgstab_update_resident<T: Scalar>(
        &self,
        state: &mut ResidentState,
        slots: crate::backend::BicgstabSlots,
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
        if self.comm.size() > 1 {
            return Err(resident_unsupported());
        }
        self.inner.bicgstab_update_resident(
            state, slots, hist_index, x, r, p, s, ap, as_, phat, shat, r0star, partials, rr0, rr,
        )
    }
    // The fused and combined kernels are not used over the distributed backend: with more than
    // one rank its products need the halo exchange between the kernels, and with one rank they
    // were never enabled here (nor tested). The trait's default bodies would launch them on the
    // inner backend's runtime.
    fn fuses_cg_resident<T: Scalar>(&self, _a: &DeviceMatrix<T>) -> bool {
        false
    }
    fn cg_fused_resident<T: Scalar>(
        &self,
        _state: &mut ResidentState,
        _a: &DeviceMatrix<T>,
        _hist_index: usize,
        _x: &mut Buffer<T>,
        _v: crate::backend::CgFusedVectors<'_, T>,
        _partials: &mut Partials<T>,
        _read: [Slot; 3],
        _written: [Slot; 3],
    ) -> Result<bool> {
        Ok(false)
    }
    fn bicgstab_s_spmv_resident<T: Scalar>(
        &self,
        _state: &mut ResidentState,
        _a: &DeviceMatrix<T>,
        _r: &Buffer<T>,
        _ap: &Buffer<T>,
        _s: &mut Buffer<T>,
        _as: &mut Buffer<T>,
        _r0star: &Buffer<T>,
        _partials: &mut Partials<T>,
        _update_slots: [Slot; 3],
        _products: [Slot; 3],
    ) -> Result<bool> {
        Ok(false)
    }
    fn fuses_bicgstab_resident<T: Scalar>(&self, _a: &DeviceMatrix<T>) -> bool {
        false
    }
    fn bicgstab_fused_resident<T: Scalar>(
        &self,
        _state: &mut ResidentState,
        _a: &DeviceMatrix<T>,
        _hist_index: usize,
        _x: &mut Buffer<T>,
        _v: crate::backend::BicgstabFusedVectors<'_, T>,
        _partials: &mut Partials<T>,
        _read: [Slot; 4],
        _written: [Slot; 3],
    ) -> Result<bool> {
        Ok(false)
    }
}

fn resident_unsupported() -> Error {
    Error::Unsupported("device-resident iterations with the distributed backend".into())
}

impl<B: HaloOps> HaloOps for DistBackend<B> {
    fn halo_gather<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        x_off: usize,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.halo_gather(list, x, x_off, out)
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
        self.inner
            .halo_partials_finish(partials, in_off, groups, slots, out, out_off)
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
        self.inner
            .halo_rank_sums(local, gathered, ranks, me, count, sums, out_off, zero)
    }
    fn halo_spmv_add<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.halo_spmv_add(ghost, xg, y)
    }
    fn halo_spmv_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        self.inner.halo_spmv_add_dots(ghost, xg, y, dots, partials)
    }
    fn halo_dcgs2_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        basis: &mut Basis<T>,
        ucol: usize,
        pb: &mut Partials<T>,
    ) -> Result<()> {
        self.inner.halo_dcgs2_add_dots(ghost, xg, basis, ucol, pb)
    }
    fn halo_overlaps(&self) -> bool {
        self.inner.halo_overlaps()
    }
    fn halo_send_start<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        x_off: usize,
        send: &mut Buffer<T>,
    ) -> Result<()> {
        self.inner.halo_send_start(list, x, x_off, send)
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
        self.inner
            .halo_basis_add_dots(ghost, xg, basis, i, partials, prev_slot, self_slot)
    }
    fn halo_exchange<T: Scalar>(
        &self,
        send: &Buffer<T>,
        ghost_x: &mut Buffer<T>,
        host_send: &mut [T],
        host_recv: &mut [T],
        exchange: &mut crate::backend::HaloMessages<'_, T>,
    ) -> Result<()> {
        self.inner
            .halo_exchange(send, ghost_x, host_send, host_recv, exchange)
    }
}

impl<B: FaultInjection> FaultInjection for DistBackend<B> {
    fn fail_allocation(&self, nth: Option<u64>) {
        self.inner.fail_allocation(nth);
    }
    fn inject_device_fault(&self) -> bool {
        self.inner.inject_device_fault()
    }
}
