//! Small dense `s x s` blocks, column-major (entry (i, j) at `j * s + i`, as in
//! [`crate::matrix::BsrMatrix`]): the arithmetic of the block preconditioners' host setup.

use crate::scalar::Scalar;

/// Why a block could not be inverted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SingularBlock {
    /// A pivot was zero or tiny relative to the block's largest entry (column of the pivot).
    Pivot { column: usize, pivot: f64 },
    /// The block holds a NaN or an infinity.
    NonFinite,
}

/// The inverse of `a` (s x s, s <= 8) in the first s * s entries of the result, on the stack,
/// by Gauss-Jordan elimination with partial pivoting. A pivot whose magnitude is at most
/// `s * eps * max|a_ij|` (or zero) makes the block singular.
pub(crate) fn invert<T: Scalar>(a: &[T], s: usize) -> Result<[T; 64], SingularBlock> {
    debug_assert!(a.len() == s * s && s <= 8);
    if a.iter().any(|v| !v.is_finite()) {
        return Err(SingularBlock::NonFinite);
    }
    let scale = a.iter().map(|v| v.to_f64().abs()).fold(0.0, f64::max);
    let tiny = scale * s as f64 * T::EPSILON.to_f64();
    let mut m = [T::zero(); 64];
    m[..s * s].copy_from_slice(a);
    let mut inv = [T::zero(); 64];
    for i in 0..s {
        inv[i * s + i] = T::one();
    }
    for col in 0..s {
        // Partial pivoting: the largest magnitude at or below the diagonal.
        let mut p = col;
        for r in col + 1..s {
            if m[col * s + r].abs() > m[col * s + p].abs() {
                p = r;
            }
        }
        let pivot = m[col * s + p];
        if pivot == T::zero() || pivot.to_f64().abs() <= tiny {
            return Err(SingularBlock::Pivot {
                column: col,
                pivot: pivot.to_f64(),
            });
        }
        if p != col {
            for j in 0..s {
                m.swap(j * s + p, j * s + col);
                inv.swap(j * s + p, j * s + col);
            }
        }
        let pinv = T::one() / pivot;
        for j in 0..s {
            m[j * s + col] *= pinv;
            inv[j * s + col] *= pinv;
        }
        for r in 0..s {
            if r == col {
                continue;
            }
            let f = m[col * s + r];
            if f == T::zero() {
                continue;
            }
            for j in 0..s {
                let (mc, ic) = (m[j * s + col], inv[j * s + col]);
                m[j * s + r] -= f * mc;
                inv[j * s + r] -= f * ic;
            }
        }
    }
    Ok(inv)
}

/// c = a b (all s x s, s <= 8), on the stack.
pub(crate) fn mul<T: Scalar>(a: &[T], b: &[T], s: usize) -> [T; 64] {
    let mut c = [T::zero(); 64];
    for j in 0..s {
        for k in 0..s {
            let bkj = b[j * s + k];
            for i in 0..s {
                c[j * s + i] += a[k * s + i] * bkj;
            }
        }
    }
    c
}

/// c -= a b (all s x s).
pub(crate) fn mul_sub<T: Scalar>(c: &mut [T], a: &[T], b: &[T], s: usize) {
    for j in 0..s {
        for k in 0..s {
            let bkj = b[j * s + k];
            for i in 0..s {
                c[j * s + i] -= a[k * s + i] * bkj;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_times_block_is_identity() {
        let s = 3;
        // Needs pivoting: a zero in the (0, 0) position.
        let a = [0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.5, 4.0];
        let inv = invert(&a, s).unwrap();
        let id = mul(&a, &inv, s);
        for i in 0..s {
            for j in 0..s {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((id[j * s + i] - want).abs() < 1e-14, "{id:?}");
            }
        }
    }

    #[test]
    fn singular_and_non_finite_blocks_are_reported() {
        assert!(matches!(
            invert(&[1.0, 2.0, 2.0, 4.0], 2),
            Err(SingularBlock::Pivot { column: 1, .. })
        ));
        assert_eq!(invert(&[f64::NAN], 1).err(), Some(SingularBlock::NonFinite));
        assert!(invert(&[0.0f32], 1).is_err());
    }
}
