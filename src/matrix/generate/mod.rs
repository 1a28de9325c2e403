//! Model-problem generators: the sparse test matrices of the benchmarks.
//!
//! Six families, each selected by a [`Generator`] and a size parameter (grid size `k`,
//! refinement level `L` or cube count `m`):
//!
//! | name           | equation                                   | discretization                          | unknowns          | symmetric |
//! |----------------|--------------------------------------------|-----------------------------------------|-------------------|-----------|
//! | `poisson2d`    | `-Δu = f` on the unit square              | 5-point finite differences, `k x k`     | `k^2`             | SPD       |
//! | `poisson3d`    | `-Δu = f` on the unit cube                | 7-point finite differences, `k^3`       | `k^3`             | SPD       |
//! | `fem2d`        | `-Δu = f` on the unit square              | P1 triangles, `2^L x 2^L` squares       | `(2^L - 1)^2`     | SPD       |
//! | `elasticity3d` | `-div σ(u) = f`, linear elasticity         | P1 tetrahedra, `m^3` cubes, x=0 clamped | `3 m (m+1)^2`     | SPD       |
//! | `convdiff3d`   | `-Δu + b·∇u = f`, `b = (100, 50, 25)`      | 7-point, upwind convection, `k^3`       | `k^3`             | no        |
//! | `aniso2d`      | `-(ε u_xx + u_yy) = f`, `ε = 1e-3`         | 5-point finite differences, `k x k`     | `k^2`             | SPD       |
//!
//! Dirichlet boundary values are eliminated, so every matrix is square and nonsingular (the
//! unknowns are the interior / free nodes only). Finite-difference matrices are scaled by `h^2`
//! (Poisson: 4 / 6 on the diagonal, -1 off it); finite-element matrices are the assembled
//! stiffness matrices. Values are computed in `f64` and converted with [`Scalar::from_f64`].
//!
//! ```
//! use pipekrylov::matrix::generate::{parse_spec, Generator};
//! let (g, n) = parse_spec("fem2d:16129").unwrap();
//! assert_eq!(g, Generator::Fem2d);
//! let p = g.generate::<f64>(n).unwrap();
//! assert_eq!(p.param, 7);
//! assert_eq!(p.matrix.n_rows(), 16129);
//! ```

mod aniso2d;
mod convdiff3d;
mod elasticity3d;
mod fem2d;
mod irregular;
mod jump3d;
mod poisson;
mod thermal2d;

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::matrix::CsrMatrix;
use crate::scalar::Scalar;

/// The largest number of unknowns a generator accepts (`2^31`).
pub const MAX_UNKNOWNS: usize = 1 << 31;

/// A model-problem family. See the [module documentation](self) for an overview.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Generator {
    /// `-Δu = f` on the unit square with homogeneous Dirichlet boundary, 5-point finite
    /// differences on a `k x k` interior grid (`h = 1/(k+1)`), scaled by `h^2`: 4 on the
    /// diagonal, -1 for the four axis neighbours. `k^2` unknowns.
    Poisson2d,
    /// `-Δu = f` on the unit cube with homogeneous Dirichlet boundary, 7-point finite
    /// differences on a `k x k x k` interior grid, scaled by `h^2`: 6 on the diagonal, -1 for
    /// the six axis neighbours. `k^3` unknowns.
    Poisson3d,
    /// `-Δu = f` on the unit square, linear (P1) finite elements on a uniform triangulation:
    /// `2^L x 2^L` squares, each cut into two triangles along its `(0,0)-(1,1)` diagonal.
    /// Element stiffness matrices `area * ∇λ_a·∇λ_b` are assembled and the Dirichlet boundary
    /// nodes eliminated; entries that cancel exactly (the diagonal edges) are dropped.
    /// `(2^L - 1)^2` unknowns: levels 4..9 give 225, 961, 3969, 16129, 65025, 261121.
    Fem2d,
    /// Linear elasticity `-div σ(u) = f`, `σ = λ tr(ε) I + 2μ ε`, with `E = 1`, `ν = 0.3`, on
    /// the unit cube: linear (P1) tetrahedra on `m^3` cubes, each split into 6 tetrahedra
    /// (Kuhn / Freudenthal split, conforming), 3 unknowns per node, element matrices
    /// `vol * Bᵀ D B`. The face `x = 0` is clamped (its nodes eliminated), the other faces are
    /// traction-free. `3 m (m+1)^2` unknowns; the node-connectivity pattern (complete 3x3
    /// blocks, some entries exactly zero) has at most 45 entries per row.
    Elasticity3d,
    /// Convection-diffusion `-ε Δu + b·∇u = f` on the unit cube, `ε = 1`, constant
    /// `b = (100, 50, 25)`, homogeneous Dirichlet boundary: 7-point central differences for
    /// the diffusion, first-order upwind differences for the convection, `k^3` interior grid,
    /// scaled by `h^2`. Nonsymmetric M-matrix for every `k` (mesh Péclet number
    /// `|b_x| h / (2ε)` is 25 at `k = 1`, 2.9 at `k = 16`, 0.31 at `k = 160`). `k^3` unknowns.
    ConvDiff3d,
    /// Anisotropic diffusion `-(ε u_xx + u_yy) = f` on the unit square, `ε = 1e-3`,
    /// homogeneous Dirichlet boundary, 5-point finite differences on a `k x k` interior grid
    /// scaled by `h^2`: `2 + 2ε` on the diagonal, `-ε` for x neighbours, -1 for y neighbours.
    /// Symmetric positive definite; its extreme eigenvalues are those of the Poisson matrix but
    /// the spectrum falls into `k` tight clusters and the x coupling is a thousand times weaker
    /// than the y coupling (hard for point smoothers and incomplete factorizations). `k^2`
    /// unknowns.
    Aniso2d,
    /// 2D heat conduction with piecewise-constant conductivity (1..1000), P1 FEM (`thermal2d`).
    Thermal2d,
    /// 3D diffusion with conductivity 1, 1e4 or 1e6 on 8^3-cell boxes, 7-point finite volumes
    /// (`jump3d`): an ill-conditioned SPD M-matrix. `k^3` unknowns.
    Jump3d,
    /// 3D cell-centred finite-volume diffusion with conductivity 1e4 on a fixed pseudo-random
    /// 30% of the cells and 1 elsewhere (harmonic face means, Dirichlet at half a cell outside):
    /// an SPD M-matrix with a varying diagonal (`randjump3d`). `k^3` unknowns.
    RandJump3d,
    /// 3D Laplacian with the full 27-point stencil on a `k x k x k` grid: 26 on the diagonal,
    /// -1 for each in-grid neighbour (bandwidth benchmark, issue 16). `k^3` unknowns.
    Stencil27,
    /// `n` unknowns with power-law row lengths (Pareto tail 2.5, mean about 10, longest rows
    /// thousands): random symmetric M-matrix, deterministic (bandwidth benchmark).
    Powerlaw,
    /// `n` unknowns of a circuit-like network: chain plus mesh links and four rails tied to
    /// every 64th node (four rows of n/64 entries), symmetric M-matrix (bandwidth benchmark).
    Circuit,
}

