#!/usr/bin/env python3
"""Write BENCHMARKS.md, the current numbers, from committed CSVs under bench/results/.

    python3 scripts/benchmarks_md.py            # from the repository root: rewrites BENCHMARKS.md
    python3 scripts/benchmarks_md.py --check    # exit status 1 when BENCHMARKS.md is not up to date

Every number in the tables is read from the CSV files listed in SOURCES (medians where a file or a
set of files holds several rows of one configuration); the machine, commit, date and command of
each table are the metadata recorded with the run in its log note under bench/log/. To move a
table to newer measurements, commit the new CSVs, point its entry in SOURCES at them (and at the
log note that describes the run), and run this script again. Python 3 standard library only.
"""
import csv
import glob
import os
import re
import statistics
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = "bench/results"

# What each table is built from. "files" are globs relative to bench/results/.
SOURCES = {
    "latency": {
        "title": "Latency ladder (small n)",
        "files": ["h200-2026-12-02-redesign-final/call[12]/ladder-new-r*.csv"],
        "machine": "one NVIDIA H200 (`nvidia-h200`)",
        "commit": "aba988a, 2026-12-02",
        "command": "`TEST_TIMEOUT=390 FIRST=1 LAST=4 LARGE=0 bash bench/experiments/launch-once/run.sh`, then "
                   "`TESTS=0 FIRST=5 LAST=20 LARGE=1` (20 rounds alternated with the commit before the redesign, "
                   "each pinned to one core: per round `pipekrylov bench --backends cuda,opencl --solvers "
                   "cg,bicgstab,gmres --executions sync,resident --problem poisson2d --max-n 70000 --iterations 300 "
                   "--repeats 5`); the table gives the median over the rounds",
        "log": "2026-12-02-redesign-final.md",
    },
    "bandwidth": {
        "title": "Bandwidth at n >= 4M against the memory floor",
        "files": ["h200-issue16-final/refresh-hints-*-h200.csv",
                  "h200-issue16-final/modes-large-*-h200.csv"],
        "cusparse": "h200-issue16-final/load-hints-cusparse-h200.csv",
        "machine": "one NVIDIA H200 (`nvidia-h200`)",
        "commit": "ddabbd6, 2026-11-27",
        "command": "`OUT=$OUT PARTS=refresh bash bench/experiments/h200-issue16-final.sh` (`pipekrylov bench "
                   "--solvers spmv,cg,bicgstab,gmres --repeats 5`; the header of the script has the rest)",
        "log": "2026-11-27-issue16-final.md",
    },
    "precond-convdiff3d": {
        "title": "convdiff3d (atmosmodd-like), n = 1,259,712, BSR blocks of 4, GMRES(30) to 1e-5, b = ones",
        "files": ["bilu0-device-factor-h200-convdiff3d-[12].csv", "isai-flat-pattern-h200-convdiff3d-[12].csv"],
        "machine": "one NVIDIA H200",
        "commit": "53c6c1e and acaf505, 2026-11-25 (the commits that added the CSVs)",
        "command": "`CONFIGS=... bash scripts/precond-bench.sh OUT.csv \"cuda opencl\" convdiff3d`, twice per file set",
        "skip": ("device factors, F = 0", "K = 1 sweeps (device factors, F = 1", "K = 1 sweeps (device factors, F = 2",
                 "K = 2 sweeps (device factors, F = 1", "k = 2 (host", "k = 3 (host",
                 "K = 1 sweeps (host factors)", "exact solves (host factors)", "k = 1 (host factors)",
                 "K = 1 sweeps (device factors, F = 3", "k = 3 (device"),
        "log": "2026-11-25-bilu0-device-factorization.md",
    },
    "precond-thermal2d": {
        "title": "thermal2d (thermal2-like), n = 1,199,025, BSR blocks of 5, GMRES(30) to 1e-5, b = A 1",
        "files": ["bilu0-device-factor-h200-thermal2d.csv", "bilu0-device-factor-h200-thermal2d-exact-solve.csv",
                  "isai-device-factor-h200-thermal2d.csv"],
        "machine": "one NVIDIA H200",
        "commit": "53c6c1e and 7730152, 2026-11-25 (the commits that added the CSVs)",
        "command": "`RHS=a-ones CONFIGS=... bash scripts/precond-bench.sh OUT.csv \"cuda opencl\" thermal2d`",
        "skip": ("F = 2)", "K = 2 sweeps (device factors, F = 3", "K = 3 sweeps (device factors, F = 1",
                 "K = 4 sweeps", "k = 1 (device factors, F = 5", "K = 3 sweeps (device factors, F = 3",
                 "k = 1 (host factors)", "K = 3 sweeps (host factors)", "k = 1 (device factors, F = 3"),
        "log": "2026-11-25-bilu0-device-factorization.md",
    },
    "precond-ip": {
        "title": "poisson3d 256^3, n = 16,777,216, CG to 1e-6, b = ones, CSR",
        "files": ["ip-poisson3d-h200-device-assembly.csv"],
        "machine": "one NVIDIA H200",
        "commit": "dddc3c0, 2026-11-25 (the commits that added the CSVs)",
        "command": "`REPEAT=3 bash scripts/ip-bench.sh OUT.csv \"cuda opencl\" \"none jacobi ip ip-matrix-free\"`",
        "log": "2026-11-25-ip-device-assembly.md",
    },
    "precond-fsai": {
        "title": "SPD problems, PCG to 1e-6, b = A 1: Jacobi, static FSAI (level 1), adaptive FSAI",
        "files": ["fsai-rows-f32-h200.csv"],
        "machine": "one NVIDIA H200",
        "commit": "f3101ed, 2026-11-25 (the commits that added the CSVs)",
        "command": "`OUT=$OUT bash bench/experiments/h200-fsai-rows.sh` (`scripts/fsai-bench.sh`, every "
                   "configuration twice; the f32-setup rows are in the file and the log note)",
        "skip": ("f32 setup", "eq. (17)", "aniso2d"),
        "log": "2026-11-25-fsai-rows-coalesced-f32.md",
    },
    "multi-gpu-2": {
        "title": "1 -> 2 GPUs",
        "files": ["h200x2-sums-kernel/instance-2/r[12]-base/*-np[12].csv"],
        "machine": "two NVIDIA H200s of one host (`nvidia-h200-x2`)",
        "commit": "54c8162, 2026-11-27 (the commits that added the CSVs)",
        "command": "`OUT=$OUT bash bench/experiments/h200x2-sums-kernel.sh` (the defaults' rounds `r1-base`, "
                   "`r2-base` of `bench/experiments/h200-scaling.sh` with `RANKS=\"1 2\"`)",
        "log": "2026-11-27-two-h200-sums-kernel.md",
    },
    "multi-gpu-4": {
        "title": "1 -> 4 GPUs",
        "files": ["h200x4-4147a09/*-np[124].csv", "h200x4-4147a09/host-staged-np4-*.csv"],
        "machine": "four NVIDIA H200s of one host (`nvidia-h200-x4`)",
        "commit": "4147a09, 2026-11-27",
        "command": "`OUT=$OUT bash bench/experiments/h200x4-session.sh` (`bench/experiments/h200-scaling.sh` with "
                   "`RANKS=\"1 2 4\"`, then `PIPEKRYLOV_HALO_PEER=0` at 4 ranks)",
        "log": "2026-11-27-two-four-h200-weak-box.md",
    },
}

