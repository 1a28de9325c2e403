//! The memory-traffic floor: bytes that must move per iteration, per solver and format.
//!
//! Model (double precision S = 8 bytes, or 4 for f32; indices I = 4 bytes):
//! - one SpMV in CSR reads the values and column indices (nnz (S + I)), the row pointers
//!   ((n + 1) I), the input vector once (n S, perfect cache reuse assumed) and writes the output
//!   (n S): `spmv = nnz (S + I) + n (I + 2 S)`. SELL/ELL count their padded entries instead of
//!   nnz and add the permutation and row lengths (2 n I); BSR counts s^2 S per block plus one
//!   index per block.
//! - Pipelined CG (Alg. 2), per iteration: `cg_update` reads x, r, p, Ap and writes x, r, p
//!   (7 n S); `spmv_dots` is one SpMV (its dots reuse p and Ap in registers/cache).
//!   Total: spmv + 7 n S. For CSR f64: 12 nnz + 76 n bytes, the anchors' formula.
//! - Pipelined BiCGStab (Alg. 4): two SpMVs; the s-update reads r, Ap and writes s (3 n S); the
//!   second SpMV's dots re-read s and r0* (2 n S); the first's re-read r0* (n S); the update
//!   reads x, r(not: s), p, s, Ap, As, r0* and writes x, r, p (10 n S, counting r0* for the
//!   <r, r0*> partial). Total: 2 spmv + 16 n S.
//! - Pipelined GMRES(m), classical Gram-Schmidt, averaged over a cycle: step i reads v_1..v_i
//!   for the batched dots (i n S on average (m+1)/2), again for the update (i n S + n S write),
//!   normalizes (2 n S) and reads v_0 for xi (n S), plus one SpMV writing v_i. Averaged:
//!   spmv + ((m + 1) + 4) n S, plus the per-cycle x update ((m + 2) n S / m).
//! - Classical variants move more (every BLAS call re-reads its vectors); their floor is still
//!   reported against the pipelined model so the ratio shows the cost of not fusing.
//!
//! The floor of every format is the CSR one (one yardstick: a format that moves fewer bytes can
//! run below it). What the kernel that runs actually moves ([`moved_spmv_bytes`]: padding,
//! block fill, permutations, row blocks, 16-bit column offsets) gives the achieved bandwidth.

use crate::backend::{DeviceFormat, DeviceMatrix, MatrixFormat};
use crate::scalar::Scalar;

/// Bytes one SpMV must move.
pub fn spmv_bytes(format: MatrixFormat, n: usize, nnz: usize, stored: usize, scalar: usize) -> f64 {
    let (n, nnz, stored, s) = (n as f64, nnz as f64, stored as f64, scalar as f64);
    let i = 4.0;
    match format {
        MatrixFormat::Csr => nnz * (s + i) + n * (i + 2.0 * s),
        MatrixFormat::Sell { .. } | MatrixFormat::Ell => stored * (s + i) + n * (2.0 * i + 2.0 * s),
        MatrixFormat::Bsr { block_size } => {
            let bs = block_size as f64;
            stored * s + stored / (bs * bs) * i + n / bs * i + 2.0 * n * s
        }
    }
}

/// Bytes one product with the device layout of `m` moves (`nnz` true nonzeros, `scalar` bytes
/// per value): CSR with the vector kernel as [`spmv_bytes`]; the stream kernel adds its block
/// rows (4 bytes per block) and, with 16-bit column offsets, reads 2 bytes per entry instead of
/// 4 plus a 4-byte base per block; SELL reads every stored (padded) entry, its permutation and
/// row lengths, with 16-bit offsets 2 bytes per entry plus a base per slice; BSR as
/// [`spmv_bytes`] with its stored (filled) entries.
pub fn moved_spmv_bytes<T: Scalar>(m: &DeviceMatrix<T>, nnz: usize, scalar: usize) -> f64 {
    let (n, s) = (m.n_rows() as f64, scalar as f64);
    let i = 4.0;
    match m.format() {
        DeviceFormat::Csr { row_blocks, .. } => {
            let base = n * (i + 2.0 * s);
            match row_blocks {
                None => nnz as f64 * (s + i) + base,
                Some(rb) => {
                    let blocks = rb.n_blocks as f64;
                    match &rb.compact {
                        Some(_) => nnz as f64 * (s + 2.0) + base + blocks * (i + 4.0),
                        None => nnz as f64 * (s + i) + base + blocks * i,
                    }
                }
            }
        }
        DeviceFormat::Sell {
            values,
            compact,
            n_slices,
            ..
        } => {
            let stored = values.len() as f64;
            let base = n * (2.0 * i + 2.0 * s);
            match compact {
                Some(_) => stored * (s + 2.0) + base + *n_slices as f64 * 4.0,
                None => stored * (s + i) + base,
            }
        }
        DeviceFormat::Bsr {
            block_size, values, ..
        } => spmv_bytes(
            MatrixFormat::Bsr {
                block_size: *block_size,
            },
            m.n_rows(),
            nnz,
            values.len(),
            scalar,
        ),
    }
}

