//! Tuning knobs of the CSR kernels read from the environment once per process, for benchmark
//! sweeps on a GPU without rebuilding (the defaults are the measured choices).

use std::sync::OnceLock;

/// Environment variable forcing the lanes per CSR row of the GPU backends (a power of two in
/// 1..=32; anything else is ignored and the lanes follow the mean row length).
pub const CSR_LANES_ENV: &str = "PIPEKRYLOV_CSR_LANES";

/// Environment variable overriding the long-row factor of
/// [`crate::backend::long_rows::LONG_ROW_FACTOR`] at upload: a non-negative integer, 0 turning
/// the long-row path off (every row in the main kernel, as before it existed).
pub const LONG_ROW_FACTOR_ENV: &str = "PIPEKRYLOV_LONG_ROW_FACTOR";

/// Environment variable overriding the blocks (work-groups) per multiprocessor (compute unit) of
/// the reduction plan of the CUDA and OpenCL backends, CPU OpenCL devices included (`partials`
/// groups, and so the grid of every fused SpMV and update that writes partials): an integer in
/// 1..=256 (the tests use the top of the range to get many groups on a 2-core CPU device).
pub const REDUCTION_GROUPS_PER_SM_ENV: &str = "PIPEKRYLOV_REDUCTION_GROUPS_PER_SM";

/// Environment variable multiplying the ceiling of the adaptive FSAI's growth scratch per
/// batch (n (k_max s + 1) scalars): an integer in 1..=64 (default 2 for the eq. (17) rule, 1 for
/// the step rule). Below the ceiling a batch is sized from the G the rows grown so far
/// predict; larger batches of rows per `afsai_grow` launch occupy more of a GPU at the cost of
/// scratch memory.
pub const AFSAI_BATCH_FACTOR_ENV: &str = "PIPEKRYLOV_AFSAI_BATCH_FACTOR";

/// Environment variable overriding [`crate::backend::ops::krylov::DCGS2_SMALL_MAX_GROUPS`]
/// (the largest partials group count for which a DCGS2 step runs as one kernel): a
/// non-negative integer, 0 for two kernels always.
pub const DCGS2_SMALL_MAX_GROUPS_ENV: &str = "PIPEKRYLOV_DCGS2_SMALL_MAX_GROUPS";

/// Environment variable choosing whether the GPU backends fuse GMRES's DCGS2 product and dots for
/// SELL matrices (`gmres_dcgs2_spmv_dots_sell`): `0` never (the product and `basis_dots2` apart,
/// as before the kernel existed), `1` on both backends; unset (or anything else) on CUDA only
/// (measured: 6-10% faster GMRES(30) iterations at n = 4M on CUDA, 0.5-1.6% slower on NVIDIA
/// OpenCL; the log `bench/log/`, "GMRES's DCGS2 product and dots fused for SELL").
pub const DCGS2_SELL_FUSED_ENV: &str = "PIPEKRYLOV_DCGS2_SELL_FUSED";

/// Environment variable forcing the adaptive FSAI's growth kernel on the GPU backends: `row`
/// (`afsai_grow`, one work-item per row) or `team` (`afsai_grow_team` wherever it fits; by
/// default it runs where it fits and A has [`crate::backend::AFSAI_TEAM_MIN_ROW_LEN`] entries
/// per row or more on average); anything else is ignored.
pub const AFSAI_GROW_KERNEL_ENV: &str = "PIPEKRYLOV_AFSAI_GROW_KERNEL";

/// Environment variable turning the CUDA backend's programmatic dependent launch off (`0`): by
/// default every kernel is launched with programmatic stream serialization on devices of compute
/// capability 9.0 or later (each kernel waits for its predecessor in-kernel, see
/// `kernels-cu/reduce.cu`); `0` launches them the classic way (for comparisons).
pub const CUDA_PDL_ENV: &str = "PIPEKRYLOV_CUDA_PDL";

