//! Probing the CUDA libraries before cudarc touches them.
//!
//! cudarc 0.19 with dynamic loading panics when it cannot open `libcuda` or `libnvrtc`. This
//! module opens the same candidate names cudarc would try ([`cudarc::get_lib_name_candidates`])
//! with `libloading` first, and turns a missing library into
//! [`Error::BackendUnavailable`]. As a second line of defence, [`guarded`] runs a cudarc call
//! inside `catch_unwind`, so that a library that loads but lacks a symbol is an error too.

use crate::error::{Error, Result};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// Why the driver library could not be opened (the wording `select.rs` and the CLI show).
pub(crate) const NO_DRIVER: &str = "libcuda.so.1 not found (no NVIDIA driver)";

/// Why NVRTC could not be opened, with the fix.
pub(crate) const NO_NVRTC: &str = "libnvrtc.so.13 not found: kernels cannot be compiled \
     (install the CUDA 13 NVRTC library, e.g. `pip install nvidia-cuda-nvrtc==13.0.88`, and add \
     its `nvidia/cu13/lib` folder to LD_LIBRARY_PATH)";

/// The first library among the candidates of `names` that opens, or `None`.
fn find_library(names: &[&str]) -> Option<String> {
    names
        .iter()
        .flat_map(|name| cudarc::get_lib_name_candidates(name))
        .find(|candidate| {
            // SAFETY: opening a shared library runs its initialisers. The candidates are the
            // vendor libraries cudarc itself would open next; the handle is closed right away
            // and no symbol is used through it.
            unsafe { libloading::Library::new(candidate.as_str()) }.is_ok()
        })
}

fn probe(cell: &'static OnceLock<Option<String>>, names: &[&str]) -> Option<String> {
    cell.get_or_init(|| find_library(names)).clone()
}

/// Check that the CUDA driver library can be opened (cached for the process).
pub(crate) fn driver() -> Result<String> {
    static DRIVER: OnceLock<Option<String>> = OnceLock::new();
    probe(&DRIVER, &["cuda", "nvcuda"]).ok_or_else(|| unavailable(NO_DRIVER))
}

/// Check that NVRTC can be opened (cached for the process).
pub(crate) fn nvrtc() -> Result<String> {
    static NVRTC: OnceLock<Option<String>> = OnceLock::new();
    probe(&NVRTC, &["nvrtc"]).ok_or_else(|| unavailable(NO_NVRTC))
}

/// [`Error::BackendUnavailable`] for the CUDA backend.
pub(crate) fn unavailable(reason: impl Into<String>) -> Error {
    Error::BackendUnavailable {
        backend: "cuda".into(),
        reason: reason.into(),
    }
}

/// Run `f`, turning a panic inside cudarc into [`Error::BackendUnavailable`] naming `what`.
pub(crate) fn guarded<R>(what: &str, f: impl FnOnce() -> R) -> Result<R> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        unavailable(format!("{what} failed inside cudarc: {msg}"))
    })
}
