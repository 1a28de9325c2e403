//! The kernel inventory: one sub-trait per family. Every method is one kernel (or one transfer)
//! with the same name in `kernels-cl/`, `kernels-cu/` and the host backend. Fused operations
//! have a default body composed of primitives, kept as a free function in `reference` modules:
//! it is the executable specification every backend is tested against.

pub mod bilu;
pub(crate) mod checks;
pub mod fsai;
pub mod halo;
pub mod ip;
pub mod ip_assemble;
pub mod isai;
pub mod krylov;
pub mod precond;
pub mod resident;
pub mod spmv;
pub mod trsv;
pub mod vector;

pub use bilu::BiluParts;
pub use halo::{
    GatherList, GhostBlock, HaloMessages, HaloOps, PeerLink, PeerNeighbor, PeerOptions,
};
pub use krylov::{Basis, KrylovOps};
pub use precond::{
    AfsaiGrowKernel, AfsaiGrowth, AfsaiStop, BlockTriangular, FsaiPattern, InversePattern,
    IpStencil, PcgStepVectors, PrecondOps, StencilCoefficients, AFSAI_TEAM_CAP,
    AFSAI_TEAM_MIN_ROW_LEN, FSAI_TEAM_MIN_M, MAX_BLOCK_SIZE,
};
pub use resident::{
    BicgstabFusedVectors, BicgstabSlots, CgFusedVectors, CgSlots, Recording, ResidentOps,
    ResidentState,
};
pub use spmv::{CsrLayouts, SpmvDots, SpmvOps};
pub use vector::VectorOps;

/// Every device kernel of the library, by family (file name in `kernels-cl/` and `kernels-cu/`).
/// The GPU backends build all of them; a test checks that each name exists as `__kernel` in the
/// OpenCL file and as `extern "C" __global__` in the CUDA file of its family.
pub const KERNELS: &[(&str, &[&str])] = &[
    (
        "vector",
        &[
            "fill",
            "copy",
            "copy_from_f32",
            "copy_to_f32",
            "copy_u32",
            "axpby",
            "scale",
            "dot_partials",
            "buffer_address",
        ],
    ),
    (
        "spmv",
        &[
            "spmv_dots_csr",
            "residual_csr",
            "spmv_dots_csr_stream",
            "residual_csr_stream",
            "spmv_dots_sell",
            "residual_sell",
            "spmv_dots_bsr",
            "residual_bsr",
            "csr_long_chunks",
            "csr_long_rows",
        ],
    ),
    ("cg", &["cg_update", "pcg_update"]),
    ("bicgstab", &["bicgstab_s_update", "bicgstab_update"]),
    (
        "gmres",
        &[
            "basis_dots",
            "gmres_gram_schmidt",
            "gmres_normalize",
            "basis_axpy",
            "basis_scale",
            "basis_load",
            "basis_load_normalized",
            "basis_store",
            "multi_axpy",
            "gmres_dcgs2_finish",
            "gmres_dcgs2_update",
            "gmres_dcgs2_update_small",
            "basis_dots2",
            "gmres_dcgs2_spmv_dots",
            "gmres_dcgs2_spmv_dots_sell",
        ],
    ),
    ("precond", &["diag_scale", "diag_scale_dot"]),
    (
        "trsv",
        &["block_diag_scale", "bsr_trsv_sweep", "bsr_trsv_level"],
    ),
    ("isai", &["isai_solve"]),
    ("bilu", &["bilu0_scatter", "bilu0_sweep"]),
    ("ip_assemble", &["ip_domain_check", "ip_assemble"]),
    (
        "ip",
        &[
            "ip_stencil",
            "ip_stencil_dot",
            "ip_stencil_quad",
            "ip_pcg_update",
            "ip_stencil_check",
        ],
    ),
    (
        "fsai",
        &[
            "fsai_rows",
            "fsai_rows_team",
            "afsai_grow",
            "afsai_grow_team",
            "afsai_compact",
            "afsai_place",
            "fsai_transpose_fill",
            "fsai_transpose_sort",
        ],
    ),
    (
        "halo",
        &[
            "halo_gather",
            "halo_spmv_add",
            "halo_spmv_add_dots",
            "halo_dcgs2_add_dots",
            "halo_partials_finish",
            "halo_rank_sums",
            "halo_link_push",
            "halo_link_pull",
            "halo_sums_link",
        ],
    ),
    (
        "resident",
        &[
            "cg_sums_resident",
            "cg_update_resident",
            "cg_fused_resident",
            "pcg_update_resident",
            "bicgstab_s_update_resident",
            "bicgstab_s_spmv_resident",
            "bicgstab_update_resident",
            "bicgstab_fused_resident",
        ],
    ),
];