/// Environment variable choosing how early a CUDA kernel may start on sm_90+ with programmatic
/// dependent launch: 0 when the previous kernel's blocks exit; 1 the products that follow the
/// device-resident CG and BiCGStab updates as soon as every block of the update has waited for
/// its own predecessor (`PDL_WAIT_START_NEXT` in `kernels-cu/reduce.cu`); 2 as 1, and the CSR
/// products of uploaded matrices (and BiCGStab's fused s update and product) read their first
/// rows before waiting (`EARLY_MATRIX` in `kernels-cu/spmv.cu`); 3 (the default) as 2, and the
/// CSR products also let their next kernel start right after their wait (`EARLY_NEXT`), so that
/// BiCGStab's fused s update and product reads its matrix early too; anything else means 3.
pub const CUDA_EARLY_START_ENV: &str = "PIPEKRYLOV_CUDA_EARLY_START";

/// Environment variable choosing whether the device-resident CG without a preconditioner runs
/// one kernel per iteration (`cg_fused_resident`, for CSR matrices without long rows) instead of
/// two: `0` never, `1` always; unset (or anything else), by backend and size
/// (the rule of `cg_fused_for`).
pub const CG_FUSED_ENV: &str = "PIPEKRYLOV_CG_FUSED";

/// The largest system the OpenCL backend runs the fused CG iteration for by default.
pub const CG_FUSED_OPENCL_MAX_ROWS: usize = 1 << 18;

/// The largest system the CUDA backend runs the fused CG iteration for by default.
pub const CG_FUSED_CUDA_MAX_ROWS: usize = 1 << 17;

/// Whether the device-resident CG runs fused on `n` rows ([`CG_FUSED_ENV`]; by default on
/// OpenCL up to [`CG_FUSED_OPENCL_MAX_ROWS`], on CUDA up to [`CG_FUSED_CUDA_MAX_ROWS`]).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn cg_fused_for(cuda: bool, n: usize) -> bool {
    static FORCED: OnceLock<Option<usize>> = OnceLock::new();
    match *FORCED.get_or_init(|| parse_env(CG_FUSED_ENV)) {
        Some(0) => false,
        Some(1) => true,
        _ if cuda => n <= CG_FUSED_CUDA_MAX_ROWS,
        _ => n <= CG_FUSED_OPENCL_MAX_ROWS,
    }
}

/// Environment variable choosing whether the device-resident CG and PCG updates take their sums
/// from `cg_sums_resident`, which finishes them once per iteration, instead of finishing the
/// product's partials in every work-group: `0` never, `1` always; unset (or anything else), by
/// backend and group count (the rule of `cg_sums_kernel_for`).
pub const CG_SUMS_KERNEL_ENV: &str = "PIPEKRYLOV_CG_SUMS_KERNEL";

/// The partials per slot from which the device-resident CG updates on CUDA take their sums from
/// one `cg_sums_resident` launch (one launch more per iteration). On the H200
/// (`bench/results/h200-cg-sums-kernel/`, resident CG, 2026-11-27) that gained 1.3-7.2% per
/// iteration wherever the product leaves 1024 or more partials (SELL and the CSR stream kernel,
/// full-occupancy grids: 2D Poisson 1M and 4.19M with SELL 0.93 / 0.96, the 27-point stencil 1M /
/// 4.1M 0.96 / 0.98, elasticity3d 305K 0.94, the power-law matrix 0.99) and lost 1.7% on CSR's
/// 528 partials.
pub const CG_SUMS_KERNEL_MIN_GROUPS: usize = 1024;

/// Whether a device-resident CG or PCG update on `groups` partials per slot takes its sums from
/// `cg_sums_resident` ([`CG_SUMS_KERNEL_ENV`]; by default on CUDA from
/// [`CG_SUMS_KERNEL_MIN_GROUPS`] partials on, never on OpenCL: there the launch costs as much as
/// it saves at 4M unknowns and 1.5-4% more at 0.3-1M on the H200).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn cg_sums_kernel_for(cuda: bool, groups: usize) -> bool {
    static FORCED: OnceLock<Option<usize>> = OnceLock::new();
    match *FORCED.get_or_init(|| parse_env(CG_SUMS_KERNEL_ENV)) {
        Some(0) => false,
        Some(1) => true,
        _ => cuda && groups >= CG_SUMS_KERNEL_MIN_GROUPS,
    }
}