const ALL: [Generator; 12] = [
    Generator::Poisson2d,
    Generator::Poisson3d,
    Generator::Fem2d,
    Generator::Elasticity3d,
    Generator::ConvDiff3d,
    Generator::Aniso2d,
    Generator::Thermal2d,
    Generator::Jump3d,
    Generator::RandJump3d,
    Generator::Stencil27,
    Generator::Powerlaw,
    Generator::Circuit,
];

/// A generated test matrix and what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem<T> {
    /// Generator name, e.g. `"fem2d"`.
    pub name: String,
    /// The size parameter used (`k`, level `L` or cube count `m`).
    pub param: usize,
    /// The system matrix (square, `unknowns x unknowns`).
    pub matrix: CsrMatrix<T>,
    /// Human-readable description, e.g. `"2D FEM Poisson, level 7, 16129 unknowns"`.
    pub description: String,
}

impl Generator {
    /// The name used on the command line (`poisson2d`, `fem2d`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Generator::Poisson2d => "poisson2d",
            Generator::Poisson3d => "poisson3d",
            Generator::Fem2d => "fem2d",
            Generator::Elasticity3d => "elasticity3d",
            Generator::ConvDiff3d => "convdiff3d",
            Generator::Aniso2d => "aniso2d",
            Generator::Thermal2d => "thermal2d",
            Generator::Jump3d => "jump3d",
            Generator::RandJump3d => "randjump3d",
            Generator::Stencil27 => "stencil27",
            Generator::Powerlaw => "powerlaw",
            Generator::Circuit => "circuit",
        }
    }

    /// All generators, in a fixed order.
    pub fn all() -> &'static [Generator] {
        &ALL
    }

    /// True for the symmetric positive definite problems (all but `convdiff3d`).
    pub fn is_symmetric(&self) -> bool {
        !matches!(self, Generator::ConvDiff3d)
    }

    /// Name of the size parameter: `"k"` (grid points per axis), `"level"` (refinement
    /// level) or `"m"` (cubes per axis).
    pub fn param_name(&self) -> &'static str {
        match self {
            Generator::Fem2d => "level",
            Generator::Elasticity3d => "m",
            Generator::Powerlaw | Generator::Circuit => "n",
            _ => "k",
        }
    }

    /// Number of unknowns for size parameter `param` (saturating at `usize::MAX`; 0 for
    /// `param = 0`).
    pub fn unknowns(&self, param: usize) -> usize {
        let p = param;
        match self {
            Generator::Poisson2d | Generator::Aniso2d | Generator::Thermal2d => p.saturating_mul(p),
            Generator::Poisson3d
            | Generator::ConvDiff3d
            | Generator::Jump3d
            | Generator::RandJump3d
            | Generator::Stencil27 => p.saturating_mul(p).saturating_mul(p),
            Generator::Powerlaw | Generator::Circuit => p,
            Generator::Fem2d => {
                if p >= usize::BITS as usize {
                    usize::MAX
                } else {
                    let s = (1usize << p) - 1;
                    s.saturating_mul(s)
                }
            }
            Generator::Elasticity3d => {
                let q = p.saturating_add(1);
                3usize.saturating_mul(p).saturating_mul(q).saturating_mul(q)
            }
        }
    }

    /// The largest size parameter whose problem has at most [`MAX_UNKNOWNS`] unknowns.
    pub fn max_param(&self) -> usize {
        // unknowns() is non-decreasing in param: binary search the last param within range.
        let (mut lo, mut hi) = (1usize, 1usize << 32);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.unknowns(mid) <= MAX_UNKNOWNS {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The size parameter whose number of unknowns is closest to `n` (ties go to the smaller
    /// one), between 1 and [`Generator::max_param`].
    ///
    /// ```
    /// use pipekrylov::matrix::generate::Generator;
    /// assert_eq!(Generator::Poisson2d.size_for(225), 15);
    /// assert_eq!(Generator::Fem2d.size_for(16129), 7);
    /// assert_eq!(Generator::Fem2d.size_for(16000), 7);
    /// ```
    pub fn size_for(&self, n: usize) -> usize {
        let max = self.max_param();
        // Largest p in [1, max] with unknowns(p) <= n, if any.
        if self.unknowns(1) > n {
            return 1;
        }
        let (mut lo, mut hi) = (1usize, max);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.unknowns(mid) <= n {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if lo < max {
            let below = n - self.unknowns(lo);
            let above = self.unknowns(lo + 1) - n;
            if above < below {
                return lo + 1;
            }
        }
        lo
    }

    /// Generate the problem whose size is closest to `n` unknowns (see
    /// [`Generator::size_for`]). `n = 0` and `n > MAX_UNKNOWNS` are errors.
    pub fn generate<T: Scalar>(&self, n: usize) -> Result<Problem<T>> {
        if n == 0 {
            return Err(Error::param("n", "the number of unknowns must be positive"));
        }
        if n > MAX_UNKNOWNS {
            return Err(Error::param(
                "n",
                format!("{n} unknowns requested, at most {MAX_UNKNOWNS} supported"),
            ));
        }
        self.generate_with_param(self.size_for(n))
    }

    /// Generate the problem for an explicit size parameter (`k`, level or `m`, see
    /// [`Generator::param_name`]); it must lie in `1..=max_param()`.
    pub fn generate_with_param<T: Scalar>(&self, param: usize) -> Result<Problem<T>> {
        let max = self.max_param();
        if param == 0 || param > max {
            return Err(Error::param(
                self.param_name(),
                format!(
                    "{} needs {} in 1..={max}, got {param}",
                    self.name(),
                    self.param_name()
                ),
            ));
        }
        let matrix = match self {
            Generator::Poisson2d => poisson::poisson2d(param)?,
            Generator::Poisson3d => poisson::poisson3d(param)?,
            Generator::Fem2d => fem2d::fem2d(param)?,
            Generator::Elasticity3d => elasticity3d::elasticity3d(param)?,
            Generator::ConvDiff3d => convdiff3d::convdiff3d(param)?,
            Generator::Aniso2d => aniso2d::aniso2d(param)?,
            Generator::Thermal2d => thermal2d::thermal2d(param)?,
            Generator::Jump3d => jump3d::jump3d(param)?,
            Generator::RandJump3d => jump3d::randjump3d(param)?,
            Generator::Stencil27 => irregular::stencil27(param)?,
            Generator::Powerlaw => irregular::powerlaw(param)?,
            Generator::Circuit => irregular::circuit(param)?,
        };
        let n = matrix.n_rows();
        let description = match self {
            Generator::Poisson2d => {
                format!("2D Poisson, 5-point finite differences, k = {param}, {n} unknowns")
            }
            Generator::Poisson3d => {
                format!("3D Poisson, 7-point finite differences, k = {param}, {n} unknowns")
            }
            Generator::Fem2d => format!("2D FEM Poisson, level {param}, {n} unknowns"),
            Generator::Elasticity3d => format!(
                "3D linear elasticity, P1 tetrahedra, m = {param}, x=0 clamped, {n} unknowns"
            ),
            Generator::ConvDiff3d => format!(
                "3D convection-diffusion, b = (100, 50, 25), 7-point upwind, k = {param}, \
                 {n} unknowns"
            ),
            Generator::Aniso2d => format!(
                "2D anisotropic diffusion, eps = 1e-3, 5-point finite differences, \
                 k = {param}, {n} unknowns"
            ),
            Generator::Jump3d => format!(
                "3D diffusion, conductivity 1/1e4/1e6 on 8^3-cell boxes, 7-point finite volumes, \
                 k = {param}, {n} unknowns"
            ),
            Generator::RandJump3d => format!(
                "3D diffusion, conductivity 1e4 on a pseudo-random 30% of the cells and 1 \
                 elsewhere, 7-point finite volumes, k = {param}, {n} unknowns"
            ),
            Generator::Stencil27 => {
                format!("3D Laplacian, 27-point stencil, k = {param}, {n} unknowns")
            }
            Generator::Powerlaw => format!(
                "power-law row lengths (Pareto 2.5), random symmetric M-matrix, {n} unknowns, \
                 {} nonzeros, longest row {}",
                matrix.nnz(),
                matrix.max_row_len()
            ),
            Generator::Circuit => format!(
                "circuit-like network, chain + mesh links + 4 rails, {n} unknowns, {} nonzeros, \
                 longest row {}",
                matrix.nnz(),
                matrix.max_row_len()
            ),
            Generator::Thermal2d => format!(
                "2D heat conduction, conductivity 1..1000 in 16 x 16-cell patches, P1 FEM, \
                 k = {param}, {n} unknowns"
            ),
        };
        Ok(Problem {
            name: self.name().to_string(),
            param,
            matrix,
            description,
        })
    }
}

/// A symmetric constant-coefficient 5/7-point stencil on an `nx x ny x nz` grid with the
/// Dirichlet neighbours eliminated (lexicographic numbering, x fastest): what a matrix-free
/// operator or preconditioner needs instead of the assembled matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridStencil {
    /// Grid points per axis (x fastest; nz = 1 in 2D).
    pub dims: [usize; 3],
    /// The diagonal coefficient.
    pub center: f64,
    /// The coefficient of both neighbours along x, y and z.
    pub neighbours: [f64; 3],
}

impl GridStencil {
    /// Unknowns of the grid.
    pub fn n(&self) -> usize {
        self.dims.iter().product()
    }

    /// Stored entries of row `i` (the centre and its in-grid neighbours).
    pub fn row_len(&self, i: usize) -> usize {
        let [nx, ny, nz] = self.dims;
        let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
        1 + usize::from(x > 0)
            + usize::from(x + 1 < nx)
            + usize::from(y > 0)
            + usize::from(y + 1 < ny)
            + usize::from(z > 0)
            + usize::from(z + 1 < nz)
    }

    /// The stencil's whole matrix (`n x n`), the same as the generator's for a cube or square.
    pub fn matrix<T: Scalar>(&self) -> Result<CsrMatrix<T>> {
        self.rows(0..self.n())
    }

    /// Rows `rows` of the stencil's matrix with global column numbers (`n` columns), the same
    /// entries in the same order as the generator's whole matrix: what one rank of a distributed
    /// solve builds without any global matrix.
    pub fn rows<T: Scalar>(&self, rows: std::ops::Range<usize>) -> Result<CsrMatrix<T>> {
        let n = self.n();
        if rows.start > rows.end || rows.end > n {
            return Err(Error::param(
                "rows",
                format!("{}..{} outside 0..{n}", rows.start, rows.end),
            ));
        }
        let [nx, ny, nz] = self.dims;
        let plane = nx * ny;
        let nnz: usize = rows.clone().map(|i| self.row_len(i)).sum();
        let mut row_ptr = crate::memory::try_with_capacity("stencil row pointers", rows.len() + 1)?;
        let mut cols = crate::memory::try_with_capacity("stencil column indices", nnz)?;
        let mut vals = crate::memory::try_with_capacity("stencil values", nnz)?;
        let c = T::from_f64(self.center);
        let [wx, wy, wz] = self.neighbours.map(T::from_f64);
        row_ptr.push(0);
        for i in rows.clone() {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / plane);
            let mut push = |col: usize, v: T| {
                cols.push(col);
                vals.push(v);
            };
            if z > 0 {
                push(i - plane, wz);
            }
            if y > 0 {
                push(i - nx, wy);
            }
            if x > 0 {
                push(i - 1, wx);
            }
            push(i, c);
            if x + 1 < nx {
                push(i + 1, wx);
            }
            if y + 1 < ny {
                push(i + nx, wy);
            }
            if z + 1 < nz {
                push(i + plane, wz);
            }
            row_ptr.push(cols.len());
        }
        CsrMatrix::new(rows.len(), n, row_ptr, cols, vals)
    }

    fn of((dims, s): ([usize; 3], Stencil7)) -> Self {
        debug_assert!(s.west == s.east && s.south == s.north && s.down == s.up);
        Self {
            dims,
            center: s.center,
            neighbours: [s.west, s.south, s.down],
        }
    }
}

impl Generator {
    /// The constant-coefficient stencil behind the matrix of `param`, for the generators that
    /// have one (`poisson2d`, `poisson3d`, `aniso2d`), `None` otherwise.
    ///
    /// ```
    /// use pipekrylov::matrix::generate::Generator;
    /// let s = Generator::Poisson3d.grid_stencil(4).unwrap();
    /// assert_eq!((s.dims, s.center, s.neighbours), ([4, 4, 4], 6.0, [-1.0; 3]));
    /// assert!(Generator::Fem2d.grid_stencil(4).is_none());
    /// ```
    pub fn grid_stencil(&self, param: usize) -> Option<GridStencil> {
        match self {
            Generator::Poisson2d => Some(GridStencil::of(poisson::poisson2d_stencil(param))),
            Generator::Poisson3d => Some(GridStencil::of(poisson::poisson3d_stencil(param))),
            Generator::Aniso2d => Some(GridStencil::of(aniso2d::aniso2d_stencil(param))),
            _ => None,
        }
    }
}

impl fmt::Display for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

fn valid_names() -> String {
    ALL.iter().map(|g| g.name()).collect::<Vec<_>>().join(", ")
}

impl FromStr for Generator {
    type Err = Error;

    /// Parse a generator name (ASCII case-insensitive, surrounding whitespace ignored).
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        ALL.iter()
            .copied()
            .find(|g| g.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                Error::param(
                    "generator",
                    format!("unknown generator '{t}'; valid names: {}", valid_names()),
                )
            })
    }
}

