//! Loading the matrix and right-hand side named on the command line.

use crate::error::{Error, Result};
use crate::matrix::generate::{parse_grid_spec, parse_spec, GridStencil};
use crate::matrix::{matrix_market, CsrMatrix};
use crate::scalar::Scalar;

/// A loaded system.
pub struct System<T> {
    /// Name for reports: the generator spec or the file name.
    pub name: String,
    /// The matrix.
    pub matrix: CsrMatrix<T>,
    /// The constant-coefficient stencil of a generated problem that has one.
    pub stencil: Option<GridStencil>,
}

/// Load `--matrix FILE` or `--generate NAME:N` / `NAME:NXxNY[xNZ]` (exactly one of them).
pub fn load_matrix<T: Scalar>(matrix: Option<&str>, generate: Option<&str>) -> Result<System<T>> {
    match (matrix, generate) {
        (Some(path), None) => {
            let m = matrix_market::read_csr::<T>(path)?;
            if !m.is_square() {
                return Err(Error::dims(
                    "matrix must be square: columns vs rows",
                    m.n_rows(),
                    m.n_cols(),
                ));
            }
            Ok(System {
                name: std::path::Path::new(path)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.to_string()),
                matrix: m,
                stencil: None,
            })
        }
        (None, Some(spec)) => {
            if let Some((g, stencil)) = parse_grid_spec(spec)? {
                return Ok(System {
                    name: g.name().to_string(),
                    matrix: stencil.matrix()?,
                    stencil: Some(stencil),
                });
            }
            let (g, n) = parse_spec(spec)?;
            let p = g.generate::<T>(n)?;
            Ok(System {
                name: p.name.clone(),
                stencil: g.grid_stencil(p.param),
                matrix: p.matrix,
            })
        }
        _ => Err(Error::param(
            "matrix",
            "give exactly one of --matrix FILE.mtx or --generate NAME:N",
        )),
    }
}

/// The right-hand side: `ones`, `a-ones` (b = A 1, so that the solution is all ones, as in
/// \[Bernaschi19\]), `random` (deterministic, seed 1) or a Matrix Market vector file.
pub fn load_rhs<T: Scalar>(spec: &str, a: &CsrMatrix<T>) -> Result<Vec<T>> {
    let n = a.n_rows();
    match spec {
        "ones" => Ok(vec![T::one(); n]),
        "a-ones" => {
            let mut b = vec![T::zero(); n];
            a.mul_vec(&vec![T::one(); a.n_cols()], &mut b)?;
            Ok(b)
        }
        "random" => {
            let mut s = 0x2545_F491_4F6C_DD1Du64;
            Ok((0..n)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    T::from_f64((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
                })
                .collect())
        }
        path => {
            let v = matrix_market::read_vector::<T>(path)?;
            if v.len() != n {
                return Err(Error::dims(
                    "right-hand side length vs matrix rows",
                    n,
                    v.len(),
                ));
            }
            Ok(v)
        }
    }
}
