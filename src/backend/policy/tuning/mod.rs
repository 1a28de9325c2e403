//! The tuning knobs of the backends ([`Tuning`]): typed values whose defaults are the measured
//! choices, held by every backend ([`crate::backend::BackendInfo::tuning`]) and given to it
//! explicitly (`HostBackend::with_tuning`, `CudaBackend::with_tuning`,
//! `OpenClBackend::with_tuning`, [`crate::backend::BackendConfig`]).
//!
//! The library never reads the environment for them: [`Tuning::from_env`] (the variables named
//! by the `*_ENV` constants below) and [`Tuning::set`] (`--tune key=value`) are for the command
//! line and the benchmark harness, which call them in one place. This module is also the one
//! place of the library that reads the device variables ([`CUDA_DEVICE_ENV`],
//! [`OPENCL_DEVICE_ENV`]) and the trace file ([`CUDA_TRACE_ENV`]).
//!
//! ```
//! use pipekrylov::backend::host::HostBackend;
//! use pipekrylov::backend::tuning::Tuning;
//! use pipekrylov::backend::BackendInfo;
//! let mut tuning = Tuning::default();
//! tuning.set("dcgs2_small_max_groups", "0").unwrap();
//! assert!(tuning.set("no_such_knob", "1").is_err());
//! let host = HostBackend::with_tuning(tuning);
//! assert_eq!(host.tuning().dcgs2_small_max_groups, 0);
//! ```

mod env;
pub use env::*;

use crate::backend::row_blocks::CsrKernel;
use crate::error::{Error, Result};
use std::path::PathBuf;

