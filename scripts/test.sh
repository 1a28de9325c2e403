#!/usr/bin/env bash
# The test suite: host + OpenCL (PoCL in CI) + NVRTC compilation of every CUDA kernel.
# Needs what .ci/run installs (PoCL, the NVRTC wheel). GPU-only tests are #[ignore]d here and run
# on the device with --include-ignored.
set -euo pipefail
cd "$(dirname "$0")/.."
nvrtc_dir=$(python3 -c 'import glob, site, os; c=[os.path.dirname(p) for s in site.getsitepackages()+[site.getusersitepackages()] for p in glob.glob(os.path.join(s, "nvidia", "cu13", "lib", "libnvrtc.so*"))]; print(c[0] if c else "")' 2>/dev/null || true)
if [ -n "$nvrtc_dir" ]; then export LD_LIBRARY_PATH="$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
features=${PIPEKRYLOV_TEST_FEATURES:-"opencl cuda"}
cargo test --release --features "$features" "$@"
# The OpenCL kernels once more with buffers passed as device addresses (-D PK_ADDRESS_ARGS, the
# default on NVIDIA GPUs; PoCL supports it too): every kernel against the host again.
case " $features " in
  *" opencl "*) PIPEKRYLOV_OPENCL_ADDRESS_ARGS=1 cargo test --release --features "$features" --test backend_agreement "$@" ;;
esac
