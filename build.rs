//! Generates the kernel inventory from the kernel sources, so that a kernel is declared in one
//! place: its `pk_kernel void name(` line in `kernels/<family>.kc`. The families and their build
//! order are the `sources!` list of `src/backend/kernel_sources.rs`; each family's kernels are the
//! `pk_kernel` lines of its file, in file order, and each kernel's typed name is its name in
//! CamelCase (`diag_scale_dot` -> `Kernel::DiagScaleDot`). The output, `$OUT_DIR/kernel_inventory.rs`,
//! is one invocation of `kernel_inventory!` that `src/backend/ops/inventory.rs` includes.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

/// The families of `sources!( "vector", "spmv", ... );` in `kernel_sources.rs`, in order.
fn families(listing: &str) -> Vec<String> {
    let start = listing
        .find("\nsources!(")
        .expect("src/backend/kernel_sources.rs has its `sources!(` list");
    let body = &listing[start..];
    let body = &body[..body.find(");").expect("the `sources!` list ends with `);`")];
    body.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The kernels of one family's source: the names of its `pk_kernel void name(` lines.
fn kernels(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|line| line.strip_prefix("pk_kernel void "))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .collect()
}

/// `diag_scale_dot` -> `DiagScaleDot`.
fn camel_case(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/backend/kernel_sources.rs");
    println!("cargo:rerun-if-changed=kernels");
    let top = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .to_path_buf();
    let listing = fs::read_to_string(top.join("src/backend/kernel_sources.rs"))
        .expect("reading src/backend/kernel_sources.rs");
    let mut out = String::from("kernel_inventory! {\n");
    for family in families(&listing) {
        let path = format!("kernels/{family}.kc");
        let source =
            fs::read_to_string(top.join(&path)).unwrap_or_else(|e| panic!("reading {path}: {e}"));
        let names = kernels(&source);
        assert!(!names.is_empty(), "{path} declares no `pk_kernel`");
        writeln!(out, "    {family} {{").unwrap();
        for name in names {
            writeln!(out, "        {} = \"{name}\",", camel_case(&name)).unwrap();
        }
        writeln!(out, "    }}").unwrap();
    }
    out.push_str("}\n");
    let dest =
        Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("kernel_inventory.rs");
    fs::write(&dest, out).unwrap_or_else(|e| panic!("writing {}: {e}", dest.display()));
}
