"""Compile-checks the kernel sources of both runtimes with the system's clang, in seconds and
without a GPU, NVRTC or an OpenCL driver: the OpenCL program (f32/f64; GPU loops, CPU loops,
NVIDIA's inline PTX with device addresses) with `clang -x cl -fsyntax-only`, and the CUDA module
(f32/f64) with `clang -x cuda --cuda-device-only -fsyntax-only` over declarations of what NVRTC
provides. The build order is read from src/backend/kernel_sources.rs. The device-address
mode (-D PK_ADDRESS_ARGS) is left out: its source is rewritten by the library at build time
(src/backend/opencl/packed.rs), and the PoCL tests build it (backend_agreement::opencl::address_args).
The real builds are the tests (`opencl_backend` on PoCL, `cuda_nvrtc` with NVRTC); this is the quick loop while editing.

    python3 scripts/check_kernels.py            # exit status 1 and clang's messages on an error
"""
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What NVRTC declares implicitly, for clang's CUDA front end (no CUDA headers needed).
CUDA_SHIM = r"""
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __host__ __attribute__((host))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#include <__clang_cuda_builtin_vars.h>
template <class T> __device__ T __shfl_down_sync(unsigned, T, unsigned, int = 32);
template <class T> __device__ T __shfl_sync(unsigned, T, int, int = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned, T, int, int = 32);
template <class T> __device__ T __ldcs(const T *);
template <class T> __device__ T __ldg(const T *);
__device__ unsigned __ballot_sync(unsigned, int);
__device__ unsigned __reduce_min_sync(unsigned, unsigned);
__device__ double __dadd_rn(double, double);
__device__ double __ddiv_rn(double, double);
__device__ double __dmul_rn(double, double);
__device__ double __dsqrt_rn(double);
__device__ double __longlong_as_double(long long);
__device__ long long __double_as_longlong(double);
__device__ unsigned __float_as_uint(float);
__device__ float __uint_as_float(unsigned);
__device__ int __ffs(int);
__device__ void __syncthreads();
__device__ void __syncwarp(unsigned = 0xffffffffu);
__device__ void __threadfence();
__device__ void __threadfence_block();
__device__ void __threadfence_system();
template <class T> __device__ T atomicAdd(T *, T);
template <class T> __device__ T atomicMin(T *, T);
template <class T> __device__ T atomicMax(T *, T);
template <class T> __device__ T atomicCAS(T *, T, T);
template <class T> __device__ T atomicExch(T *, T);
__device__ double fabs(double); __device__ float fabs(float);
__device__ double fmax(double, double); __device__ float fmax(float, float);
__device__ double fmin(double, double); __device__ float fmin(float, float);
__device__ double sqrt(double); __device__ float sqrt(float);
__device__ double fma(double, double, double);
__device__ unsigned min(unsigned, unsigned); __device__ int min(int, int);
__device__ unsigned long long min(unsigned long long, unsigned long long);
__device__ unsigned max(unsigned, unsigned); __device__ int max(int, int);
__device__ unsigned long long max(unsigned long long, unsigned long long);
__device__ bool isnan(double); __device__ bool isnan(float);
__device__ bool isinf(double); __device__ bool isinf(float);
__device__ bool isfinite(double); __device__ bool isfinite(float);
__device__ double nan(const char *);
"""


def sources(runtime):
    """The (path, text) list of `runtime` ("opencl" or "cuda") in build order."""
    rs = open(os.path.join(TOP, "src/backend/kernel_sources.rs")).read()
    body = rs[rs.index("sources!(\n"):]
    body = body[: body.index(");")]
    paths = [f"kernels/dialect/{runtime}.h"] + [f"kernels/{f}.kc" for f in re.findall(r'"(\w+)"', body)]
    return [(p, open(os.path.join(TOP, p)).read()) for p in paths]


def concatenated(runtime):
    return "".join(f'#line 1 "{p}"\n{t}\n' for p, t in sources(runtime))


def run(cmd, text):
    with tempfile.NamedTemporaryFile("w", suffix=".src", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run(cmd + [f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return r.returncode, r.stderr


def main():
    failed = 0
    cl = concatenated("opencl")
    cl_base = ["clang", "-x", "cl", "-cl-std=CL1.2", "-fsyntax-only", "-Xclang", "-finclude-default-header",
               "-DWG=256"]
    for scalar in ["double", "float"]:
        single = ["-DPK_SINGLE"] if scalar == "float" else []
        for name, extra in [
            ("gpu", ["-DAFSAI_TEAM_LOCAL_OK"]),
            ("cpu", ["-DBLOCKED_LOOPS"]),
            ("nvidia", ["-target", "nvptx64-nvidia-nvcl", "-Xclang", "-fgnu-keywords",
                        "-DPK_NV_PTX", "-DPK_LOAD_HINTS=2", "-DAFSAI_TEAM_LOCAL_OK"]),
        ]:
            pre = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if scalar == "double" else ""
            rc, err = run(cl_base + [f"-DSCALAR={scalar}"] + single + extra, pre + cl)
            print(f"opencl {scalar} {name}: {'ok' if rc == 0 else 'FAILED'}")
            if rc:
                failed += 1
                print(err[:6000])
    cu = concatenated("cuda")
    for scalar in ["double", "float"]:
        rc, err = run(["clang", "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib",
                       "--cuda-gpu-arch=sm_80", "-fsyntax-only", "-std=c++17", f"-DSCALAR={scalar}", "-DWG=256"],
                      CUDA_SHIM + cu)
        print(f"cuda {scalar}: {'ok' if rc == 0 else 'FAILED'}")
        if rc:
            failed += 1
            print(err[:6000])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