/// Every tuning knob of the backends, with the measured defaults (`Tuning::default()` is the
/// behaviour of a backend built without one). Fields are public and typed; the key of each for
/// [`Tuning::set`] (and `--tune key=value`) is its name, and [`Tuning::from_env`] reads it from
/// the environment variable named in its documentation. Knobs marked "for comparisons" exist for
/// the A/B measurements of the benchmark scripts: their defaults are what won.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Tuning {
    /// The CSR kernel of matrices uploaded with the automatic choice on GPUs
    /// ([`CsrKernel::Auto`]: chosen from the row lengths by
    /// [`crate::backend::row_blocks::choose`]; `vector`, `stream` or `stream-compact` force one,
    /// for comparisons). Default `Auto`: the stream kernel won for long or unequal rows from
    /// 2^20 entries on the H200 (`bench/results/stream-*-h200.csv`). Env [`CSR_KERNEL_ENV`].
    pub csr_kernel: CsrKernel,
    /// Lanes per CSR row of the GPU vector kernel, a power of two in 1..=32 (`None`: from the
    /// mean row length, the rules of the CUDA and OpenCL backends, measured on the H200:
    /// `bench/results/spmv-sweeps-h200.csv`, `poisson3d-lanes2-h200.csv`). For comparisons.
    /// Env [`CSR_LANES_ENV`].
    pub csr_lanes: Option<u32>,
    /// A CSR row is long (summed apart by whole work-groups) above this many times the mean row
    /// length (and [`crate::backend::long_rows::LONG_ROW_MIN`] entries); 0 turns the long-row
    /// path off. Default [`crate::backend::long_rows::LONG_ROW_FACTOR`] (8): the circuit matrix
    /// on the H200 took 19 ms per CG iteration without it (issue 16, `backend::long_rows`).
    /// Env [`LONG_ROW_FACTOR_ENV`].
    pub long_row_factor: usize,
    /// Whether SELL matrices get 16-bit column offsets where they fit (2 bytes less per entry;
    /// CSR takes its offsets from [`Tuning::csr_kernel`]). Default on; off for comparisons.
    /// Env [`SELL_COMPACT_ENV`] (`0` off).
    pub sell_compact: bool,
    /// Cache hints of the SpMV kernels' matrix and gather loads (`PK_LOAD_HINTS` in
    /// `kernels/dialect/cuda.h`; CUDA, and OpenCL on NVIDIA GPUs through inline PTX): 0 plain
    /// loads, 1 the matrix streamed (evict first), 2 also the gathers through the read-only
    /// path; values above 2 act as 2. Default 1 (the log `bench/log/`, load hints).
    /// Env [`MATRIX_LOAD_HINTS_ENV`].
    pub matrix_load_hints: u8,
    /// Work-groups per multiprocessor (compute unit) of the reduction plan of the CUDA and
    /// OpenCL backends, CPU OpenCL devices included (`partials` groups, and so the grid of every
    /// fused SpMV and update that writes partials), 1..=256 (`None`: 4, the CUDA backend's
    /// `REDUCTION_BLOCKS_PER_SM` and the OpenCL
    /// backend's equal default; the tests use 256 to get many groups on a 2-core CPU device).
    /// Env [`REDUCTION_GROUPS_PER_SM_ENV`].
    pub reduction_groups_per_sm: Option<usize>,
    /// Whether the device-resident CG without a preconditioner runs one kernel per iteration
    /// (`cg_fused_resident`, CSR without long rows): `Some(false)` never, `Some(true)` always,
    /// `None` by backend and size ([`Tuning::cg_fused_for`]: OpenCL up to
    /// [`CG_FUSED_OPENCL_MAX_ROWS`], CUDA up to [`CG_FUSED_CUDA_MAX_ROWS`];
    /// `bench/experiments/h200-cg-fused.sh`). Env [`CG_FUSED_ENV`].
    pub cg_fused: Option<bool>,
    /// Whether the device-resident CG and PCG updates take their sums from
    /// `cg_sums_resident` (once per iteration) instead of finishing the product's partials in
    /// every work-group: `None` by backend and group count ([`Tuning::cg_sums_kernel_for`]: on
    /// CUDA from [`CG_SUMS_KERNEL_MIN_GROUPS`] partials, `bench/results/h200-cg-sums-kernel/`).
    /// Env [`CG_SUMS_KERNEL_ENV`].
    pub cg_sums_kernel: Option<bool>,
    /// Whether the device-resident BiCGStab without a preconditioner runs its update and the
    /// next A p as one kernel (`bicgstab_fused_resident`, CSR without long rows): `None` by
    /// backend and size ([`Tuning::bicgstab_fused_for`]: OpenCL up to
    /// [`BICGSTAB_FUSED_OPENCL_MAX_ROWS`], never on CUDA; `bench/results/h200-bicgstab-fused/`).
    /// Env [`BICGSTAB_FUSED_ENV`].
    pub bicgstab_fused: Option<bool>,
    /// The largest partials group count for which a DCGS2 step runs as one kernel
    /// (`gmres_dcgs2_update_small`); 0 for two kernels always. Default
    /// [`DCGS2_SMALL_MAX_GROUPS`] (32; the log `bench/log/`,
    /// device-resident GMRES). Env [`DCGS2_SMALL_MAX_GROUPS_ENV`].
    pub dcgs2_small_max_groups: usize,
    /// Whether the GPU backends fuse GMRES's DCGS2 product and dots for SELL matrices
    /// (`gmres_dcgs2_spmv_dots_sell`): `None` on CUDA only (6-10% faster GMRES(30) iterations
    /// at n = 4M on CUDA, 0.5-1.6% slower on NVIDIA OpenCL; the log `bench/log/`, "GMRES's
    /// DCGS2 product and dots fused for SELL"). Env [`DCGS2_SELL_FUSED_ENV`].
    pub dcgs2_sell_fused: Option<bool>,
    /// Multiplier of the ceiling of the adaptive FSAI's growth scratch per batch
    /// (n (k_max s + 1) scalars), 1..=64 (`None`: 2 for the eq. (17) rule, whose rows mostly
    /// take every step and whose wider launches grew 5-35% faster on the H200, 1 for the step
    /// rule). Below the ceiling a batch is sized from the G the rows grown so far predict.
    /// Env [`AFSAI_BATCH_FACTOR_ENV`].
    pub afsai_batch_factor: Option<usize>,
    /// The adaptive FSAI's growth kernel on the GPU backends (`None`: `afsai_grow_team` where it
    /// fits and A has [`crate::backend::AFSAI_TEAM_MIN_ROW_LEN`] entries per row or more on
    /// average, else `afsai_grow`; `scripts/fsai-bench.sh`). `row` or `team` force one (a team
    /// that does not fit still falls back to rows). Env [`AFSAI_GROW_KERNEL_ENV`].
    pub afsai_grow_kernel: Option<AfsaiGrowKernel>,
    /// Whether the CUDA backend launches every kernel with programmatic stream serialization on
    /// devices of compute capability 9.0 or later (each kernel waits for its predecessor
    /// in-kernel, see `kernels/dialect/cuda.h`). Default on (issue 15, the log `bench/log/`);
    /// off for comparisons. Env [`CUDA_PDL_ENV`] (`0` off).
    pub cuda_pdl: bool,
    /// How early a CUDA kernel may start on sm_90+ with programmatic dependent launch: 0 when
    /// the previous kernel's blocks exit; 1 the products that follow the device-resident CG and
    /// BiCGStab updates as soon as every block of the update has waited for its own predecessor
    /// (`PDL_WAIT_START_NEXT` in `kernels/dialect/cuda.h`); 2 as 1, and the CSR products of
    /// uploaded matrices (and BiCGStab's fused s update and product) read their first rows
    /// before waiting (`EARLY_MATRIX` in `kernels/spmv.kc`); 3 as 2, and the CSR products
    /// also let their next kernel start right after their wait (`EARLY_NEXT`). Values above 3
    /// act as 3. Default 3 (bench/log/, issue 15, 2026-11-25 (h)). Env [`CUDA_EARLY_START_ENV`].
    pub cuda_early_start: u8,
    /// Every CUDA kernel's preferred shared-memory carveout, percent of the most shared memory
    /// an SM has, 0..=100 (`CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`, a hint to the
    /// driver; `None`: the driver's choice per kernel). For comparisons.
    /// Env [`CUDA_SMEM_CARVEOUT_ENV`].
    pub cuda_smem_carveout: Option<u8>,
    /// A kernel timeline of the CUDA backend (a diagnosis aid, `backend::cuda::write_trace`):
    /// `Some(file)` brackets every kernel launched outside a stream capture with timing events
    /// (about 3 us each on an H200) and the command line writes the timeline to `file` after a
    /// solve (suffixed `.rank<R>` under an MPI launcher). Default `None`.
    /// Env [`CUDA_TRACE_ENV`].
    pub cuda_trace: Option<PathBuf>,
    /// A kernel timeline of the OpenCL backend (a diagnosis aid, `backend::opencl::write_trace`):
    /// `Some(file)` creates the queue with profiling and keeps every launch's event; the command
    /// line writes the device's start and end of each kernel to `file` after a solve (suffixed
    /// `.rank<R>` under an MPI launcher). Default
    /// `None`. No environment variable: `--tune opencl_trace=FILE`.
    pub opencl_trace: Option<PathBuf>,
    /// Whether the OpenCL backend builds its inline-PTX program on NVIDIA GPUs (the SpMV's load
    /// hints and the warp version of the adaptive FSAI's team growth, `-D PK_NV_PTX`,
    /// `kernels/dialect/opencl.h`; off: their portable code). Other devices never use it. Default
    /// on (`bench/results/opencl-warp-sums/`). Env [`OPENCL_INLINE_PTX_ENV`] (`0` off).
    pub opencl_inline_ptx: bool,
    /// Whether the OpenCL backend passes buffers to kernels as device addresses (`None`: on
    /// NVIDIA GPUs only, where a `cl_mem` argument costs ~0.25 us per launch;
    /// `examples/probes/opencl_launch_cost.rs`, `backend::opencl` `address.rs`).
    /// Env [`OPENCL_ADDRESS_ARGS_ENV`] (`0` or `1`).
    pub opencl_address_args: Option<bool>,
    /// Whether OpenCL programs with device-address arguments take all of a kernel's arguments
    /// as one struct (~0.06 us less per argument and launch on the H200, `packed.rs`). Default
    /// on. Env [`OPENCL_PACKED_ARGS_ENV`] (`0` or `1`).
    pub opencl_packed_args: bool,
    /// When the OpenCL backend calls `clFlush` after a launch. Default [`FlushPolicy::NONE`] (no
    /// policy tried beat the runtime's own submission on the H200,
    /// `bench/experiments/opencl-submit-sweep.sh`). For comparisons. Env [`OPENCL_FLUSH_ENV`]
    /// (`none` or `KICK:EVERY`).
    pub opencl_flush: FlushPolicy,
    /// How the OpenCL backend waits for a small read (`None`: spin on GPUs, 1-2 us faster per
    /// CG and BiCGStab iteration on the H200, block on CPU devices, which need the core).
    /// For comparisons. Env [`OPENCL_WAIT_ENV`] (`block` or `spin`).
    pub opencl_wait: Option<WaitMode>,
    /// Whether a distributed solve tries the device-to-device halo link (CUDA inter-process
    /// memory, `backend::cuda` `peer.rs`) instead of page-locked host memory and MPI: `None`
    /// from [`HALO_PEER_MIN_RANKS`] ranks on ([`Tuning::halo_peer_for`]). Every rank must have
    /// the same value (the ranks agree on the link at the first exchange). Env
    /// [`HALO_PEER_ENV`].
    pub halo_peer: Option<bool>,
    /// Whether a distributed solve tries the device-to-device global sums of the fused kernels
    /// that finish a reduction themselves (BiCGStab's s update, GMRES's Gram-Schmidt and DCGS2
    /// steps): `Some(true)` on any number of ranks above one (also between ranks sharing a
    /// device), `None` on at most [`SUMS_PEER_MAX_RANKS`] ranks each on a device of its own
    /// ([`Tuning::sums_peer_for`]). Every rank must have the same value. Env [`SUMS_PEER_ENV`].
    pub sums_peer: Option<bool>,
    /// Whether the device-to-device link writes its flags with `cuStreamWriteValue32` (fenced
    /// behind the stream's earlier writes; off: `cuMemsetD32Async`, ordered by stream order
    /// only). Default on. For comparisons. Env [`HALO_FLAG_WRITE_ENV`] (`0` off).
    pub halo_flag_write: bool,
    /// Whether a one-neighbour device-to-device link (the global sums' link at two ranks)
    /// exchanges by two single-block kernels on the compute stream (`halo_link_push`,
    /// `halo_link_pull`, payloads up to [`LINK_KERNELS_MAX_BYTES`] between distinct devices)
    /// instead of the copy stream's copies and flag operations, which left the device idle
    /// about 24 us per exchange in a kernel timeline. Default on. Env [`LINK_KERNELS_ENV`]
    /// (`0` off).
    pub link_kernels: bool,
    /// Whether the global sums' link at two ranks, where it exchanges by kernels, takes one
    /// kernel (`halo_sums_link`) instead of four (`halo_partials_finish`, `halo_link_push`,
    /// `halo_link_pull`, `halo_rank_sums`: 10-22 us more per BiCGStab iteration). Default on.
    /// Env [`SUMS_KERNEL_ENV`] (`0` off).
    pub sums_kernel: bool,
}

