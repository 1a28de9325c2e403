//! [`SolveOptions`] set by option name and text value: the one table of names that the
//! bindings share (the C API's `"key=value;key=value"` strings, the Python package's keyword
//! arguments). Values are read with the crate's own `FromStr` impls, so a name means the same
//! thing as the command line's option of that name.
//!
//! ```
//! use pipekrylov::{options_kv, Method, SolveOptions};
//! let mut o = SolveOptions::default();
//! options_kv::set(&mut o, "method", "cg").unwrap();
//! options_kv::set(&mut o, "rtol", "1e-10").unwrap();
//! assert_eq!(o.method, Method::Cg);
//! assert_eq!(o.params.rtol, 1e-10);
//! assert!(options_kv::set(&mut o, "tolerance", "1e-10").is_err());
//! ```

use crate::error::{Error, Result};
use crate::precond::{
    AmgOptions, Bilu0Options, FsaiOptions, IluOptions, IpOptions, IsaiOptions, PrecondSpec,
};
use crate::SolveOptions;
use std::str::FromStr;

/// The option names [`set`] accepts, in the order the bindings document them.
pub const NAMES: &[&str] = &[
    "method",
    "rtol",
    "atol",
    "maxiter",
    "restart",
    "precond",
    "precond_precision",
    "block_size",
    "trisolve",
    "subdomains",
    "isai_level",
    "ip_scaling",
    "fsai_level",
    "amg_coarsening",
    "amg_smoother",
    "amg_sweeps",
    "amg_strength",
    "amg_strength_decay",
    "amg_high_contrast",
    "amg_max_levels",
    "amg_coarse_size",
    "amg_setup",
    "amg_precision",
    "ilu_matching",
    "ilu_ordering",
    "ilu_fill",
    "ilu_drop",
    "ilu_max_fill",
    "ilu_shift",
    "ilu_pivot",
    "variant",
    "execution",
    "backend",
    "format",
    "history",
];

/// Set the option `key` of `options` to the text `value` (surrounding whitespace ignored).
///
/// The names are [`NAMES`]: `method` (cg, bicgstab, gmres), `rtol`, `atol`, `maxiter`,
/// `restart`, `precond` (the command line's `--precond` names: the preconditioner with its
/// defaults, keeping the block size, triangular solve and factorization set before) and its
/// parameters, which apply to the preconditioner set before them (`amg_sweeps` sets pre- and
/// post-smoothing),
/// `variant`, `execution`, `backend`, `format`, and `history` (`true` or `false`: whether the
/// report keeps the residual history). Ranges are checked where the options are used (the
/// solver's builder validates the parameters), not here.
///
/// Errors: an unknown `key` is [`Error::InvalidParameter`] naming the known ones, and so is a
/// parameter of another preconditioner than the one set (`amg_strength` with `precond=bilu0`);
/// a value that does not parse is the parser's error ([`Error::InvalidParameter`] naming the
/// option).
pub fn set(options: &mut SolveOptions, key: &str, value: &str) -> Result<()> {
    let key = key.trim();
    let v = value.trim();
    let o = options;
    let p = &mut o.precond;
    match key {
        "method" => o.method = v.parse()?,
        "rtol" => o.params.rtol = number(key, v)?,
        "atol" => o.params.atol = number(key, v)?,
        "maxiter" => o.params.max_iter = number(key, v)?,
        "restart" => o.params.gmres.restart = number(key, v)?,
        "precond" => *p = p.with_kind(v.parse()?),
        "precond_precision" => o.precond_precision = v.parse()?,
        "block_size" => *of(key, p, PrecondSpec::block_size_mut)? = number(key, v)?,
        "trisolve" => *of(key, p, PrecondSpec::triangular_solve_mut)? = v.parse()?,
        "subdomains" => of(key, p, bilu0)?.subdomains = number(key, v)?,
        "isai_level" => of(key, p, isai)?.level = number(key, v)?,
        "ip_scaling" => of(key, p, ip)?.scaling = v.parse()?,
        "fsai_level" => of(key, p, fsai)?.level = number(key, v)?,
        "amg_coarsening" => of(key, p, amg)?.coarsening = v.parse()?,
        "amg_smoother" => of(key, p, amg)?.smoother = v.parse()?,
        "amg_sweeps" => {
            let a = of(key, p, amg)?;
            a.pre_sweeps = number(key, v)?;
            a.post_sweeps = a.pre_sweeps;
        }
        "amg_strength" => of(key, p, amg)?.strength = number(key, v)?,
        "amg_strength_decay" => of(key, p, amg)?.strength_decay = number(key, v)?,
        "amg_high_contrast" => of(key, p, amg)?.high_contrast = number(key, v)?,
        "amg_max_levels" => of(key, p, amg)?.max_levels = number(key, v)?,
        "amg_coarse_size" => of(key, p, amg)?.coarse_size = number(key, v)?,
        "amg_setup" => of(key, p, amg)?.setup = v.parse()?,
        "amg_precision" => of(key, p, amg)?.precision = v.parse()?,
        "ilu_matching" => of(key, p, ilu)?.matching = v.parse()?,
        "ilu_ordering" => of(key, p, ilu)?.ordering = v.parse()?,
        "ilu_fill" => of(key, p, ilu)?.fill_level = Some(number(key, v)?),
        "ilu_drop" => of(key, p, ilu)?.drop_tol = Some(number(key, v)?),
        "ilu_max_fill" => of(key, p, ilu)?.max_fill = Some(number(key, v)?),
        "ilu_shift" => of(key, p, ilu)?.shift = number(key, v)?,
        "ilu_pivot" => of(key, p, ilu)?.pivot_threshold = number(key, v)?,
        "variant" => o.params.variant = v.parse()?,
        "execution" => o.params.execution = v.parse()?,
        "backend" => o.backend = v.parse()?,
        "format" => o.format = v.parse()?,
        "history" => o.params.record_history = number(key, v)?,
        _ => {
            return Err(Error::param(
                key,
                format!("unknown option (the options are: {})", NAMES.join(", ")),
            ))
        }
    }
    Ok(())
}

