//! NVRTC compilation of the CUDA kernel sources ([`SOURCES`]) and the process-wide module cache.
//!
//! All family files are concatenated (the shared header `kernels/dialect/cuda.h` first, each file behind a
//! `#line` directive so compiler messages name the right file) and compiled once per process
//! for each (architecture, precision, block size, tuned `-D` values: [`BuildOptions`]):
//! `-DSCALAR=double` or `-DSCALAR=float`, a
//! real architecture read from the device (`--gpu-architecture=sm_90` on the H200), C++17,
//! full optimisation, IEEE arithmetic (no fast math, `--fmad=false` so that element-wise
//! results round like the host backend's). The CUBIN is loaded when NVRTC produced one, the
//! PTX otherwise. Loaded modules are cached per (device ordinal, precision, build options).

use super::probe;
use crate::error::{Error, Result};
use crate::scalar::Precision;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, DriverError};
use cudarc::nvrtc::{result as nvrtc_result, sys as nvrtc_sys, Ptx};
use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::sync::{Arc, Mutex, OnceLock};

/// The CUDA sources in build order: the dialect header, then one file per kernel family.
pub use crate::backend::kernel_sources::CUDA as SOURCES;

/// Threads per block the sources are built for when no device is known (every CUDA device
/// allows at least this many).
pub const DEFAULT_BLOCK: u32 = 256;

/// Every kernel of the module, by the typed name every runtime shares.
pub(crate) use crate::backend::ops::Kernel;

/// The loaded module of one precision on one device, with every function resolved.
pub(crate) struct Kernels {
    functions: Vec<CudaFunction>,
    _module: Arc<CudaModule>,
}

impl Kernels {
    /// The function of `kernel`.
    pub(crate) fn get(&self, kernel: Kernel) -> &CudaFunction {
        // `functions` is built from `Kernel::ALL` in order, so the discriminant indexes it.
        &self.functions[kernel as usize]
    }
}

/// Output of one NVRTC compilation.
struct Image {
    ptx: String,
    cubin: Option<Vec<u8>>,
}

/// The concatenated source, each file behind a `#line` directive.
pub fn source() -> String {
    let mut out = String::new();
    for source in SOURCES {
        out.push_str(&format!("#line 1 \"{}\"\n", source.path));
        out.push_str(source.text);
        out.push('\n');
    }
    out
}

/// What the tuning changes in a build: the `-D` values of the load hints and of the early
/// trigger, and the carveout attribute set on the loaded functions (part of the cache keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BuildOptions {
    /// `PK_LOAD_HINTS` ([`Tuning::matrix_load_hints`](crate::backend::tuning::Tuning::matrix_load_hints)).
    load_hints: u8,
    /// `PK_EARLY_TRIGGER`: [`Tuning::cuda_early_start`](crate::backend::tuning::Tuning::cuda_early_start) >= 1.
    early_trigger: bool,
    /// [`Tuning::cuda_smem_carveout`](crate::backend::tuning::Tuning::cuda_smem_carveout).
    carveout: Option<u8>,
}

impl BuildOptions {
    /// The build options of a backend tuned by `tuning`.
    pub(crate) fn of(tuning: &crate::backend::tuning::Tuning) -> Self {
        Self {
            load_hints: tuning.load_hints_level(),
            early_trigger: tuning.early_start_level() >= 1,
            carveout: tuning.cuda_smem_carveout.map(|c| c.min(100)),
        }
    }
}

/// The NVRTC options for one build.
fn options(arch: &str, precision: Precision, block: u32, build: BuildOptions) -> Vec<String> {
    let scalar = match precision {
        Precision::F32 => "float",
        Precision::F64 => "double",
    };
    vec![
        format!("--gpu-architecture={arch}"),
        format!("-DSCALAR={scalar}"),
        format!("-DWG={block}"),
        format!("-DPK_LOAD_HINTS={}", build.load_hints),
        format!("-DPK_EARLY_TRIGGER={}", u32::from(build.early_trigger)),
        "--std=c++17".into(),
        "-default-device".into(),
        "--fmad=false".into(),
        "--extra-device-vectorization".into(),
    ]
}

fn build_error(log: impl Into<String>) -> Error {
    Error::KernelBuild {
        backend: "cuda".into(),
        log: log.into(),
    }
}

/// Bytes of a NUL-terminated NVRTC string buffer, up to the first NUL.
fn c_chars_to_string(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Destroys an NVRTC program on every exit path.
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the program was created by `create_program` and is destroyed only here.
        // A failure to destroy leaks the program, nothing worse.
        let _ = unsafe { nvrtc_result::destroy_program(self.0) };
    }
}

