//! The fingerprints of a CSR matrix (FNV-1a hashes of its shape, pattern and values), computed
//! once per matrix and kept until its values change: setup paths compare them several times
//! (the solver, the preconditioner, a values refresh), and each is a pass over every index
//! and value.

use super::csr_check::CsrIndex;
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::sync::OnceLock;

/// The cached fingerprints of one matrix. Two caches always compare equal (they are derived
/// from the matrix, not part of its value), and a clone keeps what was computed.
#[derive(Default, Clone)]
pub(crate) struct FingerprintCache {
    /// Shape and pattern (row pointers and column indices).
    pub(crate) pattern: OnceLock<u64>,
    /// Shape, pattern and value bits.
    pub(crate) full: OnceLock<u64>,
}

impl FingerprintCache {
    /// The hash of the shape and pattern, computed at the first call (the same for both index
    /// widths: indices are hashed as numbers).
    pub(crate) fn pattern_hash<I: CsrIndex>(
        &self,
        n_rows: usize,
        n_cols: usize,
        row_ptr: &[I],
        col_idx: &[I],
    ) -> u64 {
        *self.pattern.get_or_init(|| {
            let hash_rows = || chunk_hashes(row_ptr, |&p| p.at() as u64);
            let hash_cols = || chunk_hashes(col_idx, |&c| c.at() as u64);
            let (rp, ci) = match col_idx.len() > 1 << 16 {
                true => rayon::join(hash_rows, hash_cols),
                false => (hash_rows(), hash_cols()),
            };
            fnv1a(
                [n_rows as u64, n_cols as u64]
                    .into_iter()
                    .chain(rp)
                    .chain(ci),
            )
        })
    }

    /// The hash of the shape, pattern (`pattern`, the pattern hash) and value bits, computed at
    /// the first call.
    pub(crate) fn full_hash<T: Scalar>(&self, pattern: impl FnOnce() -> u64, values: &[T]) -> u64 {
        *self.full.get_or_init(|| {
            let values = chunk_hashes(values, |v| v.to_f64().to_bits());
            fnv1a_from(pattern(), values)
        })
    }

    /// Forget the fingerprint with values (the values are about to change; the pattern is not).
    pub(crate) fn values_changed(&mut self) {
        self.full = OnceLock::new();
    }
}

impl PartialEq for FingerprintCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for FingerprintCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FingerprintCache")
    }
}

/// 64-bit FNV-1a over `words`, continuing from the hash `state`.
pub(crate) fn fnv1a_from(state: u64, words: impl IntoIterator<Item = u64>) -> u64 {
    words
        .into_iter()
        .fold(state, |h, w| (h ^ w).wrapping_mul(0x0000_0100_0000_01b3))
}

/// 64-bit FNV-1a over `words`: the hash of matrix fingerprints and of the values MPI ranks
/// compare.
pub(crate) fn fnv1a(words: impl IntoIterator<Item = u64>) -> u64 {
    fnv1a_from(0xcbf2_9ce4_8422_2325, words)
}

/// [`lanes_hash`] of each fixed chunk of 2^16 words of `items` (in parallel; the chunking does
/// not depend on the thread count, so the hashes are deterministic).
fn chunk_hashes<X: Sync>(items: &[X], word: impl Fn(&X) -> u64 + Sync) -> Vec<u64> {
    const CHUNK: usize = 1 << 16;
    if items.len() <= CHUNK {
        // One chunk (or none): the same hash without waking the thread pool.
        return items.chunks(CHUNK).map(|c| lanes_hash(c, &word)).collect();
    }
    items
        .par_chunks(CHUNK)
        .map(|c| lanes_hash(c, &word))
        .collect()
}

/// FNV-1a of `items`' words in four interleaved chains (word 4 i + j into chain j, the last
/// words into the first chains), the four then hashed together: every word still changes the
/// result, at about four times the speed of one chain (the chains' multiplications overlap).
/// Each word's high half is folded into its low half first: a multiplication carries only
/// upwards, so a change in a word's top bit alone (a value's sign) would reach nothing but the
/// hash's top bit, and two of them would cancel.
pub(crate) fn lanes_hash<X>(items: &[X], word: impl Fn(&X) -> u64) -> u64 {
    let mut lanes = [0xcbf2_9ce4_8422_2325u64; 4];
    let step = |h: u64, w: u64| (h ^ w ^ (w >> 32)).wrapping_mul(0x0000_0100_0000_01b3);
    let mut quads = items.chunks_exact(4);
    for q in &mut quads {
        for (lane, item) in lanes.iter_mut().zip(q) {
            *lane = step(*lane, word(item));
        }
    }
    for (lane, item) in lanes.iter_mut().zip(quads.remainder()) {
        *lane = step(*lane, word(item));
    }
    fnv1a(lanes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuing_a_hash_equals_hashing_the_concatenation() {
        let (a, b) = ([1u64, 2, 3], [4u64, 5]);
        assert_eq!(fnv1a_from(fnv1a(a), b), fnv1a(a.into_iter().chain(b)));
        assert_ne!(fnv1a(a), fnv1a([1u64, 2, 4]));
    }

    /// Every word of every lane, and the remainder's, changes the hash; so does the order.
    #[test]
    fn every_word_changes_the_lanes_hash() {
        let words: Vec<u64> = (0..11).collect();
        let base = lanes_hash(&words, |&w| w);
        for k in 0..words.len() {
            let mut changed = words.clone();
            changed[k] += 100;
            assert_ne!(lanes_hash(&changed, |&w| w), base, "word {k}");
        }
        let mut swapped = words.clone();
        swapped.swap(0, 1);
        assert_ne!(lanes_hash(&swapped, |&w| w), base);
        assert_ne!(lanes_hash(&words[..10], |&w| w), base);
        // Two values of opposite sign (only their top bits change) still change the hash.
        let values = [1.5f64, -2.0, 3.0, 0.25, 7.0];
        let mut negated = values;
        negated[1] = -negated[1];
        negated[3] = -negated[3];
        let bits = |v: &f64| v.to_bits();
        assert_ne!(lanes_hash(&negated, bits), lanes_hash(&values, bits));
        negated[2] = -negated[2];
        negated[4] = -negated[4];
        assert_ne!(lanes_hash(&negated, bits), lanes_hash(&values, bits));
    }
}