impl Tuning {
    /// The measured defaults (what `Tuning::default()` returns).
    pub const DEFAULT: Tuning = Tuning {
        csr_kernel: CsrKernel::Auto,
        csr_lanes: None,
        long_row_factor: crate::backend::long_rows::LONG_ROW_FACTOR,
        sell_compact: true,
        matrix_load_hints: 1,
        reduction_groups_per_sm: None,
        cg_fused: None,
        cg_sums_kernel: None,
        bicgstab_fused: None,
        dcgs2_small_max_groups: DCGS2_SMALL_MAX_GROUPS,
        dcgs2_sell_fused: None,
        afsai_batch_factor: None,
        afsai_grow_kernel: None,
        cuda_pdl: true,
        cuda_early_start: 3,
        cuda_smem_carveout: None,
        cuda_trace: None,
        opencl_trace: None,
        opencl_inline_ptx: true,
        opencl_address_args: None,
        opencl_packed_args: true,
        opencl_flush: FlushPolicy::NONE,
        opencl_wait: None,
        halo_peer: None,
        sums_peer: None,
        halo_flag_write: true,
        link_kernels: true,
        sums_kernel: true,
    };

    /// Set the knob `key` (a field name, see [`Tuning::KEYS`]) from its text, as
    /// `--tune key=value` does: numbers for the numeric knobs, `0`/`1` (or `false`/`true`,
    /// `off`/`on`) for switches, `auto` for the automatic choice of the knobs that have one
    /// (`None`), the names of [`CsrKernel`], [`AfsaiGrowKernel`], [`FlushPolicy`] and
    /// [`WaitMode`], a file for `cuda_trace` (empty: none). An unknown key or a value out of the
    /// knob's range is [`Error::InvalidParameter`] naming the key; the tuning is then unchanged.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let v = value.trim();
        match key {
            "csr_kernel" => self.csr_kernel = v.parse().map_err(|_| bad(key, v, KERNELS))?,
            "csr_lanes" => {
                self.csr_lanes = auto_or(v, |s| {
                    within::<u32>(key, s, 1..=32).and_then(|k| match k.is_power_of_two() {
                        true => Ok(k),
                        false => Err(bad(key, s, "a power of two in 1..=32 or auto")),
                    })
                })?
            }
            "long_row_factor" => self.long_row_factor = count(key, v)?,
            "sell_compact" => self.sell_compact = switch(key, v)?,
            "matrix_load_hints" => self.matrix_load_hints = within(key, v, 0..=2)?,
            "reduction_groups_per_sm" => {
                self.reduction_groups_per_sm = auto_or(v, |s| within(key, s, 1..=256))?
            }
            "cg_fused" => self.cg_fused = auto_or(v, |s| switch(key, s))?,
            "cg_sums_kernel" => self.cg_sums_kernel = auto_or(v, |s| switch(key, s))?,
            "bicgstab_fused" => self.bicgstab_fused = auto_or(v, |s| switch(key, s))?,
            "dcgs2_small_max_groups" => self.dcgs2_small_max_groups = count(key, v)?,
            "dcgs2_sell_fused" => self.dcgs2_sell_fused = auto_or(v, |s| switch(key, s))?,
            "afsai_batch_factor" => {
                self.afsai_batch_factor = auto_or(v, |s| within(key, s, 1..=64))?
            }
            "afsai_grow_kernel" => {
                self.afsai_grow_kernel = auto_or(v, |s| {
                    s.parse().map_err(|_| bad(key, s, "row, team or auto"))
                })?
            }
            "cuda_pdl" => self.cuda_pdl = switch(key, v)?,
            "cuda_early_start" => self.cuda_early_start = within(key, v, 0..=3)?,
            "cuda_smem_carveout" => {
                self.cuda_smem_carveout = auto_or(v, |s| within(key, s, 0..=100))?
            }
            "cuda_trace" => self.cuda_trace = (!v.is_empty()).then(|| PathBuf::from(v)),
            "opencl_trace" => self.opencl_trace = (!v.is_empty()).then(|| PathBuf::from(v)),
            "opencl_inline_ptx" => self.opencl_inline_ptx = switch(key, v)?,
            "opencl_address_args" => self.opencl_address_args = auto_or(v, |s| switch(key, s))?,
            "opencl_packed_args" => self.opencl_packed_args = switch(key, v)?,
            "opencl_flush" => self.opencl_flush = FlushPolicy::parse(v)?,
            "opencl_wait" => self.opencl_wait = auto_or(v, WaitMode::parse)?,
            "halo_peer" => self.halo_peer = auto_or(v, |s| switch(key, s))?,
            "sums_peer" => self.sums_peer = auto_or(v, |s| switch(key, s))?,
            "halo_flag_write" => self.halo_flag_write = switch(key, v)?,
            "link_kernels" => self.link_kernels = switch(key, v)?,
            "sums_kernel" => self.sums_kernel = switch(key, v)?,
            other => {
                let keys: Vec<&str> = Self::KEYS.iter().map(|(k, _)| *k).collect();
                return Err(Error::param(
                    "tune",
                    format!("unknown tuning key `{other}` (one of {})", keys.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// [`Tuning::set`] from `key=value` (one `--tune` argument).
    pub fn set_pair(&mut self, pair: &str) -> Result<()> {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            Error::param(
                "tune",
                format!("`{pair}` is not key=value (e.g. cg_fused=0)"),
            )
        })?;
        self.set(key.trim(), value)
    }

    /// Whether a DCGS2 step with `count` final columns runs as one kernel
    /// (`gmres_dcgs2_update_small`) on partials of `groups` groups and work-groups of `wg`
    /// work-items (one work-item per slot: 2 (count + 1) <= wg): at most
    /// [`Tuning::dcgs2_small_max_groups`] groups.
    pub fn dcgs2_small_for(&self, groups: usize, count: usize, wg: usize) -> bool {
        groups <= self.dcgs2_small_max_groups && 2 * (count + 1) <= wg
    }

    /// Whether the device-resident CG runs fused on `n` rows ([`Tuning::cg_fused`]; by default on
    /// OpenCL up to [`CG_FUSED_OPENCL_MAX_ROWS`], on CUDA up to [`CG_FUSED_CUDA_MAX_ROWS`]).
    pub fn cg_fused_for(&self, cuda: bool, n: usize) -> bool {
        match self.cg_fused {
            Some(forced) => forced,
            None if cuda => n <= CG_FUSED_CUDA_MAX_ROWS,
            None => n <= CG_FUSED_OPENCL_MAX_ROWS,
        }
    }

    /// Whether a device-resident CG or PCG update on `groups` partials per slot takes its sums
    /// from `cg_sums_resident` ([`Tuning::cg_sums_kernel`]; by default on CUDA from
    /// [`CG_SUMS_KERNEL_MIN_GROUPS`] partials on, never on OpenCL: there the launch costs as
    /// much as it saves at 4M unknowns and 1.5-4% more at 0.3-1M on the H200).
    pub fn cg_sums_kernel_for(&self, cuda: bool, groups: usize) -> bool {
        self.cg_sums_kernel
            .unwrap_or(cuda && groups >= CG_SUMS_KERNEL_MIN_GROUPS)
    }

    /// Whether the device-resident BiCGStab runs its update fused with the next product on `n`
    /// rows ([`Tuning::bicgstab_fused`]; by default on OpenCL up to
    /// [`BICGSTAB_FUSED_OPENCL_MAX_ROWS`], never on CUDA: there programmatic dependent launch
    /// already overlaps the kernels' starts, and on the H200 the fused update was 0.99-1.15 of
    /// the three-kernel time up to 65K unknowns and 0.98-1.07 above).
    pub fn bicgstab_fused_for(&self, cuda: bool, n: usize) -> bool {
        match self.bicgstab_fused {
            Some(forced) => forced,
            None if cuda => false,
            None => n <= BICGSTAB_FUSED_OPENCL_MAX_ROWS,
        }
    }

    /// Whether the CUDA (`cuda`) or OpenCL backend fuses the DCGS2 product and dots for SELL
    /// ([`Tuning::dcgs2_sell_fused`]; by default on CUDA only).
    pub fn dcgs2_sell_fused_for(&self, cuda: bool) -> bool {
        self.dcgs2_sell_fused.unwrap_or(cuda)
    }

    /// Whether to try the halo link on a communicator of `ranks` ranks ([`Tuning::halo_peer`];
    /// by default from [`HALO_PEER_MIN_RANKS`] ranks on).
    pub fn halo_peer_for(&self, ranks: usize) -> bool {
        self.halo_peer.unwrap_or(ranks >= HALO_PEER_MIN_RANKS)
    }

    /// Whether to try the device-to-device global sums on `ranks` ranks
    /// ([`Tuning::sums_peer`]; by default from 2 up to [`SUMS_PEER_MAX_RANKS`] ranks; never on
    /// one rank: nothing to sum over).
    pub fn sums_peer_for(&self, ranks: usize) -> bool {
        ranks > 1 && self.sums_peer.unwrap_or(ranks <= SUMS_PEER_MAX_RANKS)
    }

    /// Whether [`Tuning::sums_peer`] forces the device-to-device global sums: then also between
    /// ranks that share a device.
    pub fn sums_peer_forced(&self) -> bool {
        self.sums_peer == Some(true)
    }

    /// [`Tuning::cuda_early_start`] within 0..=3.
    pub fn early_start_level(&self) -> u8 {
        self.cuda_early_start.min(3)
    }

    /// [`Tuning::matrix_load_hints`] within 0..=2.
    pub fn load_hints_level(&self) -> u8 {
        self.matrix_load_hints.min(2)
    }
}

impl Default for Tuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The kernel that grows the adaptive FSAI pattern
/// ([`PrecondOps::afsai_grow`](crate::backend::PrecondOps::afsai_grow)); both give the
/// same pattern bit for bit (the same arithmetic in the same order as the host's
/// `afsai_row`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfsaiGrowKernel {
    /// `afsai_grow`: one work-item per row, running the multiple-arrays merge through a binary
    /// heap; its Cholesky factor, heap and cursors live in device scratch
    /// ([`AfsaiGrowth::scalars_per_row`](crate::backend::AfsaiGrowth::scalars_per_row),
    /// [`AfsaiGrowth::indices_per_row`](crate::backend::AfsaiGrowth::indices_per_row) per row). Any cap.
    Row,
    /// `afsai_grow_team`: a team of 32 work-items per row, one merge list per work-item (the
    /// smallest current column found across the team, the equal columns summed in list order),
    /// the Cholesky factor of the row in local memory, extended and solved by the team's first
    /// work-item. No device scratch; cap <= [`AFSAI_TEAM_CAP`](crate::backend::AFSAI_TEAM_CAP) and a work-group of at least 32.
    Team,
}

impl AfsaiGrowKernel {
    /// The kernel's name (the report's `growth_kernel`).
    pub fn name(self) -> &'static str {
        match self {
            AfsaiGrowKernel::Row => "afsai_grow",
            AfsaiGrowKernel::Team => "afsai_grow_team",
        }
    }
}

impl std::str::FromStr for AfsaiGrowKernel {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "row" | "afsai_grow" => Ok(AfsaiGrowKernel::Row),
            "team" | "afsai_grow_team" => Ok(AfsaiGrowKernel::Team),
            other => Err(Error::param(
                "afsai_grow_kernel",
                format!("`{other}` is not one of row, team"),
            )),
        }
    }
}

