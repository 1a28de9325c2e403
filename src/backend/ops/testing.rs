//! Testing hooks, apart from the kernel traits: fault injection for the reliability tests
//! (`tests/faults.rs`). Every backend implements them; they are part of
//! [`Backend`](crate::backend::Backend) so that generic test code can reach them, and hidden
//! from the documentation.

use enum_dispatch::enum_dispatch;

/// Fault injection (testing only).
#[doc(hidden)]
#[enum_dispatch]
pub trait FaultInjection {
    /// Make the `k`-th device allocation from now (`Some(k)`, k >= 1) fail with `OutOfMemory`,
    /// or stop doing so (`None`). Costs one relaxed atomic load per allocation when off.
    fn fail_allocation(&self, nth: Option<u64>);

    /// From now on behave as after a sticky device fault (an illegal address in a kernel): every
    /// later call that touches the device fails with
    /// [`Error::DeviceFault`](crate::Error::DeviceFault) and the backend reports itself unusable.
    /// Returns `false`, changing nothing, on a backend without a device (host).
    fn inject_device_fault(&self) -> bool {
        false
    }
}
