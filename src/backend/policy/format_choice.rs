//! The `auto` device format (issue 16): a format chosen from the matrix's row-length statistics
//! and block structure for the backend it goes to, with the reason (for the JSON report and the
//! bench CSV). The rules follow measurements on the H200 (the log `bench/log/`, "The SpMV alone
//! against cuSPARSE" and "Automatic format choice"; CG iterations at n = 0.3-1M):
//!
//! * not a GPU (host backend, OpenCL CPU devices): CSR, the format their kernels are written for;
//! * long rows (the CSR kernel's long-row split applies: power-law and circuit-like matrices):
//!   CSR; SELL pads every slice to its longest row (29-350x the floor there);
//! * rows of nearly equal length (SELL-32-256 stores at most [`SELL_MAX_PADDING`] times the
//!   nonzeros) with at least [`SELL_MIN_MEAN_ROW`] entries on average: SELL-32-256 (stencil27:
//!   0.85x CSR's CG iteration on CUDA, 0.70x on OpenCL; elasticity3d 0.98x / 0.88x). Short rows
//!   stay CSR: 2D Poisson's CG iteration is 1.07x slower in SELL on CUDA, 1.04x on OpenCL;
//! * dense square blocks (BSR fill at least [`BSR_MIN_FILL`] for a block size of 2 to 6 that
//!   divides n): BSR (elasticity3d, 3x3 blocks: 0.81x CSR's SpMV time on CUDA, 0.88x on OpenCL);
//! * short rows of nearly equal length on an OpenCL GPU from [`SELL_OPENCL_MIN_ROWS`] rows:
//!   SELL-32-256 (2D/3D Poisson at n = 1-4.2M on NVIDIA OpenCL, an H100: SpMV 0.69-0.91x
//!   CSR's time, CG 0.88-0.99x, BiCGStab 0.92-0.93x, GMRES(30) 0.95-1.01x; below, at 0.26M and
//!   less, CG and BiCGStab ran 1.1-1.7x slower in SELL, whose device-resident iterations have no
//!   fused one-kernel form; the log `bench/log/`, "Short rows on NVIDIA OpenCL");
//! * otherwise CSR.

use crate::backend::matrix::MatrixFormat;
use crate::backend::BackendInfo;
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;
use rayon::prelude::*;

/// Smallest fraction of stored block entries that are nonzeros for BSR to be chosen.
pub const BSR_MIN_FILL: f64 = 0.9;
/// Largest SELL-32-256 storage (padded entries over nonzeros) for SELL to be chosen.
pub const SELL_MAX_PADDING: f64 = 1.15;
/// Smallest mean row length for which SELL is chosen.
pub const SELL_MIN_MEAN_ROW: f64 = 16.0;
/// Fewest rows for which an OpenCL GPU takes SELL for short rows (mean below
/// [`SELL_MIN_MEAN_ROW`]).
pub const SELL_OPENCL_MIN_ROWS: usize = 1_000_000;

/// The `auto` format's choice for one matrix and backend.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatChoice {
    /// The format to upload with.
    pub format: MatrixFormat,
    /// Why, in a few words (with the statistics that decided).
    pub reason: String,
}

/// A device format as the user asks for it: `auto` (chosen per matrix and backend by
/// [`choose_format`]) or a fixed one. Parses `auto` or any [`MatrixFormat`] spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormatRequest {
    /// [`choose_format`].
    #[default]
    Auto,
    /// This format.
    Fixed(MatrixFormat),
}

impl std::str::FromStr for FormatRequest {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            _ => s.parse().map(Self::Fixed),
        }
    }
}

impl std::fmt::Display for FormatRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Auto => write!(f, "auto"),
            Self::Fixed(m) => write!(f, "{m}"),
        }
    }
}

impl FormatRequest {
    /// The format for `a` on `backend`: the fixed one, or [`choose_format`]'s.
    pub fn resolve<T: Scalar, B: BackendInfo + ?Sized>(
        &self,
        a: &CsrMatrix<T>,
        backend: &B,
    ) -> FormatChoice {
        match self {
            Self::Auto => choose_format(a, backend),
            Self::Fixed(format) => FormatChoice {
                format: *format,
                reason: "given".into(),
            },
        }
    }
}

impl FormatRequest {
    /// [`FormatRequest::resolve`], except that an automatic choice of another format becomes
    /// CSR, for the reason `why` (e.g. a preconditioner whose setup reads the operator's CSR
    /// copy); a given format is kept.
    pub fn resolve_keeping_csr<T: Scalar, B: BackendInfo + ?Sized>(
        &self,
        a: &CsrMatrix<T>,
        backend: &B,
        why: &str,
    ) -> FormatChoice {
        let chosen = self.resolve(a, backend);
        if matches!(self, Self::Auto) && chosen.format != MatrixFormat::Csr {
            return FormatChoice {
                format: MatrixFormat::Csr,
                reason: format!(
                    "CSR: {why} (automatic choice {}: {})",
                    chosen.format, chosen.reason
                ),
            };
        }
        chosen
    }
}