/// Largest partials group count for which `gmres_dcgs2_update` launches the one-kernel
/// `gmres_dcgs2_update_small` (every group sums the 2 (count + 1) slots itself) instead of
/// `gmres_dcgs2_finish` + `gmres_dcgs2_update`. Measured on the H200: at n <= 65K (up to 256
/// groups of 256) a launch costs more than the repeated sums (the log `bench/log/`,
/// device-resident GMRES). The default of [`Tuning::dcgs2_small_max_groups`].
pub const DCGS2_SMALL_MAX_GROUPS: usize = 32;

/// The tuning of backends that hold none ([`crate::backend::BackendInfo::tuning`]'s default).
pub(crate) static DEFAULT_TUNING: Tuning = Tuning::DEFAULT;

const KERNELS: &str = "auto, vector, stream or stream-compact";

fn bad(key: &str, value: &str, what: &str) -> Error {
    Error::param(key, format!("`{value}` is not {what}"))
}

/// `None` for `auto` (or `default`), else `parse(value)`.
fn auto_or<T>(value: &str, parse: impl FnOnce(&str) -> Result<T>) -> Result<Option<T>> {
    match value.to_ascii_lowercase().as_str() {
        "auto" | "default" => Ok(None),
        _ => parse(value).map(Some),
    }
}

