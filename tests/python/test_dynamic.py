"""Run-time sizes from Python (dynamic(...) dims): one compiled kernel runs
at every size its arguments' shapes give (tests/kernels/dynamic.wave)."""
import os
import unittest

import numpy as np

import wavec
from common import ROOT, rel_err

DYN = os.path.join(ROOT, "tests", "kernels", "dynamic.wave")


class DynamicSizes(unittest.TestCase):
    def test_one_compile_every_size(self):
        k = wavec.compile(DYN, kernel="gemm_dyn", target="sim")
        self.assertEqual(k.dynamic, ["K", "M", "N"])
        self.assertEqual([(a.name, a.shape, a.dims) for a in k.args],
                         [("a", (None, None), ("M", "K")), ("b", (None, None), ("N", "K")),
                          ("c", (None, None), ("M", "N"))])
        self.assertIn("gemm_dyn(a: f16 [M, K]", repr(k))
        ptx = k.ptx("sm_90")
        rng = np.random.default_rng(7)
        for m, n, kk in ((1, 64, 64), (17, 33, 104), (200, 72, 96), (129, 250, 40)):
            a = rng.uniform(-1, 1, (m, kk)).astype(np.float16)
            b = rng.uniform(-1, 1, (n, kk)).astype(np.float16)
            c = np.full((m, n), np.nan, np.float32)
            self.assertEqual(k.sizes(a, b, c), {"M": m, "N": n, "K": kk})
            k(a, b, c)
            ref = a.astype(np.float64) @ b.astype(np.float64).T
            self.assertLess(rel_err(c, ref), 1e-5, (m, n, kk))
        self.assertEqual(k.ptx("sm_90"), ptx)  # the same kernel served every size

    def test_bottom_right_causal_at_run_time_lengths(self):
        # one compile of tests/kernels/causal_br.wave's br_dyn (M and K2 at
        # run time, the walk bounded by K2 <= M + (K2 - M)): a decoding
        # query and chunks of new queries over a cache of keys
        k = wavec.compile(os.path.join(ROOT, "tests", "kernels", "causal_br.wave"), kernel="br_dyn",
                          target="sim", B=1, K1=64, N=64)
        self.assertEqual(k.dynamic, ["K2", "M"])
        rng = np.random.default_rng(8)
        for m, k2 in ((1, 296), (50, 136), (200, 520)):
            q = rng.standard_normal((1, m, 64)).astype(np.float16)
            kk = rng.standard_normal((1, k2, 64)).astype(np.float16)
            v = rng.standard_normal((1, k2, 64)).astype(np.float16)
            o = np.full((1, m, 64), np.nan, np.float16)
            lse = np.full((1, m), np.nan, np.float32)
            k(q, kk, v, o, lse)
            s = q[0].astype(np.float64) @ kk[0].astype(np.float64).T * 0.125
            s[np.arange(k2)[None, :] > np.arange(m)[:, None] + k2 - m] = -np.inf
            p = np.exp(s - s.max(-1, keepdims=True))
            ref = (p / p.sum(-1, keepdims=True)) @ v[0].astype(np.float64)
            self.assertLess(rel_err(o[0], ref), 2e-3, (m, k2))

    def test_empty_tensors(self):
        # an empty batch (M = 0 or N = 0: every output empty) runs nothing,
        # as torch.matmul gives an empty result; the next call runs as usual
        k = wavec.compile(DYN, kernel="gemm_dyn", target="sim")
        b = np.ones((64, 96), np.float16)
        self.assertIsNone(k(np.zeros((0, 96), np.float16), b, np.zeros((0, 64), np.float32)))
        self.assertEqual(k.sizes(np.zeros((0, 96)), b, np.zeros((0, 64))), {"M": 0, "N": 64, "K": 96})
        self.assertIsNone(k(np.ones((8, 96), np.float16), np.zeros((0, 96), np.float16),
                            np.zeros((8, 0), np.float32)))
        c = np.full((8, 64), np.nan, np.float32)
        k(np.ones((8, 96), np.float16), b, c)
        self.assertTrue(np.all(c == 96), c)
        # K = 0 leaves c non-empty: it would have to be written without the
        # loop running, so the call is refused, saying which size and output
        with self.assertRaisesRegex(wavec.ArgumentError, r"argument 'c': K = 0, but the output is \[8, 64\], "
                                    r"not empty"):
            k(np.zeros((8, 0), np.float16), np.zeros((64, 0), np.float16), c)
        # a size fixed at compile time takes no empty tensor
        s = wavec.compile(os.path.join(ROOT, "examples", "gemm.wave"), kernel="gemm", target="sim",
                          M=64, N=64, K=64)
        with self.assertRaisesRegex(wavec.ArgumentError, r"argument 'a': shape \[0, 64\].*fixed at compile "
                                    r"time"):
            s(np.zeros((0, 64), np.float16), np.zeros((64, 64), np.float16), np.zeros((0, 64), np.float32))

    def test_shapes_that_disagree(self):
        k = wavec.compile(DYN, kernel="gemm_dyn", target="sim")
        a = np.zeros((64, 32), np.float16)
        b = np.zeros((64, 40), np.float16)  # K = 40 against a's 32
        c = np.zeros((64, 64), np.float32)
        with self.assertRaises(wavec.ArgumentError) as e:
            k(a, b, c)
        self.assertIn("dimension 1 (K) is 40, but 'a' gives K = 32", str(e.exception))
        with self.assertRaises(wavec.ArgumentError):
            k(a, np.zeros((64, 32), np.float16), np.zeros((65, 64), np.float32))

    def test_stated_multiple_then_a_good_call(self):
        k = wavec.compile(DYN, kernel="gemm_dyn", target="sim")
        a, b = np.ones((16, 100), np.float16), np.ones((16, 100), np.float16)
        c = np.zeros((16, 16), np.float32)
        with self.assertRaises(wavec.WavecError) as e:
            k(a, b, c)  # K = 100: dynamic(K, multiple_of = 8)
        self.assertIn("'K' = 100 is not a multiple of 8", str(e.exception))
        a, b = np.ones((16, 104), np.float16), np.ones((16, 104), np.float16)
        k(a, b, c)  # the kernel is usable after the refusal
        self.assertTrue(np.all(c == 104))

    def test_fixed_dims_stay_fixed(self):
        k = wavec.compile(DYN, kernel="attention_fwd_dyn", target="sim", B=1, N=64, K1=64)
        self.assertEqual(k.dynamic, ["K2", "M"])
        q = np.zeros((1, 77, 32), np.float16)  # K1 = 32, compiled 64
        with self.assertRaises(wavec.ArgumentError) as e:
            k(q, np.zeros((1, 77, 64), np.float16), np.zeros((1, 77, 64), np.float16),
              np.zeros((1, 77, 64), np.float32), np.zeros((1, 77), np.float32))
        self.assertIn("but the kernel declares f16 [1, M, 64]", str(e.exception))


if __name__ == "__main__":
    unittest.main()