SOURCES["amg"] = {
    "title": "Algebraic multigrid against AMGCL",
    "files": ["h200-2026-11-30-amg-table-4/amg-device-setup.csv"],
    "machine": "one NVIDIA H200 (`nvidia-h200`)",
    "commit": "1d22146, 2026-11-30",
    "command": "`OUT=$OUT bash bench/experiments/amg-auto-variant/run.sh` (AMGCL 3f7970b built in the same "
               "call from its header-only source with the anchor driver; pipekrylov `solve --solver cg --precond "
               "amg --amg-setup device|host --rhs a-ones --json`)",
    "log": "2026-11-30-amg-high-contrast.md",
}
# Every preconditioner in f32 inside f64 CG (bench/experiments/precond-f32/run.sh, 9b91c57).
PRECOND_F32_CSV = "h200-2026-12-01-precond-f32/precond-f32.csv"
SOURCES["python"] = {
    "title": "The Python package against CuPy",
    "files": ["h200-2026-11-29-python/per_iteration.csv", "h200-2026-11-29-python/overhead.csv"],
    "machine": "one NVIDIA H200 (`nvidia-h200`)",
    "commit": "4ed3930, 2026-11-29",
    "command": "`bash bench/experiments/python-vs-cupy/run.sh` (CuPy 14.2 on the device image; the wheel and "
               "test binaries packed as its header says)",
    "log": "2026-11-29-python-ilu.md",
}
# The Python per-call overhead after the array addresses came from __array_struct__ (49a33d3,
# python-overhead/run.sh); the host backend's one-call line from its overhead_parts.txt summary.
PYTHON_OVERHEAD_CSV = "h200-2026-11-30-python-overhead/overhead.csv"
# The one call's overhead over the crate's call (python-call-steps/final.sh, steps.py).
PYTHON_PLAIN_TXT = "h200-2026-12-02-flat-check/call[12]/steps.txt"
# One `pipekrylov::solve` in a process that already made one, the new build against c6dbba6
# (bench/experiments/one-call/run.sh, benches/one_call.rs).
ONE_CALL_DIR = "h200-2026-12-02-one-call"
ONE_CALL_COMMIT = "2397597"
# The Python time to solution from a SciPy matrix and from a CuPy matrix used in place
# (python-in-place/run.sh, part in_place_matrix of python-vs-cupy/run.py).
PYTHON_TTS_CSV = "h200-2026-11-30-python-in-place/in_place_matrix.csv"
PYTHON_TTS_COMMIT = "c79acdf"
SOURCES["ilu"] = {
    "title": "ILU on real matrices with zero or weak diagonals",
    "files": ["h200-2026-11-29-amg-resident/ilu_real_matrices.csv", "h200-2026-11-29-python/ilu_vs_bilu0.csv"],
    "machine": "one NVIDIA H200 (`nvidia-h200`)",
    "commit": "85dd84e and 4ed3930 (bilu0, before ILUTP), 2026-11-29",
    "command": "`OUT=$OUT bash bench/experiments/amg-resident/run.sh` (`tests/integration/ilu.rs`; "
               "the second file: `bench/experiments/python-vs-cupy/run.sh`)",
    "log": "2026-11-29-ilutp.md",
}
SOURCES["trisolve"] = {
    "title": "BILU(0)'s triangular solves on a GPU: exact against sweeps",
    "files": ["h200-2026-11-28-trisolve/trisolve-auto-h200.csv"],
    "machine": "one NVIDIA H200 (`nvidia-h200`)",
    "commit": "de64f1f, 2026-11-28",
    "command": "`OUT=$OUT bash bench/experiments/trisolve-auto/run.sh` (`solve --solver bicgstab --precond bilu0 "
               "--trisolve T --rhs a-ones --json`)",
    "log": "2026-11-28-amg-trisolve-ip.md",
}

