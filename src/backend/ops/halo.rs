//! The distributed SpMV's halo kernels (used by `crate::dist`, feature `mpi`; built on every
//! backend so that the kernels are tested everywhere).
//!
//! A rank's rows of A split into the local block (columns it owns) and the ghost block
//! (columns owned by other ranks, renumbered 0..n_ghost). y = A x is then
//! y = A_local x_local + A_ghost x_ghost: `halo_gather` packs the entries of x other ranks
//! need, the local product runs while they travel, and `halo_spmv_add` adds the ghost block's
//! product on the boundary rows only.

use super::krylov::Basis;
use super::spmv::SpmvDots;
use super::vector::VectorOps;
use crate::backend::buffer::{check_len, Buffer};
use crate::backend::{Partials, Slot};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use enum_dispatch::enum_dispatch;

mod launch;

/// A validated list of indices into vectors of length `bound` (the halo plan's send list).
#[derive(Debug)]
pub struct GatherList {
    pub(crate) idx: Buffer<u32>,
    pub(crate) bound: usize,
}

impl GatherList {
    /// Check every index against `bound` and upload the list.
    pub fn upload<B: VectorOps + ?Sized>(backend: &B, idx: &[u32], bound: usize) -> Result<Self> {
        if let Some(&i) = idx.iter().find(|&&i| i as usize >= bound) {
            return Err(Error::param(
                "gather list",
                format!("index {i} out of range for vectors of length {bound}"),
            ));
        }
        Ok(Self {
            idx: backend.upload(idx)?,
            bound,
        })
    }
    /// Number of gathered entries.
    pub fn len(&self) -> usize {
        self.idx.len()
    }
    /// True when nothing is gathered.
    pub fn is_empty(&self) -> bool {
        self.idx.is_empty()
    }
}

/// The ghost block of a rank's rows, compressed to the rows that have ghost entries: row
/// `rows[i]` of the local vector gets `sum_k values[k] xg[col_idx[k]]` for k in
/// `row_ptr[i]..row_ptr[i+1]`. Validated on the host before upload.
#[derive(Debug)]
pub struct GhostBlock<T> {
    pub(crate) rows: Buffer<u32>,
    pub(crate) row_ptr: Buffer<u32>,
    pub(crate) col_idx: Buffer<u32>,
    pub(crate) values: Buffer<T>,
    pub(crate) n_local: usize,
    pub(crate) n_ghost: usize,
}

impl<T: Scalar> GhostBlock<T> {
    /// Check and upload the arrays: `rows` strictly increasing below `n_local`, `row_ptr`
    /// monotone from 0 to `col_idx.len()`, columns below `n_ghost`, finite values.
    pub fn upload<B: VectorOps + ?Sized>(
        backend: &B,
        rows: &[u32],
        row_ptr: &[u32],
        col_idx: &[u32],
        values: &[T],
        n_local: usize,
        n_ghost: usize,
    ) -> Result<Self> {
        let bad = |msg: String| Err(Error::param("ghost block", msg));
        if row_ptr.len() != rows.len() + 1 || row_ptr[0] != 0 {
            return bad(format!(
                "row pointers: {} for {} rows",
                row_ptr.len(),
                rows.len()
            ));
        }
        if row_ptr.windows(2).any(|w| w[0] > w[1])
            || *row_ptr.last().unwrap() as usize != col_idx.len()
        {
            return bad("row pointers not monotone or not ending at the entry count".into());
        }
        if col_idx.len() != values.len() {
            return bad(format!(
                "{} columns vs {} values",
                col_idx.len(),
                values.len()
            ));
        }
        if rows.windows(2).any(|w| w[0] >= w[1])
            || rows.last().is_some_and(|&r| r as usize >= n_local)
        {
            return bad(format!("rows not increasing below {n_local}"));
        }
        if col_idx.iter().any(|&c| c as usize >= n_ghost) {
            return bad(format!("column out of range for {n_ghost} ghost entries"));
        }
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite {
                what: "matrix (ghost block)".into(),
                index,
            });
        }
        Ok(Self {
            rows: backend.upload(rows)?,
            row_ptr: backend.upload(row_ptr)?,
            col_idx: backend.upload(col_idx)?,
            values: backend.upload(values)?,
            n_local,
            n_ghost,
        })
    }
    /// Rows with ghost entries.
    pub fn n_rows(&self) -> usize {
        self.rows.len()
    }
    /// Ghost entries of x this block reads.
    pub fn n_ghost(&self) -> usize {
        self.n_ghost
    }
    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// Bytes of device memory.
    pub fn bytes(&self) -> usize {
        self.rows.bytes() + self.row_ptr.bytes() + self.col_idx.bytes() + self.values.bytes()
    }
}