/// [`set`] for each pair, the `precond` pairs first (the preconditioner's options then apply
/// to it whatever their order), the others in order: the bindings' dictionaries and option
/// strings. The first error stops it.
///
/// ```
/// use pipekrylov::options_kv;
/// use pipekrylov::precond::PrecondSpec;
/// let mut o = pipekrylov::SolveOptions::default();
/// options_kv::set_all(&mut o, [("amg_strength", "0.1"), ("precond", "amg")]).unwrap();
/// assert!(matches!(o.precond, PrecondSpec::Amg(a) if a.strength == 0.1));
/// ```
pub fn set_all<K: AsRef<str>, V: AsRef<str>>(
    options: &mut SolveOptions,
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Result<()> {
    let pairs: Vec<(K, V)> = pairs.into_iter().collect();
    let is_precond = |k: &K| k.as_ref().trim() == "precond";
    for (k, v) in pairs.iter().filter(|(k, _)| is_precond(k)) {
        set(options, k.as_ref(), v.as_ref())?;
    }
    for (k, v) in pairs.iter().filter(|(k, _)| !is_precond(k)) {
        set(options, k.as_ref(), v.as_ref())?;
    }
    Ok(())
}

/// The field of the preconditioner's options that `key` sets, or [`Error::InvalidParameter`]
/// naming the preconditioner, which does not read it.
fn of<'a, F: ?Sized>(
    key: &str,
    p: &'a mut PrecondSpec,
    field: impl FnOnce(&'a mut PrecondSpec) -> Option<&'a mut F>,
) -> Result<&'a mut F> {
    let kind = p.kind();
    field(p).ok_or_else(|| {
        Error::param(
            key,
            format!("the preconditioner {kind} has no such option (set `precond` first)"),
        )
    })
}

fn bilu0(p: &mut PrecondSpec) -> Option<&mut Bilu0Options> {
    match p {
        PrecondSpec::Bilu0(o) | PrecondSpec::BlockJacobi(o) => Some(o),
        _ => None,
    }
}

fn isai(p: &mut PrecondSpec) -> Option<&mut IsaiOptions> {
    match p {
        PrecondSpec::Isai(o) => Some(o),
        _ => None,
    }
}

