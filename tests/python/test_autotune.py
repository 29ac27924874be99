"""wavec.autotune in the simulator: the selection logic (timings on the
simulator mean nothing, so a stand-in timer decides what is fastest): the
fastest configuration whose numbers agree wins, one whose numbers differ is
never taken however fast, compile errors are reported and skipped, the
choice is kept per key in the disk cache and read back by a new tuner
without tuning, and `wavec cache --clear` removes it."""
import glob
import os
import shutil
import tempfile
import unittest

import numpy as np

import wavec
from common import ROOT

SGEMM = os.path.join(ROOT, "tests", "python", "kernels", "sgemm.wave")

CONFIGS = [
    dict(BLOCK_M=64, BLOCK_N=64),                           # 0: the reference
    dict(BLOCK_M=32, BLOCK_N=64, hardware=dict(stages=2)),  # 1: agrees
    dict(BLOCK_M=64, BLOCK_N=32, S=1.5),                    # 2: fastest, numbers differ
    dict(BLOCK_M=48, BLOCK_N=64),                           # 3: 48 does not divide M = 128
    dict(BLOCK_M=32, BLOCK_N=32),                           # 4: agrees
]
FAKE_MS = {0: 3.0, 1: 1.0, 2: 0.1, 3: 0.01, 4: 2.0}