/// Compile the concatenated sources with NVRTC (no cache).
fn nvrtc_compile(
    arch: &str,
    precision: Precision,
    block: u32,
    build: BuildOptions,
) -> Result<Image> {
    if arch.is_empty() || !arch.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Error::param(
            "arch",
            format!("'{arch}' is not a GPU architecture name such as sm_90"),
        ));
    }
    probe::nvrtc()?;
    let src = CString::new(source())
        .map_err(|_| build_error("kernel sources contain a NUL character"))?;
    let name = c"pipekrylov.cu";
    let opts = options(arch, precision, block, build);
    probe::guarded("NVRTC", || -> Result<Image> {
        let prog = nvrtc_result::create_program(&src, Some(name))
            .map_err(|e| build_error(format!("nvrtcCreateProgram failed: {e:?}")))?;
        let prog = Program(prog);
        // SAFETY: `prog.0` is a live program (destroyed by `Program`'s drop after this
        // closure); the options contain no NUL (checked arch, fixed strings).
        let compiled = unsafe { nvrtc_result::compile_program(prog.0, &opts) };
        // SAFETY: as above.
        let log = unsafe { nvrtc_result::get_program_log(prog.0) }
            .map(|l| c_chars_to_string(&l))
            .unwrap_or_default();
        if let Err(e) = compiled {
            return Err(build_error(format!(
                "NVRTC {e:?} with options {}\n{log}",
                opts.join(" ")
            )));
        }
        // SAFETY: as above; the program compiled.
        let ptx = unsafe { nvrtc_result::get_ptx(prog.0) }
            .map(|p| c_chars_to_string(&p))
            .map_err(|e| build_error(format!("nvrtcGetPTX failed: {e:?}\n{log}")))?;
        // SAFETY: as above. NVRTC has a CUBIN only for real architectures (sm_XX).
        let cubin = unsafe { cubin(prog.0) };
        Ok(Image { ptx, cubin })
    })?
}

/// The CUBIN of a compiled program, when NVRTC produced one.
///
/// # Safety
/// `prog` must be a live, successfully compiled program.
unsafe fn cubin(prog: nvrtc_sys::nvrtcProgram) -> Option<Vec<u8>> {
    let mut size = 0usize;
    nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size)
        .result()
        .ok()?;
    if size == 0 {
        return None;
    }
    let mut buf = vec![0u8; size];
    nvrtc_sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast::<c_char>())
        .result()
        .ok()?;
    Some(buf)
}

type ImageKey = (String, Precision, u32, u8, bool);

/// Compile (once per process) for `arch`, `precision`, `block` threads per block and the
/// tuning's `build` options.
fn image(arch: &str, precision: Precision, block: u32, build: BuildOptions) -> Result<Arc<Image>> {
    static IMAGES: OnceLock<Mutex<HashMap<ImageKey, Arc<Image>>>> = OnceLock::new();
    let cache = IMAGES.get_or_init(Default::default);
    // Holding the lock while compiling makes concurrent first uses wait for one build.
    let mut map = cache
        .lock()
        .map_err(|_| build_error("the NVRTC image cache was poisoned by a panic"))?;
    let key = (
        arch.to_string(),
        precision,
        block,
        build.load_hints,
        build.early_trigger,
    );
    if let Some(img) = map.get(&key) {
        return Ok(img.clone());
    }
    let img = Arc::new(nvrtc_compile(arch, precision, block, build)?);
    map.insert(key, img.clone());
    Ok(img)
}

/// Compile every `.cu` file for `arch` (e.g. `"sm_90"`) and `precision` with the options the
/// backend uses with the default tuning, and return the PTX. Needs NVRTC only (no driver, no GPU): CI uses it to check
/// that the kernels build. The result is cached for the process.
///
/// Errors: [`Error::BackendUnavailable`] when libnvrtc cannot be loaded,
/// [`Error::KernelBuild`] with the NVRTC log when compilation fails.
///
/// ```no_run
/// use pipekrylov::{backend::cuda::compile_for_arch, Precision};
/// let ptx = compile_for_arch("sm_90", Precision::F64).unwrap();
/// assert!(ptx.contains(".entry cg_update"));
/// ```
pub fn compile_for_arch(arch: &str, precision: Precision) -> Result<String> {
    let build = BuildOptions::of(&crate::backend::tuning::Tuning::DEFAULT);
    Ok(image(arch, precision, DEFAULT_BLOCK, build)?.ptx.clone())
}

