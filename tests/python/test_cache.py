"""The disk cache from Python, through ptxas (no GPU needed): a miss builds
and stores, a hit (in this process or a new one) reads one file and runs
no ptxas, damaged entries are rebuilt, racing processes leave one whole
entry, the CLI lists what Python stored."""
import glob
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import unittest

import wavec
from common import GEMM, ROOT, python, ptxas_present

PTXAS = ptxas_present()


@unittest.skipUnless(PTXAS, "ptxas not found (the CUDA toolkit): the cache through ptxas is not tested")
class Cache(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="wavec-cache-")
        self.old = os.environ.get("WAVEC_CACHE_DIR"), os.environ.get("WAVEC_PTXAS")
        os.environ["WAVEC_CACHE_DIR"] = os.path.join(self.dir, "cache")
        # a ptxas that counts its runs
        self.log = os.path.join(self.dir, "ptxas.log")
        self.wrapper = os.path.join(self.dir, "ptxas")
        with open(self.wrapper, "w") as f:
            f.write(f"#!/bin/sh\necho run >> '{self.log}'\nexec '{PTXAS}' \"$@\"\n")
        os.chmod(self.wrapper, 0o755)
        os.environ["WAVEC_PTXAS"] = self.wrapper

    def tearDown(self):
        for name, v in zip(("WAVEC_CACHE_DIR", "WAVEC_PTXAS"), self.old):
            if v is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = v
        shutil.rmtree(self.dir)

    def ptxas_runs(self):
        return open(self.log).read().count("run") if os.path.exists(self.log) else 0

    def entries(self):
        return sorted(glob.glob(os.path.join(os.environ["WAVEC_CACHE_DIR"], "*.wvbin")))

    def gemm(self, **kw):
        sizes = dict(M=128, N=128, K=64)
        sizes.update(kw)
        return wavec.compile(GEMM, kernel="gemm", target="sm_90", ptxas=True, **sizes)

    def test_miss_then_hit(self):
        k1 = self.gemm()
        self.assertFalse(k1.cached)
        self.assertEqual(self.ptxas_runs(), 1)
        self.assertEqual(len(self.entries()), 1)
        k2 = self.gemm()
        self.assertTrue(k2.cached)
        self.assertEqual(self.ptxas_runs(), 1)
        self.assertEqual([(a.name, a.shape, a.is_output) for a in k2.args],
                         [(a.name, a.shape, a.is_output) for a in k1.args])
        self.assertEqual((k2.grid, k2.block, k2.smem), (k1.grid, k1.block, k1.smem))
        self.assertEqual(k2.target, "sm_90")

    def test_hit_in_a_new_process_runs_no_ptxas(self):
        code = ("import wavec, time\nt = time.perf_counter()\n"
                f"k = wavec.compile({GEMM!r}, target='sm_90', ptxas=True, M=128, N=128, K=64)\n"
                "print(k.cached, (time.perf_counter() - t) * 1e3)\n")
        rc, out1, err = python(code)
        self.assertEqual(rc, 0, err)
        rc, out2, err = python(code)
        self.assertEqual(rc, 0, err)
        self.assertTrue(out1.startswith("False"), out1)
        self.assertTrue(out2.startswith("True"), out2)
        self.assertEqual(self.ptxas_runs(), 1)
        print(f"  first process {float(out1.split()[1]):.1f} ms (ptxas), second {float(out2.split()[1]):.2f} ms")

    def test_hit_is_under_a_millisecond(self):
        self.gemm()
        times = []
        for _ in range(21):
            t = time.perf_counter()
            k = self.gemm()
            times.append((time.perf_counter() - t) * 1e3)
            self.assertTrue(k.cached)
        med = statistics.median(times)
        print(f"  cache hit through wavec.compile (parse, key, read, check): median {med:.3f} ms, "
              f"min {min(times):.3f} ms")
        self.assertLess(med, 1.0)

    def test_keys(self):
        self.gemm()
        self.gemm(K=128)  # another size: another entry
        self.assertEqual(len(self.entries()), 2)
        self.assertTrue(self.gemm(K=64, N=128, M=128).cached)  # keyword order means nothing
        self.assertFalse(wavec.compile(GEMM, target="sm_90", ptxas=True, hardware={"stages": 2},
                                       M=128, N=128, K=64).cached)
        self.assertFalse(wavec.compile(GEMM, target="sm_80", ptxas=True, M=128, N=128, K=64).cached)
        src = open(GEMM).read()
        self.assertFalse(wavec.compile(src, target="sm_90", ptxas=True, M=128, N=128, K=64).cached)
        self.assertFalse(wavec.compile(src + "\n", target="sm_90", ptxas=True, M=128, N=128, K=64).cached)
        self.assertEqual(len(self.entries()), 6)

    def test_damaged_entries_are_rebuilt(self):
        self.gemm()
        (entry,) = self.entries()
        whole = open(entry, "rb").read()
        for damage in (b"garbage", whole[: len(whole) // 2], whole[:-1] + bytes([whole[-1] ^ 1]), b""):
            with open(entry, "wb") as f:
                f.write(damage)
            runs = self.ptxas_runs()
            self.assertFalse(self.gemm().cached)
            self.assertEqual(self.ptxas_runs(), runs + 1)
            self.assertEqual(open(entry, "rb").read(), whole)  # replaced by a whole entry
            self.assertTrue(self.gemm().cached)

    def test_no_cache(self):
        k = wavec.compile(GEMM, target="sm_90", ptxas=True, cache=False, M=128, N=128, K=64)
        self.assertFalse(k.cached)
        self.assertEqual(self.entries(), [])

    def test_concurrent_processes(self):
        code = (f"import wavec\nk = wavec.compile({GEMM!r}, target='sm_90', ptxas=True, M=128, N=128, K=64)\n"
                "print('ok')\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        procs = [subprocess.Popen([__import__("sys").executable, "-c", code], env=env, cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
        for p in procs:
            out, err = p.communicate(timeout=300)
            self.assertEqual((p.returncode, out.strip()), (0, "ok"), err)
        self.assertEqual(len(self.entries()), 1)
        self.assertEqual(glob.glob(os.path.join(os.environ["WAVEC_CACHE_DIR"], ".*")), [])  # no temporaries
        self.assertTrue(self.gemm().cached)
        listed = wavec.cache_list()
        self.assertEqual(len(listed), 1)
        self.assertTrue(listed[0]["valid"])

    def test_list_clear_and_the_cli(self):
        self.gemm()
        (e,) = wavec.cache_list()
        self.assertEqual((e["kernel"], e["target"], e["valid"]), ("gemm", "sm_90", True))
        self.assertIn("M=128", e["desc"])
        self.assertEqual(wavec.cache_dir(), os.environ["WAVEC_CACHE_DIR"])
        cli = os.path.join(ROOT, "build", "release", "wavec")
        r = subprocess.run([cli, "cache", "--list"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("gemm K=64 M=128 N=128 target=sm_90", r.stdout)
        self.assertIn("1 entry", r.stdout)
        self.assertEqual(wavec.cache_clear(), 1)
        self.assertEqual(wavec.cache_list(), [])


if __name__ == "__main__":
    unittest.main()