fn ip(p: &mut PrecondSpec) -> Option<&mut IpOptions> {
    match p {
        PrecondSpec::Ip(o) => Some(o),
        _ => None,
    }
}

fn fsai(p: &mut PrecondSpec) -> Option<&mut FsaiOptions> {
    match p {
        PrecondSpec::Fsai { options, .. } => Some(options),
        _ => None,
    }
}

fn amg(p: &mut PrecondSpec) -> Option<&mut AmgOptions> {
    match p {
        PrecondSpec::Amg(o) => Some(o),
        _ => None,
    }
}

fn ilu(p: &mut PrecondSpec) -> Option<&mut IluOptions> {
    match p {
        PrecondSpec::Ilu(o) => Some(o),
        _ => None,
    }
}

/// `value` read as a number or boolean (`T` is a primitive: `f64`, `usize`, `bool`) with the
/// standard library's `FromStr`; its error as [`Error::InvalidParameter`] naming `key`.
fn number<T: FromStr>(key: &str, value: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    value.parse().map_err(|e: T::Err| {
        Error::param(
            key,
            format!("'{value}' is not a {}: {e}", std::any::type_name::<T>()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{BackendChoice, MatrixFormat};
    use crate::precond::PrecondKind;
    use crate::solver::{Execution, Variant};
    use crate::Method;

    fn with(pairs: &[(&str, &str)]) -> Result<SolveOptions> {
        let mut o = SolveOptions::default();
        for (k, v) in pairs {
            set(&mut o, k, v)?;
        }
        Ok(o)
    }

    #[test]
    fn every_name_is_accepted_with_a_valid_value() {
        let valid = |name: &str| match name {
            "method" => "cg",
            "rtol" | "atol" | "ilu_drop" => "1e-6",
            "amg_strength" | "amg_strength_decay" => "0.25",
            "amg_high_contrast" => "inf",
            "ilu_max_fill" => "2.5",
            "ilu_pivot" => "0.5",
            "precond" => "jacobi",
            "trisolve" => "exact",
            "ip_scaling" => "auto",
            "amg_coarsening" => "sa",
            "amg_smoother" => "jacobi",
            "ilu_matching" => "off",
            "ilu_ordering" => "none",
            "amg_setup" => "device",
            "amg_precision" | "precond_precision" => "f32",
            "ilu_shift" | "history" => "false",
            "variant" => "classical",
            "execution" => "synchronous",
            "backend" => "host",
            "format" => "csr",
            _ => "2",
        };
        // The preconditioner that reads each preconditioner option.
        let owner = |name: &str| match name {
            "block_size" | "trisolve" | "subdomains" => Some("bilu0"),
            "isai_level" => Some("isai"),
            "ip_scaling" => Some("ip"),
            "fsai_level" => Some("fsai"),
            n if n.starts_with("amg_") => Some("amg"),
            n if n.starts_with("ilu_") => Some("ilu"),
            _ => None,
        };
        for name in NAMES {
            let mut o = SolveOptions::default();
            if let Some(kind) = owner(name) {
                set(&mut o, "precond", kind).unwrap();
            }
            set(&mut o, name, valid(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn an_option_of_another_preconditioner_is_an_error() {
        for (precond, key, value) in [
            ("none", "block_size", "2"),
            ("jacobi", "trisolve", "exact"),
            ("bilu0", "amg_strength", "0.1"),
            ("amg", "ilu_fill", "1"),
            ("ilu", "isai_level", "2"),
        ] {
            let e = with(&[("precond", precond), (key, value)]).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidParameter { name, reason }
                    if name == key && reason.contains(precond) && reason.contains("set `precond` first")),
                "{precond} {key}: {e}"
            );
        }
    }

    #[test]
    fn another_preconditioner_keeps_the_shared_options() {
        let o = with(&[
            ("precond", "bilu0"),
            ("block_size", "3"),
            ("trisolve", "sweeps:2"),
            ("precond", "ilu"),
        ])
        .unwrap();
        let PrecondSpec::Ilu(ilu) = o.precond else {
            panic!("{:?}", o.precond)
        };
        assert_eq!(ilu.solve, crate::precond::TriangularSolve::Sweeps(2));
        let o = with(&[
            ("precond", "bilu0"),
            ("block_size", "3"),
            ("precond", "amg"),
        ])
        .unwrap();
        assert_eq!(o.precond.block_size(), Some(3));
    }

    #[test]
    fn values_land_in_their_fields() {
        let o = with(&[
            ("method", "bicgstab"),
            ("rtol", " 1e-10 "),
            ("atol", "1e-14"),
            ("maxiter", "77"),
            ("restart", "12"),
            ("precond", "amg"),
            ("block_size", "3"),
            ("amg_sweeps", "2"),
            ("amg_max_levels", "5"),
            ("amg_strength_decay", "1"),
            ("amg_high_contrast", "1e6"),
            ("amg_setup", "host"),
            ("variant", "classical"),
            ("execution", "synchronous"),
            ("backend", "host"),
            ("format", "sell"),
            ("history", "false"),
        ])
        .unwrap();
        assert_eq!(o.method, Method::BiCgStab);
        assert_eq!(o.params.rtol, 1e-10);
        assert_eq!(o.params.atol, 1e-14);
        assert_eq!(o.params.max_iter, 77);
        assert_eq!(o.params.gmres.restart, 12);
        assert_eq!(o.precond.kind(), PrecondKind::Amg);
        let PrecondSpec::Amg(amg) = o.precond else {
            panic!("{:?}", o.precond)
        };
        assert_eq!(amg.block_size, 3);
        assert_eq!((amg.pre_sweeps, amg.post_sweeps), (2, 2));
        assert_eq!(amg.max_levels, 5);
        assert_eq!(amg.strength_decay, 1.0);
        assert_eq!(amg.high_contrast, 1e6);
        assert_eq!(amg.setup, crate::precond::AmgSetup::Host);
        assert_eq!(o.params.variant, Variant::Classical);
        assert_eq!(o.params.execution, Execution::Synchronous);
        assert_eq!(o.backend, "host".parse::<BackendChoice>().unwrap());
        assert_eq!(o.format, "sell".parse::<MatrixFormat>().unwrap());
        assert!(!o.params.record_history);

        let o = with(&[
            ("precond", "ilu"),
            ("ilu_fill", "1"),
            ("ilu_drop", "1e-3"),
            ("ilu_shift", "true"),
            ("ilu_pivot", "0"),
        ])
        .unwrap();
        let PrecondSpec::Ilu(ilu) = o.precond else {
            panic!("{:?}", o.precond)
        };
        assert_eq!(ilu.fill_level, Some(1));
        assert_eq!(ilu.drop_tol, Some(1e-3));
        assert!(ilu.shift);
        assert_eq!(ilu.pivot_threshold, 0.0);
        let o = with(&[("precond", "fsai"), ("fsai_level", "2")]).unwrap();
        assert!(matches!(o.precond, PrecondSpec::Fsai { options, .. } if options.level == 2));
    }

    #[test]
    fn an_unknown_key_names_the_known_ones() {
        let e = with(&[("tolerance", "1e-8")]).unwrap_err();
        let Error::InvalidParameter { name, reason } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(name, "tolerance");
        assert!(reason.contains("method, rtol, atol"), "{reason}");
        assert!(reason.contains("history"), "{reason}");
    }

    #[test]
    fn a_bad_value_is_the_parsers_error() {
        for (k, v) in [
            ("method", "lsqr"),
            ("precond", "magic"),
            ("rtol", "small"),
            ("maxiter", "-3"),
            ("history", "yes"),
            ("backend", "abacus"),
            ("format", "dense"),
        ] {
            let e = with(&[(k, v)]).unwrap_err();
            assert!(
                matches!(e, Error::InvalidParameter { .. }),
                "{k}={v}: {e:?}"
            );
        }
        let e = with(&[("rtol", "small")]).unwrap_err();
        assert!(
            e.to_string().contains("rtol") && e.to_string().contains("small"),
            "{e}"
        );
    }

    #[test]
    fn the_names_are_unique() {
        let mut names = NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), NAMES.len());
    }
}