/// Registers per thread of every kernel as the backend builds them (default tuning) for `arch`
/// (a real architecture such as `"sm_90"`) and `precision` at `block` threads per block, read
/// from
/// NVRTC's CUBIN (the image the backend loads). Needs NVRTC only; the result of the build is
/// cached as [`compile_for_arch`]'s.
///
/// Errors: as [`compile_for_arch`]; [`Error::KernelBuild`] when NVRTC produced no CUBIN (a
/// virtual architecture) or the CUBIN cannot be read.
pub fn kernel_registers_for_arch(
    arch: &str,
    precision: Precision,
    block: u32,
) -> Result<Vec<(String, u32)>> {
    let build = BuildOptions::of(&crate::backend::tuning::Tuning::DEFAULT);
    let img = image(arch, precision, block, build)?;
    let cubin = img
        .cubin
        .as_deref()
        .ok_or_else(|| build_error(format!("NVRTC produced no CUBIN for {arch}")))?;
    super::cubin::registers(cubin)
}

type ModuleKey = (usize, Precision, BuildOptions);

fn modules() -> &'static Mutex<HashMap<ModuleKey, Arc<Kernels>>> {
    static MODULES: OnceLock<Mutex<HashMap<ModuleKey, Arc<Kernels>>>> = OnceLock::new();
    MODULES.get_or_init(Default::default)
}

/// The kernels of `precision` on device `ordinal`, compiled for `arch` with `build` and loaded
/// into `ctx` on first use. `driver_err` maps driver failures (so that sticky faults poison the
/// caller).
pub(crate) fn kernels(
    ctx: &Arc<CudaContext>,
    ordinal: usize,
    arch: &str,
    precision: Precision,
    block: u32,
    build: BuildOptions,
    driver_err: &dyn Fn(&str, DriverError) -> Error,
) -> Result<Arc<Kernels>> {
    let mut map = modules()
        .lock()
        .map_err(|_| build_error("the CUDA module cache was poisoned by a panic"))?;
    if let Some(k) = map.get(&(ordinal, precision, build)) {
        return Ok(k.clone());
    }
    let img = image(arch, precision, block, build)?;
    let module = match &img.cubin {
        Some(bin) => ctx.load_module(Ptx::from_binary(bin.clone())),
        None => ctx.load_module(Ptx::from_src(img.ptx.clone())),
    }
    .map_err(|e| driver_err("cuModuleLoadData", e))?;
    let functions = Kernel::ALL
        .iter()
        .map(|k| {
            module
                .load_function(k.name())
                .map_err(|e| driver_err(&format!("cuModuleGetFunction({})", k.name()), e))
        })
        .collect::<Result<Vec<_>>>()?;
    if let Some(carveout) = build.carveout.map(i32::from) {
        let attribute =
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;
        for f in &functions {
            f.set_attribute(attribute, carveout)
                .map_err(|e| driver_err("cuFuncSetAttribute(preferred carveout)", e))?;
        }
    }
    let k = Arc::new(Kernels {
        functions,
        _module: module,
    });
    map.insert((ordinal, precision, build), k.clone());
    Ok(k)
}

