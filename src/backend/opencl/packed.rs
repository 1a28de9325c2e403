//! The program source in device-address mode (`-D PK_ADDRESS_ARGS`, see `address.rs`): every
//! buffer parameter `PK_GLOBAL(T, name)` is a by-value `ulong name_address`, bound back to its
//! pointer at the top of the kernel's body by this rewrite, and every kernel whose parameters are
//! all by-value scalars then can have the whole argument list travel as one struct of 64-bit
//! words, set with one `clSetKernelArg` and read by the runtime as one argument (packed
//! arguments).
//!
//! Why the bindings here: a kernel's source names each buffer once, in its parameter list; the
//! other builds (CUDA, OpenCL with `cl_mem` arguments) take `PK_GLOBAL(T, name)` as the pointer
//! itself, so only this mode needs a statement per buffer, and writing it here keeps it out of
//! every kernel's body.
//!
//! Why packing: NVIDIA's OpenCL runtime spends ~0.06 us of host time per by-value argument of every
//! enqueue (H200, `examples/probes/opencl_launch_cost.rs`: 16 `ulong` arguments 5.72 us per enqueue,
//! the same 16 values in one struct argument 4.74 us, 1 argument 4.94 us). The fused SpMV has
//! 17 arguments.
//!
//! How: at program build the source of every `pk_kernel` definition gets, after its `{`, one
//! `__global T *[restrict] name = (__global T *)name_address;` per `PK_GLOBAL(T, name)` /
//! `PK_GLOBAL_RESTRICT(T, name)` parameter. Packed, a kernel whose parameters are all of those
//! or `const uint|int|ulong|SCALAR name` is rewritten from
//! ```text
//! pk_kernel void fill(PK_GLOBAL(SCALAR, x), const uint n, const SCALAR value) {
//! ```
//! to
//! ```text
//! typedef struct { ulong v[3]; } pk_args_fill;
//! pk_kernel void fill(const pk_args_fill pk_args) {
//!     const ulong x_address = pk_args.v[0]; const uint n = (uint)pk_args.v[1];
//!     const SCALAR value = as_double(pk_args.v[2]);
//!     __global SCALAR *x = (__global SCALAR *)x_address;
//! ```
//! (the rest of the body is untouched). The host writes word `k` from argument `k`: a buffer's
//! device address, or the argument's bytes zero-extended (little-endian host and device; the
//! address self-check at program build launches a packed kernel, so a device that reads the
//! words differently turns the mode off). The `.kc` files do not change; kernels with other
//! parameters (`buffer_address`) keep their plain signature.

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

/// `source` in device-address mode: every kernel's buffer parameters bound at the top of its
/// body and, with `packed`, every packable kernel's parameters packed (see the module
/// documentation); the words of each kernel that was packed.
pub(crate) fn address_source(
    source: &str,
    precision: Precision,
    packed: bool,
) -> Result<(String, HashMap<String, Vec<WordKind>>)> {
    let bad = |what: String| Error::KernelBuild {
        backend: super::cl::BACKEND.into(),
        log: format!("device-address arguments: {what}"),
    };
    let mut out = String::with_capacity(source.len() + source.len() / 4);
    let mut words_of = HashMap::new();
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
        let Some(brace) = after.find('{').filter(|&b| after[..b].trim().is_empty()) else {
            out.push_str(&rest[at + 1..decl]);
            rest = tail;
            continue;
        };
        let list = split_params(&tail[open + 1..close]);
        let bindings: String = list.iter().filter_map(|p| binding(p)).collect();
        let params: Option<Vec<(Param, bool)>> = list.iter().map(|p| Param::parse(p)).collect();
        match params {
            Some(params)
                if packed && is_ident(&name) && !params.is_empty() && params.len() <= MAX_WORDS =>
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
                words_of.insert(name, kinds);
            }
            _ => {
                // Not packed: the declaration as written.
                out.push_str(&rest[at + 1..decl]);
                out.push_str(&tail[..close + 1 + brace + 1]);
                out.push('\n');
            }
        }
        out.push_str(&bindings);
        rest = &after[brace + 1..];
    }
    out.push_str(rest);
    Ok((out, words_of))
}

/// The statement that binds a buffer parameter (`PK_GLOBAL(T, name)`, `PK_GLOBAL_RESTRICT(T,
/// name)`) to its pointer at the top of the body, with its line break; `None` for any other
/// parameter.
fn binding(param: &str) -> Option<String> {
    let (inner, restrict) = match param.strip_prefix("PK_GLOBAL_RESTRICT(") {
        Some(inner) => (inner, "restrict "),
        None => (param.strip_prefix("PK_GLOBAL(")?, ""),
    };
    let (ty, name) = inner.strip_suffix(')')?.rsplit_once(',')?;
    let (ty, name) = (ty.trim(), name.trim());
    is_ident(name).then(|| {
        format!("    __global {ty} *{restrict}{name} = (__global {ty} *){name}_address;\n")
    })
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
    /// kernel only reads it through the pointer bound from it).
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
        let src = "/* x */\npk_kernel void fill(PK_GLOBAL(SCALAR, x), const uint n,\n    const SCALAR value) {\n    x[n] = value;\n}\n";
        let (out, packed) = address_source(src, Precision::F64, true).unwrap();
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
        assert!(
            out.ends_with(
                "    __global SCALAR *x = (__global SCALAR *)x_address;\n\n    x[n] = value;\n}\n"
            ),
            "{out}"
        );
        let (out32, _) = address_source(src, Precision::F32, true).unwrap();
        assert!(out32.contains("as_float((uint)pk_args.v[2])"), "{out32}");
    }

    #[test]
    fn every_library_kernel_but_buffer_address_is_packed() {
        let (out, packed) = address_source(
            &super::super::program::full_source(Precision::F64),
            Precision::F64,
            true,
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
    fn an_unpacked_kernel_keeps_its_signature_and_binds_its_buffers() {
        let src = "\npk_kernel void f(PK_GLOBAL_RESTRICT(const uint, idx), PK_GLOBAL(SCALAR, v), const float4 w) {\n    v[0] = idx[0];\n}\npk_kernel void g(const uint n);\n";
        for packed in [false, true] {
            let (out, words) = address_source(src, Precision::F64, packed).unwrap();
            assert!(words.is_empty(), "a float4 parameter is not packable");
            assert!(
                out.contains(
                    "pk_kernel void f(PK_GLOBAL_RESTRICT(const uint, idx), PK_GLOBAL(SCALAR, v), const float4 w) {\n    __global const uint *restrict idx = (__global const uint *)idx_address;\n    __global SCALAR *v = (__global SCALAR *)v_address;\n\n    v[0] = idx[0];"
                ),
                "{out}"
            );
            assert!(
                out.contains("\npk_kernel void g(const uint n);"),
                "a prototype stays: {out}"
            );
        }
    }

    #[test]
    fn every_buffer_parameter_of_the_library_is_bound() {
        let families: String = crate::backend::kernel_sources::OPENCL[1..]
            .iter()
            .map(|s| s.text)
            .collect();
        let buffers = families.matches("PK_GLOBAL(").count()
            + families.matches("PK_GLOBAL_RESTRICT(").count();
        for packed in [false, true] {
            let (out, _) = address_source(
                &super::super::program::full_source(Precision::F64),
                Precision::F64,
                packed,
            )
            .unwrap();
            assert_eq!(
                out.matches("_address;\n").count(),
                buffers,
                "packed {packed}"
            );
        }
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
