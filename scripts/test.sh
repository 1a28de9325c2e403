#!/usr/bin/env bash
# The test suite: host + OpenCL (PoCL in CI) + NVRTC compilation of every CUDA kernel.
# Needs what .ci/run installs (PoCL, the NVRTC wheel). GPU-only tests are #[ignore]d here and run
# on the device with --include-ignored.
set -euo pipefail
cd "$(dirname "$0")/.."
nvrtc_dir=$(python3 -c 'import glob, site, os; c=[os.path.dirname(p) for s in site.getsitepackages()+[site.getusersitepackages()] for p in glob.glob(os.path.join(s, "nvidia", "cu13", "lib", "libnvrtc.so*"))]; print(c[0] if c else "")' 2>/dev/null || true)
if [ -n "$nvrtc_dir" ]; then export LD_LIBRARY_PATH="$nvrtc_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
features=${PIPEKRYLOV_TEST_FEATURES:-"opencl cuda mpi cli sprs nalgebra-sparse faer"}
# The library alone (default features) must not compile the command line's stack.
if cargo tree -e normal --prefix none 2>/dev/null | grep -E "^(clap|indicatif|plotters) " ; then
  echo "the default-feature library depends on the CLI stack above"; exit 1
fi
# `--features cuda` adds cudarc and what cudarc needs, nothing else.
crates() { cargo tree -e normal --prefix none "$@" 2>/dev/null | awk '{print $1}' | sort -u; }
for c in $(comm -13 <(crates) <(crates --features cuda)); do
  if ! cargo tree -e normal --prefix none --features cuda -i "$c" 2>/dev/null | grep -qE "^cudarc "; then
    echo "--features cuda adds $c, which cudarc does not need"; exit 1
  fi
done
cargo test --release --features "$features" "$@"
# The examples for users, on the host backend (README: examples/).
cargo run --release --quiet --features "$features" --example heat_equation -- 63 100 host
cargo run --release --quiet --features "$features" --example solve_matrix_market -- \
  tests/data/494_bus.mtx cg jacobi host
cargo run --release --quiet --features "$features" --example custom_preconditioner -- 100 host
# The examples answer a bad argument like the CLI: the error's message and exit code 1, no panic.
for run in "heat_equation -- abc" "solve_matrix_market -- tests/data/494_bus.mtx cgg" \
  "custom_preconditioner -- x host" "heat_equation -- 10 10 nobackend"; do
  set +e
  # shellcheck disable=SC2086
  out=$(cargo run --release --quiet --features "$features" --example $run 2>&1)
  status=$?
  set -e
  if [ "$status" -ne 1 ] || grep -q panicked <<<"$out" || ! grep -q "^error: " <<<"$out"; then
    echo "example '$run' with a bad argument: status $status"; echo "$out"; exit 1
  fi
done
# The distributed solvers under MPI with 1, 2, 3 and 4 ranks (tests/mpi/: host and PoCL; every
# rank compares with a one-process solve), then a rank that aborts the job must take it down
# with its message (RELIABILITY.md row 27).
case " $features " in
  *" mpi "*)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    # tests/mpi/: the distributed solves, then one AMG hierarchy across the ranks: N ranks
    # against one process.
    mpi_test=$(cargo test --release --features "$features" --test mpi --no-run 2>&1 | sed -n "s/.*Executable tests\/mpi\/main.rs (\(.*\))/\1/p")
    for suite in solvers amg; do
      for np in 1 2 3 4; do
        echo "== mpirun -np $np tests/mpi $suite"
        log=$(mktemp)
        if ! timeout 600 mpirun --oversubscribe -np "$np" "$mpi_test" "$suite" >"$log" 2>&1; then
          cat "$log"; exit 1
        fi
        grep -E "(poisson3d|jump3d) cg [+] distributed AMG" "$log" || true
        tail -n 1 "$log"
      done
    done
    set +e
    out=$(PK_MPI_TEST_ABORT=1 timeout 120 mpirun --oversubscribe -np 3 "$mpi_test" 2>&1)
    status=$?
    set -e
    if [ "$status" -eq 0 ] || [ "$status" -eq 124 ] || ! grep -q "rank 2 aborts the job" <<<"$out"; then
      echo "MPI abort test failed (status $status):"; echo "$out"; exit 1
    fi
    echo "== MPI abort test: job ended with status $status and the rank's message"
    # The users' multi-rank example (README: examples/) on two host ranks.
    cargo build --release --quiet --features "$features" --example distributed_poisson
    timeout 300 mpirun --oversubscribe -np 2 target/release/examples/distributed_poisson 24 host
    # `solve --json` under mpirun: one JSON object on stdout with every field of the
    # one-process report and a per-rank table whose columns add up to each rank's own time
    # per iteration.
    solve_args=(solve --generate poisson2d:10000 --solver cg --precond jacobi --backend host --json)
    one=$(target/release/pipekrylov "${solve_args[@]}")
    for np in 2 3 4; do
      out=$(timeout 300 mpirun --oversubscribe -np "$np" target/release/pipekrylov "${solve_args[@]}")
      ONE="$one" NP="$np" python3 -c '
import json, os, sys
one, np = json.loads(os.environ["ONE"]), int(os.environ["NP"])
v = json.loads(sys.stdin.read())  # exactly one object, nothing else on stdout
missing = sorted(set(one) - set(v))
assert not missing, f"fields missing under mpirun: {missing}"
assert v["ranks"] == np and len(v["per_rank"]) == np, v
assert v["converged"] and v["iterations"] == one["iterations"], (v["iterations"], one["iterations"])
for r, row in enumerate(v["per_rank"]):
    parts = row["halo_us"] + row["reduce_us"] + row["globalize_us"]
    assert parts <= row["iteration_us"] * (1 + 1e-9) + 1e-6, (r, row)
    assert abs(parts + row["rest_us"] - row["iteration_us"]) <= 1e-6 * max(1.0, row["iteration_us"]), (r, row)
print(f"== mpirun -np {np} solve --json: one object, {len(v)} fields, per-rank columns add up")
' <<<"$out"
    done
    ;;
esac