/// Environment variable choosing whether the device-resident BiCGStab without a preconditioner
/// runs its update and the next A p as one kernel (`bicgstab_fused_resident`, for CSR matrices
/// without long rows: two kernels per iteration instead of three): `0` never, `1` always; unset
/// (or anything else), by backend and size (the rule of `bicgstab_fused_for`).
pub const BICGSTAB_FUSED_ENV: &str = "PIPEKRYLOV_BICGSTAB_FUSED";

/// The largest system the OpenCL backend runs the fused BiCGStab update for by default. On the
/// H200 (NVIDIA OpenCL, 2026-11-27, `bench/results/h200-bicgstab-fused/`) the fused update took
/// 0.64-0.90 of the three-kernel time up to 65K unknowns and 0.96 at 2D 131K, and lost 1-5% at
/// 3D 133K, 262K and 1M.
pub const BICGSTAB_FUSED_OPENCL_MAX_ROWS: usize = 1 << 17;

/// Whether the device-resident BiCGStab runs its update fused with the next product on `n` rows
/// ([`BICGSTAB_FUSED_ENV`]; by default on OpenCL up to [`BICGSTAB_FUSED_OPENCL_MAX_ROWS`], never
/// on CUDA: there programmatic dependent launch already overlaps the kernels' starts, and on the
/// H200 the fused update was 0.99-1.15 of the three-kernel time up to 65K unknowns and
/// 0.98-1.07 above).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn bicgstab_fused_for(cuda: bool, n: usize) -> bool {
    static FORCED: OnceLock<Option<usize>> = OnceLock::new();
    match *FORCED.get_or_init(|| parse_env(BICGSTAB_FUSED_ENV)) {
        Some(0) => false,
        Some(1) => true,
        _ if cuda => false,
        _ => n <= BICGSTAB_FUSED_OPENCL_MAX_ROWS,
    }
}

/// Environment variable choosing the cache hints of the SpMV kernels' matrix and gather loads
/// (`PK_LOAD_HINTS` in `kernels-cu/reduce.cu`): 0 plain loads, 1 (the default) the matrix
/// streamed (evict first), 2 also the gathers through the read-only path; anything else means
/// 1. CUDA, and OpenCL on NVIDIA GPUs (inline PTX, see [`OPENCL_INLINE_PTX_ENV`]).
pub const MATRIX_LOAD_HINTS_ENV: &str = "PIPEKRYLOV_MATRIX_LOAD_HINTS";

/// Environment variable turning the OpenCL backend's inline-PTX program on NVIDIA GPUs off
/// (`0`; anything else leaves it on): the SpMV's load hints and the warp version of the adaptive
/// FSAI's team growth (`-D PK_NV_PTX`, `kernels-cl/reduce.cl`), which then run their portable
/// code; other devices never use it.
pub const OPENCL_INLINE_PTX_ENV: &str = "PIPEKRYLOV_OPENCL_INLINE_PTX";

/// Environment variable choosing the device-to-device halo link: `0` never, `1` always,
/// anything else (or unset) on communicators of [`HALO_PEER_MIN_RANKS`] ranks or more. With it,
/// the ranks of a distributed solve on one node whose devices have peer access copy their halo
/// entries into each other's device memory (CUDA inter-process memory,
/// `src/backend/cuda/peer.rs`) instead of through page-locked host memory and MPI. Every rank
/// must see the same value (the ranks agree on the link at the first exchange).
pub const HALO_PEER_ENV: &str = "PIPEKRYLOV_HALO_PEER";