/// The message exchange of a halo exchange: given the send entries, fill the receive area
/// (the MPI part, supplied by the distributed layer to [`HaloOps::halo_exchange`]).
pub type HaloMessages<'a, T> = dyn FnMut(&[T], &mut [T]) -> Result<()> + 'a;

/// A device-to-device halo link of one distributed matrix between processes of one node
/// (CUDA inter-process memory): this rank's receive area and flags, exported to its
/// neighbours, and theirs opened here. Made by [`HaloOps::halo_peer_prepare`], connected by
/// [`HaloOps::halo_peer_connect`], used by [`HaloOps::halo_peer_send`] and
/// [`HaloOps::halo_peer_receive`] in place of the host-staged exchange.
pub struct PeerLink {
    /// What a neighbour needs to open this rank's receive area (backend-defined bytes).
    pub export: Vec<u8>,
    /// The backend's state (device allocations, opened peer areas, the exchange count).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) state: Box<dyn std::any::Any + Send>,
}

impl std::fmt::Debug for PeerLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PeerLink({} export bytes)", self.export.len())
    }
}

/// How a [`PeerLink`] may run, given to [`HaloOps::halo_peer_connect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeerOptions {
    /// Accept a neighbour on this rank's own device (else it is an error, and processes that
    /// share a GPU agree on the host path).
    pub shared_device: bool,
    /// Let a one-neighbour link between two devices exchange by kernels on the compute stream
    /// (CUDA `halo_link_push` / `halo_link_pull`), where the backend supports it: for small
    /// payloads on the critical path, such as the global sums. A halo link leaves it off: its
    /// copies overlap the local product on the link's own stream.
    pub kernels: bool,
}

/// One neighbour of a [`PeerLink`], in elements of the vectors exchanged.
#[derive(Debug, Clone)]
pub struct PeerNeighbor {
    /// Its rank.
    pub rank: usize,
    /// Its [`PeerLink::export`].
    pub export: Vec<u8>,
    /// The entries of this rank's send buffer that go to it.
    pub send: std::ops::Range<usize>,
    /// Where they land in its ghost vector.
    pub remote_offset: usize,
    /// How many entries it expects from this rank (equal to `send`'s length in a consistent
    /// plan; checked).
    pub remote_len: usize,
    /// The entries of this rank's ghost vector that come from it.
    pub recv: std::ops::Range<usize>,
}

fn peer_unsupported() -> Error {
    Error::Distributed("this backend has no device-to-device halo link".into())
}

