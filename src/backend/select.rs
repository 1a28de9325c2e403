//! Run-time backend choice: `auto` takes the best available backend (CUDA, then OpenCL on a GPU,
//! then host) and says why it skipped the others.

use super::host::HostBackend;
use super::AnyBackend;
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
        if self == BackendChoice::Auto && n <= AUTO_HOST_MAX_N {
            return Ok((
                AnyBackend::Host(HostBackend::new()),
                vec![format!(
                    "auto: host backend for n = {n} (at most {AUTO_HOST_MAX_N} unknowns a host \
                     iteration is cheaper than a GPU one; --backend cuda|opencl overrides)"
                )],
            ));
        }
        self.create()
    }

    /// Create the backend. For `Auto`, the returned notes say which backends were skipped and
    /// why (e.g. "cuda: not compiled in").
    pub fn create(self) -> Result<(AnyBackend, Vec<String>)> {
        let mut notes = Vec::new();
        match self {
            BackendChoice::Host => Ok((AnyBackend::Host(HostBackend::new()), notes)),
            BackendChoice::Cuda => Ok((create_cuda()?, notes)),
            BackendChoice::OpenCl => Ok((create_opencl()?, notes)),
            BackendChoice::Auto => {
                match create_cuda() {
                    Ok(b) => return Ok((b, notes)),
                    Err(e) => notes.push(format!("cuda skipped: {e}")),
                }
                match create_opencl_gpu() {
                    Ok(b) => return Ok((b, notes)),
                    Err(e) => notes.push(format!("opencl skipped: {e}")),
                }
                notes.push("using host backend".into());
                Ok((AnyBackend::Host(HostBackend::new()), notes))
            }
        }
    }
}

#[cfg(feature = "cuda")]
fn create_cuda() -> Result<AnyBackend> {
    Ok(AnyBackend::Cuda(super::cuda::CudaBackend::from_env()?))
}
#[cfg(not(feature = "cuda"))]
fn create_cuda() -> Result<AnyBackend> {
    Err(Error::BackendUnavailable {
        backend: "cuda".into(),
        reason: "not compiled in (build with --features cuda)".into(),
    })
}

#[cfg(feature = "opencl")]
fn create_opencl() -> Result<AnyBackend> {
    Ok(AnyBackend::OpenCl(super::opencl::OpenClBackend::from_env()?))
}
#[cfg(feature = "opencl")]
fn create_opencl_gpu() -> Result<AnyBackend> {
    let b = super::opencl::OpenClBackend::from_env()?;
    if !b.is_gpu() {
        return Err(Error::BackendUnavailable {
            backend: "opencl".into(),
            reason: format!("no GPU device (would use {})", b.device_label()),
        });
    }
    Ok(AnyBackend::OpenCl(b))
}
#[cfg(not(feature = "opencl"))]
fn create_opencl() -> Result<AnyBackend> {
    Err(Error::BackendUnavailable {
        backend: "opencl".into(),
        reason: "not compiled in (build with --features opencl)".into(),
    })
}
#[cfg(not(feature = "opencl"))]
fn create_opencl_gpu() -> Result<AnyBackend> {
    create_opencl()
}

/// Status of every backend, for `pipekrylov info`.
pub fn available_backends() -> Vec<BackendStatus> {
    let mut out = vec![BackendStatus {
        name: "host",
        compiled: true,
        available: true,
        devices: vec![super::BackendInfo::device_name(&HostBackend::new())],
        note: "always available".into(),
    }];
    #[cfg(feature = "opencl")]
    out.push(super::opencl::status());
    #[cfg(not(feature = "opencl"))]
    out.push(BackendStatus {
        name: "opencl",
        compiled: false,
        available: false,
        devices: vec![],
        note: "not compiled in (build with --features opencl)".into(),
    });
    #[cfg(feature = "cuda")]
    out.push(super::cuda::status());
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