class Autotune(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="wavec-tune-")
        self.old = os.environ.get("WAVEC_CACHE_DIR")
        os.environ["WAVEC_CACHE_DIR"] = self.dir
        self.lines, self.timed = [], []

    def tearDown(self):
        if self.old is None:
            os.environ.pop("WAVEC_CACHE_DIR", None)
        else:
            os.environ["WAVEC_CACHE_DIR"] = self.old
        shutil.rmtree(self.dir)

    def bench(self, kern, args):
        i = next(i for i, c in enumerate(CONFIGS)
                 if all(kern.defines.get(k) == v for k, v in c.items() if k != "hardware")
                 and kern.hardware == c.get("hardware", {}))
        self.timed.append(i)
        return FAKE_MS[i]

    def tuner(self, **kw):
        return wavec.autotune(SGEMM, "sgemm", CONFIGS, key=["M", "N"], target="sim", K=64, bench=self.bench,
                              progress=self.lines.append, **kw)

    def test_picks_the_fastest_that_agrees(self):
        t = self.tuner(workers=2)  # compiled in two worker processes
        results = t.tune(M=128, N=64)
        self.assertEqual(t.best_config(M=128, N=64), CONFIGS[1])
        self.assertEqual([r.status for r in results], ["ok", "ok", "ok", "numbers differ", "compile error"])
        self.assertEqual([r.config for r in results[:3]], [CONFIGS[1], CONFIGS[4], CONFIGS[0]])
        self.assertAlmostEqual(results[3].error, 0.5, places=5)  # S = 1.5 against 1.0
        self.assertIn("error[e0405]", results[4].error.lower())  # the compiler's located message
        self.assertEqual(sorted(self.timed), [0, 1, 4])  # the rejected are never timed
        # one line per configuration, a first and a last
        self.assertEqual(len(self.lines), len(CONFIGS) + 2)
        self.assertIn("[3/5] BLOCK_M=64 BLOCK_N=32 S=1.5: rejected: its numbers differ", self.lines[3])
        self.assertIn("[4/5] BLOCK_M=48 BLOCK_N=64: compile error", self.lines[4])
        self.assertIn("best BLOCK_M=32 BLOCK_N=64 stages=2", self.lines[-1])
        # the kernel it gives is that configuration's, and right
        k = t.best(M=128, N=64)
        self.assertEqual(k.defines["BLOCK_M"], 32)
        a = np.random.default_rng(0).uniform(-1, 1, (128, 64)).astype(np.float16)
        b = np.random.default_rng(1).uniform(-1, 1, (64, 64)).astype(np.float16)
        c = np.zeros((128, 64), np.float32)
        t(a, b, c, M=128, N=64)
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32).T, rtol=1e-4, atol=1e-4)

    def test_choice_kept_per_key_across_tuners(self):
        self.tuner(workers=1).best(M=128, N=64)
        (choice,) = glob.glob(os.path.join(self.dir, "*.wvtune"))
        self.timed.clear()
        self.lines.clear()
        t2 = self.tuner(workers=1)
        self.assertEqual(t2.best_config(M=128, N=64), CONFIGS[1])
        self.assertEqual((self.timed, self.lines), ([], []))  # nothing tuned
        t2.best(M=64, N=64)  # another key: tuned
        self.assertEqual(len(glob.glob(os.path.join(self.dir, "*.wvtune"))), 2)
        self.assertEqual(sorted(self.timed), [0, 1, 4])  # M = 64: S = 1.5 differs, BLOCK_M = 48 fails
        # a damaged choice is tuned again
        with open(choice, "w") as f:
            f.write("{")
        self.timed.clear()
        self.assertEqual(self.tuner(workers=1).best_config(M=128, N=64), CONFIGS[1])
        self.assertNotEqual(self.timed, [])
        # wavec cache --clear removes the choices
        self.assertEqual(wavec.cache_clear(), 2)
        self.assertEqual(glob.glob(os.path.join(self.dir, "*")), [])

    def test_reference_decides_what_is_correct(self):
        def reference(a, b, c):
            c[...] = 1.5 * (a.astype(np.float64) @ b.astype(np.float64).T)

        t = self.tuner(workers=1, reference=reference, cache=False)
        results = t.tune(M=128, N=64)
        self.assertEqual(t.best_config(M=128, N=64), CONFIGS[2])  # the only one that is right
        self.assertEqual(sorted(r.status for r in results).count("numbers differ"), 3)
        self.assertEqual(glob.glob(os.path.join(self.dir, "*.wvtune")), [])  # cache=False

    def test_errors(self):
        t = self.tuner(workers=1)
        with self.assertRaisesRegex(TypeError, "missing \\['N'\\]"):
            t.best(M=128)
        bad = wavec.autotune(SGEMM, "sgemm", [dict(BLOCK_M=48)], key=["M", "N"], target="sim", K=64,
                             progress=self.lines.append, workers=1)
        with self.assertRaisesRegex(RuntimeError, "no configuration compiled, ran and agreed"):
            bad.best(M=128, N=64)
        with self.assertRaisesRegex(ValueError, "no configurations"):
            wavec.autotune(SGEMM, "sgemm", [], target="sim")


    def test_kernels_of_every_kind(self):
        """Inputs for 8-bit kernels (i8 exact, f8e4m3 bytes that are
        numbers) and dynamic dims (sized by what tune() is given); an f32
        output computed through f16 values (the attention's p) agrees
        within the f16 inputs' tolerance across tile shapes."""
        ex = os.path.join(ROOT, "examples")
        cases = [
            ("gemm_i8.wave", "gemm_i8_sync", [dict(BLOCK_M=64, BLOCK_N=64), dict(BLOCK_M=32, BLOCK_N=32)],
             dict(M=64, N=64, K=128), {}),
            ("gemm_fp8.wave", "gemm_fp8_sync", [dict(BLOCK_M=64, BLOCK_N=64), dict(BLOCK_M=32, BLOCK_N=64)],
             dict(M=64, N=64, K=64), {}),
            (os.path.join(ROOT, "tests", "kernels", "dynamic.wave"), "gemm_dyn",
             [dict(BLOCK_M=64, BLOCK_N=64), dict(BLOCK_M=32, BLOCK_N=32)], dict(M=100, N=72, K=96), {}),
            ("attention_fwd.wave", "attention_fwd",
             [dict(BLOCK_M=64, BLOCK_K2=32), dict(BLOCK_M=32, BLOCK_K2=64, WAVES=2)], dict(M=100, K2=130),
             dict(B=1, K1=64, N=64)),
        ]
        for src, kern, configs, sizes, fixed in cases:
            lines = []
            t = wavec.autotune(os.path.join(ex, src), kern, configs, key=list(sizes), target="sim", workers=1,
                               progress=lines.append, cache=False, **fixed)
            results = t.tune(**sizes)
            self.assertEqual([r.status for r in results], ["ok", "ok"], f"{kern}: {lines}")
        with self.assertRaisesRegex(ValueError, "dimension 'M' is given at run time: pass M="):
            wavec.autotune(os.path.join(ROOT, "tests", "kernels", "dynamic.wave"), "gemm_dyn",
                           [dict(BLOCK_M=64, BLOCK_N=64)], key=["N"], target="sim", workers=1,
                           progress=lines.append, cache=False, K=96)._inputs(
                wavec.compile(os.path.join(ROOT, "tests", "kernels", "dynamic.wave"), kernel="gemm_dyn",
                              target="sim", BLOCK_M=64, BLOCK_N=64), dict(N=72))


if __name__ == "__main__":
    unittest.main()