/// Halo kernels of the distributed SpMV. The default bodies launch them on a GPU backend,
/// written once for both runtimes (`ops/halo/launch.rs`); the host backend implements the
/// kernels itself, and the device-to-device links are each backend's own.
#[enum_dispatch]
pub trait HaloOps: VectorOps {
    /// Kernel `halo_gather`: `out_i = x[x_off + idx_i]` for `i` below the list's length
    /// (`x_off` selects a vector inside a larger buffer, such as a GMRES basis column); `out`
    /// may be longer than the list, its other entries are left as they are.
    fn halo_gather<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        x_off: usize,
        out: &mut Buffer<T>,
    ) -> Result<()> {
        let runtime = self.kernel_runtime();
        launch::halo_gather(runtime.gpu("halo_gather")?, list, x, x_off, out)
    }

    /// Kernel `halo_partials_finish`: `out[out_off + s]` = the finished sum of slot `s < slots`
    /// of the partials of `groups` groups at `partials[in_off..]`, in f64 and in the host's
    /// finish order (the bits of [`VectorOps::finish`]; with one group, the values themselves).
    /// The first half of a global sum on the device.
    fn halo_partials_finish<T: Scalar>(
        &self,
        partials: &Buffer<T>,
        in_off: usize,
        groups: usize,
        slots: usize,
        out: &mut Buffer<f64>,
        out_off: usize,
    ) -> Result<()> {
        let runtime = self.kernel_runtime();
        let rt = runtime.gpu("halo_partials_finish")?;
        launch::halo_partials_finish(rt, partials, in_off, groups, slots, out, out_off)
    }

    /// Kernel `halo_rank_sums`: for `j < count`, `sums[out_off + j]` = the sum over the ranks
    /// `r = 0..ranks` in rank order, in f64, of `local[j]` for `r = me` and
    /// `gathered[r * local.len() + j]` otherwise, rounded to `T`; with `zero`, also
    /// `sums[out_off + count] = 0`. The second half of a global sum on the device, after the
    /// ranks' finished sums were gathered.
    #[allow(clippy::too_many_arguments)]
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
        let runtime = self.kernel_runtime();
        let rt = runtime.gpu("halo_rank_sums")?;
        launch::halo_rank_sums(rt, local, gathered, ranks, me, count, sums, out_off, zero)
    }

    /// Kernel `halo_spmv_add`: y += A_ghost xg on the boundary rows.
    fn halo_spmv_add<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
    ) -> Result<()> {
        let runtime = self.kernel_runtime();
        launch::halo_spmv_add(runtime.gpu("halo_spmv_add")?, ghost, xg, y)
    }

    /// This rank's side of a device-to-device halo link for a ghost vector of `recv_bytes`
    /// bytes among `ranks` ranks, or `None` where the backend has none (the host-staged
    /// exchange is used). Not collective.
    fn halo_peer_prepare(
        &self,
        rank: usize,
        ranks: usize,
        recv_bytes: usize,
    ) -> Result<Option<PeerLink>> {
        let _ = (rank, ranks, recv_bytes);
        Ok(None)
    }

    /// Open the neighbours' receive areas and check that this device can write them (a probe
    /// that touches only this link's flags). `elem` is the size of a vector entry in bytes;
    /// `options` say whether a neighbour on this rank's own device is accepted and whether the
    /// link may exchange by kernels ([`PeerOptions`]). Not collective; an error leaves `link`
    /// unusable (drop it).
    fn halo_peer_connect(
        &self,
        link: &mut PeerLink,
        elem: usize,
        neighbors: &[PeerNeighbor],
        options: PeerOptions,
    ) -> Result<()> {
        let _ = (link, elem, neighbors, options);
        Err(peer_unsupported())
    }

    /// Queue the copies of `send`'s entries into the neighbours' receive areas, each after
    /// the neighbour has consumed the previous exchange's, and flag them (device-side waits:
    /// the host does not block).
    fn halo_peer_send<T: Scalar>(&self, link: &mut PeerLink, send: &Buffer<T>) -> Result<()> {
        let _ = (link, send);
        Err(peer_unsupported())
    }

    /// Queue the wait for every neighbour's entries of this exchange, the copy of the receive
    /// area into `ghost_x`, and the flags that let the neighbours send again; kernels queued
    /// afterwards see the ghost entries.
    fn halo_peer_receive<T: Scalar>(
        &self,
        link: &mut PeerLink,
        ghost_x: &mut Buffer<T>,
    ) -> Result<()> {
        let _ = (link, ghost_x);
        Err(peer_unsupported())
    }

    /// The whole global sum of two ranks over `link` in one kernel (CUDA `halo_sums_link`),
    /// where the link exchanges by kernels ([`PeerOptions::kernels`]) with one neighbour on
    /// another device: the `slots` slots of `groups` partials at `in_off` of `partials` (of
    /// `sums` itself when `None`) finished as [`HaloOps::halo_partials_finish`] does, sent,
    /// the neighbour's received, and both added in rank order as [`HaloOps::halo_rank_sums`]
    /// does: the same bits as those steps, in one launch instead of four. `out` = (offset,
    /// stride, length): sum j goes to `sums[offset + j stride]` and every other entry of
    /// `sums[offset..offset + length]` is set to 0 (stride 1, length slots + 1: the sums and a 0;
    /// stride `groups`: a partials layout whose group 0 holds the global sums). One exchange
    /// of the link, as a [`HaloOps::halo_peer_send`] and [`HaloOps::halo_peer_receive`] pair.
    /// `Ok(false)` with nothing queued where the link does not run so (the caller then takes
    /// the steps).
    #[allow(clippy::too_many_arguments)]
    fn halo_sums_by_kernel<T: Scalar>(
        &self,
        link: &mut PeerLink,
        partials: Option<&Buffer<T>>,
        in_off: usize,
        groups: usize,
        slots: usize,
        sums: &mut Buffer<T>,
        out: (usize, usize, usize),
    ) -> Result<bool> {
        let _ = (link, partials, in_off, groups, slots, sums, out);
        Ok(false)
    }

    /// Whether [`HaloOps::halo_send_start`] leaves the copy of the send entries in flight on a
    /// second queue, so that the local product can be queued before the host waits for them
    /// (CUDA). Without it the distributed SpMV waits for the send entries first and queues the
    /// local product while the messages travel.
    fn halo_overlaps(&self) -> bool {
        false
    }

    /// Gather `list` of `x` into `send` and start copying the entries to the host (where the
    /// backend can, asynchronously; [`HaloOps::halo_exchange`] waits for them).
    fn halo_send_start<T: Scalar>(
        &self,
        list: &GatherList,
        x: &Buffer<T>,
        x_off: usize,
        send: &mut Buffer<T>,
    ) -> Result<()> {
        self.halo_gather(list, x, x_off, send)
    }

    /// The rest of a halo exchange after [`HaloOps::halo_send_start`]: wait for the send
    /// entries, hand them and a receive area to `exchange` (the messages), then upload the
    /// received entries into `ghost_x` (two transfers); kernels queued on this backend
    /// afterwards see them. `host_send` and `host_recv` are host scratch of the two lengths.
    /// CUDA hands its page-locked staging to `exchange` instead (no host copies) and returns
    /// before the upload is done: the compute stream waits for it on the device.
    fn halo_exchange<T: Scalar>(
        &self,
        send: &Buffer<T>,
        ghost_x: &mut Buffer<T>,
        host_send: &mut [T],
        host_recv: &mut [T],
        exchange: &mut HaloMessages<'_, T>,
    ) -> Result<()> {
        self.read(send, host_send)?;
        exchange(host_send, host_recv)?;
        self.write(ghost_x, host_recv)
    }

    /// Kernel `halo_spmv_add_dots`: [`HaloOps::halo_spmv_add`], and the partials of `dots`
    /// corrected for the rows the add changes. The local product must have written those
    /// partials for y before the add (a fused `spmv_dots` with the same `partials`, queued
    /// before this call): the slots then hold the inner products of the full y, and the split
    /// matrix needs no separate dot kernels. Each group adds its correction to its own partial
    /// (no atomics), so the result is deterministic.
    fn halo_spmv_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        y: &mut Buffer<T>,
        dots: SpmvDots<'_, T>,
        partials: &mut Partials<T>,
    ) -> Result<()> {
        let runtime = self.kernel_runtime();
        let rt = runtime.gpu("halo_spmv_add_dots")?;
        launch::halo_spmv_add_dots(rt, ghost, xg, y, dots, partials)
    }

    /// [`HaloOps::halo_spmv_add_dots`] on GMRES basis column `i` (y = v_i) with the partner
    /// of `prev_slot` column i-1 and `self_slot` for <v_i, v_i>: the ghost half of a
    /// distributed `basis_spmv_dots`, whose local half wrote those partials.
    #[allow(clippy::too_many_arguments)]
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
        let runtime = self.kernel_runtime();
        let rt = runtime.gpu("halo_basis_add_dots")?;
        launch::halo_basis_add_dots(rt, ghost, xg, basis, i, partials, prev_slot, self_slot)
    }

    /// Kernel `halo_dcgs2_add_dots`: the ghost half of a distributed
    /// [`KrylovOps::gmres_dcgs2_spmv_dots`](super::krylov::KrylovOps::gmres_dcgs2_spmv_dots),
    /// whose local half (the fused kernel on the local block, with the same `pb`) ran before:
    /// w = column `ucol + 1` gets the ghost block's product on the boundary rows, and slots
    /// 0..ucol of `pb` (<v_{j+1}, w>: the c_j and d = <u, w>) the changes' contributions, each
    /// group to its own partial. The partials of u (`pa`) do not involve w.
    fn halo_dcgs2_add_dots<T: Scalar>(
        &self,
        ghost: &GhostBlock<T>,
        xg: &Buffer<T>,
        basis: &mut Basis<T>,
        ucol: usize,
        pb: &mut Partials<T>,
    ) -> Result<()> {
        let runtime = self.kernel_runtime();
        let rt = runtime.gpu("halo_dcgs2_add_dots")?;
        launch::halo_dcgs2_add_dots(rt, ghost, xg, basis, ucol, pb)
    }
}