/// Parse a `NAME:N` specification as used by the CLI (`--generate fem2d:16129`): a generator
/// name and a positive target number of unknowns (pass it to [`Generator::generate`]).
///
/// ```
/// use pipekrylov::matrix::generate::{parse_spec, Generator};
/// assert_eq!(parse_spec("poisson3d:4096").unwrap(), (Generator::Poisson3d, 4096));
/// assert!(parse_spec("poisson3d").is_err());
/// assert!(parse_spec("nope:10").is_err());
/// ```
pub fn parse_spec(spec: &str) -> Result<(Generator, usize)> {
    let (name, n) = spec.split_once(':').ok_or_else(|| {
        Error::param(
            "generate",
            format!(
                "'{spec}' is not of the form NAME:N (e.g. fem2d:16129); names: {}",
                valid_names()
            ),
        )
    })?;
    let g: Generator = name.parse()?;
    let n: usize = n.trim().parse().map_err(|_| {
        Error::param(
            "generate",
            format!(
                "'{spec}': N must be a positive integer number of unknowns (or, for \
                 poisson2d, aniso2d and poisson3d, a grid NXxNY[xNZ]), got '{n}'"
            ),
        )
    })?;
    if n == 0 {
        return Err(Error::param(
            "generate",
            format!("'{spec}': N must be a positive number of unknowns"),
        ));
    }
    if n > MAX_UNKNOWNS {
        return Err(Error::param(
            "generate",
            format!("'{spec}': at most {MAX_UNKNOWNS} unknowns supported"),
        ));
    }
    Ok((g, n))
}

