//! What a backend is opened with, named without naming a backend: the tuning, the CUDA device
//! ordinal and the OpenCL [`DeviceSelector`] ([`BackendConfig`]), and what `pipekrylov info`
//! reports per backend ([`BackendStatus`]). The backends read these; [`super::BackendChoice`]
//! (above the backends) opens one.

use super::tuning::Tuning;

/// Which OpenCL device to use (the OpenCL backend's constructors,
/// [`BackendConfig::opencl_device`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeviceSelector {
    /// The first GPU over all platforms, else the first device.
    #[default]
    Default,
    /// Device `device` of platform `platform` (indices as the OpenCL backend's `list_devices`
    /// lists them).
    Index {
        /// Platform index.
        platform: usize,
        /// Device index within the platform.
        device: usize,
    },
    /// The first device whose "platform / device" name contains this (case-insensitive).
    Name(String),
}

impl DeviceSelector {
    /// Parse a device name as the command line takes it (the value of
    /// [`crate::backend::tuning::OPENCL_DEVICE_ENV`]): empty is `Default`, `P:D` an index pair,
    /// anything else a name substring.
    pub fn parse(s: &str) -> Self {
        let s = s.trim();
        if s.is_empty() {
            return DeviceSelector::Default;
        }
        if let Some((p, d)) = s.split_once(':') {
            if let (Ok(platform), Ok(device)) = (p.trim().parse(), d.trim().parse()) {
                return DeviceSelector::Index { platform, device };
            }
        }
        DeviceSelector::Name(s.to_string())
    }
}

/// What [`BackendChoice::create_with`](super::BackendChoice::create_with) opens a backend with: the tuning every backend gets and
/// the devices. `BackendConfig::default()` is what [`BackendChoice::create`](super::BackendChoice::create) uses: the default
/// tuning, CUDA device 0 and the default OpenCL device. The command line starts from
/// `BackendConfig::from_env()` (the library itself never reads the environment).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct BackendConfig {
    /// The tuning knobs of the backend.
    pub tuning: Tuning,
    /// The CUDA device ordinal (`None`: device 0, or under `mpirun` the command line's choice
    /// by node-local rank).
    pub cuda_device: Option<usize>,
    /// The OpenCL device (`Default`: the first GPU, else the first device; under `mpirun` the
    /// command line's choice by node-local rank).
    pub opencl_device: DeviceSelector,
}

impl BackendConfig {
    /// The default devices with `tuning`.
    pub fn with_tuning(tuning: Tuning) -> Self {
        Self {
            tuning,
            ..Self::default()
        }
    }
}

/// What `pipekrylov info` reports for one compiled-in or known backend.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BackendStatus {
    /// Backend name.
    pub name: &'static str,
    /// Compiled into this binary.
    pub compiled: bool,
    /// Usable on this machine.
    pub available: bool,
    /// Devices it sees (one line each).
    pub devices: Vec<String>,
    /// Why it is unavailable, or which device `auto` would pick.
    pub note: String,
}