/// Check the shapes of `halo_dcgs2_add_dots`: columns 1..=ucol + 1 of a basis of the local
/// length, the ghost vector, and slots 0..ucol of `pb`.
pub(crate) fn check_ghost_dcgs2<T: Scalar>(
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    basis: &Basis<T>,
    ucol: usize,
    pb: &Partials<T>,
) -> Result<()> {
    if ucol == 0 {
        return Err(Error::param("ucol", "halo_dcgs2_add_dots needs ucol >= 1"));
    }
    basis.check_col(ucol + 1)?;
    check_len(
        "halo_dcgs2_add_dots: ghost vector length",
        xg,
        ghost.n_ghost,
    )?;
    if basis.n() != ghost.n_local {
        return Err(Error::dims(
            "halo_dcgs2_add_dots: basis length vs local rows",
            ghost.n_local,
            basis.n(),
        ));
    }
    let on: Vec<Slot> = (0..ucol).map(Slot).collect();
    super::checks::slots("halo_dcgs2_add_dots", pb, ghost.n_local, &on)
}

/// Most sums one [`HaloOps::halo_sums_by_kernel`] carries (`HALO_SUMS_LINK_MAX` of the
/// kernels), and what the distributed layer's sums link carries per rank.
#[cfg_attr(not(any(feature = "cuda", feature = "mpi")), allow(dead_code))]
pub(crate) const SUMS_LINK_MAX_SLOTS: usize = 256;

