//! The kernel inventory, written once: every device kernel by family, with its typed name
//! ([`Kernel`], the same for every runtime) and the name it has in the kernel sources
//! (`kernels/<family>.kc`). The CUDA function table, the OpenCL kernel cache and the
//! inventory checks are all built from this one list.

/// Declares [`Kernel`] and [`KERNELS`] from one list of families and kernels.
macro_rules! kernel_inventory {
    ($($family:ident { $($variant:ident = $name:literal,)* })*) => {
        /// Every device kernel of the library, by its typed name (the same on every runtime).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Kernel {
            $($(
                #[doc = concat!("`", $name, "` (family `", stringify!($family), "`).")]
                $variant,
            )*)*
        }

        impl Kernel {
            /// All kernels, in inventory order (the discriminant is the index).
            pub const ALL: &'static [Kernel] = &[$($(Kernel::$variant,)*)*];

            /// The kernel's name in the sources.
            pub const fn name(self) -> &'static str {
                match self {
                    $($(Kernel::$variant => $name,)*)*
                }
            }
        }

        /// Every device kernel of the library by family (`kernels/<family>.kc`). The GPU
        /// backends build all of them; tests check that each name is declared in its family's
        /// source for both runtimes.
        pub const KERNELS: &[(&str, &[&str])] = &[$((stringify!($family), &[$($name,)*]),)*];
    };
}