/// The fewest ranks for which the halo link is tried by default. Measured (bench/log/,
/// "Two and four H200s with the box-shaped weak problem"): at 2 ranks each rank has one
/// neighbour, the host-staged exchange hides behind the local product, and the link was
/// 0.4-2.8% slower on two H200s (even on two H100s); at 4 ranks it made CG 2.1x faster on four
/// H200s.
pub const HALO_PEER_MIN_RANKS: usize = 3;

/// Whether to try the halo link on a communicator of `ranks` ranks: [`HALO_PEER_ENV`] `0` no,
/// `1` yes, otherwise from [`HALO_PEER_MIN_RANKS`] ranks on.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn halo_peer(ranks: usize) -> bool {
    halo_peer_choice(parse_env(HALO_PEER_ENV), ranks)
}

/// [`halo_peer`] for a given value of [`HALO_PEER_ENV`] (`None`: unset or not a number).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn halo_peer_choice(env: Option<usize>, ranks: usize) -> bool {
    match env {
        Some(0) => false,
        Some(1) => true,
        _ => ranks >= HALO_PEER_MIN_RANKS,
    }
}

/// Environment variable choosing the device-to-device global sums of a distributed solve: `0`
/// never, `1` on any number of ranks above one (also between ranks sharing a device), anything
/// else (or unset) on communicators of at most [`SUMS_PEER_MAX_RANKS`] ranks, each on a device
/// of its own (ranks sharing a GPU would wait for each other's contexts at every reduction). With them, where the ranks run on one node and their devices
/// link (CUDA with peer access), the fused kernels that finish a reduction themselves
/// (BiCGStab's s update, GMRES's Gram-Schmidt and DCGS2 steps) get the global sums without the
/// partials going through the host. Every rank must see the same value (the ranks agree on the
/// link at the first such reduction).
pub const SUMS_PEER_ENV: &str = "PIPEKRYLOV_SUMS_PEER";

/// The most ranks for which the device-to-device global sums are tried by default. Measured
/// on four H200s (bench/log/, "The device-to-device global sums by default at two ranks"):
/// at 2 ranks (host-staged halo) BiCGStab and GMRES(30) ran 1.2-4.3% faster per iteration in
/// both rounds; at 4 ranks (halo link) they were 0.4-2.6% slower, so they stay off there.
pub const SUMS_PEER_MAX_RANKS: usize = 2;

/// Whether to try the device-to-device global sums on `ranks` ranks: [`SUMS_PEER_ENV`] `0`
/// no, `1` yes, otherwise from 2 up to [`SUMS_PEER_MAX_RANKS`] ranks.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn sums_peer(ranks: usize) -> bool {
    sums_peer_choice(parse_env(SUMS_PEER_ENV), ranks)
}

/// Whether [`SUMS_PEER_ENV`] forces the device-to-device global sums (`1`): then also between
/// ranks that share a device.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn sums_peer_forced() -> bool {
    parse_env(SUMS_PEER_ENV) == Some(1)
}

/// [`sums_peer`] for a given value of [`SUMS_PEER_ENV`] (`None`: unset or not a number).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn sums_peer_choice(env: Option<usize>, ranks: usize) -> bool {
    ranks > 1
        && match env {
            Some(0) => false,
            Some(1) => true,
            _ => ranks <= SUMS_PEER_MAX_RANKS,
        }
}

/// Environment variable: `0` makes the device-to-device halo link write its flags with
/// `cuMemsetD32Async` (ordered behind the copies they announce by stream order only) instead of
/// `cuStreamWriteValue32` (the default, whose write is fenced behind the stream's earlier
/// writes).
pub const HALO_FLAG_WRITE_ENV: &str = "PIPEKRYLOV_HALO_FLAG_WRITE";

/// False when [`HALO_FLAG_WRITE_ENV`] is `0`.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn halo_flag_write_value() -> bool {
    parse_env(HALO_FLAG_WRITE_ENV) != Some(0)
}