/// Bytes per iteration of the pipelined solver `solver` ("cg", "bicgstab", "gmres" with DCGS2,
/// "gmres-cgs2", "gmres-simpler" with one CGS pass). Step i of a GMRES cycle reads about 2i basis vectors per
/// Gram-Schmidt pass (dots, then the subtraction); averaged over a cycle of m steps one pass
/// costs about m + 5 vectors (SpMV output, normalization and the v_0 read included), and the
/// second CGS2 pass adds m + 4 (its dots and subtraction re-read v_1..v_{i-1} and v_i).
pub fn iteration_bytes(solver: &str, restart: usize, spmv: f64, n: usize, scalar: usize) -> f64 {
    let vec = n as f64 * scalar as f64;
    match solver {
        "cg" => spmv + 7.0 * vec,
        "bicgstab" => 2.0 * spmv + 16.0 * vec,
        "gmres-simpler" => {
            let m = restart.max(1) as f64;
            spmv + (m + 5.0) * vec + (m + 2.0) * vec / m
        }
        "gmres-cgs2" => {
            let m = restart.max(1) as f64;
            spmv + (2.0 * m + 9.0) * vec + (m + 2.0) * vec / m
        }
        // DCGS2 (the default): two passes over the basis per step, as the simpler form (the
        // two-target dots and the fused update); u and w read by the dots and read and written
        // by the update.
        _ => {
            let m = restart.max(1) as f64;
            spmv + (m + 7.0) * vec + (m + 2.0) * vec / m
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cg_csr_f64_matches_the_anchor_formula() {
        // 12 nnz + 76 n bytes (the H200 anchor measurements in bench/log/): n = 4190209, nnz = 20942857 -> 570 MB.
        let (n, nnz) = (4_190_209usize, 20_942_857usize);
        let b = iteration_bytes(
            "cg",
            30,
            spmv_bytes(MatrixFormat::Csr, n, nnz, nnz, 8),
            n,
            8,
        );
        let expect = 12.0 * nnz as f64 + 76.0 * n as f64 + 4.0;
        assert!((b - expect).abs() < 8.0 * n as f64, "{b} vs {expect}");
        assert!((b / 1e6 - 570.0).abs() < 1.0, "{}", b / 1e6);
    }

    #[test]
    fn moved_bytes_follow_the_device_layout() {
        use crate::backend::host::HostBackend;
        use crate::backend::SpmvOps;
        use crate::matrix::generate::Generator;
        let a = Generator::Poisson2d.generate::<f64>(900).unwrap().matrix;
        let (n, nnz) = (a.n_rows(), a.nnz());
        let be = HostBackend::new();
        let csr = be.upload_matrix(&a, MatrixFormat::Csr).unwrap();
        assert_eq!(
            moved_spmv_bytes(&csr, nnz, 8),
            spmv_bytes(MatrixFormat::Csr, n, nnz, nnz, 8)
        );
        // SELL moves its padded entries, permutation and row lengths: more than CSR here
        // (the boundary rows are shorter).
        let sell = be
            .upload_matrix(&a, MatrixFormat::Sell { c: 32, sigma: 1 })
            .unwrap();
        let stored = match sell.format() {
            DeviceFormat::Sell { values, .. } => values.len(),
            _ => unreachable!("uploaded as SELL"),
        };
        assert!(stored > nnz);
        assert_eq!(
            moved_spmv_bytes(&sell, nnz, 8),
            spmv_bytes(MatrixFormat::Sell { c: 32, sigma: 1 }, n, nnz, stored, 8)
        );
    }

    #[test]
    fn small_matrix_counts_every_array() {
        // 3 x 3 with 5 entries, f64: values 40 + cols 20 + row_ptr 16 (n+1=4 -> model uses n I
        // for the pointers) + x 24 + y 24.
        let b = spmv_bytes(MatrixFormat::Csr, 3, 5, 5, 8);
        assert_eq!(b, 5.0 * 12.0 + 3.0 * 20.0);
        // GMRES(1): spmv + (1 + 5) n S + 3 n S.
        let g = iteration_bytes("gmres-simpler", 1, b, 3, 8);
        assert_eq!(g, b + 6.0 * 24.0 + 3.0 * 24.0);
        // CGS2 GMRES(1): spmv + (2 + 9) n S + 3 n S; DCGS2 (the default): (1 + 7) n S.
        let g2 = iteration_bytes("gmres-cgs2", 1, b, 3, 8);
        assert_eq!(g2, b + 11.0 * 24.0 + 3.0 * 24.0);
        let g3 = iteration_bytes("gmres", 1, b, 3, 8);
        assert_eq!(g3, b + 8.0 * 24.0 + 3.0 * 24.0);
        // BiCGStab: two SpMVs.
        assert_eq!(
            iteration_bytes("bicgstab", 30, b, 3, 8),
            2.0 * b + 16.0 * 24.0
        );
    }
}