/// Drop the cached modules of a device after a sticky fault, so that a fresh context can be
/// created once every object of the broken one is gone.
pub(crate) fn forget_device(ordinal: usize) {
    if let Ok(mut map) = modules().lock() {
        map.retain(|(o, _, _), _| *o != ordinal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of the kernels declared in a source text: lines `extern "C" [__launch_bounds__(..)]
    /// __global__ void [__launch_bounds__(..)] name(`.
    fn global_names(text: &str) -> Vec<String> {
        let skip_bounds = |rest: &str| -> Option<String> {
            let rest = rest.trim_start();
            Some(match rest.strip_prefix("__launch_bounds__(") {
                Some(r) => r[r.find(')')? + 1..].to_string(),
                None => rest.to_string(),
            })
        };
        text.lines()
            .filter_map(|line| {
                let after = if line.starts_with("extern \"C\"") && line.contains("__global__") {
                    line.split_once("__global__")?.1
                } else {
                    line.strip_prefix("pk_kernel")?
                };
                let rest = after.trim_start().strip_prefix("void")?;
                let rest = skip_bounds(rest)?;
                let name: String = rest
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                (!name.is_empty()).then_some(name)
            })
            .collect()
    }

    #[test]
    fn every_family_file_declares_exactly_its_kernels() {
        for (family, names) in crate::backend::ops::KERNELS {
            let text = crate::backend::kernel_sources::family_source(SOURCES, family)
                .unwrap_or_else(|| panic!("no CUDA source of family {family}"));
            let mut declared = global_names(text);
            let mut expected: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            declared.sort_unstable();
            expected.sort_unstable();
            assert_eq!(declared, expected, "kernels of family {family}");
        }
        assert!(
            global_names(SOURCES[0].text).is_empty(),
            "the dialect header holds no kernels"
        );
    }

    /// The body of every kernel (the text after its parameter list's `{`), by name.
    fn kernel_bodies(text: &str) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        let mut rest = text;
        loop {
            let found = ["__global__ void ", "\npk_kernel void "]
                .iter()
                .filter_map(|p| rest.find(p).map(|at| (at, p.len())))
                .min();
            let Some((at, len)) = found else { break };
            let after = &rest[at + len..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // The parameter list's closing parenthesis, then the body's brace.
            let open = after.find('(').expect("a parameter list");
            let mut depth = 0usize;
            let mut close = open;
            for (i, c) in after[open..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = open + i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let brace = close + after[close..].find('{').expect("a body");
            out.push((name, &after[brace + 1..]));
            rest = &after[brace + 1..];
        }
        out
    }

    /// The CSR products that may read their matrix before the wait: their bodies start by
    /// calling a row helper whose first statement calls `csr_first_then_wait`.
    const MATRIX_BEFORE_WAIT: [(&str, &str); 6] = [
        ("spmv_dots_csr", "csr_dots_rows"),
        ("cg_fused_resident", "cg_fused_body"),
        ("residual_csr", "csr_residual_rows"),
        ("bicgstab_s_spmv_resident", "bicgstab_s_spmv_body"),
        ("bicgstab_fused_resident", "bicgstab_fused_body"),
        ("gmres_dcgs2_spmv_dots", "dcgs2_spmv_dots_rows"),
    ];

    /// The text of the device function `name` of `text` from its parameter list on.
    fn function_text<'a>(text: &'a str, name: &str) -> &'a str {
        let at = text
            .find(&format!(" {name}("))
            .unwrap_or_else(|| panic!("no function {name}"));
        &text[at..]
    }

    /// The backend launches every kernel with programmatic stream serialization on sm_90+, which
    /// is only correct if the kernel waits for its predecessor before touching memory: every
    /// kernel's first statement must be `PDL_WAIT();` (or `PDL_WAIT_START_NEXT();`, or the DCGS2
    /// updates' `DCGS2_START_NEXT(start_next);`, which waits first), except the CSR products of
    /// [`MATRIX_BEFORE_WAIT`], which wait inside `csr_first_then_wait` after reading only
    /// matrix arrays (every path of it reaches one `PDL_WAIT()`).
    #[test]
    fn every_kernel_waits_for_its_predecessor_first() {
        let mut kernels = 0;
        for source in SOURCES {
            let (file, text) = (source.path, source.text);
            for (name, body) in kernel_bodies(text) {
                if let Some((_, rows)) = MATRIX_BEFORE_WAIT.iter().find(|(k, _)| *k == name) {
                    assert!(
                        body.trim_start()
                            .starts_with("/* PDL_WAIT() in csr_first_then_wait"),
                        "kernel {name} must say where it waits"
                    );
                    assert!(body.contains(&format!("{rows}(")), "{name} calls {rows}");
                    let helper = function_text(text, rows);
                    let first = helper[helper.find('{').unwrap() + 1..]
                        .find("csr_first_then_wait(")
                        .expect("the first row read by csr_first_then_wait");
                    let before = &helper[helper.find('{').unwrap() + 1..][..first];
                    assert!(
                        !before.contains('['),
                        "{rows} touches memory before csr_first_then_wait: {before}"
                    );
                } else {
                    let body = body.trim_start();
                    if body.starts_with("DCGS2_START_NEXT(") {
                        // The DCGS2 updates' macro waits first, then may start the next kernel.
                        let def = text
                            .find("#define DCGS2_START_NEXT(start_next)")
                            .expect("DCGS2_START_NEXT defined in the same file");
                        let after = text[def..].split_once("do {").expect("a do block").1;
                        let after =
                            after.trim_start_matches(|c: char| c.is_whitespace() || c == '\\');
                        assert!(
                            after.starts_with("PDL_WAIT();"),
                            "DCGS2_START_NEXT must wait first"
                        );
                        kernels += 1;
                        continue;
                    }
                    assert!(
                        body.starts_with("PDL_WAIT();")
                            || body.starts_with("PDL_WAIT_START_NEXT();"),
                        "kernel {name} of {file} does not start with PDL_WAIT();"
                    );
                }
                kernels += 1;
            }
        }
        assert_eq!(kernels, Kernel::ALL.len());
        let spmv = crate::backend::kernel_sources::family_source(SOURCES, "spmv").unwrap();
        let first = function_text(spmv, "csr_first_then_wait");
        let first = &first[..first.find("\n}").unwrap()];
        assert_eq!(first.matches("PDL_WAIT();").count(), 2);
        assert!(first.contains("if (!(early & EARLY_MATRIX)) {\n        PDL_WAIT();"));
        assert!(first.contains("if (early & EARLY_MATRIX) {\n        PDL_WAIT();"));
    }
}
