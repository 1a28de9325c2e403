//! Packed arguments: in device-address mode every parameter of a kernel is a by-value scalar, so
//! the whole argument list can travel as one struct of 64-bit words, set with one
//! `clSetKernelArg` and read by the runtime as one argument.
//!
//! Why: NVIDIA's OpenCL runtime spends ~0.06 us of host time per by-value argument of every
//! enqueue (H200, `examples/probes/opencl_launch_cost.rs`: 16 `ulong` arguments 5.72 us per enqueue,
//! the same 16 values in one struct argument 4.74 us, 1 argument 4.94 us). The fused SpMV has
//! 17 arguments.
//!
//! How: at program build the source of every `pk_kernel` whose parameters are all
//! `PK_GLOBAL(T, name)` / `PK_GLOBAL_RESTRICT(T, name)` or `const uint|int|ulong|SCALAR name` is
//! rewritten from
//! ```text
//! pk_kernel void fill(PK_GLOBAL(SCALAR, x), const uint n, const SCALAR value) {
//! ```
//! to
//! ```text
//! typedef struct { ulong v[3]; } pk_args_fill;
//! pk_kernel void fill(const pk_args_fill pk_args) {
//!     const ulong x_address = pk_args.v[0]; const uint n = (uint)pk_args.v[1];
//!     const SCALAR value = as_double(pk_args.v[2]);
//! ```
//! (the body is untouched: `PK_BIND` reads `x_address` as before). The host writes word `k` from
//! argument `k`: a buffer's device address, or the argument's bytes zero-extended (little-endian
//! host and device; the address self-check at program build launches a packed kernel, so a
//! device that reads the words differently turns the mode off). The `.cl` files do not change;
//! kernels with other parameters (`buffer_address`) keep their plain signature.

use crate::error::{Error, Result};
use crate::scalar::Precision;
use std::collections::HashMap;

/// Most parameters a packed kernel may have (more stay unpacked): 48 words, 384 bytes, below
/// the 1024 bytes every full-profile device takes as a kernel's arguments
/// (`CL_DEVICE_MAX_PARAMETER_SIZE`). The block kernels of several right-hand sides have the
/// most: `block_cg_update`, 44.
pub(crate) const MAX_WORDS: usize = 48;

/// The declaration that starts every kernel (see `kernels/dialect/opencl.h`).
const KERNEL_START: &str = "\npk_kernel void ";

/// What the host must pass for one word of a packed kernel: a buffer (its device address) or a
/// by-value argument of this many bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WordKind {
    Address,
    Value(usize),
}

