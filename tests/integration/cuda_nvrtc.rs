//! CI check of the CUDA kernels without a GPU: NVRTC compiles the CUDA module (`kernels/`) for
//! sm_90 (the H200) and sm_80, in f32 and f64, and every kernel of the inventory
//! (`backend::ops::KERNELS`) appears as a `.entry` of the PTX. The kernels also mirror the
//! OpenCL ones: same names, same parameters in the same order.
//!
//! Needs `libnvrtc.so.13`: `pip install nvidia-cuda-nvrtc==13.0.88` and LD_LIBRARY_PATH set to
//! the wheel's `nvidia/cu13/lib` folder. Without it these tests fail (they do not skip).
#![cfg(feature = "cuda")]

use pipekrylov::backend::cuda::{
    compile_for_arch, kernel_registers_for_arch, DEFAULT_BLOCK, REDUCTION_BLOCKS_PER_SM, SOURCES,
};
use pipekrylov::backend::ops::KERNELS;
use pipekrylov::{Error, Precision};

const HOWTO: &str = "install the NVRTC wheel (`pip install nvidia-cuda-nvrtc==13.0.88`) and \
                     set LD_LIBRARY_PATH to its lib folder, e.g. \
                     $(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))')\
                     /nvidia/cu13/lib; CI does this before running the tests";

fn ptx(arch: &str, precision: Precision) -> String {
    match compile_for_arch(arch, precision) {
        Ok(ptx) => ptx,
        Err(Error::BackendUnavailable { reason, .. }) => {
            panic!("libnvrtc could not be loaded ({reason}): {HOWTO}")
        }
        Err(e) => {
            panic!("NVRTC build for {arch} {precision} failed: {e}\n(if NVRTC is missing: {HOWTO})")
        }
    }
}