/// A `0`/`1` (`false`/`true`, `off`/`on`) switch.
fn switch(key: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" => Ok(true),
        "0" | "false" | "off" => Ok(false),
        _ => Err(bad(key, value, "0 or 1")),
    }
}

/// An integer in `range`.
fn within<T>(key: &str, value: &str, range: std::ops::RangeInclusive<T>) -> Result<T>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    match value.parse::<T>() {
        Ok(x) if range.contains(&x) => Ok(x),
        _ => Err(bad(
            key,
            value,
            &format!("an integer in {}..={}", range.start(), range.end()),
        )),
    }
}

/// A non-negative integer.
fn count(key: &str, value: &str) -> Result<usize> {
    value
        .parse()
        .map_err(|_| bad(key, value, "a non-negative integer"))
}

/// When the OpenCL backend calls `clFlush` after a launch ([`Tuning::opencl_flush`]).
///
/// OpenCL lets an implementation hold enqueued commands on the host until a flush or a blocking
/// call; NVIDIA's does, so without a flush the GPU idles while the host enqueues an iteration's
/// kernels. A flush per launch costs more than it saves; a policy flushes the first launch after
/// the queue went idle (so the GPU starts while the host enqueues the rest) and then every
/// `every`-th launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushPolicy {
    /// Flush the first launch after the queue went idle (a wait or a blocking read).
    pub kick: bool,
    /// Also flush every `every`-th launch since then (0 = never).
    pub every: u32,
}

