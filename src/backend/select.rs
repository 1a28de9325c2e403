//! Run-time backend choice: `auto` takes the best available backend (CUDA, then OpenCL on a GPU,
//! then host) and says why it skipped the others.

use super::any::AnyBackend;
use super::config::{BackendConfig, BackendStatus};
use super::host::HostBackend;
use crate::error::{Error, Result};

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// The best available: CUDA, then OpenCL, then host; where the size is known
    /// ([`BackendChoice::create_for`]: the CLI's `solve`, [`crate::ReusableSolver`]) the host
    /// for systems of at most [`AUTO_HOST_MAX_N`] unknowns.
    #[default]
    Auto,
    /// The host backend.
    Host,
    /// OpenCL (feature `opencl`).
    OpenCl,
    /// CUDA (feature `cuda`).
    Cuda,
}

impl std::str::FromStr for BackendChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "host" => Ok(Self::Host),
            "opencl" | "cl" => Ok(Self::OpenCl),
            "cuda" => Ok(Self::Cuda),
            other => Err(Error::param(
                "backend",
                format!("unknown backend '{other}' (expected auto, host, opencl or cuda)"),
            )),
        }
    }
}

/// Systems of at most this many unknowns run on the host backend when the choice is `Auto`
/// ([`BackendChoice::create_for`]): below it a host iteration costs less than the GPU's
/// device-resident one. Measured on the H200 machine (16 host cores; `bench/results/host-300it-*`
/// against `resident-prefetch-300it-*`, 300-iteration solves, us per iteration): 2D Poisson
/// n = 225, host vs CUDA: CG 4.2 vs 5.0, BiCGStab 5.0 vs 9.4, GMRES(30) 8.8 vs 11.1; n = 961: CG
/// 9.5 vs 5.2, BiCGStab 19.2 vs 9.7, GMRES 39.1 vs 11.4; 3D Poisson n = 512: CG 9.1 vs 5.1,
/// GMRES 26.3 vs 10.9. A machine with a slower GPU launch or fewer cores moves the crossover;
/// name the backend to override it.
pub const AUTO_HOST_MAX_N: usize = 500;

impl BackendChoice {
    /// [`BackendChoice::create`] for a system of `n` unknowns: `Auto` picks the host backend for
    /// `n <= AUTO_HOST_MAX_N` (and says so in the notes), the others are as `create`.
    pub fn create_for(self, n: usize) -> Result<(AnyBackend, Vec<String>)> {
        self.create_for_with(n, &BackendConfig::default())
    }

    /// Create the backend. For `Auto`, the returned notes say which backends were skipped and
    /// why (e.g. "cuda: not compiled in").
    pub fn create(self) -> Result<(AnyBackend, Vec<String>)> {
        self.create_with(&BackendConfig::default())
    }

    /// [`BackendChoice::create_for`] with the tuning and devices of `config`.
    pub fn create_for_with(
        self,
        n: usize,
        config: &BackendConfig,
    ) -> Result<(AnyBackend, Vec<String>)> {
        if self == BackendChoice::Auto && n <= AUTO_HOST_MAX_N {
            return Ok((
                AnyBackend::Host(HostBackend::with_tuning(config.tuning.clone())),
                vec![format!(
                    "auto: host backend for n = {n} (at most {AUTO_HOST_MAX_N} unknowns a host \
                     iteration is cheaper than a GPU one; --backend cuda|opencl overrides)"
                )],
            ));
        }
        self.create_with(config)
    }

