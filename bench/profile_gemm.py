"""ncu on one wavec GEMM launch (4096^3 bf16, the tile given by -D style
arguments below): speed of light, warp states, occupancy, memory.
Runs ncu on itself: python3 bench/profile_gemm.py"""
import os, subprocess, sys
if os.environ.get("WV_UNDER_NCU") != "1":
    env = dict(os.environ, WV_UNDER_NCU="1")
    r = subprocess.run(["ncu", "--kernel-name", "regex:gemm", "--launch-count", "1",
                        "--section", "SpeedOfLight", "--section", "WarpStateStats", "--section", "Occupancy",
                        "--section", "LaunchStats", "--section", "MemoryWorkloadAnalysis", "--section",
                        "ComputeWorkloadAnalysis", sys.executable, __file__], env=env, capture_output=True, text=True)
    print(r.stdout[-12000:]); print(r.stderr[-2000:])
    sys.exit(r.returncode)
sys.argv = [sys.argv[0]]
sys.path.insert(0, os.path.dirname(__file__))
import torch
import bench
n = 4096
k, *_ = bench.wavec_compile("bench/gemm.wave", "gemm_bf16", dict(M=n, N=n, K=n, BLOCK_M=128, BLOCK_N=128,
                                                              BLOCK_K=64, WAVES_M=2, WAVES_N=2))
a = torch.randn(n, n, dtype=torch.bfloat16, device="cuda"); b = torch.randn_like(a); c = torch.empty_like(a)
k(a, b, c); torch.cuda.synchronize()