kernel_inventory! {
    vector {
        Fill = "fill",
        Copy = "copy",
        CopyFromF32 = "copy_from_f32",
        CopyToF32 = "copy_to_f32",
        CopyU32 = "copy_u32",
        Axpby = "axpby",
        Scale = "scale",
        DotPartials = "dot_partials",
        BufferAddress = "buffer_address",
    }
    spmv {
        SpmvDotsCsr = "spmv_dots_csr",
        ResidualCsr = "residual_csr",
        CsrUpdate = "csr_update",
        SpmvDotsCsrStream = "spmv_dots_csr_stream",
        ResidualCsrStream = "residual_csr_stream",
        SpmvDotsSell = "spmv_dots_sell",
        ResidualSell = "residual_sell",
        SpmvDotsBsr = "spmv_dots_bsr",
        ResidualBsr = "residual_bsr",
        CsrLongChunks = "csr_long_chunks",
        CsrLongRows = "csr_long_rows",
    }
    cg {
        CgUpdate = "cg_update",
        PcgUpdate = "pcg_update",
    }
    bicgstab {
        BicgstabSUpdate = "bicgstab_s_update",
        BicgstabUpdate = "bicgstab_update",
    }
    gmres {
        BasisDots = "basis_dots",
        GmresGramSchmidt = "gmres_gram_schmidt",
        GmresNormalize = "gmres_normalize",
        BasisAxpy = "basis_axpy",
        BasisScale = "basis_scale",
        BasisLoad = "basis_load",
        BasisLoadNormalized = "basis_load_normalized",
        BasisStore = "basis_store",
        MultiAxpy = "multi_axpy",
        GmresDcgs2Finish = "gmres_dcgs2_finish",
        GmresDcgs2Update = "gmres_dcgs2_update",
        GmresDcgs2UpdateSmall = "gmres_dcgs2_update_small",
        BasisDots2 = "basis_dots2",
        GmresDcgs2SpmvDots = "gmres_dcgs2_spmv_dots",
        GmresDcgs2SpmvDotsSell = "gmres_dcgs2_spmv_dots_sell",
    }
    precond {
        DiagScale = "diag_scale",
        DiagScaleDot = "diag_scale_dot",
    }
    trsv {
        BlockDiagScale = "block_diag_scale",
        BsrTrsvSweep = "bsr_trsv_sweep",
        BsrTrsvLevel = "bsr_trsv_level",
        BsrTrsvLevelsGroup = "bsr_trsv_levels_group",
    }
    isai {
        IsaiSolve = "isai_solve",
    }
    bilu {
        Bilu0Scatter = "bilu0_scatter",
        Bilu0Sweep = "bilu0_sweep",
    }
    ip_assemble {
        IpDomainCheck = "ip_domain_check",
        IpAssemble = "ip_assemble",
    }
    ip {
        IpStencil = "ip_stencil",
        IpStencilDot = "ip_stencil_dot",
        IpStencilQuad = "ip_stencil_quad",
        IpPcgUpdate = "ip_pcg_update",
        IpStencilCheck = "ip_stencil_check",
    }
    fsai {
        FsaiRows = "fsai_rows",
        FsaiRowsTeam = "fsai_rows_team",
        AfsaiGrow = "afsai_grow",
        AfsaiGrowTeam = "afsai_grow_team",
        AfsaiCompact = "afsai_compact",
        AfsaiPlace = "afsai_place",
        FsaiTransposeFill = "fsai_transpose_fill",
        FsaiTransposeSort = "fsai_transpose_sort",
    }
    halo {
        HaloGather = "halo_gather",
        HaloSpmvAdd = "halo_spmv_add",
        HaloSpmvAddDots = "halo_spmv_add_dots",
        HaloDcgs2AddDots = "halo_dcgs2_add_dots",
        HaloPartialsFinish = "halo_partials_finish",
        HaloRankSums = "halo_rank_sums",
        HaloLinkPush = "halo_link_push",
        HaloLinkPull = "halo_link_pull",
        HaloSumsLink = "halo_sums_link",
    }
    resident {
        CgSumsResident = "cg_sums_resident",
        CgUpdateResident = "cg_update_resident",
        CgFusedResident = "cg_fused_resident",
        PcgUpdateResident = "pcg_update_resident",
        BicgstabSUpdateResident = "bicgstab_s_update_resident",
        BicgstabSSpmvResident = "bicgstab_s_spmv_resident",
        BicgstabUpdateResident = "bicgstab_update_resident",
        BicgstabFusedResident = "bicgstab_fused_resident",
    }
    sparse {
        FillU32 = "fill_u32",
        ScanU32Local = "scan_u32_local",
        ScanU32Totals = "scan_u32_totals",
        ScanU32Add = "scan_u32_add",
        CsrTransposeCount = "csr_transpose_count",
        CsrTransposeFill = "csr_transpose_fill",
        CsrRankRows = "csr_rank_rows",
        CsrTransposeValues = "csr_transpose_values",
        CsrCompact = "csr_compact",
        SpgemmUpper = "spgemm_upper",
        SpgemmSymbolic = "spgemm_symbolic",
        SpgemmSymbolicTeam = "spgemm_symbolic_team",
        SpgemmCopyPattern = "spgemm_copy_pattern",
        SpgemmValues = "spgemm_values",
        CsrSpmm = "csr_spmm",
        CsrSpmmDots = "csr_spmm_dots",
        BlockCgUpdate = "block_cg_update",
        BlockXpby = "block_xpby",
        CsrCheck = "csr_check",
        AbsExtremes = "abs_extremes",
    }
    amg_setup {
        AmgDiagonal = "amg_diagonal",
        AmgStrength = "amg_strength",
        AmgMis2Init = "amg_mis2_init",
        AmgMis2Max = "amg_mis2_max",
        AmgMis2Select = "amg_mis2_select",
        AmgRootFlags = "amg_root_flags",
        AmgRootIds = "amg_root_ids",
        AmgJoin = "amg_join",
        AmgFilteredDiag = "amg_filtered_diag",
        AmgPowerStart = "amg_power_start",
        AmgPowerStep = "amg_power_step",
        AmgProlongRows = "amg_prolong_rows",
        AmgSmootherDiag = "amg_smoother_diag",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_names_follow_the_inventory() {
        let names: Vec<&str> = KERNELS
            .iter()
            .flat_map(|(_, k)| k.iter().copied())
            .collect();
        assert_eq!(names.len(), Kernel::ALL.len());
        for (i, k) in Kernel::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i);
            assert_eq!(k.name(), names[i]);
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "kernel names are unique");
    }
}
