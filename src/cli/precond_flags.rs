//! The preconditioner's flags of `pipekrylov solve`, parsed by clap into the library's own types
//! (their `FromStr`), and [`PrecondFlags::spec`]: the chosen preconditioner with its options,
//! read from its own flags only; [`PrecondFlags::check_given`] refuses a flag given for a
//! preconditioner that does not read it.

use crate::backend::{AfsaiGrowth, AfsaiStop, CsrKernel};
use crate::error::{Error, Result};
use crate::precond::{
    AfsaiOptions, AmgOptions, AmgPrecision, AmgSetup, Bilu0Options, Coarsening, Factorization,
    FsaiOptions, IluMatching, IluOptions, IluOrdering, IpOptions, IpScaling, IsaiOptions,
    PrecondKind, PrecondPrecision, PrecondSpec, Smoother, TriangularSolve,
};

/// `--precond` and the options of every preconditioner (`pipekrylov solve --help`).
#[derive(clap::Args, Debug, Clone)]
pub struct PrecondFlags {
    /// none, jacobi, point-block-jacobi, block-jacobi, bilu0, isai (block-ISAI of
    /// BILU(0)), ip (Incomplete Poisson), ip-matrix-free (IP of a generated stencil:
    /// poisson2d, poisson3d, aniso2d), fsai (static FSAI, SPD matrices), afsai
    /// (adaptive FSAI, SPD matrices), amg (smoothed-aggregation multigrid, one V-cycle;
    /// elliptic problems) or ilu (matching, scaling, ordering and ILU(0)/ILU(k)/ILUT, for
    /// matrices with zero or weak diagonals).
    #[arg(long, default_value = "none")]
    pub precond: PrecondKind,
    /// Precision of the preconditioner: solve (the solve's) or f32 (set up on A rounded to
    /// f32, stored and applied in single precision inside a double-precision solve; amg: the
    /// same as --amg-precision f32). Pair it with --variant classical for cg (auto does).
    #[arg(long, default_value = "solve")]
    pub precond_precision: PrecondPrecision,
    /// Triangular solves of bilu0 / block-jacobi / ilu: auto (exact on a CPU or where the factors
    /// have few levels, else sweeps; the report says which ran and why), exact
    /// (level-scheduled: one launch per level, on a GPU one per run of narrow levels) or
    /// sweeps:K (K block-Jacobi sweeps per factor).
    #[arg(long, default_value = "auto")]
    pub trisolve: TriangularSolve,
    /// Block size S of the block preconditioners (1..8; default: S of --format bsr:S,
    /// else 3 for elasticity3d, else 1).
    #[arg(long)]
    pub block_size: Option<usize>,
    /// Contiguous subdomains P of block-jacobi (couplings between them are dropped).
    #[arg(long, default_value_t = 1)]
    pub subdomains: usize,
    /// Where the factors of bilu0 / block-jacobi / isai are computed: host (exact, rayon) or
    /// sweeps:F (on the backend: the initial guess and F fixed-point sweeps of Chow and
    /// Patel's parallel ILU, one launch each; F >= the dependency depth is exact).
    #[arg(long, default_value = "host")]
    pub factorization: Factorization,
    /// Pattern level k of isai: the inverses live on the patterns of (I+|L|)^k, (I+|U|)^k.
    #[arg(long, default_value_t = 1)]
    pub isai_level: usize,
    /// Scaling of ip: auto (the IP of D^-1/2 A D^-1/2, scaled back, where the diagonal
    /// varies: positive definite for 5-/7-point M-matrices, where the paper's form can be
    /// indefinite; the paper's form on a constant diagonal, where the two agree up to a
    /// factor), none (the paper's eq. (15)) or symmetric.
    #[arg(long, default_value = "auto")]
    pub ip_scaling: IpScaling,
    /// Coarsening of amg: sa (smoothed aggregation) or aggregation (plain, cheaper setup,
    /// more iterations).
    #[arg(long, default_value = "sa")]
    pub amg_coarsening: Coarsening,
    /// Smoother of amg: jacobi (damped), l1-jacobi or chebyshev:K (degree K, 1..4).
    #[arg(long, default_value = "jacobi")]
    pub amg_smoother: Smoother,
    /// Smoothing sweeps of amg before and after the coarse correction (the same number
    /// keeps the cycle symmetric, for CG).
    #[arg(long, default_value_t = 1)]
    pub amg_sweeps: usize,
    /// Strength threshold of amg's aggregation on the finest level.
    #[arg(long, default_value_t = 0.05)]
    pub amg_strength: f64,
    /// Factor of amg's strength threshold from one level to the next coarser one, in
    /// (0, 1] (0.5: halved, as AMGCL does; 1 suits coefficient jumps).
    #[arg(long, default_value_t = 0.5)]
    pub amg_strength_decay: f64,
    /// Diagonal contrast (largest over smallest diagonal entry) from which amg treats the
    /// matrix as high-contrast: strength decay 1 and Chebyshev 3 in place of Jacobi, whatever
    /// --amg-strength-decay says (inf: never).
    #[arg(long, default_value_t = 1e4)]
    pub amg_high_contrast: f64,
    /// Most levels of amg, the coarsest included.
    #[arg(long, default_value_t = 25)]
    pub amg_max_levels: usize,
    /// amg stops coarsening at this many rows and inverts that level (at most 4096).
    #[arg(long, default_value_t = 500)]
    pub amg_coarse_size: usize,
    /// Where amg is set up: auto (on the device for a GPU backend, block size 1), host
    /// (greedy aggregation, uploaded) or device (MIS-2 aggregation and SpGEMM kernels).
    #[arg(long, default_value = "auto")]
    pub amg_setup: AmgSetup,
    /// Precision of amg's hierarchy: solve (the solve's) or f32 (levels stored and the
    /// cycle run in single precision inside a double-precision solve).
    #[arg(long, default_value = "solve")]
    pub amg_precision: AmgPrecision,
    /// Matching and scaling of ilu: auto (the maximum-product matching with its scalings
    /// where some row's diagonal is zero or below 0.1 of its row's largest entry), on, off
    /// or equilibrate (row and column scaling only).
    #[arg(long, default_value = "auto")]
    pub ilu_matching: IluMatching,
    /// Symmetric ordering of ilu after the matching: auto (amd after a matching, else rcm),
    /// none, rcm or amd (approximate minimum degree on the symmetrized pattern).
    #[arg(long, default_value = "auto")]
    pub ilu_ordering: IluOrdering,
    /// ILU(k) with this level of fill for ilu (default: ILU(0) when it factors stably,
    /// else ILUT).
    #[arg(long)]
    pub ilu_fill: Option<usize>,
    /// ILUT drop tolerance of ilu, relative to each row's 2-norm (default 1e-4, as SciPy's
    /// spilu; giving it selects ILUT).
    #[arg(long)]
    pub ilu_drop: Option<f64>,
    /// ILUT fill factor of ilu: nnz(L + U) at most about this times nnz(A) (default 10,
    /// as SciPy's spilu; giving it selects ILUT).
    #[arg(long)]
    pub ilu_max_fill: Option<f64>,
    /// Replace tiny pivots of ilu by shifted values (counted in the report) instead of
    /// failing.
    #[arg(long)]
    pub ilu_shift: bool,
    /// Column pivoting of ilu's ILUT (ILUTP): a row pivots on its largest entry right of
    /// the diagonal when the diagonal is below this times it (0: never; SuperLU's 0.1).
    #[arg(long, default_value_t = crate::precond::ilu::DEFAULT_PIVOT_THRESHOLD)]
    pub ilu_pivot: f64,
    /// Pattern level k of fsai: G on the lower triangle of the pattern of A^k (1..4).
    #[arg(long, default_value_t = 1)]
    pub fsai_level: usize,
    /// Prefiltration of fsai: entries below tau sqrt(a_ii a_jj) leave the pattern.
    #[arg(long, default_value_t = 0.0)]
    pub fsai_tau: f64,
    /// Growth steps k_max of afsai (entries are added for at most this many steps).
    #[arg(long, default_value_t = 30)]
    pub afsai_max_steps: usize,
    /// Entries s added per growth step of afsai (1..8).
    #[arg(long, default_value_t = 1)]
    pub afsai_step_size: usize,
    /// Tolerance eps of afsai's stopping rule (see --afsai-stop).
    #[arg(long, default_value_t = 1e-3)]
    pub afsai_eps: f64,
    /// Stopping rule of afsai: ratio (a row stops when psi_k / psi_0 <= eps, eq. 17 of Bernaschi19)
    /// or step (when the last step reduced psi by a relative eps or less).
    #[arg(long, default_value = "ratio")]
    pub afsai_stop: AfsaiStop,
    /// At most this many rows per afsai growth launch (default: chosen from the memory the
    /// grown rows predict; the pattern is the same for any value).
    #[arg(long)]
    pub afsai_batch_rows: Option<usize>,
    /// Precision of the fsai/afsai setup: f64 (the solve's precision) or f32 (the factor
    /// is set up in single precision and cast to the solve precision on the device).
    #[arg(long, default_value = "f64")]
    pub fsai_setup_precision: String,
    /// CSR kernel of the fsai/afsai factors G and G^T: auto (chosen from their row
    /// lengths), vector, stream or stream-compact.
    #[arg(long, default_value = "auto")]
    pub fsai_kernel: CsrKernel,
}