/// Choose the device format of `a` for `backend` (see the module documentation).
pub fn choose_format<T: Scalar, B: BackendInfo + ?Sized>(
    a: &CsrMatrix<T>,
    backend: &B,
) -> FormatChoice {
    let csr = |reason: String| FormatChoice {
        format: MatrixFormat::Csr,
        reason,
    };
    if !backend.is_gpu() {
        return csr("not a GPU: CSR".into());
    }
    let n = a.n_rows();
    let nnz = a.nnz();
    if n == 0 || nnz == 0 {
        return csr("empty matrix: CSR".into());
    }
    let rp = a.row_ptr();
    let mean = nnz as f64 / n as f64;
    let max_len = rp.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    let long_min =
        ((nnz / n) * super::long_rows::LONG_ROW_FACTOR).max(super::long_rows::LONG_ROW_MIN);
    if max_len > long_min {
        return csr(format!(
            "long rows (longest {max_len}, mean {mean:.1}): CSR with the long-row split"
        ));
    }
    let padding = sell_padding(rp, 32, 256) as f64 / nnz as f64;
    if padding <= SELL_MAX_PADDING && mean >= SELL_MIN_MEAN_ROW {
        return FormatChoice {
            format: MatrixFormat::Sell { c: 32, sigma: 256 },
            reason: format!(
                "rows of nearly equal length, mean {mean:.1} (SELL stores {padding:.2}x nnz): SELL"
            ),
        };
    }
    if let Some((s, fill)) = best_block(a) {
        return FormatChoice {
            format: MatrixFormat::Bsr { block_size: s },
            reason: format!("dense {s}x{s} blocks (fill {fill:.2}): BSR"),
        };
    }
    if backend.name() == "opencl" && n >= SELL_OPENCL_MIN_ROWS && padding <= SELL_MAX_PADDING {
        return FormatChoice {
            format: MatrixFormat::Sell { c: 32, sigma: 256 },
            reason: format!(
                "short rows of nearly equal length, mean {mean:.1}, {n} rows on OpenCL (SELL \
                 stores {padding:.2}x nnz): SELL"
            ),
        };
    }
    csr(format!(
        "row lengths mean {mean:.1}, longest {max_len}, SELL would store {padding:.2}x nnz: CSR"
    ))
}

/// The largest block size of 2..=6 dividing n whose BSR fill is at least [`BSR_MIN_FILL`].
fn best_block<T: Scalar>(a: &CsrMatrix<T>) -> Option<(usize, f64)> {
    let n = a.n_rows();
    if a.n_cols() != n {
        return None;
    }
    let mean = a.nnz() as f64 / n as f64;
    (2..=6usize)
        .rev()
        .filter(|&s| n % s == 0 && mean >= s as f64)
        .map(|s| (s, a.nnz() as f64 / (blocks(a, s) * s * s) as f64))
        .find(|&(_, fill)| fill >= BSR_MIN_FILL)
}

/// The number of nonzero s x s blocks of `a` (n a multiple of s).
fn blocks<T: Scalar>(a: &CsrMatrix<T>, s: usize) -> usize {
    let rp = a.row_ptr();
    let ci = a.col_idx();
    (0..a.n_rows() / s)
        .into_par_iter()
        .map(|br| {
            let mut cols: Vec<usize> = ci[rp[br * s]..rp[(br + 1) * s]]
                .iter()
                .map(|&c| c / s)
                .collect();
            cols.sort_unstable();
            cols.dedup();
            cols.len()
        })
        .sum()
}

