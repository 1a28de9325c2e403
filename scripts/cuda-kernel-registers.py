"""Registers per kernel of the CUDA module at a git revision (or the working tree) as the CUDA backend
builds them for the H200: NVRTC, sm_90 CUBIN, f64, 256 threads per block, default -D options.
For comparing revisions without a GPU; the library's own reader is
pipekrylov::backend::cuda::kernel_registers_for_arch (checked in tests/integration/cuda_nvrtc.rs).
Needs the NVRTC wheel (pip install nvidia-cuda-nvrtc==13.0.88) and LD_LIBRARY_PATH set to its
nvidia/cu13/lib folder, as scripts/test.sh does.
    python3 scripts/cuda-kernel-registers.py REV|worktree [kernel-name-substring ...]
Each line also gives the md5 of the kernel's machine code (its .text section), to check that a
refactoring left the code as it was."""
import ctypes, glob, os, re, site, struct, subprocess, sys
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rev = sys.argv[1]; pats = sys.argv[2:]
def read(path):
    if rev == "worktree":
        full = os.path.join(TOP, path)
        return open(full).read() if os.path.exists(full) else ""
    r = subprocess.run(["git", "-C", TOP, "show", f"{rev}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""
# The build order: src/backend/kernel_sources.rs's list (kernels/ written once), or, before it,
# the kernels-cu/ files of src/backend/cuda/module.rs.
listing = read("src/backend/kernel_sources.rs")
if "sources!(" in listing:
    body = listing[listing.index("sources!(\n"):]
    paths = ["kernels/dialect/cuda.h"] + [f"kernels/{f}.kc" for f in re.findall(r'"(\w+)"', body[: body.index(");")])]
else:
    paths = ["kernels-cu/" + n for n in ["reduce.cu", "vector.cu", "spmv.cu", "cg.cu", "bicgstab.cu", "gmres.cu",
             "precond.cu", "trsv.cu", "isai.cu", "bilu.cu", "ip_assemble.cu", "ip.cu", "fsai.cu", "halo.cu",
             "resident.cu"]]
src = "".join(f'#line 1 "{p}"\n' + read(p) + "\n" for p in paths)
lib = [p for d in site.getsitepackages() + [site.getusersitepackages()]
       for p in glob.glob(os.path.join(d, "nvidia", "cu13", "lib", "libnvrtc.so*"))][0]
nv = ctypes.CDLL(lib)
prog = ctypes.c_void_p()
assert nv.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"pk.cu", 0, None, None) == 0
opts = [b"--gpu-architecture=sm_90", b"-DSCALAR=double", b"-DWG=256", b"-DPK_LOAD_HINTS=1", b"-DPK_EARLY_TRIGGER=1", b"--std=c++17", b"-default-device", b"--fmad=false", b"--extra-device-vectorization"]
arr = (ctypes.c_char_p * len(opts))(*opts)
rc = nv.nvrtcCompileProgram(prog, len(opts), arr)
if rc != 0:
    n = ctypes.c_size_t(); nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n)); b = ctypes.create_string_buffer(n.value); nv.nvrtcGetProgramLog(prog, b); print(b.value.decode()[-3000:]); sys.exit(1)
n = ctypes.c_size_t(); nv.nvrtcGetCUBINSize(prog, ctypes.byref(n)); cub = ctypes.create_string_buffer(n.value); nv.nvrtcGetCUBIN(prog, cub); data = cub.raw
shoff, = struct.unpack_from("<Q", data, 0x28); shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
stro = secs[shstrndx][4]
def nm(o):
    e = data.index(b"\0", stro + o); return data[stro + o:e].decode()

symtab = [x for x in secs if x[1] == 2][0]
strtab = secs[symtab[6]]
def sname(o):
    b = strtab[4] + o; e = data.index(b"\0", b); return data[b:e].decode()
syms = []
for i in range(symtab[5] // 24):
    st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", data, symtab[4] + 24 * i)
    syms.append(sname(st_name))
regs = {}
spill = {}
for x in secs:
    if nm(x[0]) == ".nv.info":
        p, end = x[4], x[4] + x[5]
        while p < end:
            fmt, attr, val = struct.unpack_from("<BBH", data, p); p += 4
            if fmt == 4:
                if attr == 0x2f:
                    si, c = struct.unpack_from("<II", data, p); regs[syms[si]] = c
                p += val
import hashlib
text = {nm(x[0])[len(".text."):]: hashlib.md5(data[x[4]:x[4] + x[5]]).hexdigest()[:12]
        for x in secs if nm(x[0]).startswith(".text.")}
for k, c in sorted(regs.items()):
    if not pats or any(q in k for q in pats):
        print(f"{k:40} regs {c}  text md5 {text.get(k, '-')}")