impl PrecondFlags {
    /// Whether `--block-size` was given (else the solve picks it from the format or problem).
    pub fn block_size_given(&self) -> bool {
        self.block_size.is_some()
    }

    /// [`Error::InvalidParameter`] for the first of `given` (clap ids of the flags given on the
    /// command line, e.g. `amg_strength`) that the chosen preconditioner does not read, as the
    /// bindings' `options_kv` refuses it: `--precond jacobi --amg-strength 0.1` is an error,
    /// not a silently ignored option. Ids that are not preconditioner options pass.
    pub fn check_given<S: AsRef<str>>(&self, given: &[S]) -> Result<()> {
        let spec = self.spec()?;
        for id in given.iter().map(AsRef::as_ref) {
            if let Some(reads) = readers(id) {
                if !reads(&spec) {
                    let flag = format!("--{}", id.replace('_', "-"));
                    return Err(Error::param(
                        &flag,
                        format!(
                            "not an option of --precond {} (it applies to: {})",
                            spec.kind(),
                            readers_named(reads).join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The preconditioner `--precond` names with the options of its own flags (the assembled
    /// IP's format and the matrix-free IP's stencil are the solve's to give). A bad
    /// `--fsai-setup-precision` is [`Error::InvalidParameter`].
    pub fn spec(&self) -> Result<PrecondSpec> {
        let block_size = self.block_size.unwrap_or(1);
        let setup_in_f32 = match self.fsai_setup_precision.as_str() {
            "f64" => false,
            "f32" => true,
            other => {
                return Err(Error::param(
                    "fsai_setup_precision",
                    format!("'{other}' (f64 or f32)"),
                ))
            }
        };
        let bilu0 = Bilu0Options {
            block_size,
            solve: self.trisolve,
            subdomains: self.subdomains,
            factorization: self.factorization,
        };
        Ok(match self.precond {
            PrecondKind::None => PrecondSpec::None,
            PrecondKind::Jacobi => PrecondSpec::Jacobi,
            PrecondKind::PointBlockJacobi => PrecondSpec::PointBlockJacobi { block_size },
            PrecondKind::BlockJacobi => PrecondSpec::BlockJacobi(bilu0),
            PrecondKind::Bilu0 => PrecondSpec::Bilu0(bilu0),
            PrecondKind::Isai => PrecondSpec::Isai(IsaiOptions {
                block_size,
                level: self.isai_level,
                factorization: self.factorization,
            }),
            PrecondKind::Ip => PrecondSpec::Ip(IpOptions {
                scaling: self.ip_scaling,
                ..IpOptions::default()
            }),
            PrecondKind::IpMatrixFree => PrecondSpec::IpMatrixFree { stencil: None },
            PrecondKind::Fsai => PrecondSpec::Fsai {
                options: FsaiOptions {
                    level: self.fsai_level,
                    tau: self.fsai_tau,
                    setup_in_f32,
                },
                factor_kernel: self.fsai_kernel,
            },
            PrecondKind::Afsai => PrecondSpec::Afsai {
                options: AfsaiOptions {
                    growth: AfsaiGrowth {
                        max_steps: self.afsai_max_steps,
                        per_step: self.afsai_step_size,
                        eps: self.afsai_eps,
                        stop: self.afsai_stop,
                    },
                    setup_in_f32,
                    max_batch_rows: self.afsai_batch_rows,
                },
                factor_kernel: self.fsai_kernel,
            },
            PrecondKind::Amg => PrecondSpec::Amg(AmgOptions {
                block_size,
                coarsening: self.amg_coarsening,
                smoother: self.amg_smoother,
                pre_sweeps: self.amg_sweeps,
                post_sweeps: self.amg_sweeps,
                strength: self.amg_strength,
                strength_decay: self.amg_strength_decay,
                high_contrast: self.amg_high_contrast,
                max_levels: self.amg_max_levels,
                coarse_size: self.amg_coarse_size,
                setup: self.amg_setup,
                precision: self.amg_precision,
                ..AmgOptions::default()
            }),
            PrecondKind::Ilu => PrecondSpec::Ilu(IluOptions {
                matching: self.ilu_matching,
                ordering: self.ilu_ordering,
                fill_level: self.ilu_fill,
                drop_tol: self.ilu_drop,
                max_fill: self.ilu_max_fill,
                shift: self.ilu_shift,
                pivot_threshold: self.ilu_pivot,
                solve: self.trisolve,
            }),
        })
    }
}

/// Whether a preconditioner reads the flag of clap id `id` ([`PrecondFlags::spec`]'s reading,
/// in terms of the spec where the spec has an accessor), or `None` for an id that is not a
/// preconditioner's option (`precond`, the solve's own flags).
fn readers(id: &str) -> Option<fn(&PrecondSpec) -> bool> {
    use PrecondKind as K;
    Some(match id {
        "precond_precision" => |s| s.kind() != K::None,
        "block_size" => |s| s.block_size().is_some(),
        "trisolve" => |s| s.triangular_solve().is_some(),
        "factorization" => |s| s.factorization().is_some(),
        "fsai_kernel" | "fsai_setup_precision" => |s| s.factor_kernel().is_some(),
        "subdomains" => |s| matches!(s.kind(), K::BlockJacobi | K::Bilu0),
        "isai_level" => |s| s.kind() == K::Isai,
        "ip_scaling" => |s| s.kind() == K::Ip,
        "fsai_level" | "fsai_tau" => |s| s.kind() == K::Fsai,
        _ if id.starts_with("afsai_") => |s| s.kind() == K::Afsai,
        _ if id.starts_with("amg_") => |s| s.kind() == K::Amg,
        _ if id.starts_with("ilu_") => |s| s.kind() == K::Ilu,
        _ => return None,
    })
}

/// The `--precond` names whose defaults `reads` accepts.
fn readers_named(reads: fn(&PrecondSpec) -> bool) -> Vec<&'static str> {
    PrecondKind::ALL
        .iter()
        .filter(|&&k| reads(&PrecondSpec::from(k)))
        .map(|k| k.name())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, Command};

    fn flags(argv: &[&str]) -> PrecondFlags {
        let m = PrecondFlags::augment_args(Command::new("t"))
            .try_get_matches_from(std::iter::once("t").chain(argv.iter().copied()))
            .unwrap();
        <PrecondFlags as clap::FromArgMatches>::from_arg_matches(&m).unwrap()
    }

    #[test]
    fn every_flag_but_precond_belongs_to_some_preconditioners_and_not_to_others() {
        for arg in PrecondFlags::augment_args(Command::new("t")).get_arguments() {
            let id = arg.get_id().as_str();
            if id == "precond" {
                assert!(readers(id).is_none());
                continue;
            }
            let reads = readers(id).unwrap_or_else(|| panic!("flag {id} has no readers"));
            let named = readers_named(reads);
            assert!(!named.is_empty(), "no preconditioner reads {id}");
            assert!(named.len() < PrecondKind::ALL.len(), "{id} read by all");
        }
    }

    #[test]
    fn a_flag_of_another_preconditioner_is_refused_and_its_own_passes() {
        let f = flags(&["--precond", "jacobi", "--amg-strength", "0.1"]);
        let e = f.check_given(&["precond", "amg_strength"]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("--amg-strength") && text.contains("jacobi"),
            "{text}"
        );
        assert!(text.contains("amg"), "{text}");
        let f = flags(&["--precond", "amg", "--amg-strength", "0.1"]);
        f.check_given(&["precond", "amg_strength"]).unwrap();
        // Shared flags: --trisolve is read by bilu0 and ilu, not by fsai.
        for (kind, ok) in [
            ("bilu0", true),
            ("ilu", true),
            ("block-jacobi", true),
            ("fsai", false),
        ] {
            let f = flags(&["--precond", kind, "--trisolve", "exact"]);
            assert_eq!(f.check_given(&["trisolve"]).is_ok(), ok, "{kind}");
        }
        let f = flags(&["--precond", "afsai", "--fsai-kernel", "vector"]);
        f.check_given(&["fsai_kernel"]).unwrap();
        assert!(f.check_given(&["fsai_level"]).is_err());
        // Not a preconditioner's option: passes.
        f.check_given(&["rtol", "json"]).unwrap();
    }
}