/// `source` with every packable kernel rewritten (see the module documentation), and the words
/// of each kernel that was.
pub(crate) fn pack_source(
    source: &str,
    precision: Precision,
) -> Result<(String, HashMap<String, Vec<WordKind>>)> {
    let bad = |what: String| Error::KernelBuild {
        backend: super::cl::BACKEND.into(),
        log: format!("packing kernel arguments: {what}"),
    };
    let mut out = String::with_capacity(source.len() + source.len() / 4);
    let mut packed = HashMap::new();
    let mut rest = source;
    while let Some(at) = rest.find(KERNEL_START) {
        let decl = at + KERNEL_START.len();
        out.push_str(&rest[..at + 1]);
        let tail = &rest[decl..];
        let open = tail
            .find('(')
            .ok_or_else(|| bad("a kernel declaration without `(`".into()))?;
        let name = tail[..open].trim().to_string();
        let close = open
            + matching_paren(&tail[open..])
                .ok_or_else(|| bad(format!("{name}: unbalanced parentheses")))?;
        let after = &tail[close + 1..];
        // A declaration without a body right after its parameters (a prototype) stays as is.
        let brace = after.find('{').filter(|&b| after[..b].trim().is_empty());
        let params: Option<Vec<(Param, bool)>> = split_params(&tail[open + 1..close])
            .iter()
            .map(|p| Param::parse(p))
            .collect();
        match (params, brace) {
            (Some(params), Some(brace))
                if is_ident(&name) && !params.is_empty() && params.len() <= MAX_WORDS =>
            {
                let words = params.len();
                out.push_str(&format!(
                    "typedef struct {{ ulong v[{words}]; }} pk_args_{name};\n"
                ));
                out.push_str(&format!(
                    "pk_kernel void {name}(const pk_args_{name} pk_args) {{\n"
                ));
                for (k, (p, konst)) in params.iter().enumerate() {
                    out.push_str(if *konst { "    const " } else { "    " });
                    out.push_str(&p.declaration(k, precision));
                    out.push('\n');
                }
                let kinds = params.iter().map(|(p, _)| p.word_kind(precision)).collect();
                packed.insert(name, kinds);
                rest = &after[brace + 1..];
            }
            _ => {
                // Not packable (or not a definition): keep the declaration as written.
                out.push_str(&rest[at + 1..decl]);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    Ok((out, packed))
}

/// Index of the `)` matching the `(` that `s` starts with.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The parameters of a list, split at top-level commas.
fn split_params(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !list[start..].trim().is_empty() {
        out.push(list[start..].trim());
    }
    out
}

/// One packable parameter.
#[derive(Debug, PartialEq)]
enum Param {
    /// `PK_GLOBAL(T, name)` or `PK_GLOBAL_RESTRICT(T, name)`: the device address.
    Address(String),
    Uint(String),
    Int(String),
    Ulong(String),
    Scalar(String),
}

impl Param {
    /// The parameter and whether its copy is `const` (as declared; an address always is, the
    /// kernel only reads it through `PK_BIND`).
    fn parse(p: &str) -> Option<(Self, bool)> {
        for macro_name in ["PK_GLOBAL(", "PK_GLOBAL_RESTRICT("] {
            if let Some(inner) = p.strip_prefix(macro_name) {
                let inner = inner.strip_suffix(')')?;
                let name = inner.rsplit_once(',')?.1.trim();
                return is_ident(name).then(|| (Param::Address(name.to_string()), true));
            }
        }
        let words: Vec<&str> = p.split_whitespace().collect();
        let (ty, name, konst) = match words.as_slice() {
            ["const", ty, name] => (*ty, *name, true),
            [ty, name] => (*ty, *name, false),
            _ => return None,
        };
        if !is_ident(name) {
            return None;
        }
        let name = name.to_string();
        let param = match ty {
            "uint" => Param::Uint(name),
            "int" => Param::Int(name),
            "ulong" => Param::Ulong(name),
            "SCALAR" => Param::Scalar(name),
            _ => return None,
        };
        Some((param, konst))
    }

    /// What the host passes for this parameter.
    fn word_kind(&self, precision: Precision) -> WordKind {
        match self {
            Param::Address(_) => WordKind::Address,
            Param::Uint(_) | Param::Int(_) => WordKind::Value(4),
            Param::Ulong(_) => WordKind::Value(8),
            Param::Scalar(_) => WordKind::Value(match precision {
                Precision::F32 => 4,
                Precision::F64 => 8,
            }),
        }
    }

    /// The declaration (without `const`) that recreates the parameter from word `k` of
    /// `pk_args`.
    fn declaration(&self, k: usize, precision: Precision) -> String {
        let word = format!("pk_args.v[{k}]");
        match self {
            Param::Address(n) => format!("ulong {n}_address = {word};"),
            Param::Uint(n) => format!("uint {n} = (uint){word};"),
            Param::Int(n) => format!("int {n} = as_int((uint){word});"),
            Param::Ulong(n) => format!("ulong {n} = {word};"),
            Param::Scalar(n) => match precision {
                Precision::F64 => format!("SCALAR {n} = as_double({word});"),
                Precision::F32 => format!("SCALAR {n} = as_float((uint){word});"),
            },
        }
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::ops::KERNELS;

    #[test]
    fn a_kernel_is_rewritten_to_one_struct_argument() {
        let src = "/* x */\npk_kernel void fill(PK_GLOBAL(SCALAR, x), const uint n,\n    const SCALAR value) {\n    PK_BIND(SCALAR, x);\n}\n";
        let (out, packed) = pack_source(src, Precision::F64).unwrap();
        assert_eq!(
            packed.get("fill").map(Vec::as_slice),
            Some(&[WordKind::Address, WordKind::Value(4), WordKind::Value(8)][..])
        );
        assert!(
            out.contains("typedef struct { ulong v[3]; } pk_args_fill;"),
            "{out}"
        );
        assert!(
            out.contains("pk_kernel void fill(const pk_args_fill pk_args) {"),
            "{out}"
        );
        assert!(
            out.contains("const ulong x_address = pk_args.v[0];"),
            "{out}"
        );
        assert!(out.contains("const uint n = (uint)pk_args.v[1];"), "{out}");
        assert!(
            out.contains("const SCALAR value = as_double(pk_args.v[2]);"),
            "{out}"
        );
        assert!(out.ends_with("    PK_BIND(SCALAR, x);\n}\n"), "{out}");
        let (out32, _) = pack_source(src, Precision::F32).unwrap();
        assert!(out32.contains("as_float((uint)pk_args.v[2])"), "{out32}");
    }

    #[test]
    fn every_library_kernel_but_buffer_address_is_packed() {
        let (out, packed) = pack_source(
            &super::super::program::full_source(Precision::F64),
            Precision::F64,
        )
        .unwrap();
        for (_, names) in KERNELS {
            for &name in names.iter() {
                if name == "buffer_address" {
                    assert!(!packed.contains_key(name));
                    assert!(
                        out.contains("pk_kernel void buffer_address(__global const uchar *buffer")
                    );
                } else {
                    assert!(
                        packed.get(name).is_some_and(|w| w.len() >= 2),
                        "{name} not packed"
                    );
                }
            }
        }
        assert_eq!(
            out.matches("pk_kernel void ").count(),
            KERNELS.iter().map(|(_, n)| n.len()).sum::<usize>()
        );
    }

    #[test]
    fn parameters_outside_the_scheme_leave_the_kernel_alone() {
        for p in [
            "__global float *x",
            "const float4 v",
            "PK_GLOBAL(SCALAR)",
            "const uint",
        ] {
            assert_eq!(Param::parse(p), None, "{p}");
        }
        assert_eq!(
            Param::parse("PK_GLOBAL_RESTRICT(const uint, row_ptr)"),
            Some((Param::Address("row_ptr".into()), true))
        );
        assert_eq!(
            Param::parse("const int slot"),
            Some((Param::Int("slot".into()), true))
        );
        assert_eq!(
            Param::parse("uint n"),
            Some((Param::Uint("n".into()), false))
        );
    }
}
