//! One level of the hierarchy on the device, as the cycle reads it (set up on the host and
//! uploaded, or set up on the device).

use crate::backend::{Buffer, DeviceMatrix};

/// One level on the device: its operator, transfer operators and smoother diagonal.
#[derive(Debug)]
pub(super) struct DeviceLevel<T> {
    pub(super) a: DeviceMatrix<T>,
    pub(super) p: DeviceMatrix<T>,
    pub(super) r: DeviceMatrix<T>,
    /// The smoother's diagonal scaling s (Jacobi: w / a_ii; l1-Jacobi; Chebyshev: 1 / a_ii).
    pub(super) s: Buffer<T>,
    /// Chebyshev: s / theta, the first step's scaling from x = 0 (empty otherwise).
    pub(super) s_first: Buffer<T>,
    /// Chebyshev's (theta, delta) of D^-1 A (zero otherwise).
    pub(super) chebyshev: (f64, f64),
    /// [`crate::matrix::CsrMatrix::pattern_fingerprint`] of the host A, P and R uploaded (a refresh writes
    /// new values in place where they are unchanged).
    pub(super) patterns: [u64; 3],
}