impl FlushPolicy {
    /// No explicit flush: the runtime decides (submission at the next blocking call).
    pub const NONE: Self = Self {
        kick: false,
        every: 0,
    };

    /// Whether the `launches`-th launch since the queue went idle (1-based) is flushed.
    pub fn flush_after(&self, launches: u32) -> bool {
        (self.kick && launches == 1) || (self.every > 0 && launches % self.every == 0)
    }

    /// Parse `none` or `KICK:EVERY` (`KICK` 0 or 1).
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("none") {
            return Ok(Self::NONE);
        }
        let bad = || {
            Error::param(
                "opencl_flush",
                format!("`{s}` is not `none` or KICK:EVERY (e.g. 1:4)"),
            )
        };
        let (kick, every) = s.split_once(':').ok_or_else(bad)?;
        let kick = match kick.trim() {
            "0" => false,
            "1" => true,
            _ => return Err(bad()),
        };
        let every = every.trim().parse::<u32>().map_err(|_| bad())?;
        Ok(Self { kick, every })
    }
}

/// How the host waits for a small read of the OpenCL backend ([`Tuning::opencl_wait`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// A blocking `clEnqueueReadBuffer`.
    Block,
    /// A non-blocking read, a flush, then polling the read's event status (NVIDIA's blocking
    /// wait may sleep and wake late).
    Spin,
}

impl WaitMode {
    /// Parse `block` or `spin`.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "block" => Ok(Self::Block),
            "spin" => Ok(Self::Spin),
            other => Err(Error::param(
                "opencl_wait",
                format!("`{other}` is not `block` or `spin`"),
            )),
        }
    }
}

