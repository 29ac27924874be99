"""The Python package's CPU tests (tests/run.sh python): every test_*.py
here, one line per test case, "ok NAME", "FAIL NAME" (with the traceback)
or "SKIP NAME: why"; exit status 0 when none failed.

The package is imported from the checkout (python/), the library from
$WAVEC_LIB (tests/run.sh sets it to the release build's libwavec.so), the
cache folder is a fresh temporary one ($WAVEC_CACHE_DIR), removed at exit."""
import atexit
import os
import shutil
import sys
import tempfile
import traceback
import unittest

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "python"))
sys.path.insert(0, here)
os.chdir(root)
if os.environ.get("WAVEC_LIB"):
    os.environ["WAVEC_LIB"] = os.path.abspath(os.environ["WAVEC_LIB"])
if "WAVEC_CACHE_DIR" not in os.environ:  # a fresh one, removed at exit
    os.environ["WAVEC_CACHE_DIR"] = tempfile.mkdtemp(prefix="wavec-py-cache-")
    atexit.register(shutil.rmtree, os.environ["WAVEC_CACHE_DIR"], ignore_errors=True)


class Lines(unittest.TestResult):
    def addSuccess(self, test):
        super().addSuccess(test)
        print(f"ok {test.id()}", flush=True)

    def _bad(self, test, err):
        print(f"FAIL {test.id()}", flush=True)
        print("".join(traceback.format_exception(*err)).rstrip().replace("\n", "\n    "), flush=True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._bad(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._bad(test, err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print(f"SKIP {test.id()}: {reason}", flush=True)


def main():
    names = sys.argv[1:] or sorted(f[:-3] for f in os.listdir(here) if f.startswith("test_") and f.endswith(".py"))
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromName(n) for n in names)
    result = Lines()
    suite.run(result)
    bad = len(result.failures) + len(result.errors)
    print(f"python: {result.testsRun - bad - len(result.skipped)} passed, {bad} failed, "
          f"{len(result.skipped)} skipped", flush=True)
    return 1 if bad or result.testsRun == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
