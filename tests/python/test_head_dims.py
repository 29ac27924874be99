"""The one-pass backward on warpgroups (examples/attention_bwd_wgmma.wave,
attention_bwd_fused_wgmma and its causal form) at head dims whose staged
rows are 64 bytes (96) and 32 bytes (80), in the simulator against float64,
in each schedule a user may ask for: the compiler's, the next iteration's
s and dp issued early (mma_ahead = 1, 2), a producer warpgroup, ds
exchanged between the warpgroups, dq's parts added by the threads
(adds = 1), three stages. dk, dv and dq (dq_acc x SCALE) within 2e-3 (the
bound and reasoning of tests/unit/test_attention_bwd.c)."""
import os
import unittest

import numpy as np

import wavec
from common import ROOT, rel_err

BWD = os.path.join(ROOT, "examples", "attention_bwd_wgmma.wave")
SCHEDULES = ({}, dict(mma_ahead=2), dict(mma_ahead=1, read_ahead=0), dict(specialize=1),
             dict(exchange=1), dict(adds=1), dict(stages=3))


def reference(q, k, v, do, causal, scale=0.125):
    """lse, D and the gradients dq, dk, dv in float64 (one batch)."""
    q, k, v, do = (x.astype(np.float64)[0] for x in (q, k, v, do))
    s = q @ k.T * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape)) > 0, s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.exp(s - mx)
    l = p.sum(-1, keepdims=True)
    p /= l
    D = (do * (p @ v)).sum(-1)
    ds = p * (do @ v.T - D[:, None])
    return (mx + np.log(l))[:, 0], D, ds @ k * scale, ds.T @ q * scale, p.T @ do


class HeadDims(unittest.TestCase):
    def test_fused_backward_every_schedule(self):
        for d in (96, 80):
            for m, causal in ((256, False), (200, True)):
                rng = np.random.default_rng(d + m)
                q, k, v, do = (rng.uniform(-1, 1, (1, m, d)).astype(np.float16) for _ in range(4))
                lse, D, dq, dk, dv = reference(q, k, v, do, causal)
                for hw in SCHEDULES:
                    with self.subTest(d=d, m=m, causal=causal, hw=hw):
                        kern = wavec.compile(BWD, kernel="attention_bwd_fused_wgmma" + ("_causal" if causal else ""),
                                             target="sim", hardware=hw, B=1, M=m, K2=m, K1=d, N=d)
                        gk, gv = (np.full((1, m, d), np.nan, np.float16) for _ in range(2))
                        acc = np.zeros((1, m, d), np.float32)
                        kern(q, k, v, do, lse[None].astype(np.float32), D[None].astype(np.float32), gk, gv, acc)
                        errs = (rel_err(acc[0] * 0.125, dq), rel_err(gk[0], dk), rel_err(gv[0], dv))
                        self.assertLess(max(errs), 2e-3, errs)


if __name__ == "__main__":
    unittest.main()
