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
/// `restart`, `precond` (the command line's `--precond` names) and its parameters
/// (`block_size` sets the AMG block size too; `amg_sweeps` sets pre- and post-smoothing),
/// `variant`, `execution`, `backend`, `format`, and `history` (`true` or `false`: whether the
/// report keeps the residual history). Ranges are checked where the options are used (the
/// solver's builder validates the parameters), not here.
///
/// Errors: an unknown `key` is [`Error::InvalidParameter`] naming the known ones; a value that
/// does not parse is the parser's error ([`Error::InvalidParameter`] naming the option).
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
        "restart" => o.params.restart = number(key, v)?,
        "precond" => p.kind = v.parse()?,
        "block_size" => {
            p.block_size = number(key, v)?;
            p.amg.block_size = p.block_size;
        }
        "trisolve" => p.solve = v.parse()?,
        "subdomains" => p.subdomains = number(key, v)?,
        "isai_level" => p.isai_level = number(key, v)?,
        "ip_scaling" => p.ip_scaling = v.parse()?,
        "fsai_level" => p.fsai.level = number(key, v)?,
        "amg_coarsening" => p.amg.coarsening = v.parse()?,
        "amg_smoother" => p.amg.smoother = v.parse()?,
        "amg_sweeps" => {
            p.amg.pre_sweeps = number(key, v)?;
            p.amg.post_sweeps = p.amg.pre_sweeps;
        }
        "amg_strength" => p.amg.strength = number(key, v)?,
        "amg_strength_decay" => p.amg.strength_decay = number(key, v)?,
        "amg_max_levels" => p.amg.max_levels = number(key, v)?,
        "amg_coarse_size" => p.amg.coarse_size = number(key, v)?,
        "amg_setup" => p.amg.setup = v.parse()?,
        "amg_precision" => p.amg.precision = v.parse()?,
        "ilu_matching" => p.ilu.matching = v.parse()?,
        "ilu_ordering" => p.ilu.ordering = v.parse()?,
        "ilu_fill" => p.ilu.fill_level = Some(number(key, v)?),
        "ilu_drop" => p.ilu.drop_tol = Some(number(key, v)?),
        "ilu_max_fill" => p.ilu.max_fill = Some(number(key, v)?),
        "ilu_shift" => p.ilu.shift = number(key, v)?,
        "ilu_pivot" => p.ilu.pivot_threshold = number(key, v)?,
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
            "amg_precision" => "f32",
            "ilu_shift" | "history" => "false",
            "variant" => "classical",
            "execution" => "synchronous",
            "backend" => "host",
            "format" => "csr",
            _ => "2",
        };
        for name in NAMES {
            let mut o = SolveOptions::default();
            set(&mut o, name, valid(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
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
            ("amg_setup", "host"),
            ("ilu_fill", "1"),
            ("ilu_drop", "1e-3"),
            ("ilu_shift", "true"),
            ("ilu_pivot", "0"),
            ("fsai_level", "2"),
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
        assert_eq!(o.params.restart, 12);
        assert_eq!(o.precond.kind, PrecondKind::Amg);
        assert_eq!((o.precond.block_size, o.precond.amg.block_size), (3, 3));
        assert_eq!(
            (o.precond.amg.pre_sweeps, o.precond.amg.post_sweeps),
            (2, 2)
        );
        assert_eq!(o.precond.amg.max_levels, 5);
        assert_eq!(o.precond.amg.strength_decay, 1.0);
        assert_eq!(o.precond.amg.setup, crate::precond::AmgSetup::Host);
        assert_eq!(o.precond.ilu.fill_level, Some(1));
        assert_eq!(o.precond.ilu.drop_tol, Some(1e-3));
        assert!(o.precond.ilu.shift);
        assert_eq!(o.precond.ilu.pivot_threshold, 0.0);
        assert_eq!(o.precond.fsai.level, 2);
        assert_eq!(o.params.variant, Variant::Classical);
        assert_eq!(o.params.execution, Execution::Synchronous);
        assert_eq!(o.backend, "host".parse::<BackendChoice>().unwrap());
        assert_eq!(o.format, "sell".parse::<MatrixFormat>().unwrap());
        assert!(!o.params.record_history);
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
