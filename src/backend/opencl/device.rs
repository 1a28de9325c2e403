//! Device discovery and selection: every platform and device with the properties the backend
//! needs, the default choice (first GPU over all platforms, else the first device) and the
//! overrides ([`DeviceSelector`]: `P:D` or a name substring, the command line's
//! `PIPEKRYLOV_OPENCL_DEVICE`).

use super::cl::{self, DeviceId, PlatformId, BACKEND};
use crate::backend::tuning::{Tuning, OPENCL_DEVICE_ENV as DEVICE_ENV};
use crate::backend::DeviceSelector;
use crate::error::{Error, Result};
use ocl::ffi;
use std::sync::Mutex;

/// One OpenCL device and the properties the backend uses.
#[derive(Debug, Clone)]
pub struct DeviceDescription {
    /// Platform index.
    pub platform_index: usize,
    /// Device index within the platform.
    pub device_index: usize,
    /// Platform name.
    pub platform_name: String,
    /// Device name.
    pub device_name: String,
    /// CL_DEVICE_TYPE includes GPU.
    pub is_gpu: bool,
    /// CL_DEVICE_MAX_COMPUTE_UNITS.
    pub compute_units: usize,
    /// CL_DEVICE_MAX_WORK_GROUP_SIZE.
    pub max_work_group_size: usize,
    /// CL_DEVICE_MAX_MEM_ALLOC_SIZE in bytes.
    pub max_alloc_bytes: u64,
    /// CL_DEVICE_GLOBAL_MEM_SIZE in bytes.
    pub global_mem_bytes: u64,
    /// CL_DEVICE_LOCAL_MEM_SIZE in bytes.
    pub local_mem_bytes: u64,
    /// `cl_khr_fp64` listed and CL_DEVICE_DOUBLE_FP_CONFIG non-zero.
    pub fp64: bool,
    pub(crate) platform: PlatformId,
    pub(crate) device: DeviceId,
}

impl DeviceDescription {
    /// "platform / device".
    pub fn full_name(&self) -> String {
        format!("{} / {}", self.platform_name, self.device_name)
    }

    /// A GPU of NVIDIA's OpenCL platform (device-address arguments and inline PTX).
    pub(crate) fn is_nvidia_gpu(&self) -> bool {
        self.is_gpu && self.platform_name.to_ascii_lowercase().contains("nvidia")
    }

    /// One line for listings: "P:D platform / device (GPU, 132 CUs, 140.0 GiB, fp64)".
    pub fn summary(&self) -> String {
        format!(
            "{}:{} {} ({}, {} CUs, {:.1} GiB, max alloc {:.1} GiB, {})",
            self.platform_index,
            self.device_index,
            self.full_name(),
            if self.is_gpu { "GPU" } else { "non-GPU" },
            self.compute_units,
            self.global_mem_bytes as f64 / (1u64 << 30) as f64,
            self.max_alloc_bytes as f64 / (1u64 << 30) as f64,
            if self.fp64 { "fp64" } else { "no fp64" },
        )
    }

    fn query(
        platform_index: usize,
        device_index: usize,
        platform: PlatformId,
        platform_name: &str,
        device: DeviceId,
    ) -> Result<Self> {
        let device_name = cl::device_string(device, ffi::CL_DEVICE_NAME)?;
        let kind = cl::device_uint(device, ffi::CL_DEVICE_TYPE)?;
        let extensions = cl::device_string(device, ffi::CL_DEVICE_EXTENSIONS).unwrap_or_default();
        // A device without doubles may refuse the query (OpenCL 1.1): treat that as zero.
        let double_config = cl::device_uint(device, ffi::CL_DEVICE_DOUBLE_FP_CONFIG).unwrap_or(0);
        let has_ext = extensions.split_whitespace().any(|e| e == "cl_khr_fp64");
        Ok(Self {
            platform_index,
            device_index,
            platform_name: platform_name.to_string(),
            device_name,
            is_gpu: kind & ffi::CL_DEVICE_TYPE_GPU != 0,
            compute_units: cl::device_uint(device, ffi::CL_DEVICE_MAX_COMPUTE_UNITS)?.max(1)
                as usize,
            max_work_group_size: cl::device_uint(device, ffi::CL_DEVICE_MAX_WORK_GROUP_SIZE)?.max(1)
                as usize,
            max_alloc_bytes: cl::device_uint(device, ffi::CL_DEVICE_MAX_MEM_ALLOC_SIZE)?,
            global_mem_bytes: cl::device_uint(device, ffi::CL_DEVICE_GLOBAL_MEM_SIZE)?,
            local_mem_bytes: cl::device_uint(device, ffi::CL_DEVICE_LOCAL_MEM_SIZE)?,
            fp64: has_ext && double_config != 0,
            platform,
            device,
        })
    }
}