/// Environment variable: `0` makes a one-neighbour device-to-device link (the global sums' link
/// at two ranks) exchange with the copy stream's copies and flag operations, as the halo link
/// does, instead of two single-block kernels on the compute stream (`halo_link_push`,
/// `halo_link_pull`: the default for payloads up to [`LINK_KERNELS_MAX_BYTES`] between distinct
/// devices).
pub const LINK_KERNELS_ENV: &str = "PIPEKRYLOV_LINK_KERNELS";

/// Largest payload (bytes each way) a link exchanges by kernels: one block copies it.
pub const LINK_KERNELS_MAX_BYTES: usize = 1 << 16;

/// Environment variable: `0` makes the global sums' link at two ranks, where it exchanges by
/// kernels, take its four steps (`halo_partials_finish`, `halo_link_push`, `halo_link_pull`,
/// `halo_rank_sums`) instead of the one kernel that does them all (`halo_sums_link`, the
/// default).
pub const SUMS_KERNEL_ENV: &str = "PIPEKRYLOV_SUMS_KERNEL";

/// False when [`SUMS_KERNEL_ENV`] is `0`.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn sums_kernel() -> bool {
    parse_env(SUMS_KERNEL_ENV) != Some(0)
}

/// False when [`LINK_KERNELS_ENV`] is `0`.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn link_kernels() -> bool {
    parse_env(LINK_KERNELS_ENV) != Some(0)
}

fn parse_env(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// The forced lanes per CSR row, if [`CSR_LANES_ENV`] holds a valid value (GPU backends only).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn csr_lanes() -> Option<u32> {
    static LANES: OnceLock<Option<u32>> = OnceLock::new();
    *LANES.get_or_init(|| {
        parse_env(CSR_LANES_ENV)
            .filter(|k| k.is_power_of_two() && *k <= 32)
            .map(|k| k as u32)
    })
}

/// The long-row factor given by [`LONG_ROW_FACTOR_ENV`], if any.
pub(crate) fn long_row_factor() -> Option<usize> {
    static FACTOR: OnceLock<Option<usize>> = OnceLock::new();
    *FACTOR.get_or_init(|| parse_env(LONG_ROW_FACTOR_ENV))
}

/// The reduction groups per multiprocessor of [`REDUCTION_GROUPS_PER_SM_ENV`], if valid.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn reduction_groups_per_sm() -> Option<usize> {
    static GROUPS: OnceLock<Option<usize>> = OnceLock::new();
    *GROUPS.get_or_init(|| parse_env(REDUCTION_GROUPS_PER_SM_ENV).filter(|g| (1..=256).contains(g)))
}

/// The growth scratch multiplier of [`AFSAI_BATCH_FACTOR_ENV`], if valid.
pub(crate) fn afsai_batch_factor() -> Option<usize> {
    static FACTOR: OnceLock<Option<usize>> = OnceLock::new();
    *FACTOR.get_or_init(|| parse_env(AFSAI_BATCH_FACTOR_ENV).filter(|f| (1..=64).contains(f)))
}

/// The DCGS2 one-kernel group limit given by [`DCGS2_SMALL_MAX_GROUPS_ENV`], if any.
pub(crate) fn dcgs2_small_max_groups() -> Option<usize> {
    static GROUPS: OnceLock<Option<usize>> = OnceLock::new();
    *GROUPS.get_or_init(|| parse_env(DCGS2_SMALL_MAX_GROUPS_ENV))
}

/// The growth kernel forced by [`AFSAI_GROW_KERNEL_ENV`], if valid.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn afsai_grow_kernel() -> Option<crate::backend::ops::AfsaiGrowKernel> {
    static KERNEL: OnceLock<Option<crate::backend::ops::AfsaiGrowKernel>> = OnceLock::new();
    *KERNEL.get_or_init(|| std::env::var(AFSAI_GROW_KERNEL_ENV).ok()?.parse().ok())
}

/// False when [`CUDA_PDL_ENV`] is `0` (programmatic dependent launch off).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn cuda_pdl() -> bool {
    static PDL: OnceLock<bool> = OnceLock::new();
    *PDL.get_or_init(|| parse_env(CUDA_PDL_ENV) != Some(0))
}

