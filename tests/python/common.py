"""Helpers of the Python tests."""
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEMM = os.path.join(ROOT, "examples", "gemm.wave")
GEMM_WGMMA = os.path.join(ROOT, "examples", "gemm_wgmma.wave")
BENCH_GEMM = os.path.join(ROOT, "bench", "gemm.wave")


def f32_to_bf16_bits(x):
    """float32 array -> uint16 bf16 patterns, rounded to nearest even."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    b = b + 0x7FFF + ((b >> 16) & 1)
    return (b >> 16).astype(np.uint16)


def bf16_bits_to_f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def rel_err(x, ref):
    x, ref = np.asarray(x, np.float64), np.asarray(ref, np.float64)
    return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))


def python(code, env=None, cwd=None):
    """Runs code in a fresh interpreter with the package on its path;
    (exit status, stdout, stderr)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, cwd=cwd or ROOT,
                       timeout=300)
    return r.returncode, r.stdout, r.stderr


def ptxas_present():
    import wavec._lib as L
    import ctypes
    # the library's own search, through a load that needs no GPU
    for p in ([os.environ["WAVEC_PTXAS"]] if os.environ.get("WAVEC_PTXAS") else []) + \
             [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"), "/usr/local/cuda/bin/ptxas"]:
        if os.access(p, os.X_OK):
            return p
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if d and os.access(os.path.join(d, "ptxas"), os.X_OK):
            return os.path.join(d, "ptxas")
    return None


def build_fake_cuda(folder):
    """tests/python/fake_cuda.c built into folder as a library with the
    soname libcuda.so.1 (by $CC, else cc); its path, or None without a C
    compiler. Loaded with ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    before wavec opens the driver, it is the driver wavec finds: load it
    only in a process of its own."""
    import shutil
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    out = os.path.join(folder, "libcuda.so.1")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-Wl,-soname,libcuda.so.1", "-o", out,
                    os.path.join(ROOT, "tests", "python", "fake_cuda.c")], check=True, timeout=120)
    return out
