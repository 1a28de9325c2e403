//! The numeric element type: `f64` (default) or `f32`.

use bytemuck::Pod;
use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// Floating-point precision of a solve, for run-time selection (CLI, benchmarks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Precision {
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
}

impl Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        })
    }
}

/// The only numeric generic of the crate: implemented for `f32` and `f64`.
///
/// ```
/// use pipekrylov::Scalar;
/// fn norm<T: Scalar>(v: &[T]) -> f64 { v.iter().map(|x| x.to_f64().powi(2)).sum::<f64>().sqrt() }
/// assert_eq!(norm(&[3.0f32, 4.0]), 5.0);
/// ```
pub trait Scalar:
    Pod
    + Copy
    + Send
    + Sync
    + Debug
    + Display
    + Default
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + std::iter::Sum
    + 'static
{
    /// Run-time tag of this type.
    const PRECISION: Precision;
    /// The C type name used in kernel sources (`double` or `float`).
    const C_NAME: &'static str;
    /// Machine epsilon.
    const EPSILON: Self;
    /// Zero.
    fn zero() -> Self;
    /// One.
    fn one() -> Self;
    /// Conversion from f64 (rounding for f32).
    fn from_f64(v: f64) -> Self;
    /// Conversion to f64 (exact).
    fn to_f64(self) -> f64;
    /// True unless NaN or infinite.
    fn is_finite(self) -> bool;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
}

macro_rules! impl_scalar {
    ($t:ty, $p:expr, $c:expr) => {
        impl Scalar for $t {
            const PRECISION: Precision = $p;
            const C_NAME: &'static str = $c;
            const EPSILON: Self = <$t>::EPSILON;
            #[inline(always)]
            fn zero() -> Self {
                0.0
            }
            #[inline(always)]
            fn one() -> Self {
                1.0
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
        }
    };
}

impl_scalar!(f64, Precision::F64, "double");
impl_scalar!(f32, Precision::F32, "float");

/// Entries per task of [`first_non_finite`]: each is tested without an early exit (a loop
/// that vectorizes), the first chunk holding a non-finite entry searched again.
const FINITE_CHUNK: usize = 1 << 15;

/// The index of the first NaN or infinite entry of `values`, if any: chunks tested in
/// parallel (the whole slice is read once when every entry is finite, which is the common case
/// and the one at millions of entries).
pub(crate) fn first_non_finite<T: Scalar>(values: &[T]) -> Option<usize> {
    use rayon::prelude::*;
    if values.len() <= FINITE_CHUNK {
        return values.iter().position(|v| !v.is_finite());
    }
    let chunk = values
        .par_chunks(FINITE_CHUNK)
        .position_first(|c| c.iter().fold(false, |bad, v| bad | !v.is_finite()))?;
    let start = chunk * FINITE_CHUNK;
    values[start..]
        .iter()
        .position(|v| !v.is_finite())
        .map(|i| start + i)
}

#[cfg(test)]
mod tests {
    use super::first_non_finite;

    #[test]
    fn first_non_finite_finds_the_first_bad_entry_in_any_chunk() {
        let n = 3 * super::FINITE_CHUNK + 17;
        let mut v = vec![1.0f64; n];
        assert_eq!(first_non_finite(&v), None);
        assert_eq!(first_non_finite::<f32>(&[]), None);
        v[n - 1] = f64::NEG_INFINITY;
        assert_eq!(first_non_finite(&v), Some(n - 1));
        v[super::FINITE_CHUNK + 5] = f64::NAN;
        assert_eq!(first_non_finite(&v), Some(super::FINITE_CHUNK + 5));
        v[3] = f64::INFINITY;
        assert_eq!(first_non_finite(&v), Some(3));
        let w = [0.0f32, f32::NAN];
        assert_eq!(first_non_finite(&w), Some(1));
    }
}
