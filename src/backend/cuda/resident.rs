//! CUDA's part of [`ResidentOps`]: recording the launches of the device-resident iterations as a
//! CUDA graph (stream capture) and replaying it. The kernels (`kernels/resident.kc`) are launched
//! by the trait's default bodies, written once for both GPU runtimes
//! (`src/backend/ops/resident/launch.rs`).

use super::CudaBackend;
use crate::backend::ResidentOps;
use crate::error::Result;

impl ResidentOps for CudaBackend {
    fn begin_recording(&self) -> Result<bool> {
        self.begin_capture()
    }

    fn end_recording(&self) -> Result<Option<crate::backend::Recording>> {
        self.end_capture()
    }

    fn replay(&self, recording: &crate::backend::Recording) -> Result<()> {
        self.replay_graph(recording)
    }
}
