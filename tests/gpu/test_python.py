"""The Python package on the GPU (tests/gpu; needs an NVIDIA GPU, its
driver and PyTorch with CUDA; CI does not run it). From the repository
root, after `make lib`:

    WAVEC_LIB=build/release/libwavec.so python3 tests/gpu/test_python.py

One line per case ("ok", "FAIL" with the traceback, "SKIP" with why), the
measurements as indented lines, and "N passed, N failed" last; exit 0 when
nothing failed. The cache is a fresh temporary folder."""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.chdir(ROOT)
if os.environ.get("WAVEC_LIB"):
    os.environ["WAVEC_LIB"] = os.path.abspath(os.environ["WAVEC_LIB"])
os.environ["WAVEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="wavec-gpu-cache-")

try:
    import torch
except ImportError:
    print("SKIP all: torch is not installed")
    print("0 passed, 0 failed")
    sys.exit(0)
if not torch.cuda.is_available():
    print("SKIP all: no CUDA device for torch")
    print("0 passed, 0 failed")
    sys.exit(0)

import wavec  # noqa: E402

GEMM = "examples/gemm.wave"
GEMM_WGMMA = "examples/gemm_wgmma.wave"
BENCH = "bench/gemm.wave"
cases = []


def case(fn):
    cases.append(fn)
    return fn


def note(msg):
    print("  " + msg, flush=True)


def close(c, ref, tol=1e-3):
    err = ((c.double() - ref.double()).norm() / ref.double().norm()).item()
    assert err < tol, f"relative error {err:.3g}"
    return err


def inputs(m, n, k, dtype=torch.float16):
    a = torch.randn(m, k, dtype=dtype, device="cuda")
    b = torch.randn(n, k, dtype=dtype, device="cuda")
    return a, b


@case
def readme_torch_example_verbatim():
    readme = open("README.md").read()
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "torch.matmul" in b]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert r.returncode == 0, r.stderr
    note("README example: " + r.stdout.strip())


@case
def mma_and_wgmma_kernels_on_tensors():
    for path, name, tgt, sizes in ((GEMM, "gemm", "sm_90", (256, 192, 160)),
                                   (GEMM_WGMMA, "gemm_wgmma", "sm_90a", (256, 256, 320)),
                                   (GEMM, "gemm", "auto", (128, 128, 64))):
        m, n, k = sizes
        kern = wavec.compile(path, kernel=name, target=tgt, M=m, N=n, K=k)
        a, b = inputs(m, n, k)
        c = torch.full((m, n), float("nan"), device="cuda")
        kern(a, b, c)
        torch.cuda.synchronize()
        close(c, a.double() @ b.double().T)
        assert kern.target in ("sm_90", "sm_90a"), kern.target


@case
def bf16_tensors():
    kern = wavec.compile(BENCH, kernel="gemm_bf16", target="sm_90", M=256, N=256, K=64)
    a, b = inputs(256, 256, 64, torch.bfloat16)
    c = torch.empty(256, 256, dtype=torch.bfloat16, device="cuda")
    kern(a, b, c)
    torch.cuda.synchronize()
    close(c, a.double() @ b.double().T, tol=1e-2)


@case
def argument_errors_name_the_argument():
    kern = wavec.compile(GEMM, target="sm_90", M=128, N=128, K=64)
    a, b = inputs(128, 128, 64)
    c = torch.empty(128, 128, device="cuda")
    bad = [((a.cpu(), b, c), "a", "host memory"), ((a, b.float(), c), "b", "element type float32"),
           ((a, b, c[:, :64]), "c", "shape [128, 64]"), ((a, b, c.t()), "c", "not contiguous"),
           ((a, b[:, :32], c), "b", "shape")]
    for args, arg, text in bad:
        try:
            kern(*args)
        except wavec.ArgumentError as e:
            assert e.arg == arg and text in str(e), str(e)
        else:
            raise AssertionError(f"no error for {text}")


