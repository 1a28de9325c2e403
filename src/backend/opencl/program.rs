//! Kernel sources and programs: one program per precision (on NVIDIA GPUs a second one with
//! inline PTX for [`PTX_KERNELS`]), built lazily from every
//! source of [`OPENCL`] (concatenated, the dialect header first) with `-D SCALAR=float|double` and
//! `-D WG=<work-group size>`, and one cached `cl_kernel` per kernel name.

use super::cl::{self, Context, DeviceId, Kernel, Program, BACKEND};
use super::launch::CachedKernel;
use super::shared::{BuiltProgram, SharedDevice};
use crate::backend::kernel_sources::OPENCL;
use crate::backend::ops::KERNELS;
use crate::error::{Error, Result};
use crate::scalar::Precision;
use ocl::ffi::{self, cl_int};
use std::collections::HashMap;
use std::ffi::CString;
use std::ptr;
use std::sync::Arc;

/// The full program source for `precision`: the fp64 pragma for double, then every family.
pub(crate) fn full_source(precision: Precision) -> String {
    let mut src = String::new();
    if precision == Precision::F64 {
        src.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    for source in OPENCL {
        src.push_str(&format!("/* ---- {} ---- */\n", source.path));
        src.push_str(source.text);
        src.push('\n');
    }
    src
}

/// Build options for `precision`, work-group size `wg`, and the loop layout: grid-stride on
/// GPUs, one contiguous block per work-item elsewhere (`-D BLOCKED_LOOPS`, CPUs).
/// `address_args` adds `-D PK_ADDRESS_ARGS` (buffers passed as device addresses), `inline_ptx`
/// (NVIDIA GPUs only; `Some(hints)`) `-D PK_NV_PTX` (warp intrinsics) and the SpMV load hints
/// `hints` (the tuning's
/// [`matrix_load_hints`](crate::backend::tuning::Tuning::matrix_load_hints), `-D PK_LOAD_HINTS`),
/// both inline PTX (see `kernels/dialect/opencl.h`), with `-D PK_SINGLE` in single precision.
/// `-D AFSAI_TEAM_LOCAL_OK` compiles `afsai_grow_team`'s body where its local arrays fit the
/// device's `local_mem_bytes` (elsewhere the kernel is empty and never chosen: a program whose
/// local arrays pass the device's limit may not build at all).
pub(crate) fn build_options(
    precision: Precision,
    wg: usize,
    gpu: bool,
    local_mem_bytes: u64,
    address_args: bool,
    inline_ptx: Option<u8>,
) -> String {
    let scalar = match precision {
        Precision::F32 => "float",
        Precision::F64 => "double",
    };
    let layout = if gpu { "" } else { " -D BLOCKED_LOOPS" };
    let address = if address_args {
        " -D PK_ADDRESS_ARGS"
    } else {
        ""
    };
    let team = if afsai_team_fits(wg, precision, local_mem_bytes) {
        " -D AFSAI_TEAM_LOCAL_OK"
    } else {
        ""
    };
    let ptx = match inline_ptx {
        Some(hints) => {
            let single = if precision == Precision::F32 {
                " -D PK_SINGLE"
            } else {
                ""
            };
            format!(" -D PK_NV_PTX{single} -D PK_LOAD_HINTS={}", hints.min(2))
        }
        None => String::new(),
    };
    format!("-D SCALAR={scalar} -D WG={wg}{layout}{address}{team}{ptx}")
}

/// Local memory of one work-group of `afsai_grow_team` (kernels/fsai.kc) for work-group
/// size `wg` and scalars of `scalar_bytes`: per team of 32 the packed factor (496 scalars for
/// cap 31), y, G~ and the new row's entries (32 each), P and P sorted (32 indices each) and
/// three per-team words; per work-item two columns and two terms (the merge's double buffer).
pub(crate) fn afsai_team_local_bytes(wg: usize, scalar_bytes: usize) -> usize {
    let teams = wg / 32;
    let l = crate::backend::AFSAI_TEAM_CAP * (crate::backend::AFSAI_TEAM_CAP + 1) / 2;
    teams * ((l + 3 * 32 + 1) * scalar_bytes + (2 * 32 + 4) * 4) + wg * 2 * (scalar_bytes + 4)
}

/// Whether `afsai_grow_team`'s local arrays fit `local_mem_bytes` for work-group size `wg`
/// (whole 32-wide teams) in `precision`.
pub(crate) fn afsai_team_fits(wg: usize, precision: Precision, local_mem_bytes: u64) -> bool {
    let scalar_bytes = match precision {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    wg >= 32 && wg % 32 == 0 && afsai_team_local_bytes(wg, scalar_bytes) as u64 <= local_mem_bytes
}

/// The build log of `program` on `device` (empty when it cannot be read).
fn build_log(program: &Program, device: DeviceId) -> String {
    let query = |size: usize, value: *mut std::ffi::c_void, ret: *mut usize| -> cl_int {
        // SAFETY: `value` is null or points to `size` writable bytes; `ret` is null or valid.
        unsafe {
            ffi::clGetProgramBuildInfo(
                program.0,
                device.0,
                ffi::CL_PROGRAM_BUILD_LOG,
                size,
                value,
                ret,
            )
        }
    };
    let mut size = 0usize;
    if query(0, ptr::null_mut(), &mut size) != ffi::CL_SUCCESS || size == 0 {
        return String::new();
    }
    let mut bytes = vec![0u8; size];
    if query(size, bytes.as_mut_ptr().cast(), ptr::null_mut()) != ffi::CL_SUCCESS {
        return String::new();
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).trim().to_string()
}

/// The kernels that run from the inline-PTX program on NVIDIA GPUs (the SpMV kernels with the
/// load hints, GMRES's fused SELL product and dots with them, the warp version of the adaptive
/// FSAI's team growth); every other kernel runs
/// from the portable program. On the H200 the portable program's small kernels mostly launched
/// faster: device-resident CG at n <= 16K took 9.9-12.1 us per iteration from it against
/// 11.9-12.5 from a program built with `-D PK_NV_PTX` (`bench/results/opencl-warp-sums/`).
pub(crate) const PTX_KERNELS: [&str; 7] = [
    "spmv_dots_csr_stream",
    "residual_csr_stream",
    "csr_long_chunks",
    "spmv_dots_sell",
    "residual_sell",
    "gmres_dcgs2_spmv_dots_sell",
    "afsai_grow_team",
];

/// Whether `desc` can have the inline-PTX program (an NVIDIA GPU, and the tuning's
/// [`opencl_inline_ptx`](crate::backend::tuning::Tuning::opencl_inline_ptx) on).
pub(crate) fn inline_ptx_possible(
    desc: &super::DeviceDescription,
    tuning: &crate::backend::tuning::Tuning,
) -> bool {
    desc.is_nvidia_gpu() && tuning.opencl_inline_ptx
}

/// The binary the driver made of `program` for its one device (PTX text on NVIDIA's platform),
/// for inspecting the generated code (`examples/probes/opencl_ptx.rs`).
pub(crate) fn program_binary(program: &Program) -> Result<Vec<u8>> {
    let fail = |what: &str, code: cl_int| Error::Driver {
        backend: BACKEND.into(),
        call: "clGetProgramInfo".into(),
        message: format!("{what}: {} ({code})", cl::status_name(code)),
    };
    let mut size = 0usize;
    // SAFETY: a live program with one device: CL_PROGRAM_BINARY_SIZES is one size_t.
    let code = unsafe {
        ffi::clGetProgramInfo(
            program.0,
            ffi::CL_PROGRAM_BINARY_SIZES,
            std::mem::size_of::<usize>(),
            (&mut size as *mut usize).cast(),
            ptr::null_mut(),
        )
    };
    if code != ffi::CL_SUCCESS {
        return Err(fail("binary size", code));
    }
    let mut bytes = vec![0u8; size];
    let mut slot = bytes.as_mut_ptr();
    // SAFETY: CL_PROGRAM_BINARIES takes one pointer per device (one here), each to a buffer of
    // the size reported above.
    let code = unsafe {
        ffi::clGetProgramInfo(
            program.0,
            ffi::CL_PROGRAM_BINARIES,
            std::mem::size_of::<*mut u8>(),
            (&mut slot as *mut *mut u8).cast(),
            ptr::null_mut(),
        )
    };
    if code != ffi::CL_SUCCESS {
        return Err(fail("binary", code));
    }
    while bytes.last() == Some(&0) {
        bytes.pop();
    }
    Ok(bytes)
}

/// Compile `source` with `options` for one device. Any failure is [`Error::KernelBuild`] with
/// the compiler log.
pub(crate) fn build(
    ctx: &Context,
    device: DeviceId,
    source: &str,
    options: &str,
) -> Result<Program> {
    let build_error = |what: String| Error::KernelBuild {
        backend: BACKEND.into(),
        log: what,
    };
    let src_ptr = source.as_ptr().cast::<std::ffi::c_char>();
    let src_len = source.len();
    let mut err: cl_int = 0;
    // SAFETY: one source string given with its explicit length (no NUL needed); the context is
    // valid.
    let raw = unsafe { ffi::clCreateProgramWithSource(ctx.0, 1, &src_ptr, &src_len, &mut err) };
    if err != ffi::CL_SUCCESS {
        return Err(build_error(format!(
            "clCreateProgramWithSource failed: {} ({err})",
            cl::status_name(err)
        )));
    }
    let program = Program(raw);
    let opts =
        CString::new(options).map_err(|_| build_error("build options contain NUL".into()))?;
    // SAFETY: valid program and one device of its context; no callback (synchronous build).
    let code = unsafe {
        ffi::clBuildProgram(
            program.0,
            1,
            &device.0,
            opts.as_ptr(),
            None,
            ptr::null_mut(),
        )
    };
    if code != ffi::CL_SUCCESS {
        let log = build_log(&program, device);
        return Err(build_error(format!(
            "clBuildProgram failed: {} ({code}), options `{options}`\n{log}",
            cl::status_name(code)
        )));
    }
    Ok(program)
}

/// Create the kernel `name` from a built program.
pub(crate) fn create_kernel(program: &Program, name: &str) -> Result<Kernel> {
    let cname = CString::new(name).map_err(|_| Error::param("kernel", "name contains NUL"))?;
    let mut err: cl_int = 0;
    // SAFETY: valid built program and NUL-terminated name.
    let raw = unsafe { ffi::clCreateKernel(program.0, cname.as_ptr(), &mut err) };
    if err != ffi::CL_SUCCESS {
        return Err(cl::driver_error(&format!("clCreateKernel({name})"), err));
    }
    Ok(Kernel(raw))
}

/// A built program of one precision with every kernel of [`KERNELS`] created once for one
/// backend (the program itself may be shared with other backends, `shared.rs`).
pub(crate) struct CompiledProgram {
    // Field order is drop order: the kernels before the program.
    pub(crate) kernels: HashMap<&'static str, CachedKernel>,
    pub(crate) built: Arc<BuiltProgram>,
    /// Built with `-D PK_ADDRESS_ARGS`: buffers are passed as device addresses.
    pub(crate) address_args: bool,
    /// Whether the kernels take packed arguments (`packed.rs`; address mode only).
    pub(crate) packed_args: bool,
    /// Built with the inline-PTX paths of NVIDIA GPUs (`-D PK_NV_PTX`, see [`build_options`]).
    pub(crate) inline_ptx: bool,
}

impl CompiledProgram {
    /// The library's program for `precision` (see [`build_options`]) from `shared`, built there
    /// if no backend built it yet, with all its kernels created for this backend; with
    /// `address_args` and `packed_args` the kernels take packed arguments; `inline_ptx`
    /// (`Some(load hints)`) is the inline-PTX program.
    pub(crate) fn build(
        shared: &SharedDevice,
        desc: &super::DeviceDescription,
        precision: Precision,
        wg: usize,
        address_args: bool,
        packed_args: bool,
        inline_ptx: Option<u8>,
    ) -> Result<Self> {
        let options = build_options(
            precision,
            wg,
            desc.is_gpu,
            desc.local_mem_bytes,
            address_args,
            inline_ptx,
        );
        let packed_args = address_args && packed_args;
        // The caller decides (`inline_ptx_possible`, or a test's attempt on any device); a
        // refusal of the inline PTX is its to handle (`OpenClBackend::program_for` then serves
        // those kernels from the portable program).
        let built = shared.program(&options, packed_args, || {
            let (source, packed) = if address_args {
                super::packed::address_source(&full_source(precision), precision, packed_args)?
            } else {
                (full_source(precision), HashMap::new())
            };
            let program = build(&shared.context, desc.device, &source, &options)?;
            Ok(BuiltProgram::new(program, packed))
        })?;
        let mut kernels = HashMap::new();
        for (_, names) in KERNELS {
            for &name in names.iter() {
                let words = built.packed_words.get(name).cloned();
                kernels.insert(
                    name,
                    CachedKernel::new(create_kernel(&built.program, name)?, words),
                );
            }
        }
        Ok(Self {
            kernels,
            built,
            address_args,
            packed_args,
            inline_ptx: inline_ptx.is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_ptx_is_defined_only_where_asked_with_the_precision_of_its_shuffles() {
        let opts = |p, ptx: bool| build_options(p, 256, true, 49152, true, ptx.then_some(1));
        let f64_opts = opts(Precision::F64, true);
        assert!(
            f64_opts.contains(" -D PK_NV_PTX -D PK_LOAD_HINTS="),
            "{f64_opts}"
        );
        assert!(!f64_opts.contains("PK_SINGLE"), "{f64_opts}");
        let f32_opts = opts(Precision::F32, true);
        assert!(
            f32_opts.contains(" -D PK_NV_PTX -D PK_SINGLE"),
            "{f32_opts}"
        );
        assert!(f64_opts.ends_with(" -D PK_LOAD_HINTS=1"), "{f64_opts}");
        let hints2 = build_options(Precision::F64, 256, true, 49152, true, Some(2));
        assert!(hints2.ends_with(" -D PK_LOAD_HINTS=2"), "{hints2}");
        for p in [Precision::F32, Precision::F64] {
            let plain = opts(p, false);
            assert!(
                !plain.contains("PK_NV_PTX")
                    && !plain.contains("PK_LOAD_HINTS")
                    && !plain.contains("PK_SINGLE"),
                "{plain}"
            );
        }
    }
}