/// Parse a grid specification `NAME:NXxNY` (`poisson2d`, `aniso2d`) or `NAME:NXxNYxNZ`
/// (`poisson3d`): the generator's stencil on a box of grid points with the same spacing along
/// every axis (x fastest, so a row partition cuts the box into slabs along its last axis).
/// `Ok(None)` when the size after the colon is a plain number of unknowns (use [`parse_spec`]).
///
/// Weak scaling uses it: `poisson3d:256x256x128` on one GPU and `poisson3d:256x256x256` on two
/// give every rank the same block of rows.
///
/// ```
/// use pipekrylov::matrix::generate::{parse_grid_spec, Generator};
/// let (g, s) = parse_grid_spec("poisson3d:4x3x2").unwrap().unwrap();
/// assert_eq!((g, s.dims, s.n()), (Generator::Poisson3d, [4, 3, 2], 24));
/// assert_eq!(s.matrix::<f64>().unwrap().nnz(), 24 + 2 * (3 * 3 * 2 + 4 * 2 * 2 + 4 * 3));
/// assert!(parse_grid_spec("poisson3d:4096").unwrap().is_none());
/// assert!(parse_grid_spec("poisson3d:4x4").is_err());
/// assert!(parse_grid_spec("fem2d:4x4").is_err());
/// ```
pub fn parse_grid_spec(spec: &str) -> Result<Option<(Generator, GridStencil)>> {
    let Some((name, size)) = spec.split_once(':') else {
        return Ok(None);
    };
    if !size.contains(['x', 'X']) {
        return Ok(None);
    }
    let g: Generator = name.parse()?;
    let base = g.grid_stencil(2).ok_or_else(|| {
        Error::param(
            "generate",
            format!(
                "'{spec}': {} takes a number of unknowns, not a grid (grids: poisson2d:NXxNY, \
                 aniso2d:NXxNY, poisson3d:NXxNYxNZ)",
                g.name()
            ),
        )
    })?;
    let axes = if base.dims[2] == 1 { 2 } else { 3 };
    let parts: Vec<&str> = size.split(['x', 'X']).map(str::trim).collect();
    let bad = |why: String| Error::param("generate", format!("'{spec}': {why}"));
    if parts.len() != axes {
        return Err(bad(format!(
            "{} needs a grid of {axes} sizes ({}), got {}",
            g.name(),
            if axes == 2 { "NXxNY" } else { "NXxNYxNZ" },
            parts.len()
        )));
    }
    let mut dims = [1usize; 3];
    for (d, p) in dims.iter_mut().zip(&parts) {
        *d = p
            .parse()
            .ok()
            .filter(|&v: &usize| v > 0)
            .ok_or_else(|| bad(format!("grid sizes must be positive integers, got '{p}'")))?;
    }
    let n = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_UNKNOWNS);
    if n.is_none() {
        return Err(bad(format!("at most {MAX_UNKNOWNS} unknowns supported")));
    }
    Ok(Some((g, GridStencil { dims, ..base })))
}

