//! The one place of the library that reads the environment: the variable of every tuning knob
//! ([`Tuning::KEYS`], read by [`Tuning::from_env`]) and of the devices, for the command line and
//! the benchmark harness only.

use super::Tuning;
use crate::backend::{BackendConfig, DeviceSelector};
use crate::error::{Error, Result};

impl Tuning {
    /// Every key of [`Tuning::set`] (the field names) with the environment variable
    /// [`Tuning::from_env`] reads it from.
    pub const KEYS: &'static [(&'static str, &'static str)] = &[
        ("csr_kernel", CSR_KERNEL_ENV),
        ("csr_lanes", CSR_LANES_ENV),
        ("long_row_factor", LONG_ROW_FACTOR_ENV),
        ("sell_compact", SELL_COMPACT_ENV),
        ("matrix_load_hints", MATRIX_LOAD_HINTS_ENV),
        ("reduction_groups_per_sm", REDUCTION_GROUPS_PER_SM_ENV),
        ("cg_fused", CG_FUSED_ENV),
        ("cg_sums_kernel", CG_SUMS_KERNEL_ENV),
        ("bicgstab_fused", BICGSTAB_FUSED_ENV),
        ("dcgs2_small_max_groups", DCGS2_SMALL_MAX_GROUPS_ENV),
        ("dcgs2_sell_fused", DCGS2_SELL_FUSED_ENV),
        ("afsai_batch_factor", AFSAI_BATCH_FACTOR_ENV),
        ("afsai_grow_kernel", AFSAI_GROW_KERNEL_ENV),
        ("cuda_pdl", CUDA_PDL_ENV),
        ("cuda_early_start", CUDA_EARLY_START_ENV),
        ("cuda_smem_carveout", CUDA_SMEM_CARVEOUT_ENV),
        ("cuda_trace", CUDA_TRACE_ENV),
        ("opencl_inline_ptx", OPENCL_INLINE_PTX_ENV),
        ("opencl_address_args", OPENCL_ADDRESS_ARGS_ENV),
        ("opencl_packed_args", OPENCL_PACKED_ARGS_ENV),
        ("opencl_flush", OPENCL_FLUSH_ENV),
        ("opencl_wait", OPENCL_WAIT_ENV),
        ("halo_peer", HALO_PEER_ENV),
        ("sums_peer", SUMS_PEER_ENV),
        ("halo_flag_write", HALO_FLAG_WRITE_ENV),
        ("link_kernels", LINK_KERNELS_ENV),
        ("sums_kernel", SUMS_KERNEL_ENV),
    ];

    /// Keys whose environment variable was an error when its value did not parse (the OpenCL
    /// backend refused to start); the others were ignored, and still are by
    /// [`Tuning::from_env`].
    const STRICT_ENV_KEYS: &'static [&'static str] = &[
        "opencl_address_args",
        "opencl_packed_args",
        "opencl_flush",
        "opencl_wait",
    ];

    /// The defaults with every knob whose environment variable is set (and not empty) taken
    /// from it ([`Tuning::KEYS`]: `PIPEKRYLOV_CG_FUSED=0` is `cg_fused=0`). For the command line
    /// and the benchmark harness only: the library never calls it. As before the knobs were
    /// typed, a value that does not parse leaves the knob at its default (`auto`, `default`,
    /// anything else), except for the OpenCL submission and argument knobs, for which it is
    /// [`Error::InvalidParameter`].
    pub fn from_env() -> Result<Self> {
        let mut tuning = Self::default();
        for &(key, env) in Self::KEYS {
            let Some(value) = std::env::var_os(env) else {
                continue;
            };
            let value = value.to_string_lossy();
            if value.trim().is_empty() {
                continue;
            }
            match tuning.set(key, &value) {
                Err(Error::InvalidParameter { reason, .. })
                    if Self::STRICT_ENV_KEYS.contains(&key) =>
                {
                    return Err(Error::param(env, reason))
                }
                _ => {}
            }
        }
        Ok(tuning)
    }
}

/// The CUDA device ordinal [`CUDA_DEVICE_ENV`] names (`None` when unset or empty). For the
/// command line, the benchmark harness and `CudaBackend::from_env`. A value that is not an
/// ordinal is [`Error::InvalidParameter`].
pub fn cuda_device_from_env() -> Result<Option<usize>> {
    match std::env::var(CUDA_DEVICE_ENV) {
        Ok(s) if s.trim().is_empty() => Ok(None),
        Ok(s) => parse_cuda_device(&s).map(Some),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(Error::param(CUDA_DEVICE_ENV, "not valid UTF-8"))
        }
    }
}

