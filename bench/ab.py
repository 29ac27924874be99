"""One library against another on the attention kernels: run once per
library (WAVEC_LIB=path, each with a WAVEC_CACHE_DIR of its own) and
compare the rows, each a ratio to SDPA-cuDNN measured in the same process:
  WAVEC_LIB=old.so python3 bench/ab.py old; python3 bench/ab.py new
The forward at D = 128 (the plain 2-stage 128x64 kernel, the specialized
128x128 ones) and D = 64, then the backward's warpgroup kernels (each
configuration of the sweep, ms) and the whole backward against cuDNN."""
import os, sys
sys.path.insert(0, os.path.dirname(__file__))
import bench
from bench import fwd_row, attn_fwd_inputs, attn_sweep, attn_bwd

FWD = {128: [(128, 64, 2, {}), (128, 128, 2, dict(specialize=1)), (128, 128, 3, dict(specialize=1)),
             (128, 128, 2, dict(specialize=1, persistent=1))],
       64: [(128, 128, 2, {}), (128, 64, 2, {})]}
tag = sys.argv[1] if len(sys.argv) > 1 else "run"
for D, Ns in ((128, (8192,)), (64, (8192,))):
    for N in Ns:
        BH, q, kk, vv, o, lse, cudnn = attn_fwd_inputs(D, N)
        for causal in (False, True):
            peer = cudnn(causal)
            for bm, bk, st, hw in FWD[D]:
                fwd_row(f"{tag} fwd D={D} N={N} c={int(causal)} {bm}x{bk} st{st}"
                        f"{' spec' if hw.get('specialize') else ''}{' pers' if hw.get('persistent') else ''}",
                        "examples/attention_fwd_wgmma.wave", causal, (BH, q, kk, vv, o, lse, D, N), peer,
                        bm, bk, dict(stages=st, **hw))
for D in (128, 64):
    attn_sweep(D, kinds=("dkdv_wg", "dq_wg"))
    try:
        attn_bwd(D, 4096, False, wg=True)
    except Exception as e:
        print(f"{tag} bwd D={D}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