// ---------------------------------------------------------------------------------------------
// Shared builders.

/// Coefficients of a 7-point stencil (5-point in 2D: the z entries are never used there).
#[derive(Debug, Clone, Copy)]
struct Stencil7 {
    center: f64,
    /// x - 1
    west: f64,
    /// x + 1
    east: f64,
    /// y - 1
    south: f64,
    /// y + 1
    north: f64,
    /// z - 1
    down: f64,
    /// z + 1
    up: f64,
}

/// CSR matrix of a constant-coefficient 7-point stencil on an `nx x ny x nz` grid with the
/// Dirichlet neighbours dropped, built row by row (columns come out sorted). Lexicographic
/// numbering `i = x + nx (y + ny z)`.
fn stencil7<T: Scalar>(dims: [usize; 3], s: &Stencil7) -> Result<CsrMatrix<T>> {
    let [nx, ny, nz] = dims;
    let n = nx
        .checked_mul(ny)
        .and_then(|v| v.checked_mul(nz))
        .filter(|&v| v > 0 && v <= MAX_UNKNOWNS)
        .ok_or_else(|| Error::param("grid", format!("{nx} x {ny} x {nz} grid out of range")))?;
    let plane = nx * ny;
    let links = (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1);
    let nnz = n + 2 * links;
    let word = std::mem::size_of::<usize>();
    let need = (n + 1)
        .checked_mul(word)
        .and_then(|p| p.checked_add(nnz.checked_mul(word + std::mem::size_of::<T>())?));
    crate::memory::check_budget("generated stencil matrix", need)?;
    let mut row_ptr = crate::memory::try_with_capacity("generator row pointers", n + 1)?;
    let mut cols = crate::memory::try_with_capacity("generator column indices", nnz)?;
    let mut vals = crate::memory::try_with_capacity("generator values", nnz)?;
    let c = T::from_f64(s.center);
    let (w, e) = (T::from_f64(s.west), T::from_f64(s.east));
    let (so, no) = (T::from_f64(s.south), T::from_f64(s.north));
    let (d, u) = (T::from_f64(s.down), T::from_f64(s.up));
    row_ptr.push(0);
    let mut i = 0usize;
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                if z > 0 {
                    cols.push(i - plane);
                    vals.push(d);
                }
                if y > 0 {
                    cols.push(i - nx);
                    vals.push(so);
                }
                if x > 0 {
                    cols.push(i - 1);
                    vals.push(w);
                }
                cols.push(i);
                vals.push(c);
                if x + 1 < nx {
                    cols.push(i + 1);
                    vals.push(e);
                }
                if y + 1 < ny {
                    cols.push(i + nx);
                    vals.push(no);
                }
                if z + 1 < nz {
                    cols.push(i + plane);
                    vals.push(u);
                }
                row_ptr.push(cols.len());
                i += 1;
            }
        }
    }
    CsrMatrix::new(n, n, row_ptr, cols, vals)
}