/// The largest system the OpenCL backend runs the fused CG iteration for by default.
pub const CG_FUSED_OPENCL_MAX_ROWS: usize = 1 << 18;

/// The largest system the CUDA backend runs the fused CG iteration for by default.
pub const CG_FUSED_CUDA_MAX_ROWS: usize = 1 << 17;

/// The partials per slot from which the device-resident CG updates on CUDA take their sums from
/// one `cg_sums_resident` launch (one launch more per iteration). On the H200
/// (`bench/results/h200-cg-sums-kernel/`, resident CG, 2026-11-27) that gained 1.3-7.2% per
/// iteration wherever the product leaves 1024 or more partials (SELL and the CSR stream kernel,
/// full-occupancy grids: 2D Poisson 1M and 4.19M with SELL 0.93 / 0.96, the 27-point stencil 1M /
/// 4.1M 0.96 / 0.98, elasticity3d 305K 0.94, the power-law matrix 0.99) and lost 1.7% on CSR's
/// 528 partials.
pub const CG_SUMS_KERNEL_MIN_GROUPS: usize = 1024;

/// The largest system the OpenCL backend runs the fused BiCGStab update for by default. On the
/// H200 (NVIDIA OpenCL, 2026-11-27, `bench/results/h200-bicgstab-fused/`) the fused update took
/// 0.64-0.90 of the three-kernel time up to 65K unknowns and 0.96 at 2D 131K, and lost 1-5% at
/// 3D 133K, 262K and 1M.
pub const BICGSTAB_FUSED_OPENCL_MAX_ROWS: usize = 1 << 17;

/// The fewest ranks for which the halo link is tried by default. Measured (bench/log/,
/// "Two and four H200s with the box-shaped weak problem"): at 2 ranks each rank has one
/// neighbour, the host-staged exchange hides behind the local product, and the link was
/// 0.4-2.8% slower on two H200s (even on two H100s); at 4 ranks it made CG 2.1x faster on four
/// H200s.
pub const HALO_PEER_MIN_RANKS: usize = 3;

/// The most ranks for which the device-to-device global sums are tried by default. Measured
/// on four H200s (bench/log/, "The device-to-device global sums by default at two ranks"):
/// at 2 ranks (host-staged halo) BiCGStab and GMRES(30) ran 1.2-4.3% faster per iteration in
/// both rounds; at 4 ranks (halo link) they were 0.4-2.6% slower, so they stay off there.
pub const SUMS_PEER_MAX_RANKS: usize = 2;