/// Environment variable setting every CUDA kernel's preferred shared-memory carveout (percent of
/// the most shared memory an SM has, 0..=100; `CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`,
/// a hint to the driver); unset or anything else leaves the driver's choice per kernel.
pub const CUDA_SMEM_CARVEOUT_ENV: &str = "PIPEKRYLOV_CUDA_SMEM_CARVEOUT";

/// The carveout of [`CUDA_SMEM_CARVEOUT_ENV`], if set to 0..=100.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn cuda_smem_carveout() -> Option<i32> {
    static CARVEOUT: OnceLock<Option<i32>> = OnceLock::new();
    *CARVEOUT.get_or_init(|| {
        parse_env(CUDA_SMEM_CARVEOUT_ENV)
            .filter(|c| *c <= 100)
            .map(|c| c as i32)
    })
}

/// The early start of [`CUDA_EARLY_START_ENV`] (0..=3, default 3).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn cuda_early_start() -> usize {
    static EARLY: OnceLock<usize> = OnceLock::new();
    *EARLY.get_or_init(|| {
        parse_env(CUDA_EARLY_START_ENV)
            .filter(|e| *e <= 3)
            .unwrap_or(3)
    })
}

/// The SpMV load hints of [`MATRIX_LOAD_HINTS_ENV`] (0..=2, default 1).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn matrix_load_hints() -> usize {
    static HINTS: OnceLock<usize> = OnceLock::new();
    *HINTS.get_or_init(|| {
        parse_env(MATRIX_LOAD_HINTS_ENV)
            .filter(|h| *h <= 2)
            .unwrap_or(1)
    })
}

/// Whether the CUDA (`cuda`) or OpenCL backend fuses the DCGS2 product and dots for SELL
/// ([`DCGS2_SELL_FUSED_ENV`]; by default on CUDA only).
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) fn dcgs2_sell_fused_for(cuda: bool) -> bool {
    static FORCED: OnceLock<Option<usize>> = OnceLock::new();
    match *FORCED.get_or_init(|| parse_env(DCGS2_SELL_FUSED_ENV)) {
        Some(0) => false,
        Some(1) => true,
        _ => cuda,
    }
}

/// False when [`OPENCL_INLINE_PTX_ENV`] is `0`.
#[cfg_attr(not(feature = "opencl"), allow(dead_code))]
pub(crate) fn opencl_inline_ptx() -> bool {
    static PTX: OnceLock<bool> = OnceLock::new();
    *PTX.get_or_init(|| parse_env(OPENCL_INLINE_PTX_ENV) != Some(0))
}

#[cfg(test)]
mod tests {
    use super::{halo_peer_choice, sums_peer_choice, HALO_PEER_MIN_RANKS, SUMS_PEER_MAX_RANKS};

    #[test]
    fn the_links_default_by_rank_count_and_the_environment_overrides() {
        // Unset (or not 0/1): the halo link from HALO_PEER_MIN_RANKS ranks on, the device
        // sums from 2 up to SUMS_PEER_MAX_RANKS ranks.
        for unset in [None, Some(2), Some(7)] {
            assert!(!halo_peer_choice(unset, 2));
            assert!(halo_peer_choice(unset, HALO_PEER_MIN_RANKS));
            assert!(halo_peer_choice(unset, 8));
            assert!(!sums_peer_choice(unset, 1));
            assert!(sums_peer_choice(unset, 2));
            assert!(!sums_peer_choice(unset, SUMS_PEER_MAX_RANKS + 1));
        }
        // 0 never, 1 always (the sums never on one rank: nothing to sum over).
        for ranks in 1..=8 {
            assert!(!halo_peer_choice(Some(0), ranks));
            assert!(halo_peer_choice(Some(1), ranks));
            assert!(!sums_peer_choice(Some(0), ranks));
            assert_eq!(sums_peer_choice(Some(1), ranks), ranks > 1);
        }
    }
}