    /// [`BackendChoice::create`] with the tuning and devices of `config`.
    pub fn create_with(self, config: &BackendConfig) -> Result<(AnyBackend, Vec<String>)> {
        let mut notes = Vec::new();
        let host = || AnyBackend::Host(HostBackend::with_tuning(config.tuning.clone()));
        match self {
            BackendChoice::Host => Ok((host(), notes)),
            BackendChoice::Cuda => Ok((create_cuda(config)?, notes)),
            BackendChoice::OpenCl => Ok((create_opencl(config)?, notes)),
            BackendChoice::Auto => {
                match create_cuda(config) {
                    Ok(b) => return Ok((b, notes)),
                    Err(e) => notes.push(format!("cuda skipped: {e}")),
                }
                match create_opencl_gpu(config) {
                    Ok(b) => return Ok((b, notes)),
                    Err(e) => notes.push(format!("opencl skipped: {e}")),
                }
                notes.push("using host backend".into());
                Ok((host(), notes))
            }
        }
    }
}

#[cfg(feature = "cuda")]
fn create_cuda(config: &BackendConfig) -> Result<AnyBackend> {
    Ok(AnyBackend::Cuda(super::cuda::CudaBackend::with_tuning(
        config.cuda_device.unwrap_or(0),
        config.tuning.clone(),
    )?))
}
#[cfg(not(feature = "cuda"))]
fn create_cuda(_: &BackendConfig) -> Result<AnyBackend> {
    Err(Error::BackendUnavailable {
        backend: "cuda".into(),
        reason: "not compiled in (build with --features cuda)".into(),
    })
}

#[cfg(feature = "opencl")]
fn create_opencl(config: &BackendConfig) -> Result<AnyBackend> {
    Ok(AnyBackend::OpenCl(
        super::opencl::OpenClBackend::with_tuning(
            config.opencl_device.clone(),
            config.tuning.clone(),
        )?,
    ))
}
#[cfg(feature = "opencl")]
fn create_opencl_gpu(config: &BackendConfig) -> Result<AnyBackend> {
    let b = super::opencl::OpenClBackend::with_tuning(
        config.opencl_device.clone(),
        config.tuning.clone(),
    )?;
    if !b.is_gpu() {
        return Err(Error::BackendUnavailable {
            backend: "opencl".into(),
            reason: format!("no GPU device (would use {})", b.device_label()),
        });
    }
    Ok(AnyBackend::OpenCl(b))
}
#[cfg(not(feature = "opencl"))]
fn create_opencl(_: &BackendConfig) -> Result<AnyBackend> {
    Err(Error::BackendUnavailable {
        backend: "opencl".into(),
        reason: "not compiled in (build with --features opencl)".into(),
    })
}
#[cfg(not(feature = "opencl"))]
fn create_opencl_gpu(config: &BackendConfig) -> Result<AnyBackend> {
    create_opencl(config)
}

/// Status of every backend, for `pipekrylov info`, with the default devices.
pub fn available_backends() -> Vec<BackendStatus> {
    available_backends_with(&BackendConfig::default())
}

/// Status of every backend, for `pipekrylov info`, with the devices of `config` (the ones
/// [`BackendChoice::create_with`] would open).
pub fn available_backends_with(config: &BackendConfig) -> Vec<BackendStatus> {
    #[cfg(not(any(feature = "cuda", feature = "opencl")))]
    let _ = config;
    let mut out = vec![BackendStatus {
        name: "host",
        compiled: true,
        available: true,
        devices: vec![super::BackendInfo::device_name(&HostBackend::new())],
        note: "always available".into(),
    }];
    #[cfg(feature = "opencl")]
    out.push(super::opencl::status_for(&config.opencl_device));
    #[cfg(not(feature = "opencl"))]
    out.push(BackendStatus {
        name: "opencl",
        compiled: false,
        available: false,
        devices: vec![],
        note: "not compiled in (build with --features opencl)".into(),
    });
    #[cfg(feature = "cuda")]
    out.push(super::cuda::status_for(config.cuda_device));
    #[cfg(not(feature = "cuda"))]
    out.push(BackendStatus {
        name: "cuda",
        compiled: false,
        available: false,
        devices: vec![],
        note: "not compiled in (build with --features cuda)".into(),
    });
    out
}