SOURCES["refresh"] = {
    "title": "New values on the same pattern: refresh against a full setup",
    "files": ["h200-2026-12-01-refresh-host/refresh_cuda_new.csv",
              "h200-2026-12-01-refresh-host/refresh_opencl_new.csv",
              "h200-2026-12-01-refresh-host-isai/refresh_host_new.csv",
              "h200-2026-12-01-host-amg-refresh/refresh_new_3.csv"],
    "machine": "one NVIDIA H200 (`nvidia-h200`; host: its 16 cores)",
    "commit": "7721a47 (GPUs), a09e242 (host), 1fa0fd9 (host amg), 2026-12-01",
    "command": "`cargo bench --bench values_refresh -- --backend B --n 1000000 --out F.csv` "
               "(`PYTHON=0 BENCH_OLD=0 OUT=$OUT bash bench/experiments/refresh-share/run.sh`)",
    "log": "2026-12-01-refresh-host.md",
}

SOURCES["many"] = {
    "title": "Several right-hand sides at once; AMG across the ranks",
    "files": ["h200-2026-12-02-python-plain-call/solve-many.csv",
              "h200x2-2026-11-29-amg-distributed/amg-distributed-x2.csv"],
    "machine": "one NVIDIA H200 (`nvidia-h200`); two for the second file (`nvidia-h200-x2`)",
    "commit": "315ebe0 and 1f64cfe",
    "command": "`AMG_TESTS=0 OUT=$OUT bash bench/experiments/solve-many/run.sh` (`solve --nrhs K --json`) and "
               "`OUT=$OUT bash "
               "bench/experiments/amg-distributed/x2.sh` (one GPU: `run.sh` beside it)",
    "log": "2026-11-29-solve-many.md",
}

# GMRES's columns in lockstep (bench/experiments/solve-many/gmres.sh, 2de2022).
GMRES_MANY_CSV = "h200-2026-11-30-solve-many-gmres/solve-many-gmres.csv"

SOLVER_NAMES = {"cg": "CG", "bicgstab": "BiCGStab", "gmres": "GMRES(30)", "spmv": "SpMV"}


def files_of(key):
    out = []
    for pattern in SOURCES[key]["files"]:
        found = sorted(glob.glob(os.path.join(ROOT, RESULTS, pattern)))
        if not found:
            sys.exit(f"benchmarks_md.py: no file matches {RESULTS}/{pattern}")
        out.extend(found)
    return out


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def rel(path):
    return os.path.relpath(path, os.path.join(ROOT, RESULTS))


def med(values):
    return statistics.median(values) if values else None


def f1(v):
    return "-" if v is None else f"{v:.1f}"


def f2(v):
    return "-" if v is None else f"{v:.2f}"


def f3(v):
    return "-" if v is None else f"{v:.3f}"


def para(text):
    """One paragraph, wrapped like the rest of the repository's Markdown."""
    return textwrap.fill(text, width=110, break_long_words=False, break_on_hyphens=False).split("\n") + [""]


def source_lines(key):
    s = SOURCES[key]
    files_of(key)  # every pattern must match
    names = ", ".join(f"`{p}`" for p in s["files"])
    return para(f"Machine: {s['machine']}. Commit: {s['commit']}. Command: {s['command']}. "
                f"Files (under `{RESULTS}/`): {names}. Log: [{s['log']}](bench/log/{s['log']}).")


def device_name(paths):
    for p in paths:
        for r in rows_of(p):
            d = r.get("device", "")
            if d:
                return d.split(" (rank")[0]
    return "?"


