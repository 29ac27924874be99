"""ncu on the attention forward: wavec's best plain D = 128 configuration
(128x64, 2 stages, two workgroups a multiprocessor), its specialized
128x128 3-stage one, the D = 64 128x128 2-stage one, and SDPA-cuDNN at
D = 128 and 64, one launch each at N = 8192 (bench.py's sizes): speed of
light (L2 and tensor pipe), launch (cluster, registers, shared memory),
warp states, pipes. Runs ncu on itself: python3 bench/profile_attn.py"""
import os, subprocess, sys
if os.environ.get("WV_UNDER_NCU") != "1":
    env = dict(os.environ, WV_UNDER_NCU="1")
    # metrics by name where this ncu has them (an unknown name stops ncu)
    q = subprocess.run(["ncu", "--query-metrics", "--chip", "gh100"], capture_output=True, text=True).stdout
    have = {l.split()[0] for l in q.splitlines() if l.strip()}
    want = ["sm__pipe_tensor_op_gmma_cycles_active", "sm__pipe_shared_cycles_active", "sm__inst_executed_pipe_xu",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared", "smsp__inst_executed_op_shared_ld",
            "lts__t_bytes", "sm__cycles_active", "launch__cluster_dim_x"]
    mets = [m + ("" if m.startswith("launch__") else ".avg.pct_of_peak_sustained_active" if "pipe" in m else ".sum")
            for m in want if m in have]
    print("metrics:", mets, "missing:", [m for m in want if m not in have], flush=True)
    r = subprocess.run(["ncu", "--profile-from-start", "off", "--launch-count", "8",
                        "--section", "SpeedOfLight", "--section", "LaunchStats", "--section", "Occupancy",
                        "--section", "WarpStateStats", "--section", "ComputeWorkloadAnalysis",
                        "--section", "MemoryWorkloadAnalysis"] + (["--metrics", ",".join(mets)] if mets else []) +
                       [sys.executable, __file__], env=env, capture_output=True, text=True)
    print(r.stdout[-80000:]); print(r.stderr[-3000:])
    sys.exit(r.returncode)
sys.path.insert(0, os.path.dirname(__file__))
import torch
import torch.nn.functional as F
from bench import wavec_compile, attn_fwd_inputs

def main():
    N = 8192
    for D, cfgs in ((128, [(128, 64, dict(stages=2)), (128, 128, dict(stages=3, specialize=1)),
                     (128, 128, dict(stages=3, specialize=1, pingpong=1))]),
                    (64, [(128, 128, dict(stages=2))])):
        BH, q, kk, vv, o, lse, _ = attn_fwd_inputs(D, N)
        for bm, bk, hw in cfgs:
            k, *_ = wavec_compile("examples/attention_fwd_wgmma.wave", "attention_fwd_wgmma",
                                  dict(B=BH, M=N, K2=N, K1=D, N=D, BLOCK_M=bm, BLOCK_K2=bk), hw, target="sm_90a")
            torch.cuda.synchronize()
            print(f"profiled: wavec D={D} {bm}x{bk} {hw}", flush=True)
            torch.cuda.profiler.start(); k(q, kk, vv, o, lse); torch.cuda.synchronize(); torch.cuda.profiler.stop()
        B = max(1, 16384 // N); H = 2048 // D
        qq, kq, vq = (t.reshape(B, H, N, D) for t in (q, kk, vv))
        from torch.nn.attention import sdpa_kernel, SDPBackend
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            F.scaled_dot_product_attention(qq, kq, vq, scale=0.125); torch.cuda.synchronize()
            print(f"profiled: SDPA-cuDNN D={D}", flush=True)
            torch.cuda.profiler.start(); F.scaled_dot_product_attention(qq, kq, vq, scale=0.125)
            torch.cuda.synchronize(); torch.cuda.profiler.stop()

if __name__ == "__main__":
    main()