/// Entries SELL-C-sigma stores for these rows: rows sorted by length (descending) within
/// windows of `sigma`, each slice of `c` padded to its longest row.
fn sell_padding(row_ptr: &[usize], c: usize, sigma: usize) -> usize {
    let lens: Vec<usize> = row_ptr.windows(2).map(|w| w[1] - w[0]).collect();
    lens.par_chunks(sigma.max(c))
        .map(|window| {
            let mut w = window.to_vec();
            w.sort_unstable_by(|x, y| y.cmp(x));
            w.chunks(c).map(|slice| slice[0] * c).sum::<usize>()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generate::Generator;

    struct Gpu(&'static str);
    impl BackendInfo for Gpu {
        fn name(&self) -> &'static str {
            self.0
        }
        fn device_name(&self) -> String {
            "test".into()
        }
        fn is_gpu(&self) -> bool {
            true
        }
    }

    fn chosen(g: Generator, n: usize, backend: &'static str) -> MatrixFormat {
        let a = g.generate::<f64>(n).unwrap().matrix;
        choose_format(&a, &Gpu(backend)).format
    }

    #[test]
    fn keeping_csr_overrides_only_an_automatic_choice() {
        let a = Generator::Stencil27.generate::<f64>(30_000).unwrap().matrix;
        let gpu = Gpu("cuda");
        let sell = MatrixFormat::Sell { c: 32, sigma: 256 };
        assert_eq!(FormatRequest::Auto.resolve(&a, &gpu).format, sell);
        let kept = FormatRequest::Auto.resolve_keeping_csr(&a, &gpu, "setup reads CSR");
        assert_eq!(kept.format, MatrixFormat::Csr);
        assert!(kept.reason.contains("setup reads CSR"), "{}", kept.reason);
        let given = FormatRequest::Fixed(sell).resolve_keeping_csr(&a, &gpu, "setup reads CSR");
        assert_eq!(given.format, sell);
    }

    #[test]
    fn the_measured_cases_get_their_fastest_format() {
        let sell = MatrixFormat::Sell { c: 32, sigma: 256 };
        assert_eq!(chosen(Generator::Stencil27, 30_000, "cuda"), sell);
        assert_eq!(chosen(Generator::Stencil27, 30_000, "opencl"), sell);
        assert_eq!(
            chosen(Generator::Poisson3d, 30_000, "cuda"),
            MatrixFormat::Csr
        );
        assert_eq!(
            chosen(Generator::Poisson2d, 30_000, "opencl"),
            MatrixFormat::Csr
        );
        assert_eq!(chosen(Generator::Elasticity3d, 30_000, "cuda"), sell);
        assert_eq!(chosen(Generator::Elasticity3d, 30_000, "opencl"), sell);
        assert_eq!(
            chosen(Generator::Powerlaw, 30_000, "cuda"),
            MatrixFormat::Csr
        );
        assert_eq!(
            chosen(Generator::Circuit, 30_000, "cuda"),
            MatrixFormat::Csr
        );
        // Short rows: SELL on OpenCL from a million rows, CSR below and on CUDA.
        assert_eq!(chosen(Generator::Poisson2d, 1_100_000, "opencl"), sell);
        assert_eq!(chosen(Generator::Poisson3d, 1_100_000, "opencl"), sell);
        assert_eq!(
            chosen(Generator::Poisson2d, 1_100_000, "cuda"),
            MatrixFormat::Csr
        );
        assert_eq!(
            chosen(Generator::Poisson2d, 900_000, "opencl"),
            MatrixFormat::Csr
        );
        assert_eq!(
            chosen(Generator::Powerlaw, 1_100_000, "opencl"),
            MatrixFormat::Csr
        );
        let host = crate::backend::host::HostBackend::new();
        let a = Generator::Stencil27.generate::<f64>(30_000).unwrap().matrix;
        assert_eq!(choose_format(&a, &host).format, MatrixFormat::Csr);
    }

    #[test]
    fn dense_blocks_with_short_rows_get_bsr() {
        // Dense 4 x 4 diagonal blocks: 4 entries per row (too short for SELL), fill 1.
        let t: Vec<(usize, usize, f64)> = (0..1000)
            .flat_map(|b| (0..16).map(move |k| (4 * b + k / 4, 4 * b + k % 4, 1.0 + k as f64)))
            .collect();
        let a = CsrMatrix::from_triplets(4000, 4000, &t).unwrap();
        let c = choose_format(&a, &Gpu("cuda"));
        assert_eq!(
            c.format,
            MatrixFormat::Bsr { block_size: 4 },
            "{}",
            c.reason
        );
        // One entry per row in a second block of its block row: fill 20 / 32 < 0.9, CSR.
        let mut t2 = t.clone();
        t2.extend((0..4000).map(|r| (r, (r + 8) % 4000, 0.5)));
        let a = CsrMatrix::from_triplets(4000, 4000, &t2).unwrap();
        assert_eq!(choose_format(&a, &Gpu("cuda")).format, MatrixFormat::Csr);
    }

    #[test]
    fn requests_parse_and_resolve() {
        let a = Generator::Stencil27.generate::<f64>(1000).unwrap().matrix;
        let auto: FormatRequest = "auto".parse().unwrap();
        assert_eq!(auto, FormatRequest::Auto);
        assert_eq!(
            auto.resolve(&a, &Gpu("cuda")).format,
            MatrixFormat::Sell { c: 32, sigma: 256 }
        );
        let csr: FormatRequest = "csr".parse().unwrap();
        assert_eq!(csr.resolve(&a, &Gpu("cuda")).format, MatrixFormat::Csr);
        assert_eq!(csr.to_string(), "csr");
        assert!("nope".parse::<FormatRequest>().is_err());
    }

    #[test]
    fn sell_padding_counts_slices() {
        // Rows of lengths 1, 3 in one slice of 2: 2 x 3 stored.
        assert_eq!(sell_padding(&[0, 1, 4], 2, 2), 6);
        // Sorting within the window pairs the long rows: lengths 3, 1, 3, 1 -> (3, 3), (1, 1).
        assert_eq!(sell_padding(&[0, 3, 4, 7, 8], 2, 4), 8);
    }
}
