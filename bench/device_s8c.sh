#!/usr/bin/env bash
# The shortest device call (eighth session): clusters re-measured with the
# remote releases in the default semantics: the GEMM bf16 4096^3 and
# 8192^3, 128x256 4 stages specialized + persistent, C = 1, 2, 4, and
# the attention forward D = 128 N = 4096 192x128 C = 1, 2; cuBLAS and
# SDPA-cuDNN in the same process. Then the D = 64 backward's wider tiles
# if time is left.
set -u
export PATH=$PATH:/usr/local/cuda/bin
OUT=${OUT:-build/out}; mkdir -p "$OUT"
make -s MODE=release -j16 all lib >"$OUT/build.txt" 2>&1 || { tail -30 "$OUT/build.txt"; exit 1; }
timeout ${CLUSTER_S:-120} python3 -c "
import sys, torch; sys.path.insert(0, 'bench'); import bench
for n in (4096, 8192):
    a = torch.randn(n, n, dtype=torch.bfloat16, device='cuda'); b = torch.randn(n, n, dtype=torch.bfloat16, device='cuda')
    c = torch.empty(n, n, dtype=torch.bfloat16, device='cuda'); ref = a @ b.T
    ms_p = bench.bench(lambda: a @ b.T)
    for cl in (1, 2, 4):
        k, t1, t2, info = bench.wavec_compile('bench/gemm.wave', 'gemm_wgmma_bf16', dict(M=n, N=n, K=n, BLOCK_M=128,
            BLOCK_N=256, WAVES_M=2), dict(stages=4, specialize=1, persistent=1, cluster=cl), target='sm_90a')
        c.fill_(float('nan')); k(a, b, c); torch.cuda.synchronize()
        bench.report(f'cluster gemm bf16 {n}^3 128x256 st4 spec+pers cluster={cl}', 'cuBLAS', bench.bench(lambda: k(a, b, c)),
                     ms_p, 2 * n**3, bench.rel_err(c, ref), (t1, t2))
D, N = 128, 4096
BH, q, kk, vv, o, lse, cudnn = bench.attn_fwd_inputs(D, N)
peer = cudnn(False)
for cl in (1, 2):
    bench.fwd_row(f'cluster attn fwd D={D} N={N} 192x128 st2 cluster={cl}', 'examples/attention_fwd_wgmma.wave', False,
                  (BH, q, kk, vv, o, lse, D, N), peer, 192, 128, dict(stages=2, cluster=cl))
" >"$OUT/log-cluster-c.txt" 2>&1
echo "cluster rc=$?"; grep -E "^cluster|FAIL|Error" "$OUT/log-cluster-c.txt" | cut -c1-200
WV_BWD1_D=64 timeout ${BWD_S:-100} python3 -c "
import sys; sys.path.insert(0, 'bench'); import bench
bench.bwd_one_pass(True, [(128, 64, 2, {}), (192, 64, 2, {}), (192, 64, 3, {})])" >"$OUT/log-bwd64.txt" 2>&1
echo "bwd64 rc=$?"; grep -E "^bwd1|FAIL" "$OUT/log-bwd64.txt" | cut -c1-200