/// A CUDA device ordinal from its text (the value of [`CUDA_DEVICE_ENV`]).
pub fn parse_cuda_device(s: &str) -> Result<usize> {
    s.trim()
        .parse::<usize>()
        .map_err(|_| Error::param(CUDA_DEVICE_ENV, format!("'{s}' is not a device ordinal")))
}

/// The OpenCL device [`OPENCL_DEVICE_ENV`] names ([`DeviceSelector::parse`];
/// `Default` when unset). For the command line, the benchmark harness and
/// `OpenClBackend::from_env`.
pub fn opencl_device_from_env() -> DeviceSelector {
    std::env::var(OPENCL_DEVICE_ENV)
        .map(|v| DeviceSelector::parse(&v))
        .unwrap_or_default()
}

impl DeviceSelector {
    /// The selector from [`OPENCL_DEVICE_ENV`] (`Default` when unset), as the command line
    /// reads it ([`opencl_device_from_env`]).
    pub fn from_env() -> Self {
        opencl_device_from_env()
    }
}

impl BackendConfig {
    /// The configuration the command line and the benchmark harness start from: the tuning of
    /// [`Tuning::from_env`] and the devices of [`CUDA_DEVICE_ENV`] and [`OPENCL_DEVICE_ENV`].
    pub fn from_env() -> Result<Self> {
        Ok(Self {
            tuning: Tuning::from_env()?,
            cuda_device: cuda_device_from_env()?,
            opencl_device: opencl_device_from_env(),
        })
    }
}

/// Environment variable of [`Tuning::csr_kernel`] (`vector`, `stream` or `stream-compact`;
/// anything else is ignored).
pub const CSR_KERNEL_ENV: &str = "PIPEKRYLOV_CSR_KERNEL";

/// Environment variable of [`Tuning::csr_lanes`] (a power of two in 1..=32; anything else is
/// ignored).
pub const CSR_LANES_ENV: &str = "PIPEKRYLOV_CSR_LANES";

/// Environment variable of [`Tuning::long_row_factor`] (a non-negative integer, 0 turning the
/// long-row path off).
pub const LONG_ROW_FACTOR_ENV: &str = "PIPEKRYLOV_LONG_ROW_FACTOR";

/// Environment variable of [`Tuning::sell_compact`] (`0` off).
pub const SELL_COMPACT_ENV: &str = "PIPEKRYLOV_SELL_COMPACT";

/// Environment variable of [`Tuning::reduction_groups_per_sm`] (an integer in 1..=256).
pub const REDUCTION_GROUPS_PER_SM_ENV: &str = "PIPEKRYLOV_REDUCTION_GROUPS_PER_SM";

/// Environment variable of [`Tuning::afsai_batch_factor`] (an integer in 1..=64).
pub const AFSAI_BATCH_FACTOR_ENV: &str = "PIPEKRYLOV_AFSAI_BATCH_FACTOR";

/// Environment variable of [`Tuning::dcgs2_small_max_groups`] (a non-negative integer, 0 for
/// two kernels always).
pub const DCGS2_SMALL_MAX_GROUPS_ENV: &str = "PIPEKRYLOV_DCGS2_SMALL_MAX_GROUPS";

/// Environment variable of [`Tuning::dcgs2_sell_fused`] (`0` never, `1` on both GPU backends;
/// unset or anything else on CUDA only).
pub const DCGS2_SELL_FUSED_ENV: &str = "PIPEKRYLOV_DCGS2_SELL_FUSED";

/// Environment variable of [`Tuning::afsai_grow_kernel`] (`row` or `team`; anything else is
/// ignored).
pub const AFSAI_GROW_KERNEL_ENV: &str = "PIPEKRYLOV_AFSAI_GROW_KERNEL";

/// Environment variable of [`Tuning::cuda_pdl`] (`0` off).
pub const CUDA_PDL_ENV: &str = "PIPEKRYLOV_CUDA_PDL";

/// Environment variable of [`Tuning::cuda_early_start`] (0..=3; anything else means 3).
pub const CUDA_EARLY_START_ENV: &str = "PIPEKRYLOV_CUDA_EARLY_START";

/// Environment variable of [`Tuning::cg_fused`] (`0` never, `1` always; unset or anything else
/// by backend and size).
pub const CG_FUSED_ENV: &str = "PIPEKRYLOV_CG_FUSED";

