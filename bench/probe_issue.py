"""Does one consumer warpgroup issue wgmmas fast enough to keep an SM's
tensor cores busy? The same specialized kernels with one consumer
(BLOCK_M = 64) and with two (BLOCK_M = 128), one workgroup a
multiprocessor, timed in one process (bench/NOTES.md v0.5.7).
Usage (GPU machine): python3 bench/probe_issue.py"""
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
import torch
from bench import wavec_compile, bench, dev, GEMM_KERNELS

def main():
    print("device", torch.cuda.get_device_name(), flush=True)
    D, N = 128, 8192
    BH = 2 * (2048 // D)
    q, kk, vv = (torch.randn(BH, N, D, dtype=torch.float16, device=dev) for _ in range(3))
    o = torch.empty(BH, N, D, dtype=torch.float16, device=dev)
    lse = torch.empty(BH, N, dtype=torch.float32, device=dev)
    fl = 4 * BH * N * N * D
    for bm in (64, 128):
        for st in (3,):  # (BLOCK_M = 64 at 4 stages asks for more shared memory than a block has)
            k, _, _, info = wavec_compile("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
                                          dict(B=BH, M=N, K2=N, K1=D, N=D, BLOCK_M=bm, BLOCK_K2=128),
                                          dict(stages=st, specialize=1, workgroups_per_sm=1), target="sm_90a")
            ms = bench(lambda: k(q, kk, vv, o, lse))
            print(f"probe attn fwd D={D} N={N} BLOCK_M={bm} ({bm // 64} consumer(s)) 128-key tiles st{st}: "
                  f"{fl / ms / 1e9:.1f} TFLOP/s ({info['regs']} regs, block {info['block'][0]})", flush=True)
    n = 8192
    a = torch.randn(n, n, dtype=torch.bfloat16, device=dev); b = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
    c = torch.empty(n, n, dtype=torch.bfloat16, device=dev)
    for bm, wm in ((64, 1), (128, 2)):
        k, _, _, info = wavec_compile("bench/gemm.wave", GEMM_KERNELS["wgmma", torch.bfloat16],
                                      dict(M=n, N=n, K=n, BLOCK_M=bm, BLOCK_N=256, WAVES_M=wm),
                                      dict(stages=4, specialize=1, persistent=1, workgroups_per_sm=1), target="sm_90a")
        ms = bench(lambda: k(a, b, c))
        print(f"probe gemm bf16 {n}^3 {bm}x256 ({wm} consumer(s)) spec+pers st4: {2 * n**3 / ms / 1e9:.1f} TFLOP/s "
              f"({info['regs']} regs)", flush=True)

if __name__ == "__main__":
    main()