/// The ranges of [`HaloOps::halo_sums_by_kernel`]: the partials (of `sums` itself when
/// `partials_len` is `None`) hold `in_off + slots x groups` entries, and `out` = (offset,
/// stride, length) lies in `sums` and holds the `slots` sums at its stride, with its stride and
/// length in 32 bits.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn check_sums_by_kernel(
    partials_len: Option<usize>,
    in_off: usize,
    groups: usize,
    slots: usize,
    sums_len: usize,
    out: (usize, usize, usize),
) -> Result<()> {
    let fits = |len: usize, off: usize, count: Option<usize>, what: &str| -> Result<()> {
        match count.and_then(|c| off.checked_add(c)) {
            Some(end) if end <= len => Ok(()),
            _ => Err(Error::dims(
                what,
                off.saturating_add(count.unwrap_or(usize::MAX)),
                len,
            )),
        }
    };
    let (out_off, stride, out_len) = out;
    let spans = stride >= 1
        && slots
            .saturating_sub(1)
            .checked_mul(stride)
            .is_some_and(|last| last < out_len.max(1));
    if !spans || u32::try_from(out_len).is_err() || u32::try_from(stride).is_err() {
        return Err(Error::param(
            "out",
            format!("{slots} sums at stride {stride} do not fit {out_len} entries"),
        ));
    }
    fits(
        sums_len,
        out_off,
        Some(out_len),
        "halo_sums_by_kernel: sums",
    )?;
    fits(
        partials_len.unwrap_or(sums_len),
        in_off,
        slots.checked_mul(groups),
        "halo_sums_by_kernel: partials",
    )
}

/// Check the shapes of `halo_gather`.
/// The sizes [`HaloOps::halo_partials_finish`] needs.
pub(crate) fn check_partials_finish<T: Scalar>(
    partials: &Buffer<T>,
    in_off: usize,
    groups: usize,
    slots: usize,
    out: &Buffer<f64>,
    out_off: usize,
) -> Result<()> {
    let end = groups
        .checked_mul(slots)
        .and_then(|len| len.checked_add(in_off));
    if end.map_or(true, |end| end > partials.len()) {
        return Err(Error::dims(
            "halo_partials_finish: partials length vs offset + groups x slots",
            in_off.saturating_add(groups.saturating_mul(slots)),
            partials.len(),
        ));
    }
    if out_off
        .checked_add(slots)
        .map_or(true, |end| end > out.len())
    {
        return Err(Error::dims(
            "halo_partials_finish: out length vs offset + slots",
            out_off.saturating_add(slots),
            out.len(),
        ));
    }
    Ok(())
}

