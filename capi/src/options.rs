//! The options string of `pk_solver_create`: `"key=value;key=value"`, each pair set by the
//! crate's shared table ([`pipekrylov::options_kv`]).

use pipekrylov::{options_kv, SolveOptions};

use crate::error::Failure;

/// The options of `text`: pairs separated by `;`, key and value by the first `=`, whitespace
/// around both ignored, empty pairs skipped (so a trailing `;` is fine). Later pairs override
/// earlier ones; `precond` is set first, so the preconditioner's options may come before it.
/// Errors ([`crate::PK_ERR_INVALID_INPUT`]): a pair without `=`, an unknown key
/// (the message lists the known ones), a bad value (the parser's message).
pub(crate) fn parse(text: &str) -> Result<SolveOptions, Failure> {
    let mut pairs = Vec::new();
    for pair in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(Failure::invalid(format!(
                "option '{pair}' has no '=' (expected key=value; the keys are: {})",
                options_kv::NAMES.join(", ")
            )));
        };
        pairs.push((key, value));
    }
    let mut options = SolveOptions::default();
    options_kv::set_all(&mut options, pairs)?;
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PK_ERR_INVALID_INPUT;
    use pipekrylov::precond::PrecondKind;
    use pipekrylov::Method;

    #[test]
    fn pairs_are_read_in_order() {
        let o = parse(" method = cg ; precond=jacobi;rtol=1e-10;; rtol=1e-9;").unwrap();
        assert_eq!(o.method, Method::Cg);
        assert_eq!(o.precond.kind(), PrecondKind::Jacobi);
        assert_eq!(o.params.rtol, 1e-9);
        assert_eq!(parse("").unwrap(), SolveOptions::default());
    }

    #[test]
    fn malformed_pairs_and_unknown_keys_are_invalid_input() {
        for text in ["method", "tolerance=1e-8", "rtol=abc", "method=lsqr"] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.code, PK_ERR_INVALID_INPUT, "{text}: {}", e.message);
        }
        assert!(parse("tol=1").unwrap_err().message.contains("rtol"));
    }
}