@case
def launches_on_the_current_stream():
    kern = wavec.compile(GEMM, target="sm_90", M=256, N=256, K=256)
    a, b = inputs(256, 256, 256)
    c = torch.full((256, 256), float("nan"), device="cuda")
    kern(a, b, c)  # loads the module
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        c.fill_(float("nan"))
        torch.cuda._sleep(200_000_000)  # keeps s busy for a while
        kern(a, b, c)
        pending = not s.query()
    # queued behind the sleep on s: not done yet, and the default stream idle
    assert pending, "the launch did not wait for the work queued on the current stream"
    s.synchronize()
    close(c, a.double() @ b.double().T)
    # an explicit stream
    s2 = torch.cuda.Stream()
    c.fill_(float("nan"))
    torch.cuda.synchronize()
    kern(a, b, c, stream=s2)
    s2.synchronize()
    close(c, a.double() @ b.double().T)


@case
def cuda_graph_capture_and_replay():
    kern = wavec.compile(GEMM, target="sm_90", M=128, N=128, K=128)
    a, b = inputs(128, 128, 128)
    c = torch.empty(128, 128, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        kern(a, b, c)  # warm-up: the module is loaded outside the capture
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        kern(a, b, c)
    for _ in range(3):
        a.copy_(torch.randn_like(a))
        c.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        close(c, a.double() @ b.double().T)


@case
def cache_hit_under_a_millisecond():
    sizes = dict(M=512, N=512, K=256)
    t = time.perf_counter()
    k1 = wavec.compile(GEMM_WGMMA, target="sm_90a", **sizes)
    miss = (time.perf_counter() - t) * 1e3
    assert not k1.cached
    hits = []
    for _ in range(21):
        t = time.perf_counter()
        k2 = wavec.compile(GEMM_WGMMA, target="sm_90a", **sizes)
        hits.append((time.perf_counter() - t) * 1e3)
        assert k2.cached
    a, b = inputs(512, 512, 256)
    c = torch.empty(512, 512, device="cuda")
    torch.cuda.synchronize()
    t = time.perf_counter()
    k2(a, b, c)  # its first launch loads the cubin into the context
    first = (time.perf_counter() - t) * 1e3
    torch.cuda.synchronize()
    close(c, a.double() @ b.double().T)
    note(f"compile miss (wavec + driver JIT) {miss:.1f} ms; hit median {statistics.median(hits):.3f} ms; "
         f"first launch of a hit (cuModuleLoadData + launch) {first:.3f} ms")
    assert statistics.median(hits) < 1.0
    assert statistics.median(hits) + first < 2.0


@case
def second_process_spends_no_time_compiling():
    code = ("import time, torch, wavec\ntorch.zeros(1, device='cuda')\nt = time.perf_counter()\n"
            "k = wavec.compile('examples/attention_fwd_wgmma.wave', kernel='attention_fwd_wgmma', target='sm_90a', "
            "B=2, M=256, K2=256, N=128, K1=128)\n"
            "print(k.cached, (time.perf_counter() - t) * 1e3)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split())
    assert outs[0][0] == "False" and outs[1][0] == "True", outs
    note(f"attention_fwd_wgmma: first process {float(outs[0][1]):.1f} ms (compile + JIT), "
         f"second process {float(outs[1][1]):.3f} ms (cache hit)")
    assert float(outs[1][1]) < 1.0


@case
def custom_op_eager_compile_and_cuda_graphs():
    kern = wavec.compile(GEMM_WGMMA, target="sm_90a", M=256, N=256, K=128)
    op = wavec.custom_op(kern)
    assert wavec.custom_op(kern) is op  # registered once per variant
    a, b = inputs(256, 256, 128)
    ref = a.double() @ b.double().T
    close(op(a, b), ref)
    if hasattr(torch.library, "opcheck"):
        torch.library.opcheck(op, (a, b))

    def f(x, y):
        return torch.relu(op(x, y)) + 1.0

    want = torch.relu(ref) + 1.0
    close(torch.compile(f, fullgraph=True)(a, b), want)
    g = torch.compile(f, mode="reduce-overhead", fullgraph=True)  # CUDA graphs
    for _ in range(4):
        a.copy_(torch.randn_like(a))
        close(g(a, b).clone(), torch.relu(a.double() @ b.double().T) + 1.0)
    # shapes from the fake implementation, without running the kernel
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode() as mode:
        fa, fb = mode.from_tensor(a), mode.from_tensor(b)
        out = op(fa, fb)
        assert tuple(out.shape) == (256, 256) and out.dtype == torch.float32, out


@case
def autotune_picks_a_correct_config():
    configs = [dict(BLOCK_M=128, BLOCK_N=128), dict(BLOCK_M=64, BLOCK_N=128),
               dict(BLOCK_M=128, BLOCK_N=256, hardware=dict(stages=4)),
               dict(BLOCK_M=128, BLOCK_N=100),  # no wgmma N of 100: a compile error (96 is legal since ragged sizes)
               dict(BLOCK_M=64, BLOCK_N=256, hardware=dict(stages=2))]
    lines = []
    t = wavec.autotune(GEMM_WGMMA, "gemm_wgmma", configs, key=["M", "N", "K"], target="sm_90a",
                       progress=lines.append, rep=10)
    k = t.best(M=1024, N=1024, K=512)
    for line in lines:
        note(line)
    results = t.results[(1024, 1024, 512)]
    assert [r.status for r in results].count("ok") == 4, results
    assert results[0].status == "ok" and results[0].ms == min(r.ms for r in results if r.ms)
    a, b = inputs(1024, 1024, 512)
    c = torch.empty(1024, 1024, device="cuda")
    k(a, b, c)
    torch.cuda.synchronize()
    close(c, a.double() @ b.double().T)
    # a new tuner reads the choice back without tuning
    lines2 = []
    t2 = wavec.autotune(GEMM_WGMMA, "gemm_wgmma", configs, key=["M", "N", "K"], target="sm_90a",
                        progress=lines2.append)
    assert t2.best_config(M=1024, N=1024, K=512) == results[0].config and not lines2


@case
def dynamic_sizes_one_module_every_shape():
    """tests/kernels/dynamic.wave's gemm_dyn (mma.sync) and gemm_dyn_wgmma
    (TMA rings: tensor maps over each call's shapes): one module, cached
    once, run at ragged sizes given by the tensors; a custom op allocates
    its output from the inputs' sizes; shapes that disagree are refused."""
    for kname, target, kmul in (("gemm_dyn", "sm_90", 8), ("gemm_dyn_wgmma", "sm_90a", 64)):
        k = wavec.compile("tests/kernels/dynamic.wave", kernel=kname, target=target)
        assert k.dynamic == ["K", "M", "N"], k.dynamic
        for m, n, kk in ((1, 64, 64), (17, 33, 100), (200, 72, 96), (129, 250, 40), (4097, 4095, 1000)):
            kk = -(-kk // kmul) * kmul
            a, b = inputs(m, n, kk)
            c = torch.full((m, n), float("nan"), device="cuda")
            k(a, b, c)
            torch.cuda.synchronize()
            close(c, a.double() @ b.double().T, 1e-5)
        k2 = wavec.compile("tests/kernels/dynamic.wave", kernel=kname, target=target)
        assert k2.cached, "a second compile of a dynamic kernel is a cache hit"
        op = wavec.custom_op(k2)
        a, b = inputs(300, 130, 2 * kmul)
        close(op(a, b), a.double() @ b.double().T, 1e-5)
        try:
            k(a, inputs(130, 300, kmul)[0], torch.empty(300, 130, device="cuda"))
        except wavec.ArgumentError as e:
            assert "(K)" in str(e), e
        else:
            raise AssertionError("shapes that disagree on K were launched")
        note(f"{kname}: one module at 5 sizes up to 4097x4095x1000, cache hit, custom op")


def main():
    only = sys.argv[1:]
    passed = failed = 0
    for fn in cases:
        if only and not any(o in fn.__name__ for o in only):
            continue
        try:
            fn()
        except Exception:
            failed += 1
            print(f"FAIL {fn.__name__}\n    " + traceback.format_exc().rstrip().replace("\n", "\n    "), flush=True)
        else:
            passed += 1
            print(f"ok {fn.__name__}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
