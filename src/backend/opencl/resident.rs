//! OpenCL's [`ResidentOps`]: the kernels (`kernels/resident.kc`) are launched by the trait's
//! default bodies, written once for both GPU runtimes (`src/backend/ops/resident/launch.rs`);
//! OpenCL records nothing (the launches run as they are enqueued).

use super::OpenClBackend;
use crate::backend::ResidentOps;

impl ResidentOps for OpenClBackend {}