/// The sizes [`HaloOps::halo_rank_sums`] needs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_rank_sums<T: Scalar>(
    local: &Buffer<f64>,
    gathered: &Buffer<f64>,
    ranks: usize,
    me: usize,
    count: usize,
    sums: &Buffer<T>,
    out_off: usize,
    zero: bool,
) -> Result<()> {
    if me >= ranks {
        return Err(Error::param("me", format!("rank {me} of {ranks} ranks")));
    }
    if count > local.len() {
        return Err(Error::dims(
            "halo_rank_sums: local length vs count",
            count,
            local.len(),
        ));
    }
    if ranks.checked_mul(local.len()) != Some(gathered.len()) {
        return Err(Error::dims(
            "halo_rank_sums: gathered length vs ranks x local length",
            ranks.saturating_mul(local.len()),
            gathered.len(),
        ));
    }
    let end = out_off.checked_add(count + usize::from(zero));
    if end.map_or(true, |end| end > sums.len()) {
        return Err(Error::dims(
            "halo_rank_sums: sums length vs offset + count (+ 1 with zero)",
            out_off.saturating_add(count + usize::from(zero)),
            sums.len(),
        ));
    }
    Ok(())
}

pub(crate) fn check_gather<T: Scalar>(
    list: &GatherList,
    x: &Buffer<T>,
    x_off: usize,
    out: &Buffer<T>,
) -> Result<()> {
    if x_off
        .checked_add(list.bound)
        .map_or(true, |end| end > x.len())
    {
        return Err(Error::dims(
            "halo_gather: x length vs offset + the list's bound",
            x_off.saturating_add(list.bound),
            x.len(),
        ));
    }
    if out.len() < list.len() {
        return Err(Error::dims(
            "halo_gather: out length vs the list (at least)",
            list.len(),
            out.len(),
        ));
    }
    Ok(())
}

/// Check the shapes of `halo_basis_add_dots`; returns the slots as kernel arguments in the
/// order yy (self), w0 (prev), w1 (off).
pub(crate) fn check_ghost_basis<T: Scalar>(
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    basis: &Basis<T>,
    i: usize,
    partials: &Partials<T>,
    prev_slot: Option<Slot>,
    self_slot: Option<Slot>,
) -> Result<[Option<Slot>; 3]> {
    if i == 0 {
        return Err(Error::param("i", "halo_basis_add_dots needs i >= 1"));
    }
    basis.check_col(i)?;
    check_len(
        "halo_basis_add_dots: ghost vector length",
        xg,
        ghost.n_ghost,
    )?;
    if basis.n() != ghost.n_local {
        return Err(Error::dims(
            "halo_basis_add_dots: basis length vs local rows",
            ghost.n_local,
            basis.n(),
        ));
    }
    let on: Vec<Slot> = self_slot.into_iter().chain(prev_slot).collect();
    super::checks::slots("halo_basis_add_dots", partials, ghost.n_local, &on)?;
    Ok([self_slot, prev_slot, None])
}

/// Check the shapes of `halo_spmv_add`.
pub(crate) fn check_ghost<T: Scalar>(
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    y: &Buffer<T>,
) -> Result<()> {
    check_len("halo_spmv_add: ghost vector length", xg, ghost.n_ghost)?;
    check_len("halo_spmv_add: y length vs local rows", y, ghost.n_local)
}

/// Check the shapes of `halo_spmv_add_dots`; returns the slots as kernel arguments in the
/// order yy, w0, w1 (`None` = off).
pub(crate) fn check_ghost_dots<T: Scalar>(
    ghost: &GhostBlock<T>,
    xg: &Buffer<T>,
    y: &Buffer<T>,
    dots: &SpmvDots<'_, T>,
    partials: &Partials<T>,
) -> Result<[Option<Slot>; 3]> {
    check_ghost(ghost, xg, y)?;
    for (v, _) in dots.with.iter().flatten() {
        check_len(
            "halo_spmv_add_dots: partner vector length",
            v,
            ghost.n_local,
        )?;
    }
    let wanted = [
        dots.yy,
        dots.with[0].map(|w| w.1),
        dots.with[1].map(|w| w.1),
    ];
    let on: Vec<Slot> = wanted.iter().flatten().copied().collect();
    super::checks::slots("halo_spmv_add_dots", partials, ghost.n_local, &on)?;
    Ok(wanted)
}

#[cfg(test)]
mod tests;
