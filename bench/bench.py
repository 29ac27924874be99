"""wavec benchmarks on the GPU, side by side with the peers in one run.

For each workload: compile the .wave kernel with wavec's Python package
(python/: source -> PTX in-process, timed; PTX -> cubin with ptxas, timed),
run it on torch tensors (wavec.Kernel: the driver's cubin, launched on
torch's current stream), check it against the peer's result,
and time both with CUDA events (median of 20 after 3 warm-ups, the 20
queued back to back) in the same process. FLOP conventions as ../shared/anchors/README.md: GEMM 2MNK,
attention forward 4*B*H*N*N*D (halved when causal).

Usage (on the GPU machine, from the repo root, after `make MODE=release all lib`):
  python3 bench/bench.py [--quick] [--out DIR] [--only gemm|attn|fwd|bwd|bwd_wg|tma|fp8|ragged|schedule|launch|pingpong|overlap|softmax|fwd_sched|fa3|pers]
Writes DIR/results.json, DIR/RESULTS.md and DIR/results.png and prints a
table last.
"""
import argparse, json, math, os, re, subprocess, sys, tempfile, time
import torch
import torch.nn.functional as F

WAVEC = os.environ.get("WAVEC", "build/release/wavec")
dev = "cuda"

# ---- wavec's Python package (python/, over build/release/libwavec.so) --------
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import wavec  # noqa: E402

torch.zeros(1, device=dev)  # the primary context, current on this thread

def wavec_compile(wave, kernel, defs, hardware=None, target="sm_90"):
    """Returns (Kernel, ms source->PTX, ms PTX->cubin, info): the kernel
    through wavec.compile (launched on torch's current stream; its module
    from the disk cache when it was built before), the compile times of a
    cold compile (source to PTX by the library in this process, PTX to cubin
    by ptxas -O3) and ptxas's resource report."""
    # WV_PTXAS=1: the CUDA toolkit's ptxas assembles, 0: the driver's
    # compiler; unset: the library's choice (ptxas where it is found)
    k = wavec.compile(wave, kernel=kernel, target=target, hardware=hardware,
                      ptxas={"1": True, "0": False}.get(os.environ.get("WV_PTXAS")), **defs)
    t = time.perf_counter()
    ptx = k.ptx(target).encode()
    ms_ptx = 1e3 * (time.perf_counter() - t)
    with tempfile.TemporaryDirectory() as d:
        open(f"{d}/k.ptx", "wb").write(ptx)
        t = time.perf_counter()
        r = subprocess.run(["ptxas", f"-arch={target}", "-O3", "-v", f"{d}/k.ptx", "-o", f"{d}/k.cubin"], check=True,
                           capture_output=True, text=True)
        ms_cubin = 1e3 * (time.perf_counter() - t)
    regs = re.search(r"Used (\d+) registers", r.stderr); spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    return k, ms_ptx, ms_cubin, dict(grid=k.grid, block=k.block, smem=k.smem, regs=int(regs.group(1)) if regs else 0,
                                     spill=int(spill.group(1)) if spill else 0)

def bench(fn, warm=3, rep=20):
    """Median of rep kernel times: each rep between two CUDA events, the
    reps queued back to back (no synchronization between them), so that
    the GPU time is measured and the host's launch overhead overlaps the
    previous rep as it does in a user's stream of work (the same for wavec
    and the peers). Until v0.5.2 each rep synchronized first, so the host
    overhead of the launch between the start event and the kernel counted
    too: launch_overhead() measures that one on its own."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(rep)]
    for s, e in ev:
        s.record(); fn(); e.record()
    torch.cuda.synchronize()
    ts = sorted(s.elapsed_time(e) for s, e in ev)
    return ts[len(ts) // 2]

def bench_synced(fn, warm=3, rep=20):
    """The v0.5.2 method: a synchronization before each rep (the host's
    launch overhead inside the events)."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(rep):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]

def host_us(fn, n=200):
    """Host microseconds per call of fn (launches queued, median of 5 runs
    of n calls each)."""
    fn(); torch.cuda.synchronize()
    r = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        r.append(1e6 * (time.perf_counter() - t) / n)
        torch.cuda.synchronize()
    return sorted(r)[2]

def launch_overhead():
    """What one call costs the host: wavec's Kernel.__call__ (Python, then
    wavec_module_launch: tensor maps encoded, cuLaunchKernel) against
    torch.matmul, on a small GEMM (256^3, the GPU idle most of the time),
    and the 4096^3 warpgroup GEMM timed both ways (the difference is what
    the host adds when every launch waits for the previous one)."""
    a = torch.randn(256, 256, dtype=torch.bfloat16, device=dev); b = torch.randn_like(a); c = torch.empty_like(a)
    for name, target, hw in (("gemm_bf16", "sm_90", None), ("gemm_wgmma_bf16", "sm_90a", dict(stages=4))):
        k = wavec.compile("bench/gemm.wave", kernel=name, target=target, hardware=hw, M=256, N=256, K=256,
                          **(dict(BLOCK_N=128) if "wgmma" in name else {}))
        us_w = host_us(lambda: k(a, b, c)); us_t = host_us(lambda: a @ b.T)
        print(f"launch overhead {name} 256^3: wavec {us_w:.1f} us/call (host), torch.matmul {us_t:.1f} us/call", flush=True)
        overhead[name] = (us_w, us_t)
    n = 4096
    a = torch.randn(n, n, dtype=torch.bfloat16, device=dev); b = torch.randn_like(a); c = torch.empty_like(a)
    k, t1, t2, info = wavec_compile("bench/gemm.wave", "gemm_wgmma_bf16", dict(M=n, N=n, K=n, BLOCK_M=128, BLOCK_N=256,
                                    WAVES_M=2), dict(stages=4), target="sm_90a")
    for what, f in (("queued", bench), ("synced", bench_synced)):
        ms_w = f(lambda: k(a, b, c)); ms_p = f(lambda: a @ b.T)
        print(f"gemm bf16 4096^3 128x256 st4 timed {what}: wavec {ms_w*1e3:.1f} us, cuBLAS {ms_p*1e3:.1f} us, "
              f"ratio {ms_p/ms_w:.3f}", flush=True)
        overhead["4096 " + what] = (ms_w * 1e3, ms_p * 1e3)

overhead = {}

def rel_err(x, ref):
    return ((x.float() - ref.float()).norm() / ref.float().norm()).item()

rows = []
def report(workload, peer, ms_w, ms_p, flops, err, compile_ms):
    tw, tp = flops / ms_w / 1e9, flops / ms_p / 1e9
    rows.append(dict(workload=workload, peer=peer, wavec_ms=ms_w, peer_ms=ms_p, wavec_tflops=tw,
                     peer_tflops=tp, ratio=tw / tp, rel_err=err, compile=compile_ms))
    print(f"{workload:44s} wavec {tw:7.1f} TFLOP/s  {peer:12s} {tp:7.1f}  ratio {tw/tp:5.2f}  err {err:.1e}", flush=True)

# Two families: "mma" (mma.sync m16n8k16, warps; the sweep of runs e-h
# found 128x128x64 2x2 near the best) and "wgmma" (warpgroups, sm_90a).
GEMM_CONFIGS = {
    "mma": [  # BLOCK_M, BLOCK_N, BLOCK_K, WAVES_M, WAVES_N, STAGES, WORKGROUPS_PER_SM (0: unset)
        (128, 128, 64, 2, 2, 2, 3), (128, 128, 64, 2, 2, 3, 0), (128, 128, 32, 2, 2, 4, 3)],
    "wgmma": [  # BLOCK_M, BLOCK_N, 64, WAVES_M, 1, STAGES, WORKGROUPS_PER_SM
        (128, 256, 64, 2, 1, 3, 0), (128, 256, 64, 2, 1, 4, 0), (128, 128, 64, 2, 1, 3, 2),
        (128, 128, 64, 2, 1, 4, 0), (128, 128, 64, 1, 1, 4, 0), (256, 128, 64, 2, 1, 3, 0),
        (256, 128, 64, 2, 1, 4, 0), (256, 128, 64, 4, 1, 3, 0), (256, 128, 64, 4, 1, 4, 0)]}
GEMM_KERNELS = {("mma", torch.float16): "gemm_f16", ("mma", torch.bfloat16): "gemm_bf16",
                ("wgmma", torch.float16): "gemm_wgmma_f16", ("wgmma", torch.bfloat16): "gemm_wgmma_bf16"}
best_gemm = {}

def gemm_kernel(fam, dt, n, cfg):
    bm, bn, bk, wm, wn, st, wps = cfg
    if fam == "wgmma":
        return wavec_compile("bench/gemm.wave", GEMM_KERNELS[fam, dt], dict(M=n, N=n, K=n, BLOCK_M=bm, BLOCK_N=bn,
                             WAVES_M=wm), stages_opt(st, wps), target="sm_90a")
    return wavec_compile("bench/gemm.wave", GEMM_KERNELS[fam, dt], dict(M=n, N=n, K=n, BLOCK_M=bm, BLOCK_N=bn,
                         BLOCK_K=bk, WAVES_M=wm, WAVES_N=wn), stages_opt(st, wps))

def stages_opt(s, wps=0):
    return dict(stages=s, **(dict(workgroups_per_sm=wps) if wps else {}))

def gemm_sweep(n, dt, fam):
    """Times every tile configuration of a family once (median of 5),
    checks it against torch.matmul and keeps the best correct one, as an
    autotuner would; prints each."""
    name = GEMM_KERNELS[fam, dt]
    a = torch.randn(n, n, dtype=dt, device=dev); b = torch.randn(n, n, dtype=dt, device=dev)
    c = torch.empty(n, n, dtype=dt, device=dev)
    ref = a @ b.T
    best = None
    for cfg in GEMM_CONFIGS[fam]:
        try:
            k, _, _, info = gemm_kernel(fam, dt, n, cfg)
            c.fill_(float("nan"))
            ms = bench(lambda: k(a, b, c), warm=2, rep=5)
            err = rel_err(c, ref)
            print(f"  sweep {name} {n}^3 {cfg}: {2*n**3/ms/1e9:.1f} TFLOP/s, err {err:.1e}, "
                  f"{info['regs']} registers, {info['spill']} bytes spilled, {info['smem']} bytes shared", flush=True)
            if err < 1e-2 and (best is None or ms < best[0]):
                best = (ms, cfg)
        except Exception as e:
            print(f"  sweep {name} {cfg}: failed {type(e).__name__}: {str(e)[:300]}", flush=True)
    if best:
        best_gemm[fam] = best[1]