/// Largest payload (bytes each way) a link exchanges by kernels: one block copies it.
pub const LINK_KERNELS_MAX_BYTES: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_links_default_by_rank_count_and_the_knobs_override() {
        // Automatic: the halo link from HALO_PEER_MIN_RANKS ranks on, the device sums from 2
        // up to SUMS_PEER_MAX_RANKS ranks.
        let auto = Tuning::default();
        assert!(!auto.halo_peer_for(2));
        assert!(auto.halo_peer_for(HALO_PEER_MIN_RANKS));
        assert!(auto.halo_peer_for(8));
        assert!(!auto.sums_peer_for(1));
        assert!(auto.sums_peer_for(2));
        assert!(!auto.sums_peer_for(SUMS_PEER_MAX_RANKS + 1));
        assert!(!auto.sums_peer_forced());
        // 0 never, 1 always (the sums never on one rank: nothing to sum over).
        let (mut off, mut on) = (Tuning::default(), Tuning::default());
        for key in ["halo_peer", "sums_peer"] {
            off.set(key, "0").unwrap();
            on.set(key, "1").unwrap();
        }
        for ranks in 1..=8 {
            assert!(!off.halo_peer_for(ranks));
            assert!(on.halo_peer_for(ranks));
            assert!(!off.sums_peer_for(ranks));
            assert_eq!(on.sums_peer_for(ranks), ranks > 1);
        }
        assert!(on.sums_peer_forced());
    }

    #[test]
    fn every_key_sets_its_field_and_bad_values_change_nothing() {
        let mut t = Tuning::default();
        for (key, value) in [
            ("csr_kernel", "stream"),
            ("csr_lanes", "8"),
            ("long_row_factor", "0"),
            ("sell_compact", "0"),
            ("matrix_load_hints", "2"),
            ("reduction_groups_per_sm", "256"),
            ("cg_fused", "1"),
            ("cg_sums_kernel", "0"),
            ("bicgstab_fused", "true"),
            ("dcgs2_small_max_groups", "0"),
            ("dcgs2_sell_fused", "on"),
            ("afsai_batch_factor", "64"),
            ("afsai_grow_kernel", "team"),
            ("cuda_pdl", "0"),
            ("cuda_early_start", "1"),
            ("cuda_smem_carveout", "100"),
            ("cuda_trace", "/tmp/trace.csv"),
            ("opencl_trace", "/tmp/opencl-trace.csv"),
            ("opencl_inline_ptx", "0"),
            ("opencl_address_args", "1"),
            ("opencl_packed_args", "0"),
            ("opencl_flush", "1:4"),
            ("opencl_wait", "block"),
            ("halo_peer", "0"),
            ("sums_peer", "1"),
            ("halo_flag_write", "0"),
            ("link_kernels", "off"),
            ("sums_kernel", "false"),
        ] {
            t.set(key, value)
                .unwrap_or_else(|e| panic!("{key}={value}: {e}"));
        }
        assert_eq!(t.csr_kernel, CsrKernel::Stream);
        assert_eq!(t.csr_lanes, Some(8));
        assert_eq!(t.long_row_factor, 0);
        assert_eq!(t.reduction_groups_per_sm, Some(256));
        assert_eq!(
            (t.cg_fused, t.cg_sums_kernel, t.bicgstab_fused),
            (Some(true), Some(false), Some(true))
        );
        assert_eq!(t.afsai_grow_kernel, Some(AfsaiGrowKernel::Team));
        assert_eq!(t.cuda_trace, Some(PathBuf::from("/tmp/trace.csv")));
        assert_eq!(t.opencl_trace, Some(PathBuf::from("/tmp/opencl-trace.csv")));
        assert_eq!(
            t.opencl_flush,
            FlushPolicy {
                kick: true,
                every: 4
            }
        );
        assert_eq!(t.opencl_wait, Some(WaitMode::Block));
        assert!(!t.sell_compact && !t.cuda_pdl && !t.link_kernels && !t.sums_kernel);
        // Every key of KEYS is settable (the list and `set` agree), and differs from DEFAULT.
        assert_eq!(Tuning::KEYS.len(), 27);
        assert_ne!(t, Tuning::DEFAULT);
        // `auto` restores the automatic choices.
        for key in ["csr_lanes", "cg_fused", "afsai_grow_kernel", "opencl_wait"] {
            t.set(key, "auto").unwrap();
        }
        assert_eq!((t.csr_lanes, t.cg_fused), (None, None));
        assert_eq!((t.afsai_grow_kernel, t.opencl_wait), (None, None));
        // Unknown keys and values out of range are typed errors naming the key.
        let before = t.clone();
        for (key, value) in [
            ("csr_lanes", "3"),
            ("csr_lanes", "64"),
            ("matrix_load_hints", "3"),
            ("reduction_groups_per_sm", "0"),
            ("cg_fused", "2"),
            ("cuda_early_start", "4"),
            ("cuda_smem_carveout", "101"),
            ("afsai_grow_kernel", "warp"),
            ("csr_kernel", "fast"),
            ("opencl_flush", "2:1"),
            ("long_row_factor", "-1"),
        ] {
            match t.set(key, value) {
                Err(Error::InvalidParameter { name, .. }) => {
                    assert!(name == key || name.starts_with("opencl"), "{key}: {name}")
                }
                other => panic!("{key}={value}: {other:?}"),
            }
        }
        assert!(matches!(
            t.set("no_such_knob", "1"),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(t.set_pair("cg_fused").is_err());
        assert_eq!(t, before);
        t.set_pair("cg_fused = 0").unwrap();
        assert_eq!(t.cg_fused, Some(false));
    }

    #[test]
    fn the_rules_follow_the_defaults() {
        let t = Tuning::default();
        assert!(t.cg_fused_for(true, CG_FUSED_CUDA_MAX_ROWS));
        assert!(!t.cg_fused_for(true, CG_FUSED_CUDA_MAX_ROWS + 1));
        assert!(t.cg_fused_for(false, CG_FUSED_OPENCL_MAX_ROWS));
        assert!(t.cg_sums_kernel_for(true, CG_SUMS_KERNEL_MIN_GROUPS));
        assert!(!t.cg_sums_kernel_for(true, CG_SUMS_KERNEL_MIN_GROUPS - 1));
        assert!(!t.cg_sums_kernel_for(false, 1 << 20));
        assert!(!t.bicgstab_fused_for(true, 1));
        assert!(t.bicgstab_fused_for(false, BICGSTAB_FUSED_OPENCL_MAX_ROWS));
        assert!(t.dcgs2_sell_fused_for(true) && !t.dcgs2_sell_fused_for(false));
        assert_eq!((t.early_start_level(), t.load_hints_level()), (3, 1));
    }

    #[test]
    fn policies_parse_and_flush_where_they_say() {
        assert_eq!(FlushPolicy::parse("none").unwrap(), FlushPolicy::NONE);
        let p = FlushPolicy::parse("1:4").unwrap();
        assert_eq!(
            p,
            FlushPolicy {
                kick: true,
                every: 4
            }
        );
        let flushed: Vec<u32> = (1..=9).filter(|&k| p.flush_after(k)).collect();
        assert_eq!(flushed, vec![1, 4, 8]);
        let kick_only = FlushPolicy::parse("1:0").unwrap();
        assert!(kick_only.flush_after(1) && !kick_only.flush_after(2));
        assert!(!FlushPolicy::NONE.flush_after(1));
        for bad in ["", "2:1", "1", "1:x", "yes"] {
            assert!(FlushPolicy::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(WaitMode::parse("Spin").unwrap(), WaitMode::Spin);
        assert!(WaitMode::parse("poll").is_err());
    }

    #[test]
    fn cuda_devices_parse() {
        assert_eq!(parse_cuda_device(" 3 ").unwrap(), 3);
        assert!(matches!(
            parse_cuda_device("not-a-number"),
            Err(Error::InvalidParameter { .. })
        ));
    }
}
