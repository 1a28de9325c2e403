//! Typed two-stage reductions.
//!
//! The first stage of an inner product writes one partial sum per work-group into a *slot* of a
//! shared [`Partials`] buffer. All reductions of one solver iteration share one buffer, so they
//! are finished together with a single device-to-host transfer ([`VectorOps::finish`]).
//! Slots are named by the solver ([`Slot`] constants), never by offsets in comments.
//!
//! Determinism: the number of groups is a function of the vector length and the device only, and
//! every finish sums the partials of a slot in one fixed order (`FINISH_LANES`), so the same input gives
//! the same sums bit for bit.
//!
//! [`VectorOps::finish`]: crate::backend::VectorOps::finish

use super::buffer::Buffer;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A named slot of a [`Partials`] buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slot(pub usize);

/// First-stage partial sums: `slots` slots of `groups` values each, slot `s` occupying
/// `buffer[s * groups .. (s + 1) * groups]`.
#[derive(Debug)]
pub struct Partials<T> {
    pub(crate) buffer: Buffer<T>,
    groups: usize,
    slots: usize,
    n: usize,
}

impl<T: Scalar> Partials<T> {
    /// Wrap a buffer (backend implementations only).
    pub(crate) fn from_buffer(buffer: Buffer<T>, n: usize, groups: usize, slots: usize) -> Self {
        Self {
            buffer,
            groups,
            slots,
            n,
        }
    }
    /// Partials per slot (work-groups of the first stage).
    pub fn groups(&self) -> usize {
        self.groups
    }
    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }
    /// Vector length the partials were planned for.
    pub fn n(&self) -> usize {
        self.n
    }
    /// The underlying buffer.
    pub fn buffer(&self) -> &Buffer<T> {
        &self.buffer
    }
    /// The underlying buffer, writable (host references of kernels that write partials).
    pub(crate) fn buffer_mut(&mut self) -> &mut Buffer<T> {
        &mut self.buffer
    }
    /// Check a slot index and the vector length.
    pub(crate) fn check(&self, slot: Slot, n: usize) -> Result<()> {
        if slot.0 >= self.slots {
            return Err(Error::param(
                "slot",
                format!("slot {} out of range ({} slots)", slot.0, self.slots),
            ));
        }
        if n != self.n {
            return Err(Error::dims("vector length vs partials plan", self.n, n));
        }
        Ok(())
    }
}

/// Finished sums, one per slot, in f64.
#[derive(Debug, Clone, PartialEq)]
pub struct Sums(pub Vec<f64>);

impl Sums {
    /// The sum of a slot.
    pub fn get(&self, slot: Slot) -> f64 {
        self.0.get(slot.0).copied().unwrap_or(f64::NAN)
    }
    /// True when every sum is finite.
    pub fn all_finite(&self) -> bool {
        self.0.iter().all(|v| v.is_finite())
    }
}

/// Lanes of the finish order: the partials of a slot are dealt to [`FINISH_LANES`] lanes (group
/// g to lane g mod 32, each lane adding its groups in group order from 0), then the lanes are
/// added pairwise (lane l += lane l + h for h = 16, 8, 4, 2, 1). A warp of the device finishes a
/// slot in 8 + 5 dependent additions at 255 groups instead of 255; the host follows the same
/// order, so both give the same bits.
pub(crate) const FINISH_LANES: usize = 32;

/// The finish of one slot in f64 in the finish order (see [`FINISH_LANES`]); `partial(g)` is the
/// partial of group g.
fn finish_in_lanes(groups: usize, partial: impl Fn(usize) -> f64) -> f64 {
    let mut lanes = [0.0f64; FINISH_LANES];
    for g in 0..groups {
        lanes[g % FINISH_LANES] += partial(g);
    }
    let mut half = FINISH_LANES / 2;
    while half > 0 {
        for l in 0..half {
            lanes[l] += lanes[l + half];
        }
        half /= 2;
    }
    lanes[0]
}

/// Sum the partials of every slot in f64 in the finish order (the second stage, on the host;
/// the device kernels that finish sums themselves follow the same order).
pub(crate) fn sum_slots<T: Scalar>(data: &[T], groups: usize, slots: usize) -> Sums {
    Sums(
        (0..slots)
            .map(|s| sum_slot_f64(data, groups, Slot(s)))
            .collect(),
    )
}

/// Sum one slot in f64 in the finish order, as [`sum_slots`] (the host's finish) does.
pub(crate) fn sum_slot_f64<T: Scalar>(data: &[T], groups: usize, slot: Slot) -> f64 {
    let partials = &data[slot.0 * groups..(slot.0 + 1) * groups];
    finish_in_lanes(groups, |g| partials[g].to_f64())
}

/// BiCGStab's alpha = <r, r0*> / <Ap, r0*> from the partials exactly as the host computes it for
/// the x update (f64 sums in the finish order, f64 division, rounded once to T), so that s and x use
/// the same alpha.
pub(crate) fn bicgstab_alpha<T: Scalar>(data: &[T], groups: usize, rr0: Slot, apr0: Slot) -> T {
    T::from_f64(sum_slot_f64(data, groups, rr0) / sum_slot_f64(data, groups, apr0))
}

/// Sum one slot sequentially in the scalar type, as a device work-group does when it needs a
/// finished value inside a kernel (BiCGStab's alpha, GMRES's R column).
pub(crate) fn sum_slot_in_kernel<T: Scalar>(data: &[T], groups: usize, slot: Slot) -> T {
    data[slot.0 * groups..(slot.0 + 1) * groups]
        .iter()
        .fold(T::zero(), |acc, &v| acc + v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_sums_follow_the_finish_order() {
        // Values of very different sizes, so that another order of the additions would round
        // differently; group counts below, at and above the lanes, and not multiples of them.
        for groups in [1usize, 5, 31, 32, 33, 37, 64, 255, 1000] {
            let slots = 5;
            let data: Vec<f64> = (0..groups * slots)
                .map(|i| {
                    let x = (i as f64 * 0.618_033_988_75).fract() - 0.5;
                    x * 10f64.powi((i % 17) as i32 - 8)
                })
                .collect();
            let sums = sum_slots(&data, groups, slots);
            for s in 0..slots {
                let slot = &data[s * groups..(s + 1) * groups];
                // The order written out: lane sums in group order, then the pairwise tree.
                let mut lanes: Vec<f64> = (0..FINISH_LANES)
                    .map(|l| {
                        slot.iter()
                            .skip(l)
                            .step_by(FINISH_LANES)
                            .fold(0.0, |a, v| a + v)
                    })
                    .collect();
                for half in [16, 8, 4, 2, 1] {
                    for l in 0..half {
                        lanes[l] += lanes[l + half];
                    }
                }
                assert_eq!(
                    sums.get(Slot(s)).to_bits(),
                    lanes[0].to_bits(),
                    "groups {groups}, slot {s}"
                );
                let close = slot.iter().sum::<f64>();
                assert!(
                    (sums.get(Slot(s)) - close).abs()
                        <= 1e-12 * slot.iter().map(|v| v.abs()).sum::<f64>()
                );
            }
        }
    }
}