/// Environment variable of [`Tuning::cg_sums_kernel`] (`0` never, `1` always; unset or anything
/// else by backend and group count).
pub const CG_SUMS_KERNEL_ENV: &str = "PIPEKRYLOV_CG_SUMS_KERNEL";

/// Environment variable of [`Tuning::bicgstab_fused`] (`0` never, `1` always; unset or anything
/// else by backend and size).
pub const BICGSTAB_FUSED_ENV: &str = "PIPEKRYLOV_BICGSTAB_FUSED";

/// Environment variable of [`Tuning::matrix_load_hints`] (0..=2; anything else means 1).
pub const MATRIX_LOAD_HINTS_ENV: &str = "PIPEKRYLOV_MATRIX_LOAD_HINTS";

/// Environment variable of [`Tuning::opencl_inline_ptx`] (`0` off; anything else leaves it on).
pub const OPENCL_INLINE_PTX_ENV: &str = "PIPEKRYLOV_OPENCL_INLINE_PTX";

/// Environment variable of [`Tuning::opencl_address_args`] (`1` on, `0` off; anything else is
/// an error of [`Tuning::from_env`]).
pub const OPENCL_ADDRESS_ARGS_ENV: &str = "PIPEKRYLOV_OPENCL_ADDRESS_ARGS";

/// Environment variable of [`Tuning::opencl_packed_args`] (`1` on, `0` off; anything else is an
/// error of [`Tuning::from_env`]).
pub const OPENCL_PACKED_ARGS_ENV: &str = "PIPEKRYLOV_OPENCL_PACKED_ARGS";

/// Environment variable of [`Tuning::opencl_flush`] (`none` or `KICK:EVERY` such as `1:4`).
pub const OPENCL_FLUSH_ENV: &str = "PIPEKRYLOV_OPENCL_FLUSH";

/// Environment variable of [`Tuning::opencl_wait`] (`block` or `spin`).
pub const OPENCL_WAIT_ENV: &str = "PIPEKRYLOV_OPENCL_WAIT";

/// Environment variable of [`Tuning::halo_peer`] (`0` never, `1` always; unset or anything else
/// from [`HALO_PEER_MIN_RANKS`](super::HALO_PEER_MIN_RANKS) ranks on).
pub const HALO_PEER_ENV: &str = "PIPEKRYLOV_HALO_PEER";

/// Environment variable of [`Tuning::sums_peer`] (`0` never, `1` on any number of ranks above
/// one; unset or anything else on at most [`SUMS_PEER_MAX_RANKS`](super::SUMS_PEER_MAX_RANKS) ranks).
pub const SUMS_PEER_ENV: &str = "PIPEKRYLOV_SUMS_PEER";

/// Environment variable of [`Tuning::halo_flag_write`] (`0` off).
pub const HALO_FLAG_WRITE_ENV: &str = "PIPEKRYLOV_HALO_FLAG_WRITE";

/// Environment variable of [`Tuning::link_kernels`] (`0` off).
pub const LINK_KERNELS_ENV: &str = "PIPEKRYLOV_LINK_KERNELS";

/// Environment variable of [`Tuning::sums_kernel`] (`0` off).
pub const SUMS_KERNEL_ENV: &str = "PIPEKRYLOV_SUMS_KERNEL";

/// Environment variable of [`Tuning::cuda_smem_carveout`] (0..=100; anything else leaves the
/// driver's choice).
pub const CUDA_SMEM_CARVEOUT_ENV: &str = "PIPEKRYLOV_CUDA_SMEM_CARVEOUT";

/// Environment variable of [`Tuning::cuda_trace`] (the CSV file of the kernel timeline; unset
/// or empty: no trace).
pub const CUDA_TRACE_ENV: &str = "PIPEKRYLOV_CUDA_TRACE";

/// Environment variable naming the CUDA device ordinal of the command line
/// ([`crate::backend::BackendConfig::cuda_device`], default 0).
pub const CUDA_DEVICE_ENV: &str = "PIPEKRYLOV_CUDA_DEVICE";

/// Environment variable naming the OpenCL device of the command line
/// ([`crate::backend::BackendConfig::opencl_device`]): `P:D` (platform and device index) or a
/// case-insensitive substring of "platform / device".
pub const OPENCL_DEVICE_ENV: &str = "PIPEKRYLOV_OPENCL_DEVICE";
