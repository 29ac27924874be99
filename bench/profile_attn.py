"""ncu on the attention forward: wavec's best plain D = 128 configuration
(128x64, 2 stages, two workgroups a multiprocessor), its specialized
128x128 3-stage one, the D = 64 128x128 2-stage one, and SDPA-cuDNN at
D = 128 and 64, one launch each at N = 8192 (bench.py's sizes): speed of
light (L2 and tensor pipe), launch (cluster, registers, shared memory),
warp states, pipes. Runs ncu on itself: python3 bench/profile_attn.py"""
import os, subprocess, sys
if os.environ.get("WV_UNDER_NCU") != "1":
    env = dict(os.environ, WV_UNDER_NCU="1")
    r = subprocess.run(["ncu", "--profile-from-start", "off", "--launch-count", "8",
                        "--section", "SpeedOfLight", "--section", "LaunchStats", "--section", "Occupancy",
                        "--section", "WarpStateStats", "--section", "ComputeWorkloadAnalysis",
                        "--section", "MemoryWorkloadAnalysis",
                        "--metrics", "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,"
                        "lts__t_bytes.sum.per_second,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,"
                        "launch__cluster_dim_x,launch__cluster_dim_y",
                        sys.executable, __file__], env=env, capture_output=True, text=True)
    print(r.stdout[-60000:]); print(r.stderr[-3000:])
    sys.exit(r.returncode)
sys.path.insert(0, os.path.dirname(__file__))
import torch
import torch.nn.functional as F
from bench import wavec_compile, attn_fwd_inputs

def main():
    N = 8192
    for D, cfgs in ((128, [(128, 64, dict(stages=2)), (128, 128, dict(stages=3, specialize=1))]),
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
