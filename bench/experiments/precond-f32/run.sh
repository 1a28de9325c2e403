#!/usr/bin/env bash
# Single-precision preconditioners inside double-precision CG (issue 56 item 2:
# `--precond-precision f32`), in one device call: the GPU tests of the option (CUDA, NVIDIA
# OpenCL; --include-ignored), then CG to 1e-8 (b = A 1) with each preconditioner in f64 (the
# default variant, and classical) and in f32 (classical, which CG's auto variant runs with it):
# 2D Poisson 4.19M on CUDA and NVIDIA OpenCL, 3D Poisson 256^3 (16.8M) on CUDA. Packed on the
# workstation with
#   pack-for-device --features "cuda opencl cli" -- --bin pipekrylov --test integration
# Writes $OUT/tests.txt and $OUT/precond-f32.csv; prints the table last.
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
bash .device/run test-integration --include-ignored precond_f32 amg_device_setup::cuda::cuda_single \
  amg_device_setup::opencl_single > "$OUT/tests.txt" 2>&1
echo "tests: rc=$? $(grep -E '^test result' "$OUT/tests.txt" | tail -1)"
csv="$OUT/precond-f32.csv"
echo "backend,problem,n,precond,precision,variant,iterations,relative_residual,setup_s,solve_s,us_per_iter,precond_memory_bytes,precond_launches_per_apply" > "$csv"
run() {  # backend spec precond precision [variant]
  local args=(solve --generate "$2" --rhs a-ones --solver cg --precond "$3" --precond-precision "$4"
              --backend "$1" --json)
  [ -n "${5:-}" ] && args+=(--variant "$5")
  json=$(timeout 150 bash .device/run pipekrylov "${args[@]}" 2>"$OUT/last-stderr.txt")
  [ -n "$json" ] || { echo "$1,${2%%:*},,$3,$4,${5:-auto},,,,,,," >> "$csv"; tail -2 "$OUT/last-stderr.txt"; return; }
  python3 -c '
import json, sys
v = json.loads(sys.argv[1])
print(",".join(str(x) for x in [v["backend"], v["problem"], v["n"], sys.argv[2], sys.argv[3], v["variant"],
  v["iterations"], v["relative_residual"], v["precond_setup_seconds"], v["solve_seconds"],
  v["seconds_per_iteration"] * 1e6, v["precond_memory_bytes"], v["precond_launches_per_apply"]]))
' "$json" "$3" "$4" >> "$csv"
}
for spec_backends in "poisson2d:4194304 cuda opencl" "poisson3d:16777216 cuda"; do
  set -- $spec_backends
  spec=$1; shift
  for backend in "$@"; do
    for pc in jacobi fsai isai block-jacobi ip amg; do
      run "$backend" "$spec" "$pc" solve
      run "$backend" "$spec" "$pc" solve classical
      run "$backend" "$spec" "$pc" f32
    done
  done
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
key = lambda r: (r["backend"], r["problem"], r["precond"])
by = {}
for r in rows:
    by.setdefault(key(r), {})[(r["precision"], r["variant"])] = r
print("backend problem precond | its f64 auto / classical / f32 | solve_s f64 auto / classical / f32 | f64 classical/f32")
for k, d in by.items():
    a, c, f = d.get(("solve", "pipelined")) or d.get(("solve", "classical")), d.get(("solve", "classical")), d.get(("f32", "classical"))
    if not (a and c and f) or not f["solve_s"]:
        print(*k, "incomplete"); continue
    print(*k, "|", a["iterations"], c["iterations"], f["iterations"], "|", a["solve_s"][:7], c["solve_s"][:7], f["solve_s"][:7],
          "|", "%.2f" % (float(c["solve_s"]) / float(f["solve_s"])))
PY
