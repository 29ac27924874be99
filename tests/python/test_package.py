"""The package: its version is the library's, it is found from the
checkout or through WAVEC_LIB, `pip install ./python` gives a package that
works outside the checkout, and the README's NumPy example runs as
written."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import wavec
import wavec._lib
from common import ROOT, python


class Package(unittest.TestCase):
    def test_versions_agree(self):
        header = open(os.path.join(ROOT, "include", "wavec.h")).read()
        want = re.search(r'#define WAVEC_VERSION_STRING "([^"]+)"', header).group(1)
        self.assertEqual(wavec.__version__, want)
        self.assertEqual(wavec.library_version(), want)

    def test_wrong_wavec_lib(self):
        rc, out, err = python("import wavec", env={"WAVEC_LIB": "/no/such/libwavec.so"})
        self.assertNotEqual(rc, 0)
        self.assertIn("libwavec.so not found", err)
        self.assertIn("/no/such/libwavec.so (missing)", err)

    def test_found_in_the_checkout(self):
        env = {k: v for k, v in os.environ.items() if k != "WAVEC_LIB"}
        code = "import wavec, wavec._lib as L; print(L.lib.path)"
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                           env=dict(env, PYTHONPATH=os.path.join(ROOT, "python")))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.path.realpath(r.stdout.strip()),
                         os.path.realpath(os.path.join(ROOT, "build", "release", "libwavec.so")))

    def test_pip_install(self):
        d = tempfile.mkdtemp(prefix="wavec-pip-")
        try:
            src = os.path.join(d, "src")
            shutil.copytree(os.path.join(ROOT, "python"), src,
                            ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation",
                                "--no-deps", "--no-index", "--target", os.path.join(d, "site"), src],
                               capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, WAVEC_LIB=wavec._lib.lib.path))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertTrue(os.path.exists(os.path.join(d, "site", "wavec", "libwavec.so")))
            code = ("import wavec, numpy as np, wavec._lib as L\n"
                    f"k = wavec.compile({os.path.join(ROOT, 'examples', 'gemm.wave')!r}, target='sim', M=64, N=64, K=32)\n"
                    "a = np.ones((64, 32), np.float16); c = np.zeros((64, 64), np.float32)\n"
                    "k(a, a, c)\nprint(L.lib.path, c[0, 0])\n")
            env = {k: v for k, v in os.environ.items() if k not in ("WAVEC_LIB", "PYTHONPATH")}
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=d,
                               env=dict(env, PYTHONPATH=os.path.join(d, "site")))
            self.assertEqual(r.returncode, 0, r.stderr)
            path, value = r.stdout.split()
            self.assertEqual(path, os.path.join(d, "site", "wavec", "libwavec.so"))
            self.assertEqual(float(value), 32.0)
        finally:
            shutil.rmtree(d)


class Readme(unittest.TestCase):
    def test_numpy_example_runs_verbatim(self):
        readme = open(os.path.join(ROOT, "README.md")).read()
        blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
        sim = [b for b in blocks if 'target="sim"' in b]
        self.assertEqual(len(sim), 1, "the README has one NumPy example with target=\"sim\"")
        rc, out, err = python(sim[0])
        self.assertEqual(rc, 0, err)


if __name__ == "__main__":
    unittest.main()
