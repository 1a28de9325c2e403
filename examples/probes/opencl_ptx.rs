//! Issue 16: what NVIDIA's OpenCL compiler makes of the library's kernels. Builds the library's
//! OpenCL programs (the default device, the options the backend uses there: the portable one and
//! the one that runs the kernels of `PTX_KERNELS`, the same on devices without inline PTX) and
//! writes the driver's binaries, PTX text on NVIDIA's platform, so that a kernel's loads can be
//! compared with NVRTC's PTX of its CUDA twin (`pipekrylov::backend::cuda::compile_for_arch`).
//!
//! `cargo run --release --features "opencl cuda" --example opencl_ptx -- OUT_DIR [KERNEL...]`
//!
//! Writes `OUT_DIR/opencl-f64.ptx`, `opencl-inline-ptx-f64.ptx` (and `cuda-sm_90-f64.ptx` with
//! the `cuda` feature), then prints, for each KERNEL (default `spmv_dots_csr`), the count of each
//! load instruction kind in its body in each.

#[cfg(feature = "opencl")]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = std::path::PathBuf::from(args.first().cloned().unwrap_or_else(|| ".".into()));
    let kernels: Vec<String> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        vec!["spmv_dots_csr".into()]
    };
    let be = pipekrylov::backend::opencl::OpenClBackend::new(
        pipekrylov::backend::opencl::DeviceSelector::from_env(),
    )
    .expect("OpenCL backend");
    println!("device: {}", be.device().full_name());
    let mut texts = Vec::new();
    for (what, ptx) in [("opencl", false), ("opencl-inline-ptx", true)] {
        let binary = be
            .program_binary(pipekrylov::Precision::F64, ptx)
            .expect("program binary");
        std::fs::write(out.join(format!("{what}-f64.ptx")), &binary).expect("write");
        texts.push((what, String::from_utf8_lossy(&binary).into_owned()));
    }
    #[cfg(feature = "cuda")]
    {
        let ptx = pipekrylov::backend::cuda::compile_for_arch("sm_90", pipekrylov::Precision::F64)
            .expect("NVRTC");
        std::fs::write(out.join("cuda-sm_90-f64.ptx"), &ptx).expect("write");
        texts.push(("cuda", ptx));
    }
    for kernel in &kernels {
        for (what, text) in &texts {
            println!("{kernel} ({what}): {}", load_counts(text, kernel));
        }
    }
}

/// "kind xcount, ..." for every `ld.*` instruction kind in the body of `.entry kernel(`.
#[cfg(feature = "opencl")]
fn load_counts(ptx: &str, kernel: &str) -> String {
    let head = format!(".entry {kernel}(");
    let Some(start) = ptx.find(&head) else {
        return "not found".into();
    };
    let body = &ptx[start..];
    let end = body.find("\n}").unwrap_or(body.len());
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for line in body[..end].lines() {
        let t = line.trim_start();
        if let Some(op) = t.split_whitespace().next() {
            if op.starts_with("ld.") {
                *counts.entry(op.to_string()).or_default() += 1;
            }
        }
    }
    counts
        .iter()
        .map(|(k, v)| format!("{k} x{v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(not(feature = "opencl"))]
fn main() {
    eprintln!("build with --features opencl");
}