/// Every device of every platform, in platform then device order. No OpenCL platform is
/// [`Error::BackendUnavailable`].
pub fn list_devices() -> Result<Vec<DeviceDescription>> {
    // Some ICDs (PoCL) initialize their devices lazily on the first clGetDeviceIDs and report
    // no device to a second thread that asks meanwhile: enumerate one thread at a time.
    static ENUMERATION: Mutex<()> = Mutex::new(());
    let _guard = ENUMERATION.lock().unwrap_or_else(|p| p.into_inner());
    let platforms =
        cl::platform_ids().map_err(|e| unavailable(format!("cannot list platforms: {e}")))?;
    if platforms.is_empty() {
        return Err(unavailable(
            "no OpenCL platform found (no ICD installed, e.g. pocl-opencl-icd or the NVIDIA \
             driver)"
                .into(),
        ));
    }
    let mut out = Vec::new();
    for (pi, &platform) in platforms.iter().enumerate() {
        let platform_name = cl::platform_string(platform, ffi::CL_PLATFORM_NAME)
            .unwrap_or_else(|_| format!("platform {pi}"));
        // A platform whose devices cannot be listed is skipped, not fatal.
        let Ok(devices) = cl::device_ids(platform) else {
            continue;
        };
        for (di, &device) in devices.iter().enumerate() {
            if let Ok(d) = DeviceDescription::query(pi, di, platform, &platform_name, device) {
                out.push(d);
            }
        }
    }
    if out.is_empty() {
        return Err(unavailable(format!(
            "{} OpenCL platform(s) but no usable device",
            platforms.len()
        )));
    }
    Ok(out)
}

/// Pick a device from a listing.
pub(crate) fn select(
    devices: &[DeviceDescription],
    selector: &DeviceSelector,
) -> Result<DeviceDescription> {
    let found = match selector {
        DeviceSelector::Default => devices
            .iter()
            .find(|d| d.is_gpu)
            .or_else(|| devices.first()),
        DeviceSelector::Index { platform, device } => devices
            .iter()
            .find(|d| d.platform_index == *platform && d.device_index == *device),
        DeviceSelector::Name(name) => {
            let needle = name.to_lowercase();
            devices
                .iter()
                .find(|d| d.full_name().to_lowercase().contains(&needle))
        }
    };
    found.cloned().ok_or_else(|| {
        let listing: Vec<String> = devices.iter().map(|d| d.summary()).collect();
        unavailable(format!(
            "no device matches {selector:?} (set {DEVICE_ENV} to P:D or a name); devices: [{}]",
            listing.join("; ")
        ))
    })
}

/// [`Error::BackendUnavailable`] for OpenCL.
pub(crate) fn unavailable(reason: String) -> Error {
    Error::BackendUnavailable {
        backend: BACKEND.into(),
        reason,
    }
}

/// Whether device-address arguments are wanted on `device`: the tuning's
/// [`opencl_address_args`](Tuning::opencl_address_args), else on for NVIDIA GPUs only.
pub(crate) fn address_args_wanted(device: &DeviceDescription, tuning: &Tuning) -> bool {
    tuning
        .opencl_address_args
        .unwrap_or_else(|| device.is_nvidia_gpu())
}

/// Whether packed arguments are wanted (given device-address mode): the tuning's
/// [`opencl_packed_args`](Tuning::opencl_packed_args) (on by default).
/// Only little-endian hosts pack.
pub(crate) fn packed_args_wanted(tuning: &Tuning) -> bool {
    tuning.opencl_packed_args && cfg!(target_endian = "little")
}