def latency():
    paths = files_of("latency")
    times = {}
    for p in paths:
        for r in rows_of(p):
            key = (r["solver"], r["problem"], int(r["n"]), r["backend"], r["execution"])
            times.setdefault(key, []).append(float(r["median_s_per_iter"]) * 1e6)
    out = [f"## {SOURCES['latency']['title']}", ""]
    out += source_lines("latency")
    out += para(f"Device: {device_name(paths)}. Pipelined, f64, CSR, b = ones; us per iteration of 300-iteration "
                "solves (medians). `sync`: a host transfer per iteration; "
                "`resident`: scalars on the device (a GPU's default). " + one_call())
    out += ["| solver | problem | n | CUDA sync | CUDA resident | OpenCL sync | OpenCL resident |",
            "|---|---|---|---|---|---|---|"]
    order = {"cg": 0, "bicgstab": 1, "gmres": 2}
    # A few sizes of each ladder (the files hold every size).
    # (poisson3d's ladder, within 1-4 us of poisson2d's at the same n, is in the files.)
    shown = {"poisson2d": {225, 65025}, "poisson3d": set()}
    cases = sorted({k[:3] for k in times if k[2] in shown.get(k[1], {k[2]})},
                   key=lambda k: (order.get(k[0], 9), k[1], k[2]))
    for s, prob, n in cases:
        cells = [f1(med(times.get((s, prob, n, b, e), []))) for b in ("cuda", "opencl") for e in ("sync", "resident")]
        out.append(f"| {SOLVER_NAMES.get(s, s)} | {prob} | {n} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def one_call():
    """A sentence: the medians of one call per GPU backend and n, new build (old build)."""
    calls = {}
    for p in sorted(glob.glob(os.path.join(RESULTS, ONE_CALL_DIR, "*-n*-r*.csv"))):
        build = os.path.basename(p).split("-")[0]
        for r in rows_of(p):
            calls.setdefault((r["backend"], int(r["n"]), build), []).append(float(r["median_call_s"]) * 1e3)
    def span(values, digits):
        digits = digits if max(values, default=0) < 10 else 0
        return "-".join(f"{v:.{digits}f}" for v in sorted(values))
    parts = [f"{name} " + ", ".join(f"{span(calls[(b, n, 'new')], 1)} ({span(calls.get((b, n, 'old'), []), 1)})"
                                    for n in sorted({k[1] for k in calls if k[0] == b}))
             for b, name in (("cuda", "CUDA"), ("opencl", "OpenCL"))]
    sizes = ", ".join(str(n) for n in sorted({k[1] for k in calls}))
    return (f"One `pipekrylov::solve` after an earlier one (Jacobi CG, 1e-8), ms at n = "
            f"{sizes} ({ONE_CALL_COMMIT}, two rounds, `{ONE_CALL_DIR}`; c6dbba6 in brackets): "
            + "; ".join(parts) + ".")


def bandwidth():
    paths = files_of("bandwidth")
    best, copy_bw = {}, []
    for p in paths:
        for r in rows_of(p):
            if int(r["n"]) < 3_900_000 or r.get("backend") not in ("cuda", "opencl"):
                continue
            if r.get("problem") == "circuit":  # 1.05-1.27x the floor, like poisson2d: in the files
                continue
            if r.get("precision") != "f64" or r.get("variant") != "pipelined":
                continue
            if r.get("solver") not in SOLVER_NAMES or r.get("restart") not in ("30", ""):
                continue
            copy_bw.append(float(r["copy_gb_per_s"]))
            key = (r["problem"], r["solver"], r["backend"])
            ratio = float(r["floor_ratio"])
            if key not in best or ratio < best[key]["ratio"]:
                best[key] = {"ratio": ratio, "us": float(r["median_s_per_iter"]) * 1e6,
                             "floor": float(r["floor_s_per_iter"]) * 1e6, "n": int(r["n"]),
                             "nnz": int(r["nnz"]), "format": r.get("format", ""),
                             "gbs": float(r["achieved_gb_per_s"]), "exec": r.get("execution", "")}
    cusparse = {}
    cpath = os.path.join(ROOT, RESULTS, SOURCES["bandwidth"]["cusparse"])
    for r in rows_of(cpath):
        if r["algorithm"] == "csr_alg1":
            cusparse.setdefault(r["problem"], []).append(float(r["median_s"]) * 1e6)
    out = [f"## {SOURCES['bandwidth']['title']}", ""]
    out += source_lines("bandwidth")
    out += para(f"Device: {device_name(paths)}. Pipelined, f64, us per iteration (median of 5 repeats of 30 "
            "iterations), the best row per matrix, solver and backend among the files (format and execution "
            "mode as given). The floor is the time CSR's bytes per iteration take at the copy bandwidth "
            f"measured in the same run ({min(copy_bw):.0f}-{max(copy_bw):.0f} GB/s), for every layout; "
            "\"x floor\" = time / floor. cuSPARSE: its CSR SpMV (ALG1) on the same matrix, "
            f"`{SOURCES['bandwidth']['cusparse'].split('/')[-1]}`. The power-law matrix (1.9-3.5x its floor) "
            "is in the files.")
    out += ["| problem | n | nnz | solver | floor us | CUDA us | x floor | format | OpenCL us | x floor | format | cuSPARSE us |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    order = {"spmv": 0, "cg": 1, "bicgstab": 2, "gmres": 3}
    # The power-law matrix (1.9-3.5x its floor: the CSR kernels' long rows) is left to the CSVs and the log
    # note to keep this file short.
    cases = sorted({(k[0], k[1]) for k in best if k[0] != "powerlaw"}, key=lambda k: (k[0], order[k[1]]))
    for prob, s in cases:
        c, o = best.get((prob, s, "cuda")), best.get((prob, s, "opencl"))
        ref = c or o
        cells = [prob, str(ref["n"]), str(ref["nnz"]), SOLVER_NAMES[s], f1(ref["floor"])]
        for x in (c, o):
            cells += ["-", "-", "-"] if x is None else [f1(x["us"]), f2(x["ratio"]), f"{x['format']} {x['exec']}"]
        cells.append(f1(med(cusparse.get(prob, []))) if s == "spmv" else "")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def precond_label(r):
    p = r["precond"]
    tri, fac, lvl, s = r.get("trisolve", "-"), r.get("factorization", "-"), r.get("isai_level", "-"), r.get("block_size", "-")
    where = "" if fac in ("-", "", None) else (
        " (host factors)" if fac == "host" else f" (device factors, F = {fac.split(':')[1]})")
    if p == "bilu0":
        solve = "exact solves" if tri == "exact" else f"K = {tri.split(':')[1]} sweeps"
        return f"BILU(0), {solve}{where}"
    if p == "isai":
        return f"block-ISAI k = {lvl}{where}"
    if p == "point-block-jacobi":
        return f"point-block Jacobi (S = {s})"
    return {"none": "none", "jacobi": "Jacobi"}.get(p, p)


def precond_table(key, label, extra=None):
    groups, order = {}, []
    for p in files_of(key):
        for r in rows_of(p):
            name = label(r)
            if name not in groups:
                groups[name] = {}
                order.append(name)
            g = groups[name].setdefault(r["backend"], {"its": [], "setup": [], "solve": [], "total": [], "conv": []})
            g["its"].append(int(r["iterations"]))
            g["setup"].append(float(r.get("precond_setup_s") or r.get("setup_s") or 0))
            g["solve"].append(float(r["solve_s"]))
            g["total"].append(float(r["total_s"]))
            g["conv"].append(r["converged"] == "True")
    out = [f"### {SOURCES[key]['title']}", ""]
    out += source_lines(key)
    out += ["| preconditioner | CUDA its | setup s | solve s | total s | OpenCL its | setup s | solve s | total s |",
            "|---|---|---|---|---|---|---|---|---|"]
    # Configurations the log notes keep but the current table leaves out (variants of a row kept).
    skip = SOURCES[key].get("skip", ())
    for name in order:
        if any(s in name for s in skip):
            continue
        cells = [name]
        for b in ("cuda", "opencl"):
            g = groups[name].get(b)
            if g is None:
                cells += ["-"] * 4
                continue
            its = f"{med(g['its']):.0f}" + ("" if all(g["conv"]) else " (not converged)")
            cells += [its, f3(med(g["setup"])), f3(med(g["solve"])), f3(med(g["total"]))]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def fsai_label(r):
    p = r["precond"]
    prec = "" if r.get("setup_precision") in ("-", "", None) else f", {r['setup_precision']} setup"
    prec = prec.replace("solve setup", "f64 setup")
    if p == "fsai":
        return f"{r['problem']} ({int(r['n']):,}): static FSAI level {r['level']}{prec}"
    if p == "afsai":
        rule = "eq. (17)" if r.get("stop") == "ratio" else "step rule"
        return f"{r['problem']} ({int(r['n']):,}): aFSAI {rule}, eps {r['eps']}{prec}"
    return f"{r['problem']} ({int(r['n']):,}): {precond_label(r)}"


def preconditioners():
    out = ["## Preconditioners: time to solution", ""]
    out += para("Seconds; medians over the rows of each configuration in the listed files; total = setup + "
                "solve. Iterations are counted to the tolerance (a capped run says \"not converged\"). K: "
                "triangular sweeps per factor; F: fixed-point sweeps of the factorization on the device.")
    out += precond_table("precond-convdiff3d", precond_label)
    # Left out to keep this file short (their tables are in their log notes): the Incomplete Poisson rows
    # of SOURCES["precond-ip"] (poisson3d 256^3; the AMG section compares IP and AMG at 1-4M) and the
    # thermal2d rows of SOURCES["precond-thermal2d"] (BILU(0) sweeps against exact solves: the trisolve
    # section below has that comparison).
    out += precond_table("precond-fsai", fsai_label)
    return out


def scaling(key):
    """us per iteration of the slowest rank by (study, solver, column) and round; column "N" for N ranks with
    the defaults, "Nh" for N ranks with the host-staged halo (files host-staged-*)."""
    per = {}
    for p in files_of(key):
        name = os.path.basename(p)
        host_staged = name.startswith("host-staged-")
        parts = rel(p).split("/")
        rnd = next((x.split("-")[0] for x in parts if x[:1] == "r" and x[1:2].isdigit()), "r1")
        for r in rows_of(p):
            if host_staged:
                study = "strong3d" if r["n"] == "16777216" else "weak"
            else:
                study = {"strong-poisson3d": "strong3d", "strong-poisson2d": "strong2d"}.get(
                    name.split("-np")[0], "weak")
            col = r["ranks"] + ("h" if host_staged else "")
            per.setdefault((study, r["solver"], col), {}).setdefault(rnd, []).append(
                float(r["slowest_rank_s_per_iter"]) * 1e6)
    return per


def multi_gpu():
    out = ["## Multi-GPU efficiency: 1 -> 4 GPUs", ""]
    intro = ("Pipelined, f64, CSR, synchronous mode, one rank per GPU; us per iteration of the slowest rank "
             "(median of 5 repeats of 30 iterations, one round). Strong: 3D 256^3 (16,777,216 unknowns) on 1, 2, 4 "
             "GPUs, efficiency t1 / (N tN). Weak: the 3D box of 256 x 256 x 128 unknowns (8,388,608) per GPU, "
             "efficiency t1 / tN. At 4 ranks the halo goes device to device (the default from three ranks on); "
             "\"host-staged\" is the same run with `PIPEKRYLOV_HALO_PEER=0`. Efficiency in brackets.")
    studies = {"strong2d": "strong 2D 4096^2", "strong3d": "strong 3D 256^3", "weak": "weak 3D box"}
    order = {"cg": 0, "bicgstab": 1, "gmres": 2}

    def eff(study, t1, tn, n):
        return t1 / (n * tn) if study.startswith("strong") else t1 / tn

    # The 1 -> 2 GPU rounds of 2026-11-27 (SOURCES["multi-gpu-2"]) are left out to keep this file short:
    # on the 3D studies they are within 4% of the 2-GPU column below; their table (with strong 2D) is in
    # the log note.
    per = scaling("multi-gpu-4")
    out += source_lines("multi-gpu-4")
    out += para(intro)
    out += ["| study | solver | 1 GPU | 2 GPUs | 4 GPUs | 4 GPUs, host-staged |", "|---|---|---|---|---|---|"]
    for (study, solver) in sorted({(k[0], k[1]) for k in per}, key=lambda k: (k[0], order[k[1]])):
        t1 = med(per[(study, solver, "1")]["r1"])
        cells = [studies[study], SOLVER_NAMES[solver], f1(t1)]
        for col, n in (("2", 2), ("4", 4), ("4h", 4)):
            v = per.get((study, solver, col))
            t = med(v["r1"]) if v else None
            cells.append("-" if t is None else f"{t:.1f} ({eff(study, t1, t, n):.2f})")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def amg():
    rows = [r for p in files_of("amg") for r in rows_of(p)]
    out = [f"## {SOURCES['amg']['title']}", ""]
    out += source_lines("amg")
    f32 = {}
    for r in rows_of(os.path.join(RESULTS, PRECOND_F32_CSV)):
        f32.setdefault((r["backend"], r["problem"]), {})[(r["precond"], r["precision"], r["variant"])] = r
    same = all(r["iterations"] == d[(r["precond"], "solve", "classical")]["iterations"]
               for d in f32.values() for r in d.values())
    def ratios(backend, problem):
        d = f32[(backend, problem)]
        cells = []
        for pc in dict.fromkeys(k[0] for k in d):
            s32 = float(d[(pc, "f32", "classical")]["solve_s"])
            classical = f"{pc} {float(d[(pc, 'solve', 'classical')]['solve_s']) / s32:.2f}"
            best = d.get((pc, "solve", "pipelined"))
            cells.append(classical + (f" ({float(best['solve_s']) / s32:.2f})" if best else ""))
        return ", ".join(cells)
    f32_text = ("`--precond-precision f32`, solve phase of f64 classical (pipelined) over f32 (classical), "
                f"{'same iterations' if same else 'iterations differ: see the CSV'}: CUDA 2D 4.19M "
                f"{ratios('cuda', 'poisson2d')}; 3D 16.8M {ratios('cuda', 'poisson3d')}; OpenCL 2D "
                f"4.19M {ratios('opencl', 'poisson2d')}. Goal 1.4x: missed (9b91c57, `precond-f32/run.sh`, "
                f"`{PRECOND_F32_CSV}`).")
    out += para("CG to 1e-8 (true), b = A 1, f64, CSR, s. Ours: SA, Jacobi 1+1, w = 4/3 / rho per level, set "
                "up on the device (MIS-2, SpGEMM) or at anchor sizes on the host (greedy); AMGCL: SA, SPAI0, CUDA. "
                + f32_text)
    out += ["| problem | n | its | setup | solve | total | OpenCL total | op. c. | host setup: its, total | AMGCL its, setup, solve |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    ours = {}
    for r in rows:
        if r["library"] == "pipekrylov" and r["iterations"]:
            ours.setdefault((r["problem"], int(r["n"])), {})[(r["setup_on"], r["backend"])] = r
    theirs = {(r["problem"], int(r["n"])): r for r in rows
              if r["library"] == "amgcl" and r["method"] == "cg+amg(sa,spai0)"}
    for (prob, n), by in sorted(ours.items()):
        c, o, h = by.get(("device", "cuda")), by.get(("device", "opencl")), by.get(("host", "cuda"))
        a = theirs.get((prob, n))
        # The small 3D ladder (within noise of 2D 65536's few ms) is in the file.
        if not c or (prob == "poisson3d" and n < 1_000_000):
            continue
        cells = [prob, str(n), c["iterations"], f3(float(c["setup_s"])), f3(float(c["solve_s"])),
                 f3(float(c["total_s"])), f3(float(o["total_s"])) if o else "-", f2(float(c["operator_complexity"])),
                 f"{h['iterations']}, {f2(float(h['total_s']))}" if h else "-",
                 f"{a['iterations']}, {f2(float(a['setup_s']))}, {f3(float(a['solve_s']))}" if a else "-"]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def trisolve():
    paths = files_of("trisolve")
    rows = [r for p in paths for r in rows_of(p) if r["backend"] == "cuda"]
    out = [f"## {SOURCES['trisolve']['title']}", ""]
    out += source_lines("trisolve")
    out += para("BiCGStab + BILU(0), 1e-8, b = A 1, CUDA (OpenCL alike). `auto` (default): exact on <= "
                "20 levels (GPU).")
    cases = {}
    for r in rows:
        cases.setdefault((r["problem"], int(r["n"])), {})[r["trisolve"]] = r
    cell = lambda by, t: f"{by[t]['iterations']} its {f3(float(by[t]['total_s']))}" if t in by else "-"
    out += para("Exact against 3 sweeps (iterations, s to solution): " + "; ".join(
        f"{prob} {n} ({by.get('exact', {}).get('levels', '?')} levels): {cell(by, 'exact')} against "
        f"{cell(by, 'sweeps:3')}" for (prob, n), by in sorted(cases.items())
        if n >= 1000000 or prob == "elasticity3d") + " (smaller sizes in the file). Since 2026-11-29 `auto` is also "
        "exact where 3 sweeps are over 0.5 (relative) from the exact solve (the olm and 494_bus factors).")
    return out


def python_package():
    paths = {os.path.basename(p): p for p in files_of("python")}
    out = [f"## {SOURCES['python']['title']}", ""]
    out += source_lines("python")
    out += para("CG, f64, 2D Poisson, CuPy matrix and vectors for both (`cupyx.scipy.sparse.linalg.cg` against "
                "`pipekrylov.Solver(...).solve(b)`, b a CuPy array solved in place: no host copy). us per "
                "iteration = wall time of the Python call / iterations (a fixed count); loop = the library's "
                "iteration loop alone.")
    out += ["| n | CuPy us/it | pipekrylov us/it | speedup | loop us/it |", "|---|---|---|---|---|"]
    for r in rows_of(paths["per_iteration.csv"]):
        out.append(f"| {r['n']} | {f1(float(r['cupy_us_per_it']))} | {f1(float(r['pipekrylov_us_per_it']))} | "
                   f"{float(r['speedup']):.1f}x | {f1(float(r['loop_us_per_it']))} |")
    out.append("")
    tts = rows_of(os.path.join(RESULTS, PYTHON_TTS_CSV))
    def one_call(n, source):
        return ", ".join(f"{r['solver'].replace('pipekrylov cg+', '')} {f3(float(r['one_call_s']))}"
                         for r in tts if r["n"] == n and r["input"] == source
                         and r["solver"] in ("pipekrylov cg+none", "pipekrylov cg+amg"))
    out += para(f"Time to 1e-8, one `pipekrylov.cg` call (s; {PYTHON_TTS_COMMIT}, `python-in-place/run.sh`): "
                + "; ".join(
        f"n = {n}: cupyx cg " + "".join(f3(float(r["solve_s"])) for r in tts if r["n"] == n and r["input"] == "cupy"
                                         and r["solver"] == "cupyx cg")
        + f"; SciPy A: {one_call(n, 'scipy')}; CuPy A in place: {one_call(n, 'cupy')}"
        for n in sorted({r["n"] for r in tts}, key=int)) + ".")
    out.pop()
    ov = rows_of(os.path.join(RESULTS, PYTHON_OVERHEAD_CSV))
    calls = {}
    for r in ov:
        if r["call"] != "pipekrylov.cg vs pipekrylov::solve":
            calls.setdefault(r["call"], []).append(float(r["overhead_us"]))
    plain = {}
    for path in sorted(glob.glob(os.path.join(RESULTS, PYTHON_PLAIN_TXT))):
        for line in open(path):
            m = re.match(r"new round \d: (\w+) n = (\d+): .* cg-solve ([-\d.]+)", line)
            if m and int(m.group(2)) <= 4096 and m.group(1) == "cuda":
                plain.setdefault(m.group(1), {}).setdefault(m.group(2), []).append(float(m.group(3)))
    out += para("Per-call overhead (us), `pipekrylov.cg` over `pipekrylov::solve` on a held `CsrMatrix` "
                "(6354cbb, `python-call-steps/flat-check.sh`, 6 rounds): " + "; ".join(
                    f"{b} n = " + ", ".join(v) + ": medians " + ", ".join(
                        f1(statistics.median(x)) for x in v.values()) + " (rounds " + ", ".join(
                        f"{f1(min(x))}-{f1(max(x))}" for x in v.values()) + "; goal 20)"
                    for b, v in plain.items()) + "; " + "; ".join(
                    f"{c} {f1(min(v))}-{f1(max(v))}" for c, v in calls.items())
                + " (49a33d3).")
    return out


def ilu():
    new_path, old_path = files_of("ilu")
    out = [f"## {SOURCES['ilu']['title']}", ""]
    out += source_lines("ilu")
    out += para("GMRES(30) to 1e-8 (true), b = A 1, automatic `ilu`; before ILUTP and `bilu0`: CUDA, setup + solve s.")
    out += ["| matrix | n | ilu its: host, CUDA, OpenCL | fill | factors | setup (ms, CUDA) | before ILUTP | bilu0 |",
            "|---|---|---|---|---|---|---|---|"]
    new, old = {}, {}
    for r in rows_of(new_path):
        new.setdefault(r["matrix"], {})[r["backend"]] = r
    for r in rows_of(old_path):
        old.setdefault(r["matrix"], {})[(r["precond"], r["backend"])] = r

    def before(r):
        if r is None:
            return "-"
        if r["converged"] != "True":
            return r["note"].split(":")[0] if r["note"] else f"not converged ({r['iterations']} its)"
        return f"{r['iterations']} its, {f3(float(r['setup_s']))} + {f3(float(r['solve_s']))}"
    for m, g in new.items():
        its = ", ".join(g[b]["iterations"] if b in g else "-" for b in ("host", "cuda", "opencl"))
        c = g.get("cuda") or next(iter(g.values()))
        o = old.get(m, {})
        out.append(f"| {m} | {c['n']} | {its} | {c['fill']} | {c['matching']}, {c['ordering']}, {c['factorization']} | "
                   f"{c['setup_ms']} | {before(o.get(('ilu', 'cuda')))} | {before(o.get(('bilu0', 'cuda')))} |")
    out.append("")
    return out


def refresh():
    by = {}
    for p in files_of("refresh"):
        for r in rows_of(p):
            by.setdefault(r["backend"], {})[r["precond"]] = r
    out = [f"## {SOURCES['refresh']['title']}", ""]
    out += source_lines("refresh")
    ratio = lambda b, k: f"{float(by[b][k]['refresh_over_full']):.2f}" if k in by.get(b, {}) else "-"
    cuda = by.get("cuda", {})
    out += para("`update_values` against a new setup, n = 1M (poisson3d: CG, convdiff3d: BiCGStab), solves "
                "equal to a fresh setup's. CUDA, full -> first refresh s (ratio; a loop's, the faster of two "
                "more): " + "; ".join(
                    f"{k} {f3(float(r['full_setup_s']))} -> {f3(float(r['refresh_s']))} ({ratio('cuda', k)}; "
                    f"{float(r['steady_over_full']):.2f})"
                    for k, r in cuda.items()) + ". Loop ratios over 0.35: "
                + "; ".join(f"{b} " + (", ".join(f"{k} {float(r['steady_over_full']):.2f}" for k, r in by[b].items()
                                                 if float(r['steady_over_full']) > 0.35) or "none")
                            for b in ("cuda", "opencl", "host") if b in by) + ".")
    return out


def many():
    paths = files_of("many")
    rows = {(r["solver"], r["variant"], r["backend"], r["nrhs"]): r for r in rows_of(paths[0])}
    us = lambda *k: float(rows[k]["us_per_iteration"])
    out = [f"## {SOURCES['many']['title']}", ""]
    out += source_lines("many")
    cg = [(b, us("cg", "pipelined", b, "1"), us("cg", "classical", b, "1"), us("cg", "classical", b, "8"))
          for b in ("cuda", "opencl")]
    bi = (us("bicgstab", "pipelined", "cuda", "1"), us("bicgstab", "classical", "cuda", "1"),
          us("bicgstab", "classical", "cuda", "8"))
    gmres = {(r["variant"], r["nrhs"]): float(r["us_per_iteration"])
             for r in rows_of(os.path.join(RESULTS, GMRES_MANY_CSV))
             if (r["solver"], r["backend"]) == ("gmres", "cuda")}
    gm = (gmres[("pipelined", "1")], gmres[("classical", "1")], gmres[("classical", "8")])
    out += para("`--nrhs 8` (classical recurrences in lockstep; CG: three block kernels per step), us per "
                "iteration of the block against one right-hand side (pipelined; classical): CG, 3D Poisson 4.1M, "
                + "; ".join(f"{b} {f1(k8)} against {f1(p1)}; {f1(c1)} ({k8 / p1:.1f}x; {k8 / c1:.1f}x)"
                            for b, p1, c1, k8 in cg)
                + f"; BiCGStab, convdiff3d 1M, CUDA {f1(bi[2])} against {f1(bi[0])}; {f1(bi[1])} "
                f"({bi[2] / bi[0]:.1f}x; {bi[2] / bi[1]:.1f}x); GMRES(30) + Jacobi (2de2022, `gmres.sh`) "
                f"{f1(gm[2])} against {f1(gm[0])}; {f1(gm[1])} ({gm[2] / gm[0]:.1f}x; {gm[2] / gm[1]:.1f}x: "
                "so pipelined GMRES runs them one by one). Goal 3.5x: missed (traffic floor: log).")
    x2 = {(r["study"], r["ranks"]): r for r in rows_of(paths[1])}
    s1, s2, w1, w2 = (x2[k] for k in (("strong", "1"), ("strong", "2"), ("weak", "1"), ("weak", "2")))
    sv = lambda r: float(r["solve_s"])
    out += para(f"CG + AMG across the ranks (`Amg::new_distributed`, set up on the hosts), two H200s, one rank "
                f"per GPU: strong 256^3 {s1['iterations']} -> {s2['iterations']} iterations, "
                f"solve {f3(sv(s1))} -> {f3(sv(s2))} s (efficiency {sv(s1) / (2 * sv(s2)):.2f}; goal 0.80), setup "
                f"{f1(float(s1['precond_setup_s']))} -> {f1(float(s2['precond_setup_s']))} s on the hosts; weak (256 x 256 x "
                f"128 per GPU) solve {f3(sv(w1))} -> {f3(sv(w2))} s (efficiency {sv(w1) / sv(w2):.2f}; goal 0.85).")
    return out


def document():
    out = ["# Benchmarks", ""]
    out += para("The current numbers, from the committed CSVs under each table (`python3 scripts/benchmarks_md.py`), "
                "with machine, commit, command and log. Dated notes: [bench/log/](bench/log/README.md); device "
                "scripts: [bench/experiments/](bench/experiments/README.md); method: [PERFORMANCE](docs/PERFORMANCE.md).")
    out += latency()
    out += bandwidth()
    out += preconditioners()
    out += amg()
    out += ilu()
    out += trisolve()
    out += refresh()
    out += multi_gpu()
    out += python_package()
    out += many()
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    text = document()
    target = os.path.join(ROOT, "BENCHMARKS.md")
    if "--check" in sys.argv[1:]:
        with open(target) as f:
            if f.read() != text:
                sys.exit("BENCHMARKS.md is not what scripts/benchmarks_md.py writes; run it")
        return
    with open(target, "w") as f:
        f.write(text)
    print(f"wrote BENCHMARKS.md ({text.count(chr(10))} lines)")


if __name__ == "__main__":
    main()
