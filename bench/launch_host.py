"""The host's work of a wavec GPU launch from Python, on a machine without
a GPU: `Kernel.__call__` -> `_launch` with everything but the driver.

The kernels are built for sm_90 through ptxas (no GPU needed: the CUDA
toolkit's ptxas must be there); wavec_module_arg_shape and
wavec_module_launch are the real ones, the driver under them the fake of
tests/python/fake_cuda.c (cuLaunchKernel records its arguments and
returns). The arguments are the stand-in tensors of
tests/python/fake_torch.py: the calls into torch are counted, their cost
is the stand-in's, not torch's.

    python3 bench/launch_host.py            # per call, and the calls into torch per call
    python3 bench/launch_host.py --steps    # the slow path (the first call, a changed shape) step by step

Prints microseconds per call, the median of 5 runs of N calls.
"""
import argparse
import ctypes
import os
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
os.environ.setdefault("WAVEC_LIB", os.path.join(ROOT, "build", "release", "libwavec.so"))

import common  # noqa: E402

FAKE_CUDA = ctypes.CDLL(common.build_fake_cuda(tempfile.mkdtemp(prefix="wavec-fake-cuda-")),
                        mode=ctypes.RTLD_GLOBAL)  # before wavec opens the driver

import wavec  # noqa: E402
from wavec._lib import lib  # noqa: E402
import fake_torch  # noqa: E402


def us_per_call(fn, n):
    fn()
    r = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        r.append(1e6 * (time.perf_counter() - t) / n)
    return sorted(r)[2]


def kernels():
    gemm = wavec.compile(os.path.join(ROOT, "bench", "gemm.wave"), kernel="gemm_bf16", target="sm_90",
                         ptxas=True, M=256, N=256, K=256)
    dyn = wavec.compile(os.path.join(ROOT, "tests", "kernels", "dynamic.wave"), kernel="gemm_dyn",
                        target="sm_90", ptxas=True)
    wgmma = wavec.compile(os.path.join(ROOT, "bench", "gemm.wave"), kernel="gemm_wgmma_bf16", target="sm_90a",
                          ptxas=True, hardware=dict(stages=4), M=256, N=256, K=256, BLOCK_N=128)
    return gemm, dyn, wgmma


def steps(k, args, torch, n):
    """The slow path (what _launch did for every call before the fast
    path), step by step, as it is written in wavec/__init__.py's
    _launch_checked."""
    adapted = k._adapt_all(args, gpu=True)
    dev = 0
    rows = [
        ("adapt the arguments (_adapt_all)", lambda: k._adapt_all(args, gpu=True)),
        ("devices, tensors", lambda: ({a.device[1] for a in adapted if a.device[1] is not None},
                                      [a.torch for a in adapted if a.torch is not None])),
        ("torch.cuda.current_stream(dev).cuda_stream",
         lambda: torch.cuda.current_stream(args[0].device).cuda_stream),
        ("torch._C._cuda_getCurrentRawStream(dev)", lambda: torch._C._cuda_getCurrentRawStream(dev)),
        ("_stream_handle", lambda: wavec._stream_handle(0)),
        ("_sizes_of", lambda: k._sizes_of(k.args, [a.shape for a in adapted])),
        ("the lock", lambda: k._lock.acquire() and k._lock.release()),
        ("params[i] = ptr", lambda: [k._params.__setitem__(i, a.ptr) for i, a in enumerate(adapted)]),
        ("_give_shapes", lambda: k._give_shapes(adapted, lib.wavec_module_arg_shape, k._module)),
        ("torch.cuda.current_device() != dev", lambda: torch.cuda.current_device() != dev),
        ("torch._C._cuda_getDevice() != dev", lambda: torch._C._cuda_getDevice() != dev),
        ("wavec_module_launch (fake driver)", lambda: lib.wavec_module_launch(k._module, 0, k._params)),
    ]
    for name, f in rows:
        print(f"    {name:46s} {us_per_call(f, n):6.2f} us")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", action="store_true")
    p.add_argument("-n", type=int, default=20000)
    opt = p.parse_args()
    gemm, dyn, wgmma = kernels()
    with fake_torch.installed() as torch:
        a, b, c = (torch.tensor((256, 256), "bfloat16", ptr=0x7F0000000000 + i * 0x100000) for i in range(3))
        da, db = (torch.tensor((256, 128), "float16", ptr=0x7F0001000000 + i * 0x100000) for i in range(2))
        dc = torch.tensor((256, 256), "float32", ptr=0x7F0002000000)
        da2, db2 = (torch.tensor((128, 64), "float16", ptr=0x7F0003000000 + i * 0x100000) for i in range(2))
        dc2 = torch.tensor((128, 128), "float32", ptr=0x7F0004000000)
        print(f"launch host path, stand-in tensors, the fake CUDA driver (python {sys.version.split()[0]})")
        cases = [
            ("gemm_bf16 256^3, same tensors each call", lambda: gemm(a, b, c)),
            ("gemm_wgmma_bf16 256^3 (3 tensor maps)", lambda: wgmma(a, b, c)),
            ("gemm_dyn (run-time M N K), same shapes", lambda: dyn(da, db, dc)),
            ("gemm_dyn, shapes alternate each call", lambda: (dyn(da, db, dc), dyn(da2, db2, dc2))),
        ]
        x = a
        one = us_per_call(lambda: (x.dtype, x.device, x.shape, x.is_contiguous(), x.data_ptr()), opt.n) / 5
        print(f"  (one call into the stand-in torch: {one:.2f} us; wavec's own = the total less calls x that)")
        for name, f in cases:
            f()
            torch.calls.clear()
            launches = ctypes.c_ulonglong.in_dll(FAKE_CUDA, "fake_launches").value
            f()
            per = sum(torch.calls.values())
            assert ctypes.c_ulonglong.in_dll(FAKE_CUDA, "fake_launches").value > launches
            us = us_per_call(f, opt.n)
            if "alternate" in name:
                us, per = us / 2, per / 2
            print(f"  {name:44s} {us:6.2f} us/call, {per:g} calls into torch per call, "
                  f"wavec's own {us - per * one:6.2f} us")
        if opt.steps:
            print("  the slow path (every call before the fast path), gemm_bf16, step by step:")
            steps(gemm, (a, b, c), torch, opt.n)


if __name__ == "__main__":
    main()