def gemm(n, dt, fam):
    if fam not in best_gemm:
        return
    bm, bn, bk, wm, wn, st, wps = best_gemm[fam]
    k, ms_ptx, ms_cubin, info = gemm_kernel(fam, dt, n, best_gemm[fam])
    a = torch.randn(n, n, dtype=dt, device=dev); b = torch.randn(n, n, dtype=dt, device=dev)
    c = torch.empty(n, n, dtype=dt, device=dev)
    k(a, b, c); torch.cuda.synchronize()
    ref = a @ b.T
    err = rel_err(c, ref)
    err32 = rel_err(c, a.float() @ b.float().T)
    ms_w = bench(lambda: k(a, b, c)); ms_p = bench(lambda: a @ b.T)
    # the schedule the compiler chose: a producer warpgroup makes the block
    # 128 threads more than the waves; persistent tiles, a grid of at most
    # one workgroup a multiprocessor
    sched = ("spec" if info["block"][0] % 256 == 128 else "") + \
            ("+pers" if math.prod(info["grid"]) < (n // bm) * (n // bn) else "")
    report(f"gemm {fam} {str(dt)[6:]} {n}^3 tiles {bm}x{bn}x{bk} waves {wm}x{wn} stages {st}"
           + (f" wgs/SM {wps}" if wps else "") + (f" [{sched.lstrip('+')}]" if sched else ""),
           "cuBLAS", ms_w, ms_p, 2 * n**3,
           max(err, err32), (ms_ptx, ms_cubin))

# The other operand layouts (bench/gemm.wave gemm_wgmma_bf16_tn, _nn, _tt:
# the lhs stored K x M, the rhs K x N, both) against cuBLAS on the same
# transposed views (torch.matmul takes them as they lie, no copy), and the
# K-major pair (nt) in the same process; the tiles of the wgmma sweep's
# default (128x256, two warpgroups, 4 stages), the compiler's schedule.
LAYOUTS = {"nt": ("gemm_wgmma_bf16", (0, 0)), "tn": ("gemm_wgmma_bf16_tn", (1, 0)),
           "nn": ("gemm_wgmma_bf16_nn", (0, 1)), "tt": ("gemm_wgmma_bf16_tt", (1, 1))}

def layouts(quick=False):
    dt = torch.bfloat16
    for (M, N, K) in ((4096, 4096, 4096),) + (() if quick else ((8192, 8192, 8192), (2048, 14336, 4096))):
        for lay, (kname, (ta, tb)) in LAYOUTS.items():
            try:
                a = torch.randn(K, M, dtype=dt, device=dev) if ta else torch.randn(M, K, dtype=dt, device=dev)
                b = torch.randn(K, N, dtype=dt, device=dev) if tb else torch.randn(N, K, dtype=dt, device=dev)
                A = a.T if ta else a              # [M, K] views
                B = b if tb else b.T              # [K, N] views
                c = torch.empty(M, N, dtype=dt, device=dev)
                k, t1, t2, info = wavec_compile("bench/gemm.wave", kname, dict(M=M, N=N, K=K, BLOCK_M=128,
                                                BLOCK_N=256, WAVES_M=2), dict(stages=4), target="sm_90a")
                c.fill_(float("nan")); k(a, b, c); torch.cuda.synchronize()
                ref = A @ B
                err = max(rel_err(c, ref), rel_err(c, A.float() @ B.float()))
                ms_w = bench(lambda: k(a, b, c)); ms_p = bench(lambda: A @ B)
                report(f"layouts gemm wgmma bf16 {lay} {M}x{N}x{K} 128x256 st4 ({info['regs']} regs, "
                       f"{info['spill']} B spill)", "cuBLAS", ms_w, ms_p, 2 * M * N * K, err, (t1, t2))
            except Exception as e:
                print(f"layouts {lay} {M}x{N}x{K}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)

# Tile configurations the attention kernels are swept over (at N = 4096,
# once per D), as an autotuner would; the best one is used for every N.
FWD_CONFIGS = [  # BLOCK_M, BLOCK_K2, WAVES, STAGES
    (bm, bk, w, s) for (bm, bk, w) in [(64, 64, 4), (128, 32, 8), (128, 64, 8), (128, 32, 4), (128, 64, 4)]
    for s in (2, 3)]
DKDV_CONFIGS = [  # BLOCK_K2, BLOCK_M, WAVES, STAGES
    (bk, bm, w, s) for (bk, bm, w) in [(64, 32, 4), (128, 32, 8), (128, 64, 8), (128, 32, 4), (64, 64, 4)]
    for s in (2, 3)]
DQ_CONFIGS = [  # BLOCK_M, BLOCK_K2, WAVES, STAGES
    (bm, bk, w, s) for (bm, bk, w) in [(64, 32, 4), (128, 32, 8), (128, 64, 8), (128, 32, 4), (64, 64, 4)]
    for s in (2, 3)]
# A fourth element: more hardware entries (v0.5.11: with the toolkit's ptxas
# the specialized kernels with turns gain 8-20% over the same without)
TURNS = dict(specialize=1, pingpong=1)
FWD_WG_CONFIGS = [  # BLOCK_M, BLOCK_K2, STAGES (warpgroups of 64 rows, sm_90a; 3 or more
    # stages carry a group of wgmmas across iterations)
    (128, 64, 2), (128, 64, 3), (128, 64, 4), (128, 128, 2), (128, 128, 3), (64, 128, 3), (64, 64, 3),
    (128, 128, 3, TURNS), (192, 128, 2)]  # (192x128: three warpgroups of rows, run mm: 0.94-1.02 of
# cuDNN at D = 128 where the others reach 0.89-0.96)
DKDV_WG_CONFIGS = [  # BLOCK_K2, BLOCK_M, STAGES (warpgroups of 64 keys, sm_90a)
    (128, 64, 2), (128, 64, 3), (128, 32, 3), (128, 32, 4), (64, 64, 2), (64, 64, 3), (64, 64, 4), (64, 128, 3),
    (128, 64, 3, TURNS), (128, 32, 4, TURNS)]
DQ_WG_CONFIGS = [  # BLOCK_M, BLOCK_K2, STAGES (warpgroups of 64 queries, sm_90a)
    (128, 64, 2), (128, 64, 3), (128, 64, 4), (64, 64, 3), (128, 128, 2), (64, 128, 2), (64, 128, 3),
    (128, 64, 3, TURNS), (128, 64, 4, TURNS), (128, 64, 4, dict(TURNS, overlap=1))]  # (run jj: +8% over
# the same tiles without either, D = 128)
best_attn = {}
WG_KINDS = ("fwd_wg", "dkdv_wg", "dq_wg")

def attn_hw(cfg, st):
    """The hardware entries of a configuration: its stages, and its fourth
    element's where it has one."""
    return dict(stages_opt(st), **(cfg[3] if len(cfg) > 3 else {})) if st else None

def attn_defs(kind, cfg):
    if kind in ("fwd_wg", "dq_wg"):
        bm, bk, s = cfg[:3]; return dict(BLOCK_M=bm, BLOCK_K2=bk), s
    if kind == "dkdv_wg":
        bk, bm, s = cfg[:3]; return dict(BLOCK_K2=bk, BLOCK_M=bm), s
    if kind == "fwd":
        bm, bk, w, s = cfg; return dict(BLOCK_M=bm, BLOCK_K2=bk, WAVES=w), s
    if kind == "dkdv":
        bk, bm, w, s = cfg; return dict(BLOCK_K2=bk, BLOCK_M=bm, WAVES=w), s
    bm, bk, w, s = cfg; return dict(BLOCK_M=bm, BLOCK_K2=bk, WAVES=w), s

def attn_sweep(D, N=4096, kinds=("fwd", "dkdv", "dq", "fwd_wg", "dkdv_wg", "dq_wg")):
    B = max(1, 16384 // N); H = 2048 // D; BH = B * H
    q, kk, v, do = (torch.randn(BH, N, D, dtype=torch.float16, device=dev) for _ in range(4))
    o = torch.empty(BH, N, D, dtype=torch.float32, device=dev); lse = torch.zeros(BH, N, dtype=torch.float32, device=dev)
    o16 = torch.empty(BH, N, D, dtype=torch.float16, device=dev)  # the warpgroup forward writes o in f16
    Dt = torch.zeros(BH, N, dtype=torch.float32, device=dev)
    dq, dk, dv = (torch.empty(BH, N, D, dtype=torch.float32, device=dev) for _ in range(3))
    dq16, dk16, dv16 = (torch.empty(BH, N, D, dtype=torch.float16, device=dev) for _ in range(3))  # warpgroup kernels
    plan = (("fwd", FWD_CONFIGS, "examples/attention_fwd.wave", "attention_fwd", lambda k: k(q, kk, v, o, lse)),
            ("dkdv", DKDV_CONFIGS, "examples/attention_bwd.wave", "attention_bwd_dkdv",
             lambda k: k(q, kk, v, do, lse, Dt, dk, dv)),
            ("dq", DQ_CONFIGS, "examples/attention_bwd.wave", "attention_bwd_dq", lambda k: k(q, kk, v, do, lse, Dt, dq)),
            ("fwd_wg", FWD_WG_CONFIGS, "examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
             lambda k: k(q, kk, v, o16, lse)),
            ("dkdv_wg", DKDV_WG_CONFIGS, "examples/attention_bwd_wgmma.wave", "attention_bwd_dkdv_wgmma",
             lambda k: k(q, kk, v, do, lse, Dt, dk16, dv16)),
            ("dq_wg", DQ_WG_CONFIGS, "examples/attention_bwd_wgmma.wave", "attention_bwd_dq_wgmma",
             lambda k: k(q, kk, v, do, lse, Dt, dq16)))
    for kind, configs, wave, kname, call in plan:
        if kind not in kinds:
            continue
        best = None
        for cfg in configs:
            defs, st = attn_defs(kind, cfg)
            try:
                k, *_ = wavec_compile(wave, kname, dict(B=BH, M=N, K2=N, K1=D, N=D, **defs), attn_hw(cfg, st),
                                      target="sm_90a" if kind in WG_KINDS else "sm_90")
                ms = bench(lambda: call(k), warm=2, rep=5)
                print(f"  sweep {kind} D={D} N={N} {cfg}: {ms:.3f} ms", flush=True)
                if best is None or ms < best[0]:
                    best = (ms, cfg)
            except Exception as e:
                print(f"  sweep {kind} D={D} {cfg}: failed {type(e).__name__}: {str(e)[:200]}", flush=True)
        if best:
            best_attn[(kind, D)] = best[1]

def attn_kernel(kind, D, wave, kname, sizes):
    cfg = best_attn.get((kind, D))
    defs, st = attn_defs(kind, cfg) if cfg else ({}, None)
    return wavec_compile(wave, kname, dict(sizes, **defs), attn_hw(cfg, st),
                         target="sm_90a" if kind in WG_KINDS else "sm_90"), cfg

def attn_fwd(D, N, causal, kind="fwd"):
    B = max(1, 16384 // N); H = 2048 // D
    if kind == "fwd_wg":
        wave, kname = "examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma"
    else:
        wave, kname = "examples/attention_fwd.wave", "attention_fwd"
    kname += "_causal" if causal else ""
    (k, ms_ptx, ms_cubin, info), cfg = attn_kernel(kind, D, wave, kname, dict(B=B * H, M=N, K2=N, K1=D, N=D))
    q = torch.randn(B, H, N, D, dtype=torch.float16, device=dev)
    kk = torch.randn_like(q); v = torch.randn_like(q)
    # o in the inputs' type for the warpgroup forward, as SDPA writes it
    o = torch.empty(B * H, N, D, dtype=torch.float16 if kind == "fwd_wg" else torch.float32, device=dev)
    lse = torch.empty(B * H, N, dtype=torch.float32, device=dev)
    args = (q.reshape(B * H, N, D), kk.reshape(B * H, N, D), v.reshape(B * H, N, D), o, lse)
    k(*args); torch.cuda.synchronize()
    from torch.nn.attention import sdpa_kernel, SDPBackend
    ms_w = bench(lambda: k(*args))
    fl = 4 * B * H * N * N * D * (0.5 if causal else 1.0)
    for peer, be in (("SDPA-flash", SDPBackend.FLASH_ATTENTION), ("SDPA-cuDNN", SDPBackend.CUDNN_ATTENTION)):
        try:
            with sdpa_kernel([be]):
                ref = F.scaled_dot_product_attention(q, kk, v, is_causal=causal, scale=0.125)
                err = rel_err(o.reshape(B, H, N, D), ref)
                ms_p = bench(lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=causal, scale=0.125))
            report(f"attn fwd{' wgmma' if kind == 'fwd_wg' else ''} f16 D={D} N={N} causal={int(causal)} cfg {cfg}",
                   peer, ms_w, ms_p, fl, err, (ms_ptx, ms_cubin))
        except Exception as e:
            print(f"attn fwd {peer} D={D} N={N}: peer failed {type(e).__name__}: {str(e)[:200]}", flush=True)

def attn_bwd(D, N, causal, wg=False):
    """The backward pass: wavec's D, dk/dv and dq kernels (times summed)
    against SDPA's backward (autograd), same inputs, f16; wg: the warpgroup
    dk/dv and dq kernels of attention_bwd_wgmma.wave."""
    B = max(1, 16384 // N); H = 2048 // D; BH = B * H
    sfx = "_causal" if causal else ""
    bwave, w = ("examples/attention_bwd_wgmma.wave", "_wg") if wg else ("examples/attention_bwd.wave", "")
    defs = dict(B=BH, M=N, K2=N, K1=D, N=D, SCALE=0.125)
    (fk, *_), _ = attn_kernel("fwd", D, "examples/attention_fwd.wave", "attention_fwd" + sfx,
                              dict(B=BH, M=N, K2=N, K1=D, N=D))
    dk_, *_ = wavec_compile("examples/attention_bwd.wave", "attention_bwd_D", dict(B=BH, M=N, N=D))
    (kv, t1, c1, _), cfg1 = attn_kernel("dkdv" + w, D, bwave, "attention_bwd_dkdv" + ("_wgmma" if wg else "") + sfx, defs)
    (kq, t2, c2, _), cfg2 = attn_kernel("dq" + w, D, bwave, "attention_bwd_dq" + ("_wgmma" if wg else "") + sfx, defs)
    q = torch.randn(B, H, N, D, dtype=torch.float16, device=dev, requires_grad=True)
    kk = torch.randn_like(q, requires_grad=True); v = torch.randn_like(q, requires_grad=True)
    do = torch.randn_like(q)
    qf, kf, vf, dof = (t.detach().reshape(BH, N, D) for t in (q, kk, v, do))
    o = torch.empty(BH, N, D, dtype=torch.float32, device=dev); lse = torch.empty(BH, N, dtype=torch.float32, device=dev)
    Dt = torch.empty(BH, N, dtype=torch.float32, device=dev)
    # the gradients in the inputs' type from the warpgroup kernels, as SDPA gives them
    dq = torch.empty(BH, N, D, dtype=torch.float16 if wg else torch.float32, device=dev)
    dk = torch.empty_like(dq); dv = torch.empty_like(dq)
    fk(qf, kf, vf, o, lse)
    def wbwd():
        dk_(dof, o, Dt)
        kv(qf, kf, vf, dof, lse, Dt, dk, dv)
        kq(qf, kf, vf, dof, lse, Dt, dq)
    wbwd(); torch.cuda.synchronize()
    from torch.nn.attention import sdpa_kernel, SDPBackend
    ms_w = bench(wbwd)
    fl = 2.5 * 4 * B * H * N * N * D * (0.5 if causal else 1.0)
    for peer, be in (("SDPA-flash", SDPBackend.FLASH_ATTENTION), ("SDPA-cuDNN", SDPBackend.CUDNN_ATTENTION)):
        try:
            with sdpa_kernel([be]):
                out = F.scaled_dot_product_attention(q, kk, v, is_causal=causal, scale=0.125)
                q.grad = kk.grad = v.grad = None
                out.backward(do, retain_graph=True)
                err = max(rel_err(dq.reshape(B, H, N, D), q.grad), rel_err(dk.reshape(B, H, N, D), kk.grad),
                          rel_err(dv.reshape(B, H, N, D), v.grad))
                def pb():
                    q.grad = kk.grad = v.grad = None
                    out.backward(do, retain_graph=True)
                ms_p = bench(pb)
            report(f"attn bwd{' wgmma' if wg else ''} f16 D={D} N={N} causal={int(causal)} cfg {cfg1} {cfg2}", peer, ms_w, ms_p, fl, err, (t1 + t2, c1 + c2))
        except Exception as e:
            print(f"attn bwd {peer} D={D} N={N}: failed {type(e).__name__}: {str(e)[:300]}", flush=True)

# The scaled fp8 GEMM (examples/gemm_fp8.wave: e4m3 operands, f32 sums, c =
# (a . b^T) * scale_a[m] * scale_b[n] in bf16) on the warpgroup mma, tiles
# BLOCK_M x BLOCK_N (a warpgroup per 64 rows), ring depth.
FP8_CONFIGS = [(128, 256, 3), (128, 256, 4), (128, 128, 4), (256, 128, 3), (256, 128, 4)]

def fp8_gemm(n, quick=False):
    """wavec's fp8 GEMM against torch._scaled_mm (e4m3 inputs, per-tensor
    scales, bf16 output), the same inputs: wavec's per-row scales are
    vectors filled with the per-tensor value. Tiles swept at this size;
    the error of each (relative L2 and the largest relative error of an
    element) against a float64 reference of the same fp8 values."""
    e4 = torch.float8_e4m3fn
    a = (torch.randn(n, n, device=dev) * 4).to(e4); b = (torch.randn(n, n, device=dev) * 4).to(e4)  # b: [N, K]
    sa, sb = 0.5, 0.25
    sa_t = torch.tensor(sa, device=dev); sb_t = torch.tensor(sb, device=dev)
    sav = torch.full((n,), sa, device=dev); sbv = torch.full((n,), sb, device=dev)
    c = torch.empty(n, n, dtype=torch.bfloat16, device=dev)
    ref = (a.double() @ b.double().T) * (sa * sb)
    def errs(x):
        d = (x.double() - ref).abs()
        return (d.norm() / ref.norm()).item(), (d / ref.abs().clamp_min(ref.abs().max() * 1e-3)).max().item()
    def peer(fast):  # (older torch returns (out, amax))
        r = torch._scaled_mm(a, b.t(), scale_a=sa_t, scale_b=sb_t, out_dtype=torch.bfloat16, use_fast_accum=fast)
        return r[0] if isinstance(r, tuple) else r
    # fast accumulation sums in the wgmma's f32 accumulator as wavec does;
    # without it cuBLAS promotes partial sums (slower, more exact)
    peers = [(f"_scaled_mm{' fast' if fast else ''}", bench(lambda: peer(fast)), *errs(peer(fast)))
             for fast in (True, False)]
    best = None
    for bm, bn, st in FP8_CONFIGS[:2] if quick else FP8_CONFIGS:
        try:
            k, t1, t2, info = wavec_compile("examples/gemm_fp8.wave", "gemm_fp8", dict(M=n, N=n, K=n, BLOCK_M=bm,
                                            BLOCK_N=bn), stages_opt(st), target="sm_90a")
            c.fill_(float("nan")); k(a, b, sav, sbv, c); torch.cuda.synchronize()
            ew, mw = errs(c)
            ms_w = bench(lambda: k(a, b, sav, sbv, c), warm=2, rep=5)
            print(f"  sweep fp8 {n}^3 {bm}x{bn} stages {st}: {2*n**3/ms_w/1e9:.1f} TFLOP/s, err {ew:.1e} (max {mw:.1e}), "
                  f"{info['regs']} registers, {info['spill']} bytes spilled", flush=True)
            if ew < 1e-2 and (best is None or ms_w < best[0]):
                best = (ms_w, (bm, bn, st), ew, mw, t1, t2)
        except Exception as e:
            print(f"  sweep fp8 {bm}x{bn} stages {st}: failed {type(e).__name__}: {str(e)[:300]}", flush=True)
    if not best:
        return
    (bm, bn, st) = best[1]
    k, t1, t2, _ = wavec_compile("examples/gemm_fp8.wave", "gemm_fp8", dict(M=n, N=n, K=n, BLOCK_M=bm, BLOCK_N=bn),
                                 stages_opt(st), target="sm_90a")
    ms_w = bench(lambda: k(a, b, sav, sbv, c))
    for name, ms_p, ep, mp in peers:
        report(f"gemm fp8 e4m3 {n}^3 bf16 out tiles {bm}x{bn} stages {st} (max err {best[3]:.1e}; peer err {ep:.1e}, "
               f"max {mp:.1e})", name, ms_w, ms_p, 2 * n**3, best[2], (t1, t2))

def ragged_row(workload, other, ms_r, flops_r, ms_d, flops_d, err, compile_ms):
    """A ragged size against the next divisible one, same kernel and tiles:
    the ratio of their throughputs."""
    tr, td = flops_r / ms_r / 1e9, flops_d / ms_d / 1e9
    rows.append(dict(workload=workload, peer=other, wavec_ms=ms_r, peer_ms=ms_d, wavec_tflops=tr, peer_tflops=td,
                     ratio=tr / td, rel_err=err, compile=compile_ms))
    print(f"{workload:44s} wavec {tr:7.1f} TFLOP/s  {other:12s} {td:7.1f}  ratio {tr/td:5.2f}  err {err:.1e}", flush=True)

def ragged(quick=False):
    """Throughput at sizes the tiles do not divide against the next
    divisible size (issue 14: at least 0.9x): the bf16 GEMM at 8191 against
    8192 (the warpgroup GEMM with M = N = 8191; its K stays 8192, since a
    staged row must be a multiple of 16 bytes; and the warp-level GEMM at
    8191^3, whose unaligned K rows are read without staging), and the
    warpgroup attention forward (D = 128, plain and causal) at N = 4095
    against 4096 and 8191 against 8192."""
    n = 4096 if quick else 8192
    def gemm_at(kernel, M, N, K, defs, hw, target):
        a = torch.randn(M, K, dtype=torch.bfloat16, device=dev); b = torch.randn(N, K, dtype=torch.bfloat16, device=dev)
        c = torch.empty(M, N, dtype=torch.bfloat16, device=dev)
        k, t1, t2, _ = wavec_compile("bench/gemm.wave", kernel, dict(M=M, N=N, K=K, **defs), hw, target=target)
        k(a, b, c); torch.cuda.synchronize()
        return bench(lambda: k(a, b, c)), 2 * M * N * K, rel_err(c, a.float() @ b.float().T), (t1, t2)
    # the warpgroup GEMM three ways: M ragged only (c's rows stay 16-byte
    # multiples: tensor stores), N ragged with rows of 16-byte multiples,
    # and both odd (c's rows of 8191 elements: the buffer copied out by the
    # threads)
    plan = (("gemm_wgmma_bf16", dict(BLOCK_M=128, BLOCK_N=256, WAVES_M=2), stages_opt(4), "sm_90a", (n - 1, n, n)),
            ("gemm_wgmma_bf16", dict(BLOCK_M=128, BLOCK_N=256, WAVES_M=2), stages_opt(4), "sm_90a", (n, n - 8, n)),
            ("gemm_wgmma_bf16", dict(BLOCK_M=128, BLOCK_N=256, WAVES_M=2), stages_opt(4), "sm_90a", (n - 1, n - 1, n)),
            ("gemm_bf16", dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, WAVES_M=2, WAVES_N=2), stages_opt(3), "sm_90",
             (n - 1, n - 1, n - 1)))
    divisible = {}
    for kernel, defs, hw, target, (M, N, K) in plan:
        try:
            if kernel not in divisible:
                divisible[kernel] = gemm_at(kernel, n, n, n, defs, hw, target)
            ms_d, f_d, _, _ = divisible[kernel]
            ms_r, f_r, err, cm = gemm_at(kernel, M, N, K, defs, hw, target)
            ragged_row(f"ragged {kernel} {M}x{N}x{K}", f"{n}^3", ms_r, f_r, ms_d, f_d, err, cm)
            # and cuBLAS at the same ragged size: what the shape costs a peer
            a = torch.randn(M, K, dtype=torch.bfloat16, device=dev); b = torch.randn(N, K, dtype=torch.bfloat16, device=dev)
            report(f"ragged {kernel} {M}x{N}x{K} vs cuBLAS at the same size", "cuBLAS", ms_r, bench(lambda: a @ b.T),
                   f_r, err, cm)
        except Exception as e:
            print(f"ragged {kernel}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    D = 128
    for causal in (False, True):
        for N in ((4096,) if quick else (4096, 8192)):
            try:
                res = []
                for S in (N, N - 1):
                    B = max(1, 16384 // N); H = 2048 // D; BH = B * H
                    kname = "attention_fwd_wgmma" + ("_causal" if causal else "")
                    k, t1, t2, _ = wavec_compile("examples/attention_fwd_wgmma.wave", kname,
                                                 dict(B=BH, M=S, K2=S, K1=D, N=D, BLOCK_M=128, BLOCK_K2=64),
                                                 stages_opt(3), target="sm_90a")
                    q, kk, v = (torch.randn(B, H, S, D, dtype=torch.float16, device=dev) for _ in range(3))
                    o = torch.empty(BH, S, D, dtype=torch.float16, device=dev)
                    lse = torch.empty(BH, S, dtype=torch.float32, device=dev)
                    args = (q.reshape(BH, S, D), kk.reshape(BH, S, D), v.reshape(BH, S, D), o, lse)
                    k(*args); torch.cuda.synchronize()
                    ref = F.scaled_dot_product_attention(q, kk, v, is_causal=causal, scale=0.125)
                    res.append((bench(lambda: k(*args)), 4 * BH * S * S * D * (0.5 if causal else 1.0),
                                rel_err(o.reshape(B, H, S, D), ref), (t1, t2)))
                (ms_d, f_d, _, _), (ms_r, f_r, err, cm) = res
                ragged_row(f"ragged attn fwd wgmma D={D} N={N - 1} causal={int(causal)}", f"N={N}", ms_r, f_r,
                           ms_d, f_d, err, cm)
            except Exception as e:
                print(f"ragged attn N={N - 1} causal={int(causal)}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)

def narrow(quick=False):
    """The warpgroup GEMM where K's rows are not a multiple of 16 bytes
    (K = n - 2: 4-byte copies; n - 4: 8-byte; cp.async rings, no tensor
    copies) against K = n, the same kernel and tiles, and against cuBLAS
    at the same size."""
    n = 4096 if quick else 8192
    defs = dict(BLOCK_M=128, BLOCK_N=256, WAVES_M=2)
    def gemm_at(M, N, K, hw):
        a = torch.randn(M, K, dtype=torch.bfloat16, device=dev); b = torch.randn(N, K, dtype=torch.bfloat16, device=dev)
        c = torch.empty(M, N, dtype=torch.bfloat16, device=dev)
        k, t1, t2, _ = wavec_compile("bench/gemm.wave", "gemm_wgmma_bf16", dict(M=M, N=N, K=K, **defs), hw,
                                     target="sm_90a")
        k(a, b, c); torch.cuda.synchronize()
        return bench(lambda: k(a, b, c)), 2 * M * N * K, rel_err(c, a.float() @ b.float().T), (t1, t2), a, b
    try:
        ms_d, f_d, _, _, _, _ = gemm_at(n, n, n, stages_opt(4))
        for K, hw in ((n - 2, stages_opt(4)), (n - 4, stages_opt(4)), (n - 2, stages_opt(3))):
            ms_r, f_r, err, cm, a, b = gemm_at(n, n, K, hw)
            ragged_row(f"narrow gemm_wgmma_bf16 {n}x{n}x{K} st{hw.get('stages')}", f"K={n}", ms_r, f_r, ms_d, f_d,
                       err, cm)
            report(f"narrow gemm_wgmma_bf16 {n}x{n}x{K} vs cuBLAS", "cuBLAS", ms_r, bench(lambda: a @ b.T), f_r,
                   err, cm)
    except Exception as e:
        print(f"narrow: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)

triton_ms = {}

def tma_ab(quick=False):
    """Tensor copies into mbarrier rings (copies=2, the default on sm_90a)
    against cp.async rings (copies=1), same kernels and tiles, the peers in
    the same process: the GEMM (bf16 8192^3) and the warpgroup forward,
    dk/dv and dq at D=128 N=8192."""
    n = 4096 if quick else 8192
    a = torch.randn(n, n, dtype=torch.bfloat16, device=dev); b = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
    c = torch.empty(n, n, dtype=torch.bfloat16, device=dev)
    ref = a @ b.T
    ms_p = bench(lambda: a @ b.T)
    for bm, bn, wm, st in ((128, 256, 2, 4), (128, 256, 2, 3), (256, 128, 4, 4), (128, 128, 2, 4)):
        for cp in (1, 2):
            try:
                k, t1, t2, info = wavec_compile("bench/gemm.wave", "gemm_wgmma_bf16", dict(M=n, N=n, K=n, BLOCK_M=bm, BLOCK_N=bn,
                                                WAVES_M=wm), dict(stages=st, copies=cp), target="sm_90a")
                c.fill_(float("nan")); k(a, b, c); torch.cuda.synchronize()
                err = rel_err(c, ref)
                ms_w = bench(lambda: k(a, b, c))
                report(f"tma A/B gemm bf16 {n}^3 {bm}x{bn} wg {wm} stages {st} copies={cp} ({info['regs']} regs)", "cuBLAS",
                       ms_w, ms_p, 2 * n**3, err, (t1, t2))
            except Exception as e:
                print(f"tma A/B gemm {bm}x{bn} st{st} copies={cp}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    D, N = 128, (4096 if quick else 8192)
    B = max(1, 16384 // N); H = 2048 // D; BH = B * H
    q, kk, v, do = (torch.randn(BH, N, D, dtype=torch.float16, device=dev) for _ in range(4))
    o = torch.empty(BH, N, D, dtype=torch.float16, device=dev); lse = torch.zeros(BH, N, dtype=torch.float32, device=dev)
    Dt = torch.zeros(BH, N, dtype=torch.float32, device=dev)
    dq, dk, dv = (torch.empty(BH, N, D, dtype=torch.float16, device=dev) for _ in range(3))
    qq, kq, vq = (t.reshape(B, H, N, D) for t in (q, kk, v))
    from torch.nn.attention import sdpa_kernel, SDPBackend
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        ref = F.scaled_dot_product_attention(qq, kq, vq, scale=0.125)
        ms_f = bench(lambda: F.scaled_dot_product_attention(qq, kq, vq, scale=0.125))
    fl = 4 * BH * N * N * D
    plan = (("fwd", "examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma", dict(BLOCK_M=128, BLOCK_K2=64),
             lambda k: k(q, kk, v, o, lse), (2, 3)),
            ("dkdv", "examples/attention_bwd_wgmma.wave", "attention_bwd_dkdv_wgmma", dict(BLOCK_K2=64, BLOCK_M=64),
             lambda k: k(q, kk, v, do, lse, Dt, dk, dv), (2, 3)),
            ("dq", "examples/attention_bwd_wgmma.wave", "attention_bwd_dq_wgmma", dict(BLOCK_M=128, BLOCK_K2=64),
             lambda k: k(q, kk, v, do, lse, Dt, dq), (2, 3)))
    for kind, wave, kname, defs, call, depths in plan:
        for st in depths:
            for cp in (1, 2):
                try:
                    k, t1, t2, info = wavec_compile(wave, kname, dict(B=BH, M=N, K2=N, K1=D, N=D, **defs),
                                                    dict(stages=st, copies=cp), target="sm_90a")
                    call(k); torch.cuda.synchronize()
                    err = rel_err(o.reshape(B, H, N, D), ref) if kind == "fwd" else 0.0
                    ms_w = bench(lambda: call(k))
                    # FLOPs: 2 N^2 D per mma per head; the forward has 2 mmas, dk/dv 4, dq 3 (the
                    # peer is cuDNN's forward: for the backward kernels only the A/B pairs compare)
                    report(f"tma A/B {kind} D={D} N={N} {defs} stages {st} copies={cp} ({info['regs']} regs)",
                           "SDPA-cuDNN fwd", ms_w, ms_f, fl * {"fwd": 1, "dkdv": 2, "dq": 1.5}[kind], err, (t1, t2))
                except Exception as e:
                    print(f"tma A/B {kind} st{st} copies={cp}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)

def triton_cold_compile():
    """Time of a cold Triton compile of a tiled matmul (a fresh cache
    directory, first launch minus a warm launch), the peer for wavec's
    compile times."""
    d = tempfile.mkdtemp()
    os.environ["TRITON_CACHE_DIR"] = d
    import triton, triton.language as tl

    @triton.jit
    def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm = tl.program_id(0); pn = tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM); rn = pn * BN + tl.arange(0, BN); rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
            y = tl.load(b + rn[:, None] * K + (k0 + rk)[None, :])
            acc += tl.dot(x, tl.trans(y))
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))

    n = 1024
    a = torch.randn(n, n, dtype=torch.bfloat16, device=dev); b = torch.randn_like(a); c = torch.empty_like(a)
    grid = (n // 128, n // 128)
    torch.cuda.synchronize(); t = time.perf_counter()
    mm[grid](a, b, c, n, n, n, 128, 128, 64); torch.cuda.synchronize()
    cold = 1e3 * (time.perf_counter() - t)
    t = time.perf_counter()
    mm[grid](a, b, c, n, n, n, 128, 128, 64); torch.cuda.synchronize()
    warm = 1e3 * (time.perf_counter() - t)
    err = rel_err(c, a @ b.T)
    triton_ms["matmul"] = cold - warm
    print(f"triton cold compile of a matmul: {cold - warm:.1f} ms (first call {cold:.1f} ms, warm {warm:.2f} ms), "
          f"triton {triton.__version__}, err {err:.1e}", flush=True)

# The schedule's A/B (issue 13): warp specialization (a producer warpgroup
# issuing the tensor copies, setmaxnreg 40/232) and persistent tiles (a grid
# of min(tiles, 132) workgroups looping over tiles in groups of 8 rows),
# each against today's schedule, same kernel and tiles, cuBLAS in the same
# process. Tiles: 128x256 of two warpgroups (the best of run s) and
# 128x128 of two (spill-free with specialize), 4 stages.
SCHED_VARIANTS = [dict(specialize=s, persistent=p) for s in (0, 1) for p in (0, 1)]
SCHED_TILES = [(128, 256, 2, 4), (128, 128, 2, 4)]
LLM_SHAPES = [(m, n, k) for m in (2048, 16384) for n in (4096, 8192, 14336) for k in (4096, 8192, 14336)]

def attn_fwd_inputs(D, N):
    """The attention forward's f16 inputs in the (B*H, N, D) layout wavec
    takes (B*H = 16384 / N * 2048 / D), o in f16 and lse, and a function of
    causal giving SDPA-cuDNN's output (in o's shape), its time and the
    FLOPs."""
    B = max(1, 16384 // N); H = 2048 // D; BH = B * H
    q, kk, vv = (torch.randn(BH, N, D, dtype=torch.float16, device=dev) for _ in range(3))
    o = torch.empty(BH, N, D, dtype=torch.float16, device=dev)
    lse = torch.empty(BH, N, dtype=torch.float32, device=dev)
    qq, kq, vq = (t.reshape(B, H, N, D) for t in (q, kk, vv))
    def cudnn(causal):
        from torch.nn.attention import sdpa_kernel, SDPBackend
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            ref = F.scaled_dot_product_attention(qq, kq, vq, is_causal=causal, scale=0.125)
            ms_p = bench(lambda: F.scaled_dot_product_attention(qq, kq, vq, is_causal=causal, scale=0.125))
        return ref.reshape(BH, N, D), ms_p, 4 * BH * N * N * D * (0.5 if causal else 1.0)
    return BH, q, kk, vv, o, lse, cudnn

def schedule_ab(quick=False):
    """gemm_wgmma specialize=0/1 x persistent=0/1 at 4096^3, 8192^3 (bf16
    and f16) and the LLM projection shapes M in {2048, 16384}, N, K in
    {4096, 8192, 14336} (bf16), cuBLAS in the same run; then the epilogue's
    tensor stores on and off (stores=2/1) at 4096^3 and 8192^3."""
    shapes = [(4096,) * 3] if quick else [(4096,) * 3, (8192,) * 3] + LLM_SHAPES
    for (m, n, kk) in shapes:
        dts = (torch.bfloat16, torch.float16) if m == n == kk else (torch.bfloat16,)
        for dt in dts:
            a = torch.randn(m, kk, dtype=dt, device=dev); b = torch.randn(n, kk, dtype=dt, device=dev)
            c = torch.empty(m, n, dtype=dt, device=dev)
            ref = a @ b.T
            ms_p = bench(lambda: a @ b.T)
            name = GEMM_KERNELS["wgmma", dt]
            for bm, bn, wm, st in SCHED_TILES[:1] if quick else SCHED_TILES:
                for v in SCHED_VARIANTS:
                    try:
                        k, t1, t2, info = wavec_compile("bench/gemm.wave", name, dict(M=m, N=n, K=kk, BLOCK_M=bm, BLOCK_N=bn,
                                                        WAVES_M=wm), dict(stages=st, **v), target="sm_90a")
                        c.fill_(float("nan")); k(a, b, c); torch.cuda.synchronize()
                        err = rel_err(c, ref)
                        ms_w = bench(lambda: k(a, b, c))
                        report(f"sched gemm {str(dt)[6:]} {m}x{n}x{kk} {bm}x{bn} st{st} spec={v['specialize']} "
                               f"pers={v['persistent']} ({info['regs']} regs, {info['spill']} B spill, grid {info['grid'][0]})",
                               "cuBLAS", ms_w, ms_p, 2 * m * n * kk, err, (t1, t2))
                    except Exception as e:
                        print(f"sched gemm {m}x{n}x{kk} {bm}x{bn} {v}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    # tensor stores (TMA) in the epilogue (stores=2, the compiler's choice on
    # sm_90a) against every thread storing its own elements (stores=1), same
    # kernel, tiles and schedule, cuBLAS in the same process
    for n in ((4096,) if quick else (4096, 8192)):
        for dt in (torch.bfloat16, torch.float16):
            a = torch.randn(n, n, dtype=dt, device=dev); b = torch.randn(n, n, dtype=dt, device=dev)
            c = torch.empty(n, n, dtype=dt, device=dev)
            ref = a @ b.T
            ms_p = bench(lambda: a @ b.T)
            name = GEMM_KERNELS["wgmma", dt]
            for bm, bn, wm, st in SCHED_TILES + [(128, 256, 2, 3)]:
                for v in (dict(specialize=0, persistent=0), dict(specialize=1, persistent=0),
                          dict(specialize=1, persistent=1)):
                    for stores in (1, 2):
                        try:
                            k, t1, t2, info = wavec_compile("bench/gemm.wave", name, dict(M=n, N=n, K=n, BLOCK_M=bm,
                                                            BLOCK_N=bn, WAVES_M=wm), dict(stages=st, stores=stores, **v),
                                                            target="sm_90a")
                            c.fill_(float("nan")); k(a, b, c); torch.cuda.synchronize()
                            err = rel_err(c, ref)
                            ms_w = bench(lambda: k(a, b, c))
                            report(f"store A/B gemm {str(dt)[6:]} {n}^3 {bm}x{bn} st{st} spec={v['specialize']} "
                                   f"pers={v['persistent']} stores={stores} ({info['regs']} regs, {info['spill']} B spill)",
                                   "cuBLAS", ms_w, ms_p, 2 * n**3, err, (t1, t2))
                        except Exception as e:
                            print(f"store A/B gemm {n}^3 {bm}x{bn} st{st} {v} stores={stores}: FAILED "
                                  f"{type(e).__name__}: {str(e)[:300]}", flush=True)
    # the warpgroup attention forward on the same schedules (D = 128, o in
    # f16), against SDPA-cuDNN in the same process
    D, N = 128, (4096 if quick else 8192)
    BH, q, kk, vv, o, lse, cudnn = attn_fwd_inputs(D, N)
    for causal in (False, True):
        peer = cudnn(causal)
        for var in SCHED_VARIANTS:
            fwd_row(f"sched attn fwd f16 D={D} N={N} causal={int(causal)} spec={var['specialize']} "
                    f"pers={var['persistent']}", "examples/attention_fwd_wgmma.wave", causal,
                    (BH, q, kk, vv, o, lse, D, N), peer, 128, 64, dict(stages=3, **var))

# Ping-pong (hardware(pingpong), src/tir/turns.c): the specialized
# attention kernels' consumer warpgroups taking turns at the tensor cores,
# against the same kernel without turns and against the plain
# configurations that were best before; SDPA-cuDNN in the same process.
PP_FWD = [  # BLOCK_M, BLOCK_K2, STAGES, hardware
    (128, 64, 2, {}), (128, 128, 2, {}),
    (128, 64, 3, dict(specialize=1)), (128, 64, 4, dict(specialize=1)),
    (128, 128, 3, dict(specialize=1))]
PP_DKDV = [(128, 32, 4), (64, 64, 3), (64, 64, 4), (128, 64, 3)]  # BLOCK_K2, BLOCK_M, STAGES
PP_DQ = [(128, 64, 3), (128, 64, 4), (64, 128, 3)]                 # BLOCK_M, BLOCK_K2, STAGES
OV_FWD = [  # the best plain configuration (no knob), then 3- and 4-slot rings
    (128, 64, 2, {}), (128, 64, 3, {}), (128, 64, 4, {}), (128, 128, 3, {}),
    (128, 64, 3, dict(specialize=1)), (128, 64, 4, dict(specialize=1)),
    (128, 128, 3, dict(specialize=1))]

def fwd_row(label, wave, causal, inputs, peer, bm, bk, hard, grid=False):
    """One attention forward configuration (examples/attention_fwd_wgmma.wave's
    kernels or a variant in `wave`) against SDPA-cuDNN's (ref, ms, flops) in
    `peer`: compiled, checked, timed, reported as `label (regs, spill)`."""
    BH, q, kk, vv, o, lse, D, N = inputs
    ref, ms_p, fl = peer
    try:
        k, t1, t2, info = wavec_compile(
            wave, "attention_fwd_wgmma" + ("_causal" if causal else ""),
            dict(B=BH, M=N, K2=N, K1=D, N=D, BLOCK_M=bm, BLOCK_K2=bk), hard, target="sm_90a")
        o.fill_(float("nan")); k(q, kk, vv, o, lse); torch.cuda.synchronize()
        err = rel_err(o, ref)
        ms_w = bench(lambda: k(q, kk, vv, o, lse))
        report(f"{label} ({info['regs']} regs, {info['spill']} B spill"
               f"{', grid ' + str(info.get('grid')) if grid else ''})",
               "SDPA-cuDNN", ms_w, ms_p, fl, err, (t1, t2))
    except Exception as e:
        print(f"{label} {hard}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)

def gqa(quick=False):
    """Grouped-query attention forward (tests/kernels/gqa.wave: query head h
    reads key/value head h // G, staged by tensor copies): Llama-like
    H = 32 query heads over HK = 8 key heads, D = 128, against SDPA with
    enable_gqa=True (cuDNN, else flash) and against SDPA-cuDNN on keys and
    values repeated to 32 heads (the same arithmetic), same process."""
    from torch.nn.attention import sdpa_kernel, SDPBackend
    H, HK, D = 32, 8, 128
    for N in ((4096,) if quick else (4096, 8192)):
        B = max(1, 16384 // N)
        q = torch.randn(B, H, N, D, dtype=torch.float16, device=dev)
        k, v = (torch.randn(B, HK, N, D, dtype=torch.float16, device=dev) for _ in range(2))
        o = torch.empty(B, H, N, D, dtype=torch.float16, device=dev)
        lse = torch.empty(B, H, N, dtype=torch.float32, device=dev)
        fl = 4 * B * H * N * N * D
        peers = []
        for name, be in (("SDPA-cuDNN gqa", SDPBackend.CUDNN_ATTENTION), ("SDPA-flash gqa", SDPBackend.FLASH_ATTENTION)):
            try:
                with sdpa_kernel([be]):
                    ref = F.scaled_dot_product_attention(q, k, v, scale=0.125, enable_gqa=True)
                    peers.append((name, ref, bench(lambda: F.scaled_dot_product_attention(q, k, v, scale=0.125,
                                                                                             enable_gqa=True))))
            except Exception as e:
                print(f"gqa N={N} {name}: FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
        kr, vr = (t.repeat_interleave(H // HK, dim=1) for t in (k, v))
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            ref = F.scaled_dot_product_attention(q, kr, vr, scale=0.125)
            peers.append(("SDPA-cuDNN repeated", ref, bench(lambda: F.scaled_dot_product_attention(q, kr, vr, scale=0.125))))
        for bm, bk, st in ((192, 128, 2), (128, 128, 2), (128, 64, 3)):
            try:
                kk, t1, t2, info = wavec_compile("tests/kernels/gqa.wave", "attention_gqa_wgmma",
                                                 dict(B=B, H=H, HK=HK, M=N, K2=N, K1=D, N=D, G=H // HK,
                                                      BLOCK_M=bm, BLOCK_K2=bk), dict(stages=st), target="sm_90a")
                o.fill_(float("nan")); kk(q, k, v, o, lse); torch.cuda.synchronize()
                ms_w = bench(lambda: kk(q, k, v, o, lse))
                for name, ref, ms_p in peers:
                    report(f"gqa attn fwd f16 H={H} HK={HK} D={D} N={N} {bm}x{bk} st{st} "
                           f"({info['regs']} regs, {info['spill']} B spill)", name, ms_w, ms_p, fl,
                           rel_err(o, ref), (t1, t2))
            except Exception as e:
                print(f"gqa N={N} {bm}x{bk} st{st}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)

def pingpong_ab(quick=False, knob="pingpong"):
    """The specialized (and plain) attention kernels with hardware(knob)
    0 and 1, same tiles, cuDNN in the same process; then the backward's
    warpgroup kernels alone, 1 against 0. knob: pingpong (turns) or overlap
    (the carried group issued after the next iteration's first)."""
    cfgs = PP_FWD if knob == "pingpong" else OV_FWD
    for D in (128, 64):
        for N in ((4096,) if quick else (8192, 4096, 6000) if knob == "pingpong" else (8192, 4096)):
            BH, q, kk, vv, o, lse, cudnn = attn_fwd_inputs(D, N)
            for causal in (False, True):
                peer = cudnn(causal)
                for bm, bk, st, hw in cfgs:
                    for pp in ((0, 1) if hw or (knob == "overlap" and st > 2) else (None,)):
                        fwd_row(f"{knob} attn fwd f16 D={D} N={N} causal={int(causal)} {bm}x{bk} st{st}"
                                f"{' spec' if hw else ''}{'' if pp is None else f' {knob[:2]}={pp}'}",
                                "examples/attention_fwd_wgmma.wave", causal, (BH, q, kk, vv, o, lse, D, N), peer,
                                bm, bk, dict(stages=st, **hw, **({} if pp is None else {knob: pp})))
    # the backward's warpgroup kernels alone, with the knob 1 against 0
    bwd_variants(quick, [dict(specialize=1, **{knob: 0}), dict(specialize=1, **{knob: 1})], knob, base_row=False)

SM_FWD = {128: [(128, 64, 2, {}), (128, 128, 3, dict(specialize=1))],
          64: [(128, 128, 2, {}), (128, 64, 2, {})]}

def softmax_ab(quick=False):
    """The attention forward as the example writes its softmax (row max
    over raw scores, the scale inside exp2: one fma a score) against the
    scores scaled first (bench/attention_fwd_prescaled.wave), same tiles,
    SDPA-cuDNN in the same process."""
    for D in (128, 64):
        for N in ((4096,) if quick else (8192, 4096)):
            BH, q, kk, vv, o, lse, cudnn = attn_fwd_inputs(D, N)
            for causal in (False, True):
                peer = cudnn(causal)
                for bm, bk, st, hw in SM_FWD[D]:
                    for wave, form in (("bench/attention_fwd_prescaled.wave", "prescaled"),
                                       ("examples/attention_fwd_wgmma.wave", "fma")):
                        fwd_row(f"softmax {form} attn fwd f16 D={D} N={N} causal={int(causal)} {bm}x{bk} st{st}"
                                f"{' spec' if hw else ''}", wave, causal, (BH, q, kk, vv, o, lse, D, N), peer,
                                bm, bk, dict(stages=st, **hw))

FS_FWD = [  # the best plain configuration, then specialized 128x128 tiles (cuDNN's shape) with and without
    (128, 64, 2, {}),  # persistent tiles and overlap
    (128, 128, 2, dict(specialize=1)), (128, 128, 3, dict(specialize=1)),
    (128, 128, 2, dict(specialize=1, persistent=1)), (128, 128, 3, dict(specialize=1, persistent=1)),
    (128, 128, 3, dict(specialize=1, persistent=1, overlap=1)), (128, 128, 3, dict(specialize=1, overlap=1))]

# Turns in the rotated loop (hardware(pingpong = 1, overlap = 1), v0.5.12):
# a consumer's section is q kᵀ(j) and p v(j - 1), taken after the ring's
# wait, the softmax outside it; against turns alone, overlap alone, and the
# best plain configuration.
FA3_FWD = [
    (128, 64, 2, {}), (128, 128, 3, TURNS), (128, 128, 3, dict(specialize=1, overlap=1)),
    (128, 128, 3, dict(TURNS, overlap=1)), (128, 128, 3, dict(TURNS, overlap=1, persistent=1)),
    (128, 64, 3, dict(TURNS, overlap=1)), (128, 64, 4, dict(TURNS, overlap=1))]
FA3_BWD = [dict(specialize=1), TURNS, dict(specialize=1, overlap=1), dict(TURNS, overlap=1)]
# Persistent tiles under turns (v0.5.12): a workgroup a multiprocessor
# walks its tiles, so that the next tile's loads start under this one's
# epilogue instead of after the workgroup exits and the next one fills its
# ring; against the plain kernels the sweep picks and turns alone.
PERS_FWD = [(128, 64, 2, {}), (128, 128, 2, {}), (128, 128, 3, TURNS), (128, 128, 3, dict(TURNS, persistent=1))]

# Wider tiles at two stages (v0.6.4): K2 tiles of 176 and 192 keys (FA3's
# hdim-128 shape; 8192 and 4096 are not multiples of 176, so the last tile
# is masked) and three warpgroups of query rows (192), against the best
# plain configuration and turns at 3 stages; turns and overlap at 2 stages
# (a producer refills the carried group's slot once it retires).
WIDE_FWD = {"128": (128, [(128, 64, 2, {}), (192, 128, 2, {}), (192, 128, 2, dict(specialize=1)), (192, 64, 2, {}),
                          (192, 64, 3, {}), (128, 128, 3, TURNS)]),
            "128b": (128, [(192, 128, 2, {}), (192, 128, 2, TURNS), (256, 64, 2, {}), (192, 96, 2, {}),
                           (256, 128, 2, {})]),
            "64": (64, [(128, 128, 2, {}), (192, 128, 2, {}), (192, 128, 2, dict(specialize=1)), (256, 128, 2, {}),
                        (192, 64, 3, {})]),
            # longest walks first (v0.6.5): the causal forward's query tiles
            # in reverse against block i on tile i (non-causal rows: the
            # same kernel twice, the noise)
            "order128": (128, [(192, 128, 2, {}), (192, 128, 2, dict(longest_first=0))]),
            "order64": (64, [(128, 128, 2, {}), (128, 128, 2, dict(longest_first=0))])}

def fwd_defaults(quick=False, Ds=(64, 128), Ns=None):
    """The forward as shipped: examples/attention_fwd_wgmma.wave with its
    defaults (tiles chosen from the head dim and key length) and the
    compiler's schedule, no hardware override: what a user gets, beside
    SDPA-cuDNN in the same process."""
    for D in Ds:
        for N in Ns or ((4096,) if quick else (1024, 4096, 8192)):
            BH, q, kk, vv, o, lse, cudnn = attn_fwd_inputs(D, N)
            for causal in (False, True):
                ref, ms_p, fl = cudnn(causal)
                try:
                    k, t1, t2, info = wavec_compile(
                        "examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma" + ("_causal" if causal else ""),
                        dict(B=BH, M=N, K2=N, K1=D, N=D), None, target="sm_90a")
                    o.fill_(float("nan")); k(q, kk, vv, o, lse); torch.cuda.synchronize()
                    err = rel_err(o, ref)
                    report(f"defaults attn fwd f16 D={D} N={N} causal={int(causal)} ({info['regs']} regs, "
                           f"{info['spill']} B spill, grid {info['grid']})", "SDPA-cuDNN",
                           bench(lambda: k(q, kk, vv, o, lse)), ms_p, fl, err, (t1, t2))
                except Exception as e:
                    print(f"defaults D={D} N={N} causal={int(causal)}: FAILED {type(e).__name__}: {str(e)[:300]}",
                          flush=True)

# The GEMM as shipped: bench/gemm.wave's warpgroup kernels with their
# defaults (128x256 tiles) and no hardware override, so the ring depth,
# schedule and epilogue are the compiler's; beside it the ring of 2 slots
# the compiler took before v0.11.0 and 3; cuBLAS (same output dtype) in
# the same process. Shapes a user picks: squares, LLM projections, sizes
# no tile divides. GD_SHAPES_ENV: "MxNxK,..." to run others.
GD_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 14336, 4096), (16384, 4096, 14336),
             (5000, 5000, 5000), (4000, 6000, 3000), (1000, 1000, 1000)]

def gemm_defaults(quick=False, variants=(("as shipped", None), ("stages=2", dict(stages=2)),
                                         ("stages=3", dict(stages=3)))):
    env = os.environ.get("GD_SHAPES_ENV")
    shapes = [tuple(int(x) for x in s.split("x")) for s in env.split(",")] if env else \
        GD_SHAPES[:1] if quick else GD_SHAPES
    for dt in (torch.bfloat16, torch.float16):
        for M, N, K in shapes:
            a = torch.randn(M, K, dtype=dt, device=dev); b = torch.randn(N, K, dtype=dt, device=dev)
            c = torch.empty(M, N, dtype=dt, device=dev)
            ref = a @ b.T
            ms_p = bench(lambda: a @ b.T)
            for label, hw in variants:
                try:
                    k, t1, t2, info = wavec_compile("bench/gemm.wave", GEMM_KERNELS["wgmma", dt], dict(M=M, N=N, K=K),
                                                    hw, target="sm_90a")
                    c.fill_(float("nan")); k(a, b, c); torch.cuda.synchronize()
                    err = rel_err(c, ref)
                    report(f"gemm_defaults {str(dt)[6:]} {M}x{N}x{K} {label} ({info['regs']} regs, "
                           f"{info['spill']} B spill, grid {info['grid']})", "cuBLAS",
                           bench(lambda: k(a, b, c)), ms_p, 2 * M * N * K, err, (t1, t2))
                except Exception as e:
                    print(f"gemm_defaults {dt} {M}x{N}x{K} {label}: FAILED {type(e).__name__}: {str(e)[:300]}",
                          flush=True)

def fwd_sched(quick=False, cfgs=FS_FWD, Ds=(128,), tag="fwd_sched"):
    """The forward in specialized and persistent schedules (`cfgs`), cuDNN in the same process."""
    for D in Ds:
      # WV_FWD_N: the sequence lengths (a short device call), else as quick says
      Ns = tuple(int(x) for x in os.environ.get("WV_FWD_N", "").split(",") if x)
      for N in Ns or ((4096,) if quick else (8192, 4096)):
        BH, q, kk, vv, o, lse, cudnn = attn_fwd_inputs(D, N)
        for causal in (False, True):
            peer = cudnn(causal)
            for bm, bk, st, hw in cfgs:
                fwd_row(f"{tag} attn fwd f16 D={D} N={N} causal={int(causal)} {bm}x{bk} st{st} "
                        f"{','.join(f'{a}={b}' for a, b in hw.items()) or 'plain'}",
                        "examples/attention_fwd_wgmma.wave", causal, (BH, q, kk, vv, o, lse, D, N), peer,
                        bm, bk, dict(stages=st, **hw), grid=True)

def bwd_variants(quick=False, variants=FA3_BWD, tag="fa3", base_row=True):
    """The backward's warpgroup kernels alone in each schedule of
    `variants`, each against the first (the same arithmetic: the same
    bits), at the tiles the ping-pong sweep uses; the first's own row
    where base_row says."""
    for D in (128, 64):
        N = 4096
        B = max(1, 16384 // N); H = 2048 // D; BH = B * H
        q, kk, vv, do = (torch.randn(BH, N, D, dtype=torch.float16, device=dev) for _ in range(4))
        lse = torch.randn(BH, N, dtype=torch.float32, device=dev).abs() + 5
        Dt = torch.randn(BH, N, dtype=torch.float32, device=dev)
        dq, dk, dv = (torch.empty(BH, N, D, dtype=torch.float16, device=dev) for _ in range(3))
        plan = [("dkdv", cfg, dict(BLOCK_K2=cfg[0], BLOCK_M=cfg[1]), "attention_bwd_dkdv_wgmma",
                 lambda k: k(q, kk, vv, do, lse, Dt, dk, dv), dk) for cfg in PP_DKDV] + \
               [("dq", cfg, dict(BLOCK_M=cfg[0], BLOCK_K2=cfg[1]), "attention_bwd_dq_wgmma",
                 lambda k: k(q, kk, vv, do, lse, Dt, dq), dq) for cfg in PP_DQ]
        for kind, cfg, defs, kname, call, out in plan:
            fl = (6 if kind == "dq" else 8) * BH * N * N * D  # 3 or 4 matmuls of N x N x D
            base = None
            for hw in variants:
                name = ",".join(f"{a}={b}" for a, b in hw.items())
                try:
                    k, t1, t2, info = wavec_compile("examples/attention_bwd_wgmma.wave", kname,
                                                    dict(B=BH, M=N, K2=N, K1=D, N=D, SCALE=0.125, **defs),
                                                    dict(stages=cfg[2], **hw), target="sm_90a")
                    out.fill_(float("nan")); call(k); torch.cuda.synchronize()
                    ms = bench(lambda: call(k))
                    if base is None:
                        base, ref, bname = ms, out.clone(), name
                        if not base_row:
                            continue
                    report(f"{tag} attn bwd {kind} f16 D={D} N={N} {cfg} {name} against {bname} "
                           f"({info['regs']} regs, {info['spill']} B spill)", f"wavec {bname}", ms, base, fl,
                           rel_err(out, ref), (t1, t2))
                except Exception as e:
                    print(f"{tag} attn bwd {kind} D={D} {cfg} {name}: FAILED {type(e).__name__}: {str(e)[:300]}",
                          flush=True)

# The one-pass backward (attention_bwd_wgmma.wave: prep, fused dk/dv with dq
# added by write(..., reduce = add), dq_scale) against SDPA-cuDNN's backward
# in the same process: (BLOCK_K2, BLOCK_M, stages, hardware).
BWD1 = [(128, 64, 2, {}), (128, 64, 2, dict(exchange=0)), (128, 64, 2, dict(specialize=0)),
        (128, 64, 2, dict(specialize=1)), (128, 64, 2, dict(adds=1))]  # (3 stages: 243 KB, run mm)

def bwd_one_pass(quick=False, cfgs=BWD1):
    """Times the three kernels together (and the fused one alone), checks
    dq, dk, dv against cuDNN's gradients of the same inputs."""
    from torch.nn.attention import sdpa_kernel, SDPBackend
    W = "examples/attention_bwd_wgmma.wave"
    # WV_BWD1_D: the head dims to run (a short device call: "128")
    for D in tuple(int(x) for x in os.environ.get("WV_BWD1_D", "128,64").split(",")):
        # WV_BWD1_N: the sequence lengths (default: 4096 quick, else three)
        ns = os.environ.get("WV_BWD1_N")
        for N in (tuple(int(x) for x in ns.split(",")) if ns else (4096,) if quick else (4096, 8192, 3072)):
            B = max(1, 16384 // N); H = 2048 // D; BH = B * H
            q = torch.randn(B, H, N, D, dtype=torch.float16, device=dev, requires_grad=True)
            kk = torch.randn_like(q, requires_grad=True); v = torch.randn_like(q, requires_grad=True)
            do = torch.randn_like(q)
            qf, kf, vf, dof = (t.detach().reshape(BH, N, D) for t in (q, kk, v, do))
            lse = torch.empty(BH, N, dtype=torch.float32, device=dev)
            o = torch.empty(BH, N, D, dtype=torch.float16, device=dev)
            Dt = torch.empty(BH, N, dtype=torch.float32, device=dev)
            acc = torch.empty(BH, N, D, dtype=torch.float32, device=dev)
            dq, dk, dv = (torch.empty(BH, N, D, dtype=torch.float16, device=dev) for _ in range(3))
            # WV_BWD1_AUX: another file's prep and dq_scale (an A/B)
            AUX = os.environ.get("WV_BWD1_AUX", W)
            prep, *_ = wavec_compile(AUX, "attention_bwd_prep", dict(B=BH, M=N, N=D))
            scale, *_ = wavec_compile(AUX, "attention_bwd_dq_scale", dict(B=BH, M=N, K1=D, SCALE=0.125))
            ms_prep = bench(lambda: prep(dof, o, Dt, acc))
            ms_scale = bench(lambda: scale(acc, dq))
            # bytes: do, o read, D and dq_acc written; dq_acc read, dq written
            gb_prep = (2 * 2 + 4) * BH * N * D / ms_prep / 1e6
            gb_scale = (4 + 2) * BH * N * D / ms_scale / 1e6
            print(f"bwd1 D={D} N={N} prep {ms_prep * 1e3:.1f} us ({gb_prep:.0f} GB/s), "
                  f"dq_scale {ms_scale * 1e3:.1f} us ({gb_scale:.0f} GB/s)", flush=True)
            for causal in (False, True):
                sfx = "_causal" if causal else ""
                fk, *_ = wavec_compile("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma" + sfx,
                                       dict(B=BH, M=N, K2=N, K1=D, N=D, BLOCK_M=128, BLOCK_K2=64, SCALE=0.125),
                                       dict(stages=2), target="sm_90a")
                fk(qf, kf, vf, o, lse)
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    out = F.scaled_dot_product_attention(q, kk, v, is_causal=causal, scale=0.125)
                    q.grad = kk.grad = v.grad = None
                    out.backward(do, retain_graph=True)
                    def pb():
                        q.grad = kk.grad = v.grad = None
                        out.backward(do, retain_graph=True)
                    ms_p = bench(pb)
                fl = 2.5 * 4 * BH * N * N * D * (0.5 if causal else 1.0)
                for bk, bm, st, hw in cfgs:
                    name = f"{bk}x{bm} st{st} " + (",".join(f"{a}={b}" for a, b in hw.items()) or "auto")
                    try:
                        k, t1, t2, info = wavec_compile(W, "attention_bwd_fused_wgmma" + sfx,
                                                        dict(B=BH, M=N, K2=N, K1=D, N=D, SCALE=0.125, BLOCK_K2=bk,
                                                             BLOCK_M=bm), dict(stages=st, **hw), target="sm_90a")
                        def run():
                            prep(dof, o, Dt, acc)
                            k(qf, kf, vf, dof, lse, Dt, dk, dv, acc)
                            scale(acc, dq)
                        run(); torch.cuda.synchronize()
                        err = max(rel_err(dq.reshape(B, H, N, D), q.grad), rel_err(dk.reshape(B, H, N, D), kk.grad),
                                  rel_err(dv.reshape(B, H, N, D), v.grad))
                        ms_w = bench(run)
                        ms_k = bench(lambda: k(qf, kf, vf, dof, lse, Dt, dk, dv, acc))
                        report(f"bwd1 attn bwd one-pass f16 D={D} N={N} causal={int(causal)} {name} (fused kernel "
                               f"alone {fl / ms_k / 1e9:.0f} TFLOP/s; {info['regs']} regs, {info['spill']} B spill)",
                               "SDPA-cuDNN", ms_w, ms_p, fl, err, (t1, t2))
                    except Exception as e:
                        print(f"bwd1 D={D} N={N} causal={int(causal)} {name}: FAILED {type(e).__name__}: "
                              f"{str(e)[:300]}", flush=True)

# Clusters (hardware(cluster = C), schedule.c): the GEMM's b (and the
# attention forward's k and v) multicast to the C workgroups of a cluster
# along M, against the same kernel, tiles and schedule without clusters;
# cuBLAS / SDPA-cuDNN in the same process. CLUSTER_GEMM: (BLOCK_M, BLOCK_N,
# WAVES_M, stages, hardware) of the rows.
CLUSTER_GEMM = [(128, 256, 2, 4, dict(specialize=1, persistent=1)),
                (128, 256, 2, 3, dict(specialize=1, persistent=1)),
                (128, 256, 2, 4, dict(specialize=1, persistent=0))]

def cluster_ab(quick=False):
    shapes = [(4096,) * 3] if quick else [(4096,) * 3, (8192,) * 3, (6144,) * 3] + LLM_SHAPES[::3]
    for (m, n, kk) in shapes:
        dts = (torch.bfloat16, torch.float16) if m == n == kk and not quick else (torch.bfloat16,)
        for dt in dts:
            a = torch.randn(m, kk, dtype=dt, device=dev); b = torch.randn(n, kk, dtype=dt, device=dev)
            c = torch.empty(m, n, dtype=dt, device=dev)
            ref = a @ b.T
            ms_p = bench(lambda: a @ b.T)
            name = GEMM_KERNELS["wgmma", dt]
            for bm, bn, wm, st, hw in CLUSTER_GEMM[:1] if quick else CLUSTER_GEMM:
                for cl in (1, 2, 4) if m % (4 * bm) == 0 and not quick else (1, 2):
                    try:
                        k, t1, t2, info = wavec_compile("bench/gemm.wave", name, dict(M=m, N=n, K=kk, BLOCK_M=bm,
                                                        BLOCK_N=bn, WAVES_M=wm), dict(stages=st, cluster=cl, **hw),
                                                        target="sm_90a")
                        c.fill_(float("nan")); k(a, b, c); torch.cuda.synchronize()
                        err = rel_err(c, ref)
                        ms_w = bench(lambda: k(a, b, c))
                        report(f"cluster A/B gemm {str(dt)[6:]} {m}x{n}x{kk} {bm}x{bn} st{st} "
                               f"spec={hw['specialize']} pers={hw['persistent']} cluster={cl} "
                               f"({info['regs']} regs, {info['spill']} B spill, grid {info['grid'][0]})",
                               "cuBLAS", ms_w, ms_p, 2 * m * n * kk, err, (t1, t2))
                    except Exception as e:
                        print(f"cluster A/B gemm {m}x{n}x{kk} {bm}x{bn} cluster={cl}: FAILED {type(e).__name__}: "
                              f"{str(e)[:300]}", flush=True)
    D = 128
    for N in ((4096,) if quick else (4096, 8192)):
        BH, q, kk, vv, o, lse, cudnn = attn_fwd_inputs(D, N)
        peer = cudnn(False)
        for bm, bk, st, hw in ((128, 128, 2, dict(specialize=1)), (192, 128, 2, {})):
            for cl in (1, 2):
                fwd_row(f"cluster A/B attn fwd f16 D={D} N={N} {bm}x{bk} st{st} {hw} cluster={cl}",
                        "examples/attention_fwd_wgmma.wave", False, (BH, q, kk, vv, o, lse, D, N), peer, bm, bk,
                        dict(stages=st, cluster=cl, **hw))
    # the one-pass backward (q and do multicast over two key tiles; the
    # causal rows cannot have clusters: E0408, printed as FAILED)
    bwd_one_pass(True, [(128, 64, 2, {}), (128, 64, 2, dict(cluster=2))])

# Issue order (hardware(early_mma), lower.c): the one-pass backward with
# each mma issued as soon as its operands are (dp during the exponentials
# of p: D = 64; at D = 128 the register rule keeps program order, and the
# plain schedule with early_mma = 1 fits in 250 registers) against program
# order; SDPA-cuDNN in the same process.
def issue_ab(quick=False):
    bwd_one_pass(quick, [(128, 64, 2, {}), (128, 64, 2, dict(early_mma=0)), (128, 64, 2, dict(specialize=0)),
                         (128, 64, 2, dict(specialize=0, early_mma=1))])

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench/out"))
    ap.add_argument("--only", choices=("gemm", "attn", "fwd", "bwd", "bwd_wg", "tma", "fp8", "ragged", "schedule", "launch",
                                       "pingpong", "overlap", "softmax", "fwd_sched", "fa3", "pers", "bwd1", "wide",
                                       "layouts", "gqa", "cluster", "issue"),
                    help="one part of the benchmarks (fwd: the attention forward only, without the backward; bwd: "
                    "the backward only; tma: tensor-copy rings against cp.async rings, same tiles; fp8: the scaled "
                    "fp8 GEMM against torch._scaled_mm; ragged: sizes the tiles do not divide against the next "
                    "divisible ones; schedule: warp specialization and persistent tiles against today's schedule; bwd_wg: the "
                    "warpgroup backward only; pingpong: the specialized attention kernels with and without turns; overlap: the "
                    "attention kernels with and without hardware(overlap = 1); softmax: the forward's softmax as the example "
                    "writes it (one fma a score) against the scores scaled first)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print("device", torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    if a.only in (None, "gemm", "launch"):
        try: launch_overhead()
        except Exception as e: print(f"launch overhead: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    if a.only in (None, "tma"):
        tma_ab(a.quick)
    for n in ((4096,) if a.quick else (4096, 8192)) if a.only in (None, "fp8") else ():
        try: fp8_gemm(n, a.quick)
        except Exception as e: print(f"fp8 gemm {n}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    if a.only in (None, "ragged"):
        ragged(a.quick)
    if a.only in (None, "schedule"):
        schedule_ab(a.quick)
    if a.only in (None, "pingpong"):
        pingpong_ab(a.quick)
    if a.only in (None, "overlap"):
        pingpong_ab(a.quick, "overlap")
    if a.only in (None, "softmax"):
        softmax_ab(a.quick)
    if a.only in (None, "fwd_sched"):
        fwd_sched(a.quick)
    if a.only in (None, "pers"):
        fwd_sched(a.quick, PERS_FWD, (128, 64), "pers")
    if a.only in (None, "bwd1"):
        bwd_one_pass(a.quick)
    if a.only in (None, "layouts"):
        layouts(a.quick)
    if a.only in (None, "wide"):
        # WIDE_D: the lists to run (WIDE_FWD's names)
        for name in os.environ.get("WIDE_D", "128").split(","):
            D, cfgs = WIDE_FWD[name]
            fwd_sched(a.quick, cfgs, (D,), "wide")
    if a.only in (None, "gqa"):
        gqa(a.quick)
    if a.only in (None, "cluster"):
        cluster_ab(a.quick)
    if a.only in (None, "issue"):
        issue_ab(a.quick)
    if a.only in (None, "fa3"):
        fwd_sched(a.quick, FA3_FWD, (128, 64), "fa3")
        bwd_variants(a.quick)
    if a.only not in ("tma", "fp8", "ragged", "schedule", "launch", "pingpong", "overlap", "softmax", "fwd_sched", "bwd_wg",
                      "fa3", "pers", "bwd1", "wide", "layouts", "gqa", "cluster", "issue"):
        try: triton_cold_compile()
        except Exception as e: print(f"triton: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    # one sweep (bf16) per family picks the GEMM tiles for both input types:
    # they run the same instructions
    for fam in ("wgmma", "mma") if a.only in (None, "gemm") else ():
        gemm_sweep(8192 if not a.quick else 4096, torch.bfloat16, fam)
        for n in ((4096,) if a.quick else (4096, 8192)):
            for dt in (torch.bfloat16, torch.float16):
                try: gemm(n, dt, fam)
                except Exception as e: print(f"gemm {n} {dt}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    for D in (64, 128) if a.only not in ("gemm", "tma", "fp8", "ragged", "schedule", "launch", "pingpong", "overlap",
                                         "softmax", "fwd_sched", "fa3", "pers", "bwd1", "wide", "layouts", "gqa",
                                         "cluster", "issue") else ():
        kinds = {"fwd": ("fwd", "fwd_wg"), "bwd": ("fwd", "dkdv", "dq", "dkdv_wg", "dq_wg"),
                 "bwd_wg": ("dkdv_wg", "dq_wg")}.get(
            a.only, ("fwd", "dkdv", "dq", "fwd_wg", "dkdv_wg", "dq_wg"))
        try: attn_sweep(D, kinds=kinds)
        except Exception as e: print(f"attn sweep D={D}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
        for N in ((4096,) if a.quick else (1024, 4096, 8192)):
            for causal in (False, True):
                for kind in ("fwd_wg", "fwd") if a.only not in ("bwd", "bwd_wg") else ():
                    try: attn_fwd(D, N, causal, kind)
                    except Exception as e: print(f"attn {kind} D={D} N={N}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
                if a.only == "fwd": continue
                for wg in (True, False) if a.only != "bwd_wg" else (True,):
                    try: attn_bwd(D, N, causal, wg)
                    except Exception as e: print(f"attn bwd{' wgmma' if wg else ''} D={D} N={N}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    json.dump(rows, open(f"{a.out}/results.json", "w"), indent=1)
    with open(f"{a.out}/RESULTS.md", "w") as f:
        f.write(f"# wavec benchmarks\n\n{time.strftime('%Y-%m-%d')}, {torch.cuda.get_device_name()}, torch {torch.__version__}, "
                f"{subprocess.run([WAVEC, '--version'], capture_output=True, text=True).stdout.strip()}\n\n"
                f"GEMM error: the larger of the relative errors against torch.matmul and against an f32 matmul of the same inputs "
                f"(fp8: against float64 of the same fp8 values and scales; the peer's in the workload name). "
                f"Ragged rows: the peer is wavec itself at the next divisible size, same kernel and tiles. "
                f"Attention: against SDPA on the same f16 inputs; backward: max over dq, dk, dv. Times: median of 20 after 3 warm-ups, queued back to back, "
                f"CUDA events; the backward is wavec's D, dk/dv and dq kernels together.\n\n")
        if overhead:
            f.write("Host time per call (launches queued; 256^3 GEMMs, the GPU mostly idle): " + "; ".join(
                f"{k}: wavec {v[0]:.1f} us, torch.matmul {v[1]:.1f} us" for k, v in overhead.items() if "4096" not in k) +
                ". The 4096^3 bf16 GEMM timed with launches queued (the table's method) and synchronized before each "
                "(v0.5.2's): " + "; ".join(f"{k.split()[1]}: wavec {v[0]:.1f} us, cuBLAS {v[1]:.1f} us"
                                            for k, v in overhead.items() if "4096" in k) + ".\n\n")
        if triton_ms:
            f.write(f"Compile times: wavec's per kernel in the table (backward rows: its dk/dv and dq kernels summed; source to PTX by wavec's library in the "
                    f"benchmark's process; PTX to cubin by ptxas); a cold Triton compile of a tiled matmul in this run: "
                    f"{triton_ms['matmul']:.0f} ms.\n\n")
        f.write("| workload | wavec TFLOP/s | peer | peer TFLOP/s | ratio | rel err | source->PTX ms | PTX->cubin ms |\n|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['workload']} | {r['wavec_tflops']:.1f} | {r['peer']} | {r['peer_tflops']:.1f} | {r['ratio']:.3f} | {r['rel_err']:.1e} | {r['compile'][0]:.1f} | {r['compile'][1]:.1f} |\n")
    try:
        import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(10, 0.4 * len(rows) + 1.5))
        names = [r["workload"] for r in rows]
        ax.barh(names, [r["peer_tflops"] for r in rows], color="#bbb", label="peer")
        ax.barh(names, [r["wavec_tflops"] for r in rows], color="#2a6", label="wavec", height=0.5)
        ax.set_xlabel("TFLOP/s"); ax.legend(); ax.invert_yaxis(); fig.tight_layout()
        fig.savefig(f"{a.out}/results.png", dpi=110)
    except Exception as e:
        print("no plot:", e)
    print("\n| workload | wavec | peer | ratio |")
    for r in rows:
        print(f"| {r['workload']} | {r['wavec_tflops']:.1f} | {r['peer']} {r['peer_tflops']:.1f} | {r['ratio']:.3f} |")

if __name__ == "__main__":
    main()