/// Names of the `.entry` functions of a PTX module.
fn entries(ptx: &str) -> Vec<String> {
    ptx.split(".entry")
        .skip(1)
        .map(|rest| {
            rest.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn every_kernel_compiles_for_sm90_and_sm80_in_both_precisions() {
    for arch in ["sm_90", "sm_80"] {
        for precision in [Precision::F32, Precision::F64] {
            let ptx = ptx(arch, precision);
            assert!(
                ptx.contains(&format!(".target {arch}")),
                "{arch} {precision}: PTX does not target {arch}"
            );
            let found = entries(&ptx);
            for (family, names) in KERNELS {
                for name in *names {
                    assert!(
                        found.iter().any(|e| e == name),
                        "{arch} {precision}: kernel {name} of kernels/{family}.kc is not a \
                         .entry of the PTX (entries: {found:?})"
                    );
                }
            }
            let listed: usize = KERNELS.iter().map(|(_, n)| n.len()).sum();
            assert_eq!(
                found.len(),
                listed,
                "{arch} {precision}: extra entries {found:?}"
            );
            // Scalars of the precision: f64 kernels use .f64, f32 kernels never do.
            match precision {
                Precision::F64 => assert!(ptx.contains(".f64"), "{arch}: no f64 arithmetic"),
                Precision::F32 => assert!(!ptx.contains("fma.rn.f64"), "{arch}: f64 in f32 build"),
            }
            // Every kernel waits for its predecessor (programmatic dependent launch) on sm_90;
            // the instruction does not exist below it.
            let waits = ptx.matches("griddepcontrol.wait").count();
            match arch {
                "sm_90" => assert!(waits >= listed, "{arch} {precision}: {waits} waits"),
                _ => assert_eq!(waits, 0, "{arch} {precision}: griddepcontrol below sm_90"),
            }
        }
    }
}

/// Every kernel but the listed ones fits `REDUCTION_BLOCKS_PER_SM` blocks of `DEFAULT_BLOCK`
/// threads into one multiprocessor's 65,536 registers, in the sm_90 CUBIN the backend loads on
/// the H200: the reductions' grid then runs in one wave. A kernel that read its first CSR row
/// into registers held across its grid-stride loop took 128 registers (gmres_dcgs2_spmv_dots)
/// and 106 (bicgstab_s_spmv_resident) instead of 64 and 32, two blocks per multiprocessor:
/// GMRES(30) ran 13% slower at 4M-17M unknowns on the H200 (bench/log/, 2026-11-26).
#[test]
fn kernels_fit_the_reduction_grid_on_each_multiprocessor() {
    let limit = 65_536 / (DEFAULT_BLOCK * REDUCTION_BLOCKS_PER_SM as u32);
    // Launched one block row per thread over the whole matrix, not on the reduction grid.
    let exempt = ["bilu0_sweep"];
    for precision in [Precision::F32, Precision::F64] {
        let regs = match kernel_registers_for_arch("sm_90", precision, DEFAULT_BLOCK) {
            Ok(r) => r,
            Err(e) => panic!("sm_90 {precision}: {e}\n(if NVRTC is missing: {HOWTO})"),
        };
        for (_, names) in KERNELS {
            for name in *names {
                assert!(
                    regs.iter().any(|(k, _)| k == name),
                    "sm_90 {precision}: no register count for {name} in the CUBIN"
                );
            }
        }
        let over: Vec<_> = regs
            .iter()
            .filter(|(k, r)| *r > limit && !exempt.contains(&k.as_str()))
            .collect();
        assert!(
            over.is_empty(),
            "sm_90 {precision}: kernels above {limit} registers per thread: {over:?}"
        );
    }
}

#[test]
fn the_compiler_log_comes_back_on_failure() {
    // Touch NVRTC first so that a missing library fails with the installation hint.
    let _ = ptx("sm_90", Precision::F64);
    match compile_for_arch("sm_1", Precision::F64) {
        Err(Error::KernelBuild { backend, log }) => {
            assert_eq!(backend, "cuda");
            assert!(log.contains("sm_1"), "log should name the option: {log}");
        }
        other => panic!("expected a kernel build error, got {other:?}"),
    }
    assert!(matches!(
        compile_for_arch("sm_90 -DSCALAR=int", Precision::F64),
        Err(Error::InvalidParameter { .. })
    ));
}

/// `PK_GLOBAL(T, name)` and `PK_GLOBAL_RESTRICT(T, name)` of the OpenCL sources written as
/// `T *name` (what they declare without -D PK_ADDRESS_ARGS).
fn expand_pointer_macros(list: &str) -> String {
    let mut out = String::new();
    let mut rest = list;
    while let Some(at) = rest.find("PK_GLOBAL") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let open = after.find('(').expect("PK_GLOBAL without (");
        let close = after.find(')').expect("PK_GLOBAL without )");
        let (ty, name) = after[open + 1..close]
            .split_once(',')
            .expect("PK_GLOBAL(T, name)");
        out.push_str(&format!("{} *{}", ty.trim(), name.trim()));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Parameters `(type, name)` of the kernel `name` in a source text, qualifiers removed
/// (`__global`, `const`, `__restrict__`), so that OpenCL and CUDA signatures compare.
fn params(text: &str, name: &str) -> Option<Vec<(String, String)>> {
    let mut search = text;
    loop {
        let at = search.find(&format!("{name}("))?;
        let before = search[..at].chars().last();
        let rest = &search[at + name.len() + 1..];
        search = rest;
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        // A definition: the parameter list is followed by `{`.
        // The `)` closing the list (macros in it have their own parentheses).
        let mut depth = 0usize;
        let close = rest.char_indices().find_map(|(i, c)| match c {
            '(' => {
                depth += 1;
                None
            }
            ')' if depth == 0 => Some(i),
            ')' => {
                depth -= 1;
                None
            }
            _ => None,
        })?;
        if !rest[close + 1..].trim_start().starts_with('{') {
            continue;
        }
        let list = expand_pointer_macros(&rest[..close]);
        return Some(
            list.split(',')
                .map(|p| {
                    let p = p.replace('*', " * ");
                    let toks: Vec<&str> = p
                        .split_whitespace()
                        .filter(|t| {
                            !matches!(*t, "__global" | "const" | "__restrict__" | "restrict")
                        })
                        .collect();
                    let (name, ty) = toks.split_last().unwrap_or((&"", &[]));
                    (ty.concat(), name.to_string())
                })
                .collect(),
        );
    }
}

#[test]
fn cuda_kernels_mirror_the_opencl_signatures() {
    use pipekrylov::backend::kernel_sources::{family_source, OPENCL};
    for (family, names) in KERNELS {
        let cl = family_source(OPENCL, family).unwrap_or_else(|| panic!("no OpenCL {family}"));
        let cu = family_source(SOURCES, family).unwrap_or_else(|| panic!("no CUDA {family}"));
        let file = family;
        for name in *names {
            let pcl = params(cl, name).unwrap_or_else(|| panic!("{family}: no OpenCL {name}"));
            let pcu = params(cu, name).unwrap_or_else(|| panic!("{file}: no {name}"));
            assert_eq!(pcu, pcl, "{name}: CUDA parameters differ from OpenCL");
        }
    }
}