/// One reference element of a structured simplicial mesh: its corners as offsets (0 or 1 per
/// axis) from the origin of its cell, and its local matrix, row-major of order
/// `corners * dofs`, local index `corner * dofs + component`.
#[derive(Debug, Clone)]
struct RefElement {
    corners: Vec<[usize; 3]>,
    local: Vec<f64>,
}

/// Assemble a finite-element matrix on a structured grid of `cells[0] x cells[1] x cells[2]`
/// cells (a count of 0 makes that axis flat: one node layer, for 2D meshes), every cell
/// holding a translated copy of each of `elements`, with `dofs` unknowns per node. Nodes for
/// which `free` is false are eliminated (their rows and columns dropped). Unknowns are numbered
/// node by node in lexicographic order (x fastest), components innermost.
///
/// The sparsity pattern is derived from the node offsets the elements connect (complete
/// `dofs x dofs` blocks) and the values are summed straight into CSR storage (no triplet
/// list). With `drop_rel = Some(r)`, off-diagonal entries with `|a_ij| <= r * max|a|` (exact
/// zeros for `r = 0`) are dropped; with `None` the full pattern is kept. For symmetric local
/// matrices the result is exactly symmetric.
fn assemble_structured<T: Scalar>(
    cells: [usize; 3],
    dofs: usize,
    elements: &[RefElement],
    free: &dyn Fn([usize; 3]) -> bool,
    drop_rel: Option<f64>,
) -> Result<CsrMatrix<T>> {
    let internal = |msg: &str| Error::InvalidMatrix(format!("structured assembly: {msg}"));
    let nodes = [cells[0] + 1, cells[1] + 1, cells[2] + 1];
    let cell_layers = [cells[0], cells[1], cells[2].max(1)];
    let n_nodes = nodes[0]
        .checked_mul(nodes[1])
        .and_then(|v| v.checked_mul(nodes[2]))
        .ok_or_else(|| internal("too many nodes"))?;
    if dofs == 0 || cells[0] == 0 || cells[1] == 0 {
        return Err(internal("empty mesh"));
    }
    // Validate the reference elements and collect the node offsets they connect.
    let mut offsets: Vec<[i64; 3]> = Vec::new();
    for e in elements {
        let nl = e.corners.len() * dofs;
        if e.local.len() != nl * nl {
            return Err(internal("local matrix of the wrong size"));
        }
        for c in &e.corners {
            if c.iter().any(|&v| v > 1) || (cells[2] == 0 && c[2] != 0) {
                return Err(internal("corner outside the cell"));
            }
        }
        for a in &e.corners {
            for b in &e.corners {
                let d = [
                    b[0] as i64 - a[0] as i64,
                    b[1] as i64 - a[1] as i64,
                    b[2] as i64 - a[2] as i64,
                ];
                if !offsets.contains(&d) {
                    offsets.push(d);
                }
            }
        }
    }
    if offsets.len() > 32 {
        return Err(internal("too many neighbour offsets"));
    }
    // Sorted by (dz, dy, dx) = by linear index delta: neighbours come out in column order.
    offsets.sort_by_key(|d| (d[2], d[1], d[0]));
    let offset_of = |d: [i64; 3]| offsets.iter().position(|&o| o == d);
    // offset index of every (element, a, b) pair.
    let mut pair_offset: Vec<Vec<u32>> = Vec::with_capacity(elements.len());
    for e in elements {
        let mut v = Vec::with_capacity(e.corners.len() * e.corners.len());
        for a in &e.corners {
            for b in &e.corners {
                let d = [
                    b[0] as i64 - a[0] as i64,
                    b[1] as i64 - a[1] as i64,
                    b[2] as i64 - a[2] as i64,
                ];
                let o = offset_of(d).ok_or_else(|| internal("offset missing"))?;
                v.push(o as u32);
            }
        }
        pair_offset.push(v);
    }
    let delta: Vec<isize> = offsets
        .iter()
        .map(|d| (d[0] + nodes[0] as i64 * (d[1] + nodes[1] as i64 * d[2])) as isize)
        .collect();

    // Free-node numbering (monotone in the node index).
    const FIXED: usize = usize::MAX;
    let mut free_idx = vec![FIXED; n_nodes];
    let mut n_free = 0usize;
    {
        let mut i = 0usize;
        for z in 0..nodes[2] {
            for y in 0..nodes[1] {
                for x in 0..nodes[0] {
                    if free([x, y, z]) {
                        free_idx[i] = n_free;
                        n_free += 1;
                    }
                    i += 1;
                }
            }
        }
    }
    let n = n_free
        .checked_mul(dofs)
        .filter(|&v| v <= MAX_UNKNOWNS)
        .ok_or_else(|| internal("too many unknowns"))?;
    // Neighbour masks (bit o set: node + offset o is in the grid and free) and block offsets.
    let mut mask = vec![0u32; n_free];
    let mut ptr = Vec::with_capacity(n_free + 1);
    ptr.push(0usize);
    {
        let mut i = 0usize;
        for z in 0..nodes[2] as i64 {
            for y in 0..nodes[1] as i64 {
                for x in 0..nodes[0] as i64 {
                    let f = free_idx[i];
                    if f != FIXED {
                        let mut m = 0u32;
                        for (o, d) in offsets.iter().enumerate() {
                            let (nx, ny, nz) = (x + d[0], y + d[1], z + d[2]);
                            let inside = nx >= 0
                                && ny >= 0
                                && nz >= 0
                                && nx < nodes[0] as i64
                                && ny < nodes[1] as i64
                                && nz < nodes[2] as i64;
                            if inside {
                                let j = i.wrapping_add_signed(delta[o]);
                                if free_idx[j] != FIXED {
                                    m |= 1 << o;
                                }
                            }
                        }
                        mask[f] = m;
                        ptr.push(ptr[f] + m.count_ones() as usize);
                    }
                    i += 1;
                }
            }
        }
    }
    let total = ptr[n_free]
        .checked_mul(dofs * dofs)
        .ok_or_else(|| internal("too many nonzeros"))?;
    let mut vals = vec![0.0f64; total];

    // Element loop: add every local block into its slot.
    let plane = nodes[0] * nodes[1];
    let mut glob: Vec<usize> = Vec::new();
    for cz in 0..cell_layers[2] {
        for cy in 0..cell_layers[1] {
            for cx in 0..cell_layers[0] {
                let origin = cx + nodes[0] * cy + plane * cz;
                for (e, po) in elements.iter().zip(&pair_offset) {
                    let nc = e.corners.len();
                    let nl = nc * dofs;
                    glob.clear();
                    glob.extend(
                        e.corners
                            .iter()
                            .map(|c| free_idx[origin + c[0] + nodes[0] * c[1] + plane * c[2]]),
                    );
                    for a in 0..nc {
                        let fa = glob[a];
                        if fa == FIXED {
                            continue;
                        }
                        let len = (ptr[fa + 1] - ptr[fa]) * dofs;
                        let base = ptr[fa] * dofs * dofs;
                        for b in 0..nc {
                            if glob[b] == FIXED {
                                continue;
                            }
                            let o = po[a * nc + b];
                            let q = (mask[fa] & ((1u32 << o) - 1)).count_ones() as usize;
                            for c in 0..dofs {
                                let row = &e.local[(a * dofs + c) * nl + b * dofs..];
                                let dst = base + c * len + q * dofs;
                                for d in 0..dofs {
                                    vals[dst + d] += row[d];
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    // Compress to CSR, dropping (near-)zero off-diagonal entries.
    let max_abs = vals.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // Entries are kept when `|v| > tol`; a negative tolerance keeps everything.
    let tol = drop_rel.map_or(-1.0, |r| r * max_abs);
    let mut row_ptr = crate::memory::try_with_capacity("generator row pointers", n + 1)?;
    let mut cols = crate::memory::try_with_capacity("generator column indices", total)?;
    let mut out = crate::memory::try_with_capacity("generator values", total)?;
    row_ptr.push(0usize);
    let mut nbr: Vec<usize> = Vec::with_capacity(offsets.len());
    let mut i = 0usize;
    for _ in 0..nodes[2] {
        for _ in 0..nodes[1] {
            for _ in 0..nodes[0] {
                let f = free_idx[i];
                if f != FIXED {
                    nbr.clear();
                    for (o, &d) in delta.iter().enumerate() {
                        if mask[f] & (1 << o) != 0 {
                            nbr.push(free_idx[i.wrapping_add_signed(d)]);
                        }
                    }
                    let len = nbr.len() * dofs;
                    let base = ptr[f] * dofs * dofs;
                    for c in 0..dofs {
                        let r = f * dofs + c;
                        let row = &vals[base + c * len..base + (c + 1) * len];
                        for (q, &g) in nbr.iter().enumerate() {
                            for d in 0..dofs {
                                let col = g * dofs + d;
                                let v = row[q * dofs + d];
                                if col == r || v.abs() > tol {
                                    cols.push(col);
                                    out.push(T::from_f64(v));
                                }
                            }
                        }
                        row_ptr.push(cols.len());
                    }
                }
                i += 1;
            }
        }
    }
    drop(vals);
    CsrMatrix::new(n, n, row_ptr, cols, out)
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Helpers shared by the generator unit tests.
    use crate::matrix::CsrMatrix;

    /// Deterministic pseudo-random vector in [-1, 1).
    pub fn rand_vec(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
            })
            .collect()
    }

    /// x^T A x.
    pub fn quad(a: &CsrMatrix<f64>, x: &[f64]) -> f64 {
        let mut y = vec![0.0; a.n_rows()];
        a.mul_vec(x, &mut y).expect("mul_vec");
        x.iter().zip(&y).map(|(a, b)| a * b).sum()
    }

    /// Every row weakly diagonally dominant, positive diagonal, and at least one row strictly.
    pub fn diag_dominant(a: &CsrMatrix<f64>) -> bool {
        let mut strict = false;
        for r in 0..a.n_rows() {
            let (c, v) = a.row(r);
            let mut d = 0.0;
            let mut off = 0.0;
            for (&c, &v) in c.iter().zip(v) {
                if c == r {
                    d = v;
                } else {
                    off += f64::abs(v);
                }
            }
            if d <= 0.0 || d < off * (1.0 - 1e-12) {
                return false;
            }
            if d > off * (1.0 + 1e-12) {
                strict = true;
            }
        }
        strict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_specs_build_the_generators_matrices_on_boxes() {
        for (spec, g, k) in [
            ("poisson3d:6x6x6", Generator::Poisson3d, 6),
            ("poisson2d:9X9", Generator::Poisson2d, 9),
            ("aniso2d: 7 x 7", Generator::Aniso2d, 7),
        ] {
            let (pg, stencil) = parse_grid_spec(spec).unwrap().unwrap();
            assert_eq!(pg, g);
            let want = g.generate_with_param::<f64>(k).unwrap().matrix;
            assert_eq!(stencil.matrix::<f64>().unwrap(), want, "{spec}");
        }
        // A box: slabs along z, each the same rows as the one-slab box.
        let (_, slab) = parse_grid_spec("poisson3d:5x4x3").unwrap().unwrap();
        let (_, tall) = parse_grid_spec("poisson3d:5x4x6").unwrap().unwrap();
        let a = slab.matrix::<f64>().unwrap();
        let b = tall.matrix::<f64>().unwrap();
        assert_eq!((a.n_rows(), b.n_rows()), (60, 120));
        assert_eq!(b.nnz(), 2 * a.nnz() + 2 * 20);
        for spec in [
            "poisson3d:4x4",
            "poisson2d:4x4x4",
            "poisson3d:4x0x4",
            "poisson3d:4x-1x4",
            "poisson3d:65536x65536x65536",
            "poisson3d:18446744073709551615x2x2",
            "fem2d:4x4",
            "nope:4x4",
        ] {
            assert!(parse_grid_spec(spec).is_err(), "{spec}");
        }
        for spec in ["poisson3d:64", "poisson3d", "fem2d:100"] {
            assert!(parse_grid_spec(spec).unwrap().is_none(), "{spec}");
        }
    }

    #[test]
    fn stencil_rows_are_the_generated_rows() {
        for (g, param) in [
            (Generator::Poisson2d, 7usize),
            (Generator::Poisson3d, 5),
            (Generator::Aniso2d, 6),
        ] {
            let a = g.generate_with_param::<f64>(param).unwrap().matrix;
            let st = g.grid_stencil(param).unwrap();
            assert_eq!(st.n(), a.n_rows());
            for range in [0..a.n_rows(), 0..1, 3..a.n_rows() - 2, 5..5] {
                let rows = st.rows::<f64>(range.clone()).unwrap();
                let rp = a.row_ptr();
                let (s0, s1) = (rp[range.start], rp[range.end]);
                assert_eq!(rows.col_idx(), &a.col_idx()[s0..s1], "{g} {range:?}");
                assert_eq!(rows.values(), &a.values()[s0..s1], "{g} {range:?}");
                for i in range.clone() {
                    assert_eq!(st.row_len(i), rp[i + 1] - rp[i]);
                }
            }
            assert!(st.rows::<f64>(0..a.n_rows() + 1).is_err());
        }
    }

    #[test]
    fn names_round_trip() {
        for g in Generator::all() {
            assert_eq!(g.name().parse::<Generator>().unwrap(), *g);
            assert_eq!(g.to_string(), g.name());
        }
        assert_eq!(" FEM2D ".parse::<Generator>().unwrap(), Generator::Fem2d);
        let e = "poisson".parse::<Generator>().unwrap_err();
        assert!(e.to_string().contains("poisson2d, poisson3d, fem2d"), "{e}");
    }

    #[test]
    fn size_selection() {
        let g = Generator::Poisson2d;
        assert_eq!(g.size_for(0), 1);
        assert_eq!(g.size_for(1), 1);
        assert_eq!(g.size_for(225), 15);
        // 15^2 = 225, 16^2 = 256: 240 is 15 away from 225 and 16 from 256, 241 the reverse.
        assert_eq!(g.size_for(240), 15);
        assert_eq!(g.size_for(241), 16);
        // Ties go to the smaller parameter: fem2d has 1 (L=1) and 9 (L=2) unknowns.
        assert_eq!(Generator::Fem2d.size_for(5), 1);
        assert_eq!(Generator::Fem2d.size_for(6), 2);
        assert_eq!(g.size_for(usize::MAX), g.max_param());
        for gen in Generator::all() {
            let m = gen.max_param();
            assert!(gen.unknowns(m) <= MAX_UNKNOWNS);
            assert!(gen.unknowns(m + 1) > MAX_UNKNOWNS);
            for p in 1..6 {
                assert_eq!(gen.size_for(gen.unknowns(p)), p, "{gen} {p}");
            }
        }
        assert_eq!(Generator::Fem2d.max_param(), 15);
        assert_eq!(Generator::Fem2d.unknowns(200), usize::MAX);
    }

    #[test]
    fn bad_params() {
        assert!(Generator::Poisson2d.generate::<f64>(0).is_err());
        assert!(Generator::Poisson2d
            .generate::<f64>(MAX_UNKNOWNS + 1)
            .is_err());
        assert!(Generator::Fem2d.generate_with_param::<f64>(0).is_err());
        assert!(Generator::Fem2d.generate_with_param::<f64>(16).is_err());
        assert!(matches!(
            Generator::Poisson3d.generate_with_param::<f64>(0),
            Err(Error::InvalidParameter { .. })
        ));
    }

    #[test]
    fn spec_parsing() {
        assert_eq!(
            parse_spec("fem2d:16129").unwrap(),
            (Generator::Fem2d, 16129)
        );
        assert_eq!(
            parse_spec("aniso2d: 100").unwrap(),
            (Generator::Aniso2d, 100)
        );
        for bad in [
            "fem2d", "fem2d:", "fem2d:x", "fem2d:0", "fem2d:-3", ":5", "foo:5",
        ] {
            assert!(parse_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn problem_metadata() {
        let p = Generator::Fem2d.generate::<f32>(16129).unwrap();
        assert_eq!(p.name, "fem2d");
        assert_eq!(p.param, 7);
        assert_eq!(p.description, "2D FEM Poisson, level 7, 16129 unknowns");
    }

    #[test]
    fn stencil_counts() {
        let s = Stencil7 {
            center: 6.0,
            west: -1.0,
            east: -1.0,
            south: -1.0,
            north: -1.0,
            down: -1.0,
            up: -1.0,
        };
        let a = stencil7::<f64>([3, 4, 5], &s).unwrap();
        assert_eq!(a.n_rows(), 60);
        assert_eq!(a.nnz(), 60 + 2 * (2 * 20 + 3 * 15 + 4 * 12));
        assert!(stencil7::<f64>([0, 4, 5], &s).is_err());
    }
}
