"""Where the one-pass backward's warps wait, instruction by instruction:
ncu's PC sampling of one launch at D = 128, N = 4096 (bench.py's sizes) of
attention_bwd_fused_wgmma (the compiler's choice: specialized, the
warpgroups exchanging ds, tensor reduces; leaving parts, exchange = 0;
plain, specialize = 0; the threads' adds, adds = 1; 128x64 2 stages) beside
the split form's dk/dv kernel (attention_bwd_dkdv_wgmma, 4/5 of the work,
no adds). Runs ncu on itself:  python3 bench/profile_bwd1.py [OUTDIR]
(WV_PROF_D: the head dim, 128 unless given.)"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_src import drive

W = "examples/attention_bwd_wgmma.wave"
CFGS = [("fused-auto", "attention_bwd_fused_wgmma", {}),
        ("fused-parts", "attention_bwd_fused_wgmma", dict(exchange=0)),
        ("fused-plain", "attention_bwd_fused_wgmma", dict(specialize=0)),
        ("fused-reds", "attention_bwd_fused_wgmma", dict(adds=1)),
        ("dkdv-split", "attention_bwd_dkdv_wgmma", {})]

def run_one():
    import torch
    from bench import wavec_compile
    name, kern, hw = CFGS[int(os.environ["WV_UNDER_NCU"])]
    D, N = int(os.environ.get("WV_PROF_D", "128")), 4096
    BH = max(1, 16384 // N) * (2048 // D)
    dev = "cuda"
    q, k, v, do, o = (torch.randn(BH, N, D, dtype=torch.float16, device=dev) for _ in range(5))
    lse = torch.full((BH, N), 8.0, dtype=torch.float32, device=dev)
    Dt = torch.randn(BH, N, dtype=torch.float32, device=dev)
    acc = torch.zeros(BH, N, D, dtype=torch.float32, device=dev)
    dq, dk, dv = (torch.empty(BH, N, D, dtype=torch.float16, device=dev) for _ in range(3))
    defs = dict(B=BH, M=N, K2=N, K1=D, N=D, SCALE=0.125, BLOCK_K2=128, BLOCK_M=64)
    kk, *_ = wavec_compile(W, kern, defs, dict(stages=2, **hw), target="sm_90a")
    args = (q, k, v, do, lse, Dt, dk, dv, acc) if "fused" in kern else (q, k, v, do, lse, Dt, dk, dv)
    kk(*args); torch.cuda.synchronize()
    torch.cuda.profiler.start(); kk(*args); torch.cuda.synchronize(); torch.cuda.profiler.stop()

if __name__ == "__main__":
    if os.environ.get("WV_UNDER_NCU") is None:
        drive(CFGS, __file__, sys.argv[1] if len(sys.argv) > 1 else None)
    else:
        run_one()
